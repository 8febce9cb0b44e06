"""The host C++ compiler: one CMake cannot find, one too old or not supported by the
tree, a language mode older than the headers need, and host-only functions called from device
code.

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
                       f"{func}: the host libstdc++ (GCC 14 or 15, or any with "
                       "_GLIBCXX_ASSERTIONS defined) puts assertion calls into templates HIP "
                       "device code uses",
                       fix="drop -D_GLIBCXX_ASSERTIONS from CXXFLAGS, CPPFLAGS and HIPFLAGS "
                       "(distributions' default flags add it); with GCC 15's libstdc++, which "
                       "asserts without it, build with an older GCC (`invoke build --gcc 13`) or "
                       "a ROCm whose HIP headers declare it for device code, or clang's libc++ "
                       "(-stdlib=libc++: no __glibcxx_assert); in your own device code, "
                       "replace the libstdc++ call that asserts (std::clamp) with a comparison")
    return None


def _assertion_overload(match: re.Match[str], view: LineView) -> Reading | None:
    func = match.group("func")
    return Reading(
        subject="libstdc++",
        cause=f"the host libstdc++'s __glibcxx_assert macro declares {func} inside the "
              "templates it guards, and ROCm's clang, compiling them as HIP __host__ "
              f"__device__ code (its cuda_wrappers headers), cannot overload the host {func}: "
              "this libstdc++ (GCC 11 in the cited thread) is newer than that clang handles",
        fix="build with a ROCm whose clang accepts this libstdc++ (a newer ROCm), or against "
            "an older GCC's libstdc++ (`invoke build --gcc N`, the GCC the ROCm release "
            "names), and drop -D_GLIBCXX_ASSERTIONS from the flags (distributions add it)")


def _cmake_no_compiler(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block != "error" and not view.text.startswith("CMake Error"):
        return None
    lang = match.group("lang") or match.group("lang2") or match.group("lang3")
    if lang == "Fortran":
        return _no_fortran()
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


def _no_fortran() -> Reading:
    return Reading(
        subject="fortran",
        cause="CMake found no Fortran compiler (its identification is unknown) for a project "
              "that enables Fortran (hipBLASLt's and rocSOLVER's clients do)",
        fix="install a Fortran compiler (gfortran, or ROCm's flang) and configure again, or "
            "set CMAKE_Fortran_COMPILER to it (FC); on Windows, where there is none by "
            "default, disable the parts that need Fortran (the clients)")


def _fortran_internal_variable(match: re.Match[str], view: LineView) -> Reading | None:
    if not view.previous or not view.previous[-1].rstrip().endswith("Missing variable is:"):
        return None
    return _no_fortran()


def _therock_msvc(match: re.Match[str], view: LineView) -> Reading | None:
    if match.group("old"):
        return Reading(
            subject="msvc",
            cause="TheRock's configure check: the MSVC found is older than it supports "
                  "(OpenMP linker errors follow with it)",
            fix="install Visual Studio (Build Tools) 17.12 or newer (MSVC_VERSION 1942+) and "
                "configure from its x64 Native Tools prompt, or set "
                "THEROCK_DISABLE_MSVC_VERSION_CHECK at your own risk")
    return Reading(
        subject="msvc",
        cause="TheRock's configure check: the bootstrap C/C++ compiler CMake picked is not "
              "64-bit MSVC (cl.exe): another compiler on PATH (Strawberry Perl's gcc, MinGW) "
              "or a 32-bit (x86) developer prompt",
        fix="configure from an `x64 Native Tools Command Prompt for VS 2022` (or run "
            "vcvars64.bat first), or pass -DCMAKE_C_COMPILER=cl.exe "
            "-DCMAKE_CXX_COMPILER=cl.exe, in a fresh build folder")


def _no_working_compiler(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="gcc",
        cause="an autoconf configure found no C compiler that builds its test program "
              "(config.log holds the compiler's error): a compiler newer than the project "
              "supports (GCC 15 compiles C as C23 by default), or a broken compiler setup",
        fix="read the failing test in config.log; build that project with an older gcc "
            "(`invoke build --gcc N`, CC=gcc-N) or a release of it that supports this GCC")


# Which compiler ran a compile, from the include chain or the file's kind: ROCm's LLVM and
# .hip sources are clang's; a GCC include folder is gcc's.
_CLANG_SIGN = re.compile(r"/llvm/|clang|\.hip\b|\.cu\b")
_GCC_SIGN = re.compile(r"/gcc/|\bg\+\+|\bcc1plus\b")


def _std_too_old(match: re.Match[str], view: LineView) -> Reading | None:
    context = " ".join((*view.previous, view.text))
    compiler = ("clang" if _CLANG_SIGN.search(context) else
                "gcc" if _GCC_SIGN.search(context) else "")
    if not compiler:
        return None
    library, std = match.group("lib"), match.group("std")
    return Reading(
        subject=compiler,
        cause=f"{library}'s headers need C++{std} and {compiler} compiled them in an older "
              f"language mode: the project or its flags ask for an older -std, or the "
              f"compiler's default comes from an old toolchain setup",
        fix=f"compile with C++{std} or newer (-std=c++{std}, CMAKE_CXX_STANDARD / "
            f"CMAKE_HIP_STANDARD {std}); on an old distribution (EL8's GCC 8) use a newer GCC "
            "toolset (gcc-toolset-N, devtoolset-N) for the host side, which the ROCm headers "
            "of this release expect")


def _std_unknown(match: re.Match[str], view: LineView) -> Reading | None:
    std = match.group("std") or match.group("std2")
    compiler = "clang" if match.group("std2") else "gcc"
    program = match.group("prog") or compiler
    return Reading(
        subject=compiler,
        cause=f"{program} does not know -std={std}: the compiler is older than the C++ "
              "standard the project asks for",
        fix=f"build with a {compiler} release that knows -std={std} (`invoke build --gcc N` "
            "or CC/CXX naming a newer compiler; `invoke toolchain` lists the installed ones), "
            "or a release of the project that asks for a standard this compiler knows")


def _hip_language_to_gcc(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="gcc", cause=f"{match.group('prog').rsplit('/', 1)[-1]} (GCC's "
                   "driver) was asked to compile -x hip, a language only clang knows: the HIP "
                   "sources went to the host GCC (CC / CXX / CMAKE_CXX_COMPILER)",
                   fix="compile the HIP sources with ROCm's clang: CC=$ROCM_PATH/llvm/bin/clang "
                   "CXX=$ROCM_PATH/llvm/bin/clang++ (or hipcc, or CMAKE_HIP_COMPILER), then "
                   "configure from a clean build folder")


_CMAKE_COMPILER_HEAD = re.compile(r"^The CMAKE_(?P<lang>C|CXX)_COMPILER:\s*$")
_ROCM_COMPILER = re.compile(r"(?i)rocm|hipcc|/llvm/bin/|amdclang")
_FULL_PATH = re.compile(r"^(?:/|[A-Za-z]:[\\/])\S")  # only a full path reaches this message


def _cmake_compiler_path(match: re.Match[str], view: LineView) -> Reading | None:
    """CMake's block "The CMAKE_<LANG>_COMPILER:", <path> (the line before), "is not ..."."""
    if view.cmake_block != "error" or len(view.previous) < 2:
        return None
    head = _CMAKE_COMPILER_HEAD.match(view.previous[-2])
    path = view.previous[-1].strip()
    if head is None or not _FULL_PATH.match(path):
        return None  # the line is the whole path, spaces too (C:/Program Files/...)
    lang = head.group("lang")
    program = re.split(r"[\\/]", path)[-1]
    if _ROCM_COMPILER.search(path):
        return Reading(
            subject=program, klass="rocm-install",
            cause=f"CMAKE_{lang}_COMPILER (or {'CXX' if lang == 'CXX' else 'CC'}) names "
                  f"{path}, which does not exist: that ROCm install has no {program} there "
                  "(another ROCm release or layout, or the compiler package not installed)",
            fix=f"point CMAKE_{lang}_COMPILER (and CC/CXX) at the compiler of the ROCm install "
                "the build uses ($ROCM_PATH/bin/hipcc or $ROCM_PATH/lib/llvm/bin/clang++; "
                "`invoke doctor` shows the ROCm the kit found), then configure from a clean "
                "build folder")
    name = ("clang" if "clang" in program else
            "gcc" if re.search(r"g\+\+|gcc|\bc\+\+|\bcc\b", program) else "")
    if not name:
        return None
    return Reading(
        subject=name,
        cause=f"CMAKE_{lang}_COMPILER (or CC/CXX) names {path}, which does not exist",
        fix=f"install that compiler, or point CC/CXX (CMAKE_{lang}_COMPILER) at an installed "
            "one, then configure from a clean build folder (the cache keeps the old path)")


