"""Applications' own GPU checks: a program that looks at the GPU it found, compares its
target with the targets it ships code for, and refuses it (ollama, Lemonade); and a ggml
program that crashes on a device whose target, in its own device line, the build's target
list shown a few lines above lacks.

Owns: the rules that read the refused target and the list out of those programs' lines.
Must not: hold a build's or a library's target checks (gpu_target.py, ext_targets.py,
math_library.py).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import Alias, Groups, LineView, Reading, Rule, rx


def _override_version(arch: str) -> str:
    # gfx1030 -> 10.3.0, gfx90a -> 9.0.10: the last two characters are minor and stepping
    # (stepping in hex), the rest the major version, as HSA_OVERRIDE_GFX_VERSION spells it.
    digits = arch.removeprefix("gfx")
    return f"{digits[:-2]}.{int(digits[-2], 16)}.{int(digits[-1], 16)}"


def _ollama_unsupported_gpu(match: Groups, view: LineView) -> Reading | None:
    arch = match.group("arch").split(":")[0]
    listed = re.findall(r"gfx[0-9a-f]{3,4}", match.group("listed"))
    if arch in listed:
        return None  # the check compares without features: a listed target is no proof
    # An RDNA family is gfxNNN<x> (gfx103x, gfx110x); GCN's three-character names group no
    # such way (gfx90c runs gfx900 code, not gfx906's): no sibling is computed for them.
    rdna = re.fullmatch(r"gfx1[0-9a-f]{3}", arch) is not None
    sibling = next((t for t in listed if rdna and len(t) == len(arch) and t[:-1] == arch[:-1]),
                   "")
    windows = "amd_windows" in view.text
    if windows:
        advice = ("on Windows ollama does not honour HSA_OVERRIDE_GFX_VERSION: use a build of "
                  f"ollama (or its ROCm libraries) made with {arch}")
    elif sibling:
        advice = (f"set HSA_OVERRIDE_GFX_VERSION={_override_version(sibling)} in the server "
                  f"process's own environment (for systemd: Environment= in the unit, then "
                  f"daemon-reload and restart) so {arch} runs the {sibling} code, or use "
                  f"libraries built with {arch}")
    elif rdna:
        advice = (f"HSA_OVERRIDE_GFX_VERSION cannot help: no listed target is of {arch}'s "
                  f"family; use ROCm libraries (or an ollama build) made with {arch}")
    else:
        advice = (f"use ROCm libraries (or an ollama build) made with {arch}; "
                  "HSA_OVERRIDE_GFX_VERSION set to a listed target of the same GCN generation "
                  "may run it (set it in the server process's own environment)")
    return Reading(
        subject=arch,
        cause=f"ollama rejected the GPU: its target {arch} is not among the targets its bundled "
              f"ROCm libraries were built for ({' '.join(listed)}), so it runs on the CPU",
        fix=advice)


def _lemonade_gpu(match: re.Match[str], view: LineView) -> Reading | None:
    arch, what = match.group("arch"), match.group("what")
    return Reading(
        subject=arch,
        cause=f"Lemonade refused the backend {what}: each backend lists the GPU families it "
              f"supports, and the detected GPU's {arch} is not among them (this Lemonade "
              "release does not offer that backend for it)",
        fix=f"use a Lemonade release whose {what} backend lists {arch}, or another backend "
            "that supports it (`lemonade backends` lists what this system can install)")


# ggml's device line (ggml-cuda.cu, HIP build): "Device 0: <name>, gfx1201 (0x1201), VMM: ..."
_GGML_DEVICE = re.compile(r"Device \d+: .*?, (?P<arch>gfx[0-9a-f]{3,4})(?::[\w:+-]*)? "
                          r"\(0x[0-9a-f]+\), VMM:")
# The build's GPU targets as a log shows them: a CMake cache variable on a command line, or a
# build script's summary ("Built for gfx1200:").
_BUILT_FOR = re.compile(r"(?:\b(?:AMDGPU_TARGETS|GPU_TARGETS|CMAKE_HIP_ARCHITECTURES)="
                        r"[\"']?|^Built for )(?P<list>gfx[\w;, -]*?)(?:[\"':]|\s*$|\s+-)")


def _device_not_built(match: re.Match[str], view: LineView) -> Reading | None:
    device = next((m.group("arch") for line in reversed(view.previous)
                   if (m := _GGML_DEVICE.search(line))), "")
    listed = next((m.group("list") for line in reversed(view.previous)
                   if (m := _BUILT_FOR.search(line))), "")
    targets = re.findall(r"gfx[0-9a-f]{3,4}(?:-generic)?", listed)
    # A generic target (gfx12-generic) runs on every member: no proof then.
    if not device or not targets or device in targets or any("generic" in t for t in targets):
        return None
    return Reading(
        subject=device,
        cause=f"the program's device is {device} (its own device line), but its GPU code was "
              f"built for {', '.join(targets)} only: the device's target is not in the build's "
              "target list, so no kernel in it is made for this GPU and it fails on the "
              "first GPU work",
        fix=f"rebuild with {device} in the target list (e.g. -DAMDGPU_TARGETS={device} or "
            f"-DGPU_TARGETS={device}, or the build script's arch setting); `rocminfo | grep "
            "gfx` names the device's target")


RULES: tuple[Rule, ...] = (
    Rule(id="ollama-gpu-not-supported", klass="gpu-target",
         triggers=("amdgpu is not supported",),
         pattern=rx(r"amdgpu is not supported \(supported types:\[(?P<listed>[^\]]*)\]\)\"?"
                    r"\s+gpu_type=(?P<arch>gfx[0-9a-f]{3,4}[\w:+-]*)"
                    # ollama 0.3.x: the list was a key of its own after the message
                    r"|amdgpu is not supported\"?\s+gpu=\S+\s+gpu_type=(?P<arch2>gfx[0-9a-f]{3,4}"
                    r"[\w:+-]*)\s.*?\bsupported_types=\[(?P<listed2>[^\]]*)\]"),
         read=lambda m, v: _ollama_unsupported_gpu(Alias(m, arch="arch2", listed="listed2"), v),
         source="ollama/ollama discover/amd_linux.go and "
         "amd_windows.go (stored files: slog.Warn(\"amdgpu is not supported (supported "
         "types:%s)\", \"gpu_type\", gfx, ...) when the GPU's target is not in the bundled "
         "libraries' list; Linux skips the check under HSA_OVERRIDE_GFX_VERSION, Windows has "
         "no override); ollama/ollama#8772; the supported types are the rocblas/library/"
         "TensileLibrary_lazy_gfx*.dat files of the bundled library folder: ollama/ollama@"
         "dcfb7a105c455ae8d44a06b3380731d8b1ffcc22:discover/amd_common.go GetSupportedGFX; "
         "the 0.3.x form as logged in likelovewant/ollama-for-amd#14"),
    Rule(id="lemonade-gpu-unsupported", klass="gpu-target",
         triggers=("on this system: Unsupported GPU",),
         pattern=rx(r"Cannot install (?P<what>[\w.-]+:[\w.-]+) on this system: Unsupported "
                     r"GPU: (?P<arch>gfx[0-9a-z]+)\b"),
         read=_lemonade_gpu, source="lemonade-sdk/lemonade@e385039ed33551de7f54cb73194cd08088"
         "772c08:src/cpp/server/system_info.cpp (\"Unsupported GPU: \" + the detected "
         "family when the device is present but its family is not in the backend's list) and "
         "src/cpp/server/server.cpp (\"Cannot install <recipe>:<backend> on this system: "
         "<message>\"); lemonade-sdk/lemonade#2686"),
    Rule(id="device-target-not-built", klass="gpu-target",
         triggers=("Segmentation fault", "invalid device function", "hipErrorNoBinaryForGpu",
                   "shared object initialization failed"),
         pattern=rx(r"Segmentation fault|(?:HIP|CUDA|ROCm) error: (?:invalid device function|"
                     r"shared object initialization failed)|hipErrorNoBinaryForGpu"),
         read=_device_not_built, source="ggml-org/llama.cpp ggml/src/ggml-cuda/ggml-cuda.cu "
         "as vendored in charlie12345/ROCmFPX@baed43ed9914b4f855afbeb2faec0b97cf0eace0 (GGML_LOG_"
         "INFO(\"  Device %d: %s, %s (0x%x), VMM: %s, ...\") names the device's gfx target) "
         "and its scripts/build-rocmfp4.sh (echo \"Built for ${HIP_ARCH}:\"); "
         "charlie12345/ROCmFPX#18"),
)
