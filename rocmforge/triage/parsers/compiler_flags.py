"""Flags and language levels a host compiler refuses: an option it does not know (newer than
the compiler, or another compiler's), a CPU name its -march/-mtune does not know, an LLVM
option (-mllvm) this LLVM does not have, a -std= of the other language, a clang warning made
an error, and a header's #error or GCC's note asking for a newer C++ standard than the compile
uses.

Owns: this family's rules. GCC's `-std=` and HIP flags given to GCC are host_compiler.py's,
nvcc's flags given to clang hipify.py's, GCC's -Werror=<w> compiler_dialect.py's. Must not:
read files, run programs or pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import Alias, Groups, LineView, Reading, Rule, rx

_Q = "[\u2018\u2019'\"`]"  # GCC quotes with ‘’ in a UTF-8 locale, ' otherwise

# Flags other rules explain: -std= (host_compiler.py), clang's HIP driver options and nvcc's
# double-dash options (host_compiler.py, hipify.py).
_OTHERS = re.compile(r"^(?:-std=|--|-fgpu-rdc|-fhip|-x$|-mcode-object|-Werror|-Wno-error)")


def _compiler(prog: str) -> str:
    return "clang" if "clang" in prog else "gcc"


def _unknown_option(match: Groups, view: LineView) -> Reading | None:
    flag, compiler = match.group("flag"), _compiler(match.group("prog"))
    if _OTHERS.match(flag):
        return None
    return Reading(
        subject=compiler,
        cause=f"{compiler} does not know the option {flag}: the build's flags were written "
              f"for a newer {compiler} release, or for another compiler, than the one that "
              "ran",
        fix=f"build with a compiler that knows {flag} (a newer release; `invoke build --gcc "
            "N` picks the GCC), or drop the flag from the flags that add it (CFLAGS/CXXFLAGS, "
            "CMAKE_CXX_FLAGS, the project's setup); `<compiler> --help=target` lists what it "
            "takes")


def _unknown_cpu(match: Groups, view: LineView) -> Reading | None:
    cpu, switch = match.group("cpu"), match.group("switch") or "-march="
    if cpu.startswith("gfx"):
        return None  # a GPU target given to the host compiler: gpu_target.py's
    compiler = "clang" if "unknown target CPU" in view.text else "gcc"
    return Reading(
        subject=compiler,
        cause=f"{compiler} does not know the CPU '{cpu}' ({switch}{cpu}): the name is newer "
              f"than this {compiler} release, or misspelt; the compiler's note lists the "
              "names it knows",
        fix=f"build with a {compiler} release that knows {cpu}, or give an older name from "
            f"the note (or {switch}native, or drop the flag) in the flags that set it "
            "(CFLAGS/CXXFLAGS, CMAKE_CXX_FLAGS)")


def _unknown_llvm_option(match: Groups, view: LineView) -> Reading | None:
    option = match.group("opt")
    return Reading(
        subject="clang",
        cause=f"clang was given the LLVM option {option} (through -mllvm) and its LLVM has no "
              "such option: LLVM's internal options come and go between releases, so the "
              "flag was written for another LLVM than the clang that ran (ROCm's clang and a "
              "distribution's differ)",
        fix=f"drop `-mllvm {option}` from the build's flags (CFLAGS/CXXFLAGS, the HIP flags, "
            "the project's setup) or compile with the clang release the flag was written for")


# clang's -Wsign-compare text: "comparison of integers of different signs: 'int' and
# 'size_t' (aka 'unsigned long')".
_SIGNS = re.compile(r"comparison of integers of different signs: '(?P<a>[^']+)' and "
                    r"'(?P<b>[^']+)'")


def _msvc_option(match: Groups, view: LineView) -> Reading | None:
    flag = match.group("flag")
    return Reading(
        subject="clang",
        cause=f"clang's GNU-style driver (clang++, not clang-cl) was given the MSVC option "
              f"{flag} and took it for a file name: the option comes from flags written for "
              "MSVC, most often a dependency built with MSVC (cl) whose CMake package passes "
              "it on in its usage requirements (INTERFACE_COMPILE_OPTIONS), or project flags "
              "for cl that reach clang++",
        fix=f"build the dependency that adds {flag} with the same clang toolchain as the "
            "component (not with MSVC), or compile with clang-cl, which takes MSVC "
            "options; then configure again from a clean build folder")


def _clang_werror(match: Groups, view: LineView) -> Reading | None:
    warning = match.group("warning")
    if warning == "unknown-warning-option":
        return None  # a GCC-only warning name: host_compiler.py's clang-unknown-warning-werror
    code = ""
    signs = _SIGNS.search(view.text) if warning == "sign-compare" else None
    if signs:
        code = (f"; or fix the code: compare like with like (the '{signs.group('a')}' operand "
                f"as '{signs.group('b')}', e.g. a loop index of that type)")
    return Reading(
        subject="clang",
        cause=f"clang's -W{warning} warning is an error in this build (-Werror or "
              f"-Werror={warning} in its flags): this clang warns where the compiler the "
              "sources were tested with did not, and the build stops on it",
        fix=f"add -Wno-error={warning} to the component's C/C++ flags (CFLAGS/CXXFLAGS, or "
            "CMAKE_CXX_FLAGS), or drop -Werror for it; a newer release of the component may "
            "have fixed the code" + code)


_STD = re.compile(r"C\+\+ ?(?P<n>\d\d)\b|(?P<iso>ISO C\+\+ 2011)")


def _std_required(match: Groups, view: LineView) -> Reading | None:
    text = match.group("text")
    found = _STD.search(text)
    if found is None:
        return None
    level = "11" if found.group("iso") else found.group("n")
    compiler = "gcc" if "error: #error " in view.text else "clang"
    return Reading(
        subject=compiler,
        cause=f"a header stops the compile with #error: it needs C++{level} or newer, and "
              "this compile runs an older C++ standard (the compiler's default or a -std= "
              "in the flags)",
        fix=f"compile with -std=c++{level} or newer (CMake: CMAKE_CXX_STANDARD={level}; "
            "otherwise CXXFLAGS), or with a compiler whose default is that standard")


_WHO = re.compile(r"\b(?P<who>GCC|gcc|g\+\+|[Cc]lang|compiler)\b")
_TOO_OLD = re.compile(r"(?i)too old|or (?:later|newer|above|higher)|at least|minimum|"
                      r"not supported|unsupported|requires? |needs? ")


def _compiler_refused(match: Groups, view: LineView) -> Reading | None:
    text = match.group("text").strip().strip('"')
    who = _WHO.search(text)
    if who is None or _TOO_OLD.search(text) is None or _STD.search(text):
        return None
    named = who.group("who").lower()
    compiler = {"g++": "gcc"}.get(named, named)
    if compiler == "compiler":
        compiler = "gcc" if "error: #error " in view.text else "clang"
    return Reading(
        subject=compiler,
        cause=f"a header refuses this {compiler} release with #error (\"{text}\"): the "
              "sources check the compiler's version and this one is outside what they support",
        fix="build with a compiler release the message accepts (GCC: `invoke build --gcc N`; "
            "otherwise CC / CXX or CMAKE_CXX_COMPILER from a clean build folder), or a release "
            "of the sources that supports this compiler")


def _compiler_refused_clang(match: Groups, view: LineView) -> Reading | None:
    text = match.group("text")
    if not view.previous or not view.previous[-1].endswith("error: " + text):
        return None
    return _compiler_refused(match, view)


def _std_name_level(match: Groups, view: LineView) -> Reading | None:
    name, level = match.group("name"), match.group("level")
    return Reading(
        subject="gcc",
        cause=f"the code uses {name}, which the standard library has only from C++{level} on, "
              "and this compile runs an older C++ standard (the compiler's default or a -std= "
              "in the flags)",
        fix=f"compile with -std=c++{level} or newer (CMake: CMAKE_CXX_STANDARD={level}; "
            "otherwise CXXFLAGS), or with a compiler whose default is that standard")


def _std_wrong_language(match: Groups, view: LineView) -> Reading | None:
    std, language = match.group("std"), match.group("lang")
    other = "CXXFLAGS / CMAKE_CXX_FLAGS" if language == "C" else "CFLAGS / CMAKE_C_FLAGS"
    mine = "CFLAGS / CMAKE_C_FLAGS" if language == "C" else "CXXFLAGS / CMAKE_CXX_FLAGS"
    return Reading(
        subject="clang",
        cause=f"clang was given -std={std} for a {language} source: the flags a {language} "
              f"compile gets hold the other language's standard (flags shared between the C "
              "and C++ compiles, or set for the wrong one)",
        fix=f"give -std={std} only to its own language ({other}, or CMake's "
            f"CMAKE_<LANG>_STANDARD) and remove it from {mine}; then configure again from a "
            "clean build folder")


def _std_required_clang(match: Groups, view: LineView) -> Reading | None:
    # clang prints the #error's text as the message and the directive on the next line.
    text = match.group("text")
    if not view.previous or not view.previous[-1].endswith("error: " + text):
        return None
    return _std_required(match, view)


# A compiler check's own output (CMake's try_compile in CMakeError.log / --debug-trycompile,
# autoconf's config.log, Meson's meson-log.txt): the check failing is how it answers "no".
PROBE_LOG = rx(r"cmTC_\w+|CMakeScratch|conftest\.c|^Compiler stderr:")

# The input of one of CMake's check probes, on the compile or link line just above an error:
# check_cxx_compiler_flag's src.cxx in the try-compile folder (CMakeScratch/TryCompile-*,
# CMakeFiles/CMakeTmp before 3.24), check_library_exists' CheckFunctionExists.c.o. CMake
# records "no" and goes on (cmake 3.25 here, make/rv10.sh); project()'s compiler check
# (testCXXCompiler.cxx, fatal) is not one of them.
_CHECK_INPUT = re.compile(r"(?:CMakeScratch[/\\]TryCompile-\w+|CMakeFiles[/\\]CMakeTmp)[/\\]src\."
                          r"(?:cxx|cpp|cc|c|cu|hip)\b|[/\\]cmTC_\w+\.dir[/\\](?:CheckFunctionExists"
                          r"|CheckSymbolExists|src)\.\w+\.o\b")


def cmake_check_probe(previous: tuple[str, ...]) -> bool:
    """The error's command (one of the last lines before it) is a CMake check probe's."""
    return any(_CHECK_INPUT.search(line) for line in previous[-3:])

# A flag probe that compiles nothing (`-c /dev/null -o /dev/null`): AITER's hip_flag_checker
# runs `hipcc <flag> -x hip -c /dev/null -o /dev/null` for each JIT flag and, when it fails,
# logs "<flag> is not supported by hipcc." and builds without the flag. The refusal is the
# probe's answer, not the build's failure.
FLAG_PROBE = rx(r"\s-c /dev/null -o \"?/dev/null\b|is not supported by hipcc\.\s*$")


RULES: tuple[Rule, ...] = (
    Rule(id="compiler-option-unknown", klass="host-compiler", tier=2,
         unless=PROBE_LOG,
         triggers=("unrecognized command-line option", "unrecognized command line option",
                   "unknown argument: '"),
         pattern=rx(r"^(?P<prog>\S*(?:gcc|g\+\+|c\+\+|cc1plus|cc1|clang\S*?)(?:-[\d.]+)?"
                    r"(?:\.exe)?): error: (?:unrecognized command[- ]line option " + _Q +
                    r"(?P<flag>-[^\s\u2018\u2019'\"`;]+)" + _Q + r"|unknown argument: "
                    r"'(?P<flag2>-[^\s']+)')"),
         read=lambda m, v: _unknown_option(Alias(m, flag="flag2"), v),
         source="GCC's 'unrecognized command-line option' (g++-12 here) and clang's driver "
         "'unknown argument' (clang++-15 here): make/devtl.sh; sources not read"),
    Rule(id="compiler-cpu-unknown", klass="host-compiler",
         unless=PROBE_LOG,
         triggers=("switch", "unknown target CPU '"),
         pattern=rx(r"error: bad value \(?" + _Q + r"(?P<cpu>[\w.+-]+)" + _Q + r"\)? for " + _Q
                    + r"(?P<switch>-m(?:arch|tune)=)" + _Q + r" switch"
                    r"|error: unknown target CPU '(?P<cpu2>[\w.+-]+)'"),
         read=lambda m, v: _unknown_cpu(Alias(m, cpu="cpu2"), v),
         source="GCC's \"bad value ('znver5') for '-march=' switch\" (gcc-11; gcc-12 drops the "
         "parentheses) and clang's \"unknown target CPU 'znver5'\" (clang-15): make/devtl.sh"),
    Rule(id="llvm-option-unknown", klass="host-compiler",
         unless=FLAG_PROBE,
         triggers=("Unknown command line argument '",),
         pattern=rx(r"\(LLVM option parsing\): Unknown command line argument '(?P<opt>-[^']+)'"),
         read=_unknown_llvm_option,
         source="LLVM's cl::opt parser via clang -mllvm ('clang (LLVM option parsing): Unknown "
         "command line argument ...'): clang++-15 here, make/devtl.sh; not on AITER's flag "
         "probe (ROCm/aiter@b8e87b39d8200e4a190198d5e4b96a9f4b15938f:csrc/cpp_itfs/utils.py "
         "hip_flag_checker: `hipcc <flag> -x hip -c /dev/null -o /dev/null`, then '<flag> is "
         "not supported by hipcc.')"),
    Rule(id="msvc-option-to-clang", klass="host-compiler",
         triggers=("no such file or directory: '/",),
         pattern=rx(r"(?:^|\s)\S*clang(?:\+\+)?(?:-\d+)?(?:\.exe)?: error: no such file or "
                    r"directory: '(?P<flag>/(?:Zc:\w+-?|permissive-|utf-8|bigobj|wd\d{4}|"
                    r"std:c\+\+\w+|MP\d*))'$"),
         # CMake's own MSVC platform flags (/DWIN32 ...) are cmake_tool.py's
         unless=rx(r"no such file or directory: '/D(?:WIN32|_WINDOWS)'"),
         read=_msvc_option,
         source="clang's driver error for an input it cannot find (\"no such file or "
         "directory: '/Zc:__cplusplus'\"): clang++-22 here, make/devcc6.sh; the MSVC options "
         "/Zc:, /permissive-, /utf-8, /bigobj, /wd<n>, /std:c++<n>, /MP (cl's option list, "
         "unverified here); ROCm/TheRock#2045 (spdlog built with MSVC)"),
    # Tier 2: a warning in a ROCm library's own code (Composable Kernel's) is that library's
    # failure, which its module reads first.
    Rule(id="clang-warning-as-error", klass="host-compiler", tier=2,
         unless=PROBE_LOG,
         triggers=("[-Werror,-W",),
         pattern=rx(r"(?:^|\s)error: .*\[-Werror,-W(?P<warning>[\w+-]+)(?:,[^\]]*)?\]\s*$"),
         read=_clang_werror,
         source="clang's diagnostic suffix for a warning made an error ('[-Werror,-W<w>]'): "
         "clang-22 -Wall -Werror here, make/devtl.sh"),
    Rule(id="cxx-standard-required", klass="host-compiler",
         unless=PROBE_LOG,
         triggers=("error: #error ",),
         pattern=rx(r"error: #error (?P<text>.*(?:C\+\+ ?\d\d|ISO C\+\+ 2011).*)$"),
         read=_std_required,
         source="GCC's 'error: #error <text>'; libstdc++'s bits/c++0x_warning.h (GCC 12 here: "
         "'This file requires compiler and library support for the ISO C++ 2011 standard'); "
         "a header's own version check: g++-12 here, make/devtl.sh"),
    Rule(id="std-name-needs-newer-cxx", klass="host-compiler",
         triggers=("is only available from C++",),
         pattern=rx(r"note: " + _Q + r"(?P<name>std::[\w:]+)" + _Q + r" is only available "
                    r"from C\+\+(?P<level>\d\d) onwards"),
         unless=PROBE_LOG,
         read=_std_name_level,
         source="GCC's note \"'std::optional' is only available from C++17 onwards\" after "
         "its error on the name: g++-12 -std=c++14 here, make/devtl.sh"),
    Rule(id="std-flag-wrong-language", klass="host-compiler",
         triggers=("not allowed with '",),
         pattern=rx(r"error: invalid argument '-std=(?P<std>[\w+]+)' not allowed with "
                    r"'(?P<lang>C|C\+\+)'"),
         unless=PROBE_LOG,
         read=_std_wrong_language,
         source="clang's driver (\"invalid argument '-std=c++17' not allowed with 'C'\", and "
         "-std=c11 with 'C++'): clang-15 and clang-22 here, make/devtl.sh; GCC only warns "
         "('is valid for C++/ObjC++ but not for C')"),
    Rule(id="cxx-standard-required-clang", klass="host-compiler",
         unless=PROBE_LOG,
         triggers=("#error ",),
         pattern=rx(r"^(?:\d+ \| )?#error (?P<text>.*(?:C\+\+ ?\d\d|ISO C\+\+ 2011).*?)\\?$"),
         read=_std_required_clang,
         source="clang's #error: the text as 'error: <text>', then the directive's source "
         "line: clang++-15 and clang++-22 here, make/devtl.sh"),
    Rule(id="compiler-version-refused", klass="host-compiler",
         unless=PROBE_LOG,
         triggers=("error: #error ",),
         pattern=rx(r"error: #error (?P<text>.+)$"),
         read=_compiler_refused,
         source="GCC's 'error: #error <text>' for a header's compiler-version check: g++-12 "
         "here, make/devtl.sh"),
    Rule(id="compiler-version-refused-clang", klass="host-compiler",
         unless=PROBE_LOG,
         triggers=("#error ",),
         pattern=rx(r"^(?:\d+ \| )?#error (?P<text>.+?)\\?$"),
         read=_compiler_refused_clang,
         source="clang's #error (the text as 'error: <text>', then the directive's line): "
         "clang++-22 here, make/devtl.sh"),
)
