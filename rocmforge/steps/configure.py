"""Pipeline stage: the checks around configure (a stale CMake cache, a CPU-only configure).

Owns: the stale-check action (PYTORCH_ROCM_ARCH in build/CMakeCache.txt against the targets;
removes a stale build dir inside the work dir) and the log-check action (the configure summary
must say USE_ROCM : ON and name the requested targets). Must not: run configure itself.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from rocmforge.errors import StepFailed
from rocmforge.execute.action_args import LogCheckArgs, StaleCheckArgs
from rocmforge.execute.actions import ActionContext, Details

if TYPE_CHECKING:
    from rocmforge.plan.prepare import PreparedBuild

_ARCH_LINE = re.compile(r"^(?:--\s*)?Building PyTorch for GPU arch:\s*(.*?)\s*$", re.MULTILINE)
# Signature id in config/diagnostics.toml whose cause/fix explain a CPU-only configure.
CPU_FALLBACK_SIGNATURE = "cpu-fallback"


def stale_check(build: PreparedBuild, ctx: ActionContext) -> Details:
    from rocmforge.steps.stale import check_stale

    build_dir = Path(ctx.step.cwd) / ctx.args(StaleCheckArgs).build_dir
    verdict = check_stale(build_dir, build.inputs.target_names)
    ctx.say(verdict.reason)
    if verdict.stale:
        if not build_dir.resolve().is_relative_to(ctx.workdir.root.resolve()):
            raise StepFailed(
                f"{build_dir} is stale but outside the kit's work dir {ctx.workdir.root}",
                "the kit deletes only what it made",
                f"delete {build_dir} yourself, then run the build again",
            )
        ctx.say(f"removing the stale CMake build dir {build_dir} so configure starts clean")
        shutil.rmtree(build_dir)
    return {"stale": verdict.stale, "cached": list(verdict.cached_targets or ())}


def cpu_fallback_explanation() -> tuple[str, str]:
    """Cause and fix of the `cpu-fallback` signature in config/diagnostics.toml."""
    from rocmforge.triage.table import load_signatures

    for signature in load_signatures():
        if signature.id == CPU_FALLBACK_SIGNATURE:
            return signature.cause, signature.fix
    return ("CMake configured PyTorch without ROCm", "check ROCM_PATH with `invoke doctor`")


def log_check(build: PreparedBuild, ctx: ActionContext) -> Details:
    from rocmforge.steps.stale import split_arch_list
    from rocmforge.triage.cmake_summary import configure_reports_rocm

    which = ctx.args(LogCheckArgs).log
    log_path = ctx.workdir.logs / f"{which}.log"
    text = log_path.read_text(encoding="utf-8", errors="replace")
    verdict = configure_reports_rocm(text)
    if verdict is not True:
        cause, fix = cpu_fallback_explanation()
        shown = ("its summary says USE_ROCM is OFF" if verdict is False
                 else "it has no CMake summary with a `USE_ROCM :` line")
        raise StepFailed(
            f"The {which} log ({log_path}) shows no ROCm build: {shown}; stopping now instead "
            "of compiling a CPU-only torch",
            f"{cause} (known failure `{CPU_FALLBACK_SIGNATURE}`)",
            f"{fix}; `invoke clean` first so configure starts fresh",
        )
    archs = _ARCH_LINE.findall(text)
    if not archs:
        raise StepFailed(
            f"The {which} log ({log_path}) has no `Building PyTorch for GPU arch:` line",
            "without it there is no evidence that GPU code is built",
            "read the configure log; `invoke clean` and build again",
        )
    targets = build.inputs.target_names
    configured = split_arch_list(archs[-1])
    if targets and sorted(configured) != sorted(targets):
        raise StepFailed(
            f"Configure built for {';'.join(configured)}, but {';'.join(targets)} was requested",
            "a stale CMake cache keeps the arch list of an earlier configure",
            "run `invoke clean` and build again",
        )
    ctx.say(f"USE_ROCM : ON; GPU arch: {';'.join(configured)}")
    return {"use_rocm": "ON", "archs": list(configured)}
