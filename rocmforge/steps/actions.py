"""The build pipeline's in-process steps: what each "python" step of the build plan does.

Owns: the actions behind the plan's "python" steps (preflight, compilers, environment, checkout,
patches, build requirements, Triton, stale check, log check, collect, install), registered with
`rocmforge.execute.runner.register_action`, plus the helpers the build tasks share with them (atomic
copy into dist/, the PEP 668 check, `invoke clean`). Each action gets an ActionContext, writes
only inside the work dir, runs sub-commands through `ctx.run` (so they are logged, teed and
interruptible like any step), and returns details that the runner keeps in its stamp (`collect`
reads them back for the manifest). Must not: decide which steps run or in which order (the
planner does), or run anything outside `ctx.run`/`ctx.capture` except the library calls of
rocmforge.sources and rocmforge.sources.triton_wheel (git and HTTP), which report what they did.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rocmforge.errors import RocmforgeError, StepFailed
from rocmforge.execute.runner import ActionContext, register_action
from rocmforge.workdir import WorkDir

_ARCH_LINE = re.compile(r"^(?:--\s*)?Building PyTorch for GPU arch:\s*(.*?)\s*$", re.MULTILINE)
# Signature id in config/diagnostics.toml whose cause/fix explain a CPU-only configure.
CPU_FALLBACK_SIGNATURE = "cpu-fallback"


def _details_of(ctx: ActionContext, step_name: str) -> Mapping[str, Any]:
    for result in ctx.results:
        if result.name == step_name:
            return result.details
    return {}


# --- preflight, compilers, environment --------------------------------------------------------


@register_action("preflight", "doctor's rows for this build; any FAIL stops the build")
def _preflight(ctx: ActionContext) -> Mapping[str, Any]:
    if ctx.step.inputs.get("skip") == "True":
        ctx.say("preflight skipped (skip_preflight / --skip-preflight)")
        return {"skipped": True}
    rows = list(ctx.extras.get("preflight_rows", ()))
    for row in rows:
        ctx.say(f"{row.status:<5} {row.check}: {row.detail}")
        if row.status == "FAIL" and row.fix:
            ctx.say(f"      fix: {row.fix}")
    failed = [row for row in rows if row.status == "FAIL"]
    if failed:
        raise StepFailed(
            f"Preflight found {len(failed)} problem(s) that would make the build fail: "
            + "; ".join(f"{row.check} ({row.detail})" for row in failed),
            "doctor's FAIL rows are known to end a build, often hours in",
            # A target's "compile" and "device lib" rows share one fix: say it once.
            "; ".join(dict.fromkeys(row.fix for row in failed if row.fix))
            or "run `invoke doctor` for details",
        )
    return {"rows": len(rows), "warnings": sum(1 for r in rows if r.status == "WARN")}


@register_action("compilers", "print and record `<compiler> --version` of CC, CXX and HIP")
def _compilers(ctx: ActionContext) -> Mapping[str, Any]:
    compilers = dict(ctx.plan.settings.get("compilers", {}))
    versions: dict[str, str] = {}
    tools = {**compilers}
    for extra in ("cmake", "ninja"):
        found = shutil.which(extra)
        if found:
            tools[extra] = found
    for role, exe in sorted(tools.items()):
        code, out = ctx.capture([exe, "--version"], check=role not in ("cmake", "ninja"))
        first = next((line.strip() for line in out.splitlines() if line.strip()), "")
        versions[role] = f"{exe}: {first}" if code == 0 else f"{exe}: (--version failed)"
    return {"toolchain": versions}


@register_action("environment", "write state/build-env.sh with the build's exports")
def _environment(ctx: ActionContext) -> Mapping[str, Any]:
    from rocmforge.execute.stamps import atomic_write_text

    lines = ["# Written by rocmforge: the environment of `invoke build` (source it to reproduce)."]
    lines += [f"export {k}={shlex.quote(v)}" for k, v in sorted(ctx.step.env.items())]
    path = ctx.workdir.state / "build-env.sh"
    atomic_write_text(path, "\n".join(lines) + "\n")
    ctx.say(f"wrote {path}")
    return {"env": dict(ctx.step.env), "env_file": str(path)}


# --- sources ------------------------------------------------------------------------------------


@register_action("checkout", "git: PyTorch at the ref with submodules (no clobbering); "
                 "writes rocmforge.lock")
def _checkout(ctx: ActionContext) -> Mapping[str, Any]:
    from rocmforge.sources import checkout_pytorch
    from rocmforge.sources.checkout import head_commit

    settings = ctx.extras["settings"]
    old_head = head_commit(ctx.workdir.pytorch)
    evidence = kit_edits_evidence(ctx.workdir, old_head) if old_head else ""
    set_aside = (f"rocmforge: kit edits (patches, hipify) of {old_head} before moving to "
                 f"{settings.pytorch_ref}") if evidence else ""
    result, lock, lock_path = checkout_pytorch(settings, set_aside=set_aside)
    for line in result.log:
        ctx.say(f"+ {line}")
    if result.set_aside:
        ctx.say(set_aside_line(result.path, result.set_aside, old_head, evidence))
    ctx.say(f"PyTorch {settings.pytorch_ref} is at {result.commit}"
            + ("" if result.changed else " (already checked out)"))
    if lock.triton_commit:
        ctx.say(f"Triton pin: {lock.triton_commit} (version {lock.triton_version or '?'})")
    ctx.say(f"wrote the lock file {lock_path}")
    details: dict[str, Any] = {
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
KIT_EDIT_STEPS = ("patches", "hipify")


def record_kit_edits(workdir: WorkDir, commit: str) -> None:
    """Say (atomically) that the kit is about to edit the tree checked out at `commit`."""
    from rocmforge.execute.stamps import atomic_write_text

    doc = {"schema": KIT_EDITS_SCHEMA, "tree": str(workdir.pytorch), "commit": commit,
           "steps": list(KIT_EDIT_STEPS)}
    atomic_write_text(workdir.state / KIT_EDITS_FILE, json.dumps(doc, indent=2) + "\n")


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


def set_aside_line(tree: Path, stashes: Sequence[Any], old_head: str, evidence: str) -> str:
    """One line: what was stashed where, and the commands that show and restore it."""
    t = shlex.quote(str(tree))
    where = ", ".join(f"{s.paths} paths in {'the tree' if s.path == '.' else s.path}"
                      for s in stashes)
    subs = [s for s in stashes if s.path != "."]
    also = (f" (submodules: `git -C {t} submodule foreach --recursive git stash list`)"
            if subs else "")
    return (f"set aside the kit's edits of {old_head[:12]} ({evidence}) as git stashes, "
            f"nothing discarded: {where}; see them with `git -C {t} stash list`{also}; to get "
            f"them back: `git -C {t} checkout {old_head}`, `git -C {t} submodule update "
            f"--recursive`, then `git -C {t} stash pop` (in each repository that has one)")


def checkout_fingerprint(lock: Any) -> str:
    """What the checkout resolved to, for the runner's re-check of this volatile step: the
    PyTorch commit, every submodule commit and the Triton pin, read from the tree on disk (so
    a tree moved by an interrupted run still differs from the stamp). A sha256, not the list:
    PyTorch has dozens of submodules and the stamp only needs to compare."""
    import hashlib

    parts = [f"pytorch={lock.pytorch_commit}"]
    parts += sorted(f"submodule:{s.path}={s.commit}" for s in lock.submodules)
    parts.append(f"triton={lock.triton_commit}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


@register_action("patches", "apply the kit's patch series for this PyTorch version "
                 "(rocmforge.sources.patch_sources)")
def _patches(ctx: ActionContext) -> Mapping[str, Any]:
    from rocmforge.sources import patch_sources
    from rocmforge.sources.checkout import head_commit

    head = head_commit(ctx.workdir.pytorch)
    if head:  # before any edit: an interrupted patch or hipify still counts as the kit's
        record_kit_edits(ctx.workdir, head)
    reports = patch_sources(ctx.extras["settings"])
    applied: list[str] = []
    for report in reports:
        if not report.statuses:
            ctx.say(f"no patch of the kit applies to {report.tree} (version {report.version})")
        for status in report.statuses:
            ctx.say(f"{status.patch.project}/{status.patch.name}: "
                    + ("applied now" if status.patch.name in report.changed else status.state))
        applied += [f"{report.tree.name}/{name}" for name in report.changed]
    return {"applied": applied}


@register_action("build-requirements",
                 "pip install -r requirements.txt -r requirements-build.txt (those present)")
def _build_requirements(ctx: ActionContext) -> Mapping[str, Any]:
    python = ctx.step.argv[1]
    tree = Path(ctx.step.cwd)
    files = [name for name in ("requirements.txt", "requirements-build.txt")
             if (tree / name).is_file()]
    if files:
        argv = [python, "-m", "pip", "install"]
        for name in files:
            argv += ["-r", name]
        ctx.run(argv)
    else:
        ctx.say("no requirements.txt or requirements-build.txt in the checkout")
    if ctx.plan.settings.get("build_style") == "build":
        code, _ = ctx.capture([python, "-c", "import build"], check=False)
        if code != 0:
            ctx.say("`python -m build` is not in the build venv; installing it")
            ctx.run([python, "-m", "pip", "install", "build"])
    return {"files": files}


# --- Triton -------------------------------------------------------------------------------------


@register_action("triton", "Triton for the pin: prebuilt wheel (sha256-checked) or source "
                 "build; exactly one triton provider in the venv")
def _triton(ctx: ActionContext) -> Mapping[str, Any]:
    from rocmforge.sources import pin_of_checkout, triton_wheel

    mode = ctx.step.argv[1]
    python = ctx.step.argv[2]
    if mode == "skip":
        ctx.say("Triton skipped (triton_mode = skip): torch.compile will not work")
        return {"wheel": "", "mode": mode}
    pin = pin_of_checkout(ctx.workdir)
    ctx.say(f"Triton pin: {pin.commit} ({pin.wheel_name} {pin.version or '?'}) from "
            f"{pin.pin_file}")
    wanted = triton_wheel.TritonPin(version=pin.version, commit=pin.commit,
                                    project=pin.wheel_name)
    wheel: Path | None = None
    origin = ""
    if mode in ("auto", "wheel"):
        if not pin.version:
            problem = f"the checkout has no Triton version file next to {pin.pin_file}"
            if mode == "wheel":
                raise StepFailed("No prebuilt Triton wheel can be matched", problem,
                                 "use --triton source (builds from the pin)")
            ctx.say(f"no prebuilt Triton wheel: {problem}; building from source")
        else:
            try:
                wheel = _download_triton_wheel(ctx, wanted, python)
                origin = "index"
            except triton_wheel.TritonWheelUnavailable as exc:
                if mode == "wheel":
                    raise
                ctx.say(f"no prebuilt Triton wheel ({exc.paragraph()}); building from source")
    if wheel is None:
        wheel = _build_triton(ctx, wanted, python)
        origin = "source"
    # Keep what is about to be installed: a Triton whose setup.py ignores TRITON_WHEEL_NAME
    # builds `triton`, and keeping the pin's name would leave two providers in the venv.
    keep = _wheel_project(wheel)
    if keep != _wheel_project_name(pin.wheel_name):
        ctx.say(f"note: the wheel is named {keep}, not {pin.wheel_name} (its setup.py does not "
                "read TRITON_WHEEL_NAME); it replaces any other `triton` provider")
    removed = _remove_other_providers(ctx, python, keep=keep)
    ctx.run(pip_install_argv(python, [str(wheel)]))
    providers = _triton_providers(ctx, python)
    if len(providers) != 1:
        raise StepFailed(
            f"The build venv has {len(providers)} `triton` providers after installing "
            f"{wheel.name}: {', '.join(providers) or 'none'}",
            "each of them installs the same `triton` import package, so they overwrite each "
            "other's files",
            f"`{python} -m pip uninstall -y <the others>`, then run the build again",
        )
    ctx.say(f"Triton in the build venv: {providers[0]} from {wheel.name}")
    return {"wheel": str(wheel), "commit": pin.commit, "name": keep,
            "origin": origin, "removed": removed, "mode": mode}


def _wheel_project_name(name: str) -> str:
    from packaging.utils import canonicalize_name

    return str(canonicalize_name(name))


def _wheel_project(wheel: Path) -> str:
    """The distribution a wheel file installs, from its file name (PEP 427)."""
    from packaging.utils import parse_wheel_filename

    return str(parse_wheel_filename(wheel.name)[0])


def _index_url(template: str, rocm_version: str) -> str:
    """settings.triton_index with {rocm} = ROCm major.minor (download.pytorch.org/whl/rocm6.4)."""
    return template.replace("{rocm}", ".".join(rocm_version.split(".")[:2]))


def _venv_tags(ctx: ActionContext, python: str) -> list[Any]:
    """The build venv interpreter's wheel tags in preference order (its own `packaging`, or
    the copy vendored in its pip), so the pick fits the venv, not the kit's interpreter."""
    from packaging.tags import parse_tag

    script = ("try:\n from packaging import tags\nexcept ImportError:\n"
              " from pip._vendor.packaging import tags\n"
              "print('\\n'.join(str(t) for t in tags.sys_tags()))")
    _, out = ctx.capture([python, "-c", script], check=False)
    return [tag for line in out.split() if line.strip()
            for tag in sorted(parse_tag(line), key=str)]


