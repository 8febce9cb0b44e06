"""Invoke tasks: plan, build, install, clean. Thin adapters: parse flags, call the library, print.

`build` = resolve settings -> probe (facts, compilers) -> environment -> plan (pure) -> run.
Heavy imports stay inside the bodies so `invoke --list` stays fast.
"""

from __future__ import annotations

from typing import Any

from invoke import Context, task

from rocmforge.tasks._common import is_dry, reported, settings_for

_FLAG_HELP = {
    "arch": "GPU targets, ';' or ',' separated, aliases allowed, e.g. \"gfx90a;gfx942\"",
    "work_dir": "the kit's work dir (default .rocmforge)",
    "repo": "PyTorch git URL or path (setting pytorch_repo)",
    "ref": "PyTorch tag, branch or 40-hex commit (setting pytorch_ref)",
    "rocm_path": "ROCm install to build against",
    "gcc": "host GCC major for CC/CXX",
    "clang": "host clang major for CC/CXX",
    "triton": "auto (prebuilt wheel, else source), wheel, source, or skip",
    "skip_preflight": "do not stop on doctor's FAIL rows (hidden: for fixture builds)",
    "system_site_packages": "let the build venv see the interpreter's site-packages (offline)",
    "python": "interpreter that creates the build venv",
}


def _prepare(c: Context, **flags: Any) -> tuple[Any, Any, Any]:
    """Settings, Plan and the runner's extras for one invocation (probes run here)."""
    import os
    import sys

    from rocmforge.errors import UsageError
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.knowledge.toml_files import check_keys, config_dir, read_toml
    from rocmforge.plan.build_plan import TRITON_MODES, BuildOptions, PreflightRow, plan_build
    from rocmforge.probes.facts import gather_facts
    from rocmforge.targets import parse_targets
    from rocmforge.workdir import workdir_for

    triton = flags.pop("triton")
    skip_preflight = flags.pop("skip_preflight")
    system_site = flags.pop("system_site_packages")
    if triton not in TRITON_MODES:
        raise UsageError(
            f"--triton {triton!r} is not a Triton mode",
            "the kit either downloads a prebuilt wheel, builds from the pin, or skips Triton",
            f"use one of: {', '.join(TRITON_MODES)}",
        )
    settings = settings_for(c, **flags)
    facts = gather_facts(settings)
    llvm_major = int(getattr(facts.rocm, "llvm_major", 0) or 0) if facts.rocm else 0
    arch_text = settings.arch or ";".join(facts.gpus.targets)
    targets = parse_targets(arch_text, load_arch_table(), llvm_major=0)
    target_names = tuple(str(t) for t in targets)
    del llvm_major  # the HIP compiler may be newer than the ROCm clang (hidden HIP_CLANG_PATH)

    compilers = _choose_compilers(settings, facts)
    build_toml = read_toml(config_dir() / "build.toml")
    check_keys(build_toml, where="config/build.toml", optional=("env", "configure"))
    defaults_env = {str(k): str(v) for k, v in build_toml.get("env", {}).items()}
    configure_env = {str(k): str(v)
                     for k, v in build_toml.get("configure", {}).get("env", {}).items()}
    env = dict(defaults_env)
    env.update(_computed_env(settings, facts, targets, compilers))
    env.update({str(k): str(v) for k, v in settings.build_env.items()})

    release = _release_style(settings.pytorch_ref)
    rows: list[PreflightRow] = []
    if not skip_preflight:
        rows = _preflight_rows(facts, targets, settings)
    workdir = workdir_for(settings.work_dir)
    options = BuildOptions(
        build_style=release["build_style"],
        scikit_build_core=release["scikit_build_core"],
        pytorch_version=release["version"],
        triton=triton,
        skip_preflight=skip_preflight,
        system_site_packages=system_site,
        python=settings.python or sys.executable or "python3",
        configure_env=configure_env,
    )
    plan = plan_build(settings, facts, target_names, workdir=workdir, env=env,
                      compilers=compilers, options=options, preflight=rows)
    extras = {"settings": settings, "facts": facts, "preflight_rows": rows,
              "environ": dict(os.environ)}
    return settings, plan, extras


