"""The plan's data model: what a step is, and what a plan document looks like as JSON.

Owns: `Step` and `Plan` (frozen), their digests and their versioned JSON form. Must not: run
anything. The runner (`rocmforge.execute.runner`) is the only place that executes a Step.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

PLAN_SCHEMA = "rocmforge.plan/1"


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
    """

    name: str
    argv: tuple[str, ...]
    why: str
    cwd: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    inputs: Mapping[str, str] = field(default_factory=dict)
    outputs: tuple[str, ...] = ()
    # "run" executes argv; "python" runs an in-process action named by argv[0] (the runner maps it).
    kind: str = "run"
    volatile: bool = False

    def digest(self) -> str:
        payload = json.dumps(
            {
                "name": self.name,
                "argv": list(self.argv),
                "cwd": self.cwd,
                "env": dict(sorted(self.env.items())),
                "inputs": dict(sorted(self.inputs.items())),
                "kind": self.kind,
            },
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode()).hexdigest()

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "argv": list(self.argv),
            "cwd": self.cwd,
            "env": dict(self.env),
            "inputs": dict(self.inputs),
            "outputs": list(self.outputs),
            "volatile": self.volatile,
            "why": self.why,
            "digest": self.digest(),
        }


@dataclass(frozen=True, kw_only=True)
class Plan:
    """The resolved settings and the ordered steps a build would run."""

    settings: Mapping[str, Any]
    targets: tuple[str, ...]
    steps: tuple[Step, ...]
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": PLAN_SCHEMA,
            "targets": list(self.targets),
            "settings": dict(self.settings),
            "notes": list(self.notes),
            "steps": [s.to_json() for s in self.steps],
        }
