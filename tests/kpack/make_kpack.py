"""Make kpack-split libraries, `.kpack` archives and wheels the way TheRock ships them.

Written from the format as upstream's code writes it (ROCm/rocm-kpack@e3483286:
python/rocm_kpack/kpack.py, compression.py, elf/kpack_transform.py; see
rocmforge/inspect/kpack.py), with our own code: real clang-22 code objects (one per target,
`--cuda-device-only --no-gpu-bundle-output`), real host libraries (clang-22 HIP object linked
by gcc, the marker added with `objcopy --add-section`, `.hip_fatbin` then turned NOBITS as
kpack's zero-paging leaves it), archives packed with `msgpack`, wheels written with zipfile and a
RECORD in hex digests. Used by tests/integration/test_inspect_kpack.py (into tmp_path) and
benchmarks/kpack_speed.py; `python3 tests/kpack/make_kpack.py OUTDIR` makes one split install
(`--help` for the options).
"""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import sys
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import msgpack

HERE = Path(__file__).resolve().parent
HIP = HERE.parent / "hip"
sys.path.insert(0, str(HIP))
from build_fixtures import make_nobits  # noqa: E402

ALIGN = 64


def _run(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True,
                          env=dict(os.environ, HIP_PLATFORM="amd"))  # fmt: skip
    if done.returncode:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")


def code_object(target: str, out: Path, source: str = "bare_add.hip") -> bytes:
    """A real AMDGPU code object for one target, compiled by clang-22."""
    _run(["clang-22", "-x", "hip", f"--offload-arch={target}", "--cuda-device-only",
          "--no-gpu-bundle-output", "-nogpulib", "-nogpuinc", "-c", str(HIP / source),
          "-o", str(out)])  # fmt: skip
    return out.read_bytes()


def marker(kernel_name: str, search_paths: Sequence[str]) -> bytes:
    return msgpack.packb({"kpack_search_paths": list(search_paths), "kernel_name": kernel_name},
                         use_bin_type=True)  # fmt: skip


def host_library(out: Path, work: Path, *, kernel_name: str, search_paths: Sequence[str],
                 fat_targets: Sequence[str] = ("gfx1100",), marker_bytes: bytes | None = None
                 ) -> Path:
    """A shared library as kpack leaves it: `.rocm_kpack_ref` added, `.hip_fatbin` NOBITS."""
    work.mkdir(parents=True, exist_ok=True)
    obj = work / f"{out.stem}.o"
    _run(["clang-22", "-x", "hip", "-nogpulib", "-nogpuinc", "-fPIC",
          *[f"--offload-arch={t}" for t in fat_targets], "-c", str(HIP / "bare_add.hip"),
          "-o", str(obj)])  # fmt: skip
    fat = work / f"{out.stem}.fat.so"
    _run(["gcc", "-shared", "-o", str(fat), str(obj)])
    section = work / f"{out.stem}.marker"
    section.write_bytes(marker_bytes if marker_bytes is not None
                        else marker(kernel_name, search_paths))  # fmt: skip
    marked = work / f"{out.stem}.marked.so"
    _run(["objcopy", "--add-section", f".rocm_kpack_ref={section}", str(fat), str(marked)])
    out.parent.mkdir(parents=True, exist_ok=True)
    make_nobits(marked, out)
    return out


def archive_bytes(group: str, arch: str, kernels: Mapping[str, bytes], *,
                  scheme: str = "none", pad_to: int = 0) -> bytes:
    """A `.kpack` archive: {binary key ("name#0"): code object} for one target.

    `pad_to`: each blob is the code object followed by filler up to this many bytes (the
    benchmark's bulk; a loader reads the code object's own ELF extent).
    """
    head_size = 16 + (-16 % ALIGN)
    payload = bytearray()
    meta: dict[str, object]
    toc: dict[str, dict[str, dict[str, object]]] = {}
    if scheme == "none":
        blobs = []
        for ordinal, (key, data) in enumerate(kernels.items()):
            blob = data + _filler(max(pad_to - len(data), 0))
            blobs.append({"offset": head_size + len(payload), "size": len(blob)})
            payload += blob
            toc[key] = {arch: {"type": "hsaco", "ordinal": ordinal, "original_size": len(data)}}
        meta = {"blobs": blobs}
    else:
        import zstandard

        payload += struct.pack("<I", len(kernels))
        for ordinal, (key, data) in enumerate(kernels.items()):
            frame = zstandard.ZstdCompressor(level=3).compress(data)
            payload += struct.pack("<I", len(frame)) + frame
            toc[key] = {arch: {"type": "hsaco", "ordinal": ordinal, "original_size": len(data)}}
        meta = {"zstd_offset": head_size, "zstd_size": len(payload)}
    toc_at = head_size + len(payload)
    document = {"format_version": 1, "group_name": group, "gfx_arch_family": arch,
                "gfx_arches": [arch], "toc": toc, "compression_scheme": scheme, **meta}
    header = struct.pack("<4sIQ", b"KPAK", 1, toc_at).ljust(head_size, b"\0")
    return header + bytes(payload) + msgpack.packb(document, use_bin_type=True)


