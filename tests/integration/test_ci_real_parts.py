"""Under CI=true a missing real tool or module fails the test (naming it); elsewhere it skips
with the reason; the run ends with one version line per real tool used (issue 12).

Each case runs a real pytest in a child process over a two-line test file, with this suite's own
conftest.py beside it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"
TESTS = '''
import pytest

@pytest.mark.needs_tool("rocmforge-no-such-tool-xyz")
def test_wants_a_missing_tool():
    pass

@pytest.mark.needs_import("rocmforge_no_such_module_xyz")
def test_wants_a_missing_module():
    pass

@pytest.mark.needs_tool("git")
def test_wants_git():
    pass
'''


def _pytest(tmp_path: Path, ci: str) -> subprocess.CompletedProcess[str]:
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    (tmp_path / "test_parts.py").write_text(TESTS)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=120,
    )


@pytest.mark.needs_tool("git")
def test_under_ci_a_missing_tool_fails_naming_it(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "true")
    assert done.returncode == 1, done.stdout
    assert ("ERROR test_parts.py::test_wants_a_missing_tool - Failed: CI=true and a real part is "
            "missing: rocmforge-no-such-tool-xyz is not installed (see .ci/run for the apt "
            "package)") in done.stdout
    assert ("ERROR test_parts.py::test_wants_a_missing_module - Failed: CI=true and a real part is "
            "missing: the Python module rocmforge_no_such_module_xyz is not installed") \
        in done.stdout
    assert "1 passed, 2 warnings, 2 errors" in done.stdout


@pytest.mark.needs_tool("git")
def test_outside_ci_a_missing_tool_skips_with_its_reason(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "")
    assert done.returncode == 0, done.stdout
    assert ("SKIPPED [1] conftest.py:" in done.stdout
            and "rocmforge-no-such-tool-xyz is not installed (see .ci/run for the apt package)"
            in done.stdout)
    assert "1 passed, 2 skipped" in done.stdout


@pytest.mark.needs_tool("git")
def test_the_run_ends_with_a_version_line_per_real_tool(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "")
    section = done.stdout.split("real tools used by this run", 1)[1]
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True,
                                 check=True).stdout.strip()
    assert f"git: {git_version} ({shutil.which('git')})" in section
    assert "rocmforge-no-such-tool-xyz: not found" in section
    assert "python:rocmforge_no_such_module_xyz: not importable" in section
