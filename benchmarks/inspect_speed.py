"""Benchmark: `invoke inspect`'s reader on a 1 GiB .so with 4,000 bundles of 4 targets each.

Builds two files in a temp dir (plain bundles, and CCOB v3/zstd bundles), each a tiny real .so
(gcc -shared) with a ~1 GiB `.hip_fatbin` attached by objcopy, then times:
  - the reader (`inspect_paths`, in a child process so its peak RSS is its own),
  - `roc-obj-ls -v` when installed (it cannot read CCOB; it is skipped there),
  - `cat FILE > /dev/null`, the cost of any tool that must read every byte.
The page cache is warm for all of them (the files were just written); a cold cache slows `cat`
far more than the reader, which reads ~1% of the file. Targets (issue 6): reader < 1 s on both
files and faster than `cat`; peak RSS < 200 MB.

Usage: python3 benchmarks/inspect_speed.py [--bundles 4000] [--size-gib 1] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import zstandard

from rocmforge.inspect.synthetic import ccob, code_object_header, pad_to, plain_bundle

TARGETS = (("gfx90a", 0x3F), ("gfx942", 0x4C), ("gfx1100", 0x41), ("gfx1201", 0x4E))
HOST = "host-x86_64-unknown-linux-gnu-"

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from rocmforge.inspect import inspect_paths
start = time.perf_counter()
report = inspect_paths([Path(sys.argv[1])])
elapsed = time.perf_counter() - start
(lib,) = report.libraries
print(json.dumps({"seconds": elapsed, "bundles": len(lib.bundles), "targets": lib.targets,
                  "status": lib.status, "error": lib.error,
                  "unchecked": lib.unchecked, "mismatches": len(lib.mismatches),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def make_bundle(code_object_size: int) -> bytes:
    """Host entry plus 4 code objects of random (incompressible, like machine code) bytes."""
    entries = [(HOST, b"")]
    for name, mach in TARGETS:
        header = code_object_header(mach=mach, xnack="any", sramecc="any")
        body = os.urandom(code_object_size - len(header))
        entries.append((f"hipv4-amdgcn-amd-amdhsa--{name}", header + body))
    return plain_bundle(entries)


def build_so(work: Path, name: str, bundle: bytes, count: int) -> Path:
    section = work / f"{name}.bin"
    with open(section, "wb") as out:
        for _ in range(count):
            out.write(bundle)
    src = work / "host.c"
    src.write_text("int host_function(void) { return 42; }\n")
    host = work / "libhost.so"
    if not host.exists():
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(host), str(src)], check=True)
    lib = work / f"lib{name}.so"
    subprocess.run(
        ["objcopy", "--add-section", f".hip_fatbin={section}",
         "--set-section-alignment", ".hip_fatbin=4096", str(host), str(lib)],
        check=True,
    )  # fmt: skip
    section.unlink()
    return lib


def timed(argv: list[str], timeout: int = 300) -> float | None:
    start = time.perf_counter()
    try:
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=timeout, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    return time.perf_counter() - start


def run_reader(lib: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, str(lib)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=int, default=4000)
    parser.add_argument("--size-gib", type=float, default=1.0)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="inspect-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    per_bundle = int(args.size_gib * (1 << 30)) // args.bundles
    code_object_size = per_bundle // len(TARGETS) - 4096
    plain = make_bundle(code_object_size)
    compressed = pad_to(
        ccob(plain, payload=zstandard.ZstdCompressor(level=1).compress(plain))
    )  # fmt: skip
    results = {}
    try:
        for name, bundle in (("plain", plain), ("ccob-v3-zstd", compressed)):
            lib = build_so(work, name, bundle, args.bundles)
            size = lib.stat().st_size
            cat = timed(["sh", "-c", f'cat "{lib}" > /dev/null'])
            reader = run_reader(lib)
            roc = None
            if shutil.which("roc-obj-ls") and name == "plain":
                roc = timed(["roc-obj-ls", "-v", str(lib)])
            results[name] = {
                "file_bytes": size,
                "reader": reader,
                "cat_seconds": cat,
                "roc_obj_ls_seconds": roc,
                "reader_vs_cat": (cat / reader["seconds"]) if cat else None,
            }
            line = (
                f"{name:13} {size / (1 << 30):.2f} GiB  bundles={reader['bundles']}  "
                f"reader={reader['seconds']:.3f}s  cat={cat:.3f}s  "
                f"(reader {cat / reader['seconds']:.1f}x faster)  "
                f"peak RSS={reader['peak_rss_mb']:.0f} MB  unchecked={reader['unchecked']}"
            )
            if roc is not None:
                ratio = roc / reader["seconds"]
                line += f"  roc-obj-ls={roc:.2f}s ({ratio:.2f}x the reader)"
            print(line, flush=True)
            if not args.keep:
                lib.unlink()
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
