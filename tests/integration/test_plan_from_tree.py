"""Facts from the tree drive the plan (issue 16): a PyTorch release newer than every table row is
planned and preflighted from its own files once the checkout exists, with each fact's source;
before the checkout the plan says its facts are estimates. Real git checkouts of the era
fixtures (tests/treefixtures.py), the real CLI, Debian's real cmake 3.25 against the tree's
floors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from treefixtures import EraRepo, build_era_repo

REPO_ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.needs_tool("git", "hipcc", "cmake")


@pytest.fixture(scope="module")
def eras(tmp_path_factory: pytest.TempPathFactory) -> EraRepo:
    return build_era_repo(tmp_path_factory.mktemp("eras"))


def _invoke(*args: str, eras: EraRepo, work: Path, ref: str) -> subprocess.CompletedProcess[str]:
    """The real CLI, with the repository, ref and work dir as settings (ROCMFORGE_*), which
    every task reads the same way."""
    env = {**os.environ, "ROCMFORGE_PYTORCH_REPO": str(eras.path), "ROCMFORGE_PYTORCH_REF": ref,
           "ROCMFORGE_WORK_DIR": str(work)}
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=180)


def _plan(eras: EraRepo, work: Path, ref: str) -> dict:
    done = _invoke("plan", "--json", "--arch", "gfx90a", eras=eras, work=work, ref=ref)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_future_release_is_planned_and_preflighted_from_its_own_files(
    eras: EraRepo, tmp_path: Path
) -> None:
    work = tmp_path / "w"
    before = _plan(eras, work, "v2.99.0")
    facts = before["settings"]["pytorch_facts"]
    assert facts["tree"] == ""
    assert facts["facts"]["version"]["value"] == "2.99.0"
    assert facts["facts"]["version"]["origin"] == "ref"
    assert facts["facts"]["cmake_min"]["origin"] == "table"
    assert any("estimates from config/pytorch.toml" in n for n in before["notes"])
    steps = {s["name"]: s for s in before["steps"]}
    estimated = steps["tree-facts"]["inputs"]

    done = _invoke("checkout", eras=eras, work=work, ref="v2.99.0")
    assert done.returncode == 0, done.stderr

    after = _plan(eras, work, "v2.99.0")
    facts = after["settings"]["pytorch_facts"]
    assert facts["tree"] == str(work / "src" / "pytorch")
    got = {name: (f["value"], f["origin"], f["source"]) for name, f in facts["facts"].items()}
    assert got["version"] == ("2.99.0", "tree", "tree: version.txt:1")
    assert got["cmake_min"][:2] == ("3.31", "tree")
    assert got["cmake_min"][2].startswith("tree: CMakeLists.txt:")
    assert got["cxx_std"][:2] == ("23", "tree")
    assert got["gcc_min"][:2] == ("13.1", "tree")
    assert got["build_backend"][:2] == ("scikit_build_core.build", "tree")
    assert got["python"][1] == "tree"
    assert any("the tree and the table disagree: cmake_min" in n for n in after["notes"])
    steps = {s["name"]: s for s in after["steps"]}
    # The plan follows the tree: scikit-build-core, no configure-only step, `python -m build`.
    assert "configure" not in steps and "build-check" in steps
    assert steps["build"]["argv"][1:] == ["-m", "build", "--wheel", "--no-isolation"]
    assert steps["tree-facts"]["inputs"]["assumed:cmake_min"] == "3.31"
    # The tree's floors replace the table's estimate: the step's inputs change with them.
    assert estimated["assumed:cmake_min"] == "3.27"
    # Preflight judges this machine by the tree's floors: Debian's cmake 3.25 < 3.31.
    assert "cmake" in steps["preflight"]["inputs"]["fail_rows"]

    doctor = _invoke("doctor", "--json", "--arch", "gfx90a", eras=eras, work=work, ref="v2.99.0")
    rows = {r["check"]: r for r in json.loads(doctor.stdout)["rows"]}
    assert rows["cmake"]["status"] == "FAIL"
    assert "older than 3.31, the minimum for PyTorch 2.99.0" in rows["cmake"]["detail"]


def test_a_branch_named_like_a_word_gets_its_version_from_version_txt(
    eras: EraRepo, tmp_path: Path
) -> None:
    work = tmp_path / "w"
    done = _invoke("checkout", eras=eras, work=work, ref="oom")
    assert done.returncode == 0, done.stderr
    facts = _plan(eras, work, "oom")["settings"]["pytorch_facts"]["facts"]
    assert (facts["version"]["value"], facts["version"]["origin"]) == ("2.9.1", "tree")
    assert facts["build_style"]["value"] == "build"


def test_the_build_stops_right_after_the_checkout_when_the_tree_changes_the_plan(
    eras: EraRepo, tmp_path: Path
) -> None:
    """Planned from the table (no checkout yet), the build checks out v2.99.0 and its tree-facts
    step finds other floors: it stops before patches, venv and hipify, naming each fact; the
    same command again plans from the tree and preflight then judges by the tree's CMake."""
    work = tmp_path / "w"
    first = _invoke("build", "--arch", "gfx90a", "--skip-preflight", "--triton", "skip",
                    eras=eras, work=work, ref="v2.99.0")
    assert first.returncode == 1, first.stdout + first.stderr
    assert "==> [4/15] tree-facts:" in first.stdout
    assert "cmake_min: 3.31 (tree: CMakeLists.txt:1)" in first.stdout
    paragraph = " ".join(first.stderr.split())
    assert ("The checkout of v2.99.0 (PyTorch 2.99.0 (newer than the kit's table; its newest "
            "row, 2.17, fills what the tree does not say)) needs other build facts than this "
            "plan assumed:") in paragraph
    assert "cmake_min: planned 3.27, the tree says 3.31" in paragraph
    assert "run the same command again: the plan is then made from the checkout's own facts" \
        in paragraph
    assert not (work / "venv").exists()
    second = _invoke("build", "--arch", "gfx90a", "--triton", "skip", eras=eras, work=work,
                     ref="v2.99.0")
    assert second.returncode == 1
    assert "cmake 3.25.1 at /usr/bin/cmake is older than 3.31" in second.stdout + second.stderr
