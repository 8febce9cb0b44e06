"""A dependency a configure asked for that is not there: a module pkgconf does not find.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. (pkg-config's older "No package 'X' found" and CMake's
find_package stay in cmake_package.py. TheRock's "get_target_property() called with
non-existent target" is not read: a subproject not enabled (ROCm/TheRock#4571) and one
declared after its dependent (ROCm/TheRock#3439) print the same lines.) Also a build tool a
generated file needs that is not installed, as automake's `missing` wrapper reports it, and
a dependency() Meson's configure did not find. Must not: read files, run programs or pick
between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _pkgconf_missing(match: re.Match[str], view: LineView) -> Reading | None:
    name = match.group("name")
    parent = match.group("parent")
    asked = ("the configure asked for it directly" if parent.startswith("virtual:")
             else f"{parent}.pc requires it")
    return Reading(
        subject=name,
        cause=f"pkg-config (pkgconf) found no {name}.pc ({asked}): {name}'s development "
              "files are not installed, or not on PKG_CONFIG_PATH",
        fix=f"install the distribution's development package that ships {name}.pc (for "
            f"example `apt-file search {name}.pc` or `dnf provides '*/{name}.pc'` names it), "
            f"or add the folder that holds {name}.pc to PKG_CONFIG_PATH; then configure again")


# The package a distribution ships each tool in, where its name differs: automake's `missing`
# names the same packages in its advice (GNU Bison for yacc, flex for lex, Texinfo for
# makeinfo).
_TOOL_PACKAGE = {"yacc": "bison", "lex": "flex", "makeinfo": "texinfo"}


def _automake_missing(match: re.Match[str], view: LineView) -> Reading | None:
    tool = match.group("tool")
    package = _TOOL_PACKAGE.get(tool, tool)
    return Reading(
        subject=tool,
        cause=f"a Makefile rule ran {tool} through automake's `missing` wrapper and {tool} is "
              f"not installed (exit 127): a file it generates (a parser, lexer or manual) is "
              "not in the sources, so the build needs the tool",
        fix=f"install {tool} on the build machine (the distribution's {package} package: "
            f"`apt install {package}` or `dnf install {package}`), then run the build again")


def _meson_dependency(match: re.Match[str], view: LineView) -> Reading | None:
    name, tried = match.group("name"), match.group("tried") or "its detection methods"
    return Reading(
        subject=name,
        cause=f"Meson's configure stopped on a required dependency '{name}' that it did not "
              f"find (tried {tried}): {name}'s development files (its .pc file for "
              "pkg-config, or its CMake package) are not installed or not on the search path",
        fix=f"install the development package that ships {name}.pc (Debian/Ubuntu: "
            f"`apt-file search {name}.pc` names it) or add its folder to PKG_CONFIG_PATH "
            "(CMAKE_PREFIX_PATH for a CMake package), then run `meson setup` again (with "
            "--wipe for a build folder that failed)")


RULES: tuple[Rule, ...] = (
    Rule(id="pkgconf-package-missing", klass="missing-component", tier=2,
         triggers=("required by '",),
         pattern=rx(r"Package '(?P<name>[\w.+-]+)', required by '(?P<parent>[^']+)', not found"),
         # An optional pkg_check_modules prints the same line and the configure goes on: a
         # configure that finished was not stopped by it.
         unless=rx(r"^-- (?:Configuring done|Generating done)|Build files have been written to"),
         read=_pkgconf_missing, source="pkgconf libpkgconf (\"Package '%s', required by '%s', "
         "not found\"; the command line's modules have the parent 'virtual:world'); "
         "pkg-config's own verbose_error with the same text (stored files, commit not read); "
         "ROCm/TheRock#89"),
    Rule(id="automake-tool-missing", klass="missing-component",
         triggers=("is missing on your system",),
         pattern=rx(r"WARNING: [`'](?P<tool>[\w.+-]+)' is missing on your system\."),
         # `missing` exits with the tool's 127, so make stops on the rule that ran it.
         requires=rx(r"\*\*\* \[[^\]]*\] Error 127"),
         read=_automake_missing, source="autotools-mirror/automake@906573c9:lib/missing "
         "(give_advice: \"WARNING: '<tool>' is missing on your system.\" when the tool "
         "exited 127; older releases quote `<tool>'); ROCm/TheRock#2318, #2365"),
    Rule(id="meson-dependency-missing", klass="missing-component",
         triggers=("ERROR: Dependency \"",),
         pattern=rx(r"ERROR: Dependency \"(?P<name>[\w.+-]+)\" not found"
                    r"(?:, | \()?(?:tried (?P<tried>[^)]+))?"),
         read=_meson_dependency, source="mesonbuild/meson@cd1a097e10d3a16062772c985a0dfdd6f5d824bf:"
         "mesonbuild/dependencies/detect.py (find_external_dependency: 'Dependency \"<name>\" "
         "not found (tried <methods>)' for a required one; an optional one only logs 'found: "
         "NO'); meson 1.12.1 here (make/devtl.sh)"),
)
