"""Which ROCm component owns a library, a symbol or a header, from config/rocm_components.toml.

Owns: the longest-prefix lookups over the component table's `libraries`, `symbols` and
`headers`, and the install hint for an owner. Must not: hold any name itself (the table does).
"""

from __future__ import annotations

from functools import lru_cache

from rocmforge.knowledge.components import Component, load_components


@lru_cache(maxsize=1)
def _index() -> tuple[tuple[tuple[str, Component], ...], ...]:
    libs, syms, heads = [], [], []
    for component in load_components():
        libs += [(stem.lower(), component) for stem in component.libraries]
        syms += [(prefix, component) for prefix in component.symbols]
        heads += [(folder, component) for folder in component.headers]
    by_length = lambda pair: -len(pair[0])  # noqa: E731 - longest prefix first
    return (tuple(sorted(libs, key=by_length)), tuple(sorted(syms, key=by_length)),
            tuple(sorted(heads, key=by_length)))


def component(name: str) -> Component | None:
    """The table's row for a CMake package name, case-insensitively (`MIOpen` → miopen)."""
    wanted = name.lower().replace("_", "-")
    for row in load_components():
        if row.name.lower().replace("_", "-") == wanted:
            return row
    return None


def library_owner(library: str) -> Component | None:
    """`libMIOpen.so.1` or `MIOpen` (from `-lMIOpen`) → miopen."""
    stem = library.lower()
    if not stem.startswith("lib"):
        stem = "lib" + stem
    stem = stem.split(".so")[0].split(".a")[0]
    for prefix, row in _index()[0]:
        if stem == prefix:
            return row
    return None


def symbol_owner(symbol: str) -> Component | None:
    """`hipblasLtMatmul` → hipblaslt; `hipMalloc` → hip (longest prefix wins). A C++ name
    (with `::`) has no owner here."""
    if "::" in symbol or "(" in symbol:
        return None
    for prefix, row in _index()[1]:
        if symbol.startswith(prefix) and (len(symbol) == len(prefix) or
                                          not symbol[len(prefix)].islower() or
                                          prefix.endswith("_")):
            return row
    return None


def header_owner(header: str) -> Component | None:
    """`miopen/miopen.h` → miopen; `thrust/complex.h` → rocthrust."""
    for folder, row in _index()[2]:
        if header.startswith(folder):
            return row
    return None


def install_hint(row: Component | None, name: str) -> str:
    return row.install_hint() if row else f"the ROCm development package that provides {name}"
