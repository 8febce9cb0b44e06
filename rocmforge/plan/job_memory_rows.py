"""Doctor rows for the memory of an extension's compile jobs, as its own tree states it at the
ref being built (issue 40 item 3).

The plan lowers an extension's job variables to fit the table's `mem_per_job_gib`
(plan/extensions.py). Where a recipe names `mem_file`/`mem_pattern` (flash-attention's setup.py:
"~5GB per NVCC thread", NVCC_THREADS defaulting to 4; Dao-AILab/flash-attention@
0251105a2fb19d2957484b7f023cd8c115286ced:setup.py), this reads that statement at the ref and
weighs the planned jobs with it: the tree's figure when it states one, the table's when the tree
cannot be read (a WARN: not proven) or no longer states it (a WARN: the table may be stale).
A recipe with a memory figure but no job variable the plan can lower (`jobs_vars = []`:
xformers, whose ROCm build one CPU per compile process, about 30 GB each, ran out of memory on
64-512 GB machines, facebookresearch/xformers#1409) gets a row from the table's figure alone:
one process per core, each needing the figure; FAIL when one process alone is more than the
machine's memory, WARN when the cores' processes are.
Owns: parsing the statement, the job count the plan gives the extension, and the verdict.
Must not: change the plan (the planned job count stays the table's), print, or run git itself
(sources.companion_peek reads the file).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rocmforge.plan.doctor_row import DoctorRow
from rocmforge.plan.environment import max_jobs

if TYPE_CHECKING:
    from rocmforge.knowledge.extensions import Recipe
    from rocmforge.settings import Settings

CHECK = "compile job memory"


@dataclass(frozen=True, kw_only=True)
class StatedJobMemory:
    gib: float  # per unit, as the tree states it
    times: int  # units a job (1 when the recipe names no multiplier)

    @property
    def per_job_gib(self) -> float:
        return self.gib * self.times


def stated_job_memory(text: str, recipe: Recipe) -> StatedJobMemory | None:
    """The tree's statement in `text` (the recipe's mem_file); None when it states none."""
    found = re.search(recipe.mem_pattern, text, re.MULTILINE) if recipe.mem_pattern else None
    if found is None:
        return None
    times = 1
    if recipe.mem_times_pattern:
        counted = re.search(recipe.mem_times_pattern, text, re.MULTILINE)
        if counted is None:
            return None  # half a statement is none
        times = max(1, int(counted.group("times")))
    return StatedJobMemory(gib=float(found.group("gib")), times=times)


def planned_jobs(recipe: Recipe, torch_jobs: int, cores: int, mem_total_gib: float) -> int:
    """The job count plan/extensions.py gives the extension: the torch build's, lowered to
    fit the table's memory per job."""
    if recipe.mem_per_job_gib and recipe.jobs_vars:
        return min(torch_jobs, max_jobs(cores, mem_total_gib, recipe.mem_per_job_gib))
    return torch_jobs


def job_memory_row(name: str, ref: str, recipe: Recipe, text: str, *, jobs: int,
                   cores: int, mem_total_gib: float) -> DoctorRow:
    """`text`: the recipe's mem_file at `ref` ("" when it could not be read)."""
    check = f"{CHECK} {name}"
    table = f"the table's {recipe.mem_per_job_gib:g} GiB a job"
    where = f"{recipe.mem_file} at {ref}"
    if not text:
        return DoctorRow(check=check, status="WARN",
                         detail=f"cannot check: {where} could not be read; {jobs} job(s) "
                         f"planned on {table}",
                         fix="run it again where the network reaches the extension's "
                         "repository")
    stated = stated_job_memory(text, recipe)
    if stated is None:
        return DoctorRow(check=check, status="WARN",
                         detail=f"{where} no longer states a job's memory as the table "
                         f"expects; {jobs} job(s) planned on {table}",
                         fix="read its setup and update mem_pattern (config/extensions.toml)")
    need = jobs * stated.per_job_gib
    times = f" x {stated.times}" if stated.times != 1 else ""
    said = (f"{where}: {stated.gib:g} GiB{times} = {stated.per_job_gib:g} GiB a job "
            f"(table: {recipe.mem_per_job_gib:g}); {jobs} job(s) need {need:g} GiB")
    if need <= mem_total_gib:
        return DoctorRow(check=check, status="OK",
                         detail=f"{said} of {mem_total_gib:.0f} GiB")
    fit = max_jobs(cores, mem_total_gib, stated.per_job_gib)
    return DoctorRow(check=check, status="WARN",
                     detail=f"{said}, this machine has {mem_total_gib:.0f} GiB: the "
                     "compile can run out of memory",
                     fix=f"export ROCMFORGE_MAX_JOBS={fit}")


