"""Pipeline stage after torch's install: the companions (torchvision, torchaudio).

Owns: the companion actions: checkout (rocmforge.sources.checkout.checkout_tree, the same
all-or-nothing, never-clobbering checkout as PyTorch's), pairing (the checkout's version.txt
first, the table's expected version second, against the torch the build venv imports), the
patch series of patches/<name>/ (sources.patches) and the record that the kit applied it
(state/companion-edits-<name>.json, so a later move sets those edits aside), the companion's
entry in rocmforge.lock (written by its patches step, so `build --lock` reproduces it), collect (the
wheels into dist/ atomically, and their section of dist/manifest.json) and install. Must not:
decide which companions are built or at which ref (plan.companion_steps does), or build
anything itself (the build is a plain argv step).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from rocmforge.errors import StepFailed, UsageError
from rocmforge.execute.action_args import ForAddon, ForAddonInVenv, InVenv
from rocmforge.execute.actions import ActionContext, Details
from rocmforge.execute.step_inputs import (
    AddonCheckout,
    AddonsClear,
    AddonsCollect,
    AddonsInstall,
    AddonSource,
    CompanionPairing,
)
from rocmforge.knowledge.steps import FAMILY, STEP

if TYPE_CHECKING:
    from rocmforge.plan.prepare import PreparedBuild

TORCH_VERSION_PROBE = "import torch; print(torch.__version__)"


def _tree(ctx: ActionContext, name: str) -> Path:
    return ctx.workdir.src / name


def checkout(build: PreparedBuild, ctx: ActionContext) -> Details:
    from rocmforge.sources.checkout import checkout_tree, head_commit

    name = ctx.args(ForAddon).addon
    source = ctx.given(AddonCheckout).source
    repo, ref = source.repo, source.ref
    tree = _tree(ctx, name)
    old = head_commit(tree)
    # The kit's own patches of this tree are set aside (stashed, never discarded) when the ref
    # moves; a tree the kit applied no patch to stops with DirtyTree (the changes are yours), as
    # PyTorch's does.
    patched = bool(old) and kit_patched(ctx, name) == old
    result = checkout_tree(dest=tree, repo=repo, ref=ref, mirrors=build.settings.mirrors,
                           name=name,
                           set_aside=(f"rocmforge: kit patches of {name} at {old} before moving "
                                      f"to {ref}") if patched else "")
    for line in result.log:
        ctx.say(f"+ {line}")
    for stash in result.set_aside:
        ctx.notice(f"set aside the kit's patches of {tree / stash.path} as git stash "
                   f"{stash.stash} ({stash.paths} paths); `git -C {tree} stash list` shows it")
    ctx.say(f"{name} {ref} is at {result.commit}"
            + ("" if result.changed else " (already checked out)"))
    return {"commit": result.commit, "ref": ref, "repo": repo,
            "fingerprint": hashlib.sha256(
                "\n".join([result.commit, *sorted(f"{s.path}={s.commit}"
                                                  for s in result.submodules)]).encode()
            ).hexdigest()}


# The record that the kit's patch series edited a companion tree at a commit. Not a stamp: the
# runner removes the stamps of the checkout and every later step before it runs the checkout
# for a new ref, which is exactly when the checkout must know whose changes it finds.
def _edits_record(ctx: ActionContext, name: str) -> Path:
    return ctx.workdir.state / f"companion-edits-{name}.json"


def kit_patched(ctx: ActionContext, name: str) -> str:
    """The commit at which the kit applied patches to this companion's tree ("" = none)."""
    try:
        doc = json.loads(_edits_record(ctx, name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    return str(doc.get("commit", "")) if isinstance(doc, dict) and doc.get("patches") else ""


def installed_torch(ctx: ActionContext, python: str) -> str:
    """torch.__version__ as the build venv's Python imports it (the torch just built)."""
    code, out = ctx.capture([python, "-c", TORCH_VERSION_PROBE], check=False)
    version = out.strip().splitlines()[-1].strip() if out.strip() else ""
    if code != 0 or not version:
        raise StepFailed(
            f"The build venv's Python ({python}) cannot import torch",
            "a companion is built against the torch installed there by the install step",
            "read this step's log, then run the build again (the install step redoes it)",
        )
    return version


def pairing(build: PreparedBuild, ctx: ActionContext) -> Details:
    from rocmforge.knowledge.companions import load_companions
    from rocmforge.knowledge.companions import pairing as pair

    args = ctx.args(ForAddonInVenv)
    name, python = args.addon, args.python
    given = ctx.given(CompanionPairing)
    tree = _tree(ctx, name)
    try:
        stated = (tree / "version.txt").read_text(encoding="utf-8").splitlines()[0].strip()
        origin = f"{tree / 'version.txt'}"
    except (OSError, IndexError):
        stated = given.version
        origin = "the version its ref names (no version.txt in the checkout)"
    if not stated:
        raise UsageError(
            f"{name} at {given.source.ref} has no version.txt and its ref names no "
            "version",
            "the kit builds a companion only when it can check the torch it needs",
            f"pass a release tag of {name} (--with {name}@<tag>)",
        )
    torch_version = installed_torch(ctx, python)
    found = pair(load_companions().get(name), stated, torch_version)
    ctx.say(f"{name} {stated} (from {origin}) needs torch {found.requires or '(unknown)'}; "
            f"the build venv has torch {torch_version}")
    if not found.matches:
        raise found.refusal(f"{origin}, ref {given.source.ref}")
    return {"version": stated, "version_source": origin, "torch": torch_version,
            "requires": found.requires}


def patches(build: PreparedBuild, ctx: ActionContext) -> Details:
    from rocmforge.sources import series_root
    from rocmforge.sources.patches import PatchReport, apply_series, load_series, select

    name = ctx.args(ForAddon).addon
    version = str(ctx.details_of(FAMILY.pairing.name_for(name)).get("version", "") or "")
    series = load_series(series_root(build.settings), name)
    chosen = select(series, version) if series and version else ()
    tree = _tree(ctx, name)
    record = _edits_record(ctx, name)
    if chosen:  # before any edit: an interrupted apply still counts as the kit's
        from rocmforge.fsutil import write_atomic
        from rocmforge.sources.checkout import head_commit

        write_atomic(record, json.dumps({"commit": head_commit(tree),
                                         "patches": [p.name for p in chosen]}) + "\n")
    else:
        record.unlink(missing_ok=True)
    # Nothing to apply reads nothing: a plain folder's copy (an extension) is no git tree.
    report = apply_series(tree, chosen, version=version) if chosen else PatchReport(
        tree=tree, version=version, statuses=(), changed=())
    if not report.statuses:
        ctx.say(f"no patch of patches/{name}/ applies to {name} {version or '?'}")
    for status in report.statuses:
        ctx.say(f"{name}/{status.patch.name}: "
                + ("applied now" if status.patch.name in report.changed else status.state))
    digest = hashlib.sha256("\n".join(f"{p.name}={p.sha256}" for p in chosen).encode())
    record_in_lock(ctx, name, version=version,
                   patches=[(f"{name}/{p.name}", p.sha256) for p in chosen])
    return {"patches": [{"file": f"{name}/{p.name}", "sha256": p.sha256} for p in chosen],
            "applied": list(report.changed), "fingerprint": digest.hexdigest()}


def record_in_lock(ctx: ActionContext, name: str, *, version: str,
                   patches: list[tuple[str, str]]) -> None:
    """Add this companion (repo, ref, commit, version, patches with their sha256) to the work
    dir's rocmforge.lock, which torch's checkout wrote, so `build --lock` reproduces it too.

    Runs in the patches step: it is volatile, so it runs after every torch checkout (which
    rewrites the lock). Companions this build does not make are dropped from the lock by
    companions-collect (`keep_in_lock`), so this step's inputs name no other one. A lock
    entry at the same commit keeps its ref (a locked build checks out the commit, and the lock
    it writes stays the lock it was given)."""
    from rocmforge.sources.lockfile import (
        LockedCompanion,
        LockedPatch,
        LockError,
        read_lock,
        write_lock,
    )

    path = ctx.workdir.lock_file
    try:
        lock = read_lock(path)
    except LockError as exc:
        ctx.notice(f"{name} is not recorded in {path}: {exc.what}")
        return
    checkout = ctx.details_of(FAMILY.checkout.name_for(name))
    commit = str(checkout.get("commit", "") or "")
    source = ctx.given(AddonSource)  # the patches step's
    ref = str(checkout.get("ref", "") or source.ref)
    earlier = next((c for c in lock.companions if c.name == name), None)
    if earlier is not None and earlier.commit == commit and earlier.ref:
        ref = earlier.ref
    if earlier is not None and earlier.commit == commit and commit and not version:
        version = earlier.version  # an extension's wheel version, which collect recorded
    entry = LockedCompanion(
        name=name, repo=str(checkout.get("repo", "") or source.repo),
        ref=ref, commit=commit, version=version,
        patches=tuple(LockedPatch(project=name, file=f, sha256=h) for f, h in patches))
    # Every other entry stays: companions-collect drops those this build does not make.
    updated = lock.with_companion(entry, tuple(c.name for c in lock.companions))
    if updated != lock:
        write_lock(path, updated)
        ctx.say(f"recorded {name} {commit} in {path}")


def keep_in_lock(path: Path, names: list[str],
                 versions: Mapping[str, str] | None = None) -> None:
    """Drop from the lock every companion or extension this build does not make, and give an
    entry without a version (an extension whose tree states none before its build) the one
    its wheel has, as the manifest records it (`versions`)."""
    from rocmforge.sources.lockfile import LockError, read_lock, write_lock

    try:
        lock = read_lock(path)
    except LockError:
        return
    found = versions or {}
    kept = tuple(dataclasses.replace(c, version=found.get(c.name, "")) if not c.version
                 else c for c in lock.companions if c.name in names)
    if kept != lock.companions:
        write_lock(path, dataclasses.replace(lock, companions=kept))


def wheel_prefix(package: str) -> str:
    """The file-name prefix of a distribution's wheels (PEP 427: '-' becomes '_')."""
    return package.replace("-", "_") + "-"


def collect(build: PreparedBuild, ctx: ActionContext) -> Details:
    from rocmforge.errors import ConfigError
    from rocmforge.knowledge.manifest import file_record, read_manifest, write_manifest
    from rocmforge.steps.outputs import copy_atomically, remove_unlisted

    dist = ctx.workdir.dist
    given = ctx.given(AddonsCollect)
    names, packages = list(given.companions), list(given.packages)
    path = dist / "manifest.json"
    try:
        manifest = read_manifest(path)
    except ConfigError as exc:
        raise StepFailed(
            f"There is no usable {path} to add the companions to ({exc.what})",
            "the collect step writes it for torch before the companions are built",
            "run the build again: collect and every step after it run",
        ) from None
    doc: dict[str, object] = dict(manifest.doc)
    earlier: dict[str, str] = dict(manifest.wheels)
    wheels = {k: v for k, v in earlier.items() if k in ("torch", "triton")}
    section: dict[str, object] = {}
    files = _torch_files(doc, wheels)
    sources: list[Path] = []
    for name, package in zip(names, packages, strict=True):
        folder = _tree(ctx, name) / "dist"
        # A generic extension (git+URL, a folder) names no package: the wheel its build left.
        pattern = f"{wheel_prefix(package)}*.whl" if package else "*.whl"
        built = sorted(folder.glob(pattern), key=lambda p: p.stat().st_mtime)
        if not built:
            raise StepFailed(f"The {name} build left no {pattern} in {folder}",
                             "the build step succeeded but did not package a wheel",
                             f"read logs/{name}-build.log")
        source = built[-1]
        sources.append(source)
        # The record is the built file's: its copy in dist/ is byte for byte the same.
        record = file_record(source)
        files[source.name] = record
        wheels[name] = source.name
        checkout = ctx.details_of(FAMILY.checkout.name_for(name))
        paired = ctx.details_of(FAMILY.pairing.name_for(name))
        patched = ctx.details_of(FAMILY.patches.name_for(name))
        section[name] = {
            "version": paired.get("version", "") or source.name.split("-")[1],
            "ref": checkout.get("ref", ""),
            "commit": checkout.get("commit", ""), "repo": checkout.get("repo", ""),
            "wheel": source.name,
            "sha256": record["sha256"],
            "torch": paired.get("torch", ""), "requires": paired.get("requires", ""),
            "patches": patched.get("patches", []),
            # An extension's own facts: its backend, the variables its build had, the module
            # verify imports and the op it runs (knowledge.extensions).
            **{key: paired[key] for key in ("kind", "backend", "variables", "module", "verify")
               if key in paired},
        }  # an extension without a stated version: its wheel's (PEP 427)
    doc["wheels"] = wheels
    doc["companions"] = section
    doc["settings"] = asked_settings(doc.get("settings"), build.plan.settings)
    doc["files"] = files
    if ctx.workdir.lock_file.is_file():  # now with the companions their patches steps recorded
        from rocmforge.knowledge.toml_files import read_toml

        keep_in_lock(ctx.workdir.lock_file, names, versions={
            name: str(entry["version"]) for name, entry in section.items()
            if isinstance(entry, dict)})

        doc["lock"] = read_toml(ctx.workdir.lock_file)
    doc["steps"] = [{"name": r.name, "result": r.status, "duration_s": round(r.duration_s, 3)}
                    for r in ctx.results]
    # The order that keeps dist/ and the manifest one record at every instant (a SIGKILL
    # anywhere, integration/test_one_record.py): the manifest listing the new wheels goes first (a
    # listed wheel not yet copied, or an old file of its name, is refused by every reader),
    # then the copies, then the earlier build's wheels it no longer lists (until they are gone,
    # an unlisted wheel in dist/ is refused the same way).
    write_manifest(path, doc)
    ctx.say(f"wrote {path}")
    for source in sources:
        wheel = copy_atomically(source, dist)
        ctx.say(f"dist: {wheel.name}")
    for name, old in sorted(earlier.items()):
        if name in ("torch", "triton") or not old or old == wheels.get(name) \
                or Path(old).name != old or not (dist / old).is_file():
            continue
        # A companion an earlier build made in another version, or not at all this time
        # (--with torchvision after --with torchvision,torchaudio): its wheel leaves dist/, as
        # torch's collect does for a Triton the build no longer makes.
        (dist / old).unlink()
        ctx.say(f"removed {dist / old}: " + (f"an earlier build's {name} wheel" if name in names
                                             else f"this build makes no {name}"))
    remove_unlisted(ctx, dist, set(wheels.values()) - {""}, set(earlier.values()))
    return {name: str(wheels[name]) for name in names}


_COMPANION_SETTINGS = ("companions", "companion_repos")  # what the manifest's settings hold


def asked_settings(recorded: object, plan_settings: Mapping[str, object]) -> dict[str, object]:
    """The manifest's settings with this build's companions and companion_repos: torch's
    collect writes the section only when torch is rebuilt, so a build that changes only its
    --with would leave the earlier build's there (keys the plan has not are dropped)."""
    settings = dict(recorded) if isinstance(recorded, Mapping) else {}
    for key in _COMPANION_SETTINGS:
        if key in plan_settings:
            settings[key] = plan_settings[key]
        else:
            settings.pop(key, None)
    return settings


def _torch_files(doc: Mapping[str, object], wheels: Mapping[str, str]) -> dict[str, object]:
    """The "files" records of torch's and Triton's wheels (the companions' are added anew)."""
    files = doc.get("files", {})
    keep = {wheels.get("torch", ""), wheels.get("triton", "")} - {""}
    return {k: v for k, v in files.items() if k in keep} if isinstance(files, Mapping) else {}


def install(build: PreparedBuild, ctx: ActionContext) -> Details:
    from rocmforge.steps.venv import install_pinned

    python = ctx.args(InVenv).python
    recorded = ctx.details_of(STEP.companions_collect)
    wheels = [str(ctx.workdir.dist / str(recorded[n]))
              for n in ctx.given(AddonsInstall).companions if recorded.get(n)]
    if not wheels:
        raise StepFailed("There is no companion wheel to install",
                         "the companions-collect step recorded none", "run the build again")
    torch_wheels = [str(ctx.workdir.dist / str(n)) for n in
                    (ctx.details_of(STEP.collect).get(k) for k in ("triton", "torch")) if n]
    install_pinned(ctx, python, wheels, [*torch_wheels, *wheels])
    return {"installed": wheels}


def clear(build: PreparedBuild, ctx: ActionContext) -> Details:
    """This build makes no companion: the earlier build's companion wheels leave dist/, the
    manifest's wheels and companions section and the lock; the companions' collect and install
    stamps are dropped, so a later `--with` adds them back (their trees and builds stay)."""
    from rocmforge.errors import ConfigError
    from rocmforge.execute.stamps import remove_stamp
    from rocmforge.knowledge.manifest import read_manifest, write_manifest
    from rocmforge.sources.lockfile import LockError, read_lock, write_lock

    dist = ctx.workdir.dist
    names = list(ctx.given(AddonsClear).remove)
    path = dist / "manifest.json"
    try:
        manifest = read_manifest(path)
    except ConfigError:
        return {"removed": []}
    doc: dict[str, object] = dict(manifest.doc)
    wheels = dict(manifest.wheels)
    section = dict(manifest.companions)
    gone: list[tuple[str, str]] = []
    for name in names:
        wheel = wheels.pop(name, "") or (section[name].wheel if name in section else "")
        section.pop(name, None)
        if wheel and Path(wheel).name == wheel:
            gone.append((name, wheel))
    raw = doc.get("companions")
    if isinstance(raw, dict):
        kept = {k: v for k, v in raw.items() if k not in names}
        if kept:
            doc["companions"] = kept
        else:
            doc.pop("companions", None)
    doc["wheels"] = wheels
    doc["settings"] = asked_settings(doc.get("settings"), build.plan.settings)
    files = doc.get("files")
    if isinstance(files, dict):
        doc["files"] = {k: v for k, v in files.items() if k not in {w for _n, w in gone}}
    # The manifest first, the wheels after: it never lists a wheel that is gone.
    write_manifest(path, doc)
    removed = []
    for name, wheel in gone:
        if (dist / wheel).is_file():
            (dist / wheel).unlink()
            removed.append(wheel)
            ctx.say(f"removed {dist / wheel}: an earlier build's {name} wheel")
    try:
        lock = read_lock(ctx.workdir.lock_file)
    except LockError:
        lock = None
    if lock is not None and any(c.name in names for c in lock.companions):
        write_lock(ctx.workdir.lock_file, dataclasses.replace(
            lock, companions=tuple(c for c in lock.companions if c.name not in names)))
    for step in (STEP.companions_collect, STEP.companions_install):
        remove_stamp(ctx.workdir.state, step)
    return {"removed": removed}
