"""GCC's own words for a <cstdint> type used without its header, from real g++-12: the
cstdint rule reads them with or without the note that names the header."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rocmforge.triage import explain_text


@pytest.mark.needs_tool("g++-12")
def test_gcc_without_cstdint_is_read_from_its_error_line_alone(tmp_path: Path) -> None:
    """Real g++-12 on code that uses uint8_t without <cstdint>: the whole output and the error
    line alone (a log cut before GCC's note) both name the header."""
    source = tmp_path / "needs_cstdint.cpp"
    source.write_text("uint8_t low(int x) { return x & 0xff; }\n")
    done = subprocess.run(["g++-12", "-c", str(source), "-o", str(tmp_path / "x.o")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    error = next(line for line in done.stderr.splitlines() if "error:" in line)
    assert "uint8_t\u2019 does not name a type" in error or "uint8_t' does not name" in error
    for text, rule in ((done.stderr, "std-name-needs-header"),
                       (error, "cstdint-type-unknown-gcc")):
        found = explain_text(text)
        assert (found.klass, found.subject, found.rule) == ("host-compiler", "libstdc++", rule)
        assert "<cstdint>" in found.fix or "cstdint" in found.cause
