"""The linker at build time: a library it cannot find, symbols it finds no definition for (GNU
ld, lld, MSVC; named by the qualified name) and the duplicates hipify leaves behind.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.knowledge.components import Component
from rocmforge.triage import owners
from rocmforge.triage.demangle import demangle
from rocmforge.triage.parsers.aotriton import aotriton_library
from rocmforge.triage.parsers.compiler_flags import cmake_check_probe
from rocmforge.triage.parsers.libstdcxx import newer_glibc, newer_libstdcxx
from rocmforge.triage.parsers.link_coff import torch_import
from rocmforge.triage.rule import NOT_SHELL_TRACE, Alias, Groups, LineView, Reading, Rule, rx
from rocmforge.triage.symbols import symbol_name


def _owner_note(row: Component | None) -> str:
    return f" (it belongs to ROCm's {row.name})" if row is not None else ""


def _cannot_find_lib(match: re.Match[str], view: LineView,
                     linker: str = "the linker") -> Reading | None:
    # gold names a -l:<file> by the file alone ("cannot find libamdhip64.so.6")
    name = (match.group("lib") or ":" + (match.groupdict().get("file") or "")).rstrip(":")
    if name == "stdc++":
        return None  # the C++ runtime of the selected GCC (compiler_headers: libstdcxx-not-linked)
    if "::" in name or cmake_check_probe(view.previous):
        # A CMake imported target passed as -l (its package not found), or CMake's probe
        return None  # check_library_exists(pthreads ...) failing on purpose (make/rv10.sh)
    if "aotriton" in name:
        return aotriton_library(name)
    library = name[1:] if name.startswith(":") else "lib" + name
    return _library_not_found(library, owners.library_owner(name), linker)


def _library_not_found(library: str, row: Component | None, linker: str) -> Reading:
    """GNU ld's "cannot find -l<name>" and lld's "unable to find library -l<name>"."""
    fix = (f"install {row.name}'s development package ({row.install_hint()}) in the ROCm "
           "install the build uses, and put that install's library folder on the link path "
           "(-L/opt/rocm/lib, lib64 on Fedora/openSUSE): ROCm 5 and later keep every library "
           "there, not in per-component folders such as /opt/rocm/<component>/lib" if row else
           f"install the development package that provides {library}.so (or .a), or add the "
           "folder that holds it to the link path (-L, LIBRARY_PATH, or CMAKE_PREFIX_PATH for a "
           "CMake package); a ROCm install may keep it in lib64 rather than lib "
           f"(`ls /opt/rocm*/lib*/{library}.*`)")
    return Reading(subject=library, cause=f"{linker} could not find {library}"
                   f"{_owner_note(row)}: it is not installed, or not in any folder on the link "
                   "path", fix=fix)


_LLD_DUPLICATE = re.compile(r"duplicate symbol: (.+?)\s*$")
_CK_NAMESPACE = re.compile(r"(?:^|[\s*&<])ck(?:_tile)?::")
_FROM_SHARED = re.compile(r"^(?:\S*ld\S*: )?\S+\.so(?:\.[\w.-]+)?: undefined reference to ")


# Entry points of a ROCm library's C API that every release exports (HIP's runtime calls, all in
# ROCm/clr@33cbc93e25ad955ae54b89983384857af4f4764b:hipamd/src/amdhip.def): their absence means
# the library is not linked, where a removed or renamed function is version skew.
_ALWAYS_EXPORTED: dict[str, frozenset[str]] = {
    "hip": frozenset({"hipMalloc", "hipFree", "hipMemcpy", "hipMemcpyAsync", "hipMemset",
                      "hipSetDevice", "hipGetDevice", "hipGetDeviceCount",
                      "hipGetDeviceProperties", "hipDeviceSynchronize", "hipGetLastError",
                      "hipGetErrorString", "hipLaunchKernel", "hipStreamCreate",
                      "hipStreamSynchronize", "hipEventCreate", "hipEventRecord"}),
}


# POSIX threads functions: glibc 2.33 and older define them in libpthread, 2.34 on in libc
# (Debian 12's /usr/share/doc/libc6/NEWS.gz, "Version 2.34": "all functionality formerly
# implemented in the libraries libpthread, libdl, libutil, libanl has been integrated into
# libc. New applications do not need to link with -lpthread").
_PTHREAD = re.compile(r"^pthread_\w+$")


def _pthread_missing(symbol: str) -> Reading:
    return Reading(
        subject=symbol,
        cause=f"the linker found no definition of {symbol}, a POSIX threads function that "
              "glibc 2.33 and older keep in libpthread (libc only from glibc 2.34): nothing "
              "put -pthread or -lpthread on this link line (CMake's Threads::Threads adds "
              "nothing where FindThreads' test program linked without a library, as it does "
              "when a runtime on that link, such as a sanitizer's, brings pthread_create; a "
              "static library such as libgtest.a does not carry the flag to the final link)",
        fix="link the target with the threads library: find_package(Threads) and "
            "target_link_libraries(<target> PRIVATE Threads::Threads) with "
            "THREADS_PREFER_PTHREAD_FLAG ON, or -pthread (-lpthread) on its link flags; "
            "on glibc 2.34 or newer libc has these functions")


def _undefined_reference(match: Groups, view: LineView) -> Reading | None:
    newer = newer_glibc(match.group("sym"), view) or newer_libstdcxx(match.group("sym"), view)
    if newer is not None:
        return newer
    if _FROM_SHARED.match(view.text) or match.group("sym") == "main":
        # A shared library needs a symbol its own dependency does not provide here (which copy
        # ld found is not in the lines), or crt1's _start found no main (`hipcc -v` with no
        # source, justxi/rocm#82, as well as a library linked as a program): nothing claimed.
        return None
    if cmake_check_probe(view.previous):  # check_function_exists(hipMalloc) failing on
        return None  # purpose: CMake records "no" and goes on (make/rv11.sh)
    symbol = demangle(match.group("sym"))
    if _PTHREAD.match(symbol):
        return _pthread_missing(symbol)
    if _CK_NAMESPACE.search(symbol.split("(", 1)[0]):
        return None  # Composable Kernel's own (parsers/composable_kernel.py: ck-undefined-symbol)
    if "std::__cxx11::" in symbol or "B5cxx11" in match.group("sym"):
        return Reading(
            subject=symbol,
            cause=f"undefined reference to {symbol}: objects built with different C++ ABIs "
                  "(_GLIBCXX_USE_CXX11_ABI 0 and 1) or different compilers were linked together",
            fix="build everything with one compiler and one ABI: `invoke clean`, leave "
                "_GLIBCXX_USE_CXX11_ABI unset (PyTorch >= 2.7 uses the new ABI) and rebuild")
    row = owners.symbol_owner(symbol)
    if row and row.libraries and symbol in _ALWAYS_EXPORTED.get(row.name, ()):
        # An entry point every release of the library exports: the library is not on the link
        # line at all (a removed or renamed function is version skew: the reading below).
        library = row.libraries[0]
        flag = "-l" + library.removeprefix("lib")
        return Reading(
            subject=library,
            cause=f"the linker found no definition of {symbol}, which ROCm's {row.name} "
                  f"exports from {library}.so: {library} is missing from the link line (no "
                  f"{flag}, or a -L with an empty path before it swallowed it), or the one "
                  "found is an older release without the symbol",
            fix=f"link {library} from the ROCm install the headers come from: {flag} with "
                f"-L<rocm>/lib (lib64 on Fedora/openSUSE), or the CMake target the package "
                f"exports; install {row.name}'s development package ({row.install_hint()}) if "
                f"no {library}.so is there")
    where = (f"; it is exported by ROCm's {row.name} ({row.install_hint()}), so that library "
             "is missing from the link or is an older release without it" if row else
             ": the library that defines it is missing from the link line, or it was built "
             "from other sources or another release than the headers used")
    return Reading(
        subject=symbol,
        cause=f"the linker found no definition of {symbol}{where}",
        fix=("use one ROCm install for headers and libraries (`invoke build --rocm-path`), "
             f"with {row.name} installed at the version the headers expect" if row else
             "rebuild from a clean build directory (`invoke clean`) so every object comes from "
             "one tree and one toolchain; if the symbol belongs to a system library, install "
             "the release the headers came from"))


# PyTorch names its Composable Kernel backend functions with a `_ck` suffix or part
# (group_gemm_ck, gemm_internal_ck): CK sources are built only where CK is enabled.
_CK_FUNCTION = re.compile(r"(?:^|_)ck(?:_|$)")


def _link_symbol(match: Groups, view: LineView) -> Reading | None:
    raw = match.group("sym").strip()
    linker = match.groupdict().get("linker") or "MSVC's link.exe"
    name = symbol_name(raw)
    if not name or name.startswith("("):
        return None
    name = name.removeprefix("__imp_")  # a DLL import's thunk names the function it imports
    row = owners.symbol_owner(name)
    if row is None and _CK_FUNCTION.search(name.rsplit("::", 1)[-1]):
        return Reading(
            subject=name,
            cause=f"the linker ({linker}) found no definition of {name}, a "
                  "Composable Kernel (CK) backend function: its CK sources are not built in "
                  "this configuration (on Windows, or with the CK GEMM backend off) while "
                  "other code still calls it",
            fix="build with the CK backend enabled for these targets (USE_ROCM_CK_GEMM, "
                "USE_ROCM_CK_SDPA where the platform has CK), or a revision that guards the "
                "call on it (the upstream fix); then rebuild from a clean build directory")
    owner = (f"; it is exported by ROCm's {row.name}, so that library is missing from the link "
             "or is a release without it" if row else
             ": the object or library that defines it is not on the link line (its sources "
             "were left out of this target or this platform's build), or it comes from another "
             "release than the headers")
    return Reading(
        subject=name,
        cause=f"the linker ({linker}) found no definition of {name}{owner}",
        fix=(f"link {row.name} from the same ROCm install as the headers ({row.install_hint()})"
             if row else
             "find which source defines it (`git grep` the name in the tree): if that source "
             "is not built for this platform or configuration, the tree needs the upstream fix "
             "that builds it or guards the call (build a newer commit), else rebuild from a "
             "clean build directory (`invoke clean`) so every object comes from one tree"))


def _ld_localized(match: re.Match[str], view: LineView) -> Reading | None:
    library = "lib" + match.group("lib")
    row = owners.library_owner(library)
    return Reading(
        subject=library,
        cause=f"the linker could not find {library}"
              f"{f' (ROCm component {row.name})' if row else ''} (its message is in the "
              "system's language): it is not installed or not in any folder on the link path",
        fix=(f"install {row.name}'s development package ({row.install_hint()}) in the ROCm "
             "install the build uses" if row else
             f"install the package that provides {library}.so, or add its folder to the link "
             "path (LIBRARY_PATH); `LANG=C` makes the linker print English messages"))


_OPEN_QUOTE = "'\"\u201c\u2018"
_CLOSE_QUOTE = "'\"\u201d\u2019"
_UNCLOSED_LNK1181 = re.compile(r"LNK1181\b[^" + _OPEN_QUOTE + r"]*[" + _OPEN_QUOTE + r"][^"
                               + _CLOSE_QUOTE + r"]*$")


def _input_file_reading(path: str) -> Reading:
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    stem = name[:-4] if name.lower().endswith(".lib") else name
    return Reading(
        subject=stem,
        cause=f"MSVC's linker cannot open the input file {name} (LNK1181): it is not at the "
              "path the build passes, a library or SDK path recorded on another machine or for "
              "another Visual Studio (a prebuilt CMake package), or a library the build did not "
              "produce",
        fix=f"make {name} exist at that path (install the SDK or component that provides "
            f"{stem}) or correct the path: a path baked into a prebuilt package's CMake files "
            "needs that package rebuilt (or its files edited) on this machine")


def _cannot_open_input(match: re.Match[str], view: LineView) -> Reading | None:
    return _input_file_reading(match.group("path"))


def _cannot_open_input_wrapped(match: re.Match[str], view: LineView) -> Reading | None:
    if not view.previous or not _UNCLOSED_LNK1181.search(view.previous[-1]):
        return None
    return _input_file_reading(match.group("name"))


def _missing_library_file(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path") or match.group("path2") or match.group("path3")
    name = path.rsplit("/", 1)[-1]
    stem = re.sub(r"\.(?:so(?:\.[\d.]+)?|a)$", "", name)
    row = owners.library_owner(name)
    return Reading(
        subject=stem,
        cause=f"the link names the library file {path}, which does not exist: the path was "
              "recorded for another install (a CMake package config or the build folder's "
              "cache pointing at a ROCm release or prefix that is not here), or "
              f"{row.name if row else stem} is not installed",
        fix=f"configure from a clean build folder against the install that is here (`invoke "
            "build --rocm-path /opt/rocm-X.Y`, or CMAKE_PREFIX_PATH to its prefix), or install "
            f"{owners.install_hint(row, stem)} so that path exists")


def _duplicate_symbol(match: re.Match[str], view: LineView) -> Reading | None:
    symbol = symbol_name(match.group("sym") or match.group("sym2"))
    return Reading(
        subject=symbol,
        cause=f"two inputs of the link both define {symbol}: the same library linked twice in "
              "two forms (its static archive and its shared library, or two releases of it), "
              "or a definition in a header included by several sources",
        fix="link one copy of the library that defines it (check the link line for the same "
            "library from two prefixes or as both .a and .so), or mark a definition in a header "
            "inline; the linker's 'first defined here' / 'defined at' lines name both inputs")


# HIP's bfloat16 helpers (__float2bfloat16, __bfloat1622float2, …): ROCm's amd_hip_bf16.h
# defines them static inline, so no object exports them; two objects that both define one
# were compiled with another, older copy of HIP's headers.
_HIP_BF16_HELPER = re.compile(r"^__\w+\(.*bfloat16|^__\w*bfloat16\w*\(")


def _hip_header_duplicate(match: re.Match[str], view: LineView) -> Reading | None:
    raw = (match.group("sym") or match.group("sym2")).strip()
    if not _HIP_BF16_HELPER.match(raw if "(" in raw else raw + "("):
        return None
    symbol = raw if "(" in raw else symbol_name(raw)
    return Reading(
        subject="hip_bf16.h", klass="rocm-install",
        cause=f"duplicate symbol {symbol}: a bfloat16 helper of HIP's headers (hip_bf16.h) is "
              "defined as an exported function in several objects, and ROCm's own header "
              "makes these static inline: the compile picked up an older copy of HIP's "
              "headers ahead of the ROCm install's (a distribution's /usr/include/hip from "
              "its libamdhip64-dev, or another ROCm on the include path)",
        fix="remove the other HIP headers (the distribution's libamdhip64-dev and the ROCm "
            "-dev packages that came with it) or take them off the include path, so only the "
            "ROCm install the build uses supplies hip/*.h (`find / -name hip_bf16.h`); then "
            "rebuild from a clean build folder")


RULES: tuple[Rule, ...] = (
    Rule(id="link-missing-library-file", klass="link",
         triggers=("cannot find /", "cannot open /", "no such file or directory: '/"),
         pattern=rx(r"^\S*ld(?:\.\w+)?(?:-\d+)?: (?:cannot find (?P<path>/\S+?)"
                     r"|(?:error: )?cannot open (?P<path2>/\S+?)): (?:No such file|"
                     r"[^:]*$)"
                     r"|^\S*clang\S*: error: no such file or directory: '(?P<path3>/\S+?)'$"),
         read=lambda m, v: _missing_library_file(m, v) if re.search(
             r"\.(?:so(?:\.[\d.]+)?|a)$", m.group("path") or m.group("path2") or
             m.group("path3") or "") else None,
         source="GNU ld ('cannot find <file>: No such file or directory'), gold and lld "
         "('cannot open <file>: …') and clang's driver ('no such file or directory: "
         "'<file>''), each for an input named by its full path: binutils 2.40's ld and gold "
         "and clang 22 here, reproduced (make/link_inputs.sh)"),
    Rule(id="cannot-find-lib", klass="link",
         triggers=("cannot find -l", "error: cannot find lib"),
         pattern=rx(r"cannot find -l(?P<lib>[\w.:+-]+)|\bld\.gold\S*: error: cannot find "
                    r"(?P<file>lib[\w+-]+(?:\.[\w+-]+)*\.(?:so(?:\.\d+)*|a))$"),
         unless=rx(r"cannot find -l\S*::"),
         read=_cannot_find_lib, source="GNU ld / lld 'cannot find -l'; pytorch/pytorch#181939 "
         "(imported targets passed as -l: a configure failure, not a missing library); gold's "
         "'cannot find <file>' for -l:<file> (ld.gold 2.40 here, make/devq8.sh)"),
    Rule(id="undefined-reference", klass="link",
         triggers=("undefined reference to", "undefined symbol: "),
         pattern=rx(NOT_SHELL_TRACE + r"(?:(?<!warning: )undefined reference to [`'](?P<sym>"
                     r"[^'`]+)'|(?:ld\.lld|lld|ld): error: undefined (?:hidden )?symbol: "
                     r"(?P<sym2>.+)$)"),
         read=lambda m, v: _undefined_reference(Alias(m, sym="sym2"), v),
         source="GNU ld / lld undefined symbol errors; pthread_*: glibc 2.34 NEWS (Debian "
         "12's libc6 NEWS.gz) and Kitware/CMake@03676b051d5a1302c8b17bb6b3325ee38acab914:"
         "Modules/FindThreads.cmake (_threads_check_libc: CMAKE_HAVE_LIBC_PTHREAD leaves "
         "CMAKE_THREAD_LIBS_INIT empty)"),
    Rule(id="linker-undefined-symbol", klass="link",
         triggers=("undefined symbol: ", "unresolved external symbol"),
         pattern=rx(r"(?P<linker>lld-link|ld\.lld|ld64\.lld|link\.exe|LINK)\s*: error"
                     r"(?: LNK\d+)?: (?:undefined symbol|unresolved external symbol):?\s*"
                     r"(?P<sym>.+?)(?:\s+referenced in function.*)?$"
                     r"|^(?:\d+>)?(?:\S+\.(?:obj|o|lib)\s*: )?error LNK20(?:19|01): unresolved "
                     r"external symbol (?P<sym2>.+?)(?:\s+referenced in function.*?)?"
                     r"(?:\s+\[[^\]]*\.vcxproj\])?$"),
         read=lambda m, v: torch_import(m) or _link_symbol(Alias(m, sym="sym2"), v),
         source="LLVM lld COFF/ELF 'undefined symbol:' and MSVC LNK2019/LNK2001, MSVC's also "
         "after the object file ('<obj> : error LNK2001: unresolved external symbol <sym>', "
         "MSBuild's '1>' and '[<project>.vcxproj]': pytorch/pytorch#11041, #87499, #44814; "
         "bare: ROCm/TheRock#2733); ROCm/TheRock#1256, #2064; torch's: link_coff.py"),
    Rule(id="ld-localized-cannot-find", klass="link",
         triggers=(" -l",),
         pattern=rx(r"\bld(?:\.\w+)?: (?!.*\bundefined\b)[^:]*\s-l(?P<lib>[\w.+-]+)\s*$"),
         requires=rx(r"ld returned \d+ exit status"),
         read=_ld_localized, source="GNU ld 'cannot find -l' in a translated locale; "
         "pytorch/pytorch#100123"),
    Rule(id="lld-no-library", klass="link",
         triggers=("unable to find library -l",),
         pattern=rx(r"\bld\.lld\S*: error: unable to find library -l(?P<lib>[\w.:+-]+)"),
         read=lambda m, v: _cannot_find_lib(m, v, "the linker (lld)"),
         source="llvm/llvm-project lld/ELF/Driver.cpp (\"unable to find library -l\"); "
         "-l:<file> named by the file, as GNU ld's is: ld.lld-22 here (make/devq8.sh)"),
    Rule(id="msvc-cannot-open-input", klass="link",
         triggers=("LNK1181",),
         pattern=rx(r"LNK1181\b[^" + _OPEN_QUOTE + r"]*[" + _OPEN_QUOTE + r"](?P<path>[^"
                     + _CLOSE_QUOTE + r"]+)[" + _CLOSE_QUOTE + r"]"),
         read=_cannot_open_input, source="MSVC's LNK1181 (\"cannot open input file '<file>'\", "
         "any UI language: the code and the quoted path stay); ROCm/HIPIFY#1824"),
    Rule(id="msvc-cannot-open-input-wrapped", klass="link",
         triggers=(".lib",),
         pattern=rx(r"^[^\s" + _CLOSE_QUOTE + r"]*?(?P<name>[\w.+-]+\.lib)[" + _CLOSE_QUOTE
                     + r"]"),
         read=_cannot_open_input_wrapped, source="MSVC's LNK1181 with its path wrapped by the "
         "console onto the next line; ROCm/HIPIFY#1824"),
    Rule(id="hip-header-duplicate-symbol", klass="rocm-install",
         triggers=("multiple definition of", "duplicate symbol: "),
         pattern=rx(r"multiple definition of [`'\u2018](?P<sym>[^'\u2019]+)['\u2019]"
                     r"|(?:ld\.lld|lld-link|ld64\.lld)\S*: error: duplicate symbol: "
                     r"(?P<sym2>.+?)\s*$"),
         requires=rx(r"__hip_bfloat16|\bhip_bf16\.h\b|\b__float2bfloat16\b.*\.(?:cu|hip)\b"),
         read=_hip_header_duplicate,
         source="ROCm/clr hipamd/include/hip/amd_detail/amd_hip_bf16.h (#define "
         "__BF16_HOST_DEVICE_STATIC__ __BF16_HOST_DEVICE__ static inline: no exported "
         "definition; stored copy, commit not established); ggml-org/llama.cpp#15196 and "
         "ROCm/ROCm#6112 (the same duplicates, both from Ubuntu's libamdhip64-dev 5.7 "
         "headers in /usr/include/hip ahead of ROCm's)"),
    # Last: a duplicate the hipified copy of a source causes is hip-duplicate's reading.
    Rule(id="link-duplicate-symbol", klass="link",
         triggers=("multiple definition of", "duplicate symbol: "),
         pattern=rx(r"multiple definition of [`'\u2018](?P<sym>[^'\u2019]+)['\u2019]"
                     r"|(?:ld\.lld|lld-link|ld64\.lld)\S*: error: duplicate symbol: "
                     r"(?P<sym2>.+?)\s*$"),
         read=_duplicate_symbol,
         source="GNU ld ('multiple definition of `…'; … first defined here') and lld "
         "('duplicate symbol: …', then '>>> defined at' lines): binutils 2.40's ld and ld.lld "
         "22 here, reproduced (make/link_inputs.sh)"),
)
