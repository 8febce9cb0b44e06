"""The host C++ compiler: one CMake cannot find, one too old or not supported by the
tree, and host-only functions called from device code.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import Alias, Groups, LineView, Reading, Rule, rx


def _host_in_device(match: Groups, view: LineView) -> Reading | None:
    func = match.group("func")
    if "glibcxx" in func or "replacement_assert" in func or "__assert" in func:
        return Reading(subject="libstdc++", cause=f"device code calls the host-only function "
                       f"{func}: the host libstdc++ (GCC 15, or any with _GLIBCXX_ASSERTIONS "
                       "defined) puts assertion calls into templates HIP device code uses",
                       fix="drop -D_GLIBCXX_ASSERTIONS from CXXFLAGS, CPPFLAGS and HIPFLAGS "
                       "(distributions' default flags add it); with GCC 15's libstdc++, which "
                       "asserts without it, build with an older GCC (`invoke build --gcc 13`) or "
                       "a ROCm whose HIP headers declare the assertion for device code")
    return None


def _cmake_no_compiler(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block != "error" and not view.text.startswith("CMake Error"):
        return None
    lang = match.group("lang") or match.group("lang2") or match.group("lang3")
    if lang == "HIP":
        return Reading(
            subject="hipcc", klass="rocm-install",
            cause="CMake found no HIP compiler: the ROCm install the build uses has no "
                  "llvm/bin/clang++ (rocm-llvm not installed), or ROCM_PATH / HIP_PATH / "
                  "CMAKE_HIP_COMPILER point at a folder without it",
            fix="install ROCm's compiler (rocm-llvm, hipcc) and point the build at that ROCm "
                "(`invoke build --rocm-path /opt/rocm-X.Y`, or CMAKE_HIP_COMPILER="
                "<rocm>/llvm/bin/clang++); `invoke doctor` shows the ROCm the kit found")
    name = "gcc" if lang == "C" else "g++"
    return Reading(
        subject=name,
        cause=f"CMake found no {lang} compiler: none is installed, or CC / CXX (or "
              f"CMAKE_{lang}_COMPILER) name a program that does not exist",
        fix=f"install the host compiler (e.g. `apt install {name}` or build-essential), or "
            "unset CC/CXX or point them at an installed compiler, then configure from a clean "
            "build folder")


def _old_gcc(match: re.Match[str], view: LineView) -> Reading | None:
    need = match.group("need") or match.group("need2") or ""
    return Reading(
        subject="gcc",
        cause="the host GCC is older than the sources support" +
              (f" (they need GCC {need} or later)" if need else ""),
        fix="install a newer GCC and build with it (`invoke build --gcc N`, or CC/CXX="
            "gcc-N/g++-N), then configure from a clean build folder")


RULES: tuple[Rule, ...] = (
    Rule(id="host-function-in-device", klass="host-compiler",
         triggers=("__host__ function", "host function"),
         pattern=rx(r"reference to __host__ function '(?P<func>[^']+)' in __host__ __device__"
                     r"|reference to __host__ function '(?P<func2>[^']+)' in __device__"),
         read=lambda m, v: _host_in_device(Alias(m, func="func2"), v),
         source="clang's err_ref_bad_target; GCC 15 libstdc++ __glibcxx_assert_fail"),
    Rule(id="cmake-no-compiler", klass="host-compiler",
         triggers=("No CMAKE_", "_COMPILER not set", "is not a full path to an existing "
                   "compiler"),
         pattern=rx(r"No CMAKE_(?P<lang>C|CXX|HIP)_COMPILER could be found"
                     r"|CMAKE_(?P<lang2>C|CXX|HIP)_COMPILER not set, after EnableLanguage"
                     r"|^The CMAKE_(?P<lang3>HIP)_COMPILER:\s*$"),
         read=_cmake_no_compiler, source="Kitware/CMake Modules/CMakeDetermine<LANG>Compiler"
         ".cmake and cmGlobalGenerator.cxx"),
    Rule(id="gcc-too-old", klass="host-compiler",
         triggers=("too old version of GCC", "or later is required", "or newer is required",
                   "or higher is required"),
         pattern=rx(r"too old version of GCC\. We need GCC (?P<need>\d+)"
                     r"|\b(?:GCC|gcc|g\+\+) (?:version )?(?P<need2>\d+(?:\.\d+)*) or "
                     r"(?:later|newer|higher) is required"),
         read=_old_gcc, source="pytorch/pytorch c10/util/C++17.h (\"You're trying to build "
         "PyTorch with a too old version of GCC\")"),
)
