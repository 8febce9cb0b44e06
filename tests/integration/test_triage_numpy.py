"""torch's own words when NumPy cannot be used, from the real torch installed here: triage
reads "Numpy is not available" as a packaging failure of numpy, and the warning before it
alone as nothing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rocmforge.triage import explain_text

SCRIPT = "import sys\nsys.modules['numpy'] = None\nimport torch\ntorch.zeros(2).numpy()\n"


@pytest.mark.needs_import("torch")
def test_torch_without_numpy_is_a_numpy_packaging_failure() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode != 0
    assert "RuntimeError: Numpy is not available" in done.stderr
    found = explain_text(done.stderr)
    assert (found.klass, found.subject, found.rule) == (
        "python-packaging", "numpy", "torch-numpy-unavailable")
    assert "pip install numpy" in found.fix
    warning = next(line for line in done.stderr.splitlines()
                   if "Failed to initialize NumPy" in line)
    assert explain_text(warning).klass is None
