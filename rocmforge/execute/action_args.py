"""Typed inputs of the in-process steps that take any: the plan decides them, the action reads them.

Owns: one frozen record per shape of input (`InVenv`, `TritonArgs`, `ForAddon`,
`ForAddonInVenv`, `HipifyArgs`, `StaleCheckArgs`, `LogCheckArgs`) and, for each, `action` (the
in-process action that reads it: the runner looks it up by this name) and `argv`: the step's
argv (the action first), which is what the plan shows and what its digest covers. A Step made
with `args` takes its argv from them (execute.model), so the action reads the fields and never
indexes or parses argv, and every field is in the digest because it is in argv.
Must not: know which step uses which record (plan.build_plan decides), or run anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rocmforge.knowledge.steps import ActionName, StepName
from rocmforge.knowledge.triton import TritonMode

# The actions (knowledge.steps.ActionName) that take each record: a misspelt one fails mypy.
VenvAction = Literal["build-requirements", "triton-targets", "install", "rocm-sdk",
                     "companions-install"]
AddonAction = Literal["companion-checkout", "extension-copy", "companion-patches"]
PairingAction = Literal["companion-pairing", "extension-pairing"]


@dataclass(frozen=True, kw_only=True)
class InVenv:
    """An action that works with the build venv's interpreter (build requirements, the SDK,
    the Triton target probe, the installs)."""

    action: VenvAction
    python: str

    @property
    def argv(self) -> tuple[str, ...]:
        return (self.action, self.python)


@dataclass(frozen=True, kw_only=True)
class TritonArgs:
    """The triton step: its mode (setting triton_mode) and the build venv's interpreter."""

    mode: TritonMode
    python: str

    @property
    def action(self) -> ActionName:
        return "triton"

    @property
    def argv(self) -> tuple[str, ...]:
        return (self.action, self.mode, self.python)


@dataclass(frozen=True, kw_only=True)
class ForAddon:
    """An action on one add-on's tree (its checkout, folder copy or patches)."""

    action: AddonAction
    addon: str

    @property
    def argv(self) -> tuple[str, ...]:
        return (self.action, self.addon)


@dataclass(frozen=True, kw_only=True)
class ForAddonInVenv:
    """An add-on's pairing: its tree against the torch the build venv's interpreter imports."""

    action: PairingAction
    addon: str
    python: str

    @property
    def argv(self) -> tuple[str, ...]:
        return (self.action, self.addon, self.python)


@dataclass(frozen=True, kw_only=True)
class HipifyArgs:
    """PyTorch's hipify: the script the build venv's interpreter runs in the tree."""

    python: str
    script: str

    @property
    def command(self) -> tuple[str, ...]:
        return (self.python, self.script)

    @property
    def action(self) -> ActionName:
        return "hipify"

    @property
    def argv(self) -> tuple[str, ...]:
        return (self.action, *self.command)


@dataclass(frozen=True, kw_only=True)
class StaleCheckArgs:
    """The stale check: the CMake build dir, relative to the step's cwd (the tree)."""

    build_dir: str

    @property
    def action(self) -> ActionName:
        return "stale-check"

    @property
    def argv(self) -> tuple[str, ...]:
        return (self.action, self.build_dir)


@dataclass(frozen=True, kw_only=True)
class LogCheckArgs:
    """A log check: the step whose log must hold the CMake summary (logs/<step>.log)."""

    log: StepName

    @property
    def action(self) -> ActionName:
        return "log-check"

    @property
    def argv(self) -> tuple[str, ...]:
        return (self.action, self.log)


ActionArgs = InVenv | TritonArgs | ForAddon | ForAddonInVenv | HipifyArgs | StaleCheckArgs \
    | LogCheckArgs
"""What a Step's `args` may be."""
