"""The conditions the held-out preflight round missed (tests/failures/preflight/RESULTS.md),
each made as benchmarks/preflight_round.py makes it, with real parts: the real cmake against a
Fedora-shaped hip config and a fixture PyTorch tree (a real git checkout from
tests/treefixtures.py) whose LoadHIP.cmake asks find_package(HIP 1.0) (c28)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from test_doctor import system
from treefixtures import build_era_repo

from rocmforge.plan.hazard_rows import prefix_rows
from rocmforge.probes.facts import _prefix_configs
from rocmforge.probes.system import ToolVersion
from rocmforge.settings import Settings

CMAKE = Path("/usr/bin/cmake")


def _fedora_hip(prefix: Path) -> Path:
    """Fedora 40's hip config in shape (ROCm/hip#3520): version 6.0.0, its version file accepts
    only a request of the same major version. Under lib/cmake, which Debian's CMake searches
    (Fedora's lib64/cmake it does not)."""
    folder = prefix / "lib" / "cmake" / "hip"
    folder.mkdir(parents=True)
    (folder / "hip-config.cmake").write_text('set(HIP_VERSION "6.0.0")\n')
    (folder / "hip-config-version.cmake").write_text(
        'set(PACKAGE_VERSION "6.0.0")\nif(PACKAGE_FIND_VERSION_MAJOR STREQUAL "6")\n'
        "  set(PACKAGE_VERSION_COMPATIBLE TRUE)\nelse()\n"
        "  set(PACKAGE_VERSION_COMPATIBLE FALSE)\nendif()\n")
    return prefix


@pytest.mark.needs_tool("cmake")
@pytest.mark.parametrize(("era", "status"), [("v2.4.0", "FAIL"), ("v2.9.1", "OK")])
def test_a_config_refusing_the_version_the_tree_asks_fails(tmp_path: Path, era: str,
                                                           status: str) -> None:
    """c28: the v2.4.0 tree's LoadHIP.cmake asks find_package(HIP 1.0), which Fedora's hip
    6.0.0 config refuses; the v2.9.1 tree asks hip with no version, which it accepts."""
    if shutil.which("git") is None:
        pytest.skip("git is needed for the fixture tree")
    prefix = _fedora_hip(tmp_path / "fedora-hip")
    repo = build_era_repo(tmp_path / "repo")
    checkout = repo.worktree(era, tmp_path / "work" / "src" / "pytorch")
    machine = system(cmake=ToolVersion(path=CMAKE, version="3.25.1"))
    found = _prefix_configs(machine, {"CMAKE_PREFIX_PATH": str(prefix), "PATH": "/usr/bin:/bin"},
                            checkout)
    assert [(c.package, c.configures) for c in found] == [("hip", status == "OK")]
    (row,) = prefix_rows(found)
    assert (row.check, row.status) == ("CMAKE_PREFIX_PATH", status)
    if status == "FAIL":
        assert found[0].version == "1.0"
        assert found[0].asked_by.startswith("cmake/public/LoadHIP.cmake:")
        assert "find_package(hip 1.0)" in row.detail
        assert 'compatible with requested version "1.0"' in row.detail
        assert "version: 6.0.0" in row.detail


# --- c30: xformers' compile processes -------------------------------------------------------

def test_xformers_gets_a_memory_row_from_the_tables_figure() -> None:
    """c30 (facebookresearch/xformers#1409): `--with xformers` on this round's machine, 2
    cores and 23.5 GiB, gave no memory row; its recipe has no mem_file and no job variable."""
    from rocmforge.knowledge.extensions import load_extensions
    from rocmforge.plan.job_memory_rows import job_memory_doctor

    recipe = load_extensions().recipes["xformers"]
    assert recipe.mem_per_job_gib == 30.0 and recipe.jobs_vars == ()
    settings = Settings(companions=("xformers",))
    # One process needs more than the machine has: certain to run out.
    (row,) = job_memory_doctor(settings, {"MAX_JOBS": "2"}, cores=2, mem_total_gib=23.5,
                               peek=lambda *_: "unused")
    assert (row.check, row.status) == ("compile job memory xformers", "FAIL")
    assert "2 x 30 = 60 GiB" in row.detail and "23.5 GiB" in row.detail
    assert "#1409" in row.detail and "MAX_JOBS" in row.fix
    # 16 cores, 128 GiB (the report's machine class): 4 processes fit.
    (row,) = job_memory_doctor(settings, {}, cores=16, mem_total_gib=128.0,
                               peek=lambda *_: "unused")
    assert row.status == "WARN" and "4 process(es) fit" in row.detail
    assert row.fix.startswith("export ROCMFORGE_MAX_JOBS=4   #")
    # Enough memory for a process per core: OK, by the table's figure.
    (row,) = job_memory_doctor(settings, {}, cores=4, mem_total_gib=256.0,
                               peek=lambda *_: "unused")
    assert row.status == "OK" and "the table's figure" in row.detail


# --- c19: Composable Kernel's own target list ----------------------------------------------

# The target lists of CK's top CMakeLists.txt, in its shape (the fixture names its source).
CK_CMAKE_NEW = (Path(__file__).parents[1] / "fixtures" / "composable_kernel"
                / "targets.cmake").read_text()
# An older CK (ROCm/composable_kernel@00115f80f6baaae41ae4774e86317ee383906dca:CMakeLists.txt):
# default lists only, no refused list.
CK_CMAKE_OLD = """\
if(NOT WIN32 AND ${hip_VERSION_FLAT} LESS 600300000)
    set(CK_GPU_TARGETS "gfx908;gfx90a;gfx942;gfx1030;gfx1100;gfx1101;gfx1102")
elseif(NOT WIN32 AND ${hip_VERSION_FLAT} GREATER_EQUAL 600443483)
    set(CK_GPU_TARGETS "gfx908;gfx90a;gfx942;gfx950;gfx10-3-generic;gfx11-generic;gfx12-generic")
endif()
"""


def _ck_checkout(tmp_path: Path, cmake_text: str) -> Path:
    """The fixture PyTorch tree (a real git checkout) vendoring CK: the round's ck.hpp (its
    buffer-resource branch names gfx906) and `cmake_text` as CK's CMakeLists.txt."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from gitfixtures import commit_files, git
    from preflight_round import CK_HPP

    repo = build_era_repo(tmp_path / "repo")
    git("checkout", "-q", "-b", "ck", "v2.9.1", cwd=repo.path)
    commit_files(repo.path, {"third_party/composable_kernel/include/ck/ck.hpp": CK_HPP,
                             "third_party/composable_kernel/CMakeLists.txt": cmake_text},
                 "vendored CK")
    return repo.worktree("ck", tmp_path / "work" / "src" / "pytorch")


@pytest.mark.needs_tool("cmake")
def test_a_target_cks_cmake_refuses_is_named_though_ck_hpp_covers_it(tmp_path: Path) -> None:
    """c19 (ROCm/TheRock#1245): --arch gfx906 against a tree whose CK refuses gfx906; ck.hpp's
    groups cover it, so the row read OK before."""
    from rocmforge.plan.hazard_rows import ck_rows
    from rocmforge.probes.hazards import probe_hazards

    checkout = _ck_checkout(tmp_path, CK_CMAKE_NEW)
    # CK's own CMake refuses the target: run its lines with the real cmake.
    script = tmp_path / "ck.cmake"
    script.write_text("cmake_minimum_required(VERSION 3.14)\n" + CK_CMAKE_NEW)
    done = subprocess.run(["cmake", "-DGPU_TARGETS=gfx906", "-Dhip_VERSION_FLAT=700000000",
                           "-P", str(script)], capture_output=True, text=True, timeout=60)
    assert "CK is not supported for target gfx906" in done.stderr
    hazards = probe_hazards(rocm_root=None, checkout=checkout, sources=None, venv=None,
                            environ={})
    assert hazards.ck_targets is not None and "gfx906" in hazards.ck_targets
    assert hazards.ck_lists is not None
    assert hazards.ck_lists.unsupported == ("gfx900", "gfx906", "gfx90c")
    (row,) = ck_rows(hazards, ["gfx906"], ck_on=False)
    assert (row.check, row.status) == ("Composable Kernel", "WARN")
    assert "lists gfx906 in CK_UNSUPPORTED_GPU_TARGETS" in row.detail
    assert "ROCm/TheRock#1245" in row.detail
    (row,) = ck_rows(hazards, ["gfx90a", "gfx906"], ck_on=True)
    assert row.status == "FAIL" and row.fix == "invoke build --arch gfx90a   # without gfx906"
    (row,) = ck_rows(hazards, ["gfx90a", "gfx1031"], ck_on=True)
    assert row.status == "OK"


def test_an_older_ck_without_a_refused_list_warns_outside_its_defaults(tmp_path: Path) -> None:
    from rocmforge.plan.hazard_rows import ck_rows
    from rocmforge.probes.hazards import probe_hazards

    checkout = _ck_checkout(tmp_path, CK_CMAKE_OLD)
    hazards = probe_hazards(rocm_root=None, checkout=checkout, sources=None, venv=None,
                            environ={})
    # Only CK's default lists speak: a WARN even with the ck feature on (not a refusal).
    (row,) = ck_rows(hazards, ["gfx906"], ck_on=True)
    assert row.status == "WARN" and "builds CK by default for" in row.detail
    assert "not gfx906" in row.detail
    # gfx1031 is in the gfx10-3-generic family of the defaults.
    assert ck_rows(hazards, ["gfx1031", "gfx942"], ck_on=True)[0].status == "OK"


# --- c03 by hand: the CMake floor of a tree no lock file names ------------------------------

def _real_cmake_version() -> str:
    done = subprocess.run([str(CMAKE), "--version"], capture_output=True, text=True, timeout=60,
                          check=True)
    return done.stdout.split()[2]


@pytest.mark.needs_tool("cmake")
@pytest.mark.parametrize(("era", "status"), [("v2.14.0", "FAIL"), ("v2.4.0", "OK")])
def test_a_tree_placed_by_hand_gives_the_cmake_floor(tmp_path: Path, era: str,
                                                     status: str) -> None:
    """The round's c03 finding: a tree in src/pytorch with no lock file (here a real git
    checkout of the fixture era, as a person would clone it) was judged by the table's floor;
    Debian's cmake 3.25.1 passed against the v2.14.0 tree's cmake_minimum_required(3.27)."""
    from test_doctor import facts, row

    from rocmforge.plan.doctor import diagnose
    from rocmforge.plan.pytorch import pytorch_for
    from rocmforge.workdir import workdir_for

    work = tmp_path / "work"
    repo = build_era_repo(tmp_path / "repo")
    repo.worktree(era, work / "src" / "pytorch")
    settings = Settings(work_dir=str(work))
    side = pytorch_for(settings, workdir_for(settings.work_dir))
    assert not side.from_tree  # no lock: not the kit's checkout
    version = _real_cmake_version()
    rows = diagnose(facts(system=system(cmake=ToolVersion(path=CMAKE, version=version))), (),
                    settings)
    cmake = row(rows, "cmake")
    assert cmake.status == status, cmake.detail
    if status == "FAIL":
        assert side.release.cmake_min == "3.27"
        assert f"older than 3.27, the minimum for the checkout folder's tree ({work}" in (
            cmake.detail)
        assert "a tree no lock file names" in cmake.detail
    # With a lock file (the kit's own checkout of another ref) the tree is not read here.
    workdir_for(settings.work_dir).lock_file.write_text("")
    assert pytorch_for(settings, workdir_for(settings.work_dir)).release.cmake_min_source == ""


# --- c10d: pkg_resources in a module setup.py imports ---------------------------------------

# PyTorch's setup.py imports its helpers from the tree (pytorch/pytorch setup.py:
# `from tools.setup_helpers.env import build_type, IS_DARWIN, IS_LINUX, IS_WINDOWS`), and
# tools/setup_helpers/cmake.py imports env in turn.
SETUP_IMPORTING = ("import sys\nfrom tools.setup_helpers.cmake import CMake\n"
                   "from setuptools import setup\n")
HELPERS = {
    "tools/__init__.py": "",
    "tools/setup_helpers/__init__.py": "",
    "tools/setup_helpers/cmake.py": "from . import env\nfrom .env import IS_LINUX\n",
    "tools/setup_helpers/env.py": "import os\nimport pkg_resources\nIS_LINUX = True\n",
    # Not imported by setup.py: not what the build loads.
    "tools/setup_helpers/unused.py": "import pkg_resources\n",
}


def test_pkg_resources_in_a_module_setup_py_imports_is_found(tmp_path: Path) -> None:
    import dataclasses

    from gitfixtures import commit_files, git

    from rocmforge.plan.hazard_rows import hazard_rows
    from rocmforge.probes.hazards import probe_hazards

    repo = build_era_repo(tmp_path / "repo")
    git("checkout", "-q", "-b", "helpers", "v2.9.1", cwd=repo.path)
    commit_files(repo.path, {"setup.py": SETUP_IMPORTING, **HELPERS}, "helpers")
    sources = tmp_path / "work" / "src"
    repo.worktree("helpers", sources / "pytorch")
    hazards = probe_hazards(rocm_root=None, checkout=sources / "pytorch", sources=sources,
                            venv=None, environ={})
    assert hazards.checkout_pkg_resources == (
        "pytorch/tools/setup_helpers/env.py (setup.py imports it)",)
    assert hazards.pkg_resources == ()  # the companions' setup.py files only
    # With setuptools 82 in the build venv (made for real by benchmarks/preflight_round.py
    # c10d): the build-requirements step pins setuptools below 82 (tests/integration/
    # test_hazards.py runs it with real pip), so doctor says so, naming the module.
    hazards = dataclasses.replace(hazards, venv_setuptools="82.0.0")
    rows = {r.check: r for r in hazard_rows(hazards, cmake_version="3.25.1",
                                            cmake_policy_minimum="3.5", venv="/w/venv")}
    assert rows["setuptools"].status == "OK"
    assert "installs 'setuptools<82'" in rows["setuptools"].detail
    assert "tools/setup_helpers/env.py" in rows["setuptools"].detail
