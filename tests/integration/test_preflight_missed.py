"""The conditions the held-out preflight round missed (tests/failures/preflight/RESULTS.md),
each made as benchmarks/preflight_round.py makes it, with real parts: the real cmake against a
Fedora-shaped hip config and a fixture PyTorch tree (a real git checkout from
tests/treefixtures.py) whose LoadHIP.cmake asks find_package(HIP 1.0) (c28)."""

from __future__ import annotations

import shutil
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
