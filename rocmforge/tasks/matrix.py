"""Invoke task: matrix. Thin adapter: parse flags, call plan.matrix / plan.workflow, print.

Imports only invoke and rocmforge.tasks._common at module level (`invoke --list` stays fast).
Must not: plan cells or write the workflow text itself.
"""

from __future__ import annotations

from invoke import Context, task

from rocmforge.tasks._common import project_dir, reported, settings_for
from rocmforge.tasks._flags import TableTask


# The flags' spelling, short letters and help come from the one flag table (settings.FLAGS);
# --ref and --group repeat here (one matrix row per ref, one column per group).
@task(klass=TableTask, auto_shortflags=False, iterable=["ref", "group"],
      help={"ref": "a PyTorch tag, branch or commit (repeatable; default: setting matrix_refs, "
                   "else pytorch_ref)",
            "arch": "targets of a single group when no --group is given"})
@reported
def matrix(c: Context, ref: list[str] | None = None, group: list[str] | None = None,
           arch: str = "", workflow: bool = False) -> None:
    """Print the build matrix for many machines.

    Many machines: the (ref x target group) build matrix as JSON, or --workflow a workflow."""
    import json
    import sys
    from pathlib import Path

    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.plan.matrix import parse_group_flags, plan_matrix, split_refs
    from rocmforge.plan.workflow import render_workflow

    settings = settings_for(c, arch=arch)
    refs = list(ref or []) or list(split_refs(settings.matrix_refs)) or [settings.pytorch_ref]
    groups = parse_group_flags(group or []) or dict(settings.matrix_groups)
    if not groups and settings.arch:
        groups = {"default": settings.arch}
    the_matrix = plan_matrix(refs, groups, load_arch_table())
    if workflow:
        from rocmforge.errors import is_vendored
        from rocmforge.sessions.vendor import kit_root

        kit_dir, prefix = ".", ""
        project = project_dir(Path.cwd())
        if is_vendored() and project is not None and kit_root().is_relative_to(project):
            kit_dir, prefix = kit_root().relative_to(project).as_posix(), "rocm."
        sys.stdout.write(render_workflow(the_matrix, cache=settings.cache,
                                         work_dir=settings.work_dir, kit_dir=kit_dir,
                                         task_prefix=prefix))
        return
    # One line, so `echo "matrix=$(invoke matrix)" >> "$GITHUB_OUTPUT"` works.
    print(json.dumps(the_matrix.to_json(), separators=(",", ":")))


TASKS: tuple = (matrix,)
COLLECTIONS: tuple = ()
