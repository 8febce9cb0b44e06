"""Typed digest inputs of in-process steps (preflight, the add-ons'): the plan builds the
record, the action reads its fields.

Owns: one frozen record per shape of in-process step input (`PreflightInputs`, and the
add-ons' `AddonSource`, `AddonCheckout`, `FolderCopy`, `CompanionPairing`, `ExtensionPairing`,
`AddonsCollect`, `AddonsInstall`, `AddonsClear`) and, for each, `inputs`: the step's
inputs mapping, key for key and in the order the plan always wrote it, which is what the plan
shows and what the step's digest covers. A Step made with `given` takes its inputs from the
record (execute.model), so every field is in the digest, and an action asks its context for
the record (`ActionContext.given`) instead of indexing `step.inputs` by name.
Must not: know which step uses which record (plan.build_plan and plan.companion_steps decide),
or run anything.
"""

from __future__ import annotations

from dataclasses import dataclass

Inputs = dict[str, str | tuple[str, ...]]


@dataclass(frozen=True, kw_only=True)
class AddonSource:
    """Where an add-on's tree comes from: a repository at a ref, or a folder (its content's
    sha256 in `digest`, the ref "")."""

    repo: str
    ref: str
    digest: str = ""  # a folder's content; "" for a git source (then no "digest" input)

    @property
    def inputs(self) -> Inputs:
        found: Inputs = {"repo": self.repo, "ref": self.ref}
        if self.digest:
            found["digest"] = self.digest
        return found


@dataclass(frozen=True, kw_only=True)
class AddonCheckout:
    """An add-on's git checkout: its source, the tree it goes to, the mirrors (name=url)."""

    source: AddonSource
    dest: str
    mirrors: tuple[str, ...] = ()

    @property
    def inputs(self) -> Inputs:
        return {**self.source.inputs, "dest": self.dest, "mirrors": self.mirrors}


@dataclass(frozen=True, kw_only=True)
class FolderCopy:
    """A plain folder copied into the work dir, keyed by its content's sha256."""

    folder: str
    digest: str
    dest: str

    @property
    def inputs(self) -> Inputs:
        return {"repo": self.folder, "ref": "", "digest": self.digest, "dest": self.dest}


@dataclass(frozen=True, kw_only=True)
class CompanionPairing:
    """A companion's pairing: its source, the version its ref names ("" = none) and the torch
    that version needs (config/companions.toml; "" = unknown before the checkout)."""

    source: AddonSource
    version: str
    requires: str

    @property
    def inputs(self) -> Inputs:
        return {**self.source.inputs, "version": self.version, "requires": self.requires}


@dataclass(frozen=True, kw_only=True)
class ExtensionPairing:
    """An extension's pairing: what its recipe says to read in the tree (the torch pin, the
    version, the targets it accepts, the files that must name its variables) and what this
    build chose (backend, module, verify op, processors, variables)."""

    source: AddonSource
    torch_pin_file: str = ""
    torch_pin_pattern: str = ""
    version_file: str = ""
    version_pattern: str = ""
    backend: str = ""
    module: str = ""
    verify: str = ""
    targets_file: str = ""
    targets_pattern: str = ""
    processors: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    read_vars: tuple[str, ...] = ()
    variables: tuple[tuple[str, str], ...] = ()  # the extension's build variables, in order

    @property
    def inputs(self) -> Inputs:
        return {**self.source.inputs, "torch_pin_file": self.torch_pin_file,
                "torch_pin_pattern": self.torch_pin_pattern,
                "version_file": self.version_file, "version_pattern": self.version_pattern,
                "backend": self.backend, "module": self.module, "verify": self.verify,
                "digest": self.source.digest, "targets_file": self.targets_file,
                "targets_pattern": self.targets_pattern, "processors": self.processors,
                "reads": self.reads, "read_vars": self.read_vars,
                "variables": tuple(f"{k}={v}" for k, v in self.variables)}


@dataclass(frozen=True, kw_only=True)
class PreflightInputs:
    """Preflight: whether it is skipped (skip_preflight) and doctor's FAIL rows by check name
    (only FAIL rows: a new WARN must not redo a finished build)."""

    skip: bool
    fail_rows: tuple[str, ...] = ()

    @property
    def inputs(self) -> Inputs:
        return {"skip": str(self.skip), "fail_rows": self.fail_rows}


@dataclass(frozen=True, kw_only=True)
class AddonsCollect:
    """companions-collect: the add-ons built, in order, dist/, and each one's distribution
    name ("" = any wheel its build leaves)."""

    companions: tuple[str, ...]
    dist: str
    packages: tuple[str, ...]

    @property
    def inputs(self) -> Inputs:
        return {"companions": self.companions, "dist": self.dist, "packages": self.packages}


@dataclass(frozen=True, kw_only=True)
class AddonsInstall:
    """companions-install: the add-ons whose wheels (as collect recorded them) go in."""

    companions: tuple[str, ...]
    dist: str

    @property
    def inputs(self) -> Inputs:
        return {"companions": self.companions, "dist": self.dist}


@dataclass(frozen=True, kw_only=True)
class AddonsClear:
    """companions-clear: the earlier build's add-ons to take out of dist/ and the lock."""

    remove: tuple[str, ...]
    dist: str

    @property
    def inputs(self) -> Inputs:
        return {"remove": self.remove, "dist": self.dist}


StepInputs = AddonSource | AddonCheckout | FolderCopy | CompanionPairing | ExtensionPairing \
    | PreflightInputs | AddonsCollect | AddonsInstall | AddonsClear
"""What a Step's `given` may be."""
