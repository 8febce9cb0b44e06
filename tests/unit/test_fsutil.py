"""rocmforge.fsutil.write_atomic: all or nothing, no temp files left behind, on a real disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmforge.fsutil import write_atomic


def test_creates_folders_and_writes_bytes_and_text(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "state.json"
    write_atomic(target, b"\x00\x01binary")
    assert target.read_bytes() == b"\x00\x01binary"
    write_atomic(target, "text \u00e9\n")
    assert target.read_bytes() == "text \u00e9\n".encode()
    assert sorted(p.name for p in target.parent.iterdir()) == ["state.json"]


def test_failed_replace_keeps_nothing_half_written(tmp_path: Path) -> None:
    # The target is a non-empty directory, so the final os.replace fails for real.
    target = tmp_path / "lock"
    target.mkdir()
    (target / "keep").write_text("x")
    with pytest.raises(OSError):
        write_atomic(target, "new contents")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lock"]  # no .lock.*.tmp left
    assert (target / "keep").read_text() == "x"


def test_replaces_an_existing_file_in_place(tmp_path: Path) -> None:
    target = tmp_path / "rocmforge.lock"
    target.write_text("old\n")
    write_atomic(target, "new\n")
    assert target.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["rocmforge.lock"]
