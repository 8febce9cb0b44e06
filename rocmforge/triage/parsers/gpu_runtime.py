"""The GPU at run time: what the HIP runtime's error codes prove when torch or a math library
reports them (the code's name, as ROCm 5 prints it, or its text, as later ROCm prints it), and
what a Triton kernel's launch check proves about the GPU's resources.

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


def _triton_out_of_resources(match: re.Match[str], view: LineView) -> Reading | None:
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
        fix="use smaller block sizes or fewer num_stages for this kernel (on AMD GPUs "
            "num_stages=1 or 2 is usual), or update the package that ships the kernel to a "
            "release with configs for this GPU; with torch.compile, "
            "`torch._inductor.config.max_autotune = False` avoids the large configs")


RULES: tuple[Rule, ...] = (
    Rule(id="hip-out-of-memory", klass="out-of-memory",
         triggers=("HIP error: out of memory", "HIP error: hipErrorOutOfMemory",
                   "'hipErrorOutOfMemory'"),
         pattern=rx(r"HIP error: (?:out of memory|hipErrorOutOfMemory)\b"
                     r"|(?P<blas>rocBLAS) error from hip error code: 'hipErrorOutOfMemory'"),
         read=_hip_out_of_memory,
         source=_CLR.format(name="hipErrorOutOfMemory", text="out of memory") + "; torch's "
         "C10_CUDA_CHECK hipified prints 'HIP error: ' before the text (pytorch not read here: "
         "unverified); ROCm/rocBLAS@b520bc83fa67045bed4544f33ba83ce3a7c39c44:library/src/"
         "utility.cpp (\"rocBLAS error from hip error code: '\" << hipGetErrorName(status))"),
    Rule(id="visible-devices-invalid-ordinal", klass="gpu-target",
         triggers=("invalid device ordinal", "hipErrorInvalidDevice"),
         pattern=rx(r"HIP error: (?:invalid device ordinal|hipErrorInvalidDevice)\b"),
         requires=rx(r"\b(?:(?:HIP|ROCR|CUDA)_VISIBLE_DEVICES|GPU_DEVICE_ORDINAL)=[\"']?\d"),
         read=_invalid_ordinal,
         source=_CLR.format(name="hipErrorInvalidDevice", text="invalid device ordinal") + "; "
         "ROCm/clr@f9f995c6:hipamd/src/hip_device_runtime.cpp (hipSetDevice returns "
         "hipErrorInvalidDevice for an index >= g_devices.size(), the visible devices)"),
    Rule(id="triton-out-of-resources", klass="triton",
         triggers=("out of resource: shared memory",),
         pattern=rx(r"OutOfResources: out of resource: shared memory, Required: (?P<req>\d+), "
                     r"Hardware limit: (?P<lim>\d+)"),
         read=_triton_out_of_resources,
         source="ROCm/triton@4a7afd262352be86cf2a10ef379469febaccf1bf:python/triton/runtime/"
         "errors.py (OutOfResources.__str__) and python/triton/compiler/compiler.py "
         "(CompiledKernel._init_handles: raise OutOfResources(self.metadata.shared, "
         "max_shared, 'shared memory')); the real Triton 3.4.0 here (make/devrt6.sh)"),
)
