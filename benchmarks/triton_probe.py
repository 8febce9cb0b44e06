"""Benchmark: what the Triton target probe costs per target, cold and warm, and which targets each
Triton can generate code for.

cold: a probe of that one target alone, a new process with a fresh Triton cache (what a build
      pays for a single-target build): whole probe wall time, and Triton's compile time in it.
warm: the same target compiled second in one probe process (LLVM/MLIR already initialised by
      another target; still a fresh Triton cache, which the probe always uses).
all:  one probe of every target, wall time.
With several --python, also the version x target table (OK / FAIL with Triton's first error line).

    python3 benchmarks/triton_probe.py --python /venv/bin/python [--python ...] [--runs 3]
        [--targets gfx906,gfx90a,...] [--table-only]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rocmforge.knowledge.arches import load_arch_table  # noqa: E402
from rocmforge.probes.triton_targets import (  # noqa: E402
    TritonProbeReport,
    probe_triton_targets,
)

TARGETS = ("gfx906", "gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201", "gfx1250")


def timed(python: str, targets: list[str]) -> tuple[float, TritonProbeReport]:
    started = time.perf_counter()
    report = probe_triton_targets(python, targets, table=load_arch_table())
    return time.perf_counter() - started, report


def costs(python: str, targets: list[str], runs: int) -> None:
    print(f"{'target':9} {'cold wall':>10} {'cold compile':>13} {'warm compile':>13}  status")
    for target in targets:
        cold_wall, cold_compile, warm_compile = [], [], []
        status = ""
        warmup = "gfx942" if target != "gfx942" else "gfx90a"
        for _ in range(runs):
            wall, report = timed(python, [target])
            cold_wall.append(wall)
            cold_compile.append(report.results[0].seconds)
            status = report.results[0].status
            _, warm = timed(python, [warmup, target])
            warm_compile.append(warm.results[1].seconds)
        print(f"{target:9} {statistics.median(cold_wall):9.2f}s "
              f"{statistics.median(cold_compile):12.2f}s {statistics.median(warm_compile):12.2f}s"
              f"  {status}")
    walls = []
    for _ in range(runs):
        wall, report = timed(python, targets)
        walls.append(wall)
    print(f"all {len(targets)} targets in one probe: {statistics.median(walls):.2f} s wall "
          f"(median of {runs}: {', '.join(f'{w:.2f}' for w in walls)})")


def table(pythons: list[str], targets: list[str]) -> None:
    errors: dict[str, str] = {}
    print("| Triton | API | ld.lld | " + " | ".join(targets) + " |")
    print("|---" * (3 + len(targets)) + "|")
    for python in pythons:
        _, report = timed(python, targets)
        cells = []
        for result in report.results:
            cells.append(result.status)
            if result.status != "OK":
                errors.setdefault(f"{report.triton_version} {result.target}", result.reason)
        lld = report.lld_source or "in-process"
        print(f"| {report.triton_version or 'none'} | {report.api} | {lld} | "
              + " | ".join(cells) + " |")
    for key, reason in errors.items():
        print(f"  {key}: {reason[:200]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", action="append", required=True,
                        help="a Python with triton installed (repeat for the table)")
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--runs", type=int, default=3, help="repetitions (median kept)")
    parser.add_argument("--table-only", action="store_true", help="only the version x target table")
    args = parser.parse_args()
    targets = [t for t in args.targets.split(",") if t]
    for python in [] if args.table_only else args.python:
        _, report = timed(python, targets[:1])
        print(f"\n== {python}: Triton {report.triton_version or 'none'}")
        costs(python, targets, args.runs)
    if len(args.python) > 1 or args.table_only:
        print()
        table(args.python, targets)
    return 0


if __name__ == "__main__":
    sys.exit(main())
