"""Add-ons: what the companions (torchvision, torchaudio) and the extensions (flash-attention,
bitsandbytes, ...) have in common, once.

Owns: the kinds (`KIND_COMPANION`, `KIND_EXTENSION`); the verify ops a recipe may name with
their tolerance (`VERIFY_OPS`: the one list; verify's `extensions` check implements exactly
these); `AddOn` (one add-on of either file: kind, source, targets variable, switches, verify op;
`addon_table.load_addons` lists them all); `read_addons` (the one reader of an add-on
table: its section, each entry a table, its keys checked, a `verify` op checked against
`VERIFY_OPS`, all as ConfigError naming the file); and `AddOnChoice` (what a build does about
one add-on, whatever its kind: the fields a kind does not use stay empty, so the planners read
data and never ask which kind a choice is). Must not: know a kind's own keys (companions.py and
extensions.py read those) or run anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from rocmforge.errors import ConfigError
from rocmforge.knowledge.toml_files import (
    TomlTable,
    check_keys,
    expect_type,
    read_section,
    suggest,
)

KIND_COMPANION = "companion"
KIND_EXTENSION = "extension"
# The ops `verify` can run against a reference on the device, and the relative error each may
# have (the `extensions` check of rocmforge.verify implements exactly these names). A recipe's
# `verify` names one of them or is "" (import only); any other name is refused at load.
VERIFY_OPS: Mapping[str, float] = MappingProxyType({
    "flash_attn_func": 2e-2,
    "linear8bitlt": 5e-2,
    "memory_efficient_attention": 2e-2,
})
VERIFY_KEY = "verify"


@dataclass(frozen=True, kw_only=True)
class AddOn:
    """One add-on the kit knows by name, whatever its kind and file: where it comes from, the
    variable its build takes the targets from, the variables that switch on its ROCm build, and
    the op verify runs on it."""

    kind: str  # KIND_COMPANION or KIND_EXTENSION
    name: str
    repo: str  # the default source (the setting companion_repos may replace it)
    package: str  # its wheel's distribution name ("" = any wheel the build leaves)
    targets_var: str  # "" = the torch build's own PYTORCH_ROCM_ARCH, in its environment
    switches: Mapping[str, str]  # the variables of its ROCm build (a backend's come on top)
    verify: str = ""  # one of VERIFY_OPS, "" = import only (or a check of its own)


@dataclass(frozen=True, kw_only=True)
class AddOnEntry:
    """One entry of an add-on table as read: its name, where it is (for messages), its keys."""

    name: str
    where: str
    entry: TomlTable


def read_addons(path: Path, section: str, *, required: Iterable[str],
                optional: Iterable[str] = ()) -> tuple[AddOnEntry, ...]:
    """The entries of `[section.<name>]` in `path`: each a table with only known keys and
    every required one, and a `verify` op (where the entry has one) that verify implements;
    otherwise a ConfigError naming the file, the entry and the key or op (exit 2)."""
    required, optional = tuple(required), tuple(optional)
    found = []
    for name, raw in read_section(path, section).items():
        where = f"{path} [{section}.{name}]"
        entry = expect_type(raw, dict, where=where)
        check_keys(entry, where=where, required=required, optional=optional)
        if VERIFY_KEY in entry:
            check_verify_op(expect_type(entry[VERIFY_KEY], str, where=f"{where} verify"),
                            where=where)
        found.append(AddOnEntry(name=name, where=where, entry=entry))
    return tuple(found)


def check_verify_op(op: str, *, where: str) -> None:
    """A ConfigError unless `op` is "" (import only) or one of VERIFY_OPS."""
    if op and op not in VERIFY_OPS:
        raise ConfigError(
            f'{where}: verify = "{op}" is no op the kit\'s verify can run.'
            f"{suggest(op, VERIFY_OPS)}",
            "verify would only say SKIP for it, and the add-on would look checked when it is "
            "not",
            f"name one of {', '.join(VERIFY_OPS)}, or \"\" for an import check only",
        )


@dataclass(frozen=True, kw_only=True)
class AddOnChoice:
    """What a build does about one add-on: the repo and ref to build, the version the table
    expects there ("" when only the checkout can tell), where that came from, or a skip with
    its reason (`skipped` non-empty: no steps for it). `build_env` holds every variable its
    build gets on top of the torch build's (its targets variable and its switches). The fields
    after it are what a recipe adds; a companion leaves them empty, and the planners act on
    what is there (no pre-build commands, no pin file, no folder digest)."""

    name: str
    package: str
    repo: str
    ref: str
    version: str = ""
    origin: str = ""  # "table", "rule", "ref", "main", "recipe"
    requires: str = ""
    skipped: str = ""
    build_env: Mapping[str, str] = field(default_factory=dict)
    kind: str = KIND_COMPANION
    backend: str = ""
    backend_note: str = ""
    module: str = ""
    pre_build: tuple[tuple[str, ...], ...] = ()
    torch_pin_file: str = ""
    torch_pin_pattern: str = ""
    version_file: str = ""
    version_pattern: str = ""
    verify: str = ""
    targets_file: str = ""
    targets_pattern: str = ""
    processors: tuple[str, ...] = ()  # the build's targets as processor names
    reads: tuple[str, ...] = ()  # the files of the tree that read `read_vars`
    read_vars: tuple[str, ...] = ()  # the recipe's own variables (targets, switches, backend)
    note: str = ""
    form: str = ""  # how `--with` named an extension's source ("" for a companion)
    commit: str = ""  # what the ref named when the plan was made ("" = not known before)
    digest: str = ""  # a plain folder's content digest

    def as_dict(self) -> dict[str, object]:
        """The plan's and manifest's record: a companion's keys, and an extension's on top."""
        common: dict[str, object] = {
            "name": self.name, "package": self.package, "repo": self.repo, "ref": self.ref,
            "version": self.version, "origin": self.origin, "requires": self.requires,
            "skipped": self.skipped, "build_env": dict(self.build_env)}
        if self.kind == KIND_COMPANION:
            return common
        return {**common, "kind": self.kind, "backend": self.backend,
                "module": self.module, "pre_build": [list(a) for a in self.pre_build],
                "torch_pin_file": self.torch_pin_file, "verify": self.verify,
                "form": self.form, "commit": self.commit, "digest": self.digest}
