"""The ROCm facts a build uses, each with where it came from: the install first, the table second.

Owns: merging what a ROCm install says of itself (`rocmforge.probes.rocm.RocmInstall`: version,
HIP version, LLVM major, layout, the targets its device libraries or `rocm-sdk targets` name,
the components' CMake config versions) with its config/rocm.toml row into one frozen `RocmFacts`, as
`rocmforge.plan.pytorch_facts` does for a PyTorch tree. An install newer than every row is
planned from what it says; the table then gives only the host-compiler advice, marked as an
estimate. Must not: read files or run anything (the probes did), or judge the install (doctor).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from rocmforge.plan.pytorch_facts import DEFAULT, TABLE, UNKNOWN, Fact
from rocmforge.versions import version_key

if TYPE_CHECKING:
    from rocmforge.knowledge.releases import RocmRelease
    from rocmforge.probes.rocm import RocmInstall
    from rocmforge.probes.rocm_components import ComponentFound

SCHEMA: Final = "rocmforge.rocm_facts/1"
TABLE_FILE: Final = "config/rocm.toml"
INSTALL: Final = "install"

FACT_NAMES: Final = ("version", "hip_version", "layout", "llvm_major", "targets", "components",
                     "released", "host_compilers")
"""Every fact, in the order reports show them."""


@dataclass(frozen=True, kw_only=True)
class RocmFacts:
    """What the kit knows about one ROCm install, fact by fact, and where each came from."""

    root: str
    facts: Mapping[str, Fact]
    table_row: str
    """The config/rocm.toml row used ("7.2"), "" when none applies (older than every row, or
    no version)."""
    row_is_estimate: bool
    """The install is not a row of its own: the nearest lower row stands in."""
    notes: tuple[str, ...]

    def __getitem__(self, name: str) -> Fact:
        return self.facts[name]

    @property
    def hip_version(self) -> str:
        """HIP's version ("7.15.26333", or the table's "7.15"), "" when nobody says: what
        PyTorch's aotriton.cmake keys the AOTriton runtime on and torch.version.hip reports."""
        return self.facts["hip_version"].value

    def as_dict(self) -> dict[str, object]:
        return {"schema": SCHEMA, "root": self.root, "table_row": self.table_row,
                "row_is_estimate": self.row_is_estimate, "notes": list(self.notes),
                "facts": {name: fact.as_dict() for name, fact in self.facts.items()}}


def rocm_facts(install: RocmInstall, row: RocmRelease | None,
               components: Sequence[ComponentFound] = (),
               newest_row: str = "") -> RocmFacts:
    """Merge one install with its table row (None: no row applies). `newest_row` is the newest
    row of the table ("10.1"), to say when the install is newer than all of them."""
    table_source = f"table: {TABLE_FILE} {row.version}" if row is not None else ""
    root = str(install.root)

    def from_install(name: str, value: str, where: str, table_value: str = "") -> Fact:
        if value:
            return Fact(name=name, value=value, origin=INSTALL, source=f"install: {where}",
                        table_value=table_value, table_source=table_source if table_value else "")
        if table_value:
            return Fact(name=name, value=table_value, origin=TABLE, source=table_source,
                        table_value=table_value, table_source=table_source)
        return Fact(name=name, value="", origin=UNKNOWN, source="nobody says")

    facts = {
        "version": from_install("version", install.version, _version_where(install)),
        "hip_version": from_install(
            "hip_version", install.hip_version, install.hip_version_source or "nowhere",
            row.hip if row is not None and not row.approximate else ""),
        "layout": Fact(name="layout", value=install.layout or "other", origin=INSTALL,
                       source=f"install: where it sits ({install.source})"),
        "llvm_major": from_install(
            "llvm_major", str(install.llvm_major) if install.llvm_major else "",
            install.llvm_source or "its clang",
            str(row.llvm_major) if row is not None and row.llvm_major else ""),
        "targets": from_install("targets", " ".join(install.targets),
                                install.targets_source or "its device libraries"),
        "components": _components_fact(components, root),
        "released": (Fact(name="released", value=row.released, origin=TABLE,
                          source=table_source, table_value=row.released,
                          table_source=table_source)
                     if row is not None and row.released else
                     Fact(name="released", value="", origin=UNKNOWN, source="not in the table")),
        "host_compilers": _compilers_fact(row, table_source),
    }
    estimate = row is not None and row.approximate
    notes: list[str] = []
    newer = bool(newest_row and install.version and version_key(install.version, width=2)
                 > version_key(newest_row, width=2))
    if newer:
        notes.append(
            f"ROCm {install.version} is newer than every row of {TABLE_FILE} (newest "
            f"{newest_row}): it is planned from what the install says (version, LLVM, targets, "
            f"components); only the host-compiler advice comes from the {newest_row} row, as an "
            "estimate")
    elif estimate and row is not None:
        notes.append(f"ROCm {install.version} has no row of its own in {TABLE_FILE}: the "
                     f"{row.version} row stands in for what the install does not say")
    if row is not None and not row.approximate and row.hip and install.hip_version and \
            ".".join(install.hip_version.split(".")[:2]) != row.hip:
        notes.append(f"this install's HIP is {install.hip_version}, the {row.version} row says "
                     f"HIP {row.hip}: the install's is used (AOTriton's runtime is chosen by it)")
    if row is not None and row.llvm_major and install.llvm_major and \
            row.llvm_major != install.llvm_major:
        notes.append(f"this install's clang is LLVM {install.llvm_major}, the {row.version} row "
                     f"says {row.llvm_major}: the install's is used (a distro or custom build)")
    return RocmFacts(root=root, facts=facts, table_row=row.version if row is not None else "",
                     row_is_estimate=estimate, notes=tuple(notes))


