"""Benchmark: failure triage time on large generated ninja logs with one OOM kill buried inside.

Writes a synthetic ninja log of about 5 MB and about 50 MB (long HIP compile command lines,
warnings, progress lines; the generator follows the idea of tests/unit/test_diagnostics.py, without
importing the tests), buries one `clang++: error: unable to execute command: Killed` at 37 % of
the file, and times what the runner does on a failed step: `rocmforge.triage.explain_file`
(streamed from disk) with the whole rule set (the parsers and config/diagnostics.toml). Checks
the buried lines are among the shown lines and that at most 30 are shown.

    python3 benchmarks/triage_large_log.py [--sizes 5,50] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rocmforge.triage import explain_file  # noqa: E402
from rocmforge.triage.engine import MAX_EVIDENCE  # noqa: E402

MIB = 1024 * 1024


def ninja_lines(target_bytes: int, error_at: float) -> Iterator[tuple[str, bool]]:
    """(line, is_buried_error) pairs of a ninja log of about `target_bytes`."""
    cmd = (
        "/opt/rocm/llvm/bin/clang++ -DUSE_ROCM -D__HIP_PLATFORM_AMD__=1 "
        + " ".join(f"-I/home/user/pytorch/third_party/dep{i}/include" for i in range(20))
        + " --offload-arch=gfx1100 --offload-arch=gfx942 -fPIC -O3 -std=c++17 -c"
    )
    size = 0
    n = 0
    buried = False
    while size < target_bytes:
        n += 1
        entry = [
            f"[{n}/60000] Building HIP object caffe2/CMakeFiles/torch_hip.dir/kernel_{n}.hip.o",
            f"{cmd} /home/user/pytorch/aten/src/ATen/native/hip/kernel_{n}.hip",
            "warning: loop not unrolled: the optimizer was unable to perform the requested "
            "transformation [-Wpass-failed=transform-warning]",
        ]
        for line in entry:
            size += len(line) + 1
            yield line, False
        if not buried and size >= target_bytes * error_at:
            buried = True
            for line in (f"FAILED: caffe2/CMakeFiles/torch_hip.dir/kernel_{n}.hip.o",
                         "clang++: error: unable to execute command: Killed"):
                size += len(line) + 1
                yield line, True
    yield "ninja: build stopped: subcommand failed.", False


def write_log(path: Path, target_bytes: int) -> list[str]:
    buried: list[str] = []
    with path.open("w", encoding="utf-8") as out:
        for line, is_buried in ninja_lines(target_bytes, error_at=0.37):
            out.write(line + "\n")
            if is_buried:
                buried.append(line)
    return buried


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5,50", help="log sizes in MiB, comma separated")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per size (median)")
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory(prefix="rocmforge-triage-") as tmp:
        for mib in (float(s) for s in args.sizes.split(",")):
            path = Path(tmp) / f"build-{mib:g}mib.log"
            buried = write_log(path, int(mib * MIB))
            times = []
            result = None
            for _ in range(args.repeat):
                start = time.perf_counter()
                result = explain_file(path, "build")
                times.append(time.perf_counter() - start)
            lines = [e.text for e in result.evidence] if result else []
            found = result is not None and all(b in lines for b in buried)
            shown = len(lines)
            ok = ok and found and shown <= MAX_EVIDENCE
            rate = path.stat().st_size / MIB / statistics.median(times)
            print(f"{path.stat().st_size / MIB:6.1f} MiB: triage {statistics.median(times):6.3f} s "
                  f"(median of {args.repeat}; {rate:5.1f} MiB/s), signature "
                  f"{result.rule if result else None}, {shown} lines shown, buried "
                  f"error {'found' if found else 'MISSING'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
