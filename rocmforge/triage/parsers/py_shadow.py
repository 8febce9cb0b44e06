"""A file of the user's own that hides a module: CPython 3.13 names it.

Owns: the rule that reads CPython 3.13's hint on a module AttributeError ("consider renaming
'<file>' ..."), which names the file that was imported in place of the installed module or
the standard-library one. Must not: read files, run programs or pick between findings (the
engine does). Older Pythons print no such hint ("partially initialized module ... most likely
due to a circular import"): that line alone does not prove a hiding file, so no rule reads it.
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

# Both wordings as Python 3.13.0 prints them here (make/pyver11.sh): a third-party name and a
# standard-library name hidden by a script's own file.
_HINT = rx(r"^AttributeError: module '(?P<mod>[\w.]+)' has no attribute '(?P<name>\w+)' "
           r"\(consider renaming '(?P<file>[^']+)' (?:if it has the same name as a "
           r"(?:third-party module|library) you intended to import|since it has the same name "
           r"as the standard library module named '[\w.]+')")


def _shadowed(match: re.Match[str], view: LineView) -> Reading | None:
    module, path = match.group("mod"), match.group("file")
    top = module.split(".")[0]
    return Reading(
        subject=top,
        cause=f"Python imported the file {path} as {module}, in place of the real {top}: "
              "the file has the same name and sits in a folder that comes first on sys.path "
              f"(the script's own, or the current one), so {module}.{match.group('name')} is "
              f"looked up in that file; the installed {top} is not at fault",
        fix=f"rename {path} (and remove the __pycache__ beside it), then run again; check with "
            f"`python -c 'import {top}; print({top}.__file__)'` that the real one loads")


RULES: tuple[Rule, ...] = (
    Rule(id="module-shadowed-by-local-file", klass="python-packaging",
         triggers=("(consider renaming '",),
         pattern=_HINT,
         read=_shadowed,
         source="CPython 3.13.0's module AttributeError hint (\"consider renaming '%U' if it "
         "has the same name as a third-party module you intended to import\" / \"since it has "
         "the same name as the standard library module named\"), run here; make/pyver11.sh"),
)
