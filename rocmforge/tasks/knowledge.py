"""Invoke tasks: knowledge. Thin adapter: read a PyTorch tree and the ROCm install, merge each
with its table, print."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from invoke import Context

from rocmforge.tasks._common import reported
from rocmforge.tasks._flags import flagged

if TYPE_CHECKING:
    from rocmforge.plan.pytorch_facts import PytorchFacts
    from rocmforge.plan.rocm_facts import RocmFacts
    from rocmforge.settings import Settings


@flagged(
    ("rocm_path", "work_dir"),
    help={
        "tree": "the PyTorch checkout to read (default: the work dir's src/pytorch, when there "
        "is one)",
        "ref": "the ref that tree is checked out at, for messages (default: the tree's "
        "version.txt decides the table row whatever the ref is)",
        "json": "print the rocmforge.pytorch_facts/1 and rocmforge.rocm_facts/1 documents "
        "instead of tables",
    },
)
@reported
def knowledge(c: Context, tree: str = "", ref: str = "", json: bool = False,
              **flags: object) -> None:
    """Show the facts the kit reads, with their sources.

    Show what the kit reads from a PyTorch tree and from the ROCm install, where each fact
    came from, and the table row beside it (the tree and the install win; disagreements are
    listed)."""
    from rocmforge import render
    from rocmforge.settings import settings_of_flags
    from rocmforge.tasks._common import settings_for
    from rocmforge.workdir import workdir_for

    settings = settings_for(c, **settings_of_flags(flags))
    checkout = Path(tree) if tree else workdir_for(settings.work_dir).pytorch
    pytorch = _pytorch_facts(checkout, ref, named=bool(tree))
    rocm = _rocm_facts(settings)
    if json:
        render.emit_json({"pytorch": pytorch.as_dict() if pytorch else None,
                          "rocm": rocm.as_dict() if rocm else None})
        return
    if pytorch is None:
        render.say(f"note: no PyTorch checkout at {checkout} (the work dir's): `invoke checkout` "
                   "makes one, or pass --tree PATH; the ROCm facts follow")
    else:
        _print_pytorch(pytorch)
    if rocm is not None:
        from rocmforge.plan.report import fact_rows, facts_title

        render.print_table(facts_title("ROCm", rocm.as_dict(), "config/rocm.toml"),
                           ("fact", "value", "source"), fact_rows(rocm.as_dict()))
        for note in rocm.notes:
            render.say(f"note: {note}")


def _pytorch_facts(checkout: Path, ref: str, *, named: bool) -> PytorchFacts | None:
    """The tree's facts; None for the default checkout when it is not there yet (a --tree that
    is not a folder is bad input, read_tree_facts says so)."""
    from rocmforge.plan.pytorch_facts import facts_for
    from rocmforge.probes.tree import read_tree_facts

    if not named and not checkout.is_dir():
        return None
    return facts_for(ref or "HEAD", read_tree_facts(checkout))


def _rocm_facts(settings: Settings) -> RocmFacts | None:
    """The facts of the install the build would use (None when there is none)."""
    import os

    from rocmforge.errors import ProbeError
    from rocmforge.plan.rocm_facts import rocm_facts_for
    from rocmforge.probes.rocm import find_rocm_installs, select_rocm

    installs = find_rocm_installs(requested=settings.rocm_path)
    try:
        install = select_rocm(installs, settings.rocm_path, os.environ)
    except ProbeError:
        if settings.rocm_path:
            raise
        return None
    from rocmforge.knowledge.components import components_for
    from rocmforge.probes.rocm_components import find_components

    wanted = [c.name for c in components_for(None, install.version)]
    return rocm_facts_for(install, find_components(install.root, wanted))


def _print_pytorch(facts: PytorchFacts) -> None:
    from rocmforge import render

    row = facts.table_row or "none"
    if facts.table_row and facts.row_is_estimate:
        row += " (estimate: the newest row; the tree is newer than the table)"
    render.print_table(
        f"PyTorch facts of {facts.tree_root} (table row: {row})",
        ("fact", "value", "source", "table"),
        [(f.name, _shown(f.value, f.origin, len(facts.rocm_components) if
                         f.name == "rocm_components" else 0), f.source, f.table_value)
         for f in facts.facts.values()],
    )
    if facts.rocm_components:
        render.print_table(
            "ROCm components cmake/public/LoadHIP.cmake looks for",
            ("component", "required", "line", "only when"),
            [(c.name, "yes" if c.required else "no", c.line, c.condition)
             for c in facts.rocm_components],
        )
    if facts.disagreements:
        render.print_table(
            "Where the table and the tree disagree (the tree wins)",
            ("fact", "tree", "table"),
            [(d.fact, f"{d.tree_value or 'none'} ({d.tree_source})",
              f"{d.table_value} ({d.table_source})") for d in facts.disagreements],
        )
    if facts.problems:
        render.print_table("Problems", ("problem",), [(p,) for p in facts.problems])


def _shown(value: str, origin: str, components: int) -> str:
    if components:
        return f"{components} packages (listed below)"
    if value:
        return value
    return "none" if origin == "tree" else "unknown"


TASKS: tuple = (knowledge,)
COLLECTIONS: tuple = ()
