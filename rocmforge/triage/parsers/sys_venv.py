"""A Python virtual environment whose scripts no longer run: the shell could not start a
script of a venv's bin/ folder (pip, an entry point) because the interpreter its first line
names is gone (the venv was moved or renamed, or the Python that made it was removed).

Owns: the shell's two wordings of that failure (bash 5.2's "cannot execute: required file
not found", newer bash's "<interpreter>: bad interpreter"), read only for a program in the
bin/ folder of a venv (a folder named like venv, .venv, env, virtualenv) or, for "bad
interpreter", an interpreter path in one. Must not: read files, run programs or pick between
findings (the engine does). pip's own errors are pip_install.py's.
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

# <venv>/bin/<program>: a folder whose name says it is a virtual environment.
_VENV_BIN = re.compile(r"(?P<venv>\S*?(?:^|/)[^/\s]*(?:venv|virtualenv|\benv)[^/\s]*)/bin/"
                       r"(?P<prog>[^/\s:]+)$")


def _reading(venv: str, prog: str, shown: str) -> Reading:
    return Reading(
        subject=prog,
        cause=f"the shell could not start {prog} of the virtual environment {venv}: "
              f"{shown}; a venv's scripts name the Python they were made with by its full "
              "path on their first line, so the venv was moved or renamed after it was made, "
              "or the Python that made it was removed or upgraded away",
        fix=f"make the venv again where it is used (`python3 -m venv --clear {venv}`, then "
            "install its packages again), or run its tools as `<venv>/bin/python -m pip` "
            "only while that python still exists; a venv cannot be moved")


def _required_file(match: re.Match[str], view: LineView) -> Reading | None:
    venv = _VENV_BIN.search(match.group("cmd"))
    if venv is None:
        return None  # a program outside a venv: an ELF loader or a CRLF script, not shown
    return _reading(venv.group("venv"), venv.group("prog"),
                    "the interpreter its first line names does not exist")


def _bad_interpreter(match: re.Match[str], view: LineView) -> Reading | None:
    interp = match.group("interp")
    if interp.endswith("^M"):
        return None  # a script saved with Windows line ends: another failure
    venv = _VENV_BIN.search(interp) or _VENV_BIN.search(match.group("cmd"))
    if venv is None:
        return None
    prog = re.split(r"/", match.group("cmd"))[-1]
    return _reading(venv.group("venv"), prog, f"its interpreter {interp} does not exist")


_BASH = ("bminor/bash@637f5c8696a6adc9b4519f1cd74aa78492266b7f:execute_cmd.c ('%s: "
         "cannot execute: required file not found' when exec fails with ENOENT, or, where the "
         "file starts with #!, '%s: %s: bad interpreter'); GNU bash 5.2.15 here prints the "
         "first (make/devsys6.sh)")

RULES: tuple[Rule, ...] = (
    Rule(id="venv-script-interpreter-missing", klass="python-packaging",
         triggers=("cannot execute: required file not found",),
         pattern=rx(r"(?:^|: )(?P<cmd>[^\s:]+): cannot execute: required file not found"),
         read=_required_file, source=_BASH),
    Rule(id="venv-script-bad-interpreter", klass="python-packaging",
         triggers=("bad interpreter",),
         pattern=rx(r"(?:^|: )(?P<cmd>[^\s:]+): (?P<interp>[^\s:]+): bad interpreter: No such "
                    r"file or directory"),
         read=_bad_interpreter, source=_BASH),
)
