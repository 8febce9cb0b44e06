"""Benchmark: how long `invoke plan` and `invoke doctor` take to start and answer, warm.

Times, `--repeat` times each (interleaved, median and best reported), in the checkout this file
belongs to:
  - `python -m invoke plan --arch gfx1100` and `python -m invoke doctor --arch gfx1100`,
  - `python -m invoke --list` (the kit's collection, no task run),
  - `python -m invoke --list` on an empty task file in a temp dir: Invoke's own floor.
Each run's wall time and CPU time (user + sys of the child, from wait4) are recorded; on a
shared machine the CPU time moves less with other load than the wall time does. The load
average before and after is printed with the table.
Warm means: the files are in the page cache and the kit's modules are byte-compiled, as an
installed kit's are. Invoke never writes .pyc files itself (it sets sys.dont_write_bytecode
unless given --write-pyc) and this environment sets PYTHONDONTWRITEBYTECODE, so the kit and
Invoke are compiled once here into a cache dir (PYTHONPYCACHEPREFIX) that the runs read.
`--source` skips that: every run compiles every module it imports (a checkout never
byte-compiled).
Then one run of each task under `python -X importtime` lists the costliest imports: the
modules a task imports beyond the empty task file's, by cumulative time, with the first
rocmforge module that pulled each one in.

Before/after (`--before DIR`): another checkout, timed interleaved with this one.

Usage: python3 benchmarks/startup.py [--repeat 5] [--top 15] [--source] [--before DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TASKS = {
    "plan": ["plan", "--arch", "gfx1100"],
    "doctor": ["doctor", "--arch", "gfx1100"],
    "list": ["--list"],
}
_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)")


def child_env(root: Path, cache: Path | None) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(root), HIP_PLATFORM=os.environ.get("HIP_PLATFORM", "amd"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if cache is not None:
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def byte_compile(root: Path, cache: Path) -> None:
    """Compile the kit, Invoke and the libraries the tasks import into `cache`."""
    env = child_env(root, cache)
    null = subprocess.DEVNULL
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "rocmforge"),
                    str(root / "tasks.py")], env=env, check=True, stdout=null)  # fmt: skip
    # One run of each task with --write-pyc compiles what they import from the standard library
    # and site-packages.
    for argv in TASKS.values():
        subprocess.run([sys.executable, "-m", "invoke", "--write-pyc", *argv], env=env,
                       cwd=root, check=False, stdout=null, stderr=null)  # fmt: skip


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) for one run."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = 0  # reaped by wait4
    return wall, usage.ru_utime + usage.ru_stime


def import_costs(argv: list[str], env: dict[str, str], cwd: Path) -> dict[str, tuple[int, str]]:
    """Module -> (cumulative microseconds, the rocmforge module that imported it first)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "invoke", *argv], env=env,
                          cwd=cwd, capture_output=True, text=True, check=False)  # fmt: skip
    rows: list[tuple[int, int, str]] = []
    for line in done.stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if match:
            rows.append((int(match[2]), len(match[3]) // 2, match[4]))
    # importtime prints a module after its imports: the parent is the next row less indented.
    parents: list[int | None] = [None] * len(rows)
    stack: list[int] = []
    for index in range(len(rows) - 1, -1, -1):
        while stack and rows[stack[-1]][1] >= rows[index][1]:
            stack.pop()
        parents[index] = stack[-1] if stack else None
        stack.append(index)
    out: dict[str, tuple[int, str]] = {}
    for index, (cumulative, _, name) in enumerate(rows):
        via = ""
        parent = parents[index]
        while parent is not None:
            if rows[parent][2].startswith("rocmforge"):
                via = rows[parent][2]
            parent = parents[parent]
        out[name] = (cumulative, via)
    return out


def median_row(samples: list[tuple[float, float]]) -> dict[str, float]:
    walls = [wall for wall, _ in samples]
    return {"wall_median": statistics.median(walls), "wall_best": min(walls),
            "cpu_median": statistics.median(cpu for _, cpu in samples)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--source", action="store_true", help="no byte-compiled cache")
    parser.add_argument("--before", type=Path, default=None,
                        help="another checkout of the kit (e.g. `git worktree add DIR <commit>`), "
                        "timed interleaved with this one for a before/after table")
    parser.add_argument("--json", action="store_true", help="also print the results as JSON")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="startup-bench-"))
    try:
        roots = {"after": ROOT}
        if args.before is not None:
            roots = {"before": args.before.resolve(), "after": ROOT}
        envs = {}
        for label, root in roots.items():
            cache = None if args.source else work / f"pycache-{label}"
            envs[label] = child_env(root, cache)
            if cache is not None:
                byte_compile(root, cache)
        empty = work / "empty"
        empty.mkdir()
        (empty / "tasks.py").write_text("from invoke import task\n")
        runs: dict[str, list[tuple[float, float]]] = {}
        load_before = os.getloadavg()
        invoke = [sys.executable, "-m", "invoke"]
        for _ in range(args.repeat):
            for label, root in roots.items():
                for name, argv in TASKS.items():
                    runs.setdefault(f"{name} ({label})", []).append(
                        timed([*invoke, *argv], envs[label], root))
            runs.setdefault("empty task file", []).append(
                timed([*invoke, "--list"], envs["after"], empty))
        load_after = os.getloadavg()
        print(f"{'run':20} {'wall median':>11} {'wall best':>9} {'cpu median':>10}  "
              f"(n={args.repeat}, {'source' if args.source else 'byte-compiled'}; load "
              f"{load_before[0]:.2f} -> {load_after[0]:.2f} on {os.cpu_count()} CPUs)")  # fmt: skip
        results: dict[str, dict[str, float]] = {}
        for name in sorted(runs, key=lambda n: (n.split(" ")[0], n)):
            row = results[name] = median_row(runs[name])
            print(f"{name:20} {row['wall_median']:10.3f}s {row['wall_best']:8.3f}s "
                  f"{row['cpu_median']:9.3f}s")  # fmt: skip
        env = envs["after"]
        floor = import_costs(["--list"], env, empty)
        for name in ("plan", "doctor"):
            costs = import_costs(TASKS[name], env, ROOT)
            extra = sorted(((cost, module, via) for module, (cost, via) in costs.items()
                            if module not in floor and not module.startswith("rocmforge")),
                           reverse=True)  # fmt: skip
            ours = sorted(((cost, module) for module, (cost, _) in costs.items()
                           if module.startswith("rocmforge")), reverse=True)  # fmt: skip
            print(f"\n{name}: imports beyond Invoke's own, by cumulative time (one -X importtime "
                  "run; the times are inflated by the tracing)")  # fmt: skip
            for cost, module, via in extra[: args.top]:
                print(f"  {cost / 1000:7.1f} ms  {module:32} via {via or '(invoke)'}")
            print(f"{name}: kit modules by cumulative time")
            for cost, module in ours[: args.top]:
                print(f"  {cost / 1000:7.1f} ms  {module}")
        if args.json:
            print(json.dumps(results, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
