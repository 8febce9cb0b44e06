"""The parsers package: one module per message family, every module's rules in the one
assembled set, each rule id once, no module grown past a reviewable size; step names checked
against knowledge.steps where they are written."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import rocmforge.triage.parsers as parsers
from rocmforge.triage import all_rules, explain_text
from rocmforge.triage.rule import Rule, rx, step_names

MAX_MODULE_LINES = 400


def _modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(parsers.__path__))


def test_every_family_module_is_in_the_assembled_set_whole_and_once() -> None:
    seen: list[str] = []
    for name in _modules():
        module = importlib.import_module(f"rocmforge.triage.parsers.{name}")
        rules = module.RULES  # () where every message of the family has a fixed answer
        assert all(isinstance(r, Rule) for r in rules)
        assert all(r in parsers.PARSERS for r in rules), f"parsers/{name}.py not assembled"
        seen += [r.id for r in rules]
    assert sorted(seen) == sorted(r.id for r in parsers.PARSERS)
    assert len(set(seen)) == len(seen)


def test_the_rule_set_is_the_parsers_then_the_table_built_once() -> None:
    rules = all_rules()
    assert rules is all_rules()
    assert rules[:len(parsers.PARSERS)] == parsers.PARSERS
    ids = [r.id for r in rules]
    assert len(set(ids)) == len(ids)


def test_no_family_module_is_a_dumping_ground() -> None:
    for name in _modules():
        path = parsers.__path__[0] + f"/{name}.py"
        with open(path, encoding="utf-8") as handle:
            lines = sum(1 for _ in handle)
        assert lines <= MAX_MODULE_LINES, f"parsers/{name}.py has {lines} lines: split it"


def _rule(steps: tuple[str, ...]) -> Rule:
    return Rule(id="t", klass="cmake", triggers=("x",), pattern=rx("x"),
                read=lambda m, v: None, steps=steps)


def test_a_rule_naming_no_step_kind_fails_when_it_is_made() -> None:
    assert _rule(("build", "verify")).applies_to("torchvision-build")
    assert not _rule(("verify",)).applies_to("build")
    with pytest.raises(ValueError, match=r"rule t: steps \['biuld'\] are not step kinds"):
        _rule(("biuld",))
    # An add-on's or a companion's step counts as another: a rule names that one.
    with pytest.raises(ValueError, match=r"\['companions-install'\]"):
        _rule(("companions-install",))


def test_step_names_a_reader_compares_with_are_the_registrys() -> None:
    assert step_names("install", "companions-install") == frozenset(
        {"install", "companions-install"})
    with pytest.raises(KeyError, match="instal"):
        step_names("instal")


def test_a_step_limited_rule_follows_the_step_the_log_came_from() -> None:
    line = "RuntimeError: Torch not compiled with CUDA enabled"
    assert explain_text(line, "verify").rule == "not-compiled-with-gpu"
    assert explain_text(line, "torchvision-build").rule == "not-compiled-with-gpu"
    assert explain_text(line, "configure").klass is None
    # A plan's own step name the registry does not have (the runner knows no step by name).
    assert explain_text(line, "breaks").klass is None
