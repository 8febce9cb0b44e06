"""The name a person looks up for a linker or loader symbol.

Owns: `symbol_name`, which turns any spelling of a symbol (Itanium-mangled, demangled with its
parameters, MSVC's decorated form) into its qualified name. Must not: know which library
exports a symbol (owners.py does).
"""

from __future__ import annotations

import re

from rocmforge.triage.demangle import demangle

# MSVC's readable form of a symbol: `__declspec(dllimport) class std::tuple<…> __cdecl
# at::native::f(class at::Tensor const &, __int64)`. What a person looks up is the qualified
# name before the parameter list.
_DECORATION = re.compile(r"__declspec\([^)]*\)\s*|\b(?:class|struct|enum|union)\s+|"
                         r"\b__(?:cdecl|stdcall|fastcall|thiscall|vectorcall|ptr64)\b\s*")


def symbol_name(text: str) -> str:
    """The qualified name of a linker or loader symbol: demangled (Itanium), stripped of MSVC
    decoration, return type and parameter list. `void __cdecl at::f(int)` -> `at::f`."""
    text = demangle(text.strip().strip("'\"`"))
    text = _DECORATION.sub("", text).strip()
    depth = 0
    for index, char in enumerate(text):  # cut at the parameter list's '(' (depth 0 of <>)
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
        elif char == "(" and depth == 0 and index > 0 and \
                not text.startswith("operator", index - 8):
            text = text[:index]
            break
    # The last space outside <> separates the return type from the name.
    depth, cut = 0, -1
    for index, char in enumerate(text):
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
        elif char == " " and depth == 0:
            cut = index
    return text[cut + 1:].strip() if cut >= 0 else text.strip()