def _unknown_warning(match: re.Match[str], view: LineView) -> Reading | None:
    group = match.group("group") or match.group("group2")
    where = ("a #pragma GCC diagnostic in the sources" if match.group("group")
             else "the compile flags")
    return Reading(
        subject="clang",
        cause=f"clang does not know the warning {group}, which {where} name: it is a GCC "
              "warning, and -Werror turns clang's -Wunknown-warning-option warning into an "
              "error; the code or its flags were written for GCC, and clang compiles them",
        fix="compile this part with GCC (CC=gcc CXX=g++ for the host code), or keep clang "
            "and add -Wno-unknown-warning-option (or drop -Werror for it); a release of the "
            "project that guards the GCC-only warning for clang also builds")


# The C runtime headers a Windows compile takes from the Windows SDK's UCRT (not from clang's
# own resource headers, which has stddef.h, stdint.h, limits.h …).
_UCRT_HEADERS = r"(?:stdlib|stdio|string|math|malloc|errno|assert|wchar|time|locale|signal)\.h"
_WINDOWS_FILE = re.compile(r"^(?:\\\\\?\\)?[A-Za-z]:\\\S*\(\d+,\d+\)|^(?:\\\\\?\\)?[A-Za-z]:[\\/]")


def _windows_crt_header(match: re.Match[str], view: LineView) -> Reading | None:
    header = match.group("h") or match.group("h2")
    said = view.text if match.group("h2") else " ".join(view.previous[-1:])
    if match.group("h") and not said.endswith("fatal error:"):
        return None  # the header's name wrapped onto its own line after the error's start
    if not _WINDOWS_FILE.search(said):
        return None
    return Reading(
        subject="msvc",
        cause=f"clang on Windows found no {header}: the C runtime headers come from the "
              "Windows SDK (its UCRT) that Visual Studio's C++ build tools install, and "
              "they are not installed, or the compile ran where it could not find them",
        fix="install Visual Studio (or its Build Tools) with the 'Desktop development with "
            "C++' workload, which brings MSVC and a Windows SDK; or run from a developer "
            "prompt (vcvars64.bat) so INCLUDE names the SDK's ucrt folder; then run again")


