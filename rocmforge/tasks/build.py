"""Invoke tasks: plan, build, install, clean. Thin adapters: parse flags, call the library, print.

`plan` and `build` = resolve settings -> gather (plan.gather: probes, files, network, one
BuildFacts) -> plan (plan.prepare.plan_prepared: pure) -> print or run.
Heavy imports stay inside the bodies so `invoke --list` stays fast.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from invoke import Context

from rocmforge.settings import BUILD_FLAGS, settings_of_flags
from rocmforge.tasks._common import holding_work_dir, is_dry, reported, settings_for
from rocmforge.tasks._flags import flagged

if TYPE_CHECKING:
    from rocmforge.plan.prepare import PreparedBuild
    from rocmforge.sources.locked import LockedBuild


def _prepare(c: Context, flags: Mapping[str, object], *,
             compile_probes: bool = True) -> tuple[PreparedBuild, LockedBuild | None]:
    """Settings from the task's table flags (plus config/, invoke.yaml, ROCMFORGE_*), gathered
    and planned; with --lock, those of the locked tree, and the lock (rocmforge.sources.locked).
    `compile_probes=False` (`invoke plan`): preflight reads the libraries but compiles nothing.
    """
    from rocmforge.plan.gather import gather_build_facts, preflight_for
    from rocmforge.plan.prepare import plan_prepared
    from rocmforge.sources.locked import locked_settings

    settings, locked = locked_settings(settings_for(c, **settings_of_flags(flags)))
    facts = gather_build_facts(settings,
                               preflight=preflight_for(settings, compile_probes=compile_probes))
    prepared = plan_prepared(settings, facts)
    if locked is not None:  # a locked plain folder must still be what was built
        locked.check_folders(prepared.extension_sources)
    return prepared, locked


def _build_command(arch: str) -> str:
    """`invoke plan …` as the build it plans: the same words, `build` for `plan`, no --json."""
    import shlex
    import sys

    argv = [a for a in sys.argv[1:] if a not in ("--json",)]
    for i, word in enumerate(argv):
        if word == "plan" or word.endswith(".plan"):
            argv[i] = word[: -len("plan")] + "build"
            return "invoke " + shlex.join(argv)
    return f"invoke build --arch {shlex.quote(arch)}"


def _resume_hint(arch: str) -> str:
    import shlex
    import sys

    argv = [a for a in sys.argv[1:] if a not in ("--dry", "-R")]
    return "run `invoke " + shlex.join(argv) + "` again" if argv else \
        f"run `invoke build --arch {shlex.quote(arch)}` again"


@flagged(BUILD_FLAGS, help={"json": "print the plan as versioned JSON (rocmforge.plan/1)"})
@reported
def plan(c: Context, json: bool = False, **flags: object) -> None:
    """Show what a build would do; nothing runs.

    Show what `invoke build` would do: resolved settings and every step, nothing run."""
    import sys

    from rocmforge.execute.states import planned_states
    from rocmforge.plan.report import (
        doctor_command,
        fact_rows,
        facts_title,
        feature_rows,
        fix_rows,
        plan_verdict,
        settings_rows,
        step_rows,
        with_features,
    )
    from rocmforge.render import emit_json, print_table, say

    # The plan lists steps; the real compile per target is left to doctor and build's preflight.
    prepared, locked = _prepare(c, flags, compile_probes=False)
    the_plan = prepared.plan
    if json:
        document = with_features(the_plan.to_json(), prepared.inputs.features)
        emit_json({**document, "lock": locked.as_dict()} if locked else document)
        return
    states = planned_states(the_plan, prepared.inputs.workdir)
    verdict = plan_verdict(the_plan, build_command=_build_command(prepared.inputs.settings.arch),
                           doctor=doctor_command(prepared.inputs.settings))
    say(verdict)
    print_table("rocmforge plan: settings", ("setting", "value"), settings_rows(the_plan))
    for key, kind, table_file in (("pytorch_facts", "PyTorch", "config/pytorch.toml"),
                                  ("rocm_facts", "ROCm", "config/rocm.toml")):
        doc = the_plan.settings.get(key)
        if isinstance(doc, dict):
            print_table(facts_title(kind, doc, table_file), ("fact", "value", "source"),
                        fact_rows(doc))
    fixes = fix_rows(the_plan)
    if fixes:
        print_table("upstream fixes (config/upstream_fixes.toml)",
                    ("fix", "commit", "verdict", "why"), fixes)
    for note in (*(locked.notes() if locked else ()), *the_plan.notes):
        say(f"note: {note}")
    print_table("steps", ("#", "step", "state", "command", "why"), step_rows(the_plan, states))
    if prepared.inputs.features is not None:
        print_table("features", ("feature", "built", "why", "variables"),
                    feature_rows(prepared.inputs.features))
    sys.stdout.flush()  # the verdict comes after the tables, also through a pipe
    say(verdict)


@flagged(BUILD_FLAGS)
@reported
def build(c: Context, verbose: bool = False, **flags: object) -> None:
    """Build PyTorch wheels for the GPU targets.

    Build PyTorch for the GPU targets: resumable; `invoke --dry build` shows every step.
    The console shows the step lines; each step's output is in <work>/logs/<step>.log."""
    from rocmforge.execute.runner import run_plan
    from rocmforge.steps import build_actions

    prepared, _ = _prepare(c, flags)
    workdir = prepared.inputs.workdir
    if not is_dry(c):
        from rocmforge.execute.lock import check_work_dir_can_be_made
        from rocmforge.sources import resolve_pytorch_ref

        check_work_dir_can_be_made(workdir.root)  # bad input here first, then the network
        # A ref the remote lacks (exit 2) or a remote out of reach (exit 3) stops here, before
        # any step runs and any stamp is touched: the next good build resumes where it was.
        # When preflight has a FAIL row its step stops the build first, with its own fixes.
        if not any(row.status == "FAIL" for row in prepared.preflight):
            resolve_pytorch_ref(prepared.settings)
        _check_companion_refs(prepared)
    else:  # the same forecast as `invoke plan`, from the same preflight rows the build has
        from rocmforge.render import say

        for note in prepared.plan.notes:
            if note.startswith("preflight"):
                say(f"note: {note}")
    results = run_plan(c, prepared.plan, workdir, actions=build_actions(prepared),
                       resume_hint=_resume_hint(prepared.settings.arch), verbose=verbose)
    if not is_dry(c):
        from rocmforge.execute.progress import step_times

        ran = sum(1 for r in results if r.status == "ran")
        total = sum(r.duration_s for r in results if r.status == "ran")
        print(f"rocmforge: {ran} step(s) ran in {total:.1f} s{step_times(results)}; "
              f"{len(results) - ran} up to date. Wheels: {workdir.dist}; each step's output: "
              f"{workdir.logs}")


