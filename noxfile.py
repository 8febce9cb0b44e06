"""nox sessions for rocmforge. Thin: every decision lives in the package (rocmforge.sessions)."""

from __future__ import annotations

import sys
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:  # the kit's own package, also when nox runs outside its venv
    sys.path.insert(0, str(ROOT))

from rocmforge.sessions.definitions import build, verify  # noqa: E402,F401  (registers the sessions)

nox.needs_version = ">=2024.4.15"
nox.options.sessions = ["tests", "lint"]
nox.options.reuse_existing_virtualenvs = True
nox.options.default_venv_backend = "virtualenv"


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (real compilers, git and update-alternatives where installed)."""
    session.install("-e", ".[test]")
    session.run("pytest", *session.posargs, success_codes=[0])


@nox.session
def lint(session: nox.Session) -> None:
    """ruff and mypy over the package, tasks.py and noxfile.py."""
    session.install("-e", ".[test]")
    session.run("ruff", "check", "rocmforge", "tests", "tasks.py", "noxfile.py", "benchmarks")
    session.run("mypy")