def unbounded_job_memory_row(name: str, recipe: Recipe, *, cores: int,
                             mem_total_gib: float) -> DoctorRow:
    """A recipe whose build the plan cannot bound (no job variable): one compile process per
    core, each needing the table's `mem_per_job_gib` (its `source` cites the figure)."""
    check = f"{CHECK} {name}"
    per_job = recipe.mem_per_job_gib
    procs = max(cores, 1)
    need = procs * per_job
    said = (f"{name} honours no job variable the kit can set (config/extensions.toml "
            f"jobs_vars = []); its ROCm build runs a compile per core, about {per_job:g} GiB "
            f"each (facebookresearch/xformers#1409): {procs} x {per_job:g} = {need:g} GiB")
    if not mem_total_gib:
        return DoctorRow(check=check, status="WARN",
                         detail=f"cannot check: the machine's memory is unknown; {said}",
                         fix="run it again where /proc/meminfo can be read")
    if need <= mem_total_gib:
        return DoctorRow(check=check, status="OK",
                         detail=f"{said} of {mem_total_gib:.1f} GiB (the table's figure)")
    fit = max_jobs(cores, mem_total_gib, per_job)
    upstream = ("upstream's bound is MAX_JOBS (xformers' README: it lowers ninja's "
                "parallelism, facebookresearch/xformers@ca6d2aa0:README.md), which #1409 "
                "found the ROCm build ignoring")
    if per_job > mem_total_gib:
        return DoctorRow(check=check, status="FAIL",
                         detail=f"{said}, this machine has {mem_total_gib:.1f} GiB: not one "
                         "compile process fits, the build runs out of memory",
                         fix=f"build {name} on a machine with {per_job:g} GiB or more per "
                         f"compile process, or leave it out of --with; {upstream}")
    return DoctorRow(check=check, status="WARN",
                     detail=f"{said}, this machine has {mem_total_gib:.1f} GiB: the compile "
                     f"can run out of memory; {fit} process(es) fit",
                     fix=f"export ROCMFORGE_MAX_JOBS={fit}   # the build's MAX_JOBS; "
                     f"{upstream}")


def job_memory_doctor(settings: Settings, environ: Mapping[str, str], *, cores: int,
                      mem_total_gib: float,
                      peek: Callable[[str, str, str], str] | None = None) -> list[DoctorRow]:
    """One row per `--with` extension whose recipe names where its tree states a job's
    memory, or whose build no job variable bounds. `environ`: the build's environment (its
    MAX_JOBS is the torch build's)."""
    from rocmforge.errors import RocmforgeError
    from rocmforge.knowledge.extensions import (
        load_extensions,
        parse_source,
        recipe_for_source,
        split_with,
    )

    if peek is None:
        from rocmforge.sources.companion_peek import peek_file

        peek = peek_file
    table = load_extensions()
    _, words = split_with(settings.companions, table)
    given = environ.get("MAX_JOBS", "")
    torch_jobs = int(given) if given.isdigit() and int(given) > 0 else max(cores, 1)
    rows: list[DoctorRow] = []
    for word in words:
        try:
            source = parse_source(word, table, settings.companion_repos)
            recipe = recipe_for_source(source, table)
        except RocmforgeError:
            continue  # the plan refuses a bad word with its own message
        if not recipe.mem_file:
            if recipe.mem_per_job_gib and not recipe.jobs_vars:
                rows.append(unbounded_job_memory_row(source.name, recipe, cores=cores,
                                                     mem_total_gib=mem_total_gib))
            continue
        text = peek(source.repo, source.ref, recipe.mem_file)
        rows.append(job_memory_row(
            source.name, source.ref or "its default branch", recipe, text,
            jobs=planned_jobs(recipe, torch_jobs, cores, mem_total_gib), cores=cores,
            mem_total_gib=mem_total_gib))
    return rows
