"""The real-tool tests of tests/unit/test_packages_and_floors.py: they run hipcc and the doctor,
so they live in tests/integration (issue 42 item 6)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocmforge.knowledge.components import (
    load_components,
)

KIT = Path(__file__).resolve().parents[2]
TABLE = {c.name: c for c in load_components()}




@pytest.mark.needs_tool("hipcc")
def test_real_debian_install_gets_debian_names_in_doctor() -> None:
    done = subprocess.run([sys.executable, "-m", "invoke", "doctor", "--json", "--arch",
                           "gfx90a"], cwd=KIT, capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PYTHONPATH": str(KIT), "HIP_PLATFORM": "amd"})
    assert done.returncode == 1, done.stderr
    rows = {r["check"]: r for r in json.loads(done.stdout)["rows"]}
    fix = rows["ROCm components"]["fix"]
    assert "hiprand: libhiprand-dev (Debian)" in fix
    assert "amdrocm-" not in fix  # this is Debian's /usr, not a ROCm >= 7.14 install
