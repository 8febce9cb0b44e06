"""One deflated wheel member read in a single forward pass, inflated by the fastest inflater.

A deflated member cannot be read at random: reaching a byte means inflating every byte before
it. The ELF section table that says where `.hip_fatbin` is lies at the end of the file, so
reading it first and then walking the bundles inflates the member twice. Here the member is
inflated once, front to back: while it streams by, the bundle walk starts at the first bundle
magic (as for a file whose section table is lost) and every AMDGPU code-object header is noted;
when the section table arrives at the end, the walk is kept if it is exactly the walk of
`.hip_fatbin` (it starts there, ends inside it, and found no damage inside it), and the noted
headers that lie in data sections become the raw code objects. Anything else (a rewind, damage,
bundles outside the section) answers None, and the caller reads the member the two-pass way.

Inflaters: `isal.isal_zlib`, then `zlib_ng.zlib_ng` when installed, else the standard `zlib`
(all three inflate raw deflate the same way; benchmarks/inspect_speed.py --wheel measures
them).
Owns: the forward reader, the inflater choice, and the one-pass decision.
Must not: write to disk, keep more than a window of recent blocks, or print.
"""

from __future__ import annotations

import functools
import importlib
import zipfile
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

from rocmforge.inspect.bundle_records import FatbinScan
from rocmforge.inspect.bundles import scan_raw_bytes
from rocmforge.inspect.byte_source import ByteSource
from rocmforge.inspect.elf import ELF_MAGIC, ElfReadError, read_host_layout
from rocmforge.inspect.rawcode import ELF64_LE, from_candidates, looks_like_code_object

if TYPE_CHECKING:
    from rocmforge.inspect.assembly import ReadOptions
    from rocmforge.inspect.report import LibraryReport

BLOCK = 1 << 16
_INPUT = 1 << 15  # compressed bytes fed per call: each call's output stays small
INFLATERS = ("isal.isal_zlib", "zlib_ng.zlib_ng", "zlib")


class Rewind(Exception):
    """A read before the window of recent blocks: the one-pass reading cannot answer it."""


@functools.cache
def inflater(name: str = "") -> ModuleType:
    """The inflater module named, or the first of INFLATERS that imports."""
    for candidate in (name,) if name else INFLATERS:
        try:
            return importlib.import_module(candidate)
        except ImportError:
            continue
    return zlib


class ForwardMember:
    """Raw-deflate bytes inflated front to back, with a window of the last blocks.

    A ByteSource (`read_at`) and a read-only file object (`read`/`seek`/`tell`) over the
    inflated member; block 0 (the ELF and program headers) is kept for the whole pass. Every
    AMDGPU code-object header that streams by is noted in `candidates` (file offset, 64 bytes).
    A read behind the window (pyelftools reads `.gnu.hash` near the start after the section
    table at the end) inflates again from the start up to that block, at most twice; the
    blocks read last (the section table) stay in the window meanwhile.
    """

    def __init__(
        self,
        compressed: ByteSource,
        compressed_size: int,
        size: int,
        *,
        module: ModuleType,
        window: int = 256,
    ) -> None:
        self._comp = compressed
        self._comp_size = compressed_size
        self._in = 0
        self._inflate = module.decompressobj(-15)
        self._error: type[Exception] = getattr(module, "error", zlib.error)
        self._crc32 = getattr(module, "crc32", zlib.crc32)
        self.crc = 0
        self.produced = 0
        self._size = size
        self._window = window
        self._module = module
        self._done = 0  # blocks produced (checksummed, noted) in the first pass
        self._eof = False
        self._restarts = 0
        self.gave_up = False
        self._blocks: OrderedDict[int, bytes] = OrderedDict()
        self._first = b""
        self._pending = bytearray()
        self._next = 0  # index of the next block to inflate
        self._pos = 0
        self._prev = b""  # the block before the newest, scanned once the newest arrives
        self.candidates: list[tuple[int, bytes]] = []

    # -- inflating ------------------------------------------------------------------------------

    def _produce(self) -> bytes:
        """Inflate the next block (the last one may be short; b"" past the end)."""
        while len(self._pending) < BLOCK and not self._inflate.eof:
            if not self._inflate_more():
                break
        block = bytes(self._pending[:BLOCK])
        del self._pending[:BLOCK]
        index = self._next
        self._next += 1
        if index == self._done:  # first time through: checksum and note it
            self._done += 1
            self.crc = self._crc32(block, self.crc)
            self.produced += len(block)
            self._note(index, block)
            if self.produced >= self._size:
                self._drain()
        if index == 0:
            self._first = block
        self._blocks[index] = block
        self._blocks.move_to_end(index)
        while len(self._blocks) > self._window:
            self._blocks.popitem(last=False)
        return block

    def _drain(self) -> None:
        """After the last byte: the stream must end here (what is left inflates to nothing)."""
        while not self._inflate.eof:
            if not self._inflate_more():
                break
        self._eof = self._inflate.eof and not self._pending

    def _inflate_more(self) -> bool:
        """Read the next piece of the compressed member and inflate it onto what is pending;
        False at the member's end."""
        data = self._comp.read_at(self._in, min(_INPUT, self._comp_size - self._in))
        if not data:
            return False
        self._in += len(data)
        try:
            self._pending += self._inflate.decompress(data)
        except self._error as exc:
            raise zipfile.BadZipFile(f"the deflate stream is damaged ({exc})") from None
        return True

    def _restart(self, index: int) -> None:
        """Inflate again from the start (a read behind the window)."""
        self._restarts += 1
        if self._restarts > 2:
            self.gave_up = True  # pyelftools turns the exception into its own: remember it
            raise Rewind(f"block {index} is behind the window a third time")
        self._inflate = self._module.decompressobj(-15)
        self._in = 0
        self._next = 0
        self._pending = bytearray()

    def _note(self, index: int, block: bytes) -> None:
        """Note code-object headers in the previous block (its last ones reach into this one)."""
        prev, self._prev = self._prev, block
        if not prev:
            return
        base = (index - 1) * BLOCK
        at = prev.find(ELF64_LE)
        while at >= 0:
            header = prev[at : at + 64]
            if len(header) < 64:
                header += block[: 64 - len(header)]
            if looks_like_code_object(header):
                self.candidates.append((base + at, header))
            at = prev.find(ELF64_LE, at + 1)
        # A magic split across the two blocks.
        seam = prev[-(len(ELF64_LE) - 1) :] + block[: len(ELF64_LE) - 1]
        split = seam.find(ELF64_LE)
        if split >= 0:
            start = len(prev) - (len(ELF64_LE) - 1) + split
            header = prev[start:] + block[: 64 - (len(prev) - start)]
            if looks_like_code_object(header):
                self.candidates.append((base + start, header))

    def finish(self, expected_crc: int) -> None:
        """Inflate to the end (every candidate noted); the member must be whole and intact."""
        while self._done * BLOCK < self._size:
            if not self._block(self._done):
                break
        self._note(self._done, b"")
        if self.produced != self._size or not self._eof:
            raise zipfile.BadZipFile(
                f"the member inflates to {self.produced + len(self._pending)} bytes, its "
                f"header says {self._size}"
            )
        if self.crc != expected_crc:
            raise zipfile.BadZipFile(f"Bad CRC-32 (got {self.crc:08x}, want {expected_crc:08x})")

    def _block(self, index: int) -> bytes:
        if index == 0 and self._first:
            return self._first
        block = self._blocks.get(index)
        if block is not None:
            return block
        if index < self._next:
            self._restart(index)
        produced = b""
        while self._next <= index:
            produced = self._produce()
            if not produced:
                return b""
        return produced

    # -- ByteSource and file object ---------------------------------------------------------------

    def read_at(self, offset: int, size: int) -> bytes:
        if offset < 0 or size <= 0 or offset >= self._size:
            return b""
        index, within = divmod(offset, BLOCK)
        if within + size <= BLOCK:  # the usual small read (pyelftools): one block
            return self._block(index)[within : within + size]
        end = min(offset + size, self._size)
        parts: list[bytes] = []
        while offset < end:
            index, within = divmod(offset, BLOCK)
            block = self._block(index)
            piece = block[within : within + end - offset]
            if not piece:
                break
            parts.append(piece)
            offset += len(piece)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def read(self, size: int = -1) -> bytes:
        size = self._size - self._pos if size is None or size < 0 else size
        data = self.read_at(self._pos, size)
        self._pos += len(data)
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._size}[whence]
        self._pos = max(base + offset, 0)
        return self._pos

    def tell(self) -> int:
        return self._pos


