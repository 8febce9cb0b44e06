"""Variables of the calling shell that PyTorch's build reads are part of the build environment
(issue 14 item 5d): in every build step's env, so in its digest, and in `invoke env`; a shell
variable naming other GPU targets is refused. Real CLI runs against this machine's ROCm."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocmforge.plan.environment import inherited_variables

REPO_ROOT = Path(__file__).resolve().parents[2]
RULE = {"prefixes": ["BUILD_", "USE_", "CMAKE_"], "names": ["CFLAGS"],
        "target_variables": ["CMAKE_HIP_ARCHITECTURES"]}


def test_prefixes_and_names_are_kept_and_nothing_else() -> None:
    environ = {"USE_FLASH_ATTENTION": "0", "CMAKE_BUILD_TYPE": "Debug", "CFLAGS": "-O1",
               "HOME": "/root", "USERNAME": "x", "MY_USE_X": "1"}
    assert inherited_variables(environ, RULE, ()) == {
        "CFLAGS": "-O1", "CMAKE_BUILD_TYPE": "Debug", "USE_FLASH_ATTENTION": "0"}


def _plan(env: dict[str, str], work: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "invoke", "plan", "--json", "--arch", "gfx1100",
                           "--work-dir", str(work)], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=180, env={**os.environ, **env})


@pytest.mark.needs_tool("hipcc")
def test_a_shell_variable_the_build_reads_changes_the_build_steps_digests(tmp_path: Path) -> None:
    plain = json.loads(_plan({}, tmp_path / "w").stdout)
    tuned = json.loads(_plan({"USE_FLASH_ATTENTION": "0", "CFLAGS": "-O1"}, tmp_path / "w").stdout)
    steps = {s["name"]: s for s in tuned["steps"]}
    before = {s["name"]: s for s in plain["steps"]}
    for name in ("hipify", "build", "environment"):
        assert steps[name]["env"]["USE_FLASH_ATTENTION"] == "0"
        assert steps[name]["env"]["CFLAGS"] == "-O1"
        assert steps[name]["digest"] != before[name]["digest"]
    assert steps["checkout"]["digest"] == before["checkout"]["digest"]


@pytest.mark.needs_tool("hipcc")
def test_a_shell_variable_naming_other_targets_is_refused(tmp_path: Path) -> None:
    done = _plan({"CMAKE_HIP_ARCHITECTURES": "gfx90a"}, tmp_path / "w")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert ("CMAKE_HIP_ARCHITECTURES='gfx90a' in your environment names other GPU targets than "
            "the build's (gfx1100)") in " ".join(done.stderr.split())
    assert not (tmp_path / "w").exists()
    same = _plan({"CMAKE_HIP_ARCHITECTURES": "gfx1100"}, tmp_path / "w")
    assert same.returncode == 0