_BLOCK = os.urandom(1 << 20)


def _filler(size: int) -> bytes:
    whole, rest = divmod(size, len(_BLOCK))
    return _BLOCK * whole + _BLOCK[:rest]


def wheel(path: Path, members: Mapping[str, bytes], *, compress: int = zipfile.ZIP_DEFLATED
          ) -> Path:
    """A wheel with a RECORD whose digests are hex (`sha256=<hexdigest>`), as TheRock's torch
    device wheels were reported to write them (not the urlsafe-base64 PEP 376/427 form)."""
    name, version = path.name.split("-")[:2]
    dist = f"{name}-{version}.dist-info"
    files = dict(members)
    files[f"{dist}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: make_kpack\nRoot-Is-Purelib: false\n"
    files[f"{dist}/METADATA"] = (f"Metadata-Version: 2.1\nName: {name}\n"
                                 f"Version: {version}\n").encode()
    record = [f"{n},sha256={hashlib.sha256(d).hexdigest()},{len(d)}" for n, d in files.items()]
    files[f"{dist}/RECORD"] = ("\n".join([*record, f"{dist}/RECORD,,"]) + "\n").encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as out:
        for member, data in files.items():
            out.writestr(member, data, compress_type=compress)
    return path


def bad_magic(data: bytes) -> bytes:
    return b"KPAX" + data[4:]


def truncated(data: bytes, keep: int = 12) -> bytes:
    """The archive cut `keep` bytes into its table of contents."""
    (toc_at,) = struct.unpack_from("<Q", data, 8)
    return data[: toc_at + keep]


def split_install(root: Path, work: Path, *, libraries: int, targets: Sequence[str],
                  kernels: int = 1, pad_to: int = 0) -> list[Path]:
    """An install prefix as TheRock lays one out: lib/libkN.so (host only) and
    .kpack/kN_<target>.kpack per target (returns every file written)."""
    work.mkdir(parents=True, exist_ok=True)
    objects = {t: code_object(t, work / f"{t}.co") for t in targets}
    written: list[Path] = []
    for index in range(libraries):
        stem = f"k{index}"
        lib = host_library(root / "lib" / f"lib{stem}.so", work / stem,
                           kernel_name=f"lib/lib{stem}.so",
                           search_paths=[f"../.kpack/{stem}_@GFXARCH@.kpack"])  # fmt: skip
        written.append(lib)
        for target in targets:
            keyed = {f"lib/lib{stem}.so#{n}": objects[target] for n in range(kernels)}
            archive = root / ".kpack" / f"{stem}_{target}.kpack"
            archive.parent.mkdir(parents=True, exist_ok=True)
            archive.write_bytes(archive_bytes(stem, target, keyed, pad_to=pad_to))
            written.append(archive)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """`make_kpack.py OUTDIR`: write one split install (two libraries, gfx1100 and gfx1101)."""
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(
        prog="make_kpack.py",
        description="Write a kpack-split install (lib/libk0.so, lib/libk1.so and their "
                    ".kpack archives for gfx1100 and gfx1101) into OUTDIR, for rocmforge's "
                    "inspect tests and benchmarks.")
    parser.add_argument("outdir", type=Path, help="the folder to write (made if missing)")
    parser.add_argument("--libraries", type=int, default=2, help="host libraries (default 2)")
    parser.add_argument("--targets", default="gfx1100,gfx1101",
                        help="comma-separated targets, one archive each per library "
                             "(default gfx1100,gfx1101)")
    args = parser.parse_args(argv)
    targets = tuple(t for t in args.targets.split(",") if t)
    if args.libraries < 1 or not targets:
        parser.error("need at least one library and one target")
    with tempfile.TemporaryDirectory() as scratch:
        split_install(args.outdir, Path(scratch), libraries=args.libraries, targets=targets)
    print(args.outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
