"""Check `static`: the installed torch libraries really contain code for the requested targets.

Owns: pointing the kit's offload-bundle reader (`invoke inspect`, rocmforge/inspect, issue 6) at
the installed torch's `lib/` (a kpack-split torch's archives in `torch/.kpack/` are followed by
the reader) and turning its exit status into a verdict: 0 = every requested
target present, 1 = some missing (its message lists which and where), 2 = nothing readable. The
reader needs pyelftools, which a bare verify venv may lack, so it runs in a subprocess of the
same interpreter; when the kit's inspect is not importable there, the check SKIPs saying so.
Must not: import rocmforge.inspect into this process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from rocmforge.verify.checks import CheckContext, result
from rocmforge.verify.model import CheckResult, Status

NAME = "static"

# Runs `invoke inspect` through the kit's own collection, so it works wherever the kit is
# installed (no tasks.py needed). argv[1:] are the task's arguments.
PROGRAM = (
    "import sys\n"
    "try:\n"
    "    import rocmforge.inspect  # noqa: F401\n"
    "    from invoke import Program\n"
    "    from rocmforge.tasks import ns\n"
    "except Exception as exc:\n"
    "    print(f'kit inspect unavailable: {type(exc).__name__}: {exc}', file=sys.stderr)\n"
    "    sys.exit(3)\n"
    "Program(namespace=ns, version='rocmforge').run(['invoke', 'inspect', *sys.argv[1:]])\n"
)
TIMEOUT_S = 300


def inspect_argv(lib_dir: Path, expect: tuple[str, ...]) -> list[str]:
    argv = [sys.executable, "-c", PROGRAM, str(lib_dir), "--json"]
    if expect:
        argv += ["--expect", ";".join(expect)]
    return argv


def run(ctx: CheckContext) -> CheckResult:
    torch = ctx.torch
    if not getattr(torch.version, "hip", None):
        kind = "CUDA" if getattr(torch.version, "cuda", None) else "CPU-only"
        return result(NAME, Status.SKIP,
                      f"{kind} build: no HIP fat binaries to read (static check is for ROCm)")
    if torch.__file__ is None:  # a namespace package named torch, not an installed torch
        return result(NAME, Status.FAIL, "torch has no __file__, so its lib/ cannot be found")
    lib_dir = Path(torch.__file__).resolve().parent / "lib"
    argv = inspect_argv(lib_dir, ctx.options.expect)
    figures: dict[str, Any] = {"lib_dir": str(lib_dir), "expected": list(ctx.options.expect)}
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S,
                              check=False)
    except subprocess.TimeoutExpired:
        return result(NAME, Status.FAIL, f"inspect of {lib_dir} took over {TIMEOUT_S} s",
                      **figures)
    stderr = done.stderr.strip()
    figures["exit_code"] = done.returncode
    try:
        figures["report"] = json.loads(done.stdout) if done.stdout.strip() else None
    except ValueError:
        figures["report_text"] = done.stdout[-2000:]
    if done.returncode == 3:
        return result(NAME, Status.SKIP, stderr.splitlines()[-1] if stderr else
                      "the kit's inspect is not installed in this environment", **figures)
    if done.returncode == 0:
        what = f"targets {', '.join(ctx.options.expect)} present" if ctx.options.expect else \
            "bundles readable (no --expect given)"
        return result(NAME, Status.PASS, f"{what} in {lib_dir}", **figures)
    detail = (stderr or done.stdout).strip().splitlines()
    message = " ".join(detail[-3:])[:600] if detail else f"exit {done.returncode}"
    if done.returncode == 1:
        return result(NAME, Status.FAIL, f"inspect failed: {message}", **figures)
    return result(NAME, Status.FAIL, f"inspect could not read {lib_dir}: {message}", **figures)
