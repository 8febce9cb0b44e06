"""The kit's Invoke collection, named `rocm`.

A checkout's top-level tasks.py uses it as its root namespace (`invoke build ...`); another repo
adds it with `ns.add_collection(rocmforge.tasks.ns)` (`invoke rocm.build ...`). Defaults come from
config/defaults.toml through `Collection.configure`, so that repo's invoke.yaml can override them
under `rocm:`. Each task module keeps its heavy imports inside the task bodies.
"""

from __future__ import annotations

import sys
from pathlib import Path

from invoke import Collection

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


def _project_dir(start: Path) -> Path | None:
    """The folder Invoke takes tasks.py from: the nearest one at or above `start`."""
    for folder in (start, *start.parents):
        if (folder / "tasks.py").is_file():
            return folder
    return None


def check_project_yaml(start: Path | None = None) -> None:
    """Stop with exit 2 when the project's invoke.yaml cannot be read.

    Invoke parses that file itself after loading the tasks and answers a YAML error with a
    traceback; checking it here gives the user one paragraph instead.
    """
    folder = _project_dir(start or Path.cwd())
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


check_project_yaml()
ns = _collection()
