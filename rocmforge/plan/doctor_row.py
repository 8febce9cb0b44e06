"""One doctor row (`DoctorRow`: check, OK / WARN / FAIL, detail, fix) and what is made of rows.

Owns: the row record every row module builds (plan/doctor.py, hazard_rows.py, kernel_rows.py,
download_rows.py, sdk_index_row.py, cache_doctor.py, ...), the exit status a set of rows gives,
and its renderings: the table's cells, the tally line, and the versioned JSON document of
`invoke doctor --json`. It imports no row module, so each of them can import it without a
circle.
Must not: judge (the row modules do), probe or print (the `doctor` task prints).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from rocmforge.knowledge.targets import TargetId
    from rocmforge.probes.facts import Facts

Status = Literal["OK", "WARN", "FAIL"]
DOCTOR_SCHEMA = "rocmforge.doctor/1"
TABLE_COLUMNS = ("check", "status", "detail", "fix")


@dataclass(frozen=True, kw_only=True)
class DoctorRow:
    check: str
    status: Status
    detail: str
    fix: str = ""

    def to_json(self) -> dict[str, str]:
        return {"check": self.check, "status": self.status, "detail": self.detail, "fix": self.fix}


def exit_status(rows: Sequence[DoctorRow]) -> int:
    """1 when any row FAILs (the build would fail), else 0."""
    return 1 if any(r.status == "FAIL" for r in rows) else 0


def table_cells(rows: Sequence[DoctorRow]) -> list[tuple[str, str, str, str]]:
    """The cells of the doctor table, in TABLE_COLUMNS order."""
    return [(r.check, r.status, r.detail, r.fix) for r in rows]


def tally(rows: Sequence[DoctorRow]) -> str:
    """The line under the table: `1 FAIL, 2 WARN, 30 OK`."""
    failed = sum(r.status == "FAIL" for r in rows)
    warned = sum(r.status == "WARN" for r in rows)
    return f"{failed} FAIL, {warned} WARN, {len(rows) - failed - warned} OK"


def doctor_json(facts: Facts, targets: Sequence[TargetId],
                rows: Sequence[DoctorRow]) -> dict[str, object]:
    """The versioned document of `invoke doctor --json` (schema rocmforge.doctor/1)."""
    from rocmforge import __version__

    rocm = facts.rocm
    return {
        "schema": DOCTOR_SCHEMA,
        "rocmforge_version": __version__,  # the kit that wrote it: for bug reports
        "ok": exit_status(rows) == 0,
        "targets": [str(t) for t in targets],
        "rocm": None if rocm is None else {"root": str(rocm.root), "version": rocm.version,
                                           "llvm_major": rocm.llvm_major},
        "rows": [r.to_json() for r in rows],
        # Each target's compile probe; cached_at: when a result came from the probe store
        # ("" when the compile ran in this run).
        "compile_probes": [{"target": p.target, "compiles": p.compiles,
                            "reason": p.compile_reason, "cached_at": p.cached_at}
                           for p in facts.target_probes],
    }
