"""Pipeline stage: collect the wheels into dist/ and write the manifest that describes them.

Owns: the collect action (atomic copies into dist/, dist/manifest.json from the results of this
run's steps with each wheel's sha256 and size, removing every wheel in dist/ the new manifest
does not list: an earlier build's, or one put there by hand), in an order that never shows a
manifest beside wheels it does not describe. Must not: build or install anything."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Mapping, Sequence, Set
from pathlib import Path

from rocmforge.errors import StepFailed
from rocmforge.execute.actions import ActionContext, Details, text_map
from rocmforge.knowledge.steps import STEP


def collect(ctx: ActionContext, *, targets: Sequence[str],
            plan_settings: Mapping[str, object],
            features: Mapping[str, Mapping[str, object]] | None = None) -> Details:
    """Copy the wheels into dist/ and write the manifest for `targets` (the plan's settings
    go in as the manifest's `plan`, without their origins)."""
    from rocmforge.knowledge.manifest import build_manifest, file_record, write_manifest

    dist = ctx.workdir.dist
    built = sorted((Path(ctx.step.cwd) / "dist").glob("torch-*.whl"),
                   key=lambda p: p.stat().st_mtime)
    if not built:
        raise StepFailed(
            f"The build left no torch-*.whl in {Path(ctx.step.cwd) / 'dist'}",
            "the build step succeeded but did not package a wheel",
            "read logs/build.log",
        )
    earlier = _manifest_wheels(dist / "manifest.json")
    # The old manifest goes before any wheel is replaced (a new torch wheel has the old one's
    # name): at no instant does a manifest describe a wheel it did not record. A kill in
    # between leaves no manifest, which every reader takes as "no finished build".
    with contextlib.suppress(FileNotFoundError):
        (dist / "manifest.json").unlink()
    torch_wheel = copy_atomically(built[-1], dist)
    ctx.say(f"dist: {torch_wheel.name}")
    files = {torch_wheel.name: file_record(torch_wheel)}
    triton_name = ""
    triton_src = str(ctx.details_of(STEP.triton).get("wheel", "") or "")
    if triton_src:
        triton_wheel = copy_atomically(Path(triton_src), dist)
        triton_name = triton_wheel.name
        files[triton_name] = file_record(triton_wheel)
        ctx.say(f"dist: {triton_name}")
    lock: dict[str, object] = {}
    if ctx.workdir.lock_file.is_file():
        from rocmforge.knowledge.toml_files import read_toml

        lock = read_toml(ctx.workdir.lock_file)
    steps = [
        {"name": r.name, "result": r.status, "duration_s": round(r.duration_s, 3)}
        for r in ctx.results
    ]
    doc = build_manifest(
        targets=list(targets),
        wheels={"torch": torch_wheel.name, "triton": triton_name},
        lock=lock,
        toolchain=text_map(ctx.details_of(STEP.compilers), "toolchain"),
        env=text_map(ctx.details_of(STEP.environment), "env"),
        steps=steps,
        plan_settings={k: v for k, v in plan_settings.items() if k != "origins"},
    )
    doc["source"] = dict(ctx.details_of(STEP.checkout))
    doc["pytorch"] = dict(ctx.details_of(STEP.tree_facts))
    doc["triton_targets"] = dict(ctx.details_of(STEP.triton_targets))
    # The upstream commits the patches step applied or found in the tree (also in doc["lock"]).
    # Read from the lock, which the patches step rewrote: right on a resumed build too.
    fixes = lock.get("upstream_fixes", [])
    doc["upstream_fixes"] = list(fixes) if isinstance(fixes, list) else []
    sdk = ctx.details_of(STEP.rocm_sdk)
    if sdk:  # the pip ROCm SDK the wheel was built against, as the venv's rocm-sdk reported it
        doc["rocm_sdk"] = dict(sdk)
    if features is not None:  # name -> {"built": bool, "why": str}: what verify checks per part
        doc["features"] = {name: dict(entry) for name, entry in features.items()}
    doc["files"] = files
    # A wheel an earlier build listed and this one does not (a Triton of another pin) would
    # sit next to the new one: `pip install dist/*.whl` would get two `triton` providers. It
    # goes while there is no manifest, so no instant shows a manifest beside a wheel it does
    # not list (every reader refuses that pair: knowledge.manifest.wheel_problems).
    # dist/ is the kit's folder: a wheel no build recorded (put there by hand, left by a killed
    # collect) goes too, else every reader refuses dist/ and no rebuild would clear it.
    remove_unlisted(ctx, dist, {torch_wheel.name, triton_name} - {""}, earlier)
    path = write_manifest(dist / "manifest.json", doc)
    ctx.say(f"wrote {path}")
    return {"torch": torch_wheel.name, "triton": triton_name}


def remove_unlisted(ctx: ActionContext, dist: Path, keep: Set[str],
                    earlier: Set[str] = frozenset()) -> list[str]:
    """Remove every *.whl in dist/ (a link too) not named in `keep`, one line each saying why:
    an earlier build's wheel (in `earlier`, the old manifest) or one no manifest listed."""
    removed = []
    for path in sorted(dist.glob("*.whl")):
        if path.name in keep or not (path.is_file() or path.is_symlink()):
            continue
        path.unlink()
        removed.append(path.name)
        if path.name in earlier:
            ctx.say(f"removed {path}: an earlier build's wheel, not in this manifest")
        else:  # not the kit's: the user sees it even in a quiet build
            ctx.notice(f"removed {path}: no build listed it (dist/ holds only the kit's "
                       "wheels)")
    return removed


def _manifest_wheels(path: Path) -> set[str]:
    """Wheel file names a kit manifest lists (plain names only); empty when there is none."""
    from rocmforge.errors import ConfigError
    from rocmforge.knowledge.manifest import read_manifest

    if not path.is_file():
        return set()
    try:
        names = {v for v in read_manifest(path).wheels.values() if v}
    except ConfigError:
        return set()
    return {n for n in names if n.endswith(".whl") and Path(n).name == n}


def copy_atomically(source: Path, folder: Path) -> Path:
    """Copy a file into `folder` through a temp name + os.replace: never a half-written wheel."""
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / source.name
    tmp = folder / f".{source.name}.{os.getpid()}.tmp"
    try:
        shutil.copyfile(source, tmp)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return dest
