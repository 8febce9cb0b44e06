"""The memory of an extension's compile jobs as its own tree states it (issue 40 item 3): a
real git repository plays flash-attention's remote (sources.companion_peek fetches setup.py at
the ref, as before a build), holding the two lines of upstream's setup.py the recipe reads
(Dao-AILab/flash-attention@0251105a: "~5GB per NVCC thread", NVCC_THREADS defaulting to 4)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rocmforge.knowledge.extensions import load_extensions
from rocmforge.plan.job_memory_rows import (
    job_memory_doctor,
    job_memory_row,
    planned_jobs,
    stated_job_memory,
)
from rocmforge.settings import Settings
from tests.gitfixtures import commit_files, new_repo

SETUP = ('NVCC_THREADS = os.getenv("NVCC_THREADS") or "4"\n'
         "max_num_jobs_memory = max(1, int(free_memory_gb / (5 * nvcc_threads)))\n")
RECIPE = load_extensions().recipes["flash-attention"]


def test_upstreams_own_setup_py_states_20_gib_a_job() -> None:
    """The patterns match the real file at the mirrored upstream commit."""
    repo = Path("/work/.mirror/Dao-AILab+flash-attention/repo")
    if not repo.is_dir():
        pytest.skip("no mirror of flash-attention here")
    text = subprocess.run(["git", "-C", str(repo), "show",
                           "0251105a2fb19d2957484b7f023cd8c115286ced:setup.py"],
                          capture_output=True, text=True, check=True).stdout
    stated = stated_job_memory(text, RECIPE)
    assert stated is not None and (stated.gib, stated.times, stated.per_job_gib) == (5.0, 4, 20.0)


def test_half_a_statement_is_none() -> None:
    assert stated_job_memory(SETUP.splitlines()[1], RECIPE) is None
    assert stated_job_memory("", RECIPE) is None


def test_the_planned_jobs_are_the_tables() -> None:
    assert planned_jobs(RECIPE, torch_jobs=16, cores=16, mem_total_gib=100.0) == 4  # 100 // 24
    assert planned_jobs(RECIPE, torch_jobs=2, cores=16, mem_total_gib=100.0) == 2


def test_jobs_that_fit_the_trees_figure_are_ok() -> None:
    row = job_memory_row("flash-attention", "main", RECIPE, SETUP, jobs=4, cores=16,
                         mem_total_gib=100.0)
    assert (row.check, row.status) == ("compile job memory flash-attention", "OK")
    assert row.detail == ("setup.py at main: 5 GiB x 4 = 20 GiB a job (table: 24); 4 job(s) "
                          "need 80 GiB of 100 GiB")


def test_jobs_beyond_the_trees_figure_warn_with_the_count_that_fits() -> None:
    text = SETUP.replace("(5 * nvcc_threads)", "(8 * nvcc_threads)")  # 32 GiB a job
    row = job_memory_row("flash-attention", "main", RECIPE, text, jobs=4, cores=16,
                         mem_total_gib=100.0)
    assert row.status == "WARN"
    assert row.detail.endswith("4 job(s) need 128 GiB, this machine has 100 GiB: the compile "
                               "can run out of memory")
    assert row.fix == "export ROCMFORGE_MAX_JOBS=3"


def test_an_unreadable_or_changed_tree_is_never_ok() -> None:
    row = job_memory_row("flash-attention", "v2.8.3", RECIPE, "", jobs=4, cores=16,
                         mem_total_gib=100.0)
    assert row.status == "WARN" and row.detail.startswith(
        "cannot check: setup.py at v2.8.3 could not be read; 4 job(s) planned on the table's "
        "24 GiB a job")
    row = job_memory_row("flash-attention", "v2.8.3", RECIPE, "import os\n", jobs=4, cores=16,
                         mem_total_gib=100.0)
    assert row.status == "WARN" and "no longer states a job's memory" in row.detail


def test_the_tree_is_read_at_the_ref_from_the_remote(tmp_path: Path) -> None:
    remote = new_repo(tmp_path / "flash-attention")
    commit_files(remote, {"setup.py": SETUP}, "setup")
    subprocess.run(["git", "-C", str(remote), "tag", "v9.9"], check=True)
    commit_files(remote, {"setup.py": "import os\n"}, "drop the rule")
    settings = Settings(companions=("flash-attention@v9.9",),
                        companion_repos={"flash-attention": str(remote)})
    (row,) = job_memory_doctor(settings, {"MAX_JOBS": "8"}, cores=8, mem_total_gib=200.0)
    assert row.status == "OK"
    assert row.detail == ("setup.py at v9.9: 5 GiB x 4 = 20 GiB a job (table: 24); 8 job(s) "
                          "need 160 GiB of 200 GiB")
    settings = Settings(companions=("flash-attention@main",),
                        companion_repos={"flash-attention": str(remote)})
    (row,) = job_memory_doctor(settings, {"MAX_JOBS": "8"}, cores=8, mem_total_gib=200.0)
    assert row.status == "WARN" and row.detail.startswith("setup.py at main no longer states")


def test_extensions_without_a_stated_figure_give_no_row() -> None:
    settings = Settings(companions=("torchvision", "vllm"))
    assert job_memory_doctor(settings, {}, cores=8, mem_total_gib=64.0,
                             peek=lambda *_: "unused") == []
