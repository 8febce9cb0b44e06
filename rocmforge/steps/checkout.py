"""Pipeline stage 2: the PyTorch checkout and the kit's patch series.

Owns: the checkout action (PyTorch at the ref, submodules, the lock file, the fingerprint the
runner compares when it re-checks this volatile step), the record that the kit edits the tree
(patches, hipify) so a later move sets those edits aside instead of stopping, and the patches
action. Must not: decide whether the checkout runs (the runner does, from its stamp).
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rocmforge.execute.action_args import HipifyArgs
from rocmforge.execute.actions import ActionContext, Details
from rocmforge.knowledge.steps import STEP, StepName
from rocmforge.render import count
from rocmforge.workdir import WorkDir

if TYPE_CHECKING:
    from rocmforge.plan.prepare import PreparedBuild
    from rocmforge.sources.checkout import SetAsideStash
    from rocmforge.sources.lockfile import Lock, LockedFix
    from rocmforge.sources.upstream_fixes import BuildConditions


def checkout(build: PreparedBuild, ctx: ActionContext) -> Details:
    from rocmforge.sources import checkout_pytorch
    from rocmforge.sources.checkout import head_commit

    settings = build.inputs.settings
    old_head = head_commit(ctx.workdir.pytorch)
    evidence = kit_edits_evidence(ctx.workdir, old_head) if old_head else ""
    if evidence:
        stop_on_user_edits(ctx.workdir, old_head, f"checking out {settings.pytorch_ref}")
    whose = whose_edits(ctx.workdir, old_head) if evidence else ""
    set_aside = (f"rocmforge: {_stash_words(whose)} of {old_head} before moving to "
                 f"{settings.pytorch_ref}") if evidence else ""
    result, lock, lock_path = checkout_pytorch(settings, set_aside=set_aside,
                                               repo=str(settings.pytorch_repo))
    for line in result.log:
        ctx.say(f"+ {line}")
    if result.set_aside:
        ctx.notice(set_aside_line(result.path, result.set_aside, old_head, evidence, whose))
    ctx.say(f"PyTorch {settings.pytorch_ref} is at {result.commit}"
            + ("" if result.changed else " (already checked out)"))
    if lock.triton_commit:
        ctx.say(f"Triton pin: {lock.triton_commit} (version {lock.triton_version or '?'})")
    ctx.say(f"wrote the lock file {lock_path}")
    details: dict[str, object] = {
        "commit": result.commit, "ref": settings.pytorch_ref, "repo": settings.pytorch_repo,
        "lock": str(lock_path), "triton_commit": lock.triton_commit,
        "fingerprint": checkout_fingerprint(lock)}
    if result.set_aside:
        details["set_aside"] = [{"path": s.path, "paths": s.paths, "stash": s.stash}
                                for s in result.set_aside]
    return details


# The record that the build's own steps edit the PyTorch tree at a commit (patches, then hipify,
# which rewrites tracked files in place, submodules included: reference/pytorch-rocm-build.md
# 1.3, 5.7). Not a stamp: the runner removes every stamp from the checkout on before it runs the
# checkout for a new ref, which is exactly when the checkout must know whose edits it finds.
KIT_EDITS_FILE = "kit-edits.json"
KIT_EDITS_SCHEMA = "rocmforge.kit-edits/1"
KIT_EDIT_STEPS: tuple[StepName, ...] = (STEP.patches, STEP.hipify)


def record_kit_edits(workdir: WorkDir, commit: str, *, state: str = "",
                     entries: Sequence[tuple[str, str, str]] = ()) -> None:
    """Say (atomically) that the kit is about to edit the tree checked out at `commit`; with
    `state` (sources.checkout.tree_state after hipify), what the tree looks like once the kit's
    edits are done, so a later run can tell the kit's edits from a reset or a user's edit, and
    `entries` (sources.checkout.tree_entries at the same moment), which file each edit is, so a
    user's edit can be named."""
    from rocmforge.fsutil import write_atomic

    doc = {"schema": KIT_EDITS_SCHEMA, "tree": str(workdir.pytorch), "commit": commit,
           "steps": list(KIT_EDIT_STEPS), "state": state,
           "entries": [[rel, entry[3:], facts] for rel, entry, facts in entries]}
    write_atomic(workdir.state / KIT_EDITS_FILE, json.dumps(doc, indent=2) + "\n")


