"""Pipeline stages around the build venv: its build requirements and the final install.

Owns: the build-requirements and install actions, the pip command that installs exactly the
built wheels (`WheelInstall`: the interpreter and the wheels, typed; its argv is pip's), the
`invoke install` checks (PEP 668, the manifest). Must not: choose which wheels
exist (collect does) or create the venv (a plain argv step does).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rocmforge import process
from rocmforge.errors import RocmforgeError, StepFailed
from rocmforge.execute.action_args import InVenv
from rocmforge.execute.actions import ActionContext, Details
from rocmforge.knowledge.setuptools_pin import PKG_RESOURCES_PIN, SETUPTOOLS_WITHOUT_PKG_RESOURCES
from rocmforge.knowledge.steps import STEP
from rocmforge.probes.hazards import checkout_pkg_resources
from rocmforge.workdir import WorkDir

if TYPE_CHECKING:
    from rocmforge.plan.prepare import PreparedBuild


def build_requirements(build: PreparedBuild, ctx: ActionContext) -> Details:
    from rocmforge.sources.constraints import release_venv

    python = ctx.args(InVenv).python
    if release_venv(ctx.workdir.venv):
        ctx.say("lifted the venv's pin of the last build's wheels while the build changes it")
    details = install_requirements(ctx, Path(ctx.step.cwd), python)
    if build.options.build_style == "build":
        code, _ = ctx.capture([python, "-c", "import build"], check=False)
        if code != 0:
            ctx.say("`python -m build` is not in the build venv; installing it")
            ctx.run([python, "-m", "pip", "install", "build"])
    return details


def install_requirements(ctx: ActionContext, tree: Path, python: str) -> Details:
    """pip install the checkout's requirement files, with setuptools pinned below the release
    that removed pkg_resources when the checkout's setup.py (or a module it loads) imports it.
    The checkout decides the pin, so the step's digest (the checkout's) covers it."""
    files = [name for name in ("requirements.txt", "requirements-build.txt")
             if (tree / name).is_file()]
    users = list(checkout_pkg_resources(tree))
    pins = [PKG_RESOURCES_PIN] if users else []
    if users:
        ctx.say(f"{', '.join(users)} import pkg_resources, which setuptools "
                f"{SETUPTOOLS_WITHOUT_PKG_RESOURCES} removed: installing '{PKG_RESOURCES_PIN}'")
    if files or pins:
        argv = [python, "-m", "pip", "install"]
        for name in files:
            argv += ["-r", name]
        ctx.run([*argv, *pins])
    if not files:
        ctx.say("no requirements.txt or requirements-build.txt in the checkout")
    return {"files": files, "pins": pins}


def install(build: PreparedBuild, ctx: ActionContext) -> Details:
    python = ctx.args(InVenv).python
    names = ctx.details_of(STEP.collect)
    wheels = [str(ctx.workdir.dist / str(names[k])) for k in ("triton", "torch") if names.get(k)]
    if not wheels:
        raise StepFailed("There is no wheel to install", "the collect step recorded none",
                         "run the build again")
    install_pinned(ctx, python, wheels, wheels)
    return {"installed": wheels}


def install_pinned(ctx: ActionContext, python: str, wheels: Sequence[str],
                   pinned: Sequence[str]) -> None:
    """Install `wheels` into the build venv and then pin it to `pinned` (rocmforge.sources.
    constraints): the old pin is lifted first (it would refuse the new versions), and the new
    one is written only once pip succeeded, so a later `pip install` there cannot swap torch."""
    import os

    from rocmforge.sources.constraints import check_pip_configuration, protect_venv, release_venv

    check_pip_configuration(ctx.workdir.venv, os.environ)  # a bad pip.conf: before pip runs
    release_venv(ctx.workdir.venv)
    ctx.run(pip_install_argv(python, wheels))
    written = protect_venv(ctx.workdir.venv, [Path(w).name for w in pinned])
    ctx.say(f"pinned the build venv to {', '.join(Path(w).name for w in pinned)} ({written})")


def externally_managed(python: str) -> str:
    """The EXTERNALLY-MANAGED marker path when `python` is a PEP 668 system Python, else ""."""
    probe = (
        "import os, sys, sysconfig\n"
        "marker = os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED')\n"
        "in_venv = sys.prefix != getattr(sys, 'base_prefix', sys.prefix)\n"
        "print(marker if os.path.isfile(marker) and not in_venv else '')\n"
    )
    done = process.run([python, "-c", probe])
    if done.returncode != 0:
        raise RocmforgeError(
            f"{python} could not be run ({done.stderr.strip()[-200:] or done.returncode})",
            "the wheels are installed with that interpreter's pip",
            "pass --python with the path of a working interpreter",
        )
    return done.stdout.strip()


@dataclass(frozen=True, kw_only=True)
class WheelInstall:
    """Exactly these wheel files installed into one interpreter (pip_install_argv's command):
    what `invoke install` runs, prints and reports, read by field, never from argv."""

    python: str
    wheels: tuple[str, ...]

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(pip_install_argv(self.python, self.wheels))


def install_argv(workdir: WorkDir, python: str = "") -> list[str]:
    """install_command's pip command line."""
    return list(install_command(workdir, python).argv)


def install_command(workdir: WorkDir, python: str = "") -> WheelInstall:
    """The pip command of `invoke install`: the dist/ wheels of the finished build into `python`
    (default: the build venv), after the checks that make it safe (each a UsageError, exit 2):
    the interpreter exists and runs, dist/manifest.json is the kit's, and `python` is not a
    PEP 668 system Python. Runs only the interpreter's probe; installs nothing."""
    from rocmforge.errors import ConfigError, UsageError
    from rocmforge.knowledge.manifest import read_manifest

    target = python or str(workdir.venv / "bin" / "python")
    found = target if "/" in target else shutil.which(target)
    if not found or not Path(found).is_file():
        if python:
            raise UsageError(
                f"The interpreter {python!r} given with --python does not exist",
                "the wheels are installed with that interpreter's pip",
                "pass the path of an interpreter that exists, e.g. ENV/bin/python of a "
                "virtualenv made with `python3 -m venv ENV`",
            )
        raise UsageError(
            f"The build venv's interpreter {target} does not exist",
            "without --python, the wheels go into the build venv that `invoke build` makes",
            "run `invoke build` first, or pass --python with the interpreter of another "
            "virtualenv",
        )
    manifest = workdir.dist / "manifest.json"
    try:
        read = read_manifest(manifest)
        wheels_doc = read.wheels
        # Triton, then torch, then the companions built against that torch (their own pins name it).
        names = [wheels_doc[k] for k in ("triton", "torch") if wheels_doc.get(k)]
        names += [record.wheel for record in read.companions.values() if record.wheel]
        has_torch = bool(wheels_doc.get("torch"))
    except ConfigError:
        names, has_torch = [], False
    if not has_torch:
        raise UsageError(
            f"{manifest} is missing or not a rocmforge manifest",
            "install takes the wheels that a finished build listed there",
            "run `invoke build` first",
        )
    from rocmforge.knowledge.manifest import refuse_disagreeing_dist

    refuse_disagreeing_dist(read)
    marker = externally_managed(found)
    if marker:
        raise UsageError(
            f"{found} is a system Python managed by the OS package manager ({marker} exists)",
            "installing into it with pip can break OS tools (PEP 668)",
            "create a virtualenv (python3 -m venv ENV) and pass --python ENV/bin/python",
        )
    return WheelInstall(python=found, wheels=tuple(str(workdir.dist / name) for name in names))


def pip_install_argv(python: str, wheels: Sequence[str]) -> list[str]:
    """Exactly these wheel files, replacing what is installed, dependencies untouched (the build
    venv already has them; a resolver run could pull a CUDA torch or triton back in)."""
    return [python, "-m", "pip", "install", "--no-deps", "--force-reinstall", *wheels]


def checked_venv(python: str) -> Path | None:
    """The venv `python` belongs to (None: not a venv), after the check that every pip.conf it
    reads parses (UsageError, exit 2): `invoke install` makes it before it prints the pip
    command, so a refusal never follows a command line that looks as if pip ran."""
    import os

    from rocmforge.sources.constraints import check_pip_configuration

    asked = process.run([python, "-c", "import sys; print(sys.prefix if sys.prefix != "
                         "sys.base_prefix else '')"])
    venv = Path(asked.stdout.strip()) if asked.ok and asked.stdout.strip() else None
    if venv is not None:
        check_pip_configuration(venv, os.environ)
    return venv


def install_pinned_venv(command: WheelInstall,
                        state_dir: Path | None = None) -> tuple[bool, list[str]]:
    """`invoke install`: run pip's command (install_command), then pin the target to the wheels
    it installed when it is a venv (rocmforge.sources.constraints; an interpreter that is not a
    venv is left alone). The old pin is lifted first; a venv pinned is added to `state_dir`'s
    list, which `doctor` checks. Returns (pip succeeded, lines to show)."""
    import contextlib
    import sys

    from rocmforge.sources.constraints import protect_venv, record_pinned, release_venv

    venv = checked_venv(command.python)
    if venv is not None:
        with contextlib.suppress(OSError):
            release_venv(venv)
    result = process.run(list(command.argv), log=sys.stdout)
    if not result.ok or venv is None:
        return result.ok, []
    try:
        written = protect_venv(venv, [Path(w).name for w in command.wheels])
    except OSError as exc:
        return True, [f"note: {venv} is not pinned to these wheels ({exc.strerror}: "
                      f"{exc.filename})"]
    if state_dir is not None:
        with contextlib.suppress(OSError):
            record_pinned(state_dir, venv)
    return True, [f"pinned {venv} to these wheels ({written})"]