def _download_triton_wheel(ctx: ActionContext, pin: Any, python: str) -> Path:
    from rocmforge.sources import triton_wheel

    settings = ctx.extras["settings"]
    index = _index_url(str(settings.triton_index), ctx.step.inputs.get("rocm_version", ""))
    ctx.say(f"looking for {pin.project} {pin.version} (commit {pin.commit[:8]}) on {index}")
    client = triton_wheel.IndexClient(index_url=index, timeout_s=30.0)
    choice = triton_wheel.find_wheel(client, pin, _venv_tags(ctx, python))
    ctx.say(f"found {choice.filename} (sha256 {choice.sha256[:16]}...)")
    try:
        path = triton_wheel.download_verified(choice.url, choice.sha256, ctx.workdir.downloads,
                                              progress=True, filename=choice.filename)
    except triton_wheel.DownloadFailed as exc:
        # A hash mismatch or a broken download is a fault to fix, not a reason to build
        # something else silently; nothing was kept, so a rerun starts the download again.
        raise StepFailed(exc.what, exc.why, exc.fix) from None
    ctx.say(f"downloaded {path} (sha256 verified)")
    return path


def _build_triton(ctx: ActionContext, pin: Any, python: str) -> Path:
    from rocmforge.sources import checkout_triton, patch_sources, triton_wheel

    settings = ctx.extras["settings"]
    result, _ = checkout_triton(settings)
    for line in result.log:
        ctx.say(f"+ {line}")
    patch_sources(settings)  # the Triton series applies once its tree exists
    tree = ctx.workdir.triton
    out_dir = ctx.workdir.downloads / "triton-build"
    out_dir.mkdir(parents=True, exist_ok=True)
    plan = triton_wheel.triton_source_build_argv(
        tree, pin, python=python, dist_dir=out_dir,
        llvm_syspath=ctx.step.env.get("LLVM_SYSPATH", ""),
        max_jobs=_max_jobs(ctx),
        setup_at_root=(tree / "setup.py").is_file(),
    )
    # The folder is the kit's: empty it, so the wheel found afterwards is this build's and not
    # one of an earlier pin when setup.py succeeds without writing a wheel.
    for old in out_dir.glob("*.whl"):
        old.unlink()
    ctx.run(list(plan.argv), cwd=str(plan.cwd), env=dict(plan.env))
    built = sorted(out_dir.glob("*.whl"))
    if len(built) != 1:
        raise StepFailed(
            f"The Triton source build left {len(built)} wheels in {out_dir}, expected one"
            + (f": {', '.join(p.name for p in built)}" if built else ""),
            f"`{shlex.join(plan.argv)}` in {plan.cwd} should write exactly one wheel there",
            "read logs/triton.log",
        )
    return built[0]


