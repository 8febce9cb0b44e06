"""Benchmark: `invoke inspect`'s reader on a 1 GiB .so with 4,000 bundles of 4 targets each.

Builds three files in a work dir, each a tiny real .so (gcc -shared) with a ~1 GiB
`.hip_fatbin` of the same 4,000 bundles attached by objcopy: plain bundles; CCOB v3/zstd of
random code objects (zstd stores them as raw blocks, so decoding one is a copy); and CCOB v3/zstd
of code objects that compress about 2:1, as machine code does, at clang-offload-bundler's
default level (`ccob-v3-zstd-2to1`, about 0.5 GiB). Then times, `--repeat` times each (best and
median reported):
  - the reader (`inspect_paths`, in a child process so its peak RSS is its own; the time is
    measured inside the child around `inspect_paths`, so it includes loading pyelftools and the
    arch table but not the interpreter's start),
  - `roc-obj-ls -v` when installed (it cannot read CCOB; it is skipped there),
  - `cat FILE > /dev/null`, the cost of any tool that must read every byte.
Warm: the file is in the page cache. Cold (`--cold`): before each run the file's pages are
dropped with posix_fadvise(POSIX_FADV_DONTNEED) (this file only, no global cache drop).
Wheel (`--wheel`): a wheel built like a real ROCm torch wheel: one large library
(`--wheel-mib`, default 300 MiB) whose `.hip_fatbin` is an allocated, 4096-aligned section
between `.rodata` and `.data` (gcc `.incbin`, as a linker lays it out), holding plain bundles of
code objects made compressible (about 2:1, like machine code) so inflating is not a memcpy, next
to a few small members; deflated at level 6 as `pip wheel` does. Times `inspect_paths` on the
wheel with each installed inflater (zlib, isal, zlib-ng), `unzip -p WHEEL > /dev/null` (inflates
every member) and `cat WHEEL > /dev/null`, medians of `--repeat`, and prints the ratios.
Python modules are byte-compiled once to a cache in the work dir, as an installed kit's are
(this environment sets PYTHONDONTWRITEBYTECODE, which would charge the compile to every run).
CCOB files, two baselines: the floor, a child that only decompresses the first 8 KiB of every
bundle, starts found before its clock starts, nothing parsed (zstd decodes whole blocks of up
to 128 KiB, so this is what reaching the entry tables costs before any reading of them); and
"decompress all", every bundle decompressed whole, which is what LLVM's tools do before they
read a compressed bundle's table (the CCOB counterpart of `unzip -p`).
Deep (`--deep`): also times `inspect_paths(..., deep=True)` warm: every compressed bundle
decompressed whole and hashed, every code object cross-checked (issue 15 item 5).
Before/after (`--before DIR`): the reader of another checkout (e.g. `git worktree add DIR
<commit>`) is timed interleaved with this one's, on the same files; the run ends with a
markdown table of the warm medians and this checkout's ratios to `cat`, to decompressing (or
inflating) everything, and to the floor.
Targets (issues 6, 21; docs/decisions.md says why the CCOB one is not `cat`): plain reader
faster than `cat`; wheel inspect at most half of `unzip -p`; compressed bundles at most half of
decompressing every bundle whole and at most 1.5x the floor on the 2:1 file; peak RSS < 200 MB.

Usage: python3 benchmarks/inspect_speed.py [--bundles 4000] [--size-gib 1] [--repeat 3]
           [--cold] [--wheel] [--deep] [--keep DIR] [--before DIR]
       (--keep reuses files already built there)
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
import zipfile
from pathlib import Path

import zstandard

from rocmforge.inspect.synthetic import ccob, code_object_header, pad_to, plain_bundle

ROOT = Path(__file__).resolve().parent.parent
# Checkouts whose readers are timed: label -> root ("before" is added by --before DIR).
KITS: dict[str, Path] = {"after": ROOT}
TARGETS = (("gfx90a", 0x3F), ("gfx942", 0x4C), ("gfx1100", 0x41), ("gfx1201", 0x4E))
HOST = "host-x86_64-unknown-linux-gnu-"
# The 1 GiB files: plain bundles; CCOB v3/zstd of random code objects, which zstd stores as raw
# blocks (its first-block decode is a copy); CCOB v3/zstd of code objects that compress about
# 2:1, as machine code does, at the level clang-offload-bundler uses by default (3, set in
# `OffloadBundlerConfig::OffloadBundlerConfig`, clang/lib/Driver/OffloadBundler.cpp).
CASES = ("plain", "ccob-v3-zstd", "ccob-v3-zstd-2to1")
BUNDLER_ZSTD_LEVEL = 3

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from rocmforge.inspect import inspect_paths
deep = {"deep": True} if "deep" in sys.argv[2:] else {}
inflater = [a[9:] for a in sys.argv[2:] if a.startswith("inflater=")]
if inflater:
    deep["inflater"] = inflater[0]
start = time.perf_counter()
cpu = time.process_time()
report = inspect_paths([Path(sys.argv[1])], **deep)
lib = report.libraries[-1]
summary = {"bundles": len(lib.bundles), "targets": lib.targets, "status": lib.status,
           "error": lib.error, "unchecked": lib.unchecked, "mismatches": len(lib.mismatches)}
elapsed = time.perf_counter() - start
summary["seconds"] = elapsed
summary["cpu_seconds"] = time.process_time() - cpu
summary["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(summary))
"""

