"""The kit's own version in the reports meant for bug reports (doctor --json, verify's JSON),
and counts in messages in the right grammatical number ("1 path", not "1 paths") (issue 18
item 14)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gitfixtures import commit_files, git, new_repo

import rocmforge
from rocmforge.render import count
from rocmforge.settings import resolve
from rocmforge.sources import checkout_pytorch
from rocmforge.sources.checkout import DirtyTree

REPO = Path(__file__).resolve().parents[2]


def test_doctor_json_names_the_kits_version() -> None:
    done = subprocess.run([sys.executable, "-m", "invoke", "doctor", "--arch", "gfx1100",
                           "--json"], cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_COLOR": "1", "HIP_PLATFORM": "amd"})
    doc = json.loads(done.stdout)
    assert doc["schema"] == "rocmforge.doctor/1"
    assert doc["rocmforge_version"] == rocmforge.__version__ == "0.1.0"


@pytest.mark.needs_import("torch")
def test_verify_json_names_the_kits_version(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "rocmforge.verify", "--device", "cpu", "--only",
                           "build", "--json", str(report)], cwd=REPO, capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)})
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(report.read_text())
    assert doc["schema"] == "rocmforge.verify/1"
    assert doc["rocmforge_version"] == rocmforge.__version__


@pytest.mark.parametrize(("number", "noun", "plural", "text"), [
    (0, "path", "", "0 paths"),
    (1, "path", "", "1 path"),
    (2, "path", "", "2 paths"),
    (1, "patch", "patches", "1 patch"),
    (3, "patch", "patches", "3 patches"),
])
def test_count(number: int, noun: str, plural: str, text: str) -> None:
    assert count(number, noun, plural) == text


@pytest.mark.needs_tool("git")
def test_one_changed_path_is_one_path(tmp_path: Path) -> None:
    """A real checkout with one local change: the refusal says "1 path"."""
    remote = new_repo(tmp_path / "remote")
    commit_files(remote, {"a.txt": "one\n"}, "one")
    git("tag", "v1", cwd=remote)
    commit_files(remote, {"a.txt": "two\n"}, "two")
    git("tag", "v2", cwd=remote)
    settings = resolve(defaults={"work_dir": str(tmp_path / "w"),
                                 "pytorch_repo": remote.as_uri(), "pytorch_ref": "v1"})
    result, _, _ = checkout_pytorch(settings)
    (result.path / "a.txt").write_text("edited\n")
    moved = resolve(defaults={"work_dir": str(tmp_path / "w"), "pytorch_repo": remote.as_uri(),
                              "pytorch_ref": "v2"})
    with pytest.raises(DirtyTree) as caught:
        checkout_pytorch(moved)
    assert f"{result.path} has local changes (1 path: a.txt); not checking out v2" in \
        caught.value.paragraph()