def _max_jobs(ctx: ActionContext) -> int:
    """MAX_JOBS of the step's env as a number; a value that is not one (the planner refuses it,
    so only a hand-made plan has it) is ignored with a note, and Triton picks its own count."""
    value = ctx.step.env.get("MAX_JOBS", "").strip()
    if value.isdigit():
        return int(value)
    if value:
        ctx.say(f"note: MAX_JOBS={value!r} is not a whole number; the Triton build chooses its "
                "own job count")
    return 0


def _installed_dists(ctx: ActionContext, python: str) -> list[str]:
    code, out = ctx.capture([python, "-m", "pip", "list", "--format=json",
                             "--disable-pip-version-check"], check=False)
    if code != 0:
        return []
    try:
        return [str(item["name"]) for item in json.loads(out.strip().splitlines()[-1])]
    except (ValueError, IndexError, KeyError, TypeError):
        return []


def _triton_providers(ctx: ActionContext, python: str) -> list[str]:
    from packaging.utils import canonicalize_name

    from rocmforge.sources.triton_wheel import TRITON_PROVIDERS

    providers = {canonicalize_name(p) for p in TRITON_PROVIDERS}
    return sorted(canonicalize_name(d) for d in _installed_dists(ctx, python)
                  if canonicalize_name(d) in providers)


