"""rocBLAS' and hipBLASLt's Tensile kernels at run time: a GEMM kernel the library's index
names that the code object the HIP runtime loaded for the GPU does not hold.

Owns: the rules that read the kernel and its target out of the HIP runtime's message. Must
not: hold missing kernel files or folders (tensile.py, math_library.py) or build-time
Tensile failures.
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _tensile_symbol(match: re.Match[str], view: LineView) -> Reading | None:
    # Tensile names a kernel's ISA as major, minor and the stepping in hex (9,0,6 -> 906;
    # 9,0,10 -> 90a): the gfx name without its prefix.
    arch = "gfx" + match.group("isa")
    lib = "hipblaslt" if any("hipblaslt" in line.lower() for line in view.previous) else "rocblas"
    return Reading(
        subject=lib,
        cause=f"the HIP runtime loaded {lib}'s Tensile code object for {arch}, but the GEMM "
              f"kernel its solution table names ({match.group('kernel')[:40]}...) is not in "
              f"it: {lib}'s kernel library for {arch} is inconsistent, its kernels built "
              "with other settings than its index (a forced code-object version, a "
              "different Tensile) or files of two builds mixed in its library folder",
        fix=f"rebuild {lib} for {arch} from a clean build folder with the default Tensile "
            "settings for that target (no forced code-object version such as "
            f"Tensile_CODE_OBJECT_VERSION=V5), or reinstall one {lib} release whole, so the "
            "code objects and their index in its library folder come from one build")


RULES: tuple[Rule, ...] = (
    Rule(id="tensile-kernel-symbol-missing", klass="math-library",
         triggers=("Cannot find Symbol with name: Cijk_",),
         pattern=rx(r"Cannot find Symbol with name: (?P<kernel>Cijk_\w*?_ISA(?P<isa>\d{2}"
                     r"[0-9a-f]{1,2}|\d{3})(?![0-9a-f])(?:_\w*)?)"),
         read=_tensile_symbol, source="ROCm/clr@f9f995c6d0aecec28debd3db0f41df0c15ec003d:"
         "hipamd/src/hip_global.cpp (Function::Function: guarantee(symbol != nullptr, "
         "\"Cannot find Symbol with name: %s\")); ROCm/Tensile@a164ed70df55ceb076f4a1f2fa2ea1"
         "1f0f1384cc:Tensile/SolutionStructs.py (getParameterValueAbbreviation: ISA as major, "
         "minor, '%x' stepping; kernel names start Cijk_); lamikr/rocm_sdk_builder#180"),
)
