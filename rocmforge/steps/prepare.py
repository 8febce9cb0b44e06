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
from rocmforge.execute.step_inputs import PreflightInputs

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rocmforge.plan.prepare import PreflightRow, PreparedBuild


def preflight(build: PreparedBuild, ctx: ActionContext) -> Details:
    if ctx.given(PreflightInputs).skip:
        ctx.say("preflight skipped (skip_preflight / --skip-preflight)")
        return {"skipped": True}
    rows = list(build.preflight)
    for row in rows:
        ctx.say(f"{row.status:<5} {row.check}: {row.detail}")
        if row.status == "FAIL" and row.fix:
            ctx.say(f"      fix: {row.fix}")
    failed = [row for row in rows if row.status == "FAIL"]
    if failed:
        raise preflight_stop(failed, build)
    return {"rows": len(rows), "warnings": sum(1 for r in rows if r.status == "WARN")}


def preflight_stop(failed: Sequence[PreflightRow], build: PreparedBuild) -> StepFailed:
    """The end of a preflight stop: how many FAIL, the first one's fix, and how to see them all
    (each row and its fix are already printed above it; issue 41 item 4: the message repeated
    every row and every fix, 40 lines at 80 columns)."""
    from rocmforge.plan.report import doctor_command
    from rocmforge.render import count

    names = ", ".join(dict.fromkeys(row.check for row in failed))
    first = next((row for row in failed if row.fix), None)
    see_all = f"all of them with their fixes: `{doctor_command(build.inputs.settings)}`"
    return StepFailed(
        f"Preflight found {count(len(failed), 'FAIL row')} that would make the build fail: "
        f"{names}",
        "each is shown above with its fix; doctor's FAIL rows are known to end a build, "
        "often hours in",
        (f"first, {first.check}: {first.fix}; then {see_all}" if first
         else see_all[0].upper() + see_all[1:]),
    )


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
