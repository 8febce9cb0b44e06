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
    "triton": "auto (prebuilt wheel, else source), wheel, source, or skip (setting triton_mode)",
    "skip_preflight": "do not stop on doctor's FAIL rows (setting skip_preflight)",
    "system_site_packages": "let the build venv see the interpreter's site-packages (setting "
    "venv_system_site_packages)",
    "allow_compiler": "build with a host compiler outside the table for the ROCm found",
    "python": "interpreter that creates the build venv",
}


def _prepare(c: Context, *, with_preflight: bool = True, **flags: Any) -> tuple[Any, Any, Any]:
    """Settings, Plan and the runner's extras for one invocation (probes run here, once)."""
    import dataclasses
    import os
    import sys

    from rocmforge.build_actions import patch_digest_inputs
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.knowledge.toml_files import check_keys, config_dir, read_toml
    from rocmforge.plan.build_plan import BuildOptions, PreflightRow, plan_build
    from rocmforge.probes.facts import gather_facts
    from rocmforge.sources import describe_sources
    from rocmforge.targets import parse_targets
    from rocmforge.workdir import workdir_for

    settings = settings_for(c, **flags)
    facts = gather_facts(settings)
    arch_text = settings.arch or ";".join(facts.gpus.targets)
    # Parsed without the ROCm clang's LLVM major: HIP_CLANG_PATH may name a newer compiler.
    targets = parse_targets(arch_text, load_arch_table(), llvm_major=0)
    target_names = tuple(str(t) for t in targets)

    choice, compilers = _choose_compilers(settings, facts)
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
    if with_preflight and not settings.skip_preflight:
        # Doctor judges the compiler the build really uses, not whatever `c++` is.
        judged = dataclasses.replace(facts, host_compiler=_as_host_compiler(choice, facts))
        rows = _preflight_rows(judged, targets, settings)
    workdir = workdir_for(settings.work_dir)
    options = BuildOptions(
        build_style=release["build_style"],
        scikit_build_core=release["scikit_build_core"],
        pytorch_version=release["version"],
        python=settings.python or sys.executable or "python3",
        configure_env=configure_env,
    )
    summary = describe_sources(settings)
    sources = summary.as_dict() if summary.pytorch_commit else None
    plan = plan_build(settings, facts, target_names, workdir=workdir, env=env,
                      compilers=compilers, options=options, preflight=rows,
                      patch_inputs=patch_digest_inputs(), sources=sources)
    extras = {"settings": settings, "facts": facts, "preflight_rows": rows,
              "environ": dict(os.environ)}
    return settings, plan, extras


def _judge_for(facts: Any, pytorch_ref: str) -> tuple[Any, tuple[tuple[str, int], ...]]:
    """The compiler policy's judge and recommendation for the ROCm install facts already found
    (no second ROCm probe); (None, ()) when the tables do not know the pair."""
    from rocmforge.errors import RocmforgeError
    from rocmforge.knowledge import compiler_policy, releases
    from rocmforge.toolchain.select import Verdict

    if facts.rocm is None or not facts.rocm.version:
        return None, ()
    try:
        rocm_release = releases.rocm_release_for(facts.rocm.version)
        torch_release = releases.pytorch_release_for(pytorch_ref)
    except (RocmforgeError, KeyError, ValueError):
        return None, ()

    def judge(kind: str, version: str) -> Verdict:
        verdict = compiler_policy.judge_compiler(kind, version, rocm_release, torch_release)
        return Verdict(status=verdict.status, reason=verdict.reason, fix=verdict.fix)

    recommended = tuple((str(k), int(m)) for k, m in
                        compiler_policy.recommended_compilers(rocm_release, torch_release))
    return judge, recommended


