"""Every add-on the kit knows by name, of either table: config/companions.toml and
config/extensions.toml read by their own loaders and listed as `AddOn` records.

Owns: `AddOnTable` and `load_addons`, and `AddOnTables` (both files as read and the add-ons
they list: what the planner of a build with add-ons is handed, so it reads no file). It sits
above companions.py and extensions.py (which use addons.py's reader), so no module of
knowledge/ imports its way back to itself. Must not: read a kind's own keys (the two loaders
do).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from rocmforge.knowledge.addons import KIND_COMPANION, KIND_EXTENSION, AddOn
from rocmforge.knowledge.companions import CompanionTable, load_companions
from rocmforge.knowledge.extensions import ExtensionTable, load_extensions


@dataclass(frozen=True, kw_only=True)
class AddOnTable:
    """Every add-on of config/companions.toml and config/extensions.toml, in that order."""

    addons: Mapping[str, AddOn]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.addons)


def load_addons(directory: str | Path | None = None) -> AddOnTable:
    """The companions and the extension recipes as add-ons (each file read by its own kind's
    loader, which goes through `read_addons`)."""
    found = {c.name: AddOn(kind=KIND_COMPANION, name=c.name, repo=c.repo, package=c.package,
                           targets_var="", switches=c.build_env)
             for c in load_companions(directory).companions.values()}
    found.update({r.name: AddOn(kind=KIND_EXTENSION, name=r.name, repo=r.repo,
                                package=r.package, targets_var=r.targets_var, switches=r.env,
                                verify=r.verify)
                  for r in load_extensions(directory).recipes.values()})
    return AddOnTable(addons=MappingProxyType(found))


@dataclass(frozen=True, kw_only=True)
class AddOnTables:
    """config/companions.toml and config/extensions.toml as read, and every add-on of both:
    the values a plan with add-ons (`--with`, the companions setting) is made from. plan.gather
    reads them; the planner is handed them and reads no file."""

    companions: CompanionTable
    extensions: ExtensionTable
    addons: AddOnTable


def load_addon_tables(directory: str | Path | None = None) -> AddOnTables:
    """Both add-on tables and their add-ons (each file read once per process)."""
    return AddOnTables(companions=load_companions(directory),
                       extensions=load_extensions(directory), addons=load_addons(directory))
