"""Check `triton_targets`: the Triton in this environment can generate code for each built target.

Owns: choosing the targets (`--expect`, else the compiled list of a ROCm torch), running the kit's
Triton target probe (rocmforge/probes/triton_targets.py) in a subprocess of this interpreter
against this interpreter's own Triton, and turning its JSON into a verdict with one sub-row per
target: FAIL when any target FAILs, PASS when every target is OK (its code object's
EF_AMDGPU_MACH checked), else SKIP with the reasons. No GPU is needed: Triton compiles for a
named target. The probe reads ELF headers and the kit's arch table, so like `static` it runs in
a subprocess; when the kit's probe is not importable there, the check SKIPs saying so.
Must not: import rocmforge parts beyond rocmforge.verify, or triton, into this process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from typing import Any, TypedDict

from rocmforge.verify.checks import CheckContext, result
from rocmforge.verify.checks.arch import compiled_arch_list
from rocmforge.verify.model import CheckResult, Status

NAME = "triton_targets"

# argv[1:] are the probe's arguments. Exit 3 when the kit's probe is not importable here.
PROGRAM = (
    "import sys\n"
    "try:\n"
    "    from rocmforge.probes.triton_targets import main\n"
    "except Exception as exc:\n"
    "    print(f'kit Triton probe unavailable: {type(exc).__name__}: {exc}', file=sys.stderr)\n"
    "    sys.exit(3)\n"
    "sys.exit(main(sys.argv[1:]))\n"
)
# The probe bounds itself (its own --timeout); this is the outer guard.
PROBE_TIMEOUT_S = 180
OUTER_TIMEOUT_S = PROBE_TIMEOUT_S + 60
_DISPLAY = {"OK": Status.PASS.value, "FAIL": Status.FAIL.value, "SKIP": Status.SKIP.value}


def probe_argv(targets: list[str]) -> list[str]:
    return [sys.executable, "-c", PROGRAM, "--python", sys.executable,
            "--timeout", str(PROBE_TIMEOUT_S), *targets]


def chosen_targets(ctx: CheckContext) -> tuple[list[str], str]:
    """(targets, where they came from)."""
    if ctx.options.expect:
        return list(ctx.options.expect), "--expect"
    torch = ctx.torch
    if getattr(torch.version, "hip", None):
        compiled = [t for t in compiled_arch_list(torch) or [] if t.startswith("gfx")]
        if compiled:
            return compiled, "torch's compiled arch list"
    return [], ""


class TargetRow(TypedDict):
    """One GPU target's sub-row of the check: the probe's verdict for it."""

    name: str
    status: str
    reason: str
    seconds: float


def verdict(report: Mapping[str, object]) -> tuple[Status, str, list[TargetRow]]:
    """The check's status and reason, and the per-target rows, from the probe's JSON (an
    entry of `results` that is not an object is not a target and is left out)."""
    rows: list[TargetRow] = []
    results = report.get("results", [])
    for item in results if isinstance(results, list) else []:
        if not isinstance(item, dict):
            continue
        rows.append({"name": str(item.get("target", "")),
                     "status": _DISPLAY.get(str(item.get("status")), Status.FAIL.value),
                     "reason": str(item.get("reason", "")),
                     "seconds": float(item.get("seconds", 0.0))})
    version = report.get("triton_version") or "no triton"
    failed = [r["name"] for r in rows if r["status"] == Status.FAIL.value]
    passed = [r["name"] for r in rows if r["status"] == Status.PASS.value]
    if not rows:
        return Status.SKIP, "the probe returned no targets", rows
    if failed:
        first = next(r for r in rows if r["status"] == Status.FAIL.value)
        return (Status.FAIL, f"Triton {version} cannot generate code for {', '.join(failed)} "
                f"({first['name']}: {first['reason']})", rows)
    if len(passed) == len(rows):
        return (Status.PASS, f"Triton {version} generated code for {', '.join(passed)} "
                "(EF_AMDGPU_MACH checked)", rows)
    skipped = [r for r in rows if r["status"] == Status.SKIP.value]
    return (Status.SKIP, f"not proven for {', '.join(r['name'] for r in skipped)}: "
            f"{skipped[0]['reason']}", rows)


def run(ctx: CheckContext) -> CheckResult:
    targets, source = chosen_targets(ctx)
    if not targets:
        return result(NAME, Status.SKIP, "no GPU targets to probe: pass --expect (a CPU or CUDA "
                      "torch has no ROCm arch list)")
    argv = probe_argv(targets)
    figures: dict[str, Any] = {"targets": targets, "targets_from": source}
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=OUTER_TIMEOUT_S,
                              check=False)
    except subprocess.TimeoutExpired:
        return result(NAME, Status.FAIL, f"the Triton probe did not end within "
                      f"{OUTER_TIMEOUT_S} s", **figures)
    stderr = done.stderr.strip()
    if done.returncode == 3:
        return result(NAME, Status.SKIP, stderr.splitlines()[-1] if stderr else
                      "the kit's Triton probe is not installed in this environment", **figures)
    try:
        report = json.loads(done.stdout)
    except ValueError:
        tail = (stderr or done.stdout).strip().splitlines()[-3:]
        return result(NAME, Status.FAIL, f"the Triton probe failed (exit {done.returncode}): "
                      f"{' '.join(tail)[:600]}", **figures)
    status, reason, rows = verdict(report)
    figures.update(triton_version=report.get("triton_version", ""),
                   lld=report.get("lld", ""), lld_source=report.get("lld_source", ""),
                   probe=report, rows=rows)
    return result(NAME, status, reason, **figures)
