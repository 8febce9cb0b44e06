"""The shape every triage rule has, and what a rule sees of a line.

Owns: `Rule` (triggers, a regex, and a reader that turns a match into subject, cause and fix
or declines) and `LineView` (the cleaned line with the little state a rule may need: the CMake
message block it sits in, the step). Must not: know any particular failure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from rocmforge.knowledge import steps as registry


@dataclass(frozen=True, kw_only=True)
class Reading:
    """What a rule says about a matched line. Text may hold {device}, {max_jobs},
    {fewer_jobs} and {jobs_advice}: the engine fills them from the whole log and the run."""

    subject: str
    cause: str
    fix: str
    klass: str = ""
    """Another class than the rule's, when the line shows the failure belongs elsewhere (a
    missing `cuda_runtime.h` is a hipify failure, not a missing component)."""


@dataclass(frozen=True, kw_only=True)
class LineView:
    """One cleaned log line and its surroundings, as a rule sees it."""

    text: str
    """The line without prefixes and without leading and trailing blanks."""
    indented: bool
    """The line was indented (a continuation of a CMake message block)."""
    cmake_block: str
    """'error' or 'warning' inside a `CMake Error`/`CMake Warning` message block, else ''."""
    previous: tuple[str, ...]
    """The few cleaned lines before this one, oldest first."""
    step: str
    rocm_roots: tuple[str, ...] = ()
    """The versions of the versioned ROCm roots (/opt/rocm-7.1.1 → 7.1.1) that earlier lines
    of the log named, first seen first (a few at most)."""
    label: str = ""
    """The TheRock sub-project whose `[<name>] ` label the raw line carried (rocBLAS), or ''."""


class Groups(Protocol):
    """What a reader takes of a match: its named groups (re.Match, or an Alias of one)."""

    def group(self, name: str, /) -> str: ...

    def groupdict(self) -> dict[str, str | None]: ...


class Alias:
    """A match whose alternative group (`name2`) stands in for `name` when `name` is empty,
    so one reader serves both spellings of a message."""

    def __init__(self, match: re.Match[str], **alias: str) -> None:
        self._match = match
        self._alias = alias

    def group(self, name: str) -> str:  # noqa: D102 - re.Match's own
        value = self._match.groupdict().get(name)
        if value is None and name in self._alias:
            value = self._match.groupdict().get(self._alias[name])
        return value or ""

    def groupdict(self) -> dict[str, str | None]:
        found = dict(self._match.groupdict())
        for name, other in self._alias.items():
            if not found.get(name):
                found[name] = found.get(other)
        return found


# A shell's echo of its own command line (bash -x's "+ ", "++ " when nested; a prompt's "$ "):
# a grep or echo of a message there only names it. A rule whose words a CI script greps for
# starts its pattern with this (make/rv11.sh); the disk-full signature spells it in the table.
NOT_SHELL_TRACE = r"^(?!(?:\++|\$) ).*?"


def rx(pattern: str) -> re.Pattern[str]:
    """A rule's compiled regex (a short name, so a rule's pattern fits on its lines)."""
    return re.compile(pattern)


Reader = Callable[["re.Match[str]", LineView], Reading | None]


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One recurring failure shape: a line is tried when it holds one of `triggers`."""

    id: str
    klass: str
    triggers: tuple[str, ...]
    pattern: re.Pattern[str]
    read: Reader
    tier: int = 1
    steps: tuple[str, ...] = ()
    source: str = ""
    requires: re.Pattern[str] | None = None
    """A regex some line of the same log must match too (context that proves the reading)."""
    unless: re.Pattern[str] | None = None
    """A regex that, when some line of the log matches it, shows this rule's lines are
    symptoms of something else (an unresolved CMake target passed to the linker as `-l`)."""

    def __post_init__(self) -> None:
        # A rule's steps name what a step counts as for triage (knowledge.steps): a typo, or
        # an add-on's step, would never match, so it fails here, when the module is imported.
        wrong = [s for s in self.steps if s not in registry.kinds()]
        if wrong:
            raise ValueError(f"rule {self.id}: steps {wrong} are not step kinds of "
                             f"knowledge.steps ({', '.join(registry.kinds())})")

    def applies_to(self, step: str) -> bool:
        # An add-on's steps (`torchvision-build`) count as the step they mirror (`build`).
        return not step or not self.steps or registry.triage_kind(step) in self.steps


def step_names(*names: str) -> frozenset[str]:
    """Step names a reader compares `LineView.step` with, each looked up in knowledge.steps
    when the module is imported (a typo is a KeyError there, not a rule that never fires)."""
    return frozenset(registry.step(name).name for name in names)
