"""The real-tool tests of tests/unit/test_verify_units.py: they run a Python child process,
so they live in tests/integration (issue 42 item 6)."""

from __future__ import annotations

from pathlib import Path


def test_verify_package_imports_only_stdlib_at_module_level() -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    code = (
        "import sys, rocmforge.verify, rocmforge.verify.__main__, rocmforge.verify.report, "
        "rocmforge.verify.checks, rocmforge.verify.checks.comm, rocmforge.verify.checks.triton\n"
        "bad = [m for m in ('torch', 'invoke', 'rich', 'elftools', 'packaging') "
        "if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == ""
