"""Fuzz the bundle parser: a seeded random mutator over real and synthetic bundles.

Seeds: the `.hip_fatbin` sections of fixtures compiled by tests/hip/build_fixtures.py (when
hipcc/clang-22 are installed) plus synthetic plain and CCOB v1/v2/v3 (zlib, zstd) bundles.
Each input goes through `walk_fatbin` twice, over a buffer (the mmap path) and over a stream
(the deflated-wheel path): neither may raise and both must find the same bundles and damage.
`parse_bundle_at` may raise only BundleFormatError. Any other exception, or a disagreement, is
a crash: printed with its seed and input, exit 1.

Usage: python3 benchmarks/fuzz_inspect.py [--count 100000] [--seed 1]
"""

from __future__ import annotations

import argparse
import io
import random
import struct
import sys
import tempfile
import time
import traceback
from pathlib import Path

from rocmforge.inspect.bundle_records import BundleFormatError, Limits
from rocmforge.inspect.bundles import parse_bundle_at, walk_fatbin
from rocmforge.inspect.byte_source import BytesSource, StreamSource
from rocmforge.inspect.elf import read_host_layout
from rocmforge.inspect.synthetic import ccob, code_object_header, pad_to, plain_bundle

LIMITS = Limits(max_table_bytes=1 << 16, check_prefix_bytes=1 << 12, max_v1_inflate=1 << 22)
MACH = {0x3F: "gfx90a", 0x30: "gfx908", 0x41: "gfx1100", 0x4C: "gfx942"}
INTERESTING = [0, 1, 0x7F, 0xFF, 2**31, 2**32 - 1, 2**63, 2**64 - 1, 4096, 24, 32]


def synthetic_seeds() -> list[bytes]:
    plain = plain_bundle(
        [
            ("host-x86_64-unknown-linux-gnu-", b""),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", code_object_header(mach=0x3F) + bytes(99)),
            ("hip-amdgcn-amd-amdhsa-gfx1100", code_object_header(mach=0x41) + bytes(99)),
        ]
    )
    seeds = [plain, pad_to(plain) + plain]
    for version in (1, 2, 3):
        for method in ("zlib", "zstd"):
            seeds.append(ccob(plain, version=version, method=method))
    return seeds


def compiled_seeds() -> list[bytes]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "hip"))
    try:
        import build_fixtures
    except ImportError:
        return []
    out: list[bytes] = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            fixtures = build_fixtures.build_all(Path(tmp))
        except RuntimeError as exc:
            print(f"fixtures not built: {exc}", file=sys.stderr)
            return []
        for fixture in fixtures.values():
            if fixture.container in ("rdc", "stripped", "wheel"):
                continue
            with open(fixture.path, "rb") as handle:
                span = read_host_layout(handle).hip_fatbin
                if span is not None and not span.nobits:
                    handle.seek(span.offset)
                    out.append(handle.read(span.size))
    return out


def mutate(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(6)
        at = rng.randrange(len(buf)) if buf else 0
        if op == 0 and buf:
            buf[at] ^= 1 << rng.randrange(8)
        elif op == 1 and buf:
            buf[at] = rng.randrange(256)
        elif op == 2 and at + 8 <= len(buf):
            struct.pack_into(
                "<Q", buf, at, rng.choice(INTERESTING + [len(buf), rng.getrandbits(64)])
            )
        elif op == 3 and at + 4 <= len(buf):
            struct.pack_into("<I", buf, at, rng.choice(INTERESTING[:6] + [len(buf)]) & 0xFFFFFFFF)
        elif op == 4:
            del buf[at : at + rng.randint(1, 4096)]
        else:
            buf[at:at] = rng.randbytes(rng.randint(1, 64))
    # Mostly keep the header in place so mutations reach deeper code.
    if rng.random() < 0.3:
        del buf[rng.randrange(len(buf) + 1) :]
    return bytes(buf)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    seeds = synthetic_seeds() + compiled_seeds()
    rng = random.Random(args.seed)
    names = MACH.get
    outcomes = {"ok": 0, "problem": 0, "format_error": 0}
    start = time.perf_counter()
    for index in range(args.count):
        data = mutate(rng, rng.choice(seeds))
        try:
            scan = walk_fatbin(BytesSource(data), len(data), names, LIMITS)
            outcomes["problem" if scan.problem else "ok"] += 1
            stream = StreamSource(io.BytesIO(data), 0, len(data))
            streamed = walk_fatbin(stream, len(data), names, LIMITS)
            if streamed != scan:
                raise AssertionError("buffer and stream walks disagree")
            try:
                parse_bundle_at(BytesSource(data), 0, len(data), names, LIMITS)
            except BundleFormatError:
                outcomes["format_error"] += 1
        except Exception:  # noqa: BLE001 - a crash is what the fuzzer looks for
            print(f"CRASH at input {index} (seed {args.seed}); input hex:\n{data.hex()}")
            traceback.print_exc()
            return 1
    elapsed = time.perf_counter() - start
    print(
        f"{args.count} inputs from {len(seeds)} seeds in {elapsed:.1f}s, no crash; "
        f"walks clean {outcomes['ok']}, walks stopped on a problem {outcomes['problem']}, "
        f"parse_bundle_at raised BundleFormatError {outcomes['format_error']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
