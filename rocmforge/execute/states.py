"""Where a plan stands in a work dir: which steps are done and where a build would start.

Owns: the first step to run (the first whose stamp is missing, has another digest, or whose
declared outputs are gone), a step's missing outputs, the stray wheels in dist/ (which re-run
only the steps that write the manifest, not the builds), and each step's planned state for
`invoke plan` and `--dry`. Read-only: it reads stamps and looks for outputs, nothing else, so
`invoke plan` needs no runner. Must not: write, run, or lock anything (rocmforge.execute.runner).
"""

from __future__ import annotations

import os

from rocmforge.execute.model import Plan, Step
from rocmforge.execute.stamps import read_stamp
from rocmforge.workdir import WorkDir


def first_to_run(plan: Plan, workdir: WorkDir) -> int:
    """Index of the first step whose stamp is missing or has another digest (len = none).
    Volatile steps before it are still re-checked when the build runs (planned_states)."""
    for index, step in enumerate(plan.steps):
        stamp = read_stamp(workdir.state, step.name)
        if stamp is None or stamp.digest != step.digest() or missing_outputs(step):
            return index
    return len(plan.steps)


def missing_outputs(step: Step) -> list[str]:
    """What no longer holds of the step's declared outputs, one phrase each: an output that is
    gone (a deleted dist/ or venv/), and for a dist/manifest.json, a manifest that cannot be
    read or whose wheels are not the ones it records (gone, replaced, another size). Its stamp
    then proves nothing, so the step and every later one run again."""
    from rocmforge.knowledge.manifest import MANIFEST_NAME

    out = []
    for path in step.outputs:
        if not os.path.lexists(path):
            out.append(f"{path} is gone")
        elif os.path.basename(path) == MANIFEST_NAME:
            out += _manifest_disagrees(path)
    return out


def _manifest_disagrees(path: str) -> list[str]:
    from pathlib import Path

    from rocmforge.errors import ConfigError
    from rocmforge.knowledge.manifest import read_manifest, wheel_problems

    try:
        return wheel_problems(read_manifest(Path(path)), deep=False, unlisted=False)
    except ConfigError as exc:
        return [exc.what]


def stray_wheels(step: Step) -> list[str]:
    """The wheels in dist/ that the step's dist/manifest.json does not list (a wheel put there
    by hand, a collect killed after its copy). They do not void the builds' stamps: only the
    steps that write the manifest run again (their collect removes what it does not list)."""
    from pathlib import Path

    from rocmforge.errors import ConfigError
    from rocmforge.knowledge.manifest import MANIFEST_NAME, read_manifest, unlisted_wheels

    for path in step.outputs:
        if os.path.basename(path) == MANIFEST_NAME and os.path.isfile(path):
            try:
                return [str(p) for p in unlisted_wheels(read_manifest(Path(path)))]
            except ConfigError:
                return []  # missing_outputs says so, and the step runs again anyway
    return []


def writes_manifest(step: Step) -> bool:
    """Whether the step declares dist/manifest.json as its output (the collect steps)."""
    from rocmforge.knowledge.manifest import MANIFEST_NAME

    return any(os.path.basename(path) == MANIFEST_NAME for path in step.outputs)


def planned_states(plan: Plan, workdir: WorkDir) -> list[str]:
    """Per step, without running anything: "done" (stamp matches, skipped), "checks" (stamp
    matches, but the step is volatile: the build re-checks it, and a change redoes every later
    step) or "to run" (a collect step runs again, its stamp matching, when dist/ holds a wheel
    the manifest does not list). For `invoke plan` and `--dry`."""
    start_at = first_to_run(plan, workdir)
    recollect = any(stray_wheels(step) for step in plan.steps[:start_at])
    return [
        "to run" if index >= start_at or (recollect and writes_manifest(step))
        else ("checks" if step.volatile else "done")
        for index, step in enumerate(plan.steps)
    ]
