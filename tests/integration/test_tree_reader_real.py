"""The tree reader on the shapes real upstream files have (issue 29 item 5): HIP's
if(HIP_FOUND) gate, components looked for only on some ROCm releases or in one branch of an
if/else, git merge-conflict markers (a real `git merge`), and exact line numbers.

The LoadHIP.cmake text below has the structure of pytorch/pytorch cmake/public/LoadHIP.cmake
of the 2.x releases (find_package_and_print_version(HIP 1.0) at top level, every other
component inside if(HIP_FOUND), hipblaslt behind a ROCM_VERSION_DEV test); it is written here,
not copied."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rocmforge.errors import UsageError
from rocmforge.knowledge.releases import pytorch_release_for
from rocmforge.plan.cmake_condition import evaluate, rocm_variables
from rocmforge.plan.pytorch import PytorchSide, stop_on_unreadable_tree
from rocmforge.plan.pytorch_facts import facts_for
from rocmforge.probes.tree import MALFORMED, read_tree_facts

LOADHIP = """\
set(PYTORCH_FOUND_HIP FALSE)
find_package_and_print_version(HIP 1.0)

if(HIP_FOUND)
  set(PYTORCH_FOUND_HIP TRUE)
  # these are required by every release
  find_package_and_print_version(rocblas REQUIRED)
  find_package_and_print_version(miopen REQUIRED)
  if(ROCM_VERSION_DEV VERSION_GREATER_EQUAL "5.7.0")
    find_package_and_print_version(hipblaslt REQUIRED)
  endif()
  if(UNIX)
    find_package_and_print_version(rccl)
  else()
    find_package_and_print_version(rccl_windows REQUIRED)
  endif()
endif()
"""


def _tree(root: Path, loadhip: str = LOADHIP) -> Path:
    (root / "cmake" / "public").mkdir(parents=True)
    (root / "cmake" / "public" / "LoadHIP.cmake").write_text(loadhip)
    (root / "version.txt").write_text("2.9.1\n")
    return root


def test_hip_gates_every_component_so_it_is_required(tmp_path: Path) -> None:
    facts = read_tree_facts(_tree(tmp_path))
    parts = {c.name: c for c in facts.rocm_components.value or ()}
    assert (parts["HIP"].required, parts["HIP"].line, parts["HIP"].condition) == (True, 2, "")
    assert (parts["rocblas"].line, parts["rocblas"].condition) == (7, "HIP_FOUND")
    assert parts["hipblaslt"].line == 10
    assert parts["rccl"].condition == "HIP_FOUND AND UNIX"
    assert parts["rccl_windows"].condition == "HIP_FOUND AND NOT (UNIX)"


def test_conditions_decide_per_rocm_release(tmp_path: Path) -> None:
    from rocmforge.plan.gather import component_report
    from rocmforge.probes.facts import gather_facts
    from rocmforge.settings import Settings

    tree = read_tree_facts(_tree(tmp_path))
    parts = {c.name: c for c in tree.rocm_components.value or ()}
    old, new = rocm_variables("5.2"), rocm_variables("6.4.1")
    assert evaluate(parts["hipblaslt"].condition, old) is False
    assert evaluate(parts["hipblaslt"].condition, new) is True
    assert evaluate(parts["rccl_windows"].condition, new) is False
    assert evaluate(parts["rccl"].condition, new) is True
    assert evaluate("HIP_FOUND AND SOME_OPTION", new) is None  # unknown: kept as written
    # Doctor on this machine's real ROCm 5.2 (Debian, at /usr): hipblaslt is not asked for,
    # and neither is the Windows branch.
    facts = gather_facts(Settings())
    if facts.rocm is None:
        from conftest import missing_real_part

        missing_real_part("no ROCm install (Debian's hipcc and libamdhip64-dev, see .ci/run)")
    side = PytorchSide(facts=facts_for("v2.9.1", tree), release=pytorch_release_for("v2.9.1"),
                       from_tree=True)
    report = component_report(facts, side)
    assert report is not None
    asked = [c.name for c, _found in report]
    assert "hipblaslt" not in asked and "rccl_windows" not in asked
    assert {"hip", "rocblas", "miopen", "rccl"} <= {n.lower() for n in asked}


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), "-c", "user.name=t", "-c", "user.email=t@t",
                    *args], check=True, capture_output=True, timeout=60)


@pytest.mark.needs_tool("git")
def test_a_real_merge_conflict_in_version_txt_stops_with_the_file_named(tmp_path: Path) -> None:
    root = _tree(tmp_path / "pytorch")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "2.9.1")
    _git(root, "checkout", "-qb", "other")
    (root / "version.txt").write_text("2.10.0a0\n")
    _git(root, "commit", "-qam", "2.10")
    _git(root, "checkout", "-q", "main")
    (root / "version.txt").write_text("2.9.2\n")
    _git(root, "commit", "-qam", "2.9.2")
    merged = subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c",
                             "user.email=t@t", "merge", "other"], capture_output=True, text=True)
    assert merged.returncode != 0 and "CONFLICT" in merged.stdout
    facts = read_tree_facts(root)
    assert facts.version.status == MALFORMED
    assert facts.problems == ("tree: version.txt:1: has unresolved merge-conflict markers (a `git "
                              "merge`, `git pull` or `git stash pop` stopped halfway)",)
    with pytest.raises(UsageError) as stopped:
        stop_on_unreadable_tree(facts)
    paragraph = stopped.value.paragraph()
    assert f"the checkout at {root} cannot be read: tree: version.txt" in paragraph
    assert f"git -C {root} status" in paragraph


def test_conflict_markers_in_any_file_read_are_named_with_their_line(tmp_path: Path) -> None:
    root = _tree(tmp_path, LOADHIP.replace(
        "  find_package_and_print_version(miopen REQUIRED)\n",
        "<<<<<<< HEAD\n  find_package_and_print_version(miopen REQUIRED)\n=======\n"
        "  find_package_and_print_version(MIOpen REQUIRED)\n>>>>>>> theirs\n"))
    facts = read_tree_facts(root)
    assert "tree: cmake/public/LoadHIP.cmake:8: has unresolved merge-conflict markers" in (
        facts.problems)
    with pytest.raises(UsageError, match="LoadHIP.cmake:8"):
        stop_on_unreadable_tree(facts)


def test_line_numbers_are_exact_after_a_blank_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "torch"\n\nrequires-python = ">=3.10"\n')
    (tmp_path / "version.txt").write_text("2.9.1\n")
    facts = read_tree_facts(tmp_path)
    assert facts.requires_python.source == "tree: pyproject.toml:8"
    assert facts.build_backend.source == "tree: pyproject.toml:3"
