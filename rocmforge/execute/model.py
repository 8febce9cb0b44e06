"""The plan's data model: what a step is, and what a plan document looks like as JSON.

Owns: `Step` and `Plan` (frozen), their digests and their versioned JSON form. Must not: run
anything. The runner (`rocmforge.execute.runner`) is the only place that executes a Step.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from rocmforge.execute.action_args import ActionArgs
from rocmforge.execute.step_inputs import StepInputs
from rocmforge.knowledge.steps import StepName

PLAN_SCHEMA = "rocmforge.plan/1"

StepKind = Literal["run", "python"]
# A digest input: one value, or a list of them (targets, mirrors), never a joined string.
InputValue = str | tuple[str, ...]
# JSON-like values of the plan document and of what steps report.
JSONDoc = dict[str, object]


@dataclass(frozen=True, kw_only=True)
class Effects:
    """What an in-process ("python") step will do, decided by the planner: the files it reads
    and writes, what it fetches (URLs or repositories), and the commands it runs (argv lists,
    some chosen at run time from what the step finds: those say so in `notes`). It is part of
    the step's digest and of `plan --json`, so the plan shows what the build will do."""

    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    fetches: tuple[str, ...] = ()
    commands: tuple[tuple[str, ...], ...] = ()
    notes: tuple[str, ...] = ()

    def to_json(self) -> JSONDoc:
        return {"reads": list(self.reads), "writes": list(self.writes),
                "fetches": list(self.fetches), "commands": [list(c) for c in self.commands],
                "notes": list(self.notes)}


@dataclass(frozen=True, kw_only=True)
class Step:
    """One command of the build, with everything that decides whether it must run again.

    `inputs` names what the step depends on beyond its argv/env (source commits, patch hashes,
    target list); the digest covers argv, cwd, env and inputs, so a change to any of them
    invalidates the stamp of this step and of every step after it.

    `volatile`: what the step produces can change while its digest stays the same (a branch such
    as `main` names a new commit once upstream advances). The runner re-runs such a step even when
    its stamp matches, as a check: the action returns a `fingerprint` (e.g. the resolved commits),
    and only a fingerprint that differs from the stamp's invalidates the steps after it. The flag
    is not part of the digest: it says when to look again, not what the step does.

    `args`: a "python" step's typed inputs (execute.action_args), which its action reads; the
    step's argv is theirs (given empty, it is filled from them; given, it must be theirs), so
    the digest covers them and the plan shows them, and no action reads argv by index.
    `given`: the same for its digest inputs (execute.step_inputs): the step's inputs are the
    record's (given empty, filled from it; given, they must be its, key for key and in order).
    """

    name: StepName
    why: str
    argv: tuple[str, ...] = ()
    cwd: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    inputs: Mapping[str, InputValue] = field(default_factory=dict)
    outputs: tuple[str, ...] = ()
    # "run" executes argv; "python" runs the in-process action `action` names (the runner maps it).
    kind: StepKind = "run"
    volatile: bool = False
    # For "python" steps: what the action will do (None for "run" steps: argv says it).
    effects: Effects | None = None
    args: ActionArgs | None = None
    given: StepInputs | None = None

    def __post_init__(self) -> None:
        if self.given is not None:
            if self.kind != "python":
                raise ValueError(f"step {self.name!r}: typed inputs are for in-process steps")
            if not self.inputs:
                object.__setattr__(self, "inputs", self.given.inputs)
            elif list(self.inputs.items()) != list(self.given.inputs.items()):
                raise ValueError(f"step {self.name!r}: inputs {dict(self.inputs)!r} are not "
                                 f"its typed inputs' {self.given.inputs!r}")
        if self.args is not None:
            if self.kind != "python":
                raise ValueError(f"step {self.name!r}: typed args are for in-process steps")
            if not self.argv:
                object.__setattr__(self, "argv", self.args.argv)
            elif self.argv != self.args.argv:
                raise ValueError(f"step {self.name!r}: argv {self.argv!r} is not its args' "
                                 f"{self.args.argv!r}")
        if not self.argv:
            raise ValueError(f"step {self.name!r} has neither argv nor args")

    @property
    def action(self) -> str:
        """The in-process action a "python" step runs (its typed args' action; a step planned
        without args names it as its argv's only word); "" for a command."""
        if self.args is not None:
            return self.args.action
        return self.argv[0] if self.kind == "python" else ""

    def digest(self) -> str:
        doc: JSONDoc = {
            "name": self.name,
            "argv": list(self.argv),
            "cwd": self.cwd,
            "env": dict(sorted(self.env.items())),
            "inputs": {k: _json_input(v) for k, v in sorted(self.inputs.items())},
            "kind": self.kind,
        }
        if self.effects is not None:  # "run" steps: argv says it all
            doc["effects"] = self.effects.to_json()
        payload = json.dumps(doc, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()

    def to_json(self) -> JSONDoc:
        return {
            "name": self.name,
            "kind": self.kind,
            "argv": list(self.argv),
            "cwd": self.cwd,
            "env": dict(self.env),
            "inputs": {k: _json_input(v) for k, v in self.inputs.items()},
            "outputs": list(self.outputs),
            "volatile": self.volatile,
            "effects": self.effects.to_json() if self.effects is not None else None,
            "why": self.why,
            "digest": self.digest(),
        }


@dataclass(frozen=True, kw_only=True)
class Plan:
    """The resolved settings and the ordered steps a build would run."""

    settings: Mapping[str, object]
    targets: tuple[str, ...]
    steps: tuple[Step, ...]
    notes: tuple[str, ...] = ()

    def to_json(self) -> JSONDoc:
        return {
            "schema": PLAN_SCHEMA,
            "targets": list(self.targets),
            "settings": dict(self.settings),
            "notes": list(self.notes),
            "steps": [s.to_json() for s in self.steps],
        }


def _json_input(value: InputValue) -> str | list[str]:
    return value if isinstance(value, str) else list(value)
