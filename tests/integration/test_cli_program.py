"""The `rocmforge` console script (rocmforge.cli): its version, and a flag or task it does not
know is bad input (exit 2, one paragraph), as the kit's other bad input is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import rocmforge

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]


def rocmforge_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The `rocmforge` console script of this checkout (a two-line launcher, as pip writes)."""
    launcher = tmp_path / "rocmforge"
    launcher.write_text("from rocmforge.cli import program\nprogram.run()\n")
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(REPO), HIP_PLATFORM="amd")
    return subprocess.run([sys.executable, str(launcher), *args], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=60)


def test_version_is_the_packages(tmp_path: Path) -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["version"] == rocmforge.__version__
    done = rocmforge_cli(tmp_path, "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"rocmforge {rocmforge.__version__}\n"


@pytest.mark.parametrize(("args", "unknown"), [
    (["patch", "--arch", "x"], "--arch"),
    (["nosuchtask"], "nosuchtask"),
    (["--bogus", "plan"], "--bogus"),
])
def test_an_unknown_flag_or_task_is_exit_2(tmp_path: Path, args: list[str], unknown: str) -> None:
    done = rocmforge_cli(tmp_path, *args)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"rocmforge: No idea what '{unknown}' is! The command line names a flag or task this kit "
        "does not have. Fix: `rocmforge --list` lists the tasks and `rocmforge <task> --help` "
        "the flags of one.\n")
    assert done.stdout == ""


def test_triage_without_a_log_says_how_to_give_one(tmp_path: Path) -> None:
    """It said "'triage' did not receive required positional arguments: 'log' The command line
    names a flag or task this kit does not have." (the wrong reason, no full stop)."""
    done = rocmforge_cli(tmp_path, "triage")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "rocmforge: `rocmforge triage` was given no log. It needs the log to explain: a file (a "
        "failed step's log, <work>/logs/<step>.log, a CI log, pip's or docker's output) or - for "
        "stdin. Fix: `rocmforge triage .rocmforge/logs/build.log --step build`, or pipe a log "
        "in: `... 2>&1 | rocmforge triage -`.\n")


def test_the_fast_inflaters_are_installed_by_default_where_wheels_exist() -> None:
    """Issue 32 item 10: `pip install -e .` (the quick start) gets isal and zlib-ng on the
    platforms they ship wheels for, so `invoke inspect` takes the fast path by default; the
    reader picks the first that imports and falls back to zlib."""
    from packaging.requirements import Requirement

    from rocmforge.inspect.member import INFLATERS, inflater

    core = [Requirement(r) for r in
            tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]]
    fast = {r.name: r for r in core if r.name in ("isal", "zlib-ng")}
    assert set(fast) == {"isal", "zlib-ng"}
    for requirement in fast.values():
        assert requirement.marker is not None
        assert requirement.marker.evaluate({"platform_machine": "x86_64",
                                            "platform_python_implementation": "CPython"})
        assert not requirement.marker.evaluate({"platform_machine": "ppc64le",
                                                "platform_python_implementation": "CPython"})
    assert INFLATERS[-1] == "zlib"
    assert inflater().__name__ == "isal.isal_zlib"  # installed here as a core dependency