def _choose_compilers(settings: Any, facts: Any) -> tuple[Any, dict[str, str]]:
    """CC/CXX from the compilers gather_facts already identified (no second inventory)."""
    import os

    from rocmforge.probes.compilers import find_gcc_installs
    from rocmforge.toolchain.select import ToolchainInventory, choose_build_compilers

    judge, recommended = _judge_for(facts, settings.pytorch_ref)
    inventory = ToolchainInventory(compilers=tuple(facts.compilers),
                                   gcc_installs=find_gcc_installs("/"))
    choice = choose_build_compilers(
        inventory, gcc=settings.gcc, clang=settings.clang,
        allow_compiler=settings.allow_compiler, judge=judge, recommended=recommended,
        rocm_llvm_major=int(getattr(facts.rocm, "llvm_major", 0) or 0) if facts.rocm else 0,
    )
    compilers = {"cc": str(choice.cc), "cxx": str(choice.cxx)}
    hip = settings.build_env.get("HIP_CLANG_PATH", "")
    if hip:
        compilers["hip"] = os.path.join(hip, "clang++")
    elif facts.rocm is not None and getattr(facts.rocm, "clang", None):
        compilers["hip"] = str(facts.rocm.clang)
    return choice, compilers


def _as_host_compiler(choice: Any, facts: Any) -> Any:
    """The HostCompiler record of the chosen pair (what doctor's "host compiler" row judges)."""
    from rocmforge.probes.compilers import HostCompiler

    for compiler in facts.compilers:
        if compiler.cc == choice.cc:
            return compiler
    return HostCompiler(kind=choice.kind, major=choice.major, version=choice.version,
                        cc=choice.cc, cxx=choice.cxx)


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
    """Doctor's rows for the build; its "host compiler" row is the shared compiler verdict
    (issue 3 item 4), and the build refuses a judged WARN as well as a FAIL unless
    allow_compiler is set (then the row stays a WARN)."""
    from rocmforge.doctor import diagnose
    from rocmforge.plan.build_plan import PreflightRow

    rows = []
    for r in diagnose(facts, targets, settings):
        status, fix = str(r.status), str(getattr(r, "fix", "") or "")
        # A judged verdict carries a fix; an unjudged one (tables unknown) has none.
        if r.check == "host compiler" and status == "WARN" and fix and not settings.allow_compiler:
            status = "FAIL"
        if r.check == "host compiler" and status == "FAIL":
            fix = _build_compiler_fix(fix)
        rows.append(PreflightRow(status=status, check=str(r.check), detail=str(r.detail), fix=fix))
    return rows


def _build_compiler_fix(fix: str) -> str:
    """`invoke toolchain --gcc 11 (...)` -> also the build-only form `invoke build --gcc 11`."""
    import re

    match = re.search(r"invoke toolchain (--(?:gcc|clang) \d+)", fix)
    if not match or "invoke build" in fix:
        return fix
    return f"{fix}; for this build only: `invoke build {match.group(1)}`"


def _flags(arch: str, work_dir: str, repo: str, ref: str, rocm_path: str, gcc: str, clang: str,
           python: str, triton: str, skip_preflight: bool, system_site_packages: bool,
           allow_compiler: bool) -> dict[str, Any]:
    """Task flags under their Settings names (so ROCMFORGE_TRITON_MODE etc. work the same)."""
    return {"arch": arch, "work_dir": work_dir, "pytorch_repo": repo, "pytorch_ref": ref,
            "rocm_path": rocm_path, "gcc": gcc, "clang": clang, "python": python,
            "triton_mode": triton, "skip_preflight": skip_preflight,
            "venv_system_site_packages": system_site_packages,
            "allow_compiler": allow_compiler}


def _resume_hint(arch: str) -> str:
    import shlex
    import sys

    argv = [a for a in sys.argv[1:] if a not in ("--dry", "-R")]
    return "run `invoke " + shlex.join(argv) + "` again" if argv else \
        f"run `invoke build --arch {shlex.quote(arch)}` again"