# The floor for compressed bundles: zstd decodes a frame a whole block (up to 128 KiB) at a
# time, so reaching each CCOB's entry table costs at least its first block's decode. This child
# only decompresses the first 8 KiB of every bundle (starts found before the clock starts) and
# parses nothing: no reader that reads the tables can beat it. With the argument `whole` it
# decompresses every bundle whole instead, as LLVM's readers do before they read a compressed
# bundle's table (`CompressedOffloadBundle::decompress` in clang/lib/Driver/OffloadBundler.cpp,
# called by `clang-offload-bundler -list`): the CCOB counterpart of `unzip -p`.
FLOOR = r"""
import json, mmap, struct, sys, time
import zstandard
f = open(sys.argv[1], "rb")
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
starts, at = [], m.find(b"CCOB")
while at != -1:
    starts.append((at, struct.unpack_from("<Q", m, at + 8)[0]))
    at = m.find(b"CCOB", at + starts[-1][1])
view, dctx = memoryview(m), zstandard.ZstdDecompressor()
whole = sys.argv[2:] == ["whole"]
start, cpu = time.perf_counter(), time.process_time()
for at, total in starts:
    if whole:
        dctx.decompress(view[at + 32 : at + total])
        continue
    reader = dctx.stream_reader(view[at + 32 : at + total], read_size=131075,
                                read_across_frames=False)
    reader.read(8192)
    del reader
print(json.dumps({"seconds": time.perf_counter() - start, "bundles": len(starts),
                  "cpu_seconds": time.process_time() - cpu}))
"""


def make_bundle(code_object_size: int, *, compressible: bool = False) -> bytes:
    """Host entry plus 4 code objects of random bytes (incompressible, or about 2:1)."""
    entries = [(HOST, b"")]
    # Bytes drawn from 16 values: zlib gets close to 2:1, about what it gets on machine code.
    squeeze = bytes.maketrans(bytes(range(256)), bytes(i % 16 for i in range(256)))
    for name, mach in TARGETS:
        header = code_object_header(mach=mach, xnack="any", sramecc="any")
        body = os.urandom(code_object_size - len(header))
        if compressible:
            body = body.translate(squeeze)
        entries.append((f"hipv4-amdgcn-amd-amdhsa--{name}", header + body))
    return plain_bundle(entries)


