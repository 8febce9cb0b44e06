"""A header of an ordinary system library that a compile could not find (Python.h, numa.h,
zlib.h, omp.h...): the library's development package is not installed.

Owns: the header → development package table and the rule that reads GCC's and clang's
"fatal error: <header>" lines for those headers. ROCm components' headers, CUDA's and the C++
standard library's stay in compiler_headers.py. Must not: read files, run programs or pick
between findings (the engine does).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rocmforge.triage.parsers.compiler_flags import PROBE_LOG
from rocmforge.triage.rule import Alias, Groups, LineView, Reading, Rule, rx


@dataclass(frozen=True)
class _Owner:
    package: str
    """Debian 12's development package that ships the header (the subject)."""
    what: str


# Debian 12 (bookworm) packages, each checked here with `apt-get download` and `dpkg -c`
# (the header is in the package's file list), or `dpkg -S` for those installed here.
_OWNERS: dict[str, _Owner] = {
    "Python.h": _Owner("python3-dev", "Python's C API"),
    "numa.h": _Owner("libnuma-dev", "libnuma (NUMA policy)"),
    "numaif.h": _Owner("libnuma-dev", "libnuma (NUMA policy)"),
    "zlib.h": _Owner("zlib1g-dev", "zlib"),
    "ffi.h": _Owner("libffi-dev", "libffi"),
    "bzlib.h": _Owner("libbz2-dev", "bzip2's libbz2"),
    "lzma.h": _Owner("liblzma-dev", "xz's liblzma"),
    "zstd.h": _Owner("libzstd-dev", "zstd"),
    "libelf.h": _Owner("libelf-dev", "elfutils' libelf"),
    "gelf.h": _Owner("libelf-dev", "elfutils' libelf"),
    "elfutils/libdw.h": _Owner("libdw-dev", "elfutils' libdw"),
    "dwarf.h": _Owner("libdw-dev", "elfutils' libdw"),
    "xf86drm.h": _Owner("libdrm-dev", "libdrm"),
    "libdrm/amdgpu.h": _Owner("libdrm-dev", "libdrm (amdgpu)"),
    "libdrm/drm.h": _Owner("libdrm-dev", "libdrm"),
    "amdgpu.h": _Owner("libdrm-dev", "libdrm (amdgpu)"),
    "yaml.h": _Owner("libyaml-dev", "libyaml"),
    "hwloc.h": _Owner("libhwloc-dev", "hwloc"),
    "sqlite3.h": _Owner("libsqlite3-dev", "SQLite"),
    "expat.h": _Owner("libexpat1-dev", "expat"),
    "libunwind.h": _Owner("libunwind-dev", "libunwind"),
    "libudev.h": _Owner("libudev-dev", "libudev"),
    "pciaccess.h": _Owner("libpciaccess-dev", "libpciaccess"),
    "gmp.h": _Owner("libgmp-dev", "GMP"),
    "curses.h": _Owner("libncurses-dev", "ncurses"),
    "ncurses.h": _Owner("libncurses-dev", "ncurses"),
    "readline/readline.h": _Owner("libreadline-dev", "GNU readline"),
}
# openssl/<any>.h: libssl-dev ships the whole openssl/ folder.
_FOLDER_OWNERS: dict[str, _Owner] = {"openssl/": _Owner("libssl-dev", "OpenSSL")}

_CLANG_FORM = re.compile(r"fatal error: '")


def _owner(header: str) -> _Owner | None:
    if header in _OWNERS:
        return _OWNERS[header]
    return next((row for folder, row in _FOLDER_OWNERS.items() if header.startswith(folder)),
                None)


def _system_header(match: Groups, view: LineView) -> Reading | None:
    header = match.group("header")
    if header == "omp.h":
        return _omp_header(clang=bool(_CLANG_FORM.search(view.text)))
    row = _owner(header)
    if row is None:
        return None
    extra = (" (the Python the build runs: python3.N-dev for another python3.N; a virtual "
             "environment or conda uses its base Python's headers)" if header == "Python.h"
             else "")
    return Reading(
        subject=row.package,
        cause=f"the compile did not find {header}, {row.what}'s header: its development "
              "files are not installed (or are installed under a prefix the build's include "
              "path does not name)",
        fix=f"install {row.what}'s development package (Debian/Ubuntu: `apt install "
            f"{row.package}`{extra}; other distributions: the -devel package that ships "
            f"{header}), then build again; a library installed elsewhere: add its include "
            "folder (CPATH, or the build's include flags)")


def _omp_header(clang: bool) -> Reading:
    if clang:
        return Reading(
            subject="libomp-dev",
            cause="clang did not find omp.h: clang takes it from LLVM's OpenMP runtime "
                  "(libomp), not from GCC, and that runtime's headers are not installed for "
                  "this clang",
            fix="install the OpenMP runtime of the LLVM the clang comes from (Debian/Ubuntu: "
                "`apt install libomp-dev`, or libomp-N-dev for clang-N; ROCm's clang: the "
                "OpenMP package of the same ROCm release), or build without OpenMP")
    return Reading(
        subject="libgcc-dev",
        cause="GCC did not find omp.h: it ships with GCC's own support files (libgcc-N-dev "
              "on Debian/Ubuntu, libgomp's header), which are missing for the GCC that ran",
        fix="install GCC's development files for that GCC (Debian/Ubuntu: `apt install "
            "libgcc-N-dev` for gcc-N), or compile with a GCC whose files are complete")




RULES: tuple[Rule, ...] = (
    Rule(id="system-header-missing", klass="missing-component",
         unless=PROBE_LOG,
         triggers=("No such file or directory", "file not found"),
         # the compiler's own diagnostic line (an echoed or grepped copy claims nothing)
         pattern=rx(r"^(?:.+?:\d+(?::\d+)?: |.+?\(\d+(?:,\d+)?\): )?fatal error: "
                    r"(?:(?P<header>[\w./+-]+\.h): No such file or directory"
                    r"|'(?P<header2>[\w./+-]+\.h)' file not found)"),
         read=lambda m, v: _system_header(Alias(m, header="header2"), v),
         source="GCC's 'fatal error: <h>: No such file or directory' and clang's \"fatal "
         "error: '<h>' file not found\": g++-12 and clang-22 here (make/devtl.sh); header "
         "owners: Debian 12 packages' file lists (apt-get download + dpkg -c, dpkg -S)"),
)
