"""Pipeline stage: Triton at the pin of the checkout, with exactly one provider in the venv.

Owns: the triton action (a prebuilt wheel from the index, sha256-checked, else a source build
at the pinned commit; removing any other `triton` provider). Must not: read the pin from
anywhere but the checkout, or install more than the one wheel.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from rocmforge.errors import StepFailed
from rocmforge.execute.action_args import InVenv, TritonArgs
from rocmforge.execute.actions import ActionContext, Details
from rocmforge.knowledge.steps import STEP
from rocmforge.knowledge.triton import index_url
from rocmforge.steps.venv import pip_install_argv

if TYPE_CHECKING:
    from packaging.tags import Tag

    from rocmforge.plan.prepare import PreparedBuild
    from rocmforge.sources.triton_pin import TritonPin


def triton(build: PreparedBuild, ctx: ActionContext) -> Details:
    from rocmforge.sources import pin_of_checkout, triton_wheel
    from rocmforge.sources.constraints import release_venv

    args = ctx.args(TritonArgs)
    mode, python = args.mode, args.python
    release_venv(ctx.workdir.venv)  # a new pin's Triton replaces the last build's
    if mode == "skip":
        ctx.notice("Triton skipped (triton_mode = skip): torch.compile will not work")
        return {"wheel": "", "mode": mode}
    pin = pin_of_checkout(ctx.workdir)
    ctx.say(f"Triton pin: {pin.commit} ({pin.wheel_name} {pin.version or '?'}) from "
            f"{pin.pin_file}")
    wheel: Path | None = None
    origin = ""
    if mode in ("auto", "wheel"):
        if not pin.version:
            problem = f"the checkout has no Triton version file next to {pin.pin_file}"
            if mode == "wheel":
                raise StepFailed("No prebuilt Triton wheel can be matched", problem,
                                 "use --triton source (builds from the pin)")
            ctx.notice(f"no prebuilt Triton wheel: {problem}; building from source")
        else:
            try:
                wheel = _download_triton_wheel(build, ctx, pin, python)
                origin = "index"
            except triton_wheel.TritonWheelUnavailable as exc:
                if mode == "wheel":
                    raise
                ctx.notice(f"no prebuilt Triton wheel ({exc.paragraph()}); building from source")
    if wheel is None:
        wheel = _build_triton(build, ctx, pin, python)
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
    return {"wheel": str(wheel), "commit": pin.commit, "version": pin.version, "name": keep,
            "origin": origin, "removed": removed, "mode": mode}


def _wheel_project_name(name: str) -> str:
    from packaging.utils import canonicalize_name

    return str(canonicalize_name(name))


def _wheel_project(wheel: Path) -> str:
    """The distribution a wheel file installs, from its file name (PEP 427)."""
    from packaging.utils import parse_wheel_filename

    return str(parse_wheel_filename(wheel.name)[0])


def _venv_tags(ctx: ActionContext, python: str) -> list[Tag]:
    """The build venv interpreter's wheel tags in preference order (its own `packaging`, or
    the copy vendored in its pip), so the pick fits the venv, not the kit's interpreter."""
    from packaging.tags import parse_tag

    script = ("try:\n from packaging import tags\nexcept ImportError:\n"
              " from pip._vendor.packaging import tags\n"
              "print('\\n'.join(str(t) for t in tags.sys_tags()))")
    _, out = ctx.capture([python, "-c", script], check=False)
    return [tag for line in out.split() if line.strip()
            for tag in sorted(parse_tag(line), key=str)]


def _download_triton_wheel(build: PreparedBuild, ctx: ActionContext, pin: TritonPin,
                          python: str) -> Path:
    from rocmforge.sources import triton_wheel

    settings = build.inputs.settings
    rocm = build.inputs.facts.rocm
    index = index_url(str(settings.triton_index), rocm.version if rocm is not None else "")
    ctx.say(f"looking for {pin.wheel_name} {pin.version} (commit {pin.commit[:8]}) on {index}")
    client = triton_wheel.IndexClient(index_url=index, timeout_s=30.0)
    choice = triton_wheel.find_wheel(client, pin, _venv_tags(ctx, python))
    ctx.say(f"found {choice.filename} (sha256 {choice.sha256[:16]}...)")
    try:
        path = triton_wheel.download_verified(choice.url, choice.sha256, ctx.workdir.downloads,
                                              progress=True, filename=choice.filename)
    except triton_wheel.DownloadInterrupted:
        # The network failed mid-download: exit 3 (EnvironmentFailed); the runner adds the
        # step's log and how to resume. Nothing was kept, so a rerun starts the download again.
        raise
    except triton_wheel.DownloadFailed as exc:
        # A hash mismatch or a file that cannot be written is a fault to fix, not a reason to
        # build something else silently; nothing was kept.
        raise StepFailed(exc.what, exc.why, exc.fix) from None
    ctx.say(f"downloaded {path} (sha256 verified)")
    return path


def _build_triton(build: PreparedBuild, ctx: ActionContext, pin: TritonPin,
                  python: str) -> Path:
    from rocmforge.sources import checkout_triton, patch_sources, triton_wheel

    settings = build.inputs.settings
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
        ctx.notice(f"note: MAX_JOBS={value!r} is not a whole number; the Triton build chooses its "
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

    from rocmforge.knowledge.triton import TRITON_PROVIDERS

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


def triton_targets(build: PreparedBuild, ctx: ActionContext) -> Details:
    """The Triton just installed must generate code for every target (issue 22): one small
    kernel per target, each code object's machine checked by the kit's ELF reader."""
    from rocmforge.probes.triton_targets import gap_error, probe_triton_targets

    python = ctx.args(InVenv).python
    report = probe_triton_targets(python, build.inputs.target_names)
    for result in report.results:
        ctx.say(f"{result.status:<4} {result.target}: {result.reason}")
    if not report.triton_version:
        raise StepFailed(
            f"The build venv's Python {python} has no importable triton after the triton step",
            "the probe compiles with the venv's own Triton",
            "read logs/triton.log; run the build again",
        )
    pin = str(ctx.details_of(STEP.triton).get("version", "") or "")
    error = gap_error(report, pin=pin)
    allowed = build.settings.allow_triton_gap
    if error is not None:
        if not allowed:
            raise error
        ctx.notice(f"note: allow_triton_gap: going on although {error.what}")
    return {"report": report.to_json(), "gap": [r.target for r in report.failed()],
            "allowed_gap": bool(allowed and error is not None)}
