"""Benchmark: `invoke doctor` with the per-target compile verdicts kept in the probe store.

Times, in the checkout this file belongs to (and in `--before DIR`, another checkout, for the
same commands), each run's wall time and CPU time (user + sys of the child and the compilers it
waited for, from wait4):
  - `doctor --arch gfx1030,gfx1100` once with an empty probe store ("first": gfx1030 compiles,
    about 1.3 s with ROCm 5.2's hipcc) and then `--repeat` times with the store it filled
    ("second": gfx1030 comes from the store; gfx1100, which this ROCm has no device library
    for, is not a refusal of the target and compiles again every run);
  - the same with `--no-cache` (every compile runs, as in the build's preflight, and so does
    the compiler-cache trial when sccache or ccache is in use): serial before, side by side
    after;
  - `doctor --arch gfx942` (a target this hipcc refuses: kept, so no hipcc starts; with
    sccache, its HIP trial for gfx942 fails with clang-15 and, not being a success, runs on
    every run).
Before the "first" run the tool-output cache and the compiler-cache trial are warm (one run of
each command); only the kept compile verdicts are dropped.
Then the cost of proving a kept compile still holds: how many paths its record names and how
long re-stat'ing them takes (median of 50), and the key (the compiler chain's identities).

Usage: python3 benchmarks/doctor_cache.py [--repeat 7] [--before DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIXED = ["doctor", "--arch", "gfx1030,gfx1100"]
REFUSED = ["doctor", "--arch", "gfx942"]


def child_env(root: Path, pyc: Path, cache: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(root), HIP_PLATFORM="amd",
               PYTHONPYCACHEPREFIX=str(pyc), ROCMFORGE_CACHE_DIR=str(cache))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("ROCMFORGE_PROBE_CACHE", None)
    return env


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "invoke", *argv], env=env, cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0  # reaped by wait4
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def summary(samples: list[tuple[float, float]]) -> dict[str, float]:
    return {"wall_median": statistics.median(w for w, _ in samples),
            "wall_best": min(w for w, _ in samples),
            "cpu_median": statistics.median(c for _, c in samples), "n": len(samples)}


def forget_compiles(store: Path) -> None:
    """Drop the kept per-target compiles (records with "compiles"), keep the rest (the
    compiler-cache trial), so "first" differs from "second" by the compile verdicts only."""
    if not store.is_file():
        return
    entries = json.loads(store.read_text())
    store.write_text(json.dumps({k: v for k, v in entries.items()
                                 if "compiles" not in v.get("value", {})}))


def measure(root: Path, repeat: int, scratch: Path) -> dict[str, dict[str, float]]:
    pyc, cache = scratch / "pyc", scratch / "cache"
    env = child_env(root, pyc, cache)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "rocmforge"),
                    str(root / "tasks.py")], env=env, check=True, stdout=subprocess.DEVNULL)
    for argv in (MIXED, REFUSED):  # compiles what they import, warms the tool-output cache
        subprocess.run([sys.executable, "-m", "invoke", "--write-pyc", *argv], env=env,
                       cwd=root, check=False, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    forget_compiles(cache / "probe-results.json")
    rows = {"mixed first": summary([timed(MIXED, env, root)])}
    rows["mixed second"] = summary([timed(MIXED, env, root) for _ in range(repeat)])
    rows["mixed --no-cache"] = summary([timed([*MIXED, "--no-cache"], env, root)
                                        for _ in range(repeat)])
    rows["gfx942 (refused)"] = summary([timed(REFUSED, env, root) for _ in range(repeat)])
    return rows


def proof_cost(cache: Path) -> dict[str, float]:
    """Paths in each kept success, and the ms to re-stat them all (median of 50)."""
    sys.path.insert(0, str(ROOT))
    from rocmforge.probes import compile_probe_cache, probe_store

    entries = json.loads((cache / "probe-results.json").read_text())
    out: dict[str, float] = {}
    for entry in entries.values():
        value = entry["value"]
        if value.get("compiles") is not True or "rests_on" not in value:
            continue
        kept = probe_store.Stored(value=value, stored_at=entry["stored_at"])
        times = []
        for _ in range(50):
            start = time.perf_counter()
            assert compile_probe_cache.still_holds(kept) is not None
            times.append(time.perf_counter() - start)
        stamps = value["rests_on"]
        out = {"paths": len(stamps), "absent_paths": sum(1 for s in stamps if s[1] is None),
               "check_ms": statistics.median(times) * 1000,
               "record_bytes": len(json.dumps(value))}
    start = time.perf_counter()
    chain = compile_probe_cache.compiler_chain(
        Path("/usr/bin/hipcc"), "hipcc", rocm_root=Path("/usr"), llvm_major=15,
        environ={**os.environ, "ROCM_PATH": "/usr", "HIP_PATH": "/usr"})
    key = compile_probe_cache.compile_key(["hipcc", "--offload-arch=gfx1030"], scratch=cache,
                                          source="", env=os.environ, chain=chain,
                                          device_lib=None)
    out["key_ms"] = (time.perf_counter() - start) * 1000
    out["chain_files"] = len(chain)
    assert key
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--before", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if shutil.which("hipcc") is None:
        sys.exit("hipcc (ROCm 5.2, Debian's `hipcc` package) is needed")
    load = os.getloadavg()[0]
    sides: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="rocmforge-doctor-bench-") as tmp:
        sides["after"] = measure(ROOT, args.repeat, Path(tmp) / "after")
        proof = proof_cost(Path(tmp) / "after" / "cache")
        if args.before is not None:
            sides["before"] = measure(args.before.resolve(), args.repeat, Path(tmp) / "before")
    if args.json:
        print(json.dumps({**sides, "proof": proof, "load": [load, os.getloadavg()[0]]},
                         indent=1))
        return
    print(f"{'run':34s} {'wall median':>11s} {'wall best':>9s} {'cpu median':>10s}  "
          f"(load {load:.2f} -> {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs)")
    for side, rows in sides.items():
        for name, row in rows.items():
            print(f"{name + ' (' + side + ')':34s} {row['wall_median']:10.3f}s "
                  f"{row['wall_best']:8.3f}s {row['cpu_median']:9.3f}s  n={row['n']:.0f}")
    print(f"\nkept gfx1030 compile: {proof['paths']:.0f} paths ({proof['absent_paths']:.0f} "
          f"absent), re-stat {proof['check_ms']:.1f} ms, record {proof['record_bytes']:.0f} "
          f"bytes; key: {proof['chain_files']:.0f} chain files, {proof['key_ms']:.1f} ms")


if __name__ == "__main__":
    main()