def build_so(work: Path, name: str, bundle: bytes, count: int) -> Path:
    lib = work / f"lib{name}.so"
    if lib.exists() and lib.stat().st_size >= len(bundle) * count:
        return lib  # reused (--keep)
    section = work / f"{name}.bin"
    with open(section, "wb") as out:
        for _ in range(count):
            out.write(bundle)
    src = work / "host.c"
    src.write_text("int host_function(void) { return 42; }\n")
    host = work / "libhost.so"
    if not host.exists():
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(host), str(src)], check=True)
    subprocess.run(
        ["objcopy", "--add-section", f".hip_fatbin={section}",
         "--set-section-alignment", ".hip_fatbin=4096", str(host), str(lib)],
        check=True,
    )  # fmt: skip
    section.unlink()
    return lib


def build_linked_so(work: Path, name: str, bundle: bytes, count: int) -> Path:
    """A .so whose .hip_fatbin is an allocated section placed by the linker, as in a real
    build (file offset 4096-aligned, between .rodata and .data), filled with `count` bundles."""
    lib = work / f"lib{name}.so"
    if lib.exists():
        return lib
    section = work / f"{name}.bin"
    with open(section, "wb") as out:
        for _ in range(count):
            out.write(bundle)
    src = work / f"{name}.c"
    src.write_text(
        '__asm__(".section .hip_fatbin,\\"a\\"\\n.balign 4096\\n.incbin \\"'
        + str(section) + '\\"\\n.text\\n");\n'
        "const char table[] = \"host data\";\nint host_function(void) { return table[0]; }\n"
    )
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    section.unlink()
    return lib


def build_wheel(work: Path, lib: Path) -> Path:
    wheel = work / f"torch-0.0.0+{lib.stem}-cp311-cp311-linux_x86_64.whl"
    if wheel.exists():
        return wheel
    partial = wheel.with_suffix(".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        zf.writestr("torch/__init__.py", "# torch\n" * 2000)
        zf.writestr("torch/version.py", "__version__ = '0.0.0'\n")
        zf.write(work / "libhost.so", "torch/lib/libc10.so")
        with (
            open(lib, "rb") as src,
            zf.open("torch/lib/libtorch_hip.so", "w", force_zip64=True) as dst,
        ):
            shutil.copyfileobj(src, dst, 1 << 22)
    partial.rename(wheel)
    return wheel


def build_host(work: Path) -> Path:
    host = work / "libhost.so"
    if not host.exists():
        src = work / "host.c"
        src.write_text("int host_function(void) { return 42; }\n")
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(host), str(src)], check=True)
    return host


def byte_compile_env(work: Path) -> None:
    """Let children keep .pyc files (in the work dir): an installed kit has them."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    for root in KITS.values():
        subprocess.run([sys.executable, "-c", "import rocmforge.inspect.reader, "
                        "rocmforge.inspect.report, elftools.elf.elffile, zstandard, "
                        "rocmforge.knowledge.arches"], env=kit_env(root), cwd=root,
                       check=False)  # fmt: skip


def kit_env(root: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(root))


def installed_inflaters() -> list[str]:
    """The inflaters the reader can use here; [""] (its only one) for a reader without a choice."""
    try:
        from rocmforge.inspect.member import INFLATERS
    except ImportError:
        return [""]
    found = []
    for name in INFLATERS:
        done = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True)
        if done.returncode == 0:
            found.append(name)
    return found


def measure_wheel(wheel: Path, repeat: int) -> dict:
    """Interleaved runs: cat, unzip -p, then the reader with each installed inflater."""
    inflaters = installed_inflaters()
    cats: list[float] = []
    unzips: list[float] = []
    readers: dict[str, list[dict]] = {name: [] for name in inflaters}
    timed(["cat", str(wheel)])  # warm the cache
    for _ in range(repeat):
        cats.append(timed(["sh", "-c", f'cat "{wheel}" > /dev/null']) or float("inf"))
        unzips.append(timed(["sh", "-c", f'unzip -p "{wheel}" > /dev/null']) or float("inf"))
        for name in inflaters:
            readers[name].append(run_reader(wheel, inflater=name))
        if "before" in KITS:
            readers.setdefault("before", []).append(run_reader(wheel, root=KITS["before"]))
    out: dict = {"wheel_bytes": wheel.stat().st_size, "cat_median": statistics.median(cats),
                 "unzip_p_median": statistics.median(unzips), "readers": {}}  # fmt: skip
    for name, runs in readers.items():
        seconds = [r["seconds"] for r in runs]
        out["readers"][name] = {
            "median": statistics.median(seconds), "best": min(seconds),
            "peak_rss_mb": max(r["peak_rss_mb"] for r in runs), "last": runs[-1],
        }  # fmt: skip
    return out


def drop_cache(path: Path) -> None:
    """Drop this file's pages from the page cache (no root, no global drop)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def timed_cpu(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its children) for one run."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0  # reaped by wait4
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def timed(argv: list[str], timeout: int = 300) -> float | None:
    start = time.perf_counter()
    try:
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=timeout, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    return time.perf_counter() - start


