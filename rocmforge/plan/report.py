"""Rows of the `invoke plan` tables, computed from a Plan.

Owns: what a person sees of a plan (settings as name/value pairs, one row a step). Must not:
print (rocmforge.render does) or decide what runs (the runner's stamps give the first step to run).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import TYPE_CHECKING

from rocmforge.execute.model import Plan
from rocmforge.knowledge.steps import STEP

if TYPE_CHECKING:
    from rocmforge.plan.features import FeaturePlan
    from rocmforge.settings import Settings


def settings_rows(plan: Plan) -> list[tuple[str, str]]:
    """Targets, every resolved setting, and the resolved commits once a checkout exists."""
    rows = [("targets", ";".join(plan.targets))]
    for key, value in plan.settings.items():
        if key in ("origins", "sources", "companions", "rocm_facts", "pytorch_facts",
                   "upstream_fixes"):
            continue  # the facts have tables of their own (fact_rows)
        if key == "rocm_sdk" and isinstance(value, dict):
            from rocmforge.plan.rocm_sdk import shown

            value = shown(value)
        elif isinstance(value, dict):
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
        kind = "extension" if choice.get("kind") == "extension" else "companion"
        rows.append((f"{kind} {choice.get('name', '?')}",
                     f"skipped: {choice['skipped']}" if choice.get("skipped") else
                     f"{choice.get('ref', '') or _content(choice)} of {choice.get('repo', '')}"
                     + (f" (needs torch {choice['requires']})" if choice.get("requires") else "")))
    return rows


def _content(choice: Mapping[str, object]) -> str:
    """What a plain folder (no ref) is built at: its content digest."""
    digest = str(choice.get("digest", "") or "")
    return f"content sha256:{digest[:12]}" if digest else "?"


def facts_title(kind: str, doc: Mapping[str, object], table_file: str) -> str:
    """The title of a facts table: whose facts, and which table row stands second."""
    row = doc.get("table_row") or "(no row)"
    estimate = " (an estimate: the newest row)" if doc.get("row_is_estimate") else ""
    where = doc.get("tree") or doc.get("root") or ""
    return (f"{kind} facts{' of ' + str(where) if where else ''} (its own first, {table_file} "
            f"{row}{estimate} second)")


def fact_rows(doc: Mapping[str, object]) -> list[tuple[str, str, str]]:
    """fact, value, source of a rocmforge.pytorch_facts/1 or rocm_facts/1 document (the plan's
    JSON holds both); LoadHIP's component list is counted, not spelled out (`invoke knowledge`
    lists it)."""
    rows = []
    for name, fact in _mapping(doc.get("facts")).items():
        value = str(_mapping(fact).get("value") or "unknown")
        if name == "rocm_components" and value != "unknown":
            value = f"{len(value.split())} packages (`invoke knowledge` lists them)"
        rows.append((str(name), value, str(_mapping(fact).get("source", ""))))
    return rows


def _mapping(value: object) -> Mapping[str, object]:
    """A nested part of the plan document ({} when it is missing or not a mapping)."""
    return value if isinstance(value, Mapping) else {}


def fix_rows(plan: Plan) -> list[tuple[str, str, str, str]]:
    """fix, commit (12 digits), verdict (applies / after checkout / skipped), why: the plan's
    config/upstream_fixes.toml decisions (rocmforge.sources.upstream_fixes.as_rows)."""
    entries = plan.settings.get("upstream_fixes")
    rows = []
    for entry in entries if isinstance(entries, list) else []:
        row = _mapping(entry)
        rows.append((str(row.get("id", "")), str(row.get("sha", ""))[:12],
                     str(row.get("verdict", "")), str(row.get("reason", ""))))
    return rows


def step_rows(plan: Plan, states: list[str]) -> list[tuple[str, str, str, str, str]]:
    """#, name, state (the runner's planned_states: done, checks, to run), the command
    (in-process steps marked [python]), why."""
    rows: list[tuple[str, str, str, str, str]] = []
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


def doctor_command(settings: Settings) -> str:
    """`invoke doctor` with the flags of this build that change doctor's verdicts (the ref only
    when it is not config/defaults.toml's)."""
    from rocmforge.settings import defaults_from_config

    argv = ["invoke", "doctor"]
    if settings.arch:
        argv += ["--arch", settings.arch]
    if settings.rocm_path:
        argv += ["--rocm-path", settings.rocm_path]
    if settings.pytorch_ref and settings.pytorch_ref != defaults_from_config().get("pytorch_ref"):
        argv += ["--ref", settings.pytorch_ref]
    if settings.gcc:
        argv += ["--gcc", str(settings.gcc)]
    if settings.clang:
        argv += ["--clang", str(settings.clang)]
    if settings.allow_compiler:
        argv.append("--allow-compiler")
    if settings.work_dir != ".rocmforge":
        argv += ["--work-dir", settings.work_dir]
    if settings.companions:  # the add-ons' rows (compile job memory, FP8 formats, ...)
        argv += ["--with", ",".join(settings.companions)]
    return shlex.join(argv)


def plan_verdict(plan: Plan, *, build_command: str, doctor: str) -> str:
    """The one line to act on, which `invoke plan` prints first and last (issue 41 item 5: it
    sat at line ~88 of 232 at 80 columns): whether preflight would stop the build, and the
    command to run next."""
    stops = next((n for n in plan.notes if n.startswith("preflight would stop")), "")
    first = plan.steps[0] if plan.steps and plan.steps[0].name == STEP.preflight else None
    failing = [str(x) for x in first.inputs.get("fail_rows", ())] if first else []
    if stops and failing:
        return (f"verdict: preflight would stop this build ({len(failing)} FAIL: "
                f"{', '.join(failing)}); next: `{doctor}` shows each fix")
    if first is not None and first.inputs.get("skip") == "True":
        return ("verdict: preflight is skipped, nothing stops the build before it compiles; "
                f"next: `{build_command}`")
    if stops:  # a forecast without rows (the pip SDK is not installed yet)
        return f"verdict: {stops.split(';')[0]}; next: `{doctor}` shows each fix"
    return ("verdict: preflight finds no FAIL here (plan does not run the per-target compile "
            f"checks; the build's preflight does); next: `{build_command}`")
