"""The parsers package: one module per message family, every module's rules in the one
assembled set, each rule id once, no module grown past a reviewable size."""

from __future__ import annotations

import importlib
import pkgutil

import rocmforge.triage.parsers as parsers
from rocmforge.triage import all_rules
from rocmforge.triage.rule import Rule

MAX_MODULE_LINES = 400


def _modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(parsers.__path__))


def test_every_family_module_is_in_the_assembled_set_whole_and_once() -> None:
    seen: list[str] = []
    for name in _modules():
        module = importlib.import_module(f"rocmforge.triage.parsers.{name}")
        rules = module.RULES
        assert rules, f"parsers/{name}.py has no RULES"
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
