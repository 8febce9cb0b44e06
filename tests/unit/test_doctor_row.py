"""plan/doctor_row.py: the row every row module makes and what the doctor task prints of rows.
Pure: rows in, cells, a tally line and an exit status out."""

from __future__ import annotations

from rocmforge.plan.doctor_row import TABLE_COLUMNS, DoctorRow, exit_status, table_cells, tally

ROWS = (
    DoctorRow(check="ROCm install", status="OK", detail="ROCm 7.2.0 at /opt/rocm-7.2.0"),
    DoctorRow(check="disk", status="WARN", detail="20.0 GiB free",
              fix="export ROCMFORGE_WORK_DIR=/path/on/a/bigger/disk"),
    DoctorRow(check="memory", status="FAIL", detail="2.0 GiB total", fix="add swap"),
    DoctorRow(check="ninja", status="OK", detail="ninja 1.11.1"),
)


def test_table_cells_follow_the_columns() -> None:
    assert TABLE_COLUMNS == ("check", "status", "detail", "fix")
    assert table_cells(ROWS[1:2]) == [
        ("disk", "WARN", "20.0 GiB free", "export ROCMFORGE_WORK_DIR=/path/on/a/bigger/disk")]


def test_tally_counts_each_status() -> None:
    assert tally(ROWS) == "1 FAIL, 1 WARN, 2 OK"
    assert tally(()) == "0 FAIL, 0 WARN, 0 OK"


def test_only_a_fail_row_makes_exit_1() -> None:
    assert exit_status(ROWS) == 1
    assert exit_status(ROWS[:2]) == 0  # a WARN is not a failure
    assert exit_status(()) == 0


def test_row_json_keeps_every_field() -> None:
    assert ROWS[2].to_json() == {"check": "memory", "status": "FAIL", "detail": "2.0 GiB total",
                                 "fix": "add swap"}
