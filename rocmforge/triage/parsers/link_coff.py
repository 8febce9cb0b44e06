"""The Windows (COFF) linker's checks that objects agree: lld-link's /failifmismatch, where
one input was built Debug and another Release (iterator debug level, C runtime library).

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Must not: read files, run programs or pick between findings
(the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule

_MISMATCH_HEAD = re.compile(r"/failifmismatch: mismatch detected for '(?P<key>[^']+)':$")
_MISMATCH_SIDE = re.compile(r"(?:^|\s)(?:>>> )?(?P<input>\S+) has value (?P<value>\S*)$")
_ARCHIVE_MEMBER = re.compile(r"^(?P<lib>[^()]+\.lib)\(")


def _fail_if_mismatch(match: re.Match[str], view: LineView) -> Reading | None:
    lines = [line for line in view.previous[-4:] if line]
    if len(lines) < 2:
        return None
    head, first = _MISMATCH_HEAD.search(lines[-2]), _MISMATCH_SIDE.search(lines[-1])
    if head is None or first is None:
        return None  # not the second input of lld-link's three-line message
    key = head.group("key")
    sides = ((first.group("input"), first.group("value")),
             (match.group("input"), match.group("value")))
    archives = [m.group("lib") for m in (_ARCHIVE_MEMBER.match(i) for i, _ in sides) if m]
    odd = archives[0] if len(archives) == 1 else sides[1][0]
    (a, va), (b, vb) = sides
    return Reading(
        subject=odd,
        cause=f"lld-link refuses to link objects that record different {key} values "
              f"({a}: {va}, {b}: {vb}): they were compiled with different MSVC settings "
              "(Debug against Release: iterator debug level, C runtime library), and "
              f"{odd} is the input built the other way",
        fix=f"build {odd} with the same build type and runtime library as the rest "
            "(CMAKE_BUILD_TYPE, CMAKE_MSVC_RUNTIME_LIBRARY; a bundled dependency such as "
            "googletest often keeps its own), then link again from a clean build folder")


RULES: tuple[Rule, ...] = (
    Rule(id="lld-link-failifmismatch", klass="link",
         triggers=(" has value ",),
         pattern=_MISMATCH_SIDE,
         read=_fail_if_mismatch, source="LLVM lld COFF /failifmismatch ('/failifmismatch: "
         "mismatch detected for '<key>':' then '>>> <input> has value <v>' for the input "
         "seen first and the one that disagrees; lld's source not read here): reproduced "
         "with clang-cl-22 #pragma detect_mismatch and lld-link-22 (make/devbt5.sh); "
         "ROCm/TheRock#358"),
)
