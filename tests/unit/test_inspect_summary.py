"""The inspect task's library halves: path words -> paths (globs), and the Summary table rows."""

from __future__ import annotations

from pathlib import Path

from rocmforge.inspect.reader import expand_path_words
from rocmforge.inspect.report import InspectReport, LibraryReport, summary_rows


def test_globs_expand_sorted_and_unmatched_words_stay_as_given(tmp_path: Path) -> None:
    for name in ("b.so", "a.so", "c.txt"):
        (tmp_path / name).write_text("")
    words = [str(tmp_path / "*.so"), str(tmp_path / "none-*.so"), str(tmp_path / "x y.so")]
    assert expand_path_words(words) == [tmp_path / "a.so", tmp_path / "b.so",
                                        tmp_path / "none-*.so", tmp_path / "x y.so"]


def test_summary_rows_of_libraries_without_device_code() -> None:
    report = InspectReport(libraries=(
        LibraryReport(path="/x/libc.so", status="no-device-code"),
        LibraryReport(path="/x/gone.so", status="error", error="No such file"),
    ), skipped_files=3)
    assert summary_rows(report) == [
        ("libraries read", "1 of 2 (3 non-ELF files skipped)"),
        ("with device code", "0"),
        ("common to all", "-"),
    ]