@dataclass(frozen=True, kw_only=True)
class OnePass:
    """What a single pass over a member found: its report, or why it must be read again."""

    report: LibraryReport | None
    reason: str = ""


def inspect_deflated(
    compressed: ByteSource,
    compressed_size: int,
    size: int,
    crc: int,
    display: str,
    options: ReadOptions,
    *,
    module: ModuleType,
) -> OnePass:
    """Inspect a deflated ELF member in one pass; `report` None means read it the old way.

    Raises zipfile.BadZipFile (or the inflater's error) when the member is damaged.
    """
    from rocmforge.inspect.assembly import assemble, damaged_file_report, readable_fatbin

    member = ForwardMember(compressed, compressed_size, size, module=module)
    try:
        if member.read_at(0, 4) != ELF_MAGIC:
            return OnePass(report=None, reason="not an ELF file")
        scan = scan_raw_bytes(member, size, options.names, options.limits, deep=options.deep)
        try:
            layout = read_host_layout(member)  # type: ignore[arg-type]
        except ElfReadError as exc:
            if member.gave_up:
                return OnePass(report=None, reason="pyelftools read behind the window")
            member.finish(crc)
            return OnePass(report=damaged_file_report(display, scan, options, exc.what))
        member.finish(crc)
        span = layout.kpack_ref
        marker = (member.read_at(span.offset, span.size)
                  if span is not None and not span.nobits else None)  # fmt: skip
    except Rewind as exc:
        return OnePass(report=None, reason=str(exc))
    raw = from_candidates(
        member.candidates,
        [s for s in layout.data_sections if not s.nobits and s.offset + s.size <= size],
        options.names,
    )
    fatbin = layout.hip_fatbin
    section_scan: FatbinScan | None = None
    if fatbin is not None and readable_fatbin(fatbin):
        section_scan = _within(scan, fatbin.offset, fatbin.size, size)
        if section_scan is None:
            return OnePass(report=None, reason="the walk is not exactly .hip_fatbin's")
    return OnePass(report=assemble(display, layout, size, section_scan, raw, options, marker))


def _within(scan: FatbinScan | None, start: int, length: int, size: int) -> FatbinScan | None:
    """The walk of a section cut from a walk of the whole file, when it is exactly that walk:
    its first bundle is the section's first one, none crosses the section's end, no damage lies
    inside it, and the section is inside the file. None otherwise."""
    end = start + length
    if scan is None or end > size:
        return None
    bundles = [b for b in scan.bundles if start <= b.offset < end]
    if not bundles or bundles[0].offset != start:
        return None
    if any(b.offset < end < b.offset + b.stored_size for b in scan.bundles):
        return None
    if any(start <= d.offset < end for d in scan.damage) or any(b.problem for b in bundles):
        return None
    return FatbinScan(bundles=tuple(b._replace(offset=b.offset - start)
                                    for b in bundles))  # fmt: skip
