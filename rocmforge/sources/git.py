"""The one place in the kit that runs git.

Owns: running `git` with an argv list (never a shell string; through rocmforge.process), the
environment that keeps git from prompting or translating its messages, and turning a failure into a
`GitFailed` that carries the command and git's own last lines. Must not: decide what to run;
callers (checkout, patches) plan the argv lists and decide what a failure means.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rocmforge import process
from rocmforge.errors import EnvironmentFailed, RocmforgeError

# A full SHA-1 commit id as git prints it (lower case): the only form the kit pins, locks or
# compares, because a branch moves and a short hash can become ambiguous.
FULL_SHA = re.compile(r"^[0-9a-f]{40}$")

# Never prompt for credentials (a hanging prompt in a build is worse than an error); C locale so
# the messages we match on are stable.
_QUIET_ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "LANGUAGE": "C", "GIT_ASKPASS": ""}


class GitFailed(RocmforgeError):
    """A git command failed; exit 2, because callers only run git before or while changing
    nothing, or roll back what they changed."""


class FetchFailed(GitFailed, EnvironmentFailed):
    """git could not reach or read a remote (ls-remote, fetch, submodule update): exit 3, the
    environment failed; the fix names the offline alternatives (rocmforge.sources.offline)."""


@dataclass(frozen=True, kw_only=True)
class GitResult:
    """What one git command did."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def tail(self, lines: int = 4) -> str:
        """git's last lines (stderr first), for error messages."""
        text = [
            line.strip()
            for line in (self.stderr.strip() or self.stdout.strip()).splitlines()
            if line.strip()
        ]
        return " | ".join(text[-lines:])


def config_args(config: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """`-c key=value` pairs; they apply to this command and every git it spawns (submodules).
    A sequence of pairs, not a mapping: one key (e.g. `url.<mirror>.insteadOf`) may repeat."""
    out: list[str] = []
    for key, value in config:
        out += ["-c", f"{key}={value}"]
    return tuple(out)


def run_git(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    config: Sequence[tuple[str, str]] = (),
    env: Mapping[str, str] | None = None,
    check: bool = True,
    what: str = "",
    fix: str = "",
    network: bool = False,
) -> GitResult:
    """Run `git [-c k=v ...] <args>` in `cwd`; raise GitFailed when `check` and it fails
    (FetchFailed, exit 3, when `network`: the command talks to a remote).

    `env` adds to the inherited environment (e.g. GIT_INDEX_FILE for a scratch index).
    """
    argv = ("git", *config_args(config), *args)
    done = process.run(argv, cwd=cwd, env={**os.environ, **_QUIET_ENV, **(env or {})})
    if not done.started and cwd is not None and not Path(cwd).is_dir():
        raise GitFailed(
            f"git cannot run in {cwd}: {done.stderr}",
            "the folder the kit expected a repository in is missing",
            fix or "run the checkout again",
        )
    if not done.started:
        raise GitFailed(
            "git is not installed (or not on PATH)",
            "the kit fetches PyTorch and Triton with git",
            "install git (apt-get install git) and run the task again",
        )
    result = GitResult(
        argv=argv, returncode=done.returncode, stdout=done.stdout, stderr=done.stderr
    )
    if check and not result.ok:
        raise (FetchFailed if network else GitFailed)(
            what or f"`{shlex.join(argv)}` failed (exit {done.returncode})",
            f"git said: {result.tail()}" if result.tail() else "",
            fix,
        )
    return result


def git_out(args: Sequence[str], *, cwd: Path | None = None, **kwargs: object) -> str:
    """stdout of a git command that must succeed, stripped."""
    return run_git(args, cwd=cwd, **kwargs).stdout.strip()  # type: ignore[arg-type]
