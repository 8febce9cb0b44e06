"""Clang offload bundles: walking a section from bundle to bundle and reading each one's table.

Owns: the plain `__CLANG_OFFLOAD_BUNDLE__` layout (reference rocm-arch-toolchain.md §5.2) and
its entry table, parsed straight out of a buffer; a compressed bundle's table read from the
bounded decompression ccob.py does; stepping over padding, finding the next bundle after
damage, and the raw-byte scan of a file whose section table is lost. A damaged entry table keeps
the entries read before the damage (`Bundle.problem` says what was lost). `deep` walks
decompress every compressed bundle whole (streamed, memory stays flat), compare it with the
CCOB header's hash, and cross-check every code object and its extent (code_object_check.py).
Reads go through a `ByteSource` (offset, size) so a 1 GB section is never loaded: only headers,
entry tables and 64-byte code-object headers are read. A `BufferSource` (an mmap of the file)
is parsed in place with `struct.unpack_from`: the kernel pages in only what is touched.
The records a walk returns and entry-ID parsing are in bundle_records.py.
Must not: open files, walk directories, print, or raise anything but `BundleFormatError`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import mmap
import operator
import re
import struct
from collections.abc import Callable
from typing import Any, NamedTuple

from rocmforge.inspect.bundle_records import (
    CCOB_MAGIC,
    DEFAULT_LIMITS,
    PLAIN_MAGIC,
    Bundle,
    BundleFormatError,
    CodeObjectCheck,
    Damage,
    EntryId,
    FatbinScan,
    Limits,
    MachName,
    Row,
    parse_entry_id,
)
from rocmforge.inspect.byte_source import BufferSource, ByteSource
from rocmforge.inspect.ccob import (
    Inflater,
    WindowReader,
    check_zstd_content_size,
    parse_ccob_header,
    v1_payload_length,
    zstd_declared_size,
    zstd_decompressor,
    zstd_prefix,
)
from rocmforge.inspect.code_object_check import (
    CODE_OBJECT_HEADER,
    DAMAGED_SPAN,
    NOT_READ,
    check_code_object,
)

# ---------------------------------------------------------------------------------------------
# Plain bundles: the entry table is parsed straight out of a buffer (an mmap of the file, a
# window read from a stream, or a decompressed prefix) with struct.unpack_from, no copies.

_U64 = struct.Struct("<Q").unpack_from
_ENTRY_HEADER = struct.Struct("<QQQ").unpack_from
_SHAPE = struct.Struct("<QQQQ").unpack_from  # entry count, then the first entry's header


class _NeedMore(Exception):
    """The table runs past the bytes at hand but not past the bundle: fetch `size` and retry."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


class _Table(NamedTuple):
    """One parsed entry table: rows, the bundle's extent, what was damaged, and whether the
    extent can be trusted (False: the table broke off)."""

    rows: tuple[Row, ...]
    extent: int
    problem: str
    size_known: bool
    declared: int


class _Layout(NamedTuple):
    """The shape of an entry table seen before: its IDs in order, and one struct that unpacks
    every entry header and ID in one call. A PyTorch library's thousands of bundles repeat a
    few shapes, so after the first of a shape a table is one unpack and two tuple compares."""

    unpack: Callable[[bytes | mmap.mmap, int], tuple[Any, ...]]  # magic, count, entries
    size: int  # bytes after the 32-byte bundle header: entry headers and IDs
    lengths: tuple[int, ...]
    raws: tuple[bytes, ...]
    rows_ids: tuple[EntryId, ...]
    checks: tuple[CodeObjectCheck, ...]  # host entries' check; NOT_READ for device entries
    device_from: int  # entries from here on are device entries, the ones before host
    device_raws: tuple[bytes, ...]


def _joined(problems: list[str]) -> str:
    """The first three problems, and how many more there were."""
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    return "; ".join(problems[:3]) + more


# ---------------------------------------------------------------------------------------------
# Walking a section

_NONZERO = re.compile(rb"[^\x00]")
_PLAIN_HEAD = PLAIN_MAGIC[:4]
BUNDLE_ALIGN = 4096  # each translation unit's bundle starts 4096-aligned in .hip_fatbin
_ZERO_PAGE = bytes(BUNDLE_ALIGN)  # `startswith` on it checks padding with one memcmp
_STREAM_WINDOW = 1 << 16
_CCOB_TABLE_GUESS = 8192  # decompressed bytes that usually hold a CCOB entry table
_DEEP_PIECE = 1 << 20  # decompressed bytes per step of a deep check
_RELEASE_EVERY = 32 << 20  # hand mapped pages back every 32 MiB walked: RSS stays flat


