"""The action protocol: what an in-process step gets from the runner and what it hands back.

Owns: `ActionContext` (the step, the work dir, what earlier steps reported, the step's log, and
a way to run sub-commands through the runner's one process path), `Action`, `ActionTable` and
`SubcommandFailed`, and `ActionContext.args`: a step's typed inputs (execute.action_args) as
the record its action expects. The runner is handed an `ActionTable` by the task (`run_plan(...,
actions=BUILD_ACTIONS)`); an action's typed inputs (the BuildInputs of this invocation) are bound
into it by whoever builds the table, so the context never carries an untyped settings bag.
Must not: know what any step does, or import the planners or the steps.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeVar

from rocmforge.execute.action_args import ActionArgs
from rocmforge.execute.model import Step
from rocmforge.execute.step_inputs import StepInputs
from rocmforge.knowledge.steps import StepName, is_known
from rocmforge.workdir import WorkDir

# What a step reports (stamped with it, shown in the manifest): JSON-like values.
Details = Mapping[str, object]


class TextSink(Protocol):
    """Where step output goes: the console, a log file, or both."""

    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...


class RunArgv(Protocol):
    """The runner's way to run one command of a step: returns (exit status, stdout)."""

    def __call__(
        self, argv: Sequence[str], *, cwd: str, env: Mapping[str, str], log: TextSink
    ) -> tuple[int, str]: ...


class SubcommandFailed(Exception):
    """A sub-command of a step exited non-zero; the runner turns it into a triaged StepFailed."""

    def __init__(self, argv: Sequence[str], code: int) -> None:
        super().__init__(f"{shlex.join(argv)} exited with {code}")
        self.argv = tuple(argv)
        self.code = code


_Args = TypeVar("_Args", bound=ActionArgs)
_Given = TypeVar("_Given", bound=StepInputs)

StepStatus = Literal["ran", "skipped", "checked", "failed", "interrupted", "dry"]


@dataclass(frozen=True, kw_only=True)
class StepResult:
    """What happened to one step in this run: ran, skipped (stamp matched), checked (a volatile
    step re-checked, unchanged), failed, interrupted, dry."""

    name: StepName
    status: StepStatus
    duration_s: float
    digest: str
    details: Details = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ActionContext:
    """What one in-process step gets: its Step, the work dir, the results of the steps before
    it in this run (skipped steps' details come from their stamps), its log, and `run`."""

    step: Step
    workdir: WorkDir
    results: Sequence[StepResult]
    log: TextSink
    run_argv: RunArgv
    # Where `notice` lines also go: the console of a quiet build (None: the log shows them to
    # the console already, or there is no console).
    console_note: Callable[[str], None] | None = None

    def args(self, kind: type[_Args]) -> _Args:
        """The step's typed inputs as the record `kind` its action reads; a step planned
        without them, or with another record, is a bug in the plan (a ValueError)."""
        found = self.step.args
        if not isinstance(found, kind):
            got = type(found).__name__ if found is not None else "no typed args"
            raise ValueError(f"step {self.step.name!r} carries {got}, not the {kind.__name__} "
                             "its action reads")
        return found

    def given(self, kind: type[_Given]) -> _Given:
        """The step's typed digest inputs as the record `kind` its action reads; a step planned
        without them, or with another record, is a bug in the plan (a ValueError)."""
        found = self.step.given
        if not isinstance(found, kind):
            got = type(found).__name__ if found is not None else "no typed inputs"
            raise ValueError(f"step {self.step.name!r} carries {got}, not the {kind.__name__} "
                             "its action reads")
        return found

    def details_of(self, step_name: StepName) -> Details:
        """What an earlier step of this run reported ({} when it did not run or report). A name
        knowledge.steps does not list is a bug in the asking action (a ValueError), not a step
        that did not run: a typo would otherwise read as {} and drop facts silently."""
        if not is_known(step_name):
            raise ValueError(f"details_of({step_name!r}): knowledge.steps lists no such step")
        for result in self.results:
            if result.name == step_name:
                return result.details
        return {}

    def say(self, message: str) -> None:
        """A line for the step's log (the console shows it only under --verbose)."""
        self.log.write(f"{message}\n")
        self.log.flush()

    def notice(self, message: str) -> None:
        """A line the user must see even in a quiet build (a warning, something done to
        their files): the step's log and the console."""
        self.say(message)
        if self.console_note is not None:
            self.console_note(message)

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str = "",
        env: Mapping[str, str] | None = None,
        check: bool = True,
    ) -> int:
        """Run one sub-command of this step (its env, cwd, log and interrupts); its status."""
        return self.capture(argv, cwd=cwd, env=env, check=check)[0]

    def capture(
        self,
        argv: Sequence[str],
        *,
        cwd: str = "",
        env: Mapping[str, str] | None = None,
        check: bool = True,
    ) -> tuple[int, str]:
        """Like run(), and also return what the command printed on stdout."""
        merged = {**self.step.env, **(env or {})}
        code, out = self.run_argv(tuple(argv), cwd=cwd or self.step.cwd, env=merged,
                                  log=self.log)
        if check and code != 0:
            raise SubcommandFailed(argv, code)
        return code, out


def text_map(details: Details, key: str) -> dict[str, str]:
    """details[key] as a str -> str dict ({} when it is missing or not a mapping)."""
    value = details.get(key)
    if not isinstance(value, Mapping):
        return {}
    return {str(k): str(v) for k, v in value.items()}


Action = Callable[[ActionContext], "Details | None"]
# Action name (a "python" step's argv[0]) -> the action, and its one-line summary for --dry.
ActionTable = Mapping[str, "tuple[Action, str]"]
