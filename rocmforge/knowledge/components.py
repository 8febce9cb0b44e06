"""The ROCm components a PyTorch ROCm build needs: config/rocm_components.toml as records.

Owns: the component table (name, required by LoadHIP.cmake, the ROCm and Debian packages that
provide it) and `components_for(tree_components)`: the list to check, the tree's own when a
checkout exists (names and REQUIRED from its LoadHIP.cmake), else the table's. Must not: look
at the machine (probes.rocm_components does).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rocmforge.knowledge.toml_files import check_keys, config_dir, expect_type, read_toml

TABLE_FILE = "config/rocm_components.toml"


@dataclass(frozen=True, kw_only=True)
class Component:
    """One package PyTorch's CMake asks find_package for."""

    name: str
    required: bool
    rocm_package: str = ""
    debian_package: str = ""
    source: str = TABLE_FILE
    """Where the name and `required` came from: the table, or the tree's LoadHIP.cmake line."""
    libraries: tuple[str, ...] = ()
    """Shared-library stems it installs (`libMIOpen`), for naming the owner of a link error."""
    symbols: tuple[str, ...] = ()
    """Prefixes of the C symbols it exports (`miopen`), for naming the owner of a symbol."""
    rocm_min: str = ""
    """LoadHIP asks for it only from this ROCm on (`if(ROCM_VERSION_DEV VERSION_GREATER_EQUAL
    ...)`); "" = always. Used before a checkout; the tree's own condition decides after."""
    headers: tuple[str, ...] = ()
    """Include folders of its headers (`miopen/`), for naming the owner of a missing header."""

    def install_hint(self) -> str:
        """The packages that provide it: ROCm's, and Debian's where Debian ships it."""
        hints = [f"{self.rocm_package} (ROCm repositories)"] if self.rocm_package else []
        if self.debian_package:
            hints.append(f"{self.debian_package} (Debian)")
        return " or ".join(hints) or f"the ROCm package that installs {self.name}'s CMake config"


@lru_cache(maxsize=1)
def load_components() -> tuple[Component, ...]:
    doc = read_toml(config_dir() / "rocm_components.toml")
    check_keys(doc, where=TABLE_FILE, optional=("components",))
    found = []
    components = expect_type(doc.get("components", {}), dict, where=f"{TABLE_FILE} [components]")
    for name, row in components.items():
        expect_type(row, dict, where=f"{TABLE_FILE} [components.{name}]")
        check_keys(row, where=f"{TABLE_FILE} [components.{name}]",
                   required=("required",),
                   optional=("rocm_package", "debian_package", "libraries", "symbols", "headers",
                             "rocm_min"))
        lists = {key: tuple(str(v) for v in expect_type(row.get(key, []), list,
                                                          where=f"{TABLE_FILE} {name}.{key}"))
                 for key in ("libraries", "symbols", "headers")}
        found.append(Component(name=str(name), required=bool(row["required"]),
                               rocm_package=str(row.get("rocm_package", "")),
                               debian_package=str(row.get("debian_package", "")),
                               rocm_min=str(row.get("rocm_min", "")),
                               libraries=lists["libraries"], symbols=lists["symbols"],
                               headers=lists["headers"]))
    return tuple(found)


def components_for(tree: Sequence[tuple[str, bool, str]] | None,
                   rocm_version: str = "") -> tuple[Component, ...]:
    """What to check: `tree` is the checkout's LoadHIP.cmake list as (name, required, source)
    (None before a checkout: the table's list, without the components LoadHIP asks for only
    from a newer ROCm than `rocm_version`). Package names come from the table either way; a
    component the table does not know keeps empty package names."""
    table = {c.name: c for c in load_components()}
    if tree is None:
        from rocmforge.versions import version_key

        return tuple(c for c in table.values() if not (
            c.rocm_min and rocm_version
            and version_key(rocm_version, width=3) < version_key(c.rocm_min, width=3)))
    picked: dict[str, Component] = {}
    for name, required, source in tree:
        known = table.get(name)
        previous = picked.get(name)
        picked[name] = Component(
            name=name, required=required or bool(previous and previous.required),
            rocm_package=known.rocm_package if known else "",
            debian_package=known.debian_package if known else "", source=source)
    return tuple(picked.values())
