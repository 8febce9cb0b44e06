"""Extension builds' GPU-target lists: an extension's build that keeps only the targets it has
kernels for and stops when none of those asked for is on its list.

Owns: the rules for those stops, read from the extensions' sources (vLLM's CMake) and
reproduced by tests/failures/make/devext6.sh. Must not: hold flash-attention's GPU_ARCHS
check (extension_setup.py) or PyTorch's own target checks (gpu_target.py).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

VLLM_UTILS = ("vllm-project/vllm@00c1d959bc9dabe8d60a4e976f327f0f02490c4e:cmake/utils.cmake; "
              "ROCm/vllm@f8c9a385233a8e1f724411785a1c326006640df5:cmake/utils.cmake")


def _vllm_arch(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block != "error":
        return None
    asked = [a for a in (match.group("archs") or "").split(";") if a]
    subject = asked[0].split(":")[0] if asked else "PYTORCH_ROCM_ARCH"
    none_of = (f"none of the targets it was given ({', '.join(asked)}) is on it: this vLLM "
               "has no ROCm kernels for that target" if asked else
               "it was given no target at all (PYTORCH_ROCM_ARCH empty, and none detected)")
    return Reading(
        subject=subject,
        cause=f"vLLM's CMake keeps, of the GPU targets in PYTORCH_ROCM_ARCH (or those "
              f"enable_language(HIP) detected), only those on its own supported list, and "
              f"{none_of}",
        fix="set PYTORCH_ROCM_ARCH to targets from the supported list the message prints "
            "(your GPU's own, as `rocminfo | grep gfx` names it, when it is listed); a GPU "
            "that is not on the list is not supported by this vLLM release's ROCm build (a "
            "newer release may list it)")


RULES: tuple[Rule, ...] = (
    Rule(id="vllm-rocm-arch-unsupported", klass="gpu-target",
         triggers=("None of the detected ROCm architectures",),
         pattern=rx(r"^None of the detected ROCm architectures: ?(?P<archs>[\w:+;-]*)"
                    r"(?: is\b|$)"),
         read=_vllm_arch,
         source=f"{VLLM_UTILS} (override_gpu_arches: 'None of the detected ROCm "
                "architectures: … is supported. Supported ROCm architectures are: …')"),
)