def _remove_other_providers(ctx: ActionContext, python: str, *, keep: str) -> list[str]:
    from rocmforge.sources.triton_wheel import triton_conflicts

    conflicts = triton_conflicts(_installed_dists(ctx, python), keep=keep, python=python)
    if conflicts.names:
        ctx.say(f"removing {', '.join(conflicts.names)} from the build venv: it provides the "
                f"same `triton` module as {keep} (a CUDA `triton` from PyPI does not run on "
                "ROCm)")
        ctx.run(list(conflicts.uninstall_argv))
    return list(conflicts.names)


# --- configure checks ---------------------------------------------------------------------------


@register_action("stale-check", "PYTORCH_ROCM_ARCH in build/CMakeCache.txt vs. the targets")
def _stale_check(ctx: ActionContext) -> Mapping[str, Any]:
    from rocmforge.steps.stale import check_stale

    build_dir = Path(ctx.step.cwd) / ctx.step.argv[1]
    targets = tuple(t for t in ctx.step.inputs.get("targets", "").split(";") if t)
    verdict = check_stale(build_dir, targets)
    ctx.say(verdict.reason)
    if verdict.stale:
        if not build_dir.resolve().is_relative_to(ctx.workdir.root.resolve()):
            raise StepFailed(
                f"{build_dir} is stale but outside the kit's work dir {ctx.workdir.root}",
                "the kit deletes only what it made",
                f"delete {build_dir} yourself, then run the build again",
            )
        ctx.say(f"removing the stale CMake build dir {build_dir} so configure starts clean")
        shutil.rmtree(build_dir)
    return {"stale": verdict.stale, "cached": list(verdict.cached_targets or ())}


