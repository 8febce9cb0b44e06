"""In-process steps read typed inputs (execute.action_args), not argv by index (issue 42 item 5):
the plan builds the record, the step's argv is the record's (so the command line the plan shows
and the digest are what they were), and the action asks its context for the record it reads."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import pytest

from rocmforge.execute.action_args import (
    ForAddon,
    ForAddonInVenv,
    HipifyArgs,
    InVenv,
    LogCheckArgs,
    StaleCheckArgs,
    TritonArgs,
)
from rocmforge.execute.actions import ActionContext
from rocmforge.execute.model import Step
from rocmforge.execute.step_inputs import (
    AddonCheckout,
    AddonsClear,
    AddonsCollect,
    AddonsInstall,
    AddonSource,
    CompanionPairing,
    ExtensionPairing,
    FolderCopy,
    PreflightInputs,
)
from rocmforge.knowledge.steps import STEP
from rocmforge.workdir import workdir_for

ROOT = Path(__file__).resolve().parents[2]
PY = "/w/venv/bin/python"


@pytest.mark.parametrize(("args", "argv"), [
    (InVenv(action="install", python=PY), ("install", PY)),
    (TritonArgs(mode="wheel", python=PY), ("triton", "wheel", PY)),
    (ForAddon(action="companion-patches", addon="torchvision"),
     ("companion-patches", "torchvision")),
    (ForAddonInVenv(action="extension-pairing", addon="flash-attention", python=PY),
     ("extension-pairing", "flash-attention", PY)),
    (HipifyArgs(python=PY, script="tools/amd_build/build_amd.py"),
     ("hipify", PY, "tools/amd_build/build_amd.py")),
    (StaleCheckArgs(build_dir="build"), ("stale-check", "build")),
    (LogCheckArgs(log=STEP.configure), ("log-check", "configure")),
], ids=lambda v: type(v).__name__ if not isinstance(v, tuple) else "")
def test_a_step_made_from_args_has_their_argv_and_the_same_digest(args, argv) -> None:  # noqa: ANN001
    typed = Step(name=STEP.install, why="w", kind="python", args=args, cwd="/t",
                 inputs={"dist": "/w/dist"})
    plain = Step(name=STEP.install, why="w", kind="python", argv=argv, cwd="/t",
                 inputs={"dist": "/w/dist"})
    assert typed.argv == argv
    assert typed.digest() == plain.digest() and typed.to_json() == plain.to_json()
    # The runner finds the action by the record's name, which is what the argv shows first.
    assert typed.action == args.action == argv[0] == plain.action
    # Given both, they must agree.
    assert Step(name=STEP.install, why="w", kind="python", argv=argv, args=args).args == args


def test_args_that_disagree_with_argv_or_a_command_with_args_is_a_bug() -> None:
    args = InVenv(action="install", python=PY)
    with pytest.raises(ValueError, match=r"argv \('install', '/other/python'\) is not its args' "
                                         r"\('install', '/w/venv/bin/python'\)"):
        Step(name=STEP.install, why="w", kind="python", argv=("install", "/other/python"),
             args=args)
    with pytest.raises(ValueError, match="typed args are for in-process steps"):
        Step(name=STEP.install, why="w", args=args)
    with pytest.raises(ValueError, match="has neither argv nor args"):
        Step(name=STEP.install, why="w")


def test_a_command_names_no_action() -> None:
    assert Step(name=STEP.venv, why="v", argv=("python3", "-m", "venv", "/w/venv")).action == ""


def _ctx(step: Step) -> ActionContext:
    return ActionContext(step=step, workdir=workdir_for("/w"), results=(), log=io.StringIO(),
                         run_argv=None)  # type: ignore[arg-type]  # never called here


def test_an_action_gets_the_record_it_reads_and_a_wrong_one_is_a_bug() -> None:
    step = Step(name=STEP.triton, why="t", kind="python",
                args=TritonArgs(mode="source", python=PY))
    got = _ctx(step).args(TritonArgs)
    assert (got.mode, got.python) == ("source", PY)
    with pytest.raises(ValueError, match="step 'triton' carries TritonArgs, not the InVenv its "
                                         "action reads"):
        _ctx(step).args(InVenv)
    bare = Step(name=STEP.install, why="i", kind="python", argv=("install", PY))
    with pytest.raises(ValueError, match="step 'install' carries no typed args, not the InVenv"):
        _ctx(bare).args(InVenv)


def test_every_planned_step_with_inputs_carries_them_typed() -> None:
    """In each plan of the registry's tests (setup.py, scikit-build-core, the SDK with add-ons),
    an in-process step whose argv holds more than its action has typed args, and the actions
    that read args get the record they ask for."""
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "integration"))
    from test_step_registry import PLANS

    reads = {"build-requirements": InVenv, "triton-targets": InVenv, "install": InVenv,
             "rocm-sdk": InVenv, "companions-install": InVenv, "triton": TritonArgs,
             "companion-checkout": ForAddon, "extension-copy": ForAddon,
             "companion-patches": ForAddon, "companion-pairing": ForAddonInVenv,
             "extension-pairing": ForAddonInVenv, "hipify": HipifyArgs,
             "stale-check": StaleCheckArgs, "log-check": LogCheckArgs}
    seen = set()
    for make in PLANS.values():
        for step in make().steps:
            if step.kind != "python":
                assert step.args is None
                continue
            action = step.argv[0]
            if len(step.argv) > 1 or action in reads:
                assert isinstance(step.args, reads[action]), step.name
                assert step.args.argv == step.argv
                seen.add(action)
    assert seen == set(reads) - {"extension-copy"}  # bitsandbytes: a git extension


def test_no_action_reads_its_steps_argv() -> None:
    """No module of steps/ indexes, slices or unpacks `ctx.step.argv`: it reads ctx.args."""
    left = []
    for path in sorted((ROOT / "rocmforge" / "steps").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "argv" \
                    and isinstance(node.value, ast.Attribute) and node.value.attr == "step":
                left.append(f"{path.name}:{node.lineno}")
    assert left == []


def test_no_action_reads_its_steps_inputs_mapping() -> None:
    """No module of steps/ reads `ctx.step.inputs`: it asks ctx.given for its record."""
    left = []
    for path in sorted((ROOT / "rocmforge" / "steps").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "inputs" \
                    and isinstance(node.value, ast.Attribute) and node.value.attr == "step":
                left.append(f"{path.name}:{node.lineno}")
    assert left == []


def test_the_actions_each_record_names_are_the_registrys() -> None:
    """Each record's action Literal lists actions knowledge.steps has, and together with the
    fixed ones (triton, hipify, stale-check, log-check) they are the actions reading args."""
    import typing

    from rocmforge.execute import action_args
    from rocmforge.knowledge.steps import ACTIONS

    named = [typing.get_args(t) for t in (action_args.VenvAction, action_args.AddonAction,
                                           action_args.PairingAction)]
    every = {a for group in named for a in group}
    assert sum(len(group) for group in named) == len(every) == 10
    assert every <= ACTIONS
    fixed = {TritonArgs(mode="auto", python=PY).argv[0], HipifyArgs(python=PY, script="s").argv[0],
             StaleCheckArgs(build_dir="b").argv[0], LogCheckArgs(log=STEP.build).argv[0]}
    assert fixed == {"triton", "hipify", "stale-check", "log-check"} and fixed <= ACTIONS


GIT = AddonSource(repo="https://github.com/pytorch/vision.git", ref="v0.23.0")
FOLDER = AddonSource(repo="/home/u/ext", ref="", digest="ab" * 32)


@pytest.mark.parametrize(("given", "inputs"), [
    (GIT, {"repo": GIT.repo, "ref": "v0.23.0"}),
    (FOLDER, {"repo": "/home/u/ext", "ref": "", "digest": "ab" * 32}),
    (AddonCheckout(source=GIT, dest="/w/src/torchvision", mirrors=("github.com=/m",)),
     {"repo": GIT.repo, "ref": "v0.23.0", "dest": "/w/src/torchvision",
      "mirrors": ("github.com=/m",)}),
    (FolderCopy(folder="/home/u/ext", digest="ab" * 32, dest="/w/src/ext"),
     {"repo": "/home/u/ext", "ref": "", "digest": "ab" * 32, "dest": "/w/src/ext"}),
    (CompanionPairing(source=GIT, version="0.23.0", requires="==2.8.*"),
     {"repo": GIT.repo, "ref": "v0.23.0", "version": "0.23.0", "requires": "==2.8.*"}),
    (ExtensionPairing(source=FOLDER, backend="ck", processors=("gfx1100",),
                      variables=(("GPU_ARCHS", "gfx1100"), ("MAX_JOBS", "4"))),
     {"repo": "/home/u/ext", "ref": "", "digest": "ab" * 32, "torch_pin_file": "",
      "torch_pin_pattern": "", "version_file": "", "version_pattern": "", "backend": "ck",
      "module": "", "verify": "", "targets_file": "", "targets_pattern": "",
      "processors": ("gfx1100",), "reads": (), "read_vars": (),
      "variables": ("GPU_ARCHS=gfx1100", "MAX_JOBS=4")}),
    (PreflightInputs(skip=False, fail_rows=("kernels rocsparse",)),
     {"skip": "False", "fail_rows": ("kernels rocsparse",)}),
    (AddonsCollect(companions=("torchvision", "myext"), dist="/w/dist",
                   packages=("torchvision", "")),
     {"companions": ("torchvision", "myext"), "dist": "/w/dist", "packages": ("torchvision", "")}),
    (AddonsInstall(companions=("torchvision",), dist="/w/dist"),
     {"companions": ("torchvision",), "dist": "/w/dist"}),
    (AddonsClear(remove=("torchaudio",), dist="/w/dist"),
     {"remove": ("torchaudio",), "dist": "/w/dist"}),
], ids=lambda v: type(v).__name__ if not isinstance(v, dict) else "")
def test_a_step_given_typed_inputs_has_their_mapping_and_the_same_digest(given, inputs,  # noqa: ANN001
                                                                         ) -> None:
    """The inputs mapping, key for key and in the order the plan always wrote it: the digest
    and `plan --json` are what they were."""
    typed = Step(name=STEP.install, why="w", kind="python", argv=("install",), given=given)
    plain = Step(name=STEP.install, why="w", kind="python", argv=("install",), inputs=inputs)
    assert list(typed.inputs.items()) == list(inputs.items())
    assert typed.digest() == plain.digest() and typed.to_json() == plain.to_json()
    assert _ctx(typed).given(type(given)) == given


def test_typed_inputs_that_disagree_or_a_wrong_record_is_a_bug() -> None:
    with pytest.raises(ValueError, match="are not its typed inputs'"):
        Step(name=STEP.install, why="w", kind="python", argv=("install",), given=GIT,
             inputs={"repo": "elsewhere", "ref": "v0.23.0"})
    with pytest.raises(ValueError, match="typed inputs are for in-process steps"):
        Step(name=STEP.install, why="w", argv=("pip",), given=GIT)
    step = Step(name=STEP.install, why="w", kind="python", argv=("install",), given=GIT)
    with pytest.raises(ValueError, match="carries AddonSource, not the FolderCopy"):
        _ctx(step).given(FolderCopy)


def test_the_steps_that_read_inputs_carry_them_typed() -> None:
    """In the registry's plans, preflight and every add-on checkout, copy, pairing, patches,
    collect and install step has the record its action reads (companions-clear: below)."""
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "integration"))
    from test_step_registry import PLANS

    reads = {"companion-checkout": AddonCheckout, "extension-copy": FolderCopy,
             "companion-pairing": CompanionPairing, "extension-pairing": ExtensionPairing,
             "companion-patches": AddonSource, "preflight": PreflightInputs,
             "companions-collect": AddonsCollect, "companions-install": AddonsInstall}
    seen = set()
    for make in PLANS.values():
        for step in make().steps:
            if step.action in reads:
                assert isinstance(step.given, reads[step.action]), step.name
                seen.add(step.action)
            else:
                assert step.given is None, step.name
    assert seen == set(reads) - {"extension-copy"}  # bitsandbytes: a git extension


def test_companions_clear_carries_its_record() -> None:
    from rocmforge.plan.companion_steps import clear_step

    step = clear_step(("torchaudio",), workdir_for("/w"))
    assert step.given == AddonsClear(remove=("torchaudio",), dist="/w/dist")
    assert dict(step.inputs) == {"remove": ("torchaudio",), "dist": "/w/dist"}
