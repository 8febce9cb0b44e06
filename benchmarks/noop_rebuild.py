"""Benchmark: a second `invoke build` with nothing changed must run no step, in under 2 s.

Builds the fixture "pytorch" (tests/fixtures/fakepytorch) once in a temp dir, then times the
second run and reports it with the ratio to the first. Needs git and clang-22.

    python3 benchmarks/noop_rebuild.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_build_e2e import make_fixture_repo, run_build  # noqa: E402

LIMIT_S = 2.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="no-op runs to time (median kept)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rocmforge-bench-") as tmp:
        repo = make_fixture_repo(Path(tmp) / "pytorch")
        work = Path(tmp) / "work"
        start = time.perf_counter()
        first = run_build(work, repo)
        first_s = time.perf_counter() - start
        if first.returncode != 0:
            print(first.stdout[-2000:], first.stderr[-2000:], sep="\n")
            return 1
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            again = run_build(work, repo)
            times.append(time.perf_counter() - start)
            if (
                again.returncode != 0
                or "nothing to do" not in again.stdout
                or "==> [" in again.stdout
            ):
                print("the no-op rebuild ran a step or failed:\n" + again.stdout[-2000:])
                return 1
    noop = statistics.median(times)
    print(f"first build:      {first_s:6.2f} s")
    print(
        f"no-op rebuild:    {noop:6.2f} s (median of {args.runs}: "
        f"{', '.join(f'{t:.2f}' for t in times)})"
    )
    print(f"ratio noop/first: {noop / first_s:6.3f}")
    print(f"limit:            {LIMIT_S:6.2f} s -> {'PASS' if noop < LIMIT_S else 'FAIL'}")
    return 0 if noop < LIMIT_S else 1


if __name__ == "__main__":
    sys.exit(main())