def run_reader(lib: Path, deep: bool = False, inflater: str = "", root: Path = ROOT) -> dict:
    argv = [sys.executable, "-c", CHILD, str(lib), *(["deep"] if deep else []),
            *([f"inflater={inflater}"] if inflater else [])]  # fmt: skip
    # cwd=root: `python -c` puts the working directory first on sys.path.
    done = subprocess.run(argv, capture_output=True, text=True, env=kit_env(root), cwd=root)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout)


def measure(lib: Path, repeat: int, cold: bool, deep: bool = False) -> dict:
    """Interleaved runs of cat and each kit's reader; best and median of each.

    The top-level keys describe the "after" kit (this checkout); `kits` holds every kit's.
    """
    cats: list[float] = []
    cat_cpus: list[float] = []
    readers: dict[str, list[dict]] = {label: [] for label in KITS}
    if not cold:
        timed(["cat", str(lib)])  # warm the cache
    for _ in range(repeat):
        if cold:
            drop_cache(lib)
        cat, cat_cpu = timed_cpu(["sh", "-c", f'cat "{lib}" > /dev/null'])
        cats.append(cat)
        cat_cpus.append(cat_cpu)
        for label, root in KITS.items():
            if cold:
                drop_cache(lib)
            readers[label].append(run_reader(lib, deep, root=root))
    floors, wholes = [], []
    if lib.name.startswith("libccob") and not deep:
        for _ in range(repeat):
            for mode, runs in (("first", floors), ("whole", wholes)):
                done = subprocess.run([sys.executable, "-c", FLOOR, str(lib), mode],
                                      capture_output=True, text=True, check=True)  # fmt: skip
                runs.append(json.loads(done.stdout))
    kits = {}
    for label, runs in readers.items():
        times = [r["seconds"] for r in runs]
        kits[label] = {"reader_best": min(times), "reader_median": statistics.median(times),
                       "reader_cpu_median": statistics.median(r["cpu_seconds"] for r in runs),
                       "peak_rss_mb": max(r["peak_rss_mb"] for r in runs), "last": runs[-1]}
    floor = ({"median": statistics.median(f["seconds"] for f in floors),
              "cpu_median": statistics.median(f["cpu_seconds"] for f in floors),
              "bundles": floors[-1]["bundles"]} if floors else None)  # fmt: skip
    whole = statistics.median(w["seconds"] for w in wholes) if wholes else None
    return {**kits["after"], "cat_best": min(cats), "cat_median": statistics.median(cats),
            "cat_cpu_median": statistics.median(cat_cpus), "kits": kits,
            "zstd_floor": floor, "decompress_all_median": whole}  # fmt: skip