class _Walk:
    """One walk over one section: its source, and caches of entry IDs and code-object checks.

    The caches are per walk (no global growth) and keyed on raw bytes, so the thousands of
    bundles of a PyTorch library, which repeat a few IDs and header shapes, cost a dict lookup
    per entry after the first.
    """

    def __init__(
        self,
        source: ByteSource,
        size: int,
        mach_name: MachName,
        limits: Limits,
        *,
        deep: bool = False,
    ) -> None:
        self.source = source
        self.size = size
        self.mach_name = mach_name
        self.limits = limits
        self.deep = deep
        # Zero-copy path: the whole section is addressable in a buffer (an mmap, or bytes).
        self.buf: bytes | mmap.mmap | None = None
        self.base = 0
        self.release: Callable[[int], None] | None = None
        if isinstance(source, BufferSource):
            self.buf, self.base = source.buffer, source.base
            self.release = source.release_before
        self.ids: dict[bytes, EntryId] = {}
        self.checks: dict[tuple[object, ...], CodeObjectCheck] = {}
        self.read_per_id: dict[bytes, int] = {}
        self.layouts: dict[tuple[int, int], _Layout] = {}
        self.sampled: set[tuple[int, int]] = set()  # layouts whose device IDs are all sampled

    # -- entries ------------------------------------------------------------------------------

    def entry_id(self, raw: bytes, where: str) -> EntryId:
        entry_id = self.ids.get(raw)
        if entry_id is None:
            try:
                text = raw.decode("ascii")
            except UnicodeDecodeError:
                raise BundleFormatError(f"{where} has a non-ASCII ID {raw[:40]!r}") from None
            if not text.isprintable():
                raise BundleFormatError(f"{where} has an unprintable ID {text[:40]!r}")
            entry_id = parse_entry_id(text)
            if len(self.ids) >= 4096:
                self.ids.clear()  # hostile input with endless distinct IDs: stay bounded
            self.ids[raw] = entry_id
        return entry_id

    def table(
        self,
        buf: bytes | mmap.mmap,
        at: int,
        limit: int,
        *,
        avail: int | None = None,
        origin: int = 0,
        fallback: ByteSource | None = None,
        fallback_at: int = 0,
        sample: bool = False,
    ) -> _Table:
        """Entries of the plain bundle at `buf[at:]`, which may span `limit` bytes, with checks.

        `avail` is the buffer index where readable bytes end (default: all of `limit`); a table
        that runs past it but not past `limit` raises `_NeedMore`. Code-object headers are
        sliced from `buf` when they lie before `avail`, else read from `fallback`, else marked
        not checked. `origin` is the buffer index of section offset 0 (for messages).
        `sample` (plain bundles of a shallow walk): read only the first `checks_per_id` code
        objects of each entry ID; the headers of the rest lie on payload pages left untouched.
        Damage after the bundle header keeps what was read: an entry whose ID is not text is
        left out, one whose bytes run past `limit` is kept as "damaged", and a table that
        breaks off (a length that lies, bytes that end) keeps the entries before it, with an
        unknown extent. Damage before any entry is read raises BundleFormatError.
        One loop, no intermediate objects: this is the walk's inner loop.
        """
        if sample and not self.deep:
            readable = limit if avail is None else min(avail - at, limit)
            known = self._known_table(buf, at, readable, limit)
            if known is not None:
                return known
        stop = at + limit
        end = stop if avail is None else min(avail, stop)
        shown = at - origin
        if at + 32 > end:
            raise self._short(at, stop, end, 32, "the bundle header", shown)
        if buf[at : at + 24] != PLAIN_MAGIC:
            raise BundleFormatError(f"no {PLAIN_MAGIC.decode()} magic at offset {shown:#x}")
        (count,) = _U64(buf, at + 24)
        limits = self.limits
        if count == 0 or count > limits.max_entries:
            raise BundleFormatError(
                f"bundle at offset {shown:#x} declares {count} entries "
                f"(accepted: 1..{limits.max_entries})"
            )
        max_id = limits.max_id_length
        ids, checks, mach_name, deep = self.ids, self.checks, self.mach_name, self.deep
        read_per_id = self.read_per_id
        sampling = sample and not deep
        per_id = limits.checks_per_id
        if len(read_per_id) >= 4096:
            read_per_id.clear()  # hostile input with endless distinct IDs: stay bounded
            self.sampled.clear()
        where = f"the bundle at {shown:#x}"
        pos = at + 32
        extent = 0
        rows: list[Row] = []
        problems: list[str] = []
        broke_off = False
        spans_past = False
        for index in range(count):
            if pos + 24 > end:
                short = self._short(at, stop, end, pos + 24 - at, f"entry {index} header", shown)
                if isinstance(short, _NeedMore):
                    raise short
                problems.append(short.what)
                broke_off = True
                break
            offset, size, id_length = _ENTRY_HEADER(buf, pos)
            if not 0 < id_length <= max_id:
                problems.append(
                    f"entry {index} of {where} has an ID length of {id_length} "
                    f"(accepted: 1..{max_id})"
                )
                broke_off = True
                break
            pos += 24
            id_end = pos + id_length
            if id_end > end:
                short = self._short(at, stop, end, id_end - at, f"entry {index} ID", shown)
                if isinstance(short, _NeedMore):
                    raise short
                problems.append(short.what)
                broke_off = True
                break
            raw = buf[pos:id_end]
            pos = id_end
            entry_id = ids.get(raw)
            if entry_id is None:
                try:
                    entry_id = self.entry_id(raw, f"entry {index} of {where}")
                except BundleFormatError as exc:
                    problems.append(exc.what)
                    continue
            if offset + size > limit:
                problems.append(
                    f"entry {raw[:80].decode('ascii', 'replace')!r} of {where} spans "
                    f"{offset:#x}+{size:#x}, past the end of its data ({limit:#x} bytes): the "
                    "bundle is truncated or its entry table lies"
                )
                rows.append((entry_id, offset, size, DAMAGED_SPAN))
                spans_past = True
                continue
            header: bytes | None
            if entry_id.kind == "host" or size < 52:
                header = b""  # host: nothing to check; under 52 bytes: not an ELF, reported
            elif sampling and read_per_id.get(raw, 0) >= per_id:
                # Enough of this ID's code objects were read: skip its payload pages.
                rows.append((entry_id, offset, size, NOT_READ))
                if offset + size > extent:
                    extent = offset + size
                continue
            else:
                if sampling:
                    read_per_id[raw] = read_per_id.get(raw, 0) + 1
                head_end = at + offset + (size if size < CODE_OBJECT_HEADER else 64)
                if head_end <= end:
                    header = buf[at + offset : head_end]
                elif fallback is not None:
                    header = fallback.read_at(fallback_at + offset, min(size, 64))
                else:
                    header = None
            key = (raw, header, size) if deep else (raw, header)
            check = checks.get(key)
            if check is None:
                check = check_code_object(entry_id, header, mach_name, size if deep else 0)
                if len(checks) >= 4096:
                    checks.clear()  # hostile input with endless distinct headers
                checks[key] = check
            if check.status == "damaged":
                problems.append(f"entry {index} ({entry_id.text}) of {where}: {check.detail}")
            rows.append((entry_id, offset, size, check))
            if offset + size > extent:
                extent = offset + size
        problem = ""
        if problems:
            kept = sum(1 for row in rows if row[3].status != "damaged")
            if not kept:
                raise BundleFormatError(problems[0])
            problem = _joined(problems) + f": {kept} of {count} entries read intact"
            # An entry past the data means the sizes (or the file) cannot be trusted either.
            broke_off = broke_off or spans_past
        extent = min(max(pos - at, extent), limit)
        if sampling and not problems:
            self._remember(rows, pos - at - 32, count)
        return _Table(tuple(rows), extent, problem, not broke_off, count)

    def _known_table(
        self, buf: bytes | mmap.mmap, at: int, readable: int, limit: int
    ) -> _Table | None:
        """The sampled plain table at `at` in one unpack, when it has the shape of one read
        before and the general loop would produce the same rows: the magic and every ID as
        remembered and inside the `readable` bytes, every device ID's first code objects
        already read (the rest are not read), every device entry big enough to hold a
        code-object header, every entry inside the bundle's `limit`. None sends the table to
        the general loop (which also explains anything wrong)."""
        if readable < 56:
            return None
        count, _, _, first_length = _SHAPE(buf, at + 24)
        key = (count, first_length)
        layout = self.layouts.get(key)
        if layout is None or 32 + layout.size > readable:
            return None
        values = layout.unpack(buf, at)
        if values[0] != PLAIN_MAGIC or values[4::4] != layout.lengths:
            return None
        if values[5::4] != layout.raws:
            return None
        if key not in self.sampled:
            read_per_id, per_id = self.read_per_id, self.limits.checks_per_id
            if any(read_per_id.get(raw, 0) < per_id for raw in layout.device_raws):
                return None
            self.sampled.add(key)  # until read_per_id is cleared (with it, this set)
        offsets, sizes = values[2::4], values[3::4]
        if layout.device_from < count and min(sizes[layout.device_from :]) < 52:
            return None
        reach = max(map(operator.add, offsets, sizes))
        if reach > limit:
            return None
        rows = tuple(zip(layout.rows_ids, offsets, sizes, layout.checks, strict=True))
        return _Table(rows, max(32 + layout.size, reach), "", True, count)

    def _remember(self, rows: list[Row], size: int, count: int) -> None:
        """Keep the shape of a table that parsed cleanly (host entries first, then device
        ones, as clang writes them), so the next table of that shape is one unpack."""
        if len(rows) != count or count > 64:
            return
        device_from = next((i for i, row in enumerate(rows) if not row[0].is_host), count)
        if any(row[0].is_host for row in rows[device_from:]):
            return
        raws = tuple(row[0].text.encode("ascii") for row in rows)
        key = (count, len(raws[0]))
        if key in self.layouts:
            return
        if len(self.layouts) >= 4096:
            self.layouts.clear()  # hostile input with endless distinct shapes: stay bounded
            self.sampled.clear()
        host_checks = tuple(row[3] for row in rows[:device_from])
        self.layouts[key] = _Layout(
            unpack=struct.Struct("<24sQ" + "".join(f"QQQ{len(r)}s" for r in raws)).unpack_from,
            size=size, lengths=tuple(len(r) for r in raws), raws=raws,
            rows_ids=tuple(row[0] for row in rows),
            checks=host_checks + (NOT_READ,) * (count - device_from),
            device_from=device_from, device_raws=raws[device_from:],
        )  # fmt: skip

    @staticmethod
    def _short(
        at: int, stop: int, end: int, need: int, what: str, shown: int
    ) -> _NeedMore | BundleFormatError:
        """_NeedMore when more bytes exist beyond what is at hand, else the truncation error."""
        if at + need <= stop and end < stop:
            return _NeedMore(need)
        return BundleFormatError(
            f"truncated bundle: {what} needs {need} bytes from offset {shown:#x}, "
            f"only {end - at} are there"
        )

    # -- bundles ------------------------------------------------------------------------------

    def head(self, pos: int, size: int) -> bytes:
        if self.buf is not None:
            end = min(pos + size, self.size)
            return bytes(self.buf[self.base + pos : self.base + end]) if end > pos else b""
        return self.source.read_at(pos, size)

    def bundle_at(self, pos: int) -> Bundle:
        magic = self.head(pos, len(PLAIN_MAGIC))
        if magic == PLAIN_MAGIC:
            return self.plain(pos)
        if magic[:4] == CCOB_MAGIC:
            return self.ccob(pos)
        raise BundleFormatError(
            f"bytes at section offset {pos:#x} ({magic[:8].hex()}) start neither a "
            f"{PLAIN_MAGIC.decode()} nor a CCOB bundle"
        )

    def plain(self, pos: int) -> Bundle:
        limit = self.size - pos
        if self.buf is not None:
            table = self.table(self.buf, self.base + pos, limit, origin=self.base, sample=True)
        else:
            want = _STREAM_WINDOW
            while True:
                chunk = self.source.read_at(pos, min(want, limit))
                complete = len(chunk) < min(want, limit) or len(chunk) >= limit
                try:
                    table = self.table(
                        chunk, 0, limit, avail=None if complete else len(chunk), origin=-pos,
                        fallback=self.source, fallback_at=pos, sample=True,
                    )  # fmt: skip
                    break
                except _NeedMore as more:
                    want = max(more.size, want * 2)
        return Bundle(offset=pos, stored_size=table.extent, container="plain",
                      uncompressed_size=table.extent, rows=table.rows, problem=table.problem,
                      size_known=table.size_known, declared_entries=table.declared)  # fmt: skip

    def ccob(self, pos: int) -> Bundle:
        """A compressed bundle; only the first bytes of its payload are decompressed (all of
        it in deep walks, checked against the header's hash)."""
        limits, limit = self.limits, self.size - pos
        head = self.head(pos, 32)
        version, method, total, uncompressed, header_size = parse_ccob_header(head, pos)
        where = f"CCOB v{version} at {pos:#x}"
        if total is not None and (total <= header_size or total > limit):
            raise BundleFormatError(
                f"{where} declares a total size of {total} bytes, but {limit} bytes remain in "
                "the section (the header's sizes lie)"
            )
        if uncompressed < 32:
            raise BundleFormatError(f"{where} declares an uncompressed size of only {uncompressed}")
        if self.buf is not None and method == "zstd" and total is not None and not self.deep:
            quick = self._ccob_zstd_quick(pos, version, header_size, total, uncompressed)
            if quick is not None:
                return quick
        payload_end = pos + (total if total is not None else limit)
        check_zstd_content_size(self.source, pos + header_size, method, uncompressed, where)
        reader = WindowReader(self.source, pos + header_size, payload_end)
        cap = min(uncompressed, limits.max_table_bytes + limits.check_prefix_bytes)
        if self.deep:
            cap = min(uncompressed, limits.max_table_bytes)  # headers come from the full pass
        inflater = Inflater(method, reader, cap, limits, where, uncompressed)
        try:
            table, problem = self._ccob_rows(inflater, cap, uncompressed, where)
        finally:
            inflater.close()
            reader.close()
        rows = table.rows
        problems = [f"{where}: {table.problem}"] if table.problem else []
        if problem:
            problems.append(problem)
        verified = False
        if self.deep:
            payload = WindowReader(self.source, pos + header_size, payload_end)
            try:
                rows, problem = self._verify_payload(
                    method, payload, uncompressed, head[header_size - 8 : header_size], rows, where
                )
            finally:
                payload.close()
            verified = not problem
            if problem:
                problems.append(problem)
        stored = (
            total
            if total is not None
            else header_size
            + v1_payload_length(self.source, pos + header_size, pos + limit, method, limits, where)
        )
        return Bundle(offset=pos, stored_size=stored, container=f"ccob-v{version}",
                      compression=method, uncompressed_size=uncompressed, rows=rows,
                      problem="; ".join(problems), declared_entries=table.declared,
                      verified=verified)  # fmt: skip

    def _ccob_zstd_quick(
        self, pos: int, version: int, header_size: int, total: int, uncompressed: int
    ) -> Bundle | None:
        """The usual mapped zstd bundle (v2/v3) in one pass, with the answer `_ccob_rows`
        would give: the first `_CCOB_TABLE_GUESS` bytes decompressed straight out of the
        mapping, a clean table inside them, and no code-object header that the check budget
        would decompress further for. Anything else (a frame whose declared size differs, a
        stream that fails or ends early, a damaged table, more to decompress) returns None:
        the general path redoes the bundle and says what is wrong."""
        buf, limits = self.buf, self.limits
        assert buf is not None
        lo, hi = self.base + pos + header_size, self.base + pos + total
        declared = zstd_declared_size(buf, lo, hi)
        if declared is None or (declared >= 0 and declared != uncompressed):
            return None
        table_cap = min(uncompressed, limits.max_table_bytes)
        want = min(_CCOB_TABLE_GUESS, table_cap)
        view = memoryview(buf)[lo:hi]
        try:
            prefix = zstd_prefix(zstd_decompressor(limits.max_zstd_window), view, want)
        finally:
            view.release()
        if prefix is None or len(prefix) < want:
            return None
        try:
            table = self.table(prefix, 0, uncompressed, avail=min(len(prefix), table_cap))
        except (_NeedMore, BundleFormatError):
            return None
        if table.problem:
            return None
        cap = min(uncompressed, limits.max_table_bytes + limits.check_prefix_bytes)
        budget = min(cap, want + limits.check_prefix_bytes)
        have = len(prefix)
        for _, offset, size, check in table.rows:
            if (check.status == "not-checked" and check.code_object_version is None and size
                    and have < offset + CODE_OBJECT_HEADER <= budget):  # fmt: skip
                return None
        return Bundle(offset=pos, stored_size=total, container=f"ccob-v{version}",
                      compression="zstd", uncompressed_size=uncompressed, rows=table.rows,
                      declared_entries=table.declared)  # fmt: skip

    def _ccob_rows(
        self, inflater: Inflater, cap: int, uncompressed: int, where: str
    ) -> tuple[_Table, str]:
        """Decompress just the entry table and the code-object headers within budget.

        Returns the table and, when the payload broke off after the bytes that hold the table
        (or while reaching for code-object headers), what went wrong; the table's rows are kept.
        """
        limits = self.limits
        table_cap = min(uncompressed, limits.max_table_bytes)
        # The table and the first code object (4096-aligned) are usually in the first 8 KiB;
        # more is decompressed (and the table parsed again) only for a code-object header
        # that lies within `check_prefix_bytes` after the bytes that hold the table.
        table_bytes = want = min(_CCOB_TABLE_GUESS, table_cap)
        table: _Table | None = None
        while True:
            broke = ""
            try:
                inflater.ensure(want)
            except BundleFormatError as exc:
                if table is not None:
                    return table, exc.what
                broke = exc.what  # the table may still lie within what was decompressed
            prefix = inflater.data
            complete = len(prefix) >= uncompressed
            try:
                table = self.table(
                    prefix, 0, uncompressed, avail=None if complete else min(len(prefix), table_cap)
                )
            except _NeedMore as more:
                if broke:
                    raise BundleFormatError(broke) from None
                if more.size > table_cap:
                    raise BundleFormatError(
                        f"{where}: the entry table reaches past the first {table_cap} "
                        "decompressed bytes that are accepted (possible zip bomb)"
                    ) from None
                want = table_bytes = min(max(more.size, want * 2), table_cap)
                continue
            except BundleFormatError as exc:
                raise BundleFormatError(
                    broke or f"{where} (declaring {uncompressed} uncompressed bytes): {exc.what}"
                ) from None
            if broke:
                return table, broke  # the rows before the break are kept, the break reported
            # Code-object headers past the prefix are checked while they fit the budget.
            budget = min(cap, table_bytes + limits.check_prefix_bytes)
            wanted = [
                offset + CODE_OBJECT_HEADER
                for _, offset, size, check in table.rows
                if check.code_object_version is None and check.status == "not-checked"
                and size and len(prefix) < offset + CODE_OBJECT_HEADER <= budget
            ]  # fmt: skip
            if not wanted or inflater.ended or len(prefix) >= budget:
                return table, ""
            want = max(wanted)

    def _verify_payload(
        self,
        method: str,
        reader: WindowReader,
        uncompressed: int,
        digest: bytes,
        rows: tuple[Row, ...],
        where: str,
    ) -> tuple[tuple[Row, ...], str]:
        """Deep: decompress the whole payload in pieces, hash it, and check every code object.

        The CCOB header's 8 hash bytes are the first 8 bytes of the MD5 digest of the
        uncompressed bundle (clang/lib/Driver/OffloadBundler.cpp, CompressedOffloadBundle::
        compress, llvm/llvm-project). Memory stays at one piece (1 MiB) plus 64 bytes.
        Returns the rows with every code object checked, and "" or what was wrong.
        """
        md5 = hashlib.md5(usedforsecurity=False)
        # Offsets of the code-object headers to collect, in stream order.
        wanted = sorted({offset for entry_id, offset, size, check in rows
                         if not entry_id.is_host and size >= 52
                         and check.status != "damaged"})  # fmt: skip
        headers: dict[int, bytes] = {}
        stream = Inflater(method, reader, uncompressed, self.limits, where, uncompressed)
        produced = 0
        tail = b""
        next_wanted = 0
        problem = ""
        try:
            while produced < uncompressed:
                piece = stream.take(min(_DEEP_PIECE, uncompressed - produced))
                md5.update(piece)
                window = tail + piece
                base = produced - len(tail)
                produced += len(piece)
                while next_wanted < len(wanted) and wanted[next_wanted] + 64 <= produced:
                    at = wanted[next_wanted] - base
                    headers[wanted[next_wanted]] = bytes(window[at : at + 64])
                    next_wanted += 1
                tail = bytes(window[-64:])
            stream.expect_end()
        except BundleFormatError as exc:
            problem = f"{exc.what} (deep check, at decompressed byte {produced})"
        finally:
            stream.close()
        # Headers of code objects that end within the last 64 bytes.
        for offset in wanted[next_wanted:]:
            if offset + 52 <= produced:
                at = offset - (produced - len(tail))
                headers[offset] = bytes(tail[at:])
        if not problem and md5.digest()[:8] != digest:
            problem = (
                f"{where}: the decompressed bundle's MD5 starts {md5.digest()[:8].hex()}, the "
                f"header records {digest.hex()} (the payload is damaged)"
            )
        checked: list[Row] = []
        damaged: list[str] = []
        for entry_id, offset, size, check in rows:
            if offset in headers:
                header = headers[offset][: min(size, 64)]
                key = (entry_id.text.encode(), header, size)
                found = self.checks.get(key)
                if found is None:
                    found = check_code_object(entry_id, header, self.mach_name, size)
                    self.checks[key] = found
                check = found
            elif check.status == "not-checked" and not entry_id.is_host and size >= 52:
                check = CodeObjectCheck(
                    status="damaged", detail="its bytes could not be decompressed"
                )
            if check.status == "damaged" and offset in headers:
                damaged.append(f"{entry_id.text}: {check.detail}")
            checked.append((entry_id, offset, size, check))
        if damaged and not problem:
            problem = f"{where}: " + _joined(damaged)
        return tuple(checked), problem

    # -- stepping -----------------------------------------------------------------------------

    def skip_padding(self, pos: int) -> int:
        """First non-zero byte at or after `pos` (bundles are padded with zeros)."""
        buf = self.buf
        if buf is not None:
            at, end = self.base + pos, self.base + self.size
            if at >= end or buf[at]:
                return pos
            # The usual case, zeros up to the next aligned bundle: two cheap looks, no scan.
            aligned = (pos // BUNDLE_ALIGN + 1) * BUNDLE_ALIGN
            if (
                aligned < self.size
                and buf[self.base + aligned]
                and _ZERO_PAGE.startswith(buf[at : self.base + aligned])
            ):
                return aligned
            found = _NONZERO.search(buf, at, end)
            return found.start() - self.base if found else self.size
        while pos < self.size:
            chunk = self.source.read_at(pos, _STREAM_WINDOW)
            if not chunk:
                return self.size
            stripped = chunk.lstrip(b"\0")
            if stripped:
                return pos + len(chunk) - len(stripped)
            pos += len(chunk)
        return self.size

    def resync(self, pos: int) -> int | None:
        """The next bundle magic at a BUNDLE_ALIGN boundary after `pos`, None if there is none.

        Only the first bytes at each boundary are looked at (one page in 4096 bytes of a
        mapped file is touched; a stream is read in windows and probed the same way).
        """
        at = (pos // BUNDLE_ALIGN + 1) * BUNDLE_ALIGN
        while at < self.size:
            if self.buf is not None:
                buf, first, shift = self.buf, self.base + at, self.base
                last = self.base + self.size
            else:
                window = self.source.read_at(at, _STREAM_WINDOW * 16)
                if not window:
                    return None
                buf, first, shift, last = window, 0, -at, len(window)
            for probe in range(first, last, BUNDLE_ALIGN):
                head = buf[probe : probe + 4]
                if head == CCOB_MAGIC or (
                    head == _PLAIN_HEAD and buf[probe : probe + len(PLAIN_MAGIC)] == PLAIN_MAGIC
                ):
                    return probe - shift
            if self.buf is not None:
                return None
            at += len(buf)
        return None

    def walk(self, start: int = 0) -> FatbinScan:
        bundles: list[Bundle] = []
        damage: list[Damage] = []
        pos = released = start
        while True:
            pos = self.skip_padding(pos)
            if pos >= self.size:
                break
            try:
                bundle = self.bundle_at(pos)
            except BundleFormatError as exc:
                resumed = self.resync(pos)
                damage.append(Damage(offset=pos, problem=exc.what, resumed_at=resumed))
                if resumed is None or len(damage) >= self.limits.max_damage:
                    break
                pos = resumed
                continue
            bundles.append(bundle)
            if bundle.problem:
                # Its entries up to the damage are kept; where it ends is known only when its
                # table did not break off.
                if bundle.size_known:
                    after: int | None = self.skip_padding(pos + max(bundle.stored_size, 1))
                    resumed = after if after is not None and after < self.size else None
                else:
                    resumed = self.resync(pos)
                damage.append(Damage(offset=pos, problem=bundle.problem, resumed_at=resumed,
                                     entries_kept=len(bundle.rows)))  # fmt: skip
                if resumed is None or len(damage) >= self.limits.max_damage:
                    break
                pos = resumed
                continue
            pos += max(bundle.stored_size, 1)
            if self.release is not None and pos >= released + _RELEASE_EVERY:
                self.release(pos)
                released = pos
        return FatbinScan(bundles=tuple(bundles), damage=tuple(damage))


def parse_bundle_at(
    source: ByteSource, start: int, size: int, mach_name: MachName, limits: Limits = DEFAULT_LIMITS
) -> Bundle:
    """The bundle (plain or CCOB) at `start` of a section of `size` bytes."""
    return _Walk(source, size, mach_name, limits).bundle_at(start)


def walk_fatbin(
    source: ByteSource,
    size: int,
    mach_name: MachName,
    limits: Limits = DEFAULT_LIMITS,
    *,
    deep: bool = False,
) -> FatbinScan:
    """Every bundle of a `.hip_fatbin`-like section, stepping by each bundle's own size.

    A malformed bundle's size cannot be trusted, so after one the walk looks for the next bundle
    magic at a 4096-byte boundary and goes on from there; each skipped region is returned as a
    `Damage` (the first one also as `problem`/`problem_offset`). A bundle whose table is damaged
    part way is kept with the entries read before the damage, and is a `Damage` too.
    `deep`: decompress every compressed bundle whole and check its hash and code objects.
    """
    return _Walk(source, size, mach_name, limits, deep=deep).walk()


def scan_raw_bytes(
    source: ByteSource,
    size: int,
    mach_name: MachName,
    limits: Limits = DEFAULT_LIMITS,
    *,
    deep: bool = False,
) -> FatbinScan | None:
    """Bundles found by their magic in bytes whose section table is lost (a damaged file).

    The first bundle magic (at any offset) whose bundle parses is taken as the start of the
    lost section: the walk goes on from there, looking for later bundles at 4096-byte steps
    from it as it would in the section. Offsets are from the start of `source`. None when no
    bundle parses.
    """
    base = _first_bundle(source, size, mach_name, limits)
    if base is None:
        return None
    shifted: ByteSource = (
        BufferSource(source.buffer, source.base + base, size - base)
        if isinstance(source, BufferSource)
        else _Shifted(source, base)
    )
    scan = _Walk(shifted, size - base, mach_name, limits, deep=deep).walk()
    return FatbinScan(
        bundles=tuple(b._replace(offset=b.offset + base) for b in scan.bundles),
        damage=tuple(
            dataclasses.replace(d, offset=d.offset + base,
                                resumed_at=None if d.resumed_at is None else d.resumed_at + base)
            for d in scan.damage
        ),
    )  # fmt: skip


_FIRST_TRIES = 64  # magics tried before giving up on finding a bundle that parses


def _first_bundle(source: ByteSource, size: int, mach_name: MachName, limits: Limits) -> int | None:
    """Offset of the first bundle magic whose bundle parses, searched front to back.

    A CCOB magic is looked for only at 4096-byte file offsets (four bytes anywhere would match
    by chance); the 24-byte plain magic anywhere (objcopy adds sections at any offset).
    """
    window = _STREAM_WINDOW * 16
    at = tries = 0
    while at < size and tries < _FIRST_TRIES:
        chunk = source.read_at(at, window + len(PLAIN_MAGIC))
        if not chunk:
            return None
        hits = [i for i in range(-at % BUNDLE_ALIGN, min(window, len(chunk)), BUNDLE_ALIGN)
                if chunk[i : i + 4] == CCOB_MAGIC]  # fmt: skip
        plain = chunk.find(PLAIN_MAGIC, 0, window + len(PLAIN_MAGIC) - 1)
        if 0 <= plain < window:
            hits.append(plain)
        if not hits:
            at += window
            continue
        found = at + min(hits)
        tries += 1
        try:
            _Walk(source, size, mach_name, limits).bundle_at(found)
        except BundleFormatError:
            at = found + 1
            continue
        return found
    return None


class _Shifted:
    """A ByteSource seen from `base` on (offsets relative to it)."""

    def __init__(self, source: ByteSource, base: int) -> None:
        self._source = source
        self._base = base

    def read_at(self, offset: int, size: int) -> bytes:
        if offset < 0:
            return b""
        return self._source.read_at(self._base + offset, size)