def _choose_compilers(settings: Any, facts: Any) -> dict[str, str]:
    import os

    from rocmforge.toolchain.inventory import policy_context, take_inventory
    from rocmforge.toolchain.select import choose_build_compilers

    ctx = policy_context(rocm_path=settings.rocm_path, pytorch_ref=settings.pytorch_ref,
                         environ=os.environ)
    inventory = take_inventory(rocm_root=ctx.rocm_root, altdir=settings.alternatives_altdir,
                               admindir=settings.alternatives_admindir)
    choice = choose_build_compilers(
        inventory, gcc=settings.gcc, clang=settings.clang,
        allow_compiler=settings.allow_compiler, judge=ctx.judge, recommended=ctx.recommended,
        rocm_llvm_major=ctx.rocm_llvm_major,
    )
    compilers = {"cc": str(choice.cc), "cxx": str(choice.cxx)}
    hip = settings.build_env.get("HIP_CLANG_PATH", "")
    if hip:
        compilers["hip"] = os.path.join(hip, "clang++")
    elif facts.rocm is not None and getattr(facts.rocm, "clang", None):
        compilers["hip"] = str(facts.rocm.clang)
    return compilers


def _computed_env(settings: Any, facts: Any, targets: Any, compilers: dict[str, str]) -> dict:
    from rocmforge.buildenv import build_environment

    env = build_environment(settings, facts, targets, cc=compilers["cc"], cxx=compilers["cxx"])
    return env.as_dict()


def _release_style(ref: str) -> dict[str, Any]:
    """Build style from the version table (rocmforge.knowledge.releases) when it knows the ref."""
    try:
        from rocmforge.knowledge.releases import pytorch_release_for

        release = pytorch_release_for(ref)
        return {
            "build_style": str(release.build_style),
            "scikit_build_core": bool(release.scikit_build_core),
            "version": str(release.version),
        }
    except ImportError:
        pass
    # Until the version table lands: reference pytorch-rocm-build.md §1.5 (setup.py bdist_wheel
    # up to 2.8, `python -m build` from 2.9, scikit-build-core from 2.14).
    from packaging.version import InvalidVersion, Version

    text = ref.strip().removeprefix("v")
    try:
        version = Version(text)
    except InvalidVersion:
        return {"build_style": "build", "scikit_build_core": False, "version": ""}
    base = (version.major, version.minor)
    return {
        "build_style": "setup.py" if base <= (2, 8) else "build",
        "scikit_build_core": base >= (2, 14),
        "version": str(version),
    }


def _preflight_rows(facts: Any, targets: Any, settings: Any) -> list[Any]:
    from rocmforge.doctor import diagnose
    from rocmforge.plan.build_plan import PreflightRow

    return [
        PreflightRow(status=str(r.status), check=str(r.check), detail=str(r.detail),
                     fix=str(getattr(r, "fix", "") or ""))
        for r in diagnose(facts, targets, settings)
    ]


def _flags(arch: str, work_dir: str, repo: str, ref: str, rocm_path: str, gcc: int, clang: int,
           python: str) -> dict[str, Any]:
    return {"arch": arch, "work_dir": work_dir, "pytorch_repo": repo, "pytorch_ref": ref,
            "rocm_path": rocm_path, "gcc": gcc, "clang": clang, "python": python}


def _resume_hint(arch: str) -> str:
    import shlex
    import sys

    argv = [a for a in sys.argv[1:] if a not in ("--dry", "-R")]
    return "run `invoke " + shlex.join(argv) + "` again" if argv else \
        f"run `invoke build --arch {shlex.quote(arch)}` again"


@task(
    help={
        **{k: _FLAG_HELP[k] for k in ("arch", "work_dir", "repo", "ref", "rocm_path", "gcc",
                                      "clang", "triton", "skip_preflight",
                                      "system_site_packages", "python")},
        "json": "print the plan as versioned JSON (rocmforge.plan/1)",
    }
)
@reported
def plan(
    c: Context,
    arch: str = "",
    work_dir: str = "",
    repo: str = "",
    ref: str = "",
    rocm_path: str = "",
    gcc: int = 0,
    clang: int = 0,
    triton: str = "auto",
    skip_preflight: bool = False,
    system_site_packages: bool = False,
    python: str = "",
    json: bool = False,
) -> None:
    """Show what `invoke build` would do: resolved settings and every step, nothing run."""
    import shlex

    from rocmforge.render import emit_json, say
    from rocmforge.runner import ACTION_SUMMARIES, StepRunner

    _, the_plan, _ = _prepare(
        c, triton=triton, skip_preflight=skip_preflight, system_site_packages=system_site_packages,
        **_flags(arch, work_dir, repo, ref, rocm_path, gcc, clang, python),
    )
    if json:
        emit_json(the_plan.to_json())
        return
    print(f"targets: {';'.join(the_plan.targets)}")
    for key, value in the_plan.settings.items():
        if key != "origins":
            print(f"{key}: {value}")
    for note in the_plan.notes:
        say(f"note: {note}")
    from rocmforge.workdir import workdir_for

    start = StepRunner(c, the_plan, workdir_for(the_plan.settings["work_dir"])).first_to_run()
    for index, step in enumerate(the_plan.steps):
        state = "done" if index < start else "to run"
        if step.kind == "python":
            summary = ACTION_SUMMARIES.get(step.argv[0], "")
            command = f"[python] {shlex.join(step.argv)}  # {summary}"
        else:
            command = shlex.join(step.argv)
        print(f"{index + 1:>2}. {step.name:<18} [{state}] {command}")