def line(name: str, mode: str, size: int, m: dict) -> str:
    last = m["last"]
    return (
        f"{name:13} {mode:4} {size / (1 << 30):.2f} GiB bundles={last['bundles']} "
        f"status={last['status']} reader best/median={m['reader_best']:.3f}/"
        f"{m['reader_median']:.3f}s cat best/median={m['cat_best']:.3f}/{m['cat_median']:.3f}s "
        f"(cat/reader on medians {m['cat_median'] / m['reader_median']:.1f}x) "
        f"peak RSS={m['peak_rss_mb']:.0f} MB unchecked={last['unchecked']}"
        + (f" (before: median {m['kits']['before']['reader_median']:.3f}s, status "
           f"{m['kits']['before']['last']['status']})" if "before" in m["kits"] else "")
    )


def ratio_table(results: dict[str, dict]) -> list[str]:
    """Markdown rows: each warm case's medians, before and after, and after's ratios."""
    head = ["| case | cat | decompress all | first-block floor | before | after | after / cat "
            "| after / decompress all | after / floor | peak RSS | CPU: cat, before, after |",
            "|---" * 11 + "|"]  # fmt: skip
    rows = []
    for case, m in results.items():
        if case.endswith("/warm"):
            before = m["kits"].get("before", {}).get("reader_median")
            before_cpu = m["kits"].get("before", {}).get("reader_cpu_median")
            after, cat = m["reader_median"], m["cat_median"]
            whole = m.get("decompress_all_median")
            floor = (m.get("zstd_floor") or {}).get("median")
            rows.append(f"| {case[:-5]} {m['bytes'] / (1 << 30):.2f} GiB .so | {cat:.3f} s | "
                        f"{f'{whole:.3f} s' if whole else '-'} | "
                        f"{f'{floor:.3f} s' if floor else '-'} | "
                        f"{f'{before:.3f} s' if before else '-'} | {after:.3f} s | "
                        f"{after / cat:.2f}x | {f'{after / whole:.2f}x' if whole else '-'} | "
                        f"{f'{after / floor:.2f}x' if floor else '-'} | "
                        f"{m['peak_rss_mb']:.0f} MB | "
                        f"{m['cat_cpu_median']:.3f}, "
                        f"{f'{before_cpu:.3f}' if before_cpu else '-'}, "
                        f"{m['reader_cpu_median']:.3f} s |")  # fmt: skip
    wheel = results.get("wheel")
    if wheel:
        readers = {k: v for k, v in wheel["readers"].items() if k != "before"}
        name, best = min(readers.items(), key=lambda item: item[1]["median"])
        before = wheel["readers"].get("before", {}).get("median")
        cat, unzip = wheel["cat_median"], wheel["unzip_p_median"]
        rows.append(f"| wheel {wheel['wheel_bytes'] / (1 << 20):.0f} MiB ({name or 'default'}) | "
                    f"{cat:.3f} s | {unzip:.3f} s (unzip -p) | - | "
                    f"{f'{before:.3f} s' if before else '-'} | "
                    f"{best['median']:.3f} s | {best['median'] / cat:.2f}x | "
                    f"{best['median'] / unzip:.2f}x | - | {best['peak_rss_mb']:.0f} MB | - |"
                    )  # fmt: skip
    return head + rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=int, default=4000)
    parser.add_argument("--size-gib", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="also time with the file uncached")
    parser.add_argument("--wheel", action="store_true", help="also time a deflated wheel")
    parser.add_argument("--wheel-mib", type=int, default=300,
                        help="size of the wheel's large library (MiB)")
    parser.add_argument("--deep", action="store_true",
                        help="also time `inspect --deep` (every CCOB decompressed and hashed)")
    parser.add_argument("--only", choices=(*CASES, "none"), default=None)
    parser.add_argument("--keep", type=Path, default=None)
    parser.add_argument("--before", type=Path, default=None,
                        help="another checkout of the kit (e.g. `git worktree add DIR <commit>`) "
                        "whose reader is timed interleaved with this one's")
    args = parser.parse_args()
    if args.before is not None:
        KITS.clear()
        KITS.update({"before": args.before.resolve(), "after": ROOT})
    work = Path(args.keep or tempfile.mkdtemp(prefix="inspect-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    byte_compile_env(work)
    per_bundle = int(args.size_gib * (1 << 30)) // args.bundles
    code_object_size = per_bundle // len(TARGETS) - 4096
    plain = make_bundle(code_object_size)
    code_like = make_bundle(code_object_size, compressible=True)
    bundles = {
        "plain": lambda: plain,
        "ccob-v3-zstd": lambda: pad_to(
            ccob(plain, payload=zstandard.ZstdCompressor(level=1).compress(plain))),
        "ccob-v3-zstd-2to1": lambda: pad_to(ccob(code_like, level=BUNDLER_ZSTD_LEVEL)),
    }  # fmt: skip
    results: dict[str, dict] = {}
    try:
        for name in CASES:
            if args.only and args.only != name:
                continue
            bundle = bundles[name]()
            lib = build_so(work, name, bundle, args.bundles)
            size = lib.stat().st_size
            modes = ["warm", "cold"] if args.cold else ["warm"]
            if args.deep:
                modes.append("deep")
            for mode in modes:
                m = measure(lib, args.repeat, cold=mode == "cold", deep=mode == "deep")
                m["bytes"] = size
                results[f"{name}/{mode}"] = m
                print(line(name, mode, size, m), flush=True)
            if shutil.which("roc-obj-ls") and name == "plain":
                roc = timed(["roc-obj-ls", "-v", str(lib)])
                results["roc-obj-ls"] = {"seconds": roc}
                print(f"roc-obj-ls -v on {lib.name}: {roc}s", flush=True)
        if args.wheel:
            per = 256 << 10  # a bundle every 256 KiB, as in the 1 GiB files
            count = (args.wheel_mib << 20) // per
            bundle = make_bundle(per // len(TARGETS) - 4096, compressible=True)
            build_host(work)
            source = build_linked_so(work, f"wheel{args.wheel_mib}", bundle, count)
            wheel = build_wheel(work, source)
            m = measure_wheel(wheel, args.repeat)
            results["wheel"] = m
            print(f"wheel {wheel.stat().st_size / (1 << 20):.0f} MiB "
                  f"({source.stat().st_size / (1 << 20):.0f} MiB library, {count} bundles): "
                  f"cat {m['cat_median']:.3f}s, unzip -p {m['unzip_p_median']:.3f}s",
                  flush=True)  # fmt: skip
            for name, r in m["readers"].items():
                print(f"  reader [{name or 'default':15}] median {r['median']:.3f}s "
                      f"best {r['best']:.3f}s "
                      f"= {r['median'] / m['unzip_p_median']:.2f}x unzip -p, "
                      f"{r['median'] / m['cat_median']:.1f}x cat; peak RSS "
                      f"{r['peak_rss_mb']:.0f} MB; {r['last']['bundles']} bundles "
                      f"{r['last']['status']}", flush=True)  # fmt: skip
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(results, indent=2, default=str))
    load = os.getloadavg()
    print(f"\nMedians of {args.repeat} warm runs (load average {load[0]:.2f} on "
          f"{os.cpu_count()} CPUs at the end):")  # fmt: skip
    print("\n".join(ratio_table(results)))
    for case, m in results.items():
        floor = m.get("zstd_floor") if isinstance(m, dict) else None
        if floor:
            print(f"{case}: decompressing only the first 8 KiB of each of {floor['bundles']} "
                  f"bundles (no parsing) takes {floor['median']:.3f} s (CPU "
                  f"{floor['cpu_median']:.3f} s) = {floor['median'] / m['cat_median']:.2f}x cat; "
                  f"the reader is {m['reader_median'] / floor['median']:.2f}x that floor; "
                  f"decompressing every bundle whole takes {m['decompress_all_median']:.3f} s")


if __name__ == "__main__":
    main()
