"""Bad input to the build tasks through the real CLI: one paragraph, exit 2, nothing written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def invoke(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120)


def test_unknown_triton_mode_is_exit_2_and_writes_nothing(tmp_path: Path) -> None:
    done = invoke("build", "--arch", "gfx1100", "--work-dir", str(tmp_path / "w"),
                  "--triton", "maybe")
    assert done.returncode == 2
    assert "--triton 'maybe' is not a Triton mode" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "w").exists()


def test_install_without_a_finished_build_is_exit_2(tmp_path: Path) -> None:
    done = invoke("install", "--work-dir", str(tmp_path / "w"), "--python", sys.executable)
    assert done.returncode == 2
    assert "manifest.json is missing or not a rocmforge manifest" in done.stderr


def test_clean_removes_only_kit_folders(tmp_path: Path) -> None:
    work = tmp_path / "w"
    (work / "logs").mkdir(parents=True)
    (work / "state" / "stamps").mkdir(parents=True)
    (work / "src" / "pytorch" / "build").mkdir(parents=True)
    (work / "notes.txt").write_text("mine")
    done = invoke("clean", "--work-dir", str(work))
    assert done.returncode == 0, done.stderr
    assert not (work / "src" / "pytorch" / "build").exists()
    assert not (work / "state" / "stamps").exists()
    assert (work / "src" / "pytorch").exists()
    done = invoke("clean", "--all", "--work-dir", str(work))
    assert done.returncode == 0
    assert sorted(p.name for p in work.iterdir()) == ["notes.txt"]
