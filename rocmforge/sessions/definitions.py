"""The kit's nox sessions `verify(<target>)` and `build`, registered on import.

Owns: the session bodies, kept thin (decisions live in rocmforge.sessions.support). The kit's own
noxfile.py imports this module, and so does a repo that vendored the kit (`rocm_nox.py`), which
is why it lives in the package and not in noxfile.py.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

import nox

from rocmforge.sessions import support as nox_support

ROOT = Path(__file__).resolve().parents[2]  # the kit root: pyproject.toml, setup.py, config/
# The project: the noxfile's folder (nox runs there), where `invoke build` / `invoke rocm.build`
# also runs; its work dir (and invoke.yaml) decide where the wheels are.
PROJECT = Path.cwd()

__all__ = ["build", "verify"]


def _verify_targets() -> list[str]:
    environ = os.environ
    return nox_support.session_targets(
        nox_support.dist_dir(PROJECT, environ), environ,
        lambda: nox_support.config_targets(environ),
    )


_TARGETS = _verify_targets()


def _no_uv_probe() -> None:
    """nox asks for uv before it makes any virtualenv, whatever the backend, and logs "uv binary
    not found." in every session of a machine without uv. Where uv is absent (no `uv` on PATH,
    no UV variable, no uv package beside nox), nox is told so up front, through the module
    values its own lookup reads first (nox.virtualenv._uv_state: "respecting monkeypatched
    values"); with uv present, nox looks for itself as before."""
    import importlib.util
    import shutil

    if os.environ.get("UV") or shutil.which("uv") or importlib.util.find_spec("uv"):
        return
    try:
        from nox import virtualenv
        from packaging.version import Version
    except ImportError:
        return
    virtualenv.HAS_UV, virtualenv.UV, virtualenv.UV_VERSION = False, "uv", Version("0.0")


_no_uv_probe()


def _as_typed() -> dict[str, str]:
    """The environment that makes the programs a session runs (`rocmforge build`, the verify
    suite: both from a copy of the kit, which holds no vendoring record) name the kit's tasks
    as this project reaches them: `invoke rocm.build` in a repository that vendored the kit."""
    from rocmforge.errors import TASK_PREFIX_ENV, is_vendored

    return {TASK_PREFIX_ENV: "rocm." if is_vendored() else ""}


# Nothing to verify (no manifest, or an unreadable one): the session only reports that, so it
# gets no venv (nox would make one before the body runs).
# Targets named by ROCMFORGE_VERIFY_TARGETS with no torch wheel in dist/ are nothing to verify
# either: the session says so without making a venv first.
_NOTHING = all(t in (nox_support.NO_TARGETS, nox_support.BAD_MANIFEST) for t in _TARGETS) or \
    not any(nox_support.dist_dir(PROJECT, os.environ).glob("torch-*.whl"))


@nox.session(default=False, reuse_venv=False, venv_backend="none" if _NOTHING else None)
@nox.parametrize("target", _TARGETS, ids=_TARGETS)
def verify(session: nox.Session, target: str) -> None:
    """Fresh venv with the built torch, Triton and companion wheels; the checks per target."""
    from packaging.tags import sys_tags

    from rocmforge.errors import RocmforgeError, UsageError

    dist = nox_support.dist_dir(PROJECT, os.environ)
    try:
        plan = nox_support.plan_session(target, dist=dist, environ=os.environ,
                                        supported_tags=sys_tags(),
                                        python=platform.python_version())
    except RocmforgeError as exc:
        nox_support.bail(exc)
        return
    from rocmforge.errors import task_names

    for note in plan.notes():
        session.warn(task_names(note))
    # A torch built against TheRock's pip SDK requires rocm[libraries]: from the SDK's index.
    sdk_index = nox_support.sdk_index(plan.manifest)
    session.install(*(str(wheel) for wheel in plan.wheels.paths),
                    *(("--extra-index-url", sdk_index) if sdk_index else ()))
    # Then the venv is pinned to these wheels (rocmforge.sources.constraints): a `pip install`
    # of anything that wants another torch stops there instead of replacing the one under test.
    from rocmforge.sources.constraints import protect_venv

    try:
        protect_venv(Path(session.virtualenv.location), [w.name for w in plan.wheels.paths])
    except RocmforgeError as exc:  # a pip.conf pip cannot parse: one paragraph, exit 2
        nox_support.bail(exc)
        return
    # the kit itself: verify + the offload-bundle reader for `static`
    session.install(str(nox_support.kit_copy(ROOT, Path(session.create_tmp()))))
    plan.report.parent.mkdir(parents=True, exist_ok=True)
    plan.report.unlink(missing_ok=True)
    session.run(*plan.verify_argv("python"), success_codes=[0, 1, 2], env=_as_typed())
    code = nox_support.read_report_exit(plan.report)
    if code is None:
        nox_support.bail(UsageError(
            f"verify({target}) produced no report: torch in the session's venv is unusable "
            "(its message is above)",
            "", f"check the wheels in {dist}; `python -m rocmforge.verify` inside "
            f"{session.virtualenv.location} shows the same error"))
    if code:
        session.error(task_names(
            f"verify({target}) found failures: see the table above and {plan.report}"))


@nox.session(default=False, reuse_venv=False)
def build(session: nox.Session) -> None:
    """`invoke build` inside a fresh virtualenv nox makes; wheels land in the work dir's dist/."""
    from rocmforge.sessions.project import project_work_dir

    # From a copy: pip's in-tree build (build/, *.egg-info) must not land in a vendored copy of
    # the kit inside the user's repository.
    session.install(str(nox_support.kit_copy(ROOT, Path(session.create_tmp()))))
    python = str(Path(session.virtualenv.location) / "bin" / "python")
    # The same work dir as `invoke rocm.build` in this folder (invoke.yaml, ROCMFORGE_WORK_DIR):
    # the `rocmforge` script has no tasks.py beside it, so it would not read invoke.yaml.
    given = any(a in ("-w", "--work-dir") or a.startswith("--work-dir=")
                for a in session.posargs)
    work = [] if given else ["--work-dir", str(project_work_dir(PROJECT, os.environ))]
    session.run("rocmforge", "build", "--python", python, *work, *session.posargs,
                env=_as_typed())
