"""The guard on tests/unit (issue 42 item 6): a test there that starts a process or opens a
socket fails, naming what it started and where the test belongs, even where the code under test
catches the error or a module-scoped fixture does the starting; the same test under
tests/integration runs the tool and passes.

Each case runs a real pytest in a child process over a small tree with this suite's own
conftest.py at its top, laid out as the suite is (tests/unit, tests/integration).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"
TESTS = '''
import socket
import subprocess
import sys

import pytest


@pytest.fixture(scope="module")
def git_version():
    return subprocess.run(["git", "--version"], capture_output=True, text=True).stdout


def test_pure():
    assert sorted([3, 1, 2]) == [1, 2, 3]


def test_runs_a_process():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


def test_catches_the_error():
    try:
        subprocess.run(["git", "--version"], check=True)
    except Exception:
        pass


def test_opens_a_socket():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))


def test_module_fixture_runs_git(git_version):
    assert git_version.startswith("git version")
'''


def _run(tmp_path: Path, folder: str) -> subprocess.CompletedProcess[str]:
    tests = tmp_path / "tests"
    (tests / folder).mkdir(parents=True)
    shutil.copy(CONFTEST, tests / "conftest.py")
    (tests / folder / "test_tools.py").write_text(TESTS)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "tests"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=120,
    )


def test_a_unit_test_that_starts_a_tool_fails_naming_it(tmp_path: Path) -> None:
    done = _run(tmp_path, "unit")
    assert done.returncode == 1, done.stdout
    lines = done.stdout.splitlines()
    node = "tests/unit/test_tools.py::"
    assert f"PASSED {node}test_pure" in lines
    refused = "Unit tests run no tool: no process, no socket (git, compilers, servers, pip, venvs)."
    caught = "(and caught the error). Unit tests run no tool."
    for line in (
        f"E       conftest.ToolInUnitTest: this unit test's test started the process "
        f"'{sys.executable} -c pass'. {refused} Move it to tests/integration.",
        "E           conftest.ToolInUnitTest: this unit test's test started the process "
        f"'git --version' {caught} Move it to tests/integration.",
        "E       conftest.ToolInUnitTest: this unit test's test opened a socket "
        f"(bind ('127.0.0.1', 0)). {refused} Move it to tests/integration.",
        "E       conftest.ToolInUnitTest: this unit test's set-up started the process "
        f"'git --version'. {refused} Move it to tests/integration.",
    ):
        assert line in lines, done.stdout
    assert [line.split(" - ")[0] for line in lines if line.startswith(("FAILED", "ERROR "))] == [
        f"ERROR {node}test_module_fixture_runs_git",
        f"FAILED {node}test_runs_a_process",
        f"FAILED {node}test_catches_the_error",
        f"FAILED {node}test_opens_a_socket",
    ]
    assert lines[-1].startswith("3 failed, 1 passed, 1 error in ")


def test_the_same_tests_pass_under_integration(tmp_path: Path) -> None:
    done = _run(tmp_path, "integration")
    assert done.returncode == 0, done.stdout
    assert done.stdout.splitlines()[-1].startswith("5 passed in ")