_PLAN_FLAGS = ("arch", "work_dir", "repo", "ref", "rocm_path", "gcc", "clang", "triton",
               "skip_preflight", "system_site_packages", "allow_compiler", "python")


@task(help={**{k: _FLAG_HELP[k] for k in _PLAN_FLAGS},
            "json": "print the plan as versioned JSON (rocmforge.plan/1)"})
@reported
def plan(
    c: Context,
    arch: str = "",
    work_dir: str = "",
    repo: str = "",
    ref: str = "",
    rocm_path: str = "",
    gcc: str = "",
    clang: str = "",
    triton: str = "",
    skip_preflight: bool = False,
    system_site_packages: bool = False,
    allow_compiler: bool = False,
    python: str = "",
    json: bool = False,
) -> None:
    """Show what `invoke build` would do: resolved settings and every step, nothing run."""
    import shlex

    from rocmforge.render import emit_json, print_table, say
    from rocmforge.runner import StepRunner
    from rocmforge.workdir import workdir_for

    _, the_plan, _ = _prepare(c, **_flags(arch, work_dir, repo, ref, rocm_path, gcc, clang,
                                          python, triton, skip_preflight, system_site_packages,
                                          allow_compiler))
    if json:
        emit_json(the_plan.to_json())
        return
    settings_rows = [("targets", ";".join(the_plan.targets))]
    for key, value in the_plan.settings.items():
        if key in ("origins", "sources"):
            continue
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items()) or "(none)"
        settings_rows.append((key, str(value)))
    sources = the_plan.settings.get("sources") or {}
    if sources:
        settings_rows.append(("pytorch commit", sources["pytorch"]["commit"]))
        pin = sources["triton"].get("pin") or {}
        if pin:
            settings_rows.append(("triton pin", f"{pin['commit']} ({pin['version'] or '?'})"))
    print_table("rocmforge plan: settings", ("setting", "value"), settings_rows)
    for note in the_plan.notes:
        say(f"note: {note}")
    start = StepRunner(c, the_plan, workdir_for(the_plan.settings["work_dir"])).first_to_run()
    rows = []
    for index, step in enumerate(the_plan.steps):
        command = ("[python] " if step.kind == "python" else "") + shlex.join(step.argv)
        rows.append((str(index + 1), step.name, "done" if index < start else "to run", command,
                     step.why))
    print_table("steps", ("#", "step", "state", "command", "why"), rows)


@task(help={k: _FLAG_HELP[k] for k in _PLAN_FLAGS})
@reported
def build(
    c: Context,
    arch: str = "",
    work_dir: str = "",
    repo: str = "",
    ref: str = "",
    rocm_path: str = "",
    gcc: str = "",
    clang: str = "",
    triton: str = "",
    skip_preflight: bool = False,
    system_site_packages: bool = False,
    allow_compiler: bool = False,
    python: str = "",
) -> None:
    """Build PyTorch for the GPU targets: resumable; `invoke --dry build` shows every step."""
    from rocmforge.runner import run_plan
    from rocmforge.workdir import workdir_for

    settings, the_plan, extras = _prepare(
        c, **_flags(arch, work_dir, repo, ref, rocm_path, gcc, clang, python, triton,
                    skip_preflight, system_site_packages, allow_compiler))
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

    from rocmforge.build_actions import externally_managed
    from rocmforge.errors import UsageError
    from rocmforge.manifest import read_manifest
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
    from rocmforge.build_actions import clean_work_dir
    from rocmforge.workdir import workdir_for

    settings = settings_for(c, work_dir=work_dir)
    for line in clean_work_dir(workdir_for(settings.work_dir), everything=all, dry=is_dry(c)):
        print(line)


# Tasks of this module, added to the `rocm` collection by rocmforge.tasks.
TASKS: tuple = (plan, build, install, clean)
# Sub-collections (e.g. `triton`), added by name.
COLLECTIONS: tuple = ()
