"""Step names are typed: the kit's code names a step through knowledge.steps (`STEP.<name>`,
`FAMILY.<suffix>.name_for(add-on)`), never as a plain string, so a typo fails at import or in
mypy instead of naming a step that matches nothing (issue 42 item 1).

The scan reads rocmforge/ with `ast` and looks where code names a step: a Step's, StepResult's
or registry entry's `name=`/`like=`, a `step=` argument, the step argument of details_of and of
the stamp functions, a comparison with a step's `.name` or a variable called step, and a
collection bound to or looped over by such a name. A string literal there that the registry
reads as a step (torchvision-build included), or an f-string ending in a family's suffix, is a
plain step name left behind."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocmforge.knowledge import steps as registry

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = ROOT / "rocmforge" / "knowledge" / "steps.py"
# Calls whose `name=` (and `like=`) is a step name.
_NAMED = {"Step", "StepResult", "StepSpec", "KnownStep"}
# Calls whose arguments include a step name.
_TAKES_STEP = {"details_of", "read_stamp", "write_stamp", "remove_stamp", "stamp_path",
               "_log_check_step", "name_for"}
_SUFFIXES = tuple(f"-{f.suffix}" for f in registry.FAMILIES) + ("-prepare-",)


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(
        func, ast.Attribute) else ""


def _stepish(node: ast.expr) -> bool:
    """`step`, `first_steps`, `KIT_EDIT_STEPS`, `step.name`, `s.name`, `result.name`."""
    if isinstance(node, ast.Name):
        return "step" in node.id.lower()
    if isinstance(node, ast.Attribute) and node.attr == "name":
        owner = node.value.value if isinstance(node.value, ast.Subscript) else node.value
        if isinstance(owner, ast.Attribute):  # plan.steps[0].name
            return owner.attr == "steps"
        return isinstance(owner, ast.Name) and (
            "step" in owner.id.lower() or owner.id in ("s", "result"))
    return False


def _plain_names(node: ast.expr) -> Iterator[ast.expr]:
    """The plain strings in `node` that name a step: a literal, or one inside a literal
    tuple, list, set or dict (keys and values), or an f-string ending in a family's suffix."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if registry.is_known(node.value):
            yield node
    elif isinstance(node, ast.JoinedStr):
        tail = node.values[-1] if node.values else None
        if isinstance(tail, ast.Constant) and str(tail.value).endswith(_SUFFIXES):
            yield node
        elif len(node.values) >= 2 and isinstance(node.values[-2], ast.Constant) \
                and str(node.values[-2].value).endswith(_SUFFIXES):
            yield node  # f"{addon}-prepare-{n}"
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        for item in node.elts:
            yield from _plain_names(item)
    elif isinstance(node, ast.Dict):
        for item in (*node.keys, *node.values):
            if item is not None:
                yield from _plain_names(item)


def plain_step_names(source: str) -> list[tuple[int, str]]:
    """(line, source text) of each plain step name where `source` names a step."""
    tree = ast.parse(source)
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            called = _call_name(node)
            for kw in node.keywords:
                if (kw.arg in ("name", "like") and called in _NAMED) \
                        or kw.arg in ("step", "step_name"):
                    found += _plain_names(kw.value)
            if called in _TAKES_STEP:
                for arg in node.args:
                    found += _plain_names(arg)
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_stepish(side) for side in sides):
                for side in sides:
                    found += _plain_names(side)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is not None and any(_stepish(t) for t in targets):
                found += _plain_names(node.value)
        elif isinstance(node, (ast.For, ast.comprehension)) and _stepish(node.target):
            found += _plain_names(node.iter)
    return sorted((n.lineno, ast.get_source_segment(source, n) or "") for n in found)


def _kit_sources() -> Iterator[Path]:
    for path in sorted((ROOT / "rocmforge").rglob("*.py")):
        if path != REGISTRY:
            yield path


def test_no_plain_step_name_is_left_in_the_kit() -> None:
    left = [f"{path.relative_to(ROOT)}:{line}: {text}"
            for path in _kit_sources()
            for line, text in plain_step_names(path.read_text(encoding="utf-8"))]
    assert left == []


PLANTED = '''
Step(name="preflight", argv=("preflight",), why="")
StepResult(name="torchvision-build", status="ran", duration_s=0.0, digest="")
ctx.details_of("collect")
ctx.details_of(f"{name}-pairing")
remove_stamp(state, "companions-install")
explain_lines(lines, step="verify")
if step.name == "patches": pass
if s.name in ("venv", "checkout"): pass
KIT_EDIT_STEPS = ("patches", "hipify")
first_steps = ["tree-facts"]
for step in ("companions-collect", "companions-install"): pass
Step(name=f"{choice.name}-prepare-{index}", argv=argv, why="")
StepSpec(name=STEP.install, like="collect")
first = plan.steps[0] if plan.steps[0].name == "preflight" else None
'''

CLEAN = '''
Step(name=STEP.preflight, argv=("preflight",), why="")
Step(name=FAMILY.build.name_for(choice.name), argv=(py, "-m", "pip", "wheel"), why="")
ctx.details_of(STEP.collect)
ctx.run([python, "-m", "pip", "install", "build"])
wheels = {"torch": a, "triton": b}
if t.name == "triton": pass
holding_work_dir(settings, "install")
InVenv(action="install", python=python)
'''


def test_the_scan_finds_each_way_of_naming_a_step_and_nothing_else() -> None:
    """The scan above cannot pass by finding nothing: every planted plain name is found, on
    its line; ordinary uses of the same words (a pip command, a wheel key, a task name, an
    action) are not."""
    found = plain_step_names(PLANTED)
    assert [line for line, _ in found] == [2, 3, 4, 5, 6, 7, 8, 9, 9, 10, 10, 11, 12, 12,
                                           13, 14, 15]
    assert found[0] == (2, '"preflight"') and (5, 'f"{name}-pairing"') in found
    assert plain_step_names(CLEAN) == []


def test_every_step_name_has_one_attribute_and_one_entry() -> None:
    """STEP spells each step of STEPS once (`-` as `_`); FAMILY holds each family once."""
    from dataclasses import asdict

    spelt = asdict(registry.STEP)
    assert list(spelt.values()) == [s.name for s in registry.STEPS]
    assert all(attr == name.replace("-", "_") for attr, name in spelt.items())
    assert [f.suffix for f in registry.FAMILIES] == list(asdict(registry.FAMILY)) == [
        "checkout", "pairing", "patches", "prepare", "build"]
    assert registry.FAMILY.prepare.name_for("bitsandbytes", 2) == "bitsandbytes-prepare-2"
    with pytest.raises(AttributeError):
        registry.STEP.prefligt  # type: ignore[attr-defined]  # noqa: B018


def test_the_action_names_are_the_actions_the_entries_name() -> None:
    """ActionName lists each action once, and exactly those the registry's entries run."""
    from typing import get_args

    named = get_args(registry.ActionName)
    assert len(named) == len(set(named)) == 24
    assert set(named) == registry.ACTIONS
