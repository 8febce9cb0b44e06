"""The real-tool tests of tests/unit/test_knowledge_tables.py: they run the kit's `invoke plan`,
so they live in tests/integration (issue 42 item 6)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

KIT = Path(__file__).resolve().parents[2]
SHA = "0123456789abcdef0123456789abcdef01234567"


def _plan_json(ref: str, tmp_path: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "invoke", "plan", "--arch", "gfx1100", "--json",
         "--work-dir", str(tmp_path / "w"), "--ref", ref],
        cwd=KIT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_plan_of_a_commit_claims_no_release(tmp_path: Path) -> None:
    plan = _plan_json(SHA, tmp_path)
    assert plan["settings"]["pytorch_version"] == ""
    assert (f"pytorch_version is not known before the checkout: '{SHA}' names no release, so "
            "its version.txt decides; until then the newest table row's facts are an estimate"
            ) in plan["notes"]
    tagged = _plan_json("v2.9.1", tmp_path)
    assert tagged["settings"]["pytorch_version"] == "2.9.1"
    assert not any("not known before the checkout" in n for n in tagged["notes"])
