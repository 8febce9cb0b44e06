"""The real-tool tests of tests/unit/test_probes_system.py: they run cmake and ninja,
so they live in tests/integration (issue 42 item 6)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rocmforge.probes.system import (
    gather_system,
)


@pytest.mark.needs_tool("cmake", "ninja")
def test_gather_system_on_this_machine(tmp_path: Path) -> None:
    facts = gather_system(work_dir=tmp_path / "work", environ=dict(os.environ), python_paths=[])
    assert facts.cores == len(os.sched_getaffinity(0))
    assert facts.mem_total_gib > 0
    # The probe's reading must equal what the real tools print (first line: "cmake version X").
    cmake_first = subprocess.run(
        ["cmake", "--version"], capture_output=True, text=True, check=True
    ).stdout.splitlines()[0]
    assert cmake_first == f"cmake version {facts.cmake.version}"
    ninja = subprocess.run(["ninja", "--version"], capture_output=True, text=True, check=True)
    assert facts.ninja.version == ninja.stdout.strip()
    assert facts.ninja.path == Path(shutil.which("ninja") or "")
    assert facts.python.version.startswith(f"{sys.version_info[0]}.{sys.version_info[1]}.")
    assert facts.python.in_venv == (sys.prefix != sys.base_prefix)
    assert facts.devices.kfd_present == Path("/dev/kfd").exists()
