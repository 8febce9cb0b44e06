"""Which PyTorch this invocation builds: its facts from the checkout first, the table second.

Owns: `pytorch_for(settings)`, the one place that decides whether the work dir's checkout is the
tree being built (it is when the lock file the checkout wrote names the same repository and ref)
and merges its facts with config/pytorch.toml. Before a checkout, or when the checkout is of
another ref, the table's row is an estimate and the plan says so; the build's tree-facts step
reads the tree again right after the checkout. Must not: run git or anything else; it reads
files only (through probes.tree and sources.lockfile).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rocmforge.knowledge.releases import PytorchRelease
    from rocmforge.plan.pytorch_facts import PytorchFacts
    from rocmforge.probes.tree import TreeFacts
    from rocmforge.settings import Settings
    from rocmforge.workdir import WorkDir


@dataclass(frozen=True, kw_only=True)
class PytorchSide:
    """The PyTorch of one invocation: `facts` (each with its source) and `release`, the table
    row with the tree's facts in place (what doctor, the compiler policy and the plan use)."""

    facts: PytorchFacts
    release: PytorchRelease
    from_tree: bool

    def notes(self) -> tuple[str, ...]:
        """Plan notes: where the table and the tree disagree (the tree wins), or that the
        facts are an estimate until the checkout exists."""
        if not self.from_tree:
            row = self.facts.table_row or "?"
            return (f"PyTorch facts are estimates from config/pytorch.toml {row} until the "
                    "checkout exists; the tree-facts step reads the tree right after the "
                    "checkout and stops if it changes the plan",)
        return tuple(f"the tree and the table disagree: {d.sentence()}"
                     for d in self.facts.disagreements)


def checkout_matches(settings: Settings, workdir: WorkDir) -> bool:
    """Whether the work dir's checkout is of the repository and ref being built (by the lock
    file the checkout wrote)."""
    if not (workdir.pytorch / "version.txt").exists() or not workdir.lock_file.is_file():
        return False
    # Here, not above: importing rocmforge.sources loads all of it (~30 ms), for nothing
    # while there is no checkout.
    from rocmforge.errors import RocmforgeError
    from rocmforge.sources.lockfile import read_lock

    try:
        lock = read_lock(workdir.lock_file)
    except RocmforgeError:
        return False
    return (lock.pytorch_ref == settings.pytorch_ref
            and lock.pytorch_repo == settings.pytorch_repo)


def pytorch_for(settings: Settings, workdir: WorkDir) -> PytorchSide:
    """The facts of the PyTorch being built: from its checkout when the work dir holds it."""
    from rocmforge.knowledge.releases import pytorch_release_for
    from rocmforge.plan.pytorch_facts import effective_release, facts_for
    from rocmforge.probes.tree import read_tree_facts

    tree = read_tree_facts(workdir.pytorch) if checkout_matches(settings, workdir) else None
    if tree is not None:
        stop_on_unreadable_tree(tree)
    facts = facts_for(settings.pytorch_ref, tree)
    row = pytorch_release_for(settings.pytorch_ref, tree_version=facts.version if tree else "")
    release = effective_release(facts, row)
    if tree is None:
        release = _hand_placed_cmake_floor(release, workdir)
    return PytorchSide(facts=facts, release=release, from_tree=tree is not None)


def _hand_placed_cmake_floor(release: PytorchRelease, workdir: WorkDir) -> PytorchRelease:
    """A tree in the checkout folder that no lock file names (copied or cloned there by hand;
    the build configures it as it is): its top CMakeLists.txt's cmake_minimum_required is the
    CMake floor, not the table's (the preflight round's c03: Debian's cmake 3.25.1 passed
    against a tree needing 3.27). Only the floor: the rest of the tree's facts stay the
    table's until the kit's own checkout. A lock naming another ref means the kit checks its
    ref out over the tree, so that tree's floor is not read."""
    from dataclasses import replace

    from rocmforge.probes.tree import CMAKELISTS, FOUND, read_tree_facts

    if workdir.lock_file.exists() or not (workdir.pytorch / CMAKELISTS).is_file():
        return release
    floor = read_tree_facts(workdir.pytorch).cmake_minimum
    if floor.status != FOUND or not floor.value:
        return release
    where = floor.source.removeprefix("tree: ")
    return replace(release, cmake_min=str(floor.value),
                   cmake_min_source=f"{workdir.pytorch / where}, a tree no lock file names")


def stop_on_unreadable_tree(tree: TreeFacts) -> None:
    """A checkout whose version.txt cannot be read (merge-conflict markers, text that is not a
    version) or whose files hold merge-conflict markers: stop with the files named, instead of
    planning from the newest table row as if there were no checkout."""
    from rocmforge.errors import UsageError
    from rocmforge.probes.tree import MALFORMED

    conflicts = [p for p in tree.problems if "merge-conflict markers" in p]
    version_bad = tree.version.status == MALFORMED
    if not conflicts and not version_bad:
        return
    shown = conflicts or [f"{tree.version.source}: {tree.version.detail}"]
    raise UsageError(
        f"the checkout at {tree.root} cannot be read: " + "; ".join(shown),
        "the kit plans from the tree's own facts (its version picks the compilers, ROCm range "
        "and Triton pin); with them unreadable it would plan from a guess",
        f"resolve the conflict in {tree.root} (`git -C {tree.root} status` lists the files), "
        "or check the tree out again with `invoke checkout`",
    )