def _check_companion_refs(prepared: PreparedBuild) -> None:
    """A companion at a branch or commit is paired by the version.txt its ref holds before
    torch's first step (a tag was checked by the plan); a ref it cannot read is a note."""
    if not prepared.settings.companions:
        return
    from rocmforge.knowledge.addon_table import load_addon_tables
    from rocmforge.plan.build_plan import planned_companions
    from rocmforge.plan.companion_steps import companion_choices
    from rocmforge.render import say
    from rocmforge.sources.companion_peek import (
        check_companion_refs,
        check_extension_pins,
        check_extension_targets,
    )

    tables = load_addon_tables()
    torch_version = prepared.options.pytorch_version
    choices = companion_choices(prepared.settings, tables, torch_version)
    for note in check_companion_refs(choices, torch_version, tables.companions):
        say(f"note: {note}")
    # An extension whose tree pins torch (vLLM's requirements): read at its ref, before any step.
    inputs = prepared.inputs
    planned = planned_companions(prepared.settings, prepared.options, tables,
                                 targets=inputs.target_names, facts=inputs.facts,
                                 env=dict(inputs.env),
                                 extension_sources=prepared.extension_sources)
    for note in (*check_extension_pins(planned, torch_version),
                 *check_extension_targets(planned)):
        say(f"note: {note}")
    from rocmforge.knowledge.addons import KIND_EXTENSION
    from rocmforge.plan.extensions import extension_notes

    for note in extension_notes([c for c in planned if c.kind == KIND_EXTENSION]):
        say(note)


@flagged(("work_dir",), help={
    "python": "interpreter of the environment to install into (default: the build venv)"})
@reported
def install(c: Context, python: str = "", **flags: object) -> None:
    """Install the built wheels into an environment.

    Install the wheels in dist/ into an environment (never an externally managed one)."""
    import shlex

    from rocmforge.errors import StepFailed
    from rocmforge.steps.venv import checked_venv, install_command, install_pinned_venv
    from rocmforge.workdir import workdir_for

    settings = settings_for(c, **settings_of_flags(flags))
    workdir = workdir_for(settings.work_dir)
    command = install_command(workdir, python)
    checked_venv(command.python)  # a pip.conf pip cannot parse: exit 2 before it is shown
    print("+ " + shlex.join(command.argv))
    if is_dry(c):
        return
    with holding_work_dir(settings, "install"):
        ok, said = install_pinned_venv(command, workdir.state)
    for line in said:
        print(line)
    if not ok:
        raise StepFailed(f"pip could not install {', '.join(command.wheels)} into "
                         f"{command.python}",
                         "pip's output above says why", "fix that, then run `invoke install` again")


@flagged(("work_dir",))
@reported
def clean(c: Context, all: bool = False, logs: bool = False,  # noqa: A002 - flag name
          **flags: object) -> None:
    """Remove the CMake build dir and the stamps.

    Remove what the kit built: the CMake build dir and stamps; logs/ stays unless --logs
    (--all: the whole work dir)."""
    from rocmforge.execute.clean import clean_work_dir
    from rocmforge.workdir import workdir_for

    settings = settings_for(c, **settings_of_flags(flags))
    for line in clean_work_dir(workdir_for(settings.work_dir), everything=all, dry=is_dry(c),
                               logs=logs):
        print(line)


# Tasks of this module, added to the `rocm` collection by rocmforge.tasks.
TASKS: tuple = (plan, build, install, clean)
# Sub-collections (e.g. `triton`), added by name.
COLLECTIONS: tuple = ()