def recorded_state(workdir: WorkDir, head: str) -> str:
    """The tree state the kit left after its edits of `head` ("" when none is recorded)."""
    return str(_recorded_doc(workdir, head).get("state", "") or "")


def _recorded_doc(workdir: WorkDir, head: str) -> dict[str, object]:
    try:
        doc = json.loads((workdir.state / KIT_EDITS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if isinstance(doc, dict) and doc.get("schema") == KIT_EDITS_SCHEMA \
            and doc.get("commit") == head:
        return doc
    return {}


def user_edits(workdir: WorkDir, head: str) -> tuple[str, ...]:
    """The paths of the tree at `head` (submodule files as `<submodule>/<file>`) that the kit's
    finished edits do not account for: added, changed (in content) or removed since the
    record hipify wrote. A path the kit edited that is back at the commit now is nobody's edit.
    () when the tree is exactly as the kit left it, and when no finished record of the kit's
    edits names `head` (a patches or hipify step that did not finish: its edits cannot be told
    from others, and are set aside as before; docs/decisions.md)."""
    from rocmforge.sources.checkout import tree_entries

    doc = _recorded_doc(workdir, head)
    kept = doc.get("entries")
    if not doc.get("state") or not isinstance(kept, list):
        return ()
    kit = {(str(e[0]), str(e[1])): str(e[2]) for e in kept
           if isinstance(e, list) and len(e) == 3}
    found: list[str] = []
    for rel, entry, facts in tree_entries(workdir.pytorch):
        if _same_content(kit.get((rel, entry[3:])), facts, workdir.pytorch / rel / entry[3:]):
            continue
        found.append(entry[3:] if rel == "." else f"{rel}/{entry[3:]}")
    return tuple(found)


def _same_content(recorded: str | None, facts: str, path: Path) -> bool:
    """Whether a path holds what the kit left (`facts`: sources.checkout.content_facts now). A
    record written before contents were kept has "size:mtime_ns" instead: compared as it was."""
    if recorded is None or recorded == facts:
        return recorded == facts
    if recorded == "gone" or recorded.startswith(("blob:", "link:")):
        return False
    try:
        info = path.lstat()
    except OSError:
        return False
    return recorded == f"{info.st_size}:{info.st_mtime_ns}"


def stop_on_user_edits(workdir: WorkDir, head: str, doing: str) -> None:
    """Raise DirtyTree (exit 2, nothing stashed or built) when the tree has edits the kit did
    not make: the kit sets aside only its own edits, and a wheel built without the user's
    edit would not be what they asked for (README: "A tree with edits the kit did not make
    stops the build instead")."""
    from rocmforge.sources.checkout import DirtyTree, discard_or_keep_fix

    found = user_edits(workdir, head)
    if not found:
        return
    shown = ", ".join(found[:5]) + (" ..." if len(found) > 5 else "")
    raise DirtyTree(
        f"{workdir.pytorch} has local changes the kit did not make ({count(len(found), 'path')}: "
        f"{shown}); not {doing}",
        "the kit sets aside only its own edits (patches, hipify); building on would leave "
        "yours out of the wheel",
        discard_or_keep_fix(workdir.pytorch),
    )


def whose_edits(workdir: WorkDir, head: str) -> str:
    """"the kit's" when the tree is exactly as the kit's patches and hipify left it, else
    "yours and the kit's" (a file changed, added or reset since): the set-aside message says
    whose changes a stash holds (issue 14 item 10)."""
    from rocmforge.sources.checkout import tree_state

    state = recorded_state(workdir, head)
    if state and state == tree_state(workdir.pytorch):
        return "the kit's"
    return "yours and the kit's"


def kit_edits_evidence(workdir: WorkDir, head: str) -> str:
    """Why the local changes of the tree at `head` count as the kit's own ("" = no evidence, so
    a move stops with DirtyTree as for a tree the kit never edited): the kit-edits record names
    this commit, or a stamp of the patches or hipify step is in this work dir."""
    from rocmforge.execute.stamps import read_stamp

    try:
        doc = json.loads((workdir.state / KIT_EDITS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        doc = None
    if (isinstance(doc, dict) and doc.get("schema") == KIT_EDITS_SCHEMA
            and doc.get("commit") == head):
        return f"{workdir.state / KIT_EDITS_FILE} names {head[:12]}"
    for step in KIT_EDIT_STEPS:
        if read_stamp(workdir.state, step) is not None:
            return f"the {step} step has a stamp in {workdir.state / 'stamps'}"
    return ""


def set_aside_line(tree: Path, stashes: Sequence[SetAsideStash], old_head: str,
                   evidence: str, whose: str = "the kit's") -> str:
    """One line: whose edits (`whose_edits`: "the kit's", or "yours and the kit's" when the tree
    changed since the kit's edits) were stashed where, and the commands that show and restore
    them."""
    t = shlex.quote(str(tree))
    where = ", ".join(f"{count(s.paths, 'path')} in {'the tree' if s.path == '.' else s.path}"
                      for s in stashes)
    subs = [s for s in stashes if s.path != "."]
    also = (f" (submodules: `git -C {t} submodule foreach --recursive git stash list`)"
            if subs else "")
    return (f"set aside {whose} edits of {old_head[:12]} ({evidence}) as git stashes, "
            f"nothing discarded: {where}; see them with `git -C {t} stash list`{also}; to get "
            f"them back: `git -C {t} checkout {old_head}`, `git -C {t} submodule update "
            f"--recursive`, then `git -C {t} stash pop` (in each repository that has one)")


def checkout_fingerprint(lock: Lock) -> str:
    """What the checkout resolved to, for the runner's re-check of this volatile step: the
    PyTorch commit, every submodule commit and the Triton pin, read from the tree on disk (so
    a tree moved by an interrupted run still differs from the stamp). A sha256, not the list:
    PyTorch has dozens of submodules and the stamp only needs to compare."""
    parts = [f"pytorch={lock.pytorch_commit}"]
    parts += sorted(f"submodule:{s.path}={s.commit}" for s in lock.submodules)
    parts.append(f"triton={lock.triton_commit}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def patches(build: PreparedBuild, ctx: ActionContext) -> Details:
    from rocmforge.plan.prepare import fix_conditions
    from rocmforge.sources import patch_sources
    from rocmforge.sources.checkout import head_commit, set_aside_changes

    conditions = fix_conditions(build.inputs)
    _check_locked_fixes(build, conditions)  # before anything is set aside or applied
    tree = ctx.workdir.pytorch
    head = head_commit(tree)
    set_aside: list[dict[str, object]] = []
    if head and kit_edits_evidence(ctx.workdir, head):
        # The series is applied to the pristine tree, never on top of an earlier series: a
        # patch removed from the series or edited since must not stay applied (issue 14 5b/c).
        stop_on_user_edits(ctx.workdir, head, "applying the patch series again")
        whose = whose_edits(ctx.workdir, head)
        stashes = set_aside_changes(tree, f"rocmforge: {_stash_words(whose)} of {head} before "
                                          "applying the patch series again")
        if stashes:
            ctx.notice(set_aside_line(tree, stashes, head, f"the edits in the tree are {whose}",
                                      whose))
        set_aside = [{"path": s.path, "paths": s.paths, "stash": s.stash} for s in stashes]
    if head:  # before any edit: an interrupted patch or hipify still counts as the kit's
        record_kit_edits(ctx.workdir, head)
    from rocmforge.sources import locked_fixes

    reports = patch_sources(build.inputs.settings, conditions=conditions)
    fixes = locked_fixes(reports)
    _record_fixes(ctx.workdir, fixes)
    for fix in fixes:  # on the console: the tree now differs from the upstream commit
        ctx.notice(f"upstream fix {fix.id} (pytorch/pytorch@{fix.sha[:12]}): {fix.state}"
                   + (", the tree already has it" if fix.state == "absorbed" else ""))
    applied: list[str] = []
    for report in reports:
        if not report.statuses:
            ctx.say(f"no patch of the kit applies to {report.tree} (version {report.version})")
        for status in report.statuses:
            ctx.say(f"{status.patch.project}/{status.patch.name}: "
                    + ("applied now" if status.patch.name in report.changed else status.state))
        applied += [f"{report.tree.name}/{name}" for name in report.changed]
    return {"applied": applied, "set_aside": set_aside,
            "upstream_fixes": [{"id": f.id, "sha": f.sha, "state": f.state, "sha256": f.sha256}
                               for f in fixes]}


def _check_locked_fixes(build: PreparedBuild, conditions: BuildConditions) -> None:
    """A build of a lock file (--lock) whose [[upstream_fixes]] differ from what this build
    needs stops here, before any edit (LockError, exit 2). A lock without the section (written
    by `invoke checkout`, which knows no build conditions) records none to compare."""
    from pathlib import Path

    from rocmforge.sources import check_locked_fixes, fix_decisions
    from rocmforge.sources.checkout import read_tree_version
    from rocmforge.sources.lockfile import read_lock

    settings = build.inputs.settings
    if not settings.lock_file:
        return
    path = Path(settings.lock_file)
    lock = read_lock(path)
    if lock.upstream_fixes:
        version = read_tree_version(build.inputs.workdir.pytorch)
        check_locked_fixes(lock, path, fix_decisions(conditions, version))


def _record_fixes(workdir: WorkDir, fixes: tuple[LockedFix, ...]) -> None:
    """The upstream fixes of this build into rocmforge.lock (the checkout wrote the rest)."""
    import dataclasses

    from rocmforge.sources.lockfile import read_lock, write_lock

    if not workdir.lock_file.is_file():
        return
    lock = read_lock(workdir.lock_file)
    if lock.upstream_fixes != fixes:
        write_lock(workdir.lock_file, dataclasses.replace(lock, upstream_fixes=fixes))


def _stash_words(whose: str) -> str:
    """How a stash message names its changes: the kit's own, or the user's with the kit's."""
    if whose == "the kit's":
        return "kit edits (patches, hipify)"
    return "your edits and the kit's (patches, hipify): changes the kit did not make included"


def _drop_sdk_init(ctx: ActionContext) -> None:
    """An earlier build against the pip ROCm SDK left the kit's torch/_rocm_init.py in the tree;
    a build without the SDK must not package it (torch would look for the SDK's libraries at
    import). Only the kit's own file is removed."""
    from rocmforge.plan.rocm_sdk import INIT_MARKER, INIT_MODULE

    tree = ctx.workdir.pytorch
    # The tree's copy, and the copies setuptools left in build/lib* (it never removes a file
    # the source tree no longer has, so the next wheel would package it again).
    for stale in [tree / INIT_MODULE, *tree.glob(f"build/lib*/{INIT_MODULE}")]:
        try:
            ours = INIT_MARKER in stale.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if ours:
            stale.unlink()
            ctx.notice(f"removed {stale}: an earlier build's pip ROCm SDK loader (this build "
                       "uses no SDK)")


def hipify(build: PreparedBuild, ctx: ActionContext) -> Details:
    """PyTorch's own hipify (tools/amd_build/build_amd.py, run by the venv's Python), then the
    record of the tree state the kit's edits left, which the tree-facts re-check compares."""
    from rocmforge.sources.checkout import head_commit, tree_entries, tree_state

    if build.inputs.sdk is None:
        _drop_sdk_init(ctx)
    ctx.run(list(ctx.args(HipifyArgs).command))
    tree = ctx.workdir.pytorch
    head = head_commit(tree)
    state = tree_state(tree)
    if head:
        record_kit_edits(ctx.workdir, head, state=state, entries=tree_entries(tree))
    return {"state": state}
