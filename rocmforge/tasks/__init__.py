"""The kit's Invoke collection, named `rocm`.

A checkout's top-level tasks.py uses it as its root namespace (`invoke build ...`); another repo
adds it with `ns.add_collection(rocmforge.tasks.ns)` (`invoke rocm.build ...`). Defaults come from
config/defaults.toml through `Collection.configure`, so that repo's invoke.yaml can override them
under `rocm:`. Each task module keeps its heavy imports inside the task bodies.
"""

from __future__ import annotations

from invoke import Collection

from rocmforge.tasks import build, doctor, inspect, sources, toolchain, verify, vendor


def _collection() -> Collection:
    ns = Collection("rocm")
    for module in (doctor, toolchain, sources, build, inspect, verify, vendor):
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


ns = _collection()
