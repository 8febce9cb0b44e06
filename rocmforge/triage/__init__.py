"""Triage: which known failure a log shows, why, the fix, and the lines it rests on.

One entry point (`explain_lines`; `explain_text` and `explain_file` feed it), one answer
(`Diagnosis`) and one rule set (`all_rules()`, built once) for every caller: a failed build
step (the runner), a failed `verify` import, doctor's compile probe, and `invoke triage LOG` on
any log (a CI log, pip's output, a docker build, stdin). The rules are the parsers in
`parsers/` (one module per message family), then the exact messages of
config/diagnostics.toml (`table.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

from rocmforge.triage.engine import diagnose
from rocmforge.triage.logread import NotText, bounded_lines
from rocmforge.triage.model import CLASSES, SCHEMA, Diagnosis, Evidence
from rocmforge.triage.parsers import PARSERS
from rocmforge.triage.rule import Rule
from rocmforge.triage.table import load_signatures

__all__ = ["CLASSES", "SCHEMA", "Diagnosis", "Evidence", "NotText", "all_rules",
           "bounded_lines", "explain_file", "explain_lines", "explain_text", "run_context"]


@cache
def all_rules() -> tuple[Rule, ...]:
    """The code rules and the table's signatures, in that order (ties go to the code)."""
    return PARSERS + tuple(s.as_rule() for s in load_signatures())


def explain_lines(lines: Iterable[str], step: str = "",
                  run: Mapping[str, str] | None = None) -> Diagnosis:
    """Triage a stream of log lines (one pass, bounded memory). `step` names the step that
    wrote them ("" = not known): a rule limited to some steps applies only to those (and to the
    add-on steps that count as them); a name knowledge.steps does not have gets no such rule."""
    return diagnose(lines, all_rules(), step, run_context(run or {}))


def explain_text(text: str, step: str = "", run: Mapping[str, str] | None = None) -> Diagnosis:
    return explain_lines(text.splitlines(), step, run)


def explain_file(path: Path, step: str = "", run: Mapping[str, str] | None = None) -> Diagnosis:
    """Triage a log on disk, streamed in bounded memory (bad bytes replaced, a very long line
    cut; raises NotText for a file with a NUL byte near its start)."""
    with path.open("rb") as handle:
        return explain_lines(bounded_lines(handle), step, run)


def run_context(env: Mapping[str, str]) -> dict[str, str]:
    """Values of the failed run that a cause and fix may name ({max_jobs}, {fewer_jobs},
    {jobs_advice}), so advice fits the run: half the jobs it really used, never a number
    that is not fewer."""
    value = env.get("MAX_JOBS", "").strip()
    if value.isdigit() and int(value) > 0:
        jobs = int(value)
        fewer = max(1, jobs // 2)
        return {"max_jobs": str(jobs), "fewer_jobs": str(fewer),
                "jobs_advice": (f"MAX_JOBS was {jobs}; rerun with half as many, "
                                f"`ROCMFORGE_MAX_JOBS={fewer} invoke build`" if jobs > 1 else
                                "MAX_JOBS was already 1, so fewer jobs cannot help: add memory "
                                "or swap, or build on a larger machine")}
    return {"max_jobs": "", "fewer_jobs": "",
            "jobs_advice": "MAX_JOBS was not set (ninja then runs one job per core); rerun "
                           "with fewer, e.g. `ROCMFORGE_MAX_JOBS=4 invoke build`"}
