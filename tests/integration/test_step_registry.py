"""The one registry of steps (rocmforge.knowledge.steps) and everything that names a step by it:
the planner, the runner's action table, triage, the signature table's loader, the failure
corpus and the README's step table."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from rocmforge.errors import ConfigError
from rocmforge.knowledge import steps as registry
from rocmforge.knowledge.rocm_sdk import load_sdk_table
from rocmforge.plan.build_plan import BuildOptions, plan_build
from rocmforge.plan.rocm_sdk import sdk_plan
from rocmforge.settings import Settings
from rocmforge.triage import all_rules
from rocmforge.triage.report import STEPS, known_step
from rocmforge.triage.table import load_signatures
from rocmforge.workdir import workdir_for

ROOT = Path(__file__).resolve().parents[2]
WORK = workdir_for("/w")
# The `rocmforge` program of this checkout.
ROCMFORGE = (sys.executable, "-c", "from rocmforge.cli import program; program.run()")
SETTINGS = dict(pytorch_repo="https://github.com/pytorch/pytorch.git", pytorch_ref="v2.8.0",
                mirrors={}, triton_index="https://i/rocm{rocm}", triton_repo="", origins={},
                triton_mode="auto", skip_preflight=False, venv_system_site_packages=False,
                companions=(), companion_repos={})
FACTS = SimpleNamespace(rocm=SimpleNamespace(root=Path("/opt/rocm-6.4.1"), version="6.4.1",
                                             hip_version="6.4.43482"),
                        system=SimpleNamespace(cores=8, mem_total_gib=64.0))


def _plan(companions: tuple[str, ...] = (), sdk: bool = False, **options: object):  # noqa: ANN202
    settings = SimpleNamespace(**{**SETTINGS, "companions": companions})
    the_sdk = sdk_plan(Settings(rocm_sdk_version="7.12.0a20260202"), ["gfx1100"],
                       load_sdk_table(), None) if sdk else None
    return plan_build(settings, FACTS, ("gfx1100",), workdir=WORK,  # type: ignore[arg-type]
                      env={"PYTORCH_ROCM_ARCH": "gfx1100"}, compilers={"cc": "/usr/bin/gcc"},
                      options=BuildOptions(pytorch_version="2.8.0", **options),  # type: ignore[arg-type]
                      sdk=the_sdk)


PLANS = {
    "setup.py": lambda: _plan(build_style="setup.py"),
    "scikit-build-core": lambda: _plan(scikit_build_core=True),
    "sdk+add-ons": lambda: _plan(("torchvision", "bitsandbytes"), sdk=True),
}


def test_the_steps_triage_lacked_are_known_and_an_action_name_is_not() -> None:
    for name in ("configure-check", "build-check", "rocm-sdk", "rocm-init", "verify", ""):
        assert known_step(name), name
    assert not known_step("log-check")  # an action, not a step
    assert not known_step("confgure")
    assert "log-check" not in STEPS and "configure-check" in STEPS


def test_add_on_steps_are_families_and_hyphenated_names_belong_to_them() -> None:
    build = registry.family("build")
    assert build.name_for("flash-attention") == "flash-attention-build"
    assert registry.family("prepare").name_for("bitsandbytes", 2) == "bitsandbytes-prepare-2"
    found = registry.lookup("flash-attention-build")
    assert found is not None and (found.addon, found.kind, found.entry) == (
        "flash-attention", "build", build)
    assert known_step("flash-attention-build")  # the old pattern refused a hyphenated add-on
    assert not known_step("bitsandbytes-prepare-0") and not known_step("-build")
    with pytest.raises(ValueError):
        build.name_for("Flash Attention")
    with pytest.raises(ValueError):
        build.name_for("x", 1)


@pytest.mark.parametrize(("step", "kind"), [
    ("torchvision-build", "build"), ("flash-attention-checkout", "checkout"),
    ("torchaudio-patches", "patches"), ("companions-install", "install"),
    ("companions-collect", "collect"), ("torchvision-pairing", "torchvision-pairing"),
    ("configure-check", "configure-check"), ("build", "build"), ("no-such", "no-such")])
def test_triage_reads_a_step_as_the_registry_says(step: str, kind: str) -> None:
    assert registry.triage_kind(step) == kind


@pytest.mark.parametrize("case", sorted(PLANS))
def test_every_planned_step_is_in_the_registry_with_its_action(case: str) -> None:
    plan = PLANS[case]()
    for step in plan.steps:
        found = registry.lookup(step.name)
        assert found is not None, step.name
        if step.kind == "python":
            assert step.argv[0] in found.entry.actions, step.name
        else:
            assert found.entry.actions == (), step.name


def test_a_plan_without_the_sdk_runs_in_the_registrys_order() -> None:
    order = [s.name for s in registry.STEPS]
    for case in ("setup.py", "scikit-build-core"):
        names = [s.name for s in PLANS[case]().steps]
        assert names == sorted(names, key=order.index), case


def test_what_a_step_writes_lies_in_the_places_the_registry_names() -> None:
    places = {"tree": WORK.pytorch, "build-dir": WORK.pytorch / "build", "lock": WORK.lock_file,
              "venv": WORK.venv, "downloads": WORK.downloads, "triton-tree": WORK.triton,
              "state": WORK.state, "logs": WORK.logs, "dist": WORK.dist,
              "manifest": WORK.dist / "manifest.json"}
    seen = 0
    for step in PLANS["sdk+add-ons"]().steps:
        found = registry.lookup(step.name)
        assert found is not None
        allowed = [places[p] for p in found.entry.writes if p in places]
        if "add-on-tree" in found.entry.writes:
            allowed.append(WORK.src / found.addon)
        for path in (step.effects.writes if step.effects else ()):
            seen += 1
            assert any(Path(path).is_relative_to(place) for place in allowed), (step.name, path)
    assert seen >= 15


def test_the_planner_refuses_a_step_or_an_action_the_registry_lacks() -> None:
    registry.check_planned([("configure-check", "python", "log-check"),
                            ("torchvision-build", "run", "/w/venv/bin/python")])
    for bad, words in [(("configure-chek", "python", "log-check"), "does not list"),
                       (("configure-check", "python", "configure-check"), "runs the action"),
                       (("collect", "run", "cp"), "is a command"),
                       (("verify", "run", "python"), "does not list")]:
        with pytest.raises(ValueError, match=words):
            registry.check_planned([bad])


def test_the_runners_action_table_has_exactly_the_registrys_actions() -> None:
    from rocmforge.steps import STAGES

    assert set(STAGES) == registry.ACTIONS


def test_every_rule_names_only_steps_triage_can_match() -> None:
    for rule in all_rules():
        for name in rule.steps:
            assert registry.check_step_kind(name, where=f"rule {rule.id}") == name


def _cases() -> list[tuple[str, str]]:
    out = []
    for meta in sorted((ROOT / "tests" / "failures").rglob("*.toml")):
        match = re.search(r'^step\s*=\s*"([^"]*)"', meta.read_text(), re.MULTILINE)
        if match:
            out.append((str(meta.relative_to(ROOT)), match.group(1)))
    return out


def test_every_failure_case_names_a_step_the_kit_has() -> None:
    cases = _cases()
    assert len(cases) >= 300
    for where, name in cases:
        assert registry.check_step(name, where=where) == name


def _table(tmp_path: Path, steps: str) -> Path:
    (tmp_path / "diagnostics.toml").write_text(
        '[[signature]]\nid = "x"\nclass = "cmake"\nsubject = "cmake"\npattern = "boom"\n'
        f'cause = "c"\nfix = "f"\nsource = "o/r#1"\nsteps = {steps}\n')
    return tmp_path


@pytest.mark.parametrize(("steps", "message"), [
    ('["configure"]', ""),
    ('["configure-check", "verify"]', ""),
    ('["confgure"]', "names the step 'confgure', which the kit does not have. A rule whose "
     "steps match no step would silently never apply. Fix: use one of: preflight, compilers,"),
    ('["torchvision-build"]', "names the step 'torchvision-build', which triage reads as "
     "'build'. A rule's steps name what a step counts as, so 'torchvision-build' would never "
     "match. Fix: write 'build'."),
    ('["companions-install"]', "which triage reads as 'install'"),
    ('["log-check"]', "which the kit does not have"),
])
def test_a_signatures_steps_are_checked_when_the_table_loads(tmp_path: Path, steps: str,
                                                             message: str) -> None:
    folder = str(_table(tmp_path, steps))
    if not message:
        (entry,) = load_signatures(folder)
        assert entry.steps == tuple(re.findall(r'"([^"]+)"', steps))
        return
    with pytest.raises(ConfigError) as caught:
        load_signatures(folder)
    assert caught.value.exit_code == 2
    assert str(caught.value).startswith(f"{tmp_path}/diagnostics.toml: signature #1 (x).steps")
    assert message in str(caught.value)
    if "confgure" in steps:
        assert str(caught.value).endswith("(did you mean 'configure'?).")


def test_a_users_table_with_an_unknown_step_stops_triage_with_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "config"
    shutil.copytree(ROOT / "config", config)
    with (config / "diagnostics.toml").open("a") as table:
        table.write('\n[[signature]]\nid = "mine"\nclass = "cmake"\nsubject = "cmake"\n'
                    'pattern = "boom"\ncause = "c"\nfix = "f"\nsource = "o/r#1"\n'
                    'steps = ["cofnigure"]\n')
    log = tmp_path / "build.log"
    log.write_text("boom\n")
    env = {**os.environ, "ROCMFORGE_CONFIG_DIR": str(config), "COLUMNS": "80",
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([*ROCMFORGE, "triage", str(log)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    text = " ".join(done.stderr.split())
    assert "(mine).steps names the step 'cofnigure', which the kit does not have" in text
    assert "(did you mean 'configure'?)" in text
    assert "\n\n" not in done.stderr.strip()  # one paragraph


def test_an_unknown_step_flag_lists_the_registrys_names(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    log.write_text("nothing to see\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([*ROCMFORGE, "triage", str(log), "--step",
                           "log-check"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1
    assert ("--step 'log-check' is not one of the kit's steps (preflight, compilers, "
            in done.stderr)
    assert "configure-check" in done.stderr and "<add-on>-prepare-<n>" in done.stderr


def _readme_table() -> list[list[str]]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## What each step does, and why\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]


def test_the_readmes_step_table_is_the_registry() -> None:
    want = []
    for entry in registry.ENTRIES:
        want.append([f"`{entry.label}`", entry.stage, ", ".join(entry.reads) or "-",
                     ", ".join(entry.writes) or "-", entry.summary])
    assert _readme_table() == want


def test_stages_and_places_are_the_declared_ones() -> None:
    from typing import get_args

    assert get_args(registry.Stage) == registry.STAGE_ORDER
    stages = [s.stage for s in registry.STEPS if s.planned]
    assert len({s.name for s in registry.STEPS}) == len(registry.STEPS)
    for entry in registry.ENTRIES:
        assert set(entry.reads) | set(entry.writes) <= set(get_args(registry.Place))
    assert stages[0] == "prepare" and registry.step("verify").stage == "verify"


def test_an_action_asking_for_a_step_the_registry_lacks_is_a_bug_not_an_empty_answer() -> None:
    import io

    from rocmforge.execute.actions import ActionContext, StepResult
    from rocmforge.execute.model import Step

    ran = StepResult(name="collect", status="ran", duration_s=1.0, digest="d",
                     details={"torch": "torch-2.8.0.whl"})
    ctx = ActionContext(step=Step(name="install", argv=("install",), why="", kind="python"),
                        workdir=WORK, results=(ran,), log=io.StringIO(),
                        run_argv=None)  # type: ignore[arg-type]  # never called here
    assert ctx.details_of("collect") == {"torch": "torch-2.8.0.whl"}
    assert ctx.details_of("triton") == {}  # a step that did not run
    with pytest.raises(ValueError, match="'colect'"):
        ctx.details_of("colect")
