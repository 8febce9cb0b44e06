"""Rows of the `invoke plan` tables, computed from a Plan.

Owns: what a person sees of a plan (settings as name/value pairs, one row a step). Must not:
print (rocmforge.render does) or decide what runs (the runner's stamps give the first step to run).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import TYPE_CHECKING

from rocmforge.execute.model import Plan

if TYPE_CHECKING:
    from rocmforge.plan.features import FeaturePlan


def settings_rows(plan: Plan) -> list[tuple[str, str]]:
    """Targets, every resolved setting, and the resolved commits once a checkout exists."""
    rows = [("targets", ";".join(plan.targets))]
    for key, value in plan.settings.items():
        if key in ("origins", "sources", "companions", "rocm_facts"):
            continue
        if key == "pytorch_facts" and isinstance(value, Mapping):
            rows.append((key, _facts_summary(value)))
            continue
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items()) or "(none)"
        rows.append((key, str(value)))
    sources = _mapping(plan.settings.get("sources"))
    if sources:
        rows.append(("pytorch commit", str(_mapping(sources.get("pytorch")).get("commit", ""))))
        pin = _mapping(_mapping(sources.get("triton")).get("pin"))
        if pin:
            rows.append(("triton pin", f"{pin.get('commit', '')} ({pin.get('version') or '?'})"))
    companions = plan.settings.get("companions")
    for entry in companions if isinstance(companions, list) else []:
        choice = _mapping(entry)
        rows.append((f"companion {choice.get('name', '?')}",
                     f"skipped: {choice['skipped']}" if choice.get("skipped") else
                     f"{choice.get('ref', '')} of {choice.get('repo', '')}"
                     + (f" (needs torch {choice['requires']})" if choice.get("requires") else "")))
    return rows


def _facts_summary(doc: Mapping[str, object]) -> str:
    """The PyTorch facts in one line: the version and where each fact came from, counted (the
    whole record, thousands of characters, is in `--json` and `invoke knowledge`)."""
    facts = _mapping(doc.get("facts"))
    version = _mapping(facts.get("version"))
    origins: dict[str, int] = {}
    for fact in facts.values():
        origin = str(_mapping(fact).get("origin", "?"))
        origins[origin] = origins.get(origin, 0) + 1
    counted = ", ".join(f"{n} from {o}" for o, n in sorted(origins.items()))
    row = doc.get("table_row") or "none"
    estimate = " (an estimate until the checkout exists)" if doc.get("row_is_estimate") else ""
    return (f"PyTorch {version.get('value') or '?'}; {len(facts)} facts: {counted}; table row "
            f"{row}{estimate}; all of them: `invoke plan --json` or `invoke knowledge`")


def rocm_fact_rows(doc: Mapping[str, object]) -> list[tuple[str, str, str]]:
    """fact, value, source of a rocmforge.rocm_facts/1 document (the plan's JSON holds it)."""
    return [(str(name), str(_mapping(fact).get("value") or "unknown"),
             str(_mapping(fact).get("source", "")))
            for name, fact in _mapping(doc.get("facts")).items()]


def _mapping(value: object) -> Mapping[str, object]:
    """A nested part of the plan document ({} when it is missing or not a mapping)."""
    return value if isinstance(value, Mapping) else {}


def step_rows(plan: Plan, states: list[str]) -> list[tuple[str, str, str, str, str]]:
    """#, name, state (the runner's planned_states: done, checks, to run), the command
    (in-process steps marked [python]), why."""
    rows = []
    for index, step in enumerate(plan.steps):
        command = ("[python] " if step.kind == "python" else "") + shlex.join(step.argv)
        rows.append((str(index + 1), step.name, states[index], command, step.why))
    return rows


def feature_rows(features: FeaturePlan) -> list[tuple[str, str, str, str]]:
    """feature, on/off, why, the variables it sets (plan.features decided them)."""
    return features.table_rows()


def with_features(doc: Mapping[str, object], features: FeaturePlan | None) -> dict[str, object]:
    """The plan's JSON document with its "features" list (absent when none were planned)."""
    out = dict(doc)
    if features is not None:
        out["features"] = features.to_json()
    return out
