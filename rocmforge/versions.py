"""Dotted version numbers as the kit reads and compares them ("6.4.0-15396", "3.25.1", "9.3").

Owns: finding the first dotted version in a tool's output, its integer sort key and its major,
so the probes (ROCm, cmake/ninja, compilers) and the compiler policy read versions one way.
Must not: know which tool printed the text or judge whether a version is good enough (that is
`rocmforge.knowledge.compiler_policy`); pure, standard library only.
"""

from __future__ import annotations

import re

# major.minor with an optional patch; whatever follows ("-15396", "+rocm", " (Debian)") is ignored.
_DOTTED = re.compile(r"\d+\.\d+(?:\.\d+)?")


def dotted_version(text: str, *, at_start: bool = False) -> str:
    """The first "N.N" or "N.N.N" in `text` ("" when none); `at_start` allows only leading blanks.

    `dotted_version("cmake version 3.25.1")` is "3.25.1"; `dotted_version("6.4.0-15396",
    at_start=True)` is "6.4.0".
    """
    match = _DOTTED.match(text.lstrip()) if at_start else _DOTTED.search(text)
    return match.group(0) if match else ""


def version_key(version: str, *, width: int = 0) -> tuple[int, ...]:
    """The leading numeric parts of "6.4.1" as ints, for sorting and comparing.

    Parsing stops at the first part that is not all digits ("7.0.rc1" -> (7, 0)); an unparsable
    version gives () and so sorts first. `width` pads with zeros (or cuts) to that many parts, so
    "9.3" and "9.3.0" compare equal.
    """
    parts: list[int] = []
    for piece in version.strip().split("."):
        if not piece.isdigit():
            break
        parts.append(int(piece))
    if width:
        parts = (parts + [0] * width)[:width]
    return tuple(parts)


def major_of(version: str) -> int:
    """The major of "11.3.0" (11); 0 when the version does not start with a number."""
    key = version_key(version)
    return key[0] if key else 0
