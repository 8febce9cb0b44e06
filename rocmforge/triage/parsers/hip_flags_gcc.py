"""HIP compiler flags handed to GCC: the host g++ refusing an option only clang's HIP driver
knows, which means the HIP sources went to GCC.

Owns: that rule (moved out of host_compiler.py, at its 400-line limit, when it learned to
decline a CMake flag probe's compile). Must not: read files, run programs or pick between findings
(the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.parsers.compiler_flags import cmake_check_probe
from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _hip_flag_to_gcc(match: re.Match[str], view: LineView) -> Reading | None:
    if cmake_check_probe(view.previous):
        return None  # a flag probe fails on purpose (make/rv10.sh's CMakeError.log)
    program, flag = match.group("prog"), match.group("flag")
    return Reading(
        subject="gcc",
        cause=f"{program} was given {flag}, a flag of the HIP compiler (clang), not GCC's: the "
              "project compiled its HIP sources with the host GCC (CXX / CMAKE_CXX_COMPILER is "
              "g++ where the project needs ROCm's clang++ or hipcc, or a target links "
              "hip::device whose flags reach a GCC compile)",
        fix="compile the HIP sources with ROCm's compiler: CXX=$ROCM_PATH/lib/llvm/bin/clang++ "
            "(or hipcc) and CMAKE_CXX_COMPILER to the same, or enable CMake's HIP language for "
            "them (CMAKE_HIP_COMPILER), then configure from a clean build folder")


RULES: tuple[Rule, ...] = (
    Rule(id="hip-flag-to-gcc", klass="host-compiler", triggers=("unrecognized command",),
         pattern=rx(r"^(?P<prog>\S*(?:g\+\+|gcc|c\+\+|cc1plus)(?:-[\d.]+)?(?:\.exe)?): error: "
                    r"unrecognized command[- ]line option [\u2018'\"`]?(?P<flag>--offload-arch="
                    r"\w[\w:+-]*|-f(?:no-)?gpu-rdc|--hip-link|--(?:rocm|hip)-path=\S+?|--hip-"
                    r"device-lib-path=\S+?|-fhip-new-launch-api|--cuda-gpu-arch=\w+|-nogpu(?:lib|"
                    r"inc)|--(?:cuda|offload)-(?:device|host)-only|-munsafe-fp-atomics)"
                    r"[\u2019'\"`]?(?:;|$)"),
         read=_hip_flag_to_gcc,
         source="GCC's 'unrecognized command-line option' (as for cxx-standard-unknown); "
         "the flags are clang's HIP driver options that ROCm's "
         "hip-config-amd.cmake adds to hip::device (--offload-arch per GPU_TARGETS, "
         "--hip-link: ROCm/clr@018eeb4c78f8ea4553d612390c2e569edb2a3e08:hipamd/"
         "hip-config-amd.cmake) or that clang++-22 -x hip takes here; reproduced with g++-11/12 "
         "here (make/compiler_std.sh, make/devq8.sh); a CMake flag probe's try-compile of src.cxx "
         "is declined: check_cxx_compiler_flag fails there on purpose (make/rv10.sh)"),
)
