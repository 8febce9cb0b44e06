"""Pipeline stage 1: preflight, compilers, environment.

Owns: the actions that judge the machine before anything long runs (doctor's verdicts for this
build, a FAIL stops it), record the compilers' `--version`, and write state/build-env.sh.
Must not: probe the machine again (the verdicts arrive in PreparedBuild) or decide step order.
"""

from __future__ import annotations

import shlex
import shutil
from typing import TYPE_CHECKING

from rocmforge.errors import StepFailed
from rocmforge.execute.actions import ActionContext, Details

if TYPE_CHECKING:
    from rocmforge.plan.prepare import PreparedBuild


def preflight(build: PreparedBuild, ctx: ActionContext) -> Details:
    if ctx.step.inputs.get("skip") == "True":
        ctx.say("preflight skipped (skip_preflight / --skip-preflight)")
        return {"skipped": True}
    rows = list(build.preflight)
    for row in rows:
        ctx.say(f"{row.status:<5} {row.check}: {row.detail}")
        if row.status == "FAIL" and row.fix:
            ctx.say(f"      fix: {row.fix}")
    failed = [row for row in rows if row.status == "FAIL"]
    if failed:
        raise StepFailed(
            f"Preflight found {len(failed)} problem(s) that would make the build fail: "
            + "; ".join(f"{row.check} ({row.detail})" for row in failed),
            "doctor's FAIL rows are known to end a build, often hours in",
            # A target's "compile" and "device lib" rows share one fix: say it once.
            "; ".join(dict.fromkeys(row.fix for row in failed if row.fix))
            or "run `invoke doctor` for details",
        )
    return {"rows": len(rows), "warnings": sum(1 for r in rows if r.status == "WARN")}


def compilers(build: PreparedBuild, ctx: ActionContext) -> Details:
    compilers = dict(build.inputs.compilers)
    versions: dict[str, str] = {}
    tools = {**compilers}
    for extra in ("cmake", "ninja"):
        found = shutil.which(extra)
        if found:
            tools[extra] = found
    for role, exe in sorted(tools.items()):
        code, out = ctx.capture([exe, "--version"], check=role not in ("cmake", "ninja"))
        first = next((line.strip() for line in out.splitlines() if line.strip()), "")
        versions[role] = f"{exe}: {first}" if code == 0 else f"{exe}: (--version failed)"
    return {"toolchain": versions}


def environment(build: PreparedBuild, ctx: ActionContext) -> Details:
    from rocmforge.fsutil import write_atomic

    lines = ["# Written by rocmforge: the environment of `invoke build` (source it to reproduce)."]
    lines += [f"export {k}={shlex.quote(v)}" for k, v in sorted(ctx.step.env.items())]
    path = ctx.workdir.state / "build-env.sh"
    write_atomic(path, "\n".join(lines) + "\n")
    ctx.say(f"wrote {path}")
    return {"env": dict(ctx.step.env), "env_file": str(path)}
