"""Issue 18 item 7: `invoke patch --check` says what would be applied, from the table's states."""

from __future__ import annotations

from pathlib import Path

from packaging.specifiers import SpecifierSet

from rocmforge.sources.patches import Patch, PatchHeader, PatchReport, PatchStatus
from rocmforge.tasks.sources import patch_summary


def _report(*states: tuple[str, str], changed: tuple[str, ...] = ()) -> PatchReport:
    header = PatchHeader(applies_to=SpecifierSet(">=2.8"), why="w", upstream_status="Pending",
                         upstream_url="")
    statuses = tuple(PatchStatus(patch=Patch(path=Path(f"patches/pytorch/{name}"),
                                             project="pytorch", header=header, sha256="0"),
                                 state=state) for name, state in states)
    return PatchReport(tree=Path("t"), version="2.8.0", statuses=statuses, changed=changed)


def test_check_names_the_patches_that_would_be_applied() -> None:
    reports = [_report(("0001-a.patch", "applies"), ("0002-b.patch", "absorbed"),
                       ("0003-c.patch", "applies"))]
    assert patch_summary(reports, check=True, revert=False) == (
        "would apply: 0001-a.patch, 0003-c.patch (--check changes nothing; run `invoke patch` "
        "to do it)")
    assert patch_summary(reports, check=True, revert=True) == \
        "would revert: nothing (--check changes nothing)"


def test_check_with_an_applied_patch_would_revert_it() -> None:
    reports = [_report(("0001-a.patch", "applied"))]
    assert patch_summary(reports, check=True, revert=True) == (
        "would revert: 0001-a.patch (--check changes nothing; run `invoke patch --revert` to "
        "do it)")


def test_a_real_apply_says_what_it_did() -> None:
    reports = [_report(("0001-a.patch", "applied"), changed=("0001-a.patch",))]
    assert patch_summary(reports, check=False, revert=False) == "applied: 0001-a.patch"
    assert patch_summary([_report()], check=False, revert=False) == "applied: nothing to do"
