"""`invoke triage LOG` through the real command line: a file, stdin, a prefixed CI log, --step,
--json, and the exit codes (0 explained, 1 not explained, 2 bad input). The logs are the
corpus' real ones (tests/failures)."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocmforge.triage import explain_lines
from rocmforge.verify.__main__ import explain_import_error

REPO_ROOT = Path(__file__).resolve().parents[2]
CASES = REPO_ROOT / "tests" / "failures" / "cases"
sys.path.insert(0, str(REPO_ROOT / "tests"))
from test_failure_corpus import ALL  # noqa: E402


def run(*args: str, stdin: str | None = None, program: str = "invoke"
        ) -> subprocess.CompletedProcess[str]:
    argv = ([sys.executable, "-m", "invoke", *args] if program == "invoke" else
            [sys.executable, "-c", "from rocmforge.cli import program; program.run()", *args])
    return subprocess.run(argv, cwd=REPO_ROOT, input=stdin, capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1", "COLUMNS": "80"}, timeout=120)


def test_a_file_is_explained_with_class_cause_fix_and_its_lines() -> None:
    log = CASES / "real-link-missing-library.log"
    done = run("triage", str(log), "--step", "build")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("class   link (librocmfoo_missing)\n")
    assert "cause   the linker could not find librocmfoo_missing" in out
    assert "\nfix     " in out
    assert "/usr/bin/ld: cannot find -lrocmfoo_missing: No such file or directory" in out
    # Nothing on an 80-column terminal is cropped: the paragraphs wrap at 80.
    prose = out.split("\n\n")[0]
    assert max(len(line) for line in prose.splitlines()) <= 80


def test_stdin_and_json_give_one_object_with_the_promised_keys() -> None:
    text = (CASES / "triton-llvm-tarball-409-docker.log").read_text()
    done = run("triage", "-", "--json", stdin=text)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["class"] == "triton" and doc["subject"] == "triton"
    assert "LLVM" in doc["cause"] and doc["fix"]
    assert doc["log"] == "stdin" and doc["schema"] == "rocmforge.triage/1"
    texts = [e["text"] for e in doc["evidence"]]
    assert any("HTTP Error 409" in t for t in texts)
    assert any("downloading and extracting https://tritonlang.blob" in t for t in texts)
    assert all(isinstance(e["line"], int) for e in doc["evidence"])


def test_the_rocmforge_script_runs_the_same_task() -> None:
    done = run("triage", str(CASES / "real-missing-component-miopen.log"), "--json",
               program="rocmforge")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["subject"] == "miopen"


def test_an_unexplained_log_exits_1_and_shows_the_error_lines_without_a_cause() -> None:
    text = ("[12/400] Building CXX object foo.o\nFAILED: foo.o\n"
            "foo.cpp:3:1: error: expected ';' after class\n"
            "ninja: build stopped: subcommand failed.\n")
    done = run("triage", "-", stdin=text)
    assert done.returncode == 1
    assert "class   none: no known failure explains this log" in done.stdout
    assert "      3: foo.cpp:3:1: error: expected ';' after class" in done.stdout
    assert "\ncause " not in done.stdout and "\nfix " not in done.stdout
    as_json = run("triage", "-", "--json", stdin=text)
    assert as_json.returncode == 1
    doc = json.loads(as_json.stdout)
    assert doc["class"] is None and doc["cause"] is None and doc["fix"] is None
    assert [e["line"] for e in doc["evidence"]] == [2, 3, 4]


@pytest.mark.parametrize("program, args, words", [
    ("invoke", ("triage", "/nonexistent/build.log"),
     "the log /nonexistent/build.log does not exist"),
    ("invoke", ("triage", "tests"), "tests is a directory"),
    # Invoke's own parser answers a missing positional with exit 1; the rocmforge script
    # makes every parse error bad input (exit 2).
    ("rocmforge", ("triage",), "`rocmforge triage` was given no log"),
])
def test_bad_input_is_one_paragraph_and_exit_2(program: str, args: tuple[str, ...],
                                                words: str) -> None:
    done = run(*args, program=program)
    assert done.returncode == 2
    assert done.stderr.startswith("rocmforge: ") and words in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_step_narrows_the_rules() -> None:
    text = "AssertionError: Torch not compiled with ROCm enabled\n"
    assert run("triage", "-", "--step", "configure", stdin=text).returncode == 1
    done = run("triage", "-", "--step", "verify", "--json", stdin=text)
    assert done.returncode == 0 and json.loads(done.stdout)["class"] == "rocm-disabled"
    unknown = run("triage", "-", "--step", "compile-it", "--json", stdin=text)
    assert unknown.returncode == 0
    assert "--step 'compile-it' is not one of the kit's steps" in unknown.stderr


PREFIXES = {
    "github-actions": lambda i: f"2026-04-23T10:38:{i % 60:02d}.{i:07d}Z ",
    "buildkit": lambda i: f"#21 {i * 0.37:.2f} ",
    "jenkins": lambda i: f"[2026-04-23T10:38:{i % 60:02d}.123Z] ",
    "colour": lambda i: "\x1b[0m\x1b[31m" if i % 2 else "\x1b[1m",
    # TheRock's teatime.py labels each sub-project's console line (configure, build, install)
    "therock": lambda i: ("[hipBLASLt configure] ", "[amd-llvm] ", "[rocm-core install] ")[i % 3],
}


@pytest.mark.parametrize("style", sorted(PREFIXES))
def test_every_case_reads_the_same_through_ci_prefixes(style: str) -> None:
    """The answer does not change when every line carries a CI timestamp, a docker step
    prefix or colour codes (cases that already carry prefixes get a second one)."""
    prefix = PREFIXES[style]
    changed = []
    for case in ALL:
        lines = case.log.read_text(errors="replace").splitlines()
        plain = explain_lines(lines, case.step)
        dressed = explain_lines([prefix(i) + line for i, line in enumerate(lines)], case.step)
        if (plain.klass, plain.subject, plain.cause) != (dressed.klass, dressed.subject,
                                                         dressed.cause):
            changed.append((case.id, plain.klass, dressed.klass, dressed.subject))
    assert changed == []


def test_a_failed_import_in_verify_uses_the_same_triage() -> None:
    """verify's torch import error goes through the same engine: a real loader error."""
    try:
        ctypes.CDLL("librocmforge_absent.so.9")
    except OSError as exc:
        said = explain_import_error(exc)
    else:  # pragma: no cover - the library cannot exist
        pytest.fail("the loader found a library that does not exist")
    assert said.startswith("Cause (import, librocmforge_absent.so.9): the loader could not "
                           "find librocmforge_absent.so.9")
    assert "Fix: " in said and "ldd" in said


def test_verify_in_a_venv_without_torch_points_at_install() -> None:
    """Issue 32 item 9: `verify` in a venv without torch said the install was broken; it is
    the wrong venv. A real ModuleNotFoundError from a real interpreter without torch."""
    import tempfile
    import venv

    with tempfile.TemporaryDirectory() as tmp:
        venv.create(tmp, with_pip=False)
        done = subprocess.run([f"{tmp}/bin/python", "-c", "import torch"], capture_output=True,
                              text=True, timeout=60)
    assert "No module named 'torch'" in done.stderr
    said = explain_lines(done.stderr.splitlines(), "verify")
    assert (said.klass, said.subject) == ("python-packaging", "torch")
    assert "invoke install --python" in said.fix and "nox -s verify" in said.fix