def cpu_fallback_explanation() -> tuple[str, str]:
    """Cause and fix of the `cpu-fallback` signature in config/diagnostics.toml."""
    from rocmforge.execute.triage import load_signatures

    for signature in load_signatures():
        if signature.id == CPU_FALLBACK_SIGNATURE:
            return signature.cause, signature.fix
    return ("CMake configured PyTorch without ROCm", "check ROCM_PATH with `invoke doctor`")


@register_action("log-check", "the configure summary must say USE_ROCM : ON for the targets "
                 "(diagnostics.configure_reports_rocm)")
def _log_check(ctx: ActionContext) -> Mapping[str, Any]:
    from rocmforge.execute.triage import configure_reports_rocm
    from rocmforge.steps.stale import split_arch_list

    which = ctx.step.argv[1]
    log_path = ctx.workdir.logs / f"{which}.log"
    text = log_path.read_text(encoding="utf-8", errors="replace")
    verdict = configure_reports_rocm(text)
    if verdict is not True:
        cause, fix = cpu_fallback_explanation()
        shown = ("its summary says USE_ROCM is OFF" if verdict is False
                 else "it has no CMake summary with a `USE_ROCM :` line")
        raise StepFailed(
            f"The {which} log ({log_path}) shows no ROCm build: {shown}; stopping now instead "
            "of compiling a CPU-only torch",
            f"{cause} (known failure `{CPU_FALLBACK_SIGNATURE}`)",
            f"{fix}; `invoke clean` first so configure starts fresh",
        )
    archs = _ARCH_LINE.findall(text)
    if not archs:
        raise StepFailed(
            f"The {which} log ({log_path}) has no `Building PyTorch for GPU arch:` line",
            "without it there is no evidence that GPU code is built",
            "read the configure log; `invoke clean` and build again",
        )
    targets = tuple(t for t in ctx.step.inputs.get("targets", "").split(";") if t)
    configured = split_arch_list(archs[-1])
    if targets and sorted(configured) != sorted(targets):
        raise StepFailed(
            f"Configure built for {';'.join(configured)}, but {';'.join(targets)} was requested",
            "a stale CMake cache keeps the arch list of an earlier configure",
            "run `invoke clean` and build again",
        )
    ctx.say(f"USE_ROCM : ON; GPU arch: {';'.join(configured)}")
    return {"use_rocm": "ON", "archs": list(configured)}


