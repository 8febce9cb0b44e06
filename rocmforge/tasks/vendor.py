"""Invoke task: vendor. Copies the kit into another repository (see rocmforge.sessions.vendor).

Must not: import the library at module level (`invoke --list` stays fast) or decide what is
copied; rocmforge.sessions.vendor plans and writes.
"""

from __future__ import annotations

from invoke import Context

from rocmforge.tasks._common import is_dry, reported
from rocmforge.tasks._flags import flagged


@flagged(help={"json": "print the plan as JSON instead of a table"})
@reported
def vendor(
    c: Context,
    into: str = "",
    prefix: str = "third_party/rocmforge",
    update: bool = False,
    json: bool = False,
) -> None:
    """Copy the kit into another repository.

    Copy the kit (package, config/, patches/, task and nox adapters) into another repo."""
    from pathlib import Path

    from rocmforge.errors import UsageError
    from rocmforge.render import emit_json, print_table, say
    from rocmforge.sessions import vendor as kit

    if not into:
        raise UsageError(
            "invoke vendor needs --into DIR",
            "it copies the kit into another repository and must know which",
            "run: invoke vendor --into ../your-repo",
        )
    dest = Path(into).resolve()
    if not dest.is_dir():
        raise UsageError(
            f"--into {into} is not an existing directory",
            "vendoring copies the kit into a repository that already exists",
            "create or clone it first, or fix the path",
        )
    prefix = kit.checked_prefix(prefix)
    files = kit.kit_files(kit.kit_root())
    rels = [f"{prefix}/{r}" for r in files] + [
        "tasks.py",
        "rocm_tasks.py",
        "rocm_nox.py",
        "noxfile.py",  # read only: are the printed lines already there?
    ]
    existing = kit.read_existing(dest, rels)
    record = kit.read_record(dest, prefix)
    plan = kit.plan_vendor(
        dest=dest, files=files, prefix=prefix, update=update, record=record, existing=existing
    )
    if update:
        diff = kit.diff_text(plan, existing)
        if diff:
            print(diff, end="")
    counts: dict[str, int] = {}
    for copy in plan.copies:
        counts[copy.action] = counts.get(copy.action, 0) + 1
    if json:
        emit_json(
            {
                "schema": "rocmforge.vendor-plan/1",
                "dest": str(dest),
                "prefix": plan.prefix,
                "counts": counts,
                "files": [
                    {"path": c.rel, "action": c.action, "reason": c.reason} for c in plan.copies
                ],
                "instructions": list(plan.instructions),
            }
        )
    else:
        rows = kit.summary_rows(plan)
        print_table(f"vendor into {dest}", ("action", "path", "note"), rows or [("same", "-", "")])
    if is_dry(c):
        say("dry run: nothing written.")
        return
    kit.apply_vendor(plan)
    say(f"wrote {len(plan.writes())} file(s) under {dest}.")
    if plan.instructions:
        say("Add to that repo's tasks.py / noxfile.py (each line whole):")
        for line in plan.instructions:
            say("    " + line, whole=True)
    for what, command in kit.setup_hints(plan, files):
        say(f"Then {what}:")
        say("    " + command, whole=True)


TASKS = (vendor,)
COLLECTIONS: tuple = ()
