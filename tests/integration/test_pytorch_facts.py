"""rocmforge.plan.pytorch_facts and `invoke knowledge`: the tree first, the table second,
every fact with its source, and the disagreements listed. Real git trees of each era
(tests/treefixtures.py), the kit's real config/pytorch.toml, and the real `invoke` program."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from treefixtures import PIN_29, PIN_FUTURE, EraRepo, build_era_repo

from rocmforge.errors import UsageError
from rocmforge.knowledge.releases import pytorch_release_for
from rocmforge.plan.pytorch_facts import (
    FACT_NAMES,
    SCHEMA,
    PytorchFacts,
    facts_for,
    pytorch_facts,
)
from rocmforge.probes.tree import TreeFacts, read_tree_facts

pytestmark = pytest.mark.needs_tool("git")
KIT = Path(__file__).resolve().parents[2]
SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def eras(tmp_path_factory: pytest.TempPathFactory) -> EraRepo:
    return build_era_repo(tmp_path_factory.mktemp("eras"))


@pytest.fixture(scope="module")
def checkouts(eras: EraRepo, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("checkouts")
    return {ref: eras.worktree(ref, root / ref)
            for ref in ("v2.4.0", "v2.9.1", "v2.14.0", "v2.99.0", "oom")}


@pytest.fixture(scope="module")
def trees(checkouts: dict[str, Path]) -> dict[str, TreeFacts]:
    return {ref: read_tree_facts(path) for ref, path in checkouts.items()}


def _table(facts: PytorchFacts) -> dict[str, tuple[str, str, str]]:
    return {name: (f.value, f.origin, f.source) for name, f in facts.facts.items()}


# ------------------------------------------------------------------------------ the future


def test_a_tree_newer_than_every_row_is_followed_in_every_fact(
    trees: dict[str, TreeFacts],
) -> None:
    facts = facts_for("main", trees["v2.99.0"])
    assert (facts.table_row, facts.row_is_estimate) == ("2.17", True)
    assert _table(facts) == {
        "version": ("2.99.0", "tree", "tree: version.txt:1"),
        "triton_pin": (PIN_FUTURE, "tree", "tree: .ci/docker/ci_commit_pins/triton.txt:1"),
        "triton_pin_file": (".ci/docker/ci_commit_pins/triton.txt", "tree",
                            "tree: .ci/docker/ci_commit_pins/triton.txt"),
        "triton_version": ("4.0.0", "tree", "tree: .ci/docker/triton_version.txt:1"),
        "cmake_min": ("3.31", "tree", "tree: CMakeLists.txt:1"),
        "cmake_pin": (">=3.31", "tree", "tree: requirements-build.txt:3"),
        "cxx_std": ("23", "tree", "tree: CMakeLists.txt:19"),
        "gcc_min": ("13.1", "tree", "tree: CMakeLists.txt:28"),
        "clang_min": ("18", "tree", "tree: CMakeLists.txt:37"),
        "build_backend": ("scikit_build_core.build", "tree", "tree: pyproject.toml:10"),
        "build_style": ("build", "tree",
                        "tree: scikit-build-core backend: only python -m build can build it"),
        "python": (">=3.12,<3.17", "tree",
                   "tree: pyproject.toml:14 + tree: pyproject.toml [project] classifiers"),
        "rocm_components": (
            "hip amd_comgr rocrand rocblas miopen rocshmem(optional) hiprtc hipblaslt "
            "rccl(optional) hsa-runtime64 hipdnn hipsparselt(optional)", "tree",
            "tree: cmake/public/LoadHIP.cmake:11"),
        # LoadHIP's own FATAL_ERROR floor (ROCM_VERSION_DEV_INT LESS 71400), not the wheel list.
        "rocm_min": ("7.14", "tree", "tree: cmake/public/LoadHIP.cmake:31"),
    }
    assert facts.rocm_minimum == "7.14"
    assert (facts.version, facts.cmake_minimum, facts.cxx_standard, facts.gcc_minimum,
            facts.clang_minimum, facts.python, facts.scikit_build_core, facts.build_style) == (
        "2.99.0", "3.31", 23, "13.1", 18, ">=3.12,<3.17", True, "build")
    assert [(d.fact, d.tree_value, d.table_value) for d in facts.disagreements] == [
        ("cmake_min", "3.31", "3.27"),
        ("cxx_std", "23", "20"),
        ("gcc_min", "13.1", "11.3"),
        ("clang_min", "18", "16"),
        ("python", ">=3.12,<3.17", ">=3.11,<3.16"),
    ]
    assert facts.disagreements[1].sentence() == (
        "cxx_std: the tree says 23 (tree: CMakeLists.txt:19), the table says 20 (table: "
        "config/pytorch.toml 2.17 (estimate: the newest row)); the tree's value is used")
    assert "hipdnn" in [c.name for c in facts.rocm_components]


# --------------------------------------------------------------------------- the three eras


def test_era_facts_agree_with_their_rows(trees: dict[str, TreeFacts]) -> None:
    old = facts_for("v2.4.0", trees["v2.4.0"])
    assert old.table_row == "2.4" and not old.row_is_estimate
    assert (old.version, old.cxx_standard, old.gcc_minimum, old.clang_minimum, old.python,
            old.build_style, old.scikit_build_core) == (
        "2.4.0", 17, "9.3", 0, ">=3.8,<3.13", "setup.py", False)
    assert old["triton_pin_file"].value == ".ci/docker/ci_commit_pins/triton-rocm.txt"
    assert old["build_style"].source == "table: config/pytorch.toml 2.4"
    assert old["clang_min"].source == (
        "tree: CMakeLists.txt (no Clang version check that stops the configure)")
    assert old["clang_min"].table_value == "none"
    assert old.disagreements == ()

    new = facts_for("v2.14.0", trees["v2.14.0"])
    assert (new.version, new.cxx_standard, new.gcc_minimum, new.clang_minimum, new.python,
            new.build_style, new.scikit_build_core) == (
        "2.14.0", 20, "11.3", 16, ">=3.10,<3.16", "build", True)
    assert new.disagreements == ()


def test_a_branch_named_like_a_word_is_its_version_txt(trees: dict[str, TreeFacts]) -> None:
    facts = facts_for("oom", trees["oom"])
    assert (facts.table_row, facts.row_is_estimate, facts.version) == ("2.9", False, "2.9.1")
    # The CMake floor is the tree's 3.18, not the newest row's 3.27.
    assert (facts.cmake_minimum, facts["cmake_min"].source) == ("3.18", "tree: CMakeLists.txt:1")
    assert facts["triton_pin"].value == PIN_29
    # 2.9.1 pins Triton 3.5.1; the 2.9 row's hint is 2.9.0's 3.5.0: listed, the tree wins.
    assert [(d.fact, d.tree_value, d.table_value) for d in facts.disagreements] == [
        ("triton_version", "3.5.1", "3.5.0")]


# ------------------------------------------------------------------- before any checkout


@pytest.mark.parametrize("ref", ["main", "nightly", SHA, "oom"])
def test_no_tree_and_no_release_ref_claims_no_version(ref: str) -> None:
    facts = facts_for(ref)
    assert (facts.version, facts["version"].origin, facts.table_row, facts.row_is_estimate) == (
        "", "unknown", "2.17", True)
    assert facts["version"].source == (
        f"unknown: {ref!r} names no release: its version.txt decides once it is checked out")
    assert facts["cxx_std"].source == "table: config/pytorch.toml 2.17 (estimate: the newest row)"
    assert facts["triton_pin"].origin == "unknown"
    assert facts.disagreements == ()


def test_a_release_tag_names_its_version_before_the_checkout() -> None:
    facts = facts_for("v2.12.1")
    assert _table(facts)["version"] == ("2.12.1", "ref", "ref: v2.12.1")
    assert (facts.cxx_standard, facts.gcc_minimum, facts["cxx_std"].source) == (
        20, "11.3", "table: config/pytorch.toml 2.12")
    assert facts["clang_min"].origin == "unknown" and facts.clang_minimum == 0


def test_no_tree_no_row_gives_defaults_and_unknowns() -> None:
    facts = pytorch_facts(None, None)
    assert facts["build_style"].origin == "default"
    assert facts["build_style"].source == "default: python -m build works with every build backend"
    assert {f.origin for n, f in facts.facts.items() if n != "build_style"} == {"unknown"}
    assert set(facts.facts) == set(FACT_NAMES)


def test_a_broken_tree_file_falls_back_to_the_table_and_says_why(tmp_path: Path) -> None:
    (tmp_path / "version.txt").write_text("2.13.0\n")
    (tmp_path / "CMakeLists.txt").write_text("set(CMAKE_CXX_STANDARD latest)\n")
    facts = facts_for("main", read_tree_facts(tmp_path))
    why = "CMAKE_CXX_STANDARD is set to 'latest', not a number such as 17 or 20"
    assert _table(facts)["cxx_std"] == ("20", "table", "table: config/pytorch.toml 2.13")
    assert facts["cxx_std"].tree_problem == why
    assert facts.problems == (f"tree: CMakeLists.txt:1: {why}",)
    # A CMakeLists.txt without cmake_minimum_required states no floor: the table's is used.
    assert _table(facts)["cmake_min"] == ("3.27", "table", "table: config/pytorch.toml 2.13")
    # ... but one without a GCC check does state that there is none.
    assert _table(facts)["gcc_min"] == (
        "", "tree", "tree: CMakeLists.txt (no GCC version check that stops the configure)")
    assert [d.fact for d in facts.disagreements] == ["gcc_min", "clang_min"]


def test_a_tree_older_than_the_table_is_still_described(tmp_path: Path) -> None:
    (tmp_path / "version.txt").write_text("2.3.1\n")
    facts = facts_for("main", read_tree_facts(tmp_path))
    assert (facts.version, facts.table_row) == ("2.3.1", "")
    assert facts.problems == ("no table row applies: PyTorch 2.3 (from version.txt 2.3.1) is "
                              "older than the kit supports",)
    with pytest.raises(UsageError):
        facts_for("v2.3.1")


def test_the_table_row_facts_are_beside_the_tree_facts(trees: dict[str, TreeFacts]) -> None:
    row = dataclasses.replace(pytorch_release_for("v2.14.0"), cxx_std=17, gcc_min="9.3")
    facts = pytorch_facts(trees["v2.14.0"], row)
    assert (facts["cxx_std"].value, facts["cxx_std"].table_value) == ("20", "17")
    assert [d.fact for d in facts.disagreements] == ["cxx_std", "gcc_min"]


def test_the_json_document_is_versioned(trees: dict[str, TreeFacts]) -> None:
    document = facts_for("oom", trees["oom"]).as_dict()
    assert document["schema"] == SCHEMA == "rocmforge.pytorch_facts/1"
    assert document["table_row"] == "2.9"
    assert document["facts"]["version"] == {
        "value": "2.9.1", "origin": "tree", "source": "tree: version.txt:1",
        "table_value": "2.9", "table_source": "table: config/pytorch.toml 2.9", "tree_problem": ""}
    assert json.loads(json.dumps(document)) == document


# ------------------------------------------------------------------------- invoke knowledge


def _invoke(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(KIT), "NO_COLOR": "1", "HIP_PLATFORM": "amd"}
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=KIT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_invoke_knowledge_prints_each_fact_source_and_row(checkouts: dict[str, Path]) -> None:
    done = _invoke("knowledge", "--tree", str(checkouts["v2.99.0"]))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (f"PyTorch facts of {checkouts['v2.99.0']} (table row: 2.17 (estimate: "
                        "the newest row; the tree is newer than the table))")
    rows = {line.split()[0]: line.split() for line in lines[3:16]}
    assert rows["cxx_std"] == ["cxx_std", "23", "tree:", "CMakeLists.txt:19", "20"]
    assert rows["gcc_min"] == ["gcc_min", "13.1", "tree:", "CMakeLists.txt:28", "11.3"]
    assert rows["rocm_components"][:4] == ["rocm_components", "12", "packages", "(listed"]
    assert "Where the table and the tree disagree (the tree wins)" in lines
    assert any(line.startswith("hipdnn ") and " yes " in line for line in lines)


def test_invoke_knowledge_json(checkouts: dict[str, Path]) -> None:
    done = _invoke("knowledge", "--tree", str(checkouts["v2.9.1"]), "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)["pytorch"]
    assert (document["schema"], document["table_row"], document["tree"]) == (
        SCHEMA, "2.9", str(checkouts["v2.9.1"]))
    assert document["facts"]["cmake_pin"]["value"] == ">=3.27"


def test_invoke_knowledge_defaults_to_the_work_dirs_checkout(tmp_path: Path) -> None:
    """No --tree and no checkout in the work dir: a note, then the ROCm install's facts (this
    machine's Debian ROCm under /usr), exit 0."""
    done = _invoke("knowledge", "-w", str(tmp_path / "w"))
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(f"note: no PyTorch checkout at {tmp_path / 'w'}/src/pytorch")
    assert done.stdout.startswith(
        "ROCm facts of /usr (its own first, config/rocm.toml 5.2 second)\n")
    rows = {line.split()[0]: line for line in done.stdout.splitlines() if line}
    assert rows["layout"].split(None, 1)[1].startswith("distro /usr")
    assert "install: /usr/include/hip/hip_version.h" in rows["version"]
    assert "hip 5.2.0" in rows["components"] and "rocrand 2.10.9" in rows["components"]
    assert not (tmp_path / "w").exists()  # knowledge reads; it makes no work dir


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("knowledge", "--tree", "/nonexistent/pytorch"),
         "rocmforge: /nonexistent/pytorch is not a directory."),
    ],
)
def test_invoke_knowledge_bad_input_is_exit_2(args: tuple[str, ...], message: str) -> None:
    done = _invoke(*args)
    assert done.returncode == 2
    assert done.stderr.startswith(message)
    assert "Traceback" not in done.stderr