# --- outputs ------------------------------------------------------------------------------------


@register_action("collect", "copy the wheels to dist/ (atomically) and write dist/manifest.json")
def _collect(ctx: ActionContext) -> Mapping[str, Any]:
    from rocmforge.knowledge.manifest import build_manifest, write_manifest

    dist = ctx.workdir.dist
    built = sorted((Path(ctx.step.cwd) / "dist").glob("torch-*.whl"),
                   key=lambda p: p.stat().st_mtime)
    if not built:
        raise StepFailed(
            f"The build left no torch-*.whl in {Path(ctx.step.cwd) / 'dist'}",
            "the build step succeeded but did not package a wheel",
            "read logs/build.log",
        )
    torch_wheel = copy_atomically(built[-1], dist)
    ctx.say(f"dist: {torch_wheel.name}")
    triton_name = ""
    triton_src = str(_details_of(ctx, "triton").get("wheel", "") or "")
    if triton_src:
        triton_name = copy_atomically(Path(triton_src), dist).name
        ctx.say(f"dist: {triton_name}")
    lock: Any = {}
    if ctx.workdir.lock_file.is_file():
        from rocmforge.knowledge.toml_files import read_toml

        lock = read_toml(ctx.workdir.lock_file)
    steps = [
        {"name": r.name, "result": r.status, "duration_s": round(r.duration_s, 3)}
        for r in ctx.results
    ]
    doc = build_manifest(
        targets=list(ctx.plan.targets),
        wheels={"torch": torch_wheel.name, "triton": triton_name},
        lock=lock,
        toolchain=dict(_details_of(ctx, "compilers").get("toolchain", {})),
        env=dict(_details_of(ctx, "environment").get("env", {})),
        steps=steps,
        plan_settings={k: v for k, v in ctx.plan.settings.items() if k != "origins"},
    )
    doc["source"] = dict(_details_of(ctx, "checkout"))
    earlier = _manifest_wheels(dist / "manifest.json")
    path = write_manifest(dist / "manifest.json", doc)
    ctx.say(f"wrote {path}")
    # A wheel an earlier build listed and this one does not (a Triton of another pin) would
    # sit next to the new one: `pip install dist/*.whl` would get two `triton` providers.
    for name in sorted(earlier - {torch_wheel.name, triton_name}):
        stale = dist / name
        if stale.is_file():
            stale.unlink()
            ctx.say(f"removed {stale}: an earlier build's wheel, not in this manifest")
    return {"torch": torch_wheel.name, "triton": triton_name}


