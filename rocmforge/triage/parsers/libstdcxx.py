"""The C and C++ runtimes' releases against what uses them: the loader's version checks
(GLIBCXX_, CXXABI_ and GLIBC_ symbol versions a binary needs and the runtime found first
lacks, and ld's undefined reference to a GLIBC_ version), a libstdc++ release whose
headers an older HIP's macros break or a run-time compile's clang cannot parse, and GCC's
own C++ headers missing.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

# C++ standard headers whose absence shows the compiler's C++ library headers are missing (not a
# project's include path): read in clang's words (compiler_headers.py) and in GCC's (here).
STD_HEADERS = (r"cmath|cstdlib|cstddef|cstdint|cstring|type_traits|limits|algorithm|string|"
               r"vector|memory|utility|new|cassert|climits|cstdio|iostream|array|tuple|"
               r"functional|initializer_list")


def _std_header_gcc(match: re.Match[str], view: LineView) -> Reading | None:
    header = match.group("header")
    return Reading(
        subject="libstdc++",
        cause=f"g++ found no C++ standard header '{header}': GCC's own C++ library "
              "headers (libstdc++-N-dev, which g++-N depends on) are not installed for this "
              "GCC, or the flags hide them (-nostdinc++, --sysroot or -isystem of another "
              "tree)",
        fix="install the libstdc++-N-dev of the g++-N that compiles (`apt-get install "
            "libstdc++-12-dev` for g++-12; `g++ -v -x c++ -E /dev/null` lists the folders "
            "searched), or drop -nostdinc++/--sysroot from the flags that set them")


def _glibcxx(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject=match.group("ver"),
        cause=f"the loaded {match.group('lib')} is older than the one the binary was built "
              f"against (it needs {match.group('ver')}): the build's compiler had a newer "
              "libstdc++ than the one found at run time (often a conda env's or an old system "
              "copy)",
        fix="run with the libstdc++ of the compiler that built it (install the newer "
            "libstdc++6, or put its folder first on LD_LIBRARY_PATH; in conda: `conda install "
            "-c conda-forge libstdcxx-ng`), or rebuild with the system GCC (--gcc N)")


def _glibc_version(match: re.Match[str], view: LineView) -> Reading | None:
    if re.match(r"^\S*\bld\S*: ", view.text):
        return None  # the linker's check at build time, not the loader's
    version = match.group("ver")
    needer = (match.group("by") or "").rsplit("/", 1)[-1]
    who = needer or "a binary"
    return Reading(
        subject=needer or version,
        cause=f"{who} was built against glibc with {version}, newer than this system's "
              "C library: a wheel or binary built on a newer distribution than the one it "
              "runs on",
        fix=f"use a build of {who} made for this distribution's glibc (a manylinux wheel "
            "whose tag is not newer than `ldd --version` shows, or the copy a local install "
            "built here ships), or build it here from source, or run on a distribution with "
            "that glibc")


def _libstdcxx_unnamed(match: re.Match[str], view: LineView) -> Reading | None:
    version = match.group("ver")
    needer = match.group("by").rsplit("/", 1)[-1]
    return Reading(
        subject=version,
        cause=f"{needer} needs {version}, which the libstdc++ loaded at run time does not "
              "have: it was built with a newer GCC's libstdc++ than the one found first (often "
              "a conda env's or an old system copy)",
        fix="run with the libstdc++ of the compiler that built it (install the newer "
            "libstdc++6, or put its folder first on LD_LIBRARY_PATH; in conda: `conda install "
            "-c conda-forge libstdcxx-ng`), or rebuild with the system GCC (--gcc N)")


_LIBSTDCXX_RELEASE = re.compile(r"/c\+\+/(?P<gcc>\d+)(?:\.[\d.]+)?/")


def _hip_noinline_macro(match: re.Match[str], view: LineView) -> Reading | None:
    seen = " ".join(view.previous[-4:])
    header = _LIBSTDCXX_RELEASE.search(seen)
    if "undeclared identifier 'noinline'" not in seen or header is None:
        return None  # the macro broke something else than a libstdc++ header
    gcc = header.group("gcc")
    return Reading(
        subject="libstdc++",
        cause=f"libstdc++ {gcc}'s headers write __attribute__((__noinline__)), and the HIP "
              "headers of this ROCm define __noinline__ as a macro (__attribute__((noinline)) "
              "in hip/amd_detail/host_defines.h), so the attribute becomes "
              "__attribute__((__attribute__((noinline)))) and clang reads 'noinline' as an "
              "undeclared identifier: this HIP is older than GCC 12's libstdc++",
        fix="build with an older GCC's libstdc++ (GCC 11: `invoke build --gcc 11`, or "
            "--gcc-install-dir for clang), or use a ROCm whose HIP headers do not define "
            "__noinline__ as an attribute macro (a newer ROCm; distributions patched theirs)")


# A shared library in ld's "<lib>.so: undefined reference to" (the library that needs it).
_LINKED_SO = re.compile(r"^(?:\S*ld\S*: )?\S+\.so(?:\.[\w.-]+)?: undefined reference to ")
# A symbol at a glibc symbol version (GNU ld prints `name@GLIBC_2.35'): glibc's Versions
# files give each symbol the release that added (or changed) it.
_GLIBC_VERSIONED = re.compile(r"^(?P<name>\w+)@{1,2}GLIBC_(?P<ver>\d+\.\d+(?:\.\d+)?)$")


def newer_glibc(symbol: str, view: LineView) -> Reading | None:
    """GNU ld's undefined reference to `name@GLIBC_x.y' (link.py's undefined-reference)."""
    found = _GLIBC_VERSIONED.match(symbol)
    if found is None:
        return None
    name, version = found.group("name"), found.group("ver")
    binary = _LINKED_SO.match(view.text)
    who = (binary.group(0).split(": undefined", 1)[0].rsplit(": ", 1)[-1].rsplit("/", 1)[-1]
           if binary else "an object of the link")
    return Reading(
        subject=name,
        cause=f"{who} needs {name} at symbol version GLIBC_{version}: it was built against "
              f"glibc {version} or newer, and the C library this system links against is "
              "older, so it does not define that version of the symbol",
        fix=f"link on a system whose glibc is {version} or newer (`ldd --version` shows this "
            "one's), e.g. a newer distribution release or container image, or use (or build "
            "from source here) a build of that library made against this system's glibc")


# A C++ runtime symbol at a libstdc++ symbol version (`name@GLIBCXX_3.4.30', `@CXXABI_1.3.15').
_LIBSTDCXX_VERSIONED = re.compile(
    r"^(?P<name>.+?)@{1,2}(?P<ver>(?:GLIBCXX|CXXABI)_\d+(?:\.\d+)+)$")


def newer_libstdcxx(symbol: str, view: LineView) -> Reading | None:
    """GNU ld's undefined reference to `name@GLIBCXX_x.y.z' (link.py's undefined-reference)."""
    found = _LIBSTDCXX_VERSIONED.match(symbol)
    if found is None:
        return None
    name, version = found.group("name"), found.group("ver")
    binary = _LINKED_SO.match(view.text)
    who = (binary.group(0).split(": undefined", 1)[0].rsplit(": ", 1)[-1].rsplit("/", 1)[-1]
           if binary else "an object of the link")
    return Reading(
        subject="libstdc++",
        cause=f"{who} needs {name} at symbol version {version}: it was built with a newer "
              f"GCC (its libstdc++) than the libstdc++ this link uses, which does not define "
              "that version",
        fix="link with the GCC that built it, or a newer one (`invoke build --gcc N`; its "
            "libstdc++.so.6 must define " + version + ": `strings -a <libstdc++.so.6> | grep "
            + version.split("_")[0] + "_` lists them), or rebuild that library with this "
            "system's GCC")


_INCLUDED_FROM = re.compile(r"^In file included from (?P<file>\S+):\d+:$")
_HIP_RUNTIME_HEADER = re.compile(r"/hip/hip_runtime\.h$")
_OWN_ERROR = re.compile(r"^(?!\S*/c\+\+/)\S+:\d+:\d+: error: ")


def _hip_runtime_libstdcxx(match: re.Match[str], view: LineView) -> Reading | None:
    """A diagnostic inside the host's libstdc++ headers that HIP's own hip_runtime.h includes,
    with only libstdc++'s headers between them: no project code is involved."""
    if "file not found" in match.group("msg"):
        return None  # a missing header is compiler_headers.py's and this module's other rules'
    if any(_OWN_ERROR.search(line) for line in view.previous):
        return None  # an error in the compiled source itself: libstdc++'s note is about it
    chain = [_INCLUDED_FROM.match(line) for line in view.previous]
    hip = [i for i, found in enumerate(chain)
           if found and _HIP_RUNTIME_HEADER.search(found.group("file"))]
    if not hip or not all(found and "/c++/" in found.group("file")
                          for found in chain[hip[-1] + 1:]):
        return None
    gcc = match.group("ver")
    return Reading(
        subject="libstdc++",
        cause=f"the HIP compiler cannot compile the host GCC {gcc} libstdc++ headers that HIP's "
              "own hip/hip_runtime.h includes (the errors are inside libstdc++, reached from "
              "HIP's header with no project code between): this libstdc++ is newer than this "
              "ROCm's clang supports (also in a kernel compiled at run time through comgr)",
        fix="make the ROCm clang use an older GCC's libstdc++ (install that GCC and pass "
            "--gcc-install-dir=<its lib/gcc/<triple>/<N>>, or `invoke build --gcc N`), or "
            "move to a ROCm release whose clang supports GCC " + gcc + "'s headers")


RULES: tuple[Rule, ...] = (
    Rule(id="hip-runtime-libstdcxx-rejected", klass="host-compiler", tier=2,
         triggers=("/c++/",),
         pattern=rx(r"^\S*/c\+\+/(?P<ver>\d+)(?:\.[\d.]+)?/[\w./]+:\d+:\d+: (?:error|note): "
                    r"(?P<msg>.*)$"),
         read=_hip_runtime_libstdcxx,
         # a kernel a library compiles at run time (its own shipped source, not a project's)
         requires=rx(r"AMD_COMGR_ACTION_COMPILE_SOURCE|Code object build failed|/comgr-\w"),
         source="clang's 'In file included from <file>:<line>:' include chain; HIP's "
         "hip/hip_runtime.h includes libstdc++'s <thread> (as the cited log's chain shows: "
         "ROCm 5.2.3 hip_runtime.h:54); comgr's action name and MIOpen's 'Code object build "
         "failed' as the cited log prints them; rocm-arch/rocm-arch#857 (ROCm 5.2 clang, GCC "
         "12.2), a project's own error with libstdc++'s notes claims nothing"),
    # GCC's words for clang's "fatal error: 'cstdint' file not found" (std-header-missing):
    # no quotes, and the includer's file:line:col in front, so a bare name is no input file.
    Rule(id="std-header-missing-gcc", klass="host-compiler",
         triggers=(": No such file or directory",),
         pattern=rx(r"^(?:In file included from )?\S+?:\d+(?::\d+)?: fatal error: "
                    r"(?P<header>" + STD_HEADERS + r"): No such file or directory$"),
         read=_std_header_gcc,
         source="GCC's 'fatal error: <header>: No such file or directory' for a missing "
         "#include <cstdint>: g++-11 and g++-12 here with -nostdinc++ (make/devq8.sh), where "
         "clang++-15/16/22 print 'fatal error: 'cstdint' file not found'; GCC's source not "
         "read; Debian 12's g++-12 depends on libstdc++-12-dev (apt-cache depends g++-12)"),
    Rule(id="hip-noinline-macro-libstdcxx", klass="host-compiler",
         triggers=("expanded from macro '__noinline__'",),
         pattern=rx(r"host_defines\.h:\d+:\d+: note: expanded from macro '__noinline__'"),
         read=_hip_noinline_macro,
         source="libstdc++ 12's bits/shared_ptr_base.h:196 __attribute__((__noinline__)) "
         "(gcc 12 installed here); the HIP macro as the log quotes it; rocm-arch/rocm-arch#780 "
         "(ROCm 5.1 with GCC 12.1)"),
    Rule(id="glibcxx-version", klass="import",
         triggers=("not found (required by", "' not found"),
         pattern=rx(r"(?P<lib>lib(?:stdc\+\+|gcc_s)\S*?)(?:\.\d+)*: version [`']"
                     r"(?P<ver>(?:GLIBCXX|CXXABI|GCC)_[\d.]+)' not found"),
         read=_glibcxx, source="glibc's version-check error"),
    Rule(id="glibc-version", klass="import",
         triggers=("GLIBC_",),
         pattern=rx(r"version [`'](?P<ver>GLIBC_[\d.]+)' not found"
                     r"(?: \(required by (?P<by>[^)\s]+)\))?"),
         read=_glibc_version, source="glibc's dl-version.c version-check error "
         "(\"version `%s' not found (required by %s)\")"),
    Rule(id="libstdcxx-version-unnamed", klass="import",
         triggers=("GLIBCXX_", "CXXABI_"),
         pattern=rx(r"^version [`'](?P<ver>(?:GLIBCXX|CXXABI)_[\d.]+)' not found "
                     r"\(required by (?P<by>[^)\s]+)\)"),
         read=_libstdcxx_unnamed, source="glibc's dl-version.c (the loaded library's name on "
         "the line before, cut by the log)"),
)
