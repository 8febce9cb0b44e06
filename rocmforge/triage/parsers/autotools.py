"""Autotools builds whose configure was generated without a macro's definition: automake's
"'LIBTOOL' is undefined ... add 'LT_INIT'" (libtool's m4 files not found by aclocal), and a
configure script that stops on a macro left unexpanded (`PKG_CHECK_MODULES(` as shell code:
pkg-config's pkg.m4 was not installed when autoreconf ran).

Owns: this family's rules and the macro prefix → package table. automake's `missing` wrapper
is build_dependency.py's. Must not: read files, run programs or pick between findings (the
engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

# The package whose aclocal file defines each macro family: Debian 12's file lists (dpkg -S
# /usr/share/aclocal/pkg.m4 → pkgconf; libtool's deb holds aclocal/libtool.m4; automake's
# aclocal-1.16/*.m4; autoconf-archive's 581 aclocal/ax_*.m4).
_MACRO_PACKAGE = (("PKG_", "pkg-config", "pkgconf"), ("LT_", "libtool", "libtool"),
                  ("AC_PROG_LIBTOOL", "libtool", "libtool"), ("AM_", "automake", "automake"),
                  ("AX_", "autoconf-archive", "autoconf-archive"))


def _owner(macro: str) -> tuple[str, str] | None:
    return next(((name, deb) for prefix, name, deb in _MACRO_PACKAGE
                 if macro.startswith(prefix)), None)


def _reading(macro: str, how: str) -> Reading | None:
    owner = _owner(macro)
    if owner is None:
        return None
    name, deb = owner
    return Reading(
        subject=name,
        cause=f"{how}: the m4 file that defines {macro} ({name}'s) was not in aclocal's search "
              "path when the build system was generated (autoreconf / autogen.sh), because "
              f"{name} was not installed then (or lives under another prefix)",
        fix=f"install {name} (Debian/Ubuntu: `apt install {deb}`; another prefix: add its "
            "share/aclocal to ACLOCAL_PATH), then generate again (`autoreconf -fi`, or the "
            "project's autogen.sh) and run configure")


def _automake_undefined(match: re.Match[str], view: LineView) -> Reading | None:
    var, macro = match.group("var"), match.group("macro")
    return _reading(macro, f"automake stopped: the Makefile.am uses {var}, which {macro} in "
                           "configure.ac defines, and aclocal did not know the macro")


def _configure_unexpanded(match: re.Match[str], view: LineView) -> Reading | None:
    if not any("syntax error near unexpected token" in line for line in view.previous[-2:]):
        return None
    macro = match.group("macro")
    return _reading(macro, f"the configure script stops on {macro}(...), which it holds as "
                           "shell code: autoconf copied the macro unexpanded")


RULES: tuple[Rule, ...] = (
    Rule(id="automake-macro-undefined", klass="missing-component",
         triggers=("The usual way to define '",),
         pattern=rx(r"The usual way to define '(?P<var>\w+)' is to add '(?P<macro>\w+)'"),
         read=_automake_undefined,
         source="autotools-mirror/automake@906573c97a006d4e734d24ce2a1ed493b4961497:"
         "lib/Automake/Variable.pm (require_variables: \"'<var>' is undefined\" and \"The "
         "usual way to define '<var>' is to add '<macro>'\"); automake 1.16.5 here without "
         "libtool (make/devtl.sh)"),
    Rule(id="configure-macro-unexpanded", klass="missing-component",
         triggers=("configure: line ",),
         pattern=rx(r"configure: line \d+: [`'](?P<macro>[A-Z][A-Z0-9]*_[A-Z0-9_]+)\("),
         read=_configure_unexpanded,
         source="bash running a configure that autoconf 2.71 generated without pkg.m4 "
         "(\"syntax error near unexpected token `DRM,'\", then the line "
         "'PKG_CHECK_MODULES(DRM, ...)'): reproduced here (make/devtl.sh)"),
)