def _manifest_wheels(path: Path) -> set[str]:
    """Wheel file names a kit manifest lists (plain names only); empty when there is none."""
    from rocmforge.knowledge.manifest import read_manifest

    try:
        wheels = read_manifest(path)["wheels"]
        names = {str(v) for v in wheels.values() if v}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
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


@register_action("install", "pip install the dist/ wheels into the build venv")
def _install(ctx: ActionContext) -> Mapping[str, Any]:
    python = ctx.step.argv[1]
    names = _details_of(ctx, "collect")
    wheels = [str(ctx.workdir.dist / str(names[k])) for k in ("triton", "torch") if names.get(k)]
    if not wheels:
        raise StepFailed("There is no wheel to install", "the collect step recorded none",
                         "run the build again")
    ctx.run(pip_install_argv(python, wheels))
    return {"installed": wheels}


# --- helpers of the install and clean tasks -----------------------------------------------------


def externally_managed(python: str) -> str:
    """The EXTERNALLY-MANAGED marker path when `python` is a PEP 668 system Python, else ""."""
    probe = (
        "import os, sys, sysconfig\n"
        "marker = os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED')\n"
        "in_venv = sys.prefix != getattr(sys, 'base_prefix', sys.prefix)\n"
        "print(marker if os.path.isfile(marker) and not in_venv else '')\n"
    )
    done = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RocmforgeError(
            f"{python} could not be run ({done.stderr.strip()[-200:] or done.returncode})",
            "the wheels are installed with that interpreter's pip",
            "pass --python with the path of a working interpreter",
        )
    return done.stdout.strip()


