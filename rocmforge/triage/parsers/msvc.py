"""The MSVC toolchain as a Windows build shows it: the C++ standard library refusing a compiler
older than it supports (yvals_core.h's STL1000/STL1001) or a keyword defined as a macro
(xkeycheck.h), the Visual C++ environment missing (toolset or SDK headers, cl or link.exe not
found, LNK1158, setuptools finding no Visual C++), code written for Linux or GCC (POSIX headers,
__builtin_ names, M_PI without _USE_MATH_DEFINES), and cl's fatal errors C1001, C1041, C1128.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Must not: read files, run programs or pick between findings
(the engine does). MSVC's memory errors are memory.py's, its warning flags compiler_dialect.py's,
its linker link_coff.py's.
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

# yvals_core.h names the compiler in the message: STL1000 Clang, STL1001 MSVC, STL1002 CUDA.
_STL_COMPILER = {"STL1000": "clang", "STL1001": "msvc"}


def _stl_compiler(match: re.Match[str], view: LineView) -> Reading | None:
    compiler = _STL_COMPILER.get(match.group("code"))
    if compiler is None:
        return None  # CUDA's nvcc (STL1002): not a ROCm build's compiler
    want = match.group("want")
    which = ("this clang (clang-cl, or the HIP SDK's or TheRock's clang)" if compiler == "clang"
             else "this cl")
    return Reading(
        subject=compiler,
        cause=f"the Visual Studio C++ standard library the build uses (yvals_core.h, "
              f"{match.group('code')}) requires {want} or newer, and {which} is older: Visual "
              "Studio or its Build Tools were updated past the compiler the build runs",
        fix=f"use a compiler of {want} or newer (a newer ROCm/HIP SDK for its clang), or build "
            "against an older MSVC toolset that still supports this compiler (install it in the "
            "Visual Studio Installer, select it with `vcvarsall.bat x64 -vcvars_ver=14.NN`); "
            "defining _ALLOW_COMPILER_AND_STL_VERSION_MISMATCH only hides the check")


def _bigobj(match: re.Match[str], view: LineView) -> Reading | None:
    source = match.group("file").replace("\\", "/").rsplit("/", 1)[-1]
    return Reading(
        subject="msvc",
        cause=f"the object file of {source} has more sections than the default COFF object "
              "format allows (C1128): large template-heavy sources (PyTorch's, CK's) need "
              "the extended format",
        fix="compile that target with /bigobj (CMake: `target_compile_options(<target> "
            "PRIVATE /bigobj)`; a setuptools extension: extra_compile_args with '/bigobj'), "
            "then build again")


def _pdb_shared(match: re.Match[str], view: LineView) -> Reading | None:
    pdb = match.group("pdb").replace("\\", "/").rsplit("/", 1)[-1]
    return Reading(
        subject="msvc",
        cause=f"cl could not open the program database {pdb} (C1041): several cl processes of "
              "a parallel build write debug information (/Zi) into the same .pdb without /FS",
        fix="compile with /FS (serialized .pdb writes) or with /Z7 (debug information in each "
            "object; CMake: CMAKE_MSVC_DEBUG_INFORMATION_FORMAT=Embedded), or give each target "
            "its own .pdb, then build again")


def _no_visual_cpp(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="msvc",
        cause="setuptools found no Visual C++ compiler (no vcvarsall.bat of Visual Studio "
              "2017 or later with the C++ x64 tools), so it cannot compile the package's "
              "extension modules",
        fix="install the Visual Studio Build Tools with 'Desktop development with C++' (MSVC "
            "and a Windows SDK), then run pip again in a new shell; or install a prebuilt "
            "wheel of the package for this Python")


def _tool_not_found(match: re.Match[str], view: LineView) -> Reading | None:
    tool = match.group("tool") or match.group("tool2")
    return Reading(
        subject="msvc",
        cause=f"the shell could not find {tool}, a tool of the MSVC developer environment: "
              "the build ran in a shell where vcvarsall.bat was not run (PATH lacks the "
              "Visual C++ tools), or the C++ build tools are not installed",
        fix="run the build from the x64 Native Tools Command Prompt for Visual Studio (or "
            "call `vcvarsall.bat x64` first in that shell), after installing 'Desktop "
            "development with C++' in the Visual Studio Installer")


def _keyword_macro(match: re.Match[str], view: LineView) -> Reading | None:
    keyword = match.group("keyword")
    return Reading(
        subject="msvc",
        cause=f"a header or flag included before the Visual C++ standard library defines the "
              f"C++ keyword {keyword} as a macro (`#define {keyword} ...` or -D{keyword}), "
              "which the library's xkeycheck.h refuses",
        fix=f"find that define (cl's warning C4005 names it; search the sources and the "
            f"compile flags for '{keyword}') and remove it or guard it for C only; defining "
            "_ALLOW_KEYWORD_MACROS only hides the check")


# Headers of the MSVC toolset, the Universal CRT and the Windows SDK, and the C and C++ standard
# headers they provide: a Windows compile that lacks them has no Visual C++ environment.
_WINDOWS_HEADERS = frozenset((
    "corecrt.h", "vcruntime.h", "crtdefs.h", "sal.h", "windows.h", "winsock2.h", "ws2tcpip.h",
    "stdio.h", "stdlib.h", "string.h", "math.h", "assert.h", "errno.h", "time.h", "wchar.h",
    "ctype.h", "malloc.h", "io.h", "process.h", "vector", "string", "memory", "algorithm",
    "iostream", "cstdint", "cstdlib", "cstddef", "cstring", "cmath", "type_traits", "utility",
    "functional", "map", "unordered_map", "array", "tuple", "limits", "atomic", "mutex",
    "thread", "chrono", "optional", "variant", "new", "exception", "stdexcept", "initializer_list"))

# The UCRT's C headers that host_compiler.py's windows-crt-header-missing reads in clang's form.
_UCRT_C_HEADERS = frozenset(f"{name}.h" for name in (
    "stdlib", "stdio", "string", "math", "malloc", "errno", "assert", "wchar", "time",
    "locale", "signal"))


def _windows_header_missing(match: re.Match[str], view: LineView) -> Reading | None:
    header = match.group("h") or match.group("h2")
    if header.lower() not in _WINDOWS_HEADERS:
        return None  # another header: a project's or a package's, not the toolset's
    if match.group("h2") and header.lower() in _UCRT_C_HEADERS:
        return None  # clang's form of these: host_compiler.py's windows-crt-header-missing
    compiler = "cl" if match.group("h") else "clang (MSVC target)"
    return Reading(
        subject="msvc",
        cause=f"{compiler} did not find {header}, a header of the Visual C++ toolset and the "
              "Windows SDK it compiles against: the compile ran without the Visual C++ "
              "environment (INCLUDE does not list their folders), or those components are not "
              "installed",
        fix="run the build from the x64 Native Tools Command Prompt (or after `vcvarsall.bat "
            "x64`), with the Visual Studio C++ build tools and a Windows SDK installed "
            "('Desktop development with C++' in the Visual Studio Installer)")


def _internal_error(match: re.Match[str], view: LineView) -> Reading | None:
    where = match.group("file") or ""
    source = where.replace("\\", "/").rsplit("/", 1)[-1] or "a source"
    part = (match.group("part") or "").lower()
    stage = (" in its optimizer" if re.search(r"utc|[\\/]c2[\\/]", part) else
             " in its parser" if re.search(r"cxxfe|c1xx|msc1\.cpp", part) else "")
    return Reading(
        subject="msvc", klass="compiler-crash",
        cause=f"cl failed with an internal compiler error (C1001){stage} while compiling "
              f"{source}: a bug of this MSVC release on that code, not an error in the source",
        fix="update Visual Studio (a newer MSVC toolset), or compile that file with fewer "
            "optimizations (/Od, or `#pragma optimize(\"\", off)` around the function); an "
            "older toolset (`vcvarsall.bat x64 -vcvars_ver=14.NN`) is another way round")


# What LINK runs itself: the resource compiler and manifest tool of the Windows SDK, and
# cvtres of the MSVC toolset; they are found on PATH.
_LINK_HELPERS = {"rc.exe": "the Windows SDK", "mt.exe": "the Windows SDK",
                 "cvtres.exe": "the MSVC toolset"}


def _link_cannot_run(match: re.Match[str], view: LineView) -> Reading | None:
    program = match.group("program")
    owner = _LINK_HELPERS.get(program.replace("\\", "/").rsplit("/", 1)[-1].lower())
    if owner is None:
        return None
    return Reading(
        subject="msvc",
        cause=f"MSVC's linker could not run {program}, a tool of {owner} (LNK1158): its "
              "folder is not on PATH, because the link ran outside the Visual C++ "
              "environment or that component is not installed",
        fix="run the build from the x64 Native Tools Command Prompt (or after `vcvarsall.bat "
            "x64`), with a Windows SDK installed (the Visual Studio Installer), then configure "
            "again from a clean build folder")


def _no_visual_studio(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="msvc",
        cause="clang found no Visual Studio installation (its -Wmsvc-not-found warning) and "
              "so could not run MSVC's linker link.exe for the link: the Visual C++ tools are "
              "not installed, or the build ran outside their developer environment",
        fix="install the Visual Studio C++ build tools and a Windows SDK, then build from the "
            "x64 Native Tools Command Prompt (or after `vcvarsall.bat x64`); or link with "
            "lld-link (-fuse-ld=lld) given the MSVC and SDK library folders")


# POSIX headers that Windows' C runtime and SDK do not have.
_POSIX_HEADERS = frozenset((
    "unistd.h", "dlfcn.h", "pthread.h", "dirent.h", "strings.h", "sys/mman.h", "sys/time.h",
    "sys/wait.h", "sys/socket.h", "sys/ioctl.h", "sys/resource.h", "sys/utsname.h",
    "netinet/in.h", "arpa/inet.h", "netdb.h", "poll.h", "termios.h", "execinfo.h", "cxxabi.h",
    "libgen.h", "fnmatch.h", "glob.h", "sys/select.h", "sys/un.h", "spawn.h"))


def _posix_header(match: re.Match[str], view: LineView) -> Reading | None:
    header = match.group("h") or match.group("h2")
    if header.lower() not in _POSIX_HEADERS:
        return None
    return Reading(
        subject="msvc",
        cause=f"the source includes {header}, a POSIX header that Windows' C runtime and SDK "
              "do not have: this code (or this part of it) was written for Linux and is "
              "compiled for Windows (MSVC target)",
        fix="guard the include and its uses for non-Windows builds (`#ifndef _WIN32`) with "
            "the Windows equivalent beside it, or use the project's Windows build of that part "
            "(or a release that supports Windows); a flag cannot provide the header")


def _gcc_builtin(match: re.Match[str], view: LineView) -> Reading | None:
    name = match.group("name")
    return Reading(
        subject="msvc",
        cause=f"cl does not know {name}, a GCC/clang builtin: the code was written for GCC or "
              "clang and is compiled with MSVC's cl",
        fix="compile it with clang-cl (CMAKE_C_COMPILER/CMAKE_CXX_COMPILER=clang-cl, which "
            "has the builtin), or guard the call for MSVC (`#ifdef _MSC_VER`) with MSVC's "
            "intrinsic (<intrin.h>: _BitScanReverse for __builtin_clz, __popcnt for "
            "__builtin_popcount)")


def _math_defines(match: re.Match[str], view: LineView) -> Reading | None:
    name = match.group("name") or match.group("name2")
    if match.group("name2") and not _MSVC_LOCATION.search(view.text):
        return None  # clang's words on another target: glibc defines M_PI, no claim
    return Reading(
        subject="msvc",
        cause=f"{name} is not defined: MSVC's math.h and <cmath> define the math constants "
              "(M_PI, M_E …) only when _USE_MATH_DEFINES is defined before their first include",
        fix="define _USE_MATH_DEFINES for the whole target (CMake: `target_compile_definitions"
            "(<target> PRIVATE _USE_MATH_DEFINES)`, setuptools: define_macros, or "
            "/D_USE_MATH_DEFINES), or use a constant of the project's own (std::numbers::pi in "
            "C++20)")


_MSVC_LOCATION = re.compile(r"^\S.*\(\d+,\d+\): error: ")
_HEADER_MISSING = rx(r"fatal error C1083: Cannot open include file: '(?P<h>[\w./]+)'"
                     r"|^\S.*\(\d+,\d+\): fatal error: '(?P<h2>[\w./]+)' file not found$")
_MSVC_TOOLS = r"cl|link|nmake|rc|mt|lib|dumpbin"

RULES: tuple[Rule, ...] = (
    Rule(id="msvc-stl-compiler-too-old", klass="host-compiler",
         triggers=("Unexpected compiler version",),
         pattern=rx(r"error (?P<code>STL100\d): Unexpected compiler version, expected "
                     r"(?P<want>.+?) or newer"),
         read=_stl_compiler, source="microsoft/STL@2a62bf7b4079f0a3e33ec80d7daf9ea968805b12:"
         "stl/inc/yvals_core.h (_EMIT_STL_ERROR(STL1000, \"Unexpected compiler version, "
         "expected Clang 22 or newer.\"), STL1001 for MSVC, STL1002 for CUDA, a static_assert); "
         "reproduced with clang-cl-22 and that header in make/devwin.sh"),
    Rule(id="msvc-keyword-macro", klass="host-compiler",
         triggers=("forbids macroizing the keyword",),
         pattern=rx(r"The C\+\+ Standard Library forbids macroizing the keyword "
                     r"\"(?P<keyword>\w+)\""),
         read=_keyword_macro, source="microsoft/STL@2a62bf7b4079f0a3e33ec80d7daf9ea968805b12:"
         "stl/inc/xkeycheck.h (#error for each keyword defined as a macro); reproduced with "
         "clang-cl-22 and that header in make/devwin.sh"),
    Rule(id="msvc-toolset-header-missing", klass="host-compiler",
         triggers=("C1083", "file not found"),
         pattern=_HEADER_MISSING,
         read=_windows_header_missing, source="MicrosoftDocs/cpp-docs@a2e592a8fc391b6aff8d1323f"
         "5b58696abdc5d57:docs/error-messages/compiler-errors-1/fatal-error-c1083.md; clang's "
         "MSVC-style location '<file>(<line>,<col>)' on Windows targets, reproduced with "
         "clang-cl-22 without the Visual C++ headers in make/devwin.sh"),
    Rule(id="msvc-internal-compiler-error", klass="compiler-crash",
         triggers=("C1001",),
         pattern=rx(r"^(?:\d+>)?(?:(?P<file>.+?)(?:\(\d+(?:,\d+)?\))?\s?: )?fatal error C1001: "
                     r"(?i:internal compiler error)(?:.*compiler file '(?P<part>[^']+)')?"),
         read=_internal_error, source="MicrosoftDocs/cpp-docs@a2e592a8fc391b6aff8d1323f5b58696"
         "abdc5d57:docs/error-messages/compiler-errors-1/fatal-error-c1001.md (utc/C2 an "
         "optimizer error, cxxfe/c1xx/msc1.cpp a parser error)"),
    Rule(id="msvc-link-cannot-run", klass="host-compiler",
         triggers=("LNK1158",),
         pattern=rx(r"fatal error LNK1158: cannot run '(?P<program>[^']+)'"),
         read=_link_cannot_run, source="MicrosoftDocs/cpp-docs@a2e592a8fc391b6aff8d1323f5b58696"
         "abdc5d57:docs/error-messages/tool-errors/linker-tools-error-lnk1158.md (the program "
         "is neither beside LINK nor on PATH)"),
    Rule(id="windows-posix-header", klass="host-compiler",
         triggers=("C1083", "file not found"),
         pattern=_HEADER_MISSING,
         read=_posix_header, source="MicrosoftDocs/cpp-docs@a2e592a8fc391b6aff8d1323f5b58696abdc"
         "5d57:docs/error-messages/compiler-errors-1/fatal-error-c1083.md; clang-cl-22 on "
         "<unistd.h> reproduced in make/devwin.sh"),
    Rule(id="msvc-gcc-builtin", klass="host-compiler",
         triggers=("C3861", "C2065"),
         pattern=rx(r"error C(?:3861|2065): '(?P<name>__builtin_\w+)': (?:identifier not found|"
                     r"undeclared identifier)"),
         read=_gcc_builtin, source="MicrosoftDocs/cpp-docs@a2e592a8fc391b6aff8d1323f5b58696abdc"
         "5d57:docs/error-messages/compiler-errors-2/compiler-error-c3861.md (\"'<identifier>': "
         "identifier not found\")"),
    Rule(id="msvc-math-defines", klass="host-compiler",
         triggers=("M_",),
         pattern=rx(r"error C2065: '(?P<name>M_(?:PI|PI_2|PI_4|1_PI|2_PI|2_SQRTPI|E|LOG2E|LOG10E|"
                     r"LN2|LN10|SQRT2|SQRT1_2))': undeclared identifier"
                     r"|error: use of undeclared identifier '(?P<name2>M_(?:PI|PI_2|PI_4|1_PI|"
                     r"2_PI|2_SQRTPI|E|LOG2E|LOG10E|LN2|LN10|SQRT2|SQRT1_2))'"),
         read=_math_defines, source="MicrosoftDocs/cpp-docs@a2e592a8fc391b6aff8d1323f5b58696abdc"
         "5d57:docs/c-runtime-library/math-constants.md (_USE_MATH_DEFINES before math.h or "
         "<cmath>)"),
    Rule(id="clang-no-visual-studio", klass="host-compiler",
         triggers=("unable to execute command",),
         pattern=rx(r"^clang(?:-cl|\+\+)?(?:-\d+)?(?:\.exe)?: error: unable to execute command: "),
         requires=rx(r"warning: unable to find a Visual Studio installation"),
         read=_no_visual_studio, source="clang's -Wmsvc-not-found warning (\"unable to find a "
         "Visual Studio installation; try running Clang from a developer command prompt\") "
         "before its failure to run link.exe, reproduced with clang-cl-22 -fuse-ld=link in "
         "make/devwin.sh (LLVM's source not read here)"),
    Rule(id="msvc-bigobj", klass="host-compiler",
         triggers=("C1128",),
         pattern=rx(r"^(?:\d+>)?(?P<file>.+?)(?:\(\d+\))?\s?: fatal error C1128: number of "
                     r"sections exceeded object file format limit"),
         read=_bigobj, source="MicrosoftDocs/cpp-docs@a2e592a8fc391b6aff8d1323f5b58696abdc5d57:"
         "docs/error-messages/compiler-errors-1/fatal-error-c1128.md"),
    Rule(id="msvc-pdb-fs", klass="host-compiler",
         triggers=("C1041",),
         pattern=rx(r"fatal error C1041: cannot open program database '(?P<pdb>[^']+)'"),
         read=_pdb_shared, source="MicrosoftDocs/cpp-docs@a2e592a8fc391b6aff8d1323f5b58696abdc5"
         "d57:docs/error-messages/compiler-errors-1/compiler-fatal-errors-c999-through-c1999.md "
         "(C1041 \"cannot open program database '<file>'; if multiple CL.EXE write to the "
         "same .PDB file, please use /FS\")"),
    Rule(id="setuptools-no-visual-cpp", klass="host-compiler",
         triggers=("Microsoft Visual C++ 14.0 or greater is required",),
         pattern=rx(r"Microsoft Visual C\+\+ 14\.0 or greater is required\."),
         read=_no_visual_cpp, source="pypa/setuptools@7d531288b7c8708d4cc186213da93eaf5d11833d:"
         "setuptools/_distutils/compilers/C/msvc.py (_get_vc_env raises PlatformError when "
         "_find_vcvarsall finds no vcvarsall.bat)"),
    Rule(id="msvc-tool-not-found", klass="host-compiler",
         triggers=("is not recognized as",),
         pattern=rx(r"^'(?P<tool>" + _MSVC_TOOLS + r")(?:\.exe)?' is not recognized as an "
                     r"internal or external command"
                     r"|^(?:" + _MSVC_TOOLS + r")(?:\.exe)? : The term '(?P<tool2>"
                     + _MSVC_TOOLS + r")(?:\.exe)?' is not recognized as (?:the|a) name of a "
                     r"cmdlet"),
         read=_tool_not_found, source="cmd.exe's \"'<program>' is not recognized as an "
         "internal or external command\" and PowerShell's \"The term '<program>' is not "
         "recognized as the name of a cmdlet\" (the shells' wording, sources not read here: "
         "unverified beyond ROCm/TheRock#410's log of cmd.exe's)"),
)
