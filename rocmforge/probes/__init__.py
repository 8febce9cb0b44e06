"""Read-only probes of the machine: each takes its roots/paths/env as parameters and returns frozen
dataclasses. Probes must not write anything or change the environment.

Owns: the one way probes start a program (`run_command`, on rocmforge.process.run), so tests can
pass a fake `run` for the AMD-GPU boundary and everything else runs the real tool. Must not: import
anything heavy.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from rocmforge import process

# A probe never waits longer than this for one tool (a hung rocminfo, hipcc or rocm-sdk must not
# hang doctor or plan). hipcc, a Perl script, answers --version in about 0.25 s here.
# ROCMFORGE_PROBE_TIMEOUT_S changes it (a tool on a slow network file system).
PROBE_TIMEOUT_S = 10.0
PROBE_TIMEOUT_ENV = "ROCMFORGE_PROBE_TIMEOUT_S"

# Programs that did not answer (or answered with bytes that are not text) in this process, by
# path, with what happened. A program that timed out once is not asked again by a later probe of
# the same run: every probe of an install asks the same few tools, and a hung one would
# otherwise cost its timeout for each question.
_unanswered: dict[str, str] = {}
_lock = threading.Lock()

# What a probed program did: exit status and its two streams (decoded, never None).
RunResult = process.Result

Runner = Callable[..., RunResult]


def run_command(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
) -> RunResult:
    """Run a probe program with an argv list (never a shell), through rocmforge.process. A
    missing program or a timeout is a result (returncode 127 / 124), not an exception, because
    "not there" is a fact to report. A program that already timed out in this run is not asked
    again (124 at once); output holding a NUL byte is not text and is dropped (the caller sees
    an empty answer). Both are listed by `unanswered()` for doctor and plan to name."""
    args = tuple(str(a) for a in argv)
    if timeout is None:
        timeout = probe_timeout()
    program = args[0] if args else ""
    with _lock:
        silent = _unanswered.get(program, "").startswith("did not answer")
    if silent:
        return process.Result(argv=args, returncode=124, stdout="", timed_out=True,
                              stderr=f"{program} did not answer before; not asked again")
    result = process.run(args, env=env, cwd=cwd, timeout=timeout)
    if result.timed_out:
        _note(program, f"did not answer `{_shown(args)}` within {timeout:g} s")
    elif "\0" in result.stdout or "\0" in result.stderr:
        _note(program, f"printed a NUL byte for `{_shown(args)}`, which is not text")
        result = dataclasses.replace(result, stdout="", stderr="")
    return result


def probe_timeout() -> float:
    """PROBE_TIMEOUT_S, or ROCMFORGE_PROBE_TIMEOUT_S when that is a positive number."""
    try:
        value = float(os.environ.get(PROBE_TIMEOUT_ENV, ""))
    except ValueError:
        return PROBE_TIMEOUT_S
    return value if value > 0 else PROBE_TIMEOUT_S


def _shown(args: Sequence[str]) -> str:
    return " ".join([Path(args[0]).name, *args[1:]]) if args else ""


def _note(program: str, what: str) -> None:
    with _lock:
        _unanswered.setdefault(program, what)


def unanswered() -> tuple[tuple[str, str], ...]:
    """(program path, what happened) for each probed program that hung or printed garbage."""
    with _lock:
        return tuple(_unanswered.items())


def forget_unanswered() -> None:
    """Start over (a long-lived process that probes again, and tests)."""
    with _lock:
        _unanswered.clear()
