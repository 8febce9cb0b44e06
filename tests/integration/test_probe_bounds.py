"""Every probe has a bound and names the program that did not answer: a hanging rocm-sdk or
hipcc, or one that prints a NUL byte, costs doctor and plan one timeout each and a note, never a
stall of minutes or a traceback. The programs are real executables (shell scripts) that hang or
print garbage, run through the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rocmforge.probes import forget_unanswered, probe_timeout, run_command, unanswered

REPO_ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from rocmforge.cli import program; program.run()"]
TIMEOUT = 2


def script(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def cli(*args: str, path_first: Path | None = None, tmp: Path) -> tuple[
        subprocess.CompletedProcess[str], float]:
    env = {**os.environ, "ROCMFORGE_PROBE_TIMEOUT_S": str(TIMEOUT), "NO_COLOR": "1",
           "ROCMFORGE_CACHE_DIR": str(tmp / "cache")}
    if path_first is not None:
        env["PATH"] = f"{path_first}{os.pathsep}{env['PATH']}"
    start = time.monotonic()
    done = subprocess.run([*CLI, *args], cwd=tmp, env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    return done, time.monotonic() - start


@pytest.mark.parametrize("task", ["doctor", "plan"])
def test_a_rocm_sdk_printing_a_nul_byte_is_named_not_a_traceback(tmp_path: Path,
                                                                 task: str) -> None:
    fake = script(tmp_path / "bin", "rocm-sdk", r'printf "/opt/x\000y\n"')
    done, _ = cli(task, "--arch", "gfx1100", path_first=fake.parent, tmp=tmp_path)
    assert "Traceback" not in done.stderr
    assert done.returncode in (0, 1), done.stderr
    assert f"rocmforge: note: {fake} printed a NUL byte for `rocm-sdk path --root`" in " ".join(
        done.stderr.split())


@pytest.mark.parametrize("task", ["doctor", "plan"])
def test_a_hanging_rocm_sdk_costs_one_timeout_and_is_named(tmp_path: Path, task: str) -> None:
    fake = script(tmp_path / "bin", "rocm-sdk", "sleep 600")
    done, took = cli(task, "--arch", "gfx1100", path_first=fake.parent, tmp=tmp_path)
    assert "Traceback" not in done.stderr
    said = " ".join(done.stderr.split())
    assert f"{fake} did not answer `rocm-sdk path --root` within {TIMEOUT} s" in said
    # Asked once: the other two questions (version, targets) are not asked of a silent program.
    assert said.count(str(fake)) == 1
    assert took < 45, took


def test_a_hanging_hipcc_of_the_install_is_bounded(tmp_path: Path) -> None:
    root = tmp_path / "rocm"
    hipcc = script(root / "bin", "hipcc", "sleep 600")
    script(root / "bin", "hipconfig", "sleep 600")
    done, took = cli("doctor", "--arch", "gfx1100", "-o", str(root), tmp=tmp_path)
    said = " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr
    assert f"{hipcc} did not answer `hipcc --version` within {TIMEOUT} s" in said
    assert said.count(f"{hipcc} did not answer") == 1
    assert took < 60, took


def test_run_command_does_not_ask_a_silent_program_again(tmp_path: Path) -> None:
    forget_unanswered()
    slow = script(tmp_path, "slow", "sleep 600")
    first = run_command([str(slow), "--version"], timeout=0.5)
    start = time.monotonic()
    second = run_command([str(slow), "other"], timeout=0.5)
    assert first.timed_out and first.returncode == 124
    assert second.timed_out and time.monotonic() - start < 0.3
    assert unanswered() == ((str(slow), "did not answer `slow --version` within 0.5 s"),)
    forget_unanswered()
    assert unanswered() == ()


def test_the_probe_timeout_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROCMFORGE_PROBE_TIMEOUT_S", "3.5")
    assert probe_timeout() == 3.5
    monkeypatch.setenv("ROCMFORGE_PROBE_TIMEOUT_S", "soon")
    assert probe_timeout() == 10.0
