"""Invoke tasks: plan, build, install, clean. Thin adapters: parse flags, call the library, print.

`build` = resolve settings -> probe (facts, compilers) -> environment -> plan (pure) -> run.
Heavy imports stay inside the bodies so `invoke --list` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from invoke import Context, task

from rocmforge.tasks._common import is_dry, reported, settings_for

if TYPE_CHECKING:
    from rocmforge.plan.prepare import PreparedBuild

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


def _prepare(c: Context, *, compile_probes: bool = True, **flags: Any) -> PreparedBuild:
    from rocmforge.plan.prepare import prepare_build

    return prepare_build(settings_for(c, **flags), compile_probes=compile_probes)


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
    from rocmforge.execute.runner import planned_states
    from rocmforge.plan.report import settings_rows, step_rows
    from rocmforge.render import emit_json, print_table, say

    # The plan lists steps; the real compile per target is left to doctor and build's preflight.
    flags = _flags(arch, work_dir, repo, ref, rocm_path, gcc, clang, python, triton,
                   skip_preflight, system_site_packages, allow_compiler)
    prepared = _prepare(c, compile_probes=False, **flags)
    the_plan = prepared.plan
    if json:
        emit_json(the_plan.to_json())
        return
    states = planned_states(the_plan, prepared.inputs.workdir)
    print_table("rocmforge plan: settings", ("setting", "value"), settings_rows(the_plan))
    for note in the_plan.notes:
        say(f"note: {note}")
    print_table("steps", ("#", "step", "state", "command", "why"), step_rows(the_plan, states))


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
    from rocmforge.execute.runner import run_plan
    from rocmforge.steps import build_actions

    prepared = _prepare(
        c, **_flags(arch, work_dir, repo, ref, rocm_path, gcc, clang, python, triton,
                    skip_preflight, system_site_packages, allow_compiler))
    workdir = prepared.inputs.workdir
    results = run_plan(c, prepared.plan, workdir, actions=build_actions(prepared),
                       resume_hint=_resume_hint(prepared.settings.arch))
    if not is_dry(c):
        ran = sum(1 for r in results if r.status == "ran")
        total = sum(r.duration_s for r in results if r.status == "ran")
        print(f"rocmforge: {ran} step(s) ran in {total:.1f} s; "
              f"{len(results) - ran} up to date. Wheels: {workdir.dist}")


@task(help={"python": "interpreter of the environment to install into (default: the build venv)",
            "work_dir": _FLAG_HELP["work_dir"]})
@reported
def install(c: Context, python: str = "", work_dir: str = "") -> None:
    """Install the wheels in dist/ into an environment (never an externally managed one)."""
    import shlex

    from rocmforge.errors import StepFailed
    from rocmforge.steps.venv import install_argv
    from rocmforge.workdir import workdir_for

    settings = settings_for(c, work_dir=work_dir)
    argv = install_argv(workdir_for(settings.work_dir), python)
    print("+ " + shlex.join(argv))
    if is_dry(c):
        return
    result = c.run(shlex.join(argv), warn=True, pty=False, in_stream=False)
    if result is None or result.exited != 0:
        raise StepFailed(f"pip could not install {', '.join(argv[6:])} into {argv[0]}",
                         "pip's output above says why", "fix that, then run `invoke install` again")


@task(help={"all": "remove the whole work dir the kit made (sources, venv, dist, logs, stamps)",
            "work_dir": _FLAG_HELP["work_dir"]})
@reported
def clean(c: Context, all: bool = False, work_dir: str = "") -> None:  # noqa: A002 - flag name
    """Remove what the kit built: the CMake build dir and stamps (--all: the whole work dir)."""
    from rocmforge.execute.clean import clean_work_dir
    from rocmforge.workdir import workdir_for

    settings = settings_for(c, work_dir=work_dir)
    for line in clean_work_dir(workdir_for(settings.work_dir), everything=all, dry=is_dry(c)):
        print(line)


# Tasks of this module, added to the `rocm` collection by rocmforge.tasks.
TASKS: tuple = (plan, build, install, clean)
# Sub-collections (e.g. `triton`), added by name.
COLLECTIONS: tuple = ()
