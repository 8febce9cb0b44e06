"""`nox -s build`: the same pipeline inside a fresh virtualenv that nox makes.

Runs the real nox against the fixture "pytorch" repository (its build compiles a HIP kernel with
clang-22 per requested target and packages a wheel), so it needs clang-22 and PyPI for the kit's
own dependencies in the session venv.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from test_build_e2e import LLVM22, REPO_ROOT, make_fixture_repo

pytestmark = [pytest.mark.slow,
              pytest.mark.needs_tool("clang-22", "clang-offload-bundler-22", "git")]


def test_nox_build_session_builds_the_fixture_wheel(tmp_path: Path) -> None:
    repo = make_fixture_repo(tmp_path / "pytorch")
    work = tmp_path / "work"
    env = dict(os.environ)
    env.update(
        ROCMFORGE_BUILD_ENV=f"HIP_CLANG_PATH={LLVM22}",
        HIP_PLATFORM="amd",
        NO_COLOR="1",
    )
    argv = [
        sys.executable, "-m", "nox", "-s", "build",
        "--envdir", str(tmp_path / "nox"),
        "--",
        "--arch", "gfx1100;gfx942", "--work-dir", str(work), "--repo", str(repo),
        "--ref", "v2.8.0", "--clang", "22", "--triton", "skip", "--skip-preflight",
    ]
    done = subprocess.run(argv, cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    assert manifest["schema"] == "rocmforge.manifest/1"
    assert manifest["targets"] == ["gfx1100", "gfx942"]
    wheel = work / "dist" / manifest["wheels"]["torch"]
    with zipfile.ZipFile(wheel) as archive:
        assert "torch/lib/libtorch_hip.so" in archive.namelist()
    # The build venv was made from the interpreter of the session nox created, not this one.
    venv_cfg = (work / "venv" / "pyvenv.cfg").read_text()
    assert str(tmp_path / "nox") in venv_cfg
    # And the kit's own inspect confirms both targets are in the wheel.
    from rocmforge.inspect import inspect_paths, missing_targets

    report = inspect_paths([wheel])
    assert not missing_targets(report, ["gfx1100", "gfx942"])
