"""The preflight round's record holds together (tests/failures/preflight): every condition
recorded blind in CONDITIONS.md is graded once, either reproduced by benchmarks/
preflight_round.py or judged by reading, and the counts RESULTS.md and the README state are the
ones its rows give."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PREFLIGHT = ROOT / "tests" / "failures" / "preflight"
sys.path.insert(0, str(ROOT / "benchmarks"))

import preflight_round  # noqa: E402


def _ids(text: str) -> list[str]:
    return re.findall(r"^\| (c\d\d[a-z]?) \|", text, re.MULTILINE)


def test_every_blind_condition_is_graded_once() -> None:
    recorded = _ids((PREFLIGHT / "CONDITIONS.md").read_text())
    assert len(recorded) == len(set(recorded)) == 34
    counted = [c.id for c in preflight_round.CASES if c.counted]
    reading = [row[0] for row in preflight_round.BY_READING]
    assert sorted(counted + reading) == sorted(recorded)
    assert not set(counted) & set(reading)
    assert {row[3] for row in preflight_round.BY_READING} <= {"STOP", "WARN", "AVOIDED",
                                                             "MISSED"}


def test_the_stated_counts_are_the_rows_counts() -> None:
    text = (PREFLIGHT / "RESULTS.md").read_text()
    rows = []
    for line in text.splitlines():
        if not re.match(r"^\| c\d\d[a-z]? \|", line):
            continue
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        if len(cells) < 7:
            continue  # the table of missed conditions and their checks
        outcome = cells[4]
        rows.append({"id": cells[0], "class": cells[2], "outcome": outcome.split()[0],
                     "reproduced": "(by reading)" not in outcome,
                     "counted": "variant" not in outcome})
    assert preflight_round.summary(rows) in text
    assert "| all | 34 | 10 | 11 | 9 | 4 |" in text
    assert "| reproduced here | 24 | 9 | 7 | 5 | 3 |" in text
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert ("Doctor stops 10, warns on 11 (the build then goes on and fails), the build avoids "
            "9 by itself, 4 pass unnoticed; of the 24 reproduced here 9 / 7 / 5 / 3") in readme


def test_the_after_counts_are_the_blind_rows_with_the_after_outcomes() -> None:
    """RESULTS.md's "After the fixes" table changes some counted rows' outcomes; the after
    counts it states, and the README's, are the blind rows with those outcomes in place."""
    text = (PREFLIGHT / "RESULTS.md").read_text()
    before, _, after_part = text.partition("## After the fixes")
    assert after_part
    changed = {}
    for line in after_part.splitlines():
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        if re.match(r"^c\d\d[a-z]? *$", cells[0]) and len(cells) == 5:
            changed[cells[0]] = cells[3]
    assert {k: v for k, v in changed.items() if "variant" not in v} == {
        "c19": "WARN", "c28": "STOP", "c30": "STOP"}
    rows = []
    for line in before.splitlines():
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        if not re.match(r"^c\d\d[a-z]? *$", cells[0]) or len(cells) < 7:
            continue
        outcome = changed.get(cells[0], cells[4])
        rows.append({"id": cells[0], "class": cells[2], "outcome": outcome.split()[0],
                     "reproduced": "(by reading)" not in cells[4],
                     "counted": "variant" not in cells[4]})
    summary = preflight_round.summary(rows)
    for line in ("| all | 34 | 12 | 12 | 9 | 1 |", "| reproduced here | 24 | 11 | 8 | 5 | 0 |",
                 "| by reading | 10 | 1 | 4 | 4 | 1 |", "| composable-kernel | 3 | 0 | 3 | 0 | 0 |",
                 "| missing-component | 2 | 2 | 0 | 0 | 0 |",
                 "| out-of-memory | 1 | 1 | 0 | 0 | 0 |"):
        assert line in summary and line in after_part
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert ("Doctor now stops 12, warns on 12, the build avoids 9, 1 passes unnoticed") in readme
    assert "of the 24 reproduced here 11 / 8 / 5 / 0" in readme


def test_the_counts_after_the_setuptools_pin_are_the_rows_with_both_changes() -> None:
    """RESULTS.md's 2026-12-05 section changes c10 again (the build pins setuptools); its
    counts, and the README's, are the blind rows with both sections' outcomes in place."""
    text = (PREFLIGHT / "RESULTS.md").read_text()
    before, _, after_part = text.partition("## After the fixes")
    first, _, second = after_part.partition("## 2026-12-05")
    changed = {}
    for line in first.splitlines():
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        if re.match(r"^c\d\d[a-z]? *$", cells[0]) and len(cells) == 5:
            changed[cells[0]] = cells[3]
    for line in second.splitlines():
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        if re.match(r"^c\d\d[a-z]? *$", cells[0]) and len(cells) == 3:
            changed[cells[0]] = cells[2]
    assert changed["c10"] == "AVOIDED"
    rows = []
    for line in before.splitlines():
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        if not re.match(r"^c\d\d[a-z]? *$", cells[0]) or len(cells) < 7:
            continue
        rows.append({"id": cells[0], "class": cells[2],
                     "outcome": changed.get(cells[0], cells[4]).split()[0],
                     "reproduced": "(by reading)" not in cells[4],
                     "counted": "variant" not in cells[4]})
    summary = preflight_round.summary(rows)
    assert "| all | 34 | 12 | 11 | 10 | 1 |" in summary
    assert "| reproduced here | 24 | 11 | 7 | 6 | 0 |" in summary
    assert "All 34: stop 12, warn 11, avoided 10, missed 1; reproduced here (24): 11 / 7 / 6 / " \
        "0." in " ".join(second.split())
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert ("stop 12, warn 11, avoided 10, missed 1; of the 24 reproduced here 11 / 7 / 6 / 0"
            in readme)
