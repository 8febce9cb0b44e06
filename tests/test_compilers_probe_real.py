"""The real-tool tests of tests/unit/test_compilers_probe.py: they run a program named gcc-13,
so they live in tests/integration (issue 42 item 6)."""

from __future__ import annotations

from pathlib import Path

from rocmforge.probes.compilers import (
    find_host_compilers,
)


def test_non_compiler_named_gcc_is_ignored(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "gcc-13"
    script.write_text("#!/bin/sh\necho 'not a compiler'\n")
    script.chmod(0o755)
    assert find_host_compilers(str(bin_dir)) == ()
