"""Building offload-bundle bytes from parts, for tests, the fuzzer and the speed benchmark.

Owns: the byte layouts of plain bundles, CCOB v1/v2/v3 containers and minimal AMDGPU code-object
ELF headers, written from the same reference (rocm-arch-toolchain.md §1.2, §5.2, §5.3) the parser
reads. Real compiler output is what the tests trust; these only make shapes compilers do not
(v1, zlib, huge sections, lies). Must not: write files.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from collections.abc import Sequence

from rocmforge.inspect.bundle_records import CCOB_MAGIC, PLAIN_MAGIC


def code_object_header(*, mach: int, xnack: str = "any", sramecc: str = "any",
                       abi_version: int = 2, machine: int = 224) -> bytes:  # fmt: skip
    """A 64-byte ELF64 header of an AMDGPU code object (V4+ feature encoding)."""
    xbits = {"unsupported": 0, "any": 0x100, "off": 0x200, "on": 0x300}[xnack]
    sbits = {"unsupported": 0, "any": 0x400, "off": 0x800, "on": 0xC00}[sramecc]
    ident = b"\x7fELF" + bytes([2, 1, 1, 64, abi_version]) + bytes(7)
    rest = struct.pack("<HHIQQQIHHHHHH", 3, machine, 1, 0, 0, 0, mach | xbits | sbits,
                       64, 0, 0, 64, 0, 0)  # fmt: skip
    return ident + rest


def plain_bundle(entries: Sequence[tuple[str, bytes]], *, align: int = 4096) -> bytes:
    """A plain bundle; code objects at `align`-aligned offsets, host entries empty."""
    table = bytearray(PLAIN_MAGIC + struct.pack("<Q", len(entries)))
    sizes = [len(data) for _, data in entries]
    table_len = len(table) + sum(24 + len(name.encode()) for name, _ in entries)
    offset = -(-table_len // align) * align
    blobs = bytearray()
    offsets = []
    for (_name, data), size in zip(entries, sizes, strict=True):
        offsets.append(offset)
        if size:
            pad = (-(offset + len(data))) % align
            blobs += data + bytes(pad)
            offset += len(data) + pad
    for (name, _data), off, size in zip(entries, offsets, sizes, strict=True):
        raw = name.encode()
        table += struct.pack("<QQQ", off, size, len(raw)) + raw
    start = -(-len(table) // align) * align
    return bytes(table) + bytes(start - len(table)) + bytes(blobs)


def ccob(plain: bytes, *, version: int = 3, method: str = "zstd", level: int = 3,
         payload: bytes | None = None, total: int | None = None,
         uncompressed: int | None = None, digest: bytes | None = None) -> bytes:  # fmt: skip
    """A CCOB container around `plain` (or a given compressed `payload`); sizes can be forced.

    The header's hash is the first 8 bytes of MD5(plain), as clang writes it, unless `digest`
    forces other bytes.
    """
    if payload is None:
        if method == "zstd":
            import zstandard

            payload = zstandard.ZstdCompressor(level=level).compress(plain)
        else:
            payload = zlib.compress(plain, 6)
    code = {"zlib": 0, "zstd": 1}[method]
    size = len(plain) if uncompressed is None else uncompressed
    if digest is None:
        digest = hashlib.md5(plain, usedforsecurity=False).digest()[:8]
    if version == 1:
        header = CCOB_MAGIC + struct.pack("<HHI", 1, code, size) + digest
    elif version == 2:
        full = 24 + len(payload) if total is None else total
        header = CCOB_MAGIC + struct.pack("<HHII", 2, code, full, size) + digest
    else:
        full = 32 + len(payload) if total is None else total
        header = CCOB_MAGIC + struct.pack("<HHQQ", 3, code, full, size) + digest
    return header + payload


def pad_to(data: bytes, align: int = 4096) -> bytes:
    return data + bytes((-len(data)) % align)
