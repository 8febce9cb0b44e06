"""Triage holds on any input: a device that never ends a line, a 200 MB single line, a closed
stdin, a binary file. A clear error (exit 2) or an answer, never a traceback or an OOM."""

from __future__ import annotations

import io
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from rocmforge.triage import NotText, bounded_lines, explain_file

REPO_ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from rocmforge.cli import program; program.run()"]
# Address space for the CLI child: the kit's imports need ~300 MB of it; a reader that held a
# 200 MB line (decoded to str: several times that) could not stay under this.
LIMIT = 700 * 1024 * 1024


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def cli(*args: str, stdin: object = subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=REPO_ROOT, stdin=stdin, capture_output=True,
                          text=True, timeout=120, preexec_fn=_limited)


def test_a_200_mb_single_line_is_read_in_bounded_memory(tmp_path: Path) -> None:
    log = tmp_path / "one-line.log"
    with log.open("wb") as handle:
        for _ in range(200):
            handle.write(b"x" * (1 << 20))
        handle.write(b"\nerror: cannot find -lrocblas\n")
    done = cli("triage", str(log), "--json")
    assert "Traceback" not in done.stderr
    assert done.returncode in (0, 1), done.stderr
    assert "-lrocblas" in done.stdout


def test_dev_zero_is_refused_as_not_text() -> None:
    done = cli("triage", "/dev/zero")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "/dev/zero is not a text log (a NUL byte at offset 0)" in done.stderr


def test_zeros_on_stdin_are_refused_as_not_text() -> None:
    zeros = subprocess.Popen(["head", "-c", "50000000", "/dev/zero"], stdout=subprocess.PIPE)
    done = cli("triage", "-", stdin=zeros.stdout)
    assert zeros.stdout is not None
    zeros.stdout.close()
    zeros.wait(timeout=60)
    assert done.returncode == 2
    assert "stdin is not a text log" in done.stderr


def test_a_closed_stdin_is_one_paragraph_exit_2() -> None:
    done = subprocess.run([*CLI, "triage", "-"], cwd=REPO_ROOT, capture_output=True, text=True,
                          stdin=None, pass_fds=(), close_fds=True, timeout=60,
                          preexec_fn=lambda: __import__("os").close(0))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "stdin is closed" in done.stderr


def test_lines_are_split_and_cut_at_the_limit() -> None:
    data = b"short\r\n" + b"a" * 100 + b"\nlast"
    lines = list(bounded_lines(io.BytesIO(data), line_limit=10, chunk=7))
    assert lines == ["short", "aaaaaaaaaa [... 90 more bytes of this line not read]", "last"]


def test_a_nul_past_the_probe_is_text() -> None:
    data = b"a" * 9000 + b"\0tail\n"
    lines = list(bounded_lines(io.BytesIO(data)))
    assert len(lines) == 1 and lines[0].endswith("\0tail")


def test_a_binary_file_raises_not_text(tmp_path: Path) -> None:
    path = tmp_path / "x.whl"
    path.write_bytes(b"PK\x03\x04\0\0binary")
    with pytest.raises(NotText) as raised:
        explain_file(path)
    assert raised.value.offset == 4
