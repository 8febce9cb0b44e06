"""Shared test fixtures, and the guard that keeps tests/unit free of tools.

Real tools are used wherever they exist here (gcc/clang, hipcc, git, update-alternatives); a test
that needs one skips with the reason only when the executable is missing. The only fakes are the
AMD-GPU boundary: fake ROCm trees, KFD sysfs trees and captured rocminfo output, named as such.

Tests are laid out as they run (issue 42 item 6): tests/unit holds pure tests (no process, no
socket: no git, compilers, servers, pip or venvs), tests/integration everything that runs a real
tool. While a test under tests/unit sets up, runs or tears down, starting a process or opening a
socket raises ToolInUnitTest, and fails the test even where the code under test caught it.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Generator
from pathlib import Path

import pytest

# Debian's hipcc also sees the CUDA toolkit on these machines; pin the platform (brief: always).
os.environ.setdefault("HIP_PLATFORM", "amd")
# The tool-output cache (rocmforge.probes.tool_cache) lives in a folder of this test run, so a
# test never reads an answer cached by an earlier run or by the user's own commands.
os.environ["ROCMFORGE_CACHE_DIR"] = tempfile.mkdtemp(prefix="rocmforge-test-cache-")
# Tests make real git commits; a machine without a global git identity must not fail them.
for _name, _value in (
    ("GIT_AUTHOR_NAME", "rocmforge tests"),
    ("GIT_AUTHOR_EMAIL", "tests@rocmforge.invalid"),
    ("GIT_COMMITTER_NAME", "rocmforge tests"),
    ("GIT_COMMITTER_EMAIL", "tests@rocmforge.invalid"),
):
    os.environ.setdefault(_name, _value)


# Under CI=true a real part that is missing fails the test instead of skipping it: a green CI run
# then proves that every real-tool test ran (issue 12). Outside CI the skip stays, with its reason.
IN_CI = os.environ.get("CI", "").lower() == "true"
# The real tools the tests that ran asked for, printed with their versions at the end of the run.
_TOOLS_USED: set[str] = set()


def missing_real_part(reason: str) -> None:
    """Skip (outside CI) or fail (under CI=true) a test whose real tool, module or permission
    is not there. Not for the AMD-GPU boundary, which no machine here has: skip that directly."""
    if IN_CI:
        pytest.fail(f"CI=true and a real part is missing: {reason}", pytrace=False)
    pytest.skip(reason)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "needs_import(module): needs an importable module")


def _check_markers(item: pytest.Item) -> None:
    for mark in item.iter_markers(name="needs_tool"):
        for name in mark.args:
            _TOOLS_USED.add(name)
            if shutil.which(name) is None:
                missing_real_part(f"{name} is not installed (see .ci/run for the apt package)")
    for mark in item.iter_markers(name="needs_import"):
        for module in mark.args:
            _TOOLS_USED.add(f"python:{module}")
            if not _importable(module):
                missing_real_part(f"the Python module {module} is not installed (see .ci/run)")


def _importable(module: str) -> bool:
    """Whether `module` imports in this interpreter (asked in a child: torch is slow to import
    and must not be loaded into the test process by a marker)."""
    if module not in _IMPORTABLE:
        done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True,
                              check=False)
        _IMPORTABLE[module] = done.returncode == 0
    return _IMPORTABLE[module]


_IMPORTABLE: dict[str, bool] = {}


UNIT_TESTS = Path(__file__).resolve().parent / "unit"


class ToolInUnitTest(AssertionError):
    """A test under tests/unit started a process or opened a socket (not an OSError, so code
    that handles a missing tool does not take it for one)."""


# What starts another program, and what reaches a server: every way in the standard library
# ends in one of these (subprocess and asyncio through Popen._execute_child).
_PROCESS_STARTS = ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "execv", "execve",
                   "execvp", "execvpe", "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve",
                   "spawnvp", "spawnvpe", "popen")


def _is_unit_test(item: pytest.Item) -> bool:
    return UNIT_TESTS in item.path.parents


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, object]:
    _check_markers(item)
    return (yield from _refusing_tools(item, "set-up"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _refusing_tools(item, "test"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _refusing_tools(item, "tear-down"))


def _refusing_tools(item: pytest.Item, phase: str) -> Generator[None, object, object]:
    """Run one phase of a test; under tests/unit with every process start and socket refused
    (as cibuildwheel's unit tests refuse subprocess.Popen), fixtures of any scope included."""
    if not _is_unit_test(item):
        return (yield)
    started: list[str] = []

    def refuse(what: str) -> ToolInUnitTest:
        started.append(what)
        return ToolInUnitTest(
            f"this unit test's {phase} {what}. Unit tests run no tool: no process, "
            "no socket (git, compilers, servers, pip, venvs). Move it to tests/integration.")

    def no_child(_self: object, args: object, *_rest: object, **_named: object) -> None:
        argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)  # type: ignore[call-overload]
        raise refuse(f"started the process {' '.join(map(str, argv))[:200]!r}")

    def no_os_call(name: str) -> object:
        def refused(*args: object, **_named: object) -> None:
            raise refuse(f"called os.{name}{args[:2]!r}"[:200])
        return refused

    def no_socket(name: str) -> object:
        def refused(_self: socket.socket, address: object) -> None:
            raise refuse(f"opened a socket ({name} {address!r})")
        return refused

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(subprocess.Popen, "_execute_child", no_child)
        for name in _PROCESS_STARTS:
            if hasattr(os, name):
                patch.setattr(os, name, no_os_call(name))
        patch.setattr(socket.socket, "connect", no_socket("connect"))
        patch.setattr(socket.socket, "connect_ex", no_socket("connect"))
        patch.setattr(socket.socket, "bind", no_socket("bind"))
        result = yield
    if started:  # the code under test caught the error and carried on: still a failure
        raise ToolInUnitTest(f"this unit test's {phase} {started[0]} (and caught the "
                             "error). Unit tests run no tool. Move it to tests/integration.")
    return result