def _version_where(install: RocmInstall) -> str:
    """The file or command the version came from, as a person would look it up."""
    where = install.version_source
    if where.startswith("."):
        return f"{install.root}/{where}"
    if where == "hip_version.h":
        return f"{install.root}/include/hip/hip_version.h"
    return where or "nowhere"


def _components_fact(components: Sequence[ComponentFound], root: str) -> Fact:
    present = [f"{c.name} {c.version or '?'}" for c in components if c.found]
    if not components:
        return Fact(name="components", value="", origin=UNKNOWN, source="not read")
    return Fact(name="components", value=", ".join(present) or "none",
                origin=INSTALL, source=f"install: <name>-config-version.cmake under {root}")


def _compilers_fact(row: RocmRelease | None, table_source: str) -> Fact:
    if row is None:
        return Fact(name="host_compilers", value="", origin=UNKNOWN, source="no table row")
    gcc = " or ".join(f"GCC {m}" for m in row.gcc_recommended)
    clang = " or ".join(f"Clang {m}" for m in row.clang_recommended)
    value = " / ".join(p for p in (gcc, clang) if p)
    return Fact(name="host_compilers", value=value, origin=DEFAULT if row.approximate else TABLE,
                source=table_source + (" (estimate)" if row.approximate else ""),
                table_value=value, table_source=table_source)


def newest_row(rows: Mapping[str, RocmRelease]) -> str:
    """The newest row's version ("10.1"); "" for an empty table."""
    versions = sorted(rows, key=lambda v: version_key(v, width=2))
    return versions[-1] if versions else ""


def rocm_facts_for(install: RocmInstall,
                   components: Sequence[ComponentFound] = ()) -> RocmFacts:
    """`rocm_facts` with the row config/rocm.toml has for the install's version (none for an
    install with no version or one older than every row)."""
    from rocmforge.errors import RocmforgeError
    from rocmforge.knowledge.releases import load_rocm_releases, rocm_release_for

    row: RocmRelease | None = None
    if install.version:
        try:
            row = rocm_release_for(install.version)
        except (RocmforgeError, KeyError, ValueError):
            row = None
    return rocm_facts(install, row, components, newest_row=newest_row(load_rocm_releases()))


def hip_version_of(install: RocmInstall | None) -> str:
    """HIP's version for one install: what it says of itself ("7.15.26333"), else its exact
    config/rocm.toml row's `hip` ("7.15"; a stand-in row from a lower release does not count,
    since HIP's numbering left ROCm's at 10.0), else "". Extension recipes and the AOTriton
    choice use this, as upstream uses HIP_VERSION and torch.version.hip."""
    if install is None:
        return ""
    if install.hip_version or not install.version:
        return install.hip_version
    from rocmforge.errors import RocmforgeError
    from rocmforge.knowledge.releases import rocm_release_for

    try:
        row = rocm_release_for(install.version)
    except (RocmforgeError, KeyError, ValueError):
        return ""
    return hip_version_in(install, row)


def hip_version_in(install: RocmInstall | None, row: RocmRelease | None) -> str:
    """hip_version_of with the install's config/rocm.toml row already read (the planner's
    `BuildFacts.rocm_release`; None: no row): pure."""
    if install is None:
        return ""
    if install.hip_version or row is None:
        return install.hip_version
    return "" if row.approximate else row.hip
