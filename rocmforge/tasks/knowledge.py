"""Invoke tasks: knowledge. Thin adapter: read a PyTorch tree, merge it with the table, print."""

from __future__ import annotations

from invoke import Context

from rocmforge.tasks._common import reported
from rocmforge.tasks._flags import flagged


@flagged(
    help={
        "ref": "the ref that tree is checked out at, for messages (default: the tree's "
        "version.txt decides the table row whatever the ref is)",
        "json": "print the rocmforge.pytorch_facts/1 JSON document instead of tables",
    },
)
@reported
def knowledge(c: Context, tree: str = "", ref: str = "", json: bool = False) -> None:
    """Show what the kit reads from a PyTorch tree, where each fact came from, and the table row
    beside it (the tree wins; disagreements are listed)."""
    from rocmforge import render
    from rocmforge.errors import UsageError
    from rocmforge.plan.pytorch_facts import facts_for
    from rocmforge.probes.tree import read_tree_facts

    if not tree:
        raise UsageError(
            "no tree given",
            "knowledge reads the facts a PyTorch checkout states about itself",
            "run `invoke knowledge --tree PATH` with the folder of a PyTorch checkout",
        )
    tree_facts = read_tree_facts(tree)
    facts = facts_for(ref or "HEAD", tree_facts)
    if json:
        render.emit_json(facts.as_dict())
        return
    row = facts.table_row or "none"
    if facts.table_row and facts.row_is_estimate:
        row += " (estimate: the newest row; the tree is newer than the table)"
    render.print_table(
        f"PyTorch facts of {tree_facts.root} (table row: {row})",
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
