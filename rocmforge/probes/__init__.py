"""Read-only probes of the machine: each takes its roots/paths/env as parameters and returns
frozen dataclasses. Probes must not write anything or change the environment.

Owns: the one way probes start a program (`run_command`), so tests can pass a fake `run` for the
AMD-GPU boundary and everything else runs the real tool. Must not: import anything heavy.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

# A probe never waits longer than this for one tool (a hung rocminfo must not hang doctor).
PROBE_TIMEOUT_S = 30.0


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """What a probed program did: exit status and its two streams (decoded, never None)."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


Runner = Callable[..., RunResult]


def run_command(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = PROBE_TIMEOUT_S,
) -> RunResult:
    """Run a probe program with an argv list (never a shell). A missing program or a timeout is a
    result (returncode 127 / 124), not an exception, because "not there" is a fact to report."""
    argv = tuple(str(a) for a in argv)
    try:
        done = subprocess.run(
            argv,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError as exc:
        return RunResult(argv=argv, returncode=127, stdout="", stderr=str(exc))
    except PermissionError as exc:
        return RunResult(argv=argv, returncode=126, stdout="", stderr=str(exc))
    except subprocess.TimeoutExpired:
        return RunResult(argv=argv, returncode=124, stdout="", stderr=f"timed out after {timeout}s")
    return RunResult(
        argv=argv, returncode=done.returncode, stdout=done.stdout or "", stderr=done.stderr or ""
    )
