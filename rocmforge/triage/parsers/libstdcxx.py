"""The loader's version checks of the C and C++ runtimes: GLIBCXX_, CXXABI_ and GLIBC_
symbol versions a binary needs and the runtime found first lacks.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


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
        subject=version,
        cause=f"{who} was built against glibc with {version}, newer than this system's "
              "C library: a wheel or binary built on a newer distribution than the one it "
              "runs on",
        fix="use a build made for this distribution's glibc (a manylinux wheel whose tag is "
            "not newer than `ldd --version` shows), or build it here from source, or run on a "
            "distribution with that glibc")


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


RULES: tuple[Rule, ...] = (
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
