"""The exit statuses, each through the real `invoke` command line (issue 18 item 5c):
0 proven, 1 a check failed, 2 bad input (nothing written), 3 the environment failed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocmforge.errors import (
    EXIT_BAD_INPUT,
    EXIT_CHECK_FAILED,
    EXIT_ENVIRONMENT,
    EnvironmentFailed,
    RocmforgeError,
    StepFailed,
    UsageError,
)

REPO_ROOT = Path(__file__).resolve().parents[2]


def invoke(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=REPO_ROOT,
                          env={**os.environ, "NO_COLOR": "1", "HIP_PLATFORM": "amd", **env},
                          capture_output=True, text=True, timeout=180)


def test_the_codes_are_distinct_and_named() -> None:
    assert (EXIT_CHECK_FAILED, EXIT_BAD_INPUT, EXIT_ENVIRONMENT) == (1, 2, 3)
    assert StepFailed("x").exit_code == 1
    assert UsageError("x").exit_code == RocmforgeError("x").exit_code == 2
    assert EnvironmentFailed("x").exit_code == 3


@pytest.mark.needs_tool("gcc-11")
def test_0_proven_and_1_a_check_failed(tmp_path: Path) -> None:
    """`invoke inspect` of a host-only library: 0 as a report, 1 once --expect asks for a
    target it does not hold."""
    source = tmp_path / "host.c"
    source.write_text("int answer(void) { return 42; }\n")
    lib = tmp_path / "libhost.so"
    subprocess.run(["gcc-11", "-shared", "-fPIC", "-o", str(lib), str(source)], check=True)
    shown = invoke("inspect", str(lib))
    assert shown.returncode == 0, shown.stderr
    failed = invoke("inspect", str(lib), "--expect", "gfx1100")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "Traceback" not in failed.stderr


def test_2_bad_input_writes_nothing(tmp_path: Path) -> None:
    done = invoke("build", "--arch", "gfx1100", "--work-dir", str(tmp_path / "w"),
                  "--triton", "maybe")
    assert done.returncode == 2
    assert not (tmp_path / "w").exists()


@pytest.mark.needs_tool("git")
def test_3_the_environment_failed(tmp_path: Path) -> None:
    """A remote git cannot reach: the build stops at its checkout with exit 3, not 2."""
    url = (tmp_path / "gone.git").as_uri()
    done = invoke("checkout", "--repo", url, "--ref", "v2.8.0",
                  ROCMFORGE_WORK_DIR=str(tmp_path / "w"))
    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith(f"rocmforge: Cannot fetch from {url}: ")
    assert "Traceback" not in done.stderr


def test_3_when_the_disk_refuses_a_write(tmp_path: Path) -> None:
    """A write the operating system refuses for want of room (here a file-size limit of 0, as
    a full disk would) is the environment's failure: exit 3, one paragraph."""
    import resource

    (tmp_path / "repo").mkdir()

    def no_room() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

    done = subprocess.run([sys.executable, "-m", "invoke", "vendor", "--into",
                           str(tmp_path / "repo")], cwd=REPO_ROOT, preexec_fn=no_room,
                          env={**os.environ, "NO_COLOR": "1"}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 3, done.stderr
    # The disk's one message (README "Exit codes"), not "a path in the settings or flags".
    assert done.stderr.startswith("rocmforge: The disk refused a write to "), done.stderr
    assert "settings or flags" not in done.stderr
    assert "File too large" in done.stderr and "Traceback" not in done.stderr
