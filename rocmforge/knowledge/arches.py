"""The AMD GPU target table: config/arches.toml and config/aliases.toml as frozen records.

Owns: `GpuArch` (one LLVM AMDGPU processor or generic target and its facts), `ArchTable` (all of
them, plus the aliases users may type) and `load_arch_table()`. Must not: probe the machine,
parse user target strings (that is `knowledge.targets`), or know about compilers beyond the
first/last LLVM major that accepts a name.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from rocmforge.errors import ConfigError
from rocmforge.knowledge.toml_files import check_keys, config_dir, expect_type, read_toml

ARCHES_FILE = "arches.toml"
ALIASES_FILE = "aliases.toml"

# A processor name as LLVM spells it: gfx + major (decimal) + minor and stepping (hex digits),
# or a generic target such as gfx10-3-generic.
ARCH_NAME_RE = re.compile(r"^gfx(?:[0-9]{1,2}[0-9a-f]{2}|[0-9]{1,2}(?:-[0-9]+)?-generic)$")

_ARCH_REQUIRED = (
    "family",
    "products",
    "wavefront",
    "llvm_min",
    "rocm_min",
    "xnack",
    "sramecc",
    "mach",
)
_ARCH_OPTIONAL = ("generic", "members", "removed_in_llvm", "apu", "note")


@dataclass(frozen=True, kw_only=True)
class GpuArch:
    """One LLVM AMDGPU target and what the kit needs to know to build for it."""

    name: str
    """LLVM processor name, e.g. "gfx1100" or "gfx11-generic"."""
    family: str
    """ISA/product family, e.g. "gcn5", "cdna3", "rdna3", "rdna3.5"."""
    products: tuple[str, ...]
    """Example products, for messages and `invoke doctor`."""
    wavefront: int
    """Default wavefront size (32 or 64); RDNA parts can also be compiled for wave64."""
    llvm_min: int
    """First upstream LLVM major whose clang accepts the name."""
    rocm_min: str
    """First ROCm whose compatibility matrix lists the target; "" when never listed."""
    xnack: bool
    """The target ID may carry :xnack+ / :xnack-."""
    sramecc: bool
    """The target ID may carry :sramecc+ / :sramecc-."""
    mach: int
    """EF_AMDGPU_MACH value (low byte of a code object's e_flags)."""
    generic: bool = False
    """A generic target (code object V6+) that runs on each of `generic_members`."""
    generic_members: tuple[str, ...] = ()
    removed_in_llvm: int = 0
    """First LLVM major that rejects the name (gfx940/gfx941: 21); 0 = still accepted."""
    apu: bool = False
    """An integrated GPU (APU) rather than a discrete card."""
    note: str = ""

    def accepted_by_llvm(self, llvm_major: int) -> bool:
        """Whether clang of this LLVM major accepts the name as --offload-arch."""
        if llvm_major < self.llvm_min:
            return False
        return not (self.removed_in_llvm and llvm_major >= self.removed_in_llvm)


@dataclass(frozen=True)
class ArchTable:
    """All known targets (by name) and user aliases (name as written in aliases.toml -> targets)."""

    arches: Mapping[str, GpuArch]
    aliases: Mapping[str, tuple[str, ...]]
    _by_mach: Mapping[int, GpuArch] = field(init=False, repr=False, compare=False)
    _alias_index: Mapping[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_mach = {arch.mach: arch for arch in self.arches.values()}
        object.__setattr__(self, "_by_mach", MappingProxyType(by_mach))
        index = {alias_key(name): name for name in self.aliases}
        object.__setattr__(self, "_alias_index", MappingProxyType(index))

    def get(self, name: str) -> GpuArch | None:
        """The target named exactly `name` (case-insensitive), or None."""
        return self.arches.get(name.strip().lower())

    def by_mach(self, mach: int) -> GpuArch | None:
        """The target whose EF_AMDGPU_MACH is `mach` (only the low byte is used), or None."""
        return self._by_mach.get(mach & 0xFF)

    def names(self) -> tuple[str, ...]:
        """Target names in table order (concrete and generic)."""
        return tuple(self.arches)

    def alias(self, text: str) -> tuple[str, ...] | None:
        """The targets an alias stands for (case, '-', '_', '.' and spaces ignored), or None."""
        name = self._alias_index.get(alias_key(text))
        return None if name is None else self.aliases[name]

    def alias_names(self) -> tuple[str, ...]:
        """Alias names as written in aliases.toml, for help texts and did-you-mean suggestions."""
        return tuple(self.aliases)


def alias_key(text: str) -> str:
    """How alias names are compared: lower case without '-', '_', '.' or spaces."""
    return re.sub(r"[\s_.\-]+", "", text.strip().lower())


def load_arch_table(directory: str | Path | None = None) -> ArchTable:
    """Read arches.toml and aliases.toml from `directory` (default: the kit's config dir).

    Cached per resolved directory: the table is read once per process.
    """
    return _load_cached(config_dir(directory).resolve())


@functools.lru_cache(maxsize=16)
def _load_cached(directory: Path) -> ArchTable:
    arches_path = directory / ARCHES_FILE
    doc = read_toml(arches_path)
    check_keys(doc, where=str(arches_path), required=("arch",))
    raw_arches = expect_type(doc["arch"], dict, where=f"{arches_path}: [arch]")
    arches: dict[str, GpuArch] = {}
    for name, raw in raw_arches.items():
        arches[name] = _arch_from_toml(name, raw, where=f"{arches_path}: [arch.{name}]")
    _check_cross_references(arches, where=str(arches_path))

    aliases_path = directory / ALIASES_FILE
    alias_doc = read_toml(aliases_path)
    check_keys(alias_doc, where=str(aliases_path), required=("alias",))
    raw_aliases = expect_type(alias_doc["alias"], dict, where=f"{aliases_path}: [alias]")
    aliases: dict[str, tuple[str, ...]] = {}
    seen_keys: dict[str, str] = {}
    for name, targets in raw_aliases.items():
        where = f"{aliases_path}: alias {name!r}"
        key = alias_key(name)
        if not key:
            raise ConfigError(f"{where} is empty", "an alias needs a name", "give it a name")
        if key in seen_keys:
            raise ConfigError(
                f"{where} is the same alias as {seen_keys[key]!r} once case and '-', '_', '.' "
                "are ignored",
                "users type aliases loosely, so two spellings of one name would be ambiguous",
                "remove one of the two entries",
            )
        if key in arches:
            raise ConfigError(
                f"{where} shadows the target {key}",
                "a target name must always mean that target",
                "rename the alias",
            )
        items = _str_tuple(targets, where=where)
        if not items:
            raise ConfigError(f"{where} lists no targets", "an alias must expand to something",
                              "list at least one gfx target")
        for item in items:
            base = item.split(":", 1)[0]
            if base not in arches:
                raise ConfigError(
                    f"{where} names {item!r}, which is not in {ARCHES_FILE}",
                    "an alias may only expand to known targets",
                    f"add [arch.{base}] to {ARCHES_FILE} or fix the alias",
                )
        seen_keys[key] = name
        aliases[name] = items
    return ArchTable(arches=MappingProxyType(arches), aliases=MappingProxyType(aliases))


def _arch_from_toml(name: str, raw: Any, *, where: str) -> GpuArch:
    expect_type(raw, dict, where=where)
    if not ARCH_NAME_RE.match(name):
        raise ConfigError(
            f"{where}: {name!r} is not an LLVM AMDGPU processor name",
            "names look like gfx90a, gfx1100 or gfx11-generic (lower case)",
            "fix the table name",
        )
    check_keys(raw, where=where, required=_ARCH_REQUIRED, optional=_ARCH_OPTIONAL)
    wavefront = expect_type(raw["wavefront"], int, where=f"{where}.wavefront")
    if wavefront not in (32, 64):
        raise ConfigError(f"{where}.wavefront is {wavefront}", "AMD GPUs run wave32 or wave64",
                          "write 32 or 64")
    mach = expect_type(raw["mach"], int, where=f"{where}.mach")
    if not 0 < mach <= 0xFF:
        raise ConfigError(f"{where}.mach is {mach:#x}", "EF_AMDGPU_MACH is one byte",
                          "copy the value from LLVM's ELF.h")
    generic = expect_type(raw.get("generic", False), bool, where=f"{where}.generic")
    members = _str_tuple(raw.get("members", []), where=f"{where}.members")
    if generic != bool(members):
        raise ConfigError(
            f"{where}: generic and members disagree",
            "a generic target lists the processors it runs on, and only a generic target does",
            "set generic = true together with members = [...]",
        )
    rocm_min = expect_type(raw["rocm_min"], str, where=f"{where}.rocm_min")
    if rocm_min and not re.fullmatch(r"\d+\.\d+(\.\d+)?", rocm_min):
        raise ConfigError(f"{where}.rocm_min is {rocm_min!r}", "it must be a ROCm version",
                          'write it like "6.4.1", or "" for never')
    return GpuArch(
        name=name,
        family=expect_type(raw["family"], str, where=f"{where}.family"),
        products=_str_tuple(raw["products"], where=f"{where}.products"),
        wavefront=wavefront,
        llvm_min=expect_type(raw["llvm_min"], int, where=f"{where}.llvm_min"),
        rocm_min=rocm_min,
        xnack=expect_type(raw["xnack"], bool, where=f"{where}.xnack"),
        sramecc=expect_type(raw["sramecc"], bool, where=f"{where}.sramecc"),
        mach=mach,
        generic=generic,
        generic_members=members,
        removed_in_llvm=expect_type(raw.get("removed_in_llvm", 0), int,
                                    where=f"{where}.removed_in_llvm"),
        apu=expect_type(raw.get("apu", False), bool, where=f"{where}.apu"),
        note=expect_type(raw.get("note", ""), str, where=f"{where}.note"),
    )


def _check_cross_references(arches: Mapping[str, GpuArch], *, where: str) -> None:
    seen: dict[int, str] = {}
    for arch in arches.values():
        if arch.mach in seen:
            raise ConfigError(
                f"{where}: {arch.name} and {seen[arch.mach]} share mach {arch.mach:#05x}",
                "each EF_AMDGPU_MACH value names one processor",
                "copy the values from LLVM's ELF.h",
            )
        seen[arch.mach] = arch.name
        for member in arch.generic_members:
            if member not in arches or arches[member].generic:
                raise ConfigError(
                    f"{where}: generic target {arch.name} lists member {member!r}",
                    "members must be concrete targets of the same table",
                    f"add [arch.{member}] or drop it from members",
                )


def _str_tuple(value: Any, *, where: str) -> tuple[str, ...]:
    items = expect_type(value, list, where=where)
    for index, item in enumerate(items):
        expect_type(item, str, where=f"{where}[{index}]")
    return tuple(items)
