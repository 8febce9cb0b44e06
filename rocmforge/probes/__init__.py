"""Read-only probes of the machine: each takes its roots/paths/env as parameters and returns frozen
dataclasses. Probes must not write anything or change the environment.

Owns: the one way probes start a program (`run_command`, on rocmforge.process.run), so tests can
pass a fake `run` for the AMD-GPU boundary and everything else runs the real tool. Must not: import
anything heavy.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence

from rocmforge import process

# A probe never waits longer than this for one tool (a hung rocminfo must not hang doctor).
PROBE_TIMEOUT_S = 30.0

# What a probed program did: exit status and its two streams (decoded, never None).
RunResult = process.Result

Runner = Callable[..., RunResult]


def run_command(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = PROBE_TIMEOUT_S,
) -> RunResult:
    """Run a probe program with an argv list (never a shell), through rocmforge.process. A
    missing program or a timeout is a result (returncode 127 / 124), not an exception, because
    "not there" is a fact to report."""
    return process.run(tuple(str(a) for a in argv), env=env, cwd=cwd, timeout=timeout)
