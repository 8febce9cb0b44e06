"""CMake if() conditions of LoadHIP.cmake, evaluated for one ROCm install (three-valued).

Owns: reading a condition the tree reader recorded (`HIP_FOUND AND ROCM_VERSION_DEV
VERSION_GREATER_EQUAL "5.7.0"`, `NOT (WIN32)`) and answering True, False, or None when it rests
on something the kit cannot know before configure. Only a False drops a component: what is
unknown stays as the file says. Must not: read files or guess a variable it was not given.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from rocmforge.versions import version_key

_TOKEN = re.compile(r'\s*(\(|\)|"[^"]*"|\$\{[^}]*\}|[^\s()"]+)')
_VERSION_OPS = {"VERSION_LESS": lambda a, b: a < b, "VERSION_GREATER": lambda a, b: a > b,
                "VERSION_EQUAL": lambda a, b: a == b, "VERSION_LESS_EQUAL": lambda a, b: a <= b,
                "VERSION_GREATER_EQUAL": lambda a, b: a >= b}
_NUMBER_OPS = {"LESS": lambda a, b: a < b, "GREATER": lambda a, b: a > b,
               "EQUAL": lambda a, b: a == b, "LESS_EQUAL": lambda a, b: a <= b,
               "GREATER_EQUAL": lambda a, b: a >= b}


def rocm_variables(version: str) -> dict[str, str]:
    """The variables LoadHIP.cmake compares against, for a ROCm install of `version`."""
    if not version:
        return {}
    parts = (version.split(".") + ["0", "0"])[:3]
    full = ".".join(parts)
    return {"ROCM_VERSION_DEV": full, "ROCM_VERSION": full, "HIP_VERSION": full,
            "ROCM_VERSION_DEV_MAJOR": parts[0], "ROCM_VERSION_DEV_MINOR": parts[1],
            "ROCM_VERSION_DEV_PATCH": parts[2], "ROCM_VERSION_DEV_INT": str(
                int(parts[0]) * 10000 + int(parts[1]) * 100 + int(parts[2]))
            if all(p.isdigit() for p in parts) else ""}


# Truths of a Linux ROCm build: the gating packages are found (else nothing is looked for).
_TRUE = {"UNIX", "LINUX", "USE_ROCM", "ON", "TRUE", "YES", "Y", "1"}
_FALSE = {"WIN32", "MSVC", "APPLE", "OFF", "FALSE", "NO", "N", "0", "USE_CUDA"}


def evaluate(condition: str, variables: Mapping[str, str]) -> bool | None:
    tokens = [t for t in _TOKEN.findall(condition) if t]
    if not tokens:
        return True
    parser = _Parser(tokens, variables)
    try:
        value = parser.disjunction()
    except _Unknown:
        return None
    return value if parser.at_end() else None


class _Unknown(Exception):
    pass


class _Parser:
    """Precedence as CMake's: parentheses, comparisons, NOT, AND, OR."""

    def __init__(self, tokens: list[str], variables: Mapping[str, str]) -> None:
        self.tokens = tokens
        self.at = 0
        self.variables = variables

    def at_end(self) -> bool:
        return self.at == len(self.tokens)

    def peek(self) -> str:
        return self.tokens[self.at] if self.at < len(self.tokens) else ""

    def take(self) -> str:
        if self.at_end():
            raise _Unknown
        self.at += 1
        return self.tokens[self.at - 1]

    def disjunction(self) -> bool | None:
        value = self.conjunction()
        while self.peek().upper() == "OR":
            self.take()
            right = self.conjunction()
            value = True if True in (value, right) else (None if None in (value, right)
                                                         else False)
        return value

    def conjunction(self) -> bool | None:
        value = self.negation()
        while self.peek().upper() == "AND":
            self.take()
            right = self.negation()
            value = False if False in (value, right) else (None if None in (value, right)
                                                           else True)
        return value

    def negation(self) -> bool | None:
        if self.peek().upper() == "NOT":
            self.take()
            inner = self.negation()
            return None if inner is None else not inner
        return self.comparison()

    def comparison(self) -> bool | None:
        if self.peek() == "(":
            self.take()
            value = self.disjunction()
            if self.take() != ")":
                raise _Unknown
            return value
        left = self.take()
        op = self.peek().upper()
        if op in _VERSION_OPS or op in _NUMBER_OPS or op == "STREQUAL":
            self.take()
            right = self.take()
            a, b = self.value(left), self.value(right)
            if a is None or b is None:
                return None
            if op == "STREQUAL":
                return a == b
            if op in _VERSION_OPS:
                return _VERSION_OPS[op](version_key(a, width=4), version_key(b, width=4))
            try:
                return _NUMBER_OPS[op](float(a), float(b))
            except ValueError:
                return None
        if op in ("DEFINED", "EXISTS"):
            raise _Unknown
        return self.truth(left)

    def value(self, word: str) -> str | None:
        if word.startswith('"'):
            return self.expand(word[1:-1])
        if word.startswith("${"):
            return self.variables.get(word[2:-1])
        if word in self.variables:
            return self.variables[word]
        return word if re.fullmatch(r"[\d.]+", word) else None

    def expand(self, text: str) -> str | None:
        names = re.findall(r"\$\{([^}]*)\}", text)
        if any(n not in self.variables for n in names):
            return None
        return re.sub(r"\$\{([^}]*)\}", lambda m: self.variables[m.group(1)], text)

    def truth(self, word: str) -> bool | None:
        upper = word.strip('"').upper()
        if upper.endswith("_FOUND") or upper.startswith("PYTORCH_FOUND_"):
            return True
        if upper in _TRUE:
            return True
        if upper in _FALSE:
            return False
        if word in self.variables:
            return self.variables[word].upper() not in ("", "0", "OFF", "FALSE", "NO")
        return None