def install_argv(workdir: WorkDir, python: str = "") -> list[str]:
    """The pip command of `invoke install`: the dist/ wheels of the finished build into `python`
    (default: the build venv), after the checks that make it safe (each a UsageError, exit 2):
    the interpreter exists and runs, dist/manifest.json is the kit's, and `python` is not a
    PEP 668 system Python. Runs only the interpreter's probe; installs nothing."""
    from rocmforge.errors import UsageError
    from rocmforge.knowledge.manifest import read_manifest

    target = python or str(workdir.venv / "bin" / "python")
    found = target if "/" in target else shutil.which(target)
    if not found or not Path(found).is_file():
        if python:
            raise UsageError(
                f"The interpreter {python!r} given with --python does not exist",
                "the wheels are installed with that interpreter's pip",
                "pass the path of an interpreter that exists, e.g. ENV/bin/python of a "
                "virtualenv made with `python3 -m venv ENV`",
            )
        raise UsageError(
            f"The build venv's interpreter {target} does not exist",
            "without --python, the wheels go into the build venv that `invoke build` makes",
            "run `invoke build` first, or pass --python with the interpreter of another "
            "virtualenv",
        )
    manifest = workdir.dist / "manifest.json"
    try:
        wheels_doc = read_manifest(manifest)["wheels"]
        names = [str(wheels_doc[k]) for k in ("triton", "torch") if wheels_doc.get(k)]
        has_torch = bool(wheels_doc.get("torch"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        names, has_torch = [], False
    if not has_torch:
        raise UsageError(
            f"{manifest} is missing or not a rocmforge manifest",
            "install takes the wheels that a finished build listed there",
            "run `invoke build` first",
        )
    marker = externally_managed(found)
    if marker:
        raise UsageError(
            f"{found} is a system Python managed by the OS package manager ({marker} exists)",
            "installing into it with pip can break OS tools (PEP 668)",
            "create a virtualenv (python3 -m venv ENV) and pass --python ENV/bin/python",
        )
    return pip_install_argv(found, [str(workdir.dist / name) for name in names])


def pip_install_argv(python: str, wheels: Sequence[str]) -> list[str]:
    """Exactly these wheel files, replacing what is installed, dependencies untouched (the build
    venv already has them; a resolver run could pull a CUDA torch or triton back in)."""
    return [python, "-m", "pip", "install", "--no-deps", "--force-reinstall", *wheels]


def clean_work_dir(workdir: WorkDir, *, everything: bool, dry: bool) -> list[str]:
    """Remove what the kit made and say what; under `dry` only say it.

    Default: the CMake build dir and the built wheels of the checkout, the stamps and the logs
    (sources, venv and dist/ stay). `everything`: each folder the kit creates under the work dir,
    and the work dir itself only when nothing else is left in it (files a user put there stay).
    A live build holding the lock is refused, and so is a folder the kit did not make (no
    work-dir marker and no stamp in its state/): `--work-dir .` or `/` must never lose a user's
    own `dist/` or `logs/`.
    """
    from rocmforge.errors import UsageError
    from rocmforge.execute.lock import BuildLocked, _pid_alive, read_holder
    from rocmforge.execute.stamps import WORK_DIR_MARKER, is_kit_work_dir

    root = workdir.root
    kit_made = is_kit_work_dir(workdir.state)
    if root.is_dir() and any(root.iterdir()) and not kit_made:
        raise UsageError(
            f"{root} is not a work dir the kit made (it has no {workdir.state / WORK_DIR_MARKER} "
            "and no build stamps), so `invoke clean` deletes nothing there",
            "the kit deletes only folders it made; sub-folders such as dist/ or logs/ of any "
            "other folder may be yours",
            "pass the work dir of your build with --work-dir (default .rocmforge), or delete "
            "the folders yourself",
        )
    holder = read_holder(workdir.state / "build.lock")
    if holder is not None and _pid_alive(holder.pid):
        raise BuildLocked(
            f"A build (pid {holder.pid}, started {holder.started}) is running in {workdir.root}",
            "cleaning under a running build would break it",
            "wait for it to finish or stop it, then clean",
        )
    if everything:
        paths = [workdir.src, workdir.logs, workdir.state, workdir.dist, workdir.venv,
                 workdir.downloads, workdir.lock_file]
    else:
        paths = [workdir.pytorch / "build", workdir.pytorch / "dist", workdir.state / "stamps",
                 workdir.logs]
    lines: list[str] = []
    for path in paths:
        if not path.exists() and not path.is_symlink():
            continue
        lines.append(f"{'would remove' if dry else 'removed'} {path}")
        if dry:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    if everything and kit_made and not dry and root.is_dir() and not any(root.iterdir()):
        workdir.root.rmdir()
        lines.append(f"removed {workdir.root}")
    if not lines:
        lines.append(f"nothing to clean in {workdir.root}")
    return lines


def patch_digest_inputs(patches_root: Path | None = None) -> dict[str, str]:
    """sha256 of every patch in the kit's series (pytorch and triton), for the patches step's
    digest. The whole series, not the selection for one version: the selection depends on the
    checked-out tree's version.txt, which a first build cannot read before its checkout, and a
    digest that changed after checkout would redo every later step on the second run."""
    from rocmforge.sources import PATCHES_ROOT, load_series

    root = patches_root or PATCHES_ROOT
    found: dict[str, str] = {}
    for project in ("pytorch", "triton"):
        for patch in load_series(root, project):
            found[f"patch:{project}/{patch.path.name}"] = patch.sha256
    return found


__all__: Sequence[str] = (
    "clean_work_dir",
    "copy_atomically",
    "cpu_fallback_explanation",
    "externally_managed",
    "install_argv",
    "pip_install_argv",
    "patch_digest_inputs",
)
