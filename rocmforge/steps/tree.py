"""Pipeline stage right after the checkout: the tree's own facts against the plan's.

Owns: the tree-facts action. Before the checkout the plan is made from config/pytorch.toml (an
estimate for a branch or commit, and a table that can be wrong); once the tree exists, its
version.txt, CMakeLists.txt, pyproject.toml/setup.py and requirements say what this PyTorch
needs. When they change what the plan assumed (the build backend and so the build command, the
CMake, compiler or Python floor), the step stops before any long step: the same command again
plans from the tree, and preflight re-judges the machine by the tree's floors. Must not: edit
the tree or re-plan by itself (the plan is made once per invocation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rocmforge.errors import StepFailed
from rocmforge.execute.actions import ActionContext, Details

if TYPE_CHECKING:
    from rocmforge.plan.prepare import PreparedBuild

# What the plan depends on, as PytorchRelease fields (plan.build_plan._assumed names them).
PLANNED_FACTS = ("build_style", "scikit_build_core", "cmake_min", "gcc_min", "clang_min",
                 "python")


def tree_facts(build: PreparedBuild, ctx: ActionContext) -> Details:
    from rocmforge.plan.pytorch import pytorch_for

    side = pytorch_for(build.settings, ctx.workdir)
    if not side.from_tree:
        raise StepFailed(
            f"The checkout in {ctx.workdir.pytorch} is not the one {ctx.workdir.lock_file} "
            f"names for {build.settings.pytorch_ref}",
            "the tree's facts can only be read from the checkout of the ref being built",
            "run the build again; if it repeats, `invoke clean --all` and build",
        )
    for fact in side.facts.facts.values():
        if fact.name != "rocm_components":
            ctx.say(f"{fact.name}: {fact.value or 'none'} ({fact.source})")
    for note in side.notes():
        ctx.say(f"note: {note}")
    was, now = build.inputs.release, side.release
    changed = [(name, str(getattr(was, name)), str(getattr(now, name)))
               for name in PLANNED_FACTS if str(getattr(was, name)) != str(getattr(now, name))]
    if changed:
        listed = "; ".join(f"{name}: planned {old or 'none'}, the tree says {new or 'none'}"
                           for name, old, new in changed)
        made_from = ("the tree" if build.inputs.pytorch.from_tree else
                     "the table (config/pytorch.toml), an estimate before the checkout")
        raise StepFailed(
            f"The checkout of {build.settings.pytorch_ref} ({now.label}) needs other build "
            f"facts than this plan assumed: {listed}",
            f"the plan was made from {made_from}; the tree wins",
            "run the same command again: the plan is then made from the checkout's own facts "
            "and preflight judges the machine by them (finished steps are kept)",
        )
    sdk = build.inputs.sdk
    if sdk is not None and sdk.installed_root and not build.inputs.pytorch.from_tree:
        raise StepFailed(
            f"The wheel's version ({side.facts.version}+{sdk.local_version}) comes from the "
            "checkout, which this plan was made without",
            "a build against the pip ROCm SDK sets PYTORCH_BUILD_VERSION from version.txt",
            "run the same command again: the plan is then made from the checkout (finished "
            "steps are kept)",
        )
    details: dict[str, object] = {"version": side.facts.version, "facts": side.facts.as_dict(),
                                  "fingerprint": "intact"}
    drift = _kit_edits_drift(ctx)
    if drift:
        # The stamps of patches and hipify say the tree holds the kit's edits; it does not
        # (`git reset --hard`, a user's edit): every later step runs again (issue 14 item 5a).
        ctx.notice(f"the tree changed since the kit's patches and hipify ({drift}): they and every "
                "later step run again")
        details["redo_later"] = True
    return details


def _kit_edits_drift(ctx: ActionContext) -> str:
    """Why the tree no longer is what the kit's edits left ("" when it is, or nothing is
    recorded yet)."""
    from rocmforge.sources.checkout import head_commit, local_changes, tree_state
    from rocmforge.steps.checkout import recorded_state

    tree = ctx.workdir.pytorch
    head = head_commit(tree)
    recorded = recorded_state(ctx.workdir, head) if head else ""
    if not recorded or tree_state(tree) == recorded:
        return ""
    if not local_changes(tree):
        return "it has no local changes: reset to its commit"
    from rocmforge.steps.checkout import stop_on_user_edits

    stop_on_user_edits(ctx.workdir, head, "applying the kit's patches and hipify again")
    return "files were changed, added or removed after the kit's edits"
