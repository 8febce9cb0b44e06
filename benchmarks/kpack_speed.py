"""Benchmark: `rocmforge inspect` on a ~1 GiB kpack-split install, side by side with `cat`.

Generates (tests/kpack/make_kpack.py) an install prefix laid out as TheRock's multi-arch SDK:
`--libraries` host-only lib/libkN.so (real gcc-linked HIP libraries, `.rocm_kpack_ref` added by
objcopy, `.hip_fatbin` NOBITS) and, per library and target, `.kpack/kN_<target>.kpack` holding
`--kernels` real clang-22 code objects, each blob padded to `--blob-mib` (the bulk: ~1 GiB of
blob payload by default). Then, warm (files in the page cache), `--repeat` times each:
  - `rocmforge inspect PREFIX --expect <targets>` as a user runs it (the console script, a
    child process: interpreter start included); it must exit 0,
  - `cat <every file> > /dev/null`, the cost of any tool that reads every byte,
  - `rocmforge --version`, what starting the console script costs before any reading,
  - the reader alone: `inspect_paths(PREFIX)` timed inside its own process.
Cold, once each: every file's pages are dropped (fsync, then posix_fadvise DONTNEED, these files
only) before inspect and before cat; after inspect, `fincore` reports how many bytes of the
archives are in the page cache (what the reader touched, plus the kernel's read-ahead) against
their size: the check that blobs are not read whole.

Usage: python3 benchmarks/kpack_speed.py [--libraries 8] [--targets gfx1100,gfx1101,gfx942,gfx90a]
           [--kernels 8] [--blob-mib 4] [--repeat 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "kpack"))
import make_kpack  # noqa: E402

# The reader alone: `inspect_paths` timed inside a child (its lazy imports included).
_READER = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from rocmforge.inspect import inspect_paths\n"
    "start = time.perf_counter()\n"
    "report = inspect_paths([Path(sys.argv[1])])\n"
    "took = time.perf_counter() - start\n"
    "assert report.with_device_code and not report.failed\n"
    "print(took)\n"
)


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def _time(argv: list[str], env: dict[str, str], *, stdout: int | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=stdout or subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=False)  # fmt: skip
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{argv[:3]} exited {done.returncode}: {done.stderr[-800:]}")
    return took


def _drop(files: list[Path]) -> None:
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)  # dirty pages (a file just written) cannot be dropped
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _cached_bytes(files: list[Path]) -> int:
    done = subprocess.run(["fincore", "--bytes", "--noheadings", "--raw", "-o", "RES",
                           *map(str, files)], capture_output=True, text=True, check=True)
    return sum(int(line) for line in done.stdout.split())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--libraries", type=int, default=8)
    parser.add_argument("--targets", default="gfx1100,gfx1101,gfx942,gfx90a")
    parser.add_argument("--kernels", type=int, default=8)
    parser.add_argument("--blob-mib", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    targets = tuple(args.targets.split(","))
    with tempfile.TemporaryDirectory() as scratch:
        base = args.keep or Path(scratch)
        prefix = base / "prefix"
        if not prefix.is_dir():
            make_kpack.split_install(prefix, base / "work", libraries=args.libraries,
                                     targets=targets, kernels=args.kernels,
                                     pad_to=args.blob_mib << 20)  # fmt: skip
        files = _files(prefix)
        archives = [p for p in files if p.suffix == ".kpack"]
        total = sum(p.stat().st_size for p in files)
        launcher = base / "rocmforge"
        launcher.write_text("from rocmforge.cli import program\nprogram.run()\n")
        env = dict(os.environ, PYTHONPATH=str(REPO), HIP_PLATFORM="amd", NO_COLOR="1")
        inspect = [sys.executable, str(launcher), "inspect", str(prefix), "--expect",
                   ",".join(targets)]  # fmt: skip
        cat = ["cat", *map(str, files)]
        _time(cat, env)  # warm the cache
        _time(inspect, env)
        reader = [sys.executable, "-c", _READER, str(prefix)]
        cats, inspects, starts, reads = [], [], [], []
        for _ in range(args.repeat):  # interleaved, so all see the same machine load
            cats.append(_time(cat, env))
            inspects.append(_time(inspect, env))
            starts.append(_time([sys.executable, str(launcher), "--version"], env))
            done = subprocess.run(reader, env=env, capture_output=True, text=True, check=True)
            reads.append(float(done.stdout))
        _drop(files)
        cold = _time(inspect, env)
        touched = _cached_bytes(archives)
        _drop(files)
        cold_cat = _time(cat, env)
        archive_bytes = sum(p.stat().st_size for p in archives)
        print(f"install: {len(files)} files, {total / 2**30:.2f} GiB "
              f"({len(archives)} archives, {archive_bytes / 2**30:.2f} GiB)")
        print(f"warm, median of {args.repeat}: rocmforge inspect "
              f"{statistics.median(inspects):.3f} s (best {min(inspects):.3f}), cat "
              f"{statistics.median(cats):.3f} s (best {min(cats):.3f}); inspect/cat = "
              f"{statistics.median(inspects) / statistics.median(cats):.2f}; of which "
              f"starting the console script (`rocmforge --version`) "
              f"{statistics.median(starts):.3f} s; the reader alone (inspect_paths, "
              f"timed in its process) {statistics.median(reads):.3f} s")
        print(f"cold (these files' pages dropped): rocmforge inspect {cold:.3f} s, cat "
              f"{cold_cat:.3f} s; archive "
              f"bytes in the page cache afterwards: {touched / 2**20:.1f} MiB of "
              f"{archive_bytes / 2**20:.0f} MiB ({100 * touched / archive_bytes:.2f}%)")


if __name__ == "__main__":
    main()