def _host_flag_on_device(match: re.Match[str], view: LineView) -> Reading | None:
    # err_opt_not_valid_on_target names an -f option without its "-f" ('cf-protection=return');
    # err_drv_unsupported_opt_for_target quotes the flag as given.
    flag = match.group("opt2") or "-f" + match.group("opt")
    name = flag.split("=")[0]
    extra = ("; or add -fcf-protection=none after it in the HIP flags"
             if name == "-fcf-protection" else "")
    return Reading(
        subject="clang",
        cause=f"a host-only code-generation flag ({flag}) reached the HIP device compile for "
              "the GPU (amdgcn), which does not support it: hardening flags in CFLAGS/CXXFLAGS "
              "(a distribution's packaging flags: Fedora/RHEL's rpm optflags carry "
              "-fcf-protection) go to every clang job of a HIP source, the device side too",
        fix=f"take {name} out of the flags the HIP sources get (CXXFLAGS, HIPFLAGS, "
            f"CMAKE_HIP_FLAGS), or give it to the host side only (-Xarch_host {flag}){extra}")


RULES: tuple[Rule, ...] = (
    Rule(id="host-flag-on-device", klass="host-compiler",
         triggers=("cannot be specified on this target", "for target 'amdgcn"),
         pattern=rx(r"error: option '(?P<opt>[\w=,+-]+)' cannot be specified on this target"
                     r"|error: unsupported option '(?P<opt2>-[\w=,+-]+)' for target "
                     r"'amdgcn-amd-amdhsa'"),
         requires=rx(r"when compiling for gfx|amdgcn-amd-amdhsa|-x hip|--offload-arch|hipcc"),
         read=_host_flag_on_device,
         source="clang's err_opt_not_valid_on_target and err_drv_unsupported_opt_for_target; "
         "clang++-22 here on a HIP source with -fcf-protection ('option 'cf-protection=return' "
         "cannot be specified on this target', then 'N errors generated when compiling for "
         "gfx1100') and -fzero-call-used-regs (make/offload_flags.sh); both pass with "
         "-Xarch_host"),
    Rule(id="cxx-standard-unknown", klass="host-compiler",
         triggers=("unrecognized command-line option", "unrecognized command line option",
                   "in '-std="),
         pattern=rx(r"^(?P<prog>\S*(?:g\+\+|gcc|c\+\+|cc1plus)(?:-[\d.]+)?(?:\.exe)?): "
                     r"error: unrecognized command[- ]line option [\u2018'\"`]?-std="
                     r"(?P<std>(?:gnu|c)\+\+\w+)"
                     r"|error: invalid value '(?P<std2>(?:gnu|c)\+\+\w+)' in '-std="),
         read=_std_unknown, source="GCC's opts-common.cc (read_cmdline_option: "
         "error_at \"unrecognized command-line option %qs\"; a stored GCC 14-era copy, the "
         "index names no commit; older GCCs spell it \"command line\"); clang's driver "
         "(\"invalid value 'c++26' in '-std=c++26'\" as clang 15 prints it; its source not "
         "read); both reproduced here: make/compiler_std.sh (g++-11/12, clang++-15)"),
    Rule(id="hip-language-to-gcc", klass="host-compiler", triggers=("language hip not recog",),
         pattern=rx(r"(?P<prog>\S*(?:\+\+|gcc|cc)[\d.-]*): error: language hip not recognized"),
         read=_hip_language_to_gcc, source="GCC's driver ('language %s not recognized'; "
         "gcc.cc not read): reproduced with gcc-12, g++-11, c++ -x hip, make/devbt7.sh"),
    Rule(id="cmake-compiler-path", klass="host-compiler",
         triggers=("is not a full path to an existing compiler tool",),
         pattern=rx(r"^is not a full path to an existing compiler tool"),
         read=_cmake_compiler_path, source="Kitware/CMake:Modules/CMakeDetermineCompiler.cmake "
         "(_cmake_find_compiler_path: 'The CMAKE_<LANG>_COMPILER:\\n  <path>\\n is not a full "
         "path to an existing compiler tool.'; reproduced with cmake 3.25.1 and 4.4.5: "
         "make/cmake_compiler_path.sh)"),
    Rule(id="cxx-standard-too-old", klass="host-compiler",
         triggers=("requires at least C++",),
         pattern=rx(r": error: \(?\"?(?P<lib>[\w-]+) requires at least C\+\+(?P<std>\d\d)\b"),
         read=_std_too_old, source="rocPRIM's rocprim/config.hpp (#error \"rocPRIM requires "
         "at least C++17\"); ROCm/bitsandbytes#89"),
    Rule(id="host-function-in-device", klass="host-compiler",
         triggers=("__host__ function", "host function"),
         pattern=rx(r"reference to __host__ function '(?P<func>[^']+)' in __host__ __device__"
                     r"|reference to __host__ function '(?P<func2>[^']+)' in __device__"),
         read=lambda m, v: _host_in_device(Alias(m, func="func2"), v),
         source="clang's err_ref_bad_target; libstdc++'s assert_fail; quokka-astro/quokka#856"),
    Rule(id="libstdcxx-assertion-overload", klass="host-compiler",
         triggers=("cannot overload __host__ function",),
         pattern=rx(r"error: __host__ __device__ function '(?P<func>__failed_assertion|"
                     r"__glibcxx_assert\w*)' cannot overload __host__ function"),
         read=_assertion_overload, source="clang's err_cuda_ovl_target ('%select{__device__|"
         "__global__|__host__|__host__ __device__}0 function %1 cannot overload ...'); "
         "libstdc++ 11's c++config.h __glibcxx_assert_1 (a local 'void __failed_assertion();' "
         "declaration, as the cited log's notes quote it; the GCC file not read); "
         "ROCm/rocBLAS#1191"),
    Rule(id="cmake-no-compiler", klass="host-compiler",
         triggers=("No CMAKE_", "_COMPILER not set", "is not a full path to an existing "
                   "compiler"),
         pattern=rx(r"No CMAKE_(?P<lang>C|CXX|HIP|Fortran)_COMPILER could be found"
                     r"|CMAKE_(?P<lang2>C|CXX|HIP|Fortran)_COMPILER not set, after "
                     r"EnableLanguage"
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
    Rule(id="cmake-fortran-internal-variable", klass="host-compiler",
         triggers=("CMAKE_Fortran_",),
         pattern=rx(r"^(?:\[[^\]]+\] )?CMAKE_Fortran_\w+\s*$"),
         requires=rx(r"The Fortran compiler identification is unknown"),
         read=_fortran_internal_variable, source="Kitware/CMake cmMakefile::GetRequiredDefinition"
         " (\"Missing variable is:\" then the name); ROCm/rocm-libraries#1608"),
    Rule(id="therock-msvc-check", klass="host-compiler",
         triggers=("Bootstrap compiler was expected to be MSVC", "MSVC_VERSION is too old"),
         pattern=rx(r"Bootstrap compiler was expected to be MSVC"
                     r"|(?P<old>Detected MSVC_VERSION is too old)"),
         read=_therock_msvc, source="ROCm/TheRock@89553ce:cmake/therock_compiler_config.cmake; "
         "ROCm/TheRock#719 (#560)"),
    Rule(id="autoconf-no-working-compiler", klass="host-compiler",
         triggers=("could not find a working compiler", "C compiler cannot create executables"),
         pattern=rx(r"configure: error: (?:could not find a working compiler|C compiler cannot "
                     r"create executables)"),
         read=_no_working_compiler, source="GMP's configure (\"could not find a working "
         "compiler, see config.log\") and autoconf's AC_PROG_CC check; ROCm/TheRock#2667"),
    Rule(id="clang-unknown-warning-werror", klass="host-compiler",
         triggers=("-Werror,-Wunknown-warning-option",),
         pattern=rx(r"error: unknown warning (?:group '(?P<group>-W[\w+=-]+)', ignored|option "
                    r"'(?P<group2>-W[\w+=-]+)'(?:; did you mean '[^']*'\?)?) "
                    r"\[-Werror,-Wunknown-warning-option\]"),
         read=_unknown_warning, source="clang's -Wunknown-warning-option diagnostics ('unknown "
         "warning group '<w>', ignored' for a #pragma GCC diagnostic, 'unknown warning option "
         "'<w>'' for a flag), errors under -Werror: reproduced with clang++-22 and "
         "-Winit-list-lifetime (make/devbt3.sh); ROCm/aotriton#107"),
    Rule(id="windows-crt-header-missing", klass="host-compiler",
         triggers=("' file not found",),
         pattern=rx(r"^'(?P<h>" + _UCRT_HEADERS + r")' file not found$"
                    r"|: fatal error: '(?P<h2>" + _UCRT_HEADERS + r")' file not found$"),
         read=_windows_crt_header, source="clang's 'fatal error: '<h>' file not found' "
         "with a Windows location ('<file>(line,col)', MSVC-style, or a drive path); the "
         "C runtime headers of the Windows SDK's UCRT: llvm/llvm-project "
         "clang/lib/Driver/ToolChains/MSVC.cpp (AddClangSystemIncludeArgs adds "
         "<UniversalCRTSdkPath>\\Include\\<ver>\\ucrt found by getUniversalCRTSdkDir, "
         "or the INCLUDE variable; stored copy, commit not established); "
         "unslothai/unsloth#7595"),
)
