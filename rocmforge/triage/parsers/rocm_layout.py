"""The ROCm install as a build meets it, where it lacks a part or is too old: HIP's CMake
package finding no compiler-rt builtins in its clang, a clang older than --offload-arch, and a
ROCm library's header that includes another library's header from a folder the include path
does not name, and clang's own resource headers (__clang_hip_runtime_wrapper.h) not found
where the compiler that ran looks. The install's tools, mixed installs and paths are
rocm_install.py's.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Must not: read files, run programs or pick between findings
(the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage import owners
from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _clangrt_builtins(match: re.Match[str], view: LineView) -> Reading | None:
    # A FATAL_ERROR until ROCm/clr@c8500cd72 (2022-08), a STATUS line or an AUTHOR_WARNING
    # since: only the error stops the configure. A build log's excerpt that numbers its lines
    # (Spack's "  >> 23    CMake Error at …") still shows the error header right above.
    if view.cmake_block != "error" and not any("CMake Error at " in line
                                               for line in view.previous[-2:]):
        return None
    return Reading(
        subject="clangrt",
        cause="HIP's CMake package (hip-config.cmake) stopped with 'clangrt builtins lib not "
              "found': it links every HIP target with compiler-rt's builtins library "
              "(libclang_rt.builtins, for __fp16 and _Float16) and found none "
              "in the clang it uses (<HIP_CLANG_ROOT>/lib/clang/<N>/lib/…): that LLVM was "
              "installed without compiler-rt, or HIP_CLANG_ROOT points at another clang than "
              "ROCm's",
        fix="install compiler-rt for the LLVM that HIP uses (ROCm's own llvm has it; in a "
            "Spack, Nix or distribution recipe, build that llvm with compiler-rt), or point "
            "HIP_CLANG_ROOT at ROCm's llvm; a hip release from ROCm 5.4 on only warns here; then "
            "configure again from a clean build folder")


def _offload_arch_unknown(match: re.Match[str], view: LineView) -> Reading | None:
    clang, target = match.group("clang"), match.group("target")
    return Reading(
        subject="hipcc",
        cause=f"{clang} does not know the option --offload-arch={target}: the ROCm install's "
              "compiler is older than that option (hipcc passes it since HIP's target-ID change "
              "of November 2020; ROCm 3.3's clang-10 rejects it), so the ROCm "
              "install is too old for what builds with it",
        fix="build with a ROCm release whose clang accepts --offload-arch (a current one: "
            "`invoke doctor` shows the ROCm the kit found and its version), or pin the project "
            f"to a release made for that old ROCm (which selected the target with "
            f"--amdgpu-target={target})")


# A ROCm library's header in its own folder (<rocm>/include/hiprand/hiprand_hcc.h) that includes
# another library's header by its bare name (<rocrand.h>), which lives in that library's own
# folder (<rocm>/include/rocrand): pytorch/pytorch#44900 (cpp_extension passed only
# -I<rocm>/include, and added the per-library folders).
_SIBLING_INCLUDER = re.compile(r"^(?P<root>/\S*?)/include/(?P<folder>[\w-]+)/"
                               r"(?P<file>[\w.-]+\.(?:h|hpp))(?::\d+)+: fatal error: ")


def _sibling_header(match: re.Match[str], view: LineView) -> Reading | None:
    includer = _SIBLING_INCLUDER.match(view.text)
    name, header = match.group("name"), match.group("header")
    row = owners.component(name)
    if includer is None or row is None or includer.group("folder") == name:
        return None
    root, folder = includer.group("root"), includer.group("folder")
    return Reading(
        subject=row.name,
        cause=f"ROCm's {folder}/{includer.group('file')} (in {root}/include) includes "
              f"<{header}> by its bare name, and {header} is {row.name}'s header, installed "
              f"in its own folder {root}/include/{name}: the compile's include path has "
              f"{root}/include but not {root}/include/{name}",
        fix=f"add -I{root}/include/{name} to the compile's include directories (an extension: "
            "its include_dirs, or a torch whose cpp_extension adds ROCm's per-library include "
            f"folders); install {row.name}'s development package ({row.install_hint()}) if "
            "that folder does not exist")


def _clang_wrapper_missing(match: re.Match[str], view: LineView) -> Reading | None:
    header = match.group("header")
    return Reading(
        subject=header,
        cause=f"clang's own {header}, which its driver force-includes into every HIP/CUDA "
              "compile (-include, from <clang resource dir>/include), was not found: the "
              "compiler that ran (clang, or comgr/hipRTC inside a program compiling kernels "
              "at run time) looks in a resource folder of an LLVM that is not installed "
              "there, or not whole",
        fix="point the compile at the ROCm LLVM that ships the header "
            "(<rocm>/llvm/lib/clang/<version>/include; ROCM_PATH, HIP_CLANG_PATH or the "
            "program's LLVM path setting), or reinstall ROCm's LLVM package (rocm-llvm) whole")


RULES: tuple[Rule, ...] = (
    Rule(id="hip-config-clangrt-builtins-missing", klass="cmake",
         triggers=("clangrt builtins lib not found",),
         pattern=rx(r"^(?:\d+\s+)?clangrt builtins lib not found(?::\s*\S*)?\s*$"),
         read=_clangrt_builtins,
         source="ROCm/clr@c8500cd72dfe2eb9238c3dfcde0d9724a33c6be9^:hipamd/hip-config.cmake.in:"
         "293 (find_library(CLANGRT_BUILTINS clang_rt.builtins … HIP_CLANG_ROOT/lib/clang/*/"
         "lib/*), FATAL_ERROR 'clangrt builtins lib not found'); since c8500cd72 a STATUS "
         "line, at ROCm/clr@f9f995c6d0aecec28debd3db0f41df0c15ec003d:hipamd/hip-config-amd."
         "cmake.in:205 an AUTHOR_WARNING"),
    Rule(id="clang-offload-arch-unknown", klass="rocm-install",
         triggers=("--offload-arch=",),
         pattern=rx(r"^(?P<clang>\S*clang[\w+.-]*): error: (?:unsupported option|unknown "
                    r"argument:) '--offload-arch=(?P<target>gfx\w+(?::[\w+-]+)*)'"),
         read=_offload_arch_unknown,
         source="ROCm/HIP@c4beefe00b1dfa0100f02a9e99d4ea4fb52873da:bin/hipcc (Target ID, "
         "2020-11-10: hipcc passes --offload-arch=, still reading --amdgpu-target=); clang's "
         "driver 'unsupported option' for an option it lacks (clang-10's line: ROCm/hipfort#12; "
         "the release that added --offload-arch to clang not read: unverified)"),
    Rule(id="rocm-sibling-header-folder", klass="rocm-install",
         triggers=("No such file or directory", "file not found"),
         pattern=rx(r"fatal error: '?(?P<header>(?P<name>[a-z]\w*)\.(?:h|hpp))'?:? "
                    r"(?:file not found|No such file or directory)"),
         read=_sibling_header,
         source="pytorch/pytorch#44900 (ROCm's hiprand_hcc.h includes <rocrand.h>, installed "
         "in <rocm>/include/rocrand; the extension's compile had -I<rocm>/include only)"),
    Rule(id="clang-wrapper-header-missing", klass="rocm-install",
         triggers=("_runtime_wrapper.h",),
         pattern=rx(r"fatal error: '(?P<header>__clang_(?:hip|cuda)_runtime_wrapper\.h)' "
                     r"file not found"),
         read=_clang_wrapper_missing,
         source="clang's driver adds -internal-isystem <resource dir>/include and -include "
         "__clang_hip_runtime_wrapper.h to a HIP compile (clang++-22 -### -x hip here; the "
         "header is /usr/lib/llvm-22/lib/clang/22/include's); ROCm/MIOpen#1105"),
)
