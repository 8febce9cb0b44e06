"""The kit's Invoke collection, named `rocm`.

A checkout's top-level tasks.py uses it as its root namespace (`invoke build ...`); another repo
mounts it beside its own tasks with `ns = rocmforge.tasks.mount(globals())` at the end of its
tasks.py (`invoke rocm.build ...`, see `mount`). Defaults come from
config/defaults.toml through `Collection.configure`, so that repo's invoke.yaml can override them
under `rocm:`. Each task module keeps its heavy imports inside the task bodies.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from invoke import Collection, Task

from rocmforge.tasks import (
    build,
    doctor,
    fetch,
    inspect,
    knowledge,
    matrix,
    sources,
    toolchain,
    triage,
    vendor,
    verify,
)
from rocmforge.tasks._common import project_dir


def check_project_yaml(start: Path | None = None) -> None:
    """Stop with exit 2 when the project's invoke.yaml cannot be read.

    Invoke parses that file itself after loading the tasks and answers a YAML error with a
    traceback; checking it here gives the user one paragraph instead.
    """
    folder = project_dir(start or Path.cwd())
    if folder is None:
        return
    for name in ("invoke.yaml", "invoke.yml"):
        path = folder / name
        if not path.exists():
            continue
        try:
            import yaml

            yaml.safe_load(path.read_text())
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            detail = " ".join(str(exc).split())
            sys.stderr.write(
                f"rocmforge: {path} cannot be read: {detail}. Invoke reads it before any task "
                "runs, so no task can start. Fix: correct the YAML (or remove the file).\n"
            )
            raise SystemExit(2) from None


def _collection() -> Collection:
    ns = Collection("rocm")
    for module in (doctor, toolchain, sources, fetch, build, inspect, verify, vendor,
                   knowledge, matrix, triage):
        for task in module.TASKS:
            ns.add_task(task)
        for sub in module.COLLECTIONS:
            ns.add_collection(sub)
    try:
        from rocmforge.settings import defaults_from_config

        ns.configure({"rocm": defaults_from_config()})
    except Exception:  # noqa: BLE001 - a broken config/ is reported by the task that reads it
        ns.configure({"rocm": {}})
    return ns


def mount(their_globals: Mapping[str, object]) -> Collection:
    """The root collection of another repository's tasks.py with the kit added as `rocm`.

    Called as `ns = rocmforge.tasks.mount(globals())` (or `rocm_tasks.mount`, vendored) at the
    end of their tasks.py, it works for both common shapes: a file with an explicit `ns` (or
    `namespace`) Collection gets the kit added to it; a file with only `@task` functions, which
    Invoke would have collected by itself, gets a collection of those tasks first (assigning
    `ns` alone would hide them). From then on every command the kit prints names its tasks as
    `invoke rocm.<task>` (errors.TASK_PREFIX_ENV, also for the programs the kit runs)."""
    from rocmforge.errors import TASK_PREFIX_ENV

    theirs = next((value for key in ("ns", "namespace")
                   if isinstance(value := their_globals.get(key), Collection)), None)
    if theirs is None:
        theirs = Collection()
        tasks = {id(v): v for v in their_globals.values() if isinstance(v, Task)}
        for value in tasks.values():
            theirs.add_task(value)
    if "rocm" not in theirs.collections:
        theirs.add_collection(ns, name="rocm")
    os.environ[TASK_PREFIX_ENV] = "rocm."
    return theirs


check_project_yaml()
ns = _collection()