def _version_line(name: str) -> str:
    """The first line of `name --version` that names a version (or why there is none)."""
    if name.startswith("python:"):
        module = name.split(":", 1)[1]
        code = f"import {module}; print({module}.__version__)"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=False)
        return done.stdout.strip() or "not importable"
    path = shutil.which(name)
    if path is None:
        return "not found"
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{path}: {exc}"
    lines = [line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    named = [line for line in lines if re.search(r"\d+\.\d+", line)]
    return f"{(named or lines or ['no version output'])[0]} ({path})"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line per real tool the tests that ran used, with its version: the log shows what was
    exercised (issue 12)."""
    if not _TOOLS_USED:
        return
    terminalreporter.section("real tools used by this run")
    for name in sorted(_TOOLS_USED):
        terminalreporter.write_line(f"{name}: {_version_line(name)}")


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The kit's tool-output cache (probes.tool_cache) in a folder of this test, empty, with
    nothing remembered in memory from earlier tests."""
    from rocmforge.probes import tool_cache

    folder = tmp_path / "cache"
    monkeypatch.setenv(tool_cache.CACHE_DIR_ENV, str(folder))
    monkeypatch.setattr(tool_cache, "_memory", {})
    return folder


def put_wheels(dist: Path, doc: dict, names: list[str]) -> dict:
    """Write each wheel named into `dist` (its content: its own name) and record it in the
    manifest document's "files" section, as the collect step does; returns the document."""
    from rocmforge.knowledge.manifest import file_record

    dist.mkdir(parents=True, exist_ok=True)
    files = dict(doc.get("files", {}) or {})
    for name in names:
        (dist / name).write_bytes(name.encode())
        files[name] = file_record(dist / name)
    doc["files"] = files
    return doc