@task(
    help={k: _FLAG_HELP[k] for k in ("arch", "work_dir", "repo", "ref", "rocm_path", "gcc",
                                     "clang", "triton", "skip_preflight", "system_site_packages",
                                     "python")}
)
@reported
def build(
    c: Context,
    arch: str = "",
    work_dir: str = "",
    repo: str = "",
    ref: str = "",
    rocm_path: str = "",
    gcc: int = 0,
    clang: int = 0,
    triton: str = "auto",
    skip_preflight: bool = False,
    system_site_packages: bool = False,
    python: str = "",
) -> None:
    """Build PyTorch for the GPU targets: resumable; `invoke --dry build` shows every step."""
    from rocmforge.runner import run_plan
    from rocmforge.workdir import workdir_for

    settings, the_plan, extras = _prepare(
        c, triton=triton, skip_preflight=skip_preflight, system_site_packages=system_site_packages,
        **_flags(arch, work_dir, repo, ref, rocm_path, gcc, clang, python),
    )
    results = run_plan(c, the_plan, workdir_for(settings.work_dir), extras=extras,
                       resume_hint=_resume_hint(settings.arch))
    if not is_dry(c):
        ran = sum(1 for r in results if r.status == "ran")
        total = sum(r.duration_s for r in results if r.status == "ran")
        print(f"rocmforge: {ran} step(s) ran in {total:.1f} s; "
              f"{len(results) - ran} up to date. Wheels: {workdir_for(settings.work_dir).dist}")


@task(help={"python": "interpreter of the environment to install into (default: the build venv)",
            "work_dir": _FLAG_HELP["work_dir"]})
@reported
def install(c: Context, python: str = "", work_dir: str = "") -> None:
    """Install the wheels in dist/ into an environment (never an externally managed one)."""
    import shlex
    from pathlib import Path

    from rocmforge.errors import UsageError
    from rocmforge.manifest import read_manifest
    from rocmforge.runner import externally_managed
    from rocmforge.workdir import workdir_for

    settings = settings_for(c, work_dir=work_dir)
    wd = workdir_for(settings.work_dir)
    target = python or str(wd.venv / "bin" / "python")
    if not Path(target).exists() and "/" in target:
        raise UsageError(f"{target} does not exist", "the wheels are installed with its pip",
                         "build first (invoke build) or pass --python PATH")
    try:
        doc = read_manifest(wd.dist / "manifest.json")
    except (OSError, ValueError):
        raise UsageError(
            f"{wd.dist / 'manifest.json'} is missing or not a rocmforge manifest",
            "install takes the wheels that a finished build listed there",
            "run `invoke build` first",
        ) from None
    wheels = [str(wd.dist / doc["wheels"][k]) for k in ("triton", "torch") if doc["wheels"].get(k)]
    marker = externally_managed(target)
    if marker:
        raise UsageError(
            f"{target} is a system Python managed by the OS package manager ({marker} exists)",
            "installing into it with pip can break OS tools (PEP 668)",
            "create a virtualenv (python3 -m venv ENV) and pass --python ENV/bin/python",
        )
    argv = [target, "-m", "pip", "install", "--no-deps", "--force-reinstall", *wheels]
    print("+ " + shlex.join(argv))
    if is_dry(c):
        return
    result = c.run(shlex.join(argv), warn=True, pty=False, in_stream=False)
    if result is None or result.exited != 0:
        from rocmforge.errors import StepFailed

        raise StepFailed(f"pip could not install {', '.join(wheels)} into {target}",
                         "pip's output above says why", "fix that, then run `invoke install` again")


@task(help={"all": "remove the whole work dir the kit made (sources, venv, dist, logs, stamps)",
            "work_dir": _FLAG_HELP["work_dir"]})
@reported
def clean(c: Context, all: bool = False, work_dir: str = "") -> None:  # noqa: A002 - flag name
    """Remove what the kit built: the CMake build dir and stamps (--all: the whole work dir)."""
    from rocmforge.runner import clean_work_dir
    from rocmforge.workdir import workdir_for

    settings = settings_for(c, work_dir=work_dir)
    for line in clean_work_dir(workdir_for(settings.work_dir), everything=all, dry=is_dry(c)):
        print(line)


# Tasks of this module, added to the `rocm` collection by rocmforge.tasks.
TASKS: tuple = (plan, build, install, clean)
# Sub-collections (e.g. `triton`), added by name.
COLLECTIONS: tuple = ()
