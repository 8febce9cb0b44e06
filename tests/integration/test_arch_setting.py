"""A bad GPU target, through the real program: the typed `arch` setting refuses it when the
settings are resolved, in one paragraph, exit 2, with no traceback and no work dir made."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# The `rocmforge` program of this checkout.
ROCMFORGE = (sys.executable, "-c", "from rocmforge.cli import program; program.run()")


def test_an_unknown_target_stops_plan_before_anything_is_made(tmp_path: Path) -> None:
    work = tmp_path / "work"
    env = {**os.environ, "ROCMFORGE_ARCH": "gfx1100;gfx9999"}
    done = subprocess.run([*ROCMFORGE, "plan", "--work-dir", str(work)], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith('rocmforge: "gfx9999" is not a GPU target the kit knows. '
                                  'Did you mean "gfx909"? ')
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert not work.exists()
