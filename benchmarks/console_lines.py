"""Measure: how many console lines a successful fixture `invoke build` prints (stdout + stderr).

Issue 18 item 3: a fixture build must print under 60 lines when it succeeds; each step's full
output belongs in its log (`<work>/logs/<step>.log`). Builds tests/fixtures/fakepytorch once in a
temp dir with the e2e test's arguments (--triton skip) and prints the counts. Needs git, clang-22.

    python3 benchmarks/console_lines.py [--show]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_build_e2e import make_fixture_repo, run_build  # noqa: E402

LIMIT = 60


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print the console output too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rocmforge-bench-") as tmp:
        repo = make_fixture_repo(Path(tmp) / "pytorch")
        done = run_build(Path(tmp) / "work", repo)
    out, err = done.stdout.splitlines(), done.stderr.splitlines()
    if args.show:
        print("\n".join(out + err))
    print(f"exit {done.returncode}; console lines: {len(out) + len(err)} "
          f"(stdout {len(out)}, stderr {len(err)}); limit {LIMIT}")
    return 0 if done.returncode == 0 and len(out) + len(err) < LIMIT else 1


if __name__ == "__main__":
    raise SystemExit(main())
