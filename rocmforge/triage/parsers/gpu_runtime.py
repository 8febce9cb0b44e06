"""The GPU at run time: what the HIP runtime's error codes prove when torch or a math library
reports them (the code's name, as ROCm 5 prints it, or its text, as later ROCm prints it), a
BLAS allocation status, a malformed HSA_OVERRIDE_GFX_VERSION behind a no-GPU line, and what
Triton's AMD backend proves at run time (a kernel's shared memory over the GPU's, the HIP
runtime library not found).

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Most run-time codes prove nothing alone (a memory access
fault, no device, an invalid kernel image after warm-up): only the codes whose meaning is the
cause are read here. Must not: read files, run programs or pick between findings (the engine
does). torch's own "HIP out of memory. Tried to allocate" report is memory.py's.
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

_CLR = ("ROCm/clr@f9f995c6d0aecec28debd3db0f41df0c15ec003d:hipamd/src/hip_error.cpp "
        "(ihipGetErrorName / ihipGetErrorString: {name} -> '{text}'); the ROCm 5.2 "
        "libamdhip64.so.5 here returns the name from hipGetErrorString too "
        "(make/devrt6.sh)")


def _hip_out_of_memory(match: re.Match[str], view: LineView) -> Reading | None:
    if match.group("hipblas"):
        if re.search(r"\S:\d+:\d+: (?:fatal )?(?:error|warning|note): |\bcase\s+\w+\s*:"
                     r"|^#\s*define\s", view.text):
            return None  # the name in a compiler's diagnostic or its source echo: no status
        if re.search(r"\b(?:hipblasCreate|rocblas_create_handle)\b", view.text):
            # At handle creation the library allocates next to nothing: the status there
            # reports its start-up failing (no kernels for the GPU, a broken install) as
            # often as memory, so the line proves no cause.
            return None
        return Reading(
            subject="memory",
            cause=f"the BLAS library reported {match.group('hipblas')}: an allocation "
                  "inside it failed (rocBLAS' device workspace, or host memory), so there "
                  "was no room left for the BLAS call at that point, most often in the "
                  "GPU's memory",
            fix="make the work smaller (batch size, sequence length, a smaller or quantized "
                "model), stop other processes that hold GPU memory (`rocm-smi --showpids`), "
                "and with PyTorch try PYTORCH_HIP_ALLOC_CONF=expandable_segments:True")
    who = "rocBLAS" if match.group("blas") else "the program"
    return Reading(
        subject="memory",
        cause=f"a GPU allocation failed at run time: the HIP runtime returned "
              f"hipErrorOutOfMemory ('out of memory') to {who}, so the GPU's memory (on an "
              "APU, the share of system memory the driver gives the GPU) had no room for "
              "what it asked for at that point",
        fix="make the work smaller (batch size, resolution, sequence length, a smaller or "
            "quantized model), stop other processes that hold GPU memory (`rocm-smi "
            "--showpids`, `amd-smi process`), and with PyTorch try "
            "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True against fragmentation; on an "
            "APU raise the memory the GPU may use (the BIOS UMA size or amdgpu's GTT size)")


_VISIBLE = re.compile(r"\b(?P<var>(?:HIP|ROCR|CUDA)_VISIBLE_DEVICES|GPU_DEVICE_ORDINAL)="
                      r"(?P<value>[\"']?[\w,-]*)")


def _invalid_ordinal(match: re.Match[str], view: LineView) -> Reading | None:
    found = next((v for v in map(_VISIBLE.search, reversed(view.previous)) if v), None)
    if found is not None:
        var = found.group("var")
        setting = f"{var}={found.group('value').strip(chr(34) + chr(39))}"
    else:  # the rule's `requires` saw the setting further up the log
        var = "HIP_VISIBLE_DEVICES"
        setting = "a *_VISIBLE_DEVICES (or GPU_DEVICE_ORDINAL) setting"
    return Reading(
        subject=var,
        cause="the program asked the HIP runtime for a GPU index that is not among the "
              "devices this process sees (hipErrorInvalidDevice, 'invalid device ordinal'), "
              f"and this log sets {setting}, which hides the other GPUs and numbers the "
              "visible ones again from 0",
        fix="count devices from 0 inside the mask: with HIP_VISIBLE_DEVICES=2 the one "
            "visible GPU is device 0 (torch's cuda:0), not 2; or widen or unset the "
            "variable (`rocm-smi` / `amd-smi list` show the physical indices), and set only "
            "one of HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES")


_OOR_HEAD = re.compile(r"OutOfResources: out of resource: shared memory,$")


def _triton_out_of_resources(match: re.Match[str], view: LineView) -> Reading | None:
    # The message is one line (errors.py); a pasted log may wrap it after "shared memory,":
    # then the values' line counts only right under the exception's own head.
    if not match.group("head") and not (view.previous and _OOR_HEAD.search(view.previous[-1])):
        return None
    required, limit = int(match.group("req")), int(match.group("lim"))
    if required <= limit:
        return None  # not Triton's launch check: it raises only when the need is larger
    return Reading(
        subject="triton",
        cause=f"a Triton kernel was compiled with a configuration that needs {required} "
              f"bytes of shared memory (LDS on an AMD GPU) per block, and this GPU offers "
              f"{limit}: Triton refuses to launch it. The block sizes and num_stages come "
              "from the caller or its autotune configs, often tuned for GPUs with more "
              "shared memory than this one",
        fix="use smaller block sizes or fewer num_stages for this Triton kernel (on AMD "
            "GPUs num_stages=1 or 2 is usual), or update the package that ships the kernel to a "
            "release with configs for this GPU; with torch.compile, "
            "`torch._inductor.config.max_autotune = False` avoids the large configs")


_OVERRIDE = re.compile(r"\b(?P<var>HSA_OVERRIDE_GFX_VERSION(?:_\d+)?)(?:=[\"']?|\s+)"
                       r"(?P<value>[^\s\"']+)")
_GFX = re.compile(r"(?:gfx)?(?P<major>\d{1,2})(?P<minor>[0-9a-f])(?P<step>[0-9a-f])",
                  re.IGNORECASE)


def _override_value(value: str) -> str:
    """The major.minor.stepping form libhsakmt wants for a gfx name or its digits."""
    gfx = _GFX.fullmatch(value)
    if gfx is not None:
        return (f"{int(gfx.group('major'))}.{int(gfx.group('minor'), 16)}."
                f"{int(gfx.group('step'), 16)}")
    two = re.fullmatch(r"(\d+)\.(\d+)", value)
    return f"{two.group(1)}.{two.group(2)}.0" if two else ""


def _override_malformed(match: re.Match[str], view: LineView) -> Reading | None:
    value = match.group("bad") or ""
    found = None if value else next(
        (o for o in map(_OVERRIDE.search, reversed(view.previous)) if o), None)
    if found is not None:
        value = found.group("value")
    if value and re.fullmatch(r"\d+\.\d+\.\d+", value):
        return None  # a well-formed override nearby: the no-device line has another cause
    shown = f"'{value}'" if value else "a value that is not major.minor.stepping"
    right = _override_value(value)
    example = (f"HSA_OVERRIDE_GFX_VERSION={right}" if right else
               "HSA_OVERRIDE_GFX_VERSION=10.3.0 for gfx1030, 11.0.0 for gfx1100")
    return Reading(
        subject="HSA_OVERRIDE_GFX_VERSION",
        cause=f"HSA_OVERRIDE_GFX_VERSION is set to {shown}, which the ROCm thunk (libhsakmt) "
              "rejects: it takes three decimal numbers major.minor.stepping, and on any "
              "other form it fails the GPU's topology, so the runtime reports no GPU at all",
        fix=f"write it as major.minor.stepping in decimal: {example} (gfx90a is 9.0.10), "
            "or unset it when the GPU's own target is supported")


def _triton_libhip(match: re.Match[str], view: LineView) -> Reading | None:
    given = match.group("given")
    if given is not None:
        why = ("does not end in libamdhip64.so: Triton takes only that exact name, so a "
               "versioned file (libamdhip64.so.6) is refused even where it exists"
               if not given.endswith("libamdhip64.so") else "does not exist")
        return Reading(
            subject="triton",
            cause=f"Triton's AMD backend was told by TRITON_LIBHIP_PATH to load the HIP "
                  f"runtime from {given}, which {why}",
            fix="set TRITON_LIBHIP_PATH to an existing file named libamdhip64.so (the "
                "unversioned link of the ROCm in use: /opt/rocm/lib/libamdhip64.so, or the "
                "torch/lib one of a ROCm torch wheel), or unset it and let Triton search")
    return Reading(
        subject="triton",
        cause="Triton's AMD backend looked for the HIP runtime (libamdhip64.so, the "
              "unversioned name) in its own lib folder, each site-packages' torch/lib, "
              "LD_LIBRARY_PATH, ldconfig's cache and /opt/rocm/lib, and found it in none: "
              "torch had not loaded it yet, and no ROCm install or ROCm torch wheel is where "
              "Triton looks (a CUDA or CPU torch, a ROCm outside /opt/rocm, or only the "
              "versioned libamdhip64.so.N installed)",
        fix="install a ROCm torch wheel in the same environment, or point Triton at the "
            "runtime: `export TRITON_LIBHIP_PATH=<rocm>/lib/libamdhip64.so` (the "
            "unversioned file; the -dev package or `ln -s libamdhip64.so.6 "
            "libamdhip64.so` provides it)")


RULES: tuple[Rule, ...] = (
    Rule(id="hip-out-of-memory", klass="out-of-memory",
         triggers=("HIP error: out of memory", "HIP error: hipErrorOutOfMemory",
                   "'hipErrorOutOfMemory'", "HIPBLAS_STATUS_ALLOC_FAILED",
                   "rocblas_status_memory_error"),
         pattern=rx(r"HIP error: (?:out of memory|hipErrorOutOfMemory)\b"
                     r"|(?P<blas>rocBLAS) error from hip error code: 'hipErrorOutOfMemory'"
                     r"|(?P<hipblas>HIPBLAS_STATUS_ALLOC_FAILED|rocblas_status_memory_error)\b"),
         read=_hip_out_of_memory,
         source=_CLR.format(name="hipErrorOutOfMemory", text="out of memory") + "; torch's "
         "C10_CUDA_CHECK hipified prints 'HIP error: ' before the text (pytorch not read here: "
         "unverified); ROCm/rocBLAS@b520bc83fa67045bed4544f33ba83ce3a7c39c44:library/src/"
         "utility.cpp (\"rocBLAS error from hip error code: '\" << hipGetErrorName(status)); "
         "ROCm/hipBLAS@27cf7beb9ded25c07e0899952adaab13b79bee79:library/src/amd_detail/"
         "hipblas.cpp (hipblasConvertStatus: rocblas_status_memory_error -> "
         "HIPBLAS_STATUS_ALLOC_FAILED) and library/src/include/exceptions.hpp (bad_alloc)"),
    Rule(id="visible-devices-invalid-ordinal", klass="gpu-target",
         triggers=("invalid device ordinal", "hipErrorInvalidDevice"),
         pattern=rx(r"HIP error: (?:invalid device ordinal|hipErrorInvalidDevice)\b"),
         requires=rx(r"\b(?:(?:HIP|ROCR|CUDA)_VISIBLE_DEVICES|GPU_DEVICE_ORDINAL)=[\"']?\d"),
         read=_invalid_ordinal,
         source=_CLR.format(name="hipErrorInvalidDevice", text="invalid device ordinal") + "; "
         "ROCm/clr@f9f995c6:hipamd/src/hip_device_runtime.cpp (hipSetDevice returns "
         "hipErrorInvalidDevice for an index >= g_devices.size(), the visible devices)"),
    Rule(id="triton-out-of-resources", klass="triton",
         triggers=("out of resource: shared memory", "Hardware limit: "),
         pattern=rx(r"(?:(?P<head>OutOfResources: out of resource: shared memory, )|^)"
                     r"Required: (?P<req>\d+), Hardware limit: (?P<lim>\d+)"),
         # the same check of Triton's NVIDIA backend: a CUDA log is not this kit's
         unless=rx(r"NVIDIA|/usr/local/cuda|\bsm_\d{2,3}a?\b|\bnvcc\b|libcuda\.so"),
         read=_triton_out_of_resources,
         source="ROCm/triton@4a7afd262352be86cf2a10ef379469febaccf1bf:python/triton/runtime/"
         "errors.py (OutOfResources.__str__) and python/triton/compiler/compiler.py "
         "(CompiledKernel._init_handles: raise OutOfResources(self.metadata.shared, "
         "max_shared, 'shared memory')); the real Triton 3.4.0 here (make/devrt6.sh); "
         "ROCm/triton@30ae96716b3e7a1bf0d7892ce3b8288244f8ebec:python/triton/runtime/errors.py "
         "(same one-line text; a pasted log may wrap it after 'shared memory,')"),
    Rule(id="gfx-override-malformed", klass="gpu-target",
         triggers=("No HIP GPUs are available", "hipErrorNoDevice",
                   "no ROCm-capable device is detected", "HSA_OVERRIDE_GFX_VERSION"),
         pattern=rx(r"No HIP GPUs are available|HIP error: (?:hipErrorNoDevice|no ROCm-capable "
                     r"device is detected)|HSA_OVERRIDE_GFX_VERSION (?P<bad>\S+) is invalid"),
         # only a malformed value (not three dot-separated numbers, not a shell variable)
         requires=rx(r"HSA_OVERRIDE_GFX_VERSION(?:_\d+)?=[\"']?(?!\d+\.\d+\.\d+(?![\w.]))"
                      r"[^\s$\"'{}]|HSA_OVERRIDE_GFX_VERSION \S+ is invalid"),
         read=_override_malformed,
         source="ROCm/rocm-systems@1b1610fc2b2ab32af71e6e04e4d4a6a4ae597992:projects/"
         "rocr-runtime/libhsakmt/src/topology.c (topology_sysfs_get_node_props: sscanf "
         "'%u.%u.%u%c' must give 3 fields, else pr_err 'HSA_OVERRIDE_GFX_VERSION %s is "
         "invalid' (printed only with HSAKMT_DEBUG_LEVEL>=3) and HSAKMT_STATUS_ERROR); "
         "the gfx name's last two hex digits are minor and stepping"),
    Rule(id="triton-hip-runtime-not-found", klass="triton",
         triggers=("cannot locate libamdhip64.so after attempted paths",
                   "does not point to a valid libamdhip64.so"),
         pattern=rx(r"RuntimeError: (?:cannot locate libamdhip64\.so after attempted paths"
                     r"|TRITON_LIBHIP_PATH '(?P<given>[^']*)' does not point to a valid "
                     r"libamdhip64\.so)"),
         read=_triton_libhip,
         source="ROCm/triton@4a7afd262352be86cf2a10ef379469febaccf1bf:third_party/amd/backend/"
         "driver.py (_get_path_to_hip_runtime_dylib: TRITON_LIBHIP_PATH must end with "
         "'libamdhip64.so' and exist; then the mmapped library, the backend's lib, "
         "site-packages torch/lib, LD_LIBRARY_PATH, ldconfig -p, /opt/rocm/lib; then 'cannot "
         "locate'); the real Triton 3.4.0 here (make/devrt6.sh)"),
)
