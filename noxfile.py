"""nox sessions for rocmforge. Thin: every decision lives in the package (rocmforge.nox_support)."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:  # the kit's own helpers, also when nox runs outside its venv
    sys.path.insert(0, str(ROOT))

from rocmforge import nox_support  # noqa: E402

nox.needs_version = ">=2024.4.15"
nox.options.sessions = ["tests", "lint"]
nox.options.reuse_existing_virtualenvs = True


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


def _verify_targets() -> list[str]:
    environ = os.environ
    return nox_support.session_targets(
        nox_support.dist_dir(ROOT, environ), environ,
        lambda: nox_support.config_targets(environ),
    )


_TARGETS = _verify_targets()


@nox.session(default=False, reuse_venv=False)
@nox.parametrize("target", _TARGETS, ids=_TARGETS)
def verify(session: nox.Session, target: str) -> None:
    """Fresh venv with the built torch + Triton wheels; static and runtime checks per target."""
    from packaging.tags import sys_tags

    from rocmforge.errors import RocmforgeError, UsageError

    dist = nox_support.dist_dir(ROOT, os.environ)
    try:
        plan = nox_support.plan_session(target, dist=dist, environ=os.environ,
                                        supported_tags=sys_tags(),
                                        python=platform.python_version())
    except RocmforgeError as exc:
        nox_support.bail(exc)
        return
    session.install(str(plan.wheels.torch), str(plan.wheels.triton))
    session.install(str(ROOT))  # the kit itself: verify + the offload-bundle reader for `static`
    plan.report.parent.mkdir(parents=True, exist_ok=True)
    plan.report.unlink(missing_ok=True)
    session.run(*plan.verify_argv("python"), success_codes=[0, 1, 2])
    code = nox_support.read_report_exit(plan.report)
    if code is None:
        nox_support.bail(UsageError(
            f"verify({target}) produced no report: torch in the session's venv is unusable "
            "(its message is above)",
            "", f"check the wheels in {dist}; `python -m rocmforge.verify` inside "
            f"{session.virtualenv.location} shows the same error"))
    if code:
        session.error(f"verify({target}) found failures: see the table above and {plan.report}")
