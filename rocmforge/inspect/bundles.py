"""Clang offload bundles: parsing bundle bytes into entries, and stepping from bundle to bundle.

Owns: the plain `__CLANG_OFFLOAD_BUNDLE__` layout and the compressed `CCOB` v1/v2/v3 headers
(reference rocm-arch-toolchain.md §5.2, §5.3), entry-ID parsing (`hip`/`hipv4`, 3- or 4-field
triples, target features, both host spellings), the bounded decompression of a compressed
bundle's first bytes, and the cross-check of each code object's ELF header against its entry ID.
Reads go through a `ByteSource` (offset, size) so a 1 GB section is never loaded: only headers,
entry tables and 64-byte code-object headers are read.
Must not: open files, walk directories, print, or raise anything but `BundleFormatError`.
"""

from __future__ import annotations

import functools
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from rocmforge.errors import RocmforgeError
from rocmforge.inspect.elf import EM_AMDGPU, ElfReadError, decode_code_object_header

PLAIN_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
CCOB_MAGIC = b"CCOB"
AMDGPU_TRIPLE = "amdgcn-amd-amdhsa"
_CCOB_METHODS = {0: "zlib", 1: "zstd"}  # llvm::compression::Format (OffloadBundle.h)
_CCOB_HEADER_SIZE = {1: 20, 2: 24, 3: 32}
_CODE_OBJECT_HEADER = 64


class BundleFormatError(RocmforgeError):
    """Bundle bytes that do not follow the format: truncated, sizes that lie, bad compression."""


class ByteSource(Protocol):
    """Random access to a byte range; short reads mean the range ends there."""

    def read_at(self, offset: int, size: int) -> bytes: ...


@dataclass(frozen=True)
class BytesSource:
    """A ByteSource over bytes already in memory (tests, fuzzing, decompressed prefixes)."""

    data: bytes

    def read_at(self, offset: int, size: int) -> bytes:
        if offset < 0 or size < 0:
            return b""
        return self.data[offset : offset + size]


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Caps that keep memory flat and stop hostile inputs (zip bombs, absurd counts)."""

    max_entries: int = 4096
    max_id_length: int = 4096
    # Decompressed bytes accepted to reach the end of a compressed bundle's entry table.
    max_table_bytes: int = 1 << 20
    # Decompressed bytes per compressed bundle spent on code-object header checks.
    check_prefix_bytes: int = 32 << 10
    # zstd window cap (memory): frames that need more are reported, not decoded.
    max_zstd_window: int = 1 << 27
    # CCOB v1 has no total size: bytes we are willing to inflate to find a zlib stream's end.
    max_v1_inflate: int = 1 << 32


DEFAULT_LIMITS = Limits()
MachName = Callable[[int], "str | None"]


@dataclass(frozen=True, kw_only=True)
class EntryId:
    """One parsed entry ID, e.g. `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`."""

    text: str
    kind: str
    triple: str
    processor: str = ""
    features: tuple[tuple[str, str], ...] = ()

    @property
    def is_host(self) -> bool:
        return self.kind == "host"

    @property
    def is_amdgpu(self) -> bool:
        return not self.is_host and self.triple == AMDGPU_TRIPLE and self.processor != ""

    @property
    def target(self) -> str:
        """Canonical target ID: processor, then features in alphabetical order."""
        if not self.processor:
            return ""
        return ":".join([self.processor, *(f"{n}{v}" for n, v in sorted(self.features))])

    def feature(self, name: str) -> str:
        """'+', '-' or '' (Any) for a target feature."""
        return dict(self.features).get(name, "")


@dataclass(frozen=True, kw_only=True)
class CodeObjectCheck:
    """Result of comparing a code object's ELF header with its entry ID."""

    status: str  # "ok", "mismatch", "not-checked", "host"
    detail: str = ""
    code_object_version: int | None = None
    e_flags: int | None = None


@dataclass(frozen=True, kw_only=True)
class Entry:
    entry_id: EntryId
    offset: int  # from the start of the (uncompressed) bundle
    size: int
    check: CodeObjectCheck


@dataclass(frozen=True, kw_only=True)
class Bundle:
    """One bundle found in a section: where, how stored, and its entries."""

    offset: int  # from the start of the section
    stored_size: int  # bytes it takes in the section
    container: str  # "plain", "ccob-v1", "ccob-v2", "ccob-v3"
    compression: str = ""  # "", "zlib", "zstd"
    uncompressed_size: int = 0
    entries: tuple[Entry, ...] = ()

    @property
    def compressed(self) -> bool:
        return self.container != "plain"

    @property
    def device_entries(self) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if not e.entry_id.is_host)


@dataclass(frozen=True, kw_only=True)
class FatbinScan:
    """Every bundle read from one section, and the problem that stopped the walk (if any)."""

    bundles: tuple[Bundle, ...]
    problem: str = ""
    problem_offset: int | None = None
    extra: dict[str, int] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Entry IDs


@functools.lru_cache(maxsize=4096)
def parse_entry_id(text: str) -> EntryId:
    """Parse `<kind>-<triple>[-<target-id>]`, tolerant of 3/4-field triples (reference §5.2).

    Cached: a PyTorch library repeats the same few IDs in thousands of bundles.
    """
    kind, sep, rest = text.partition("-")
    if not sep or not kind or not rest:
        raise BundleFormatError(f"entry ID {text!r} has no '<kind>-<triple>' form")
    if kind == "host":
        return EntryId(text=text, kind=kind, triple=rest.rstrip("-"))
    if not rest.startswith(AMDGPU_TRIPLE):
        # Another offload target (e.g. nvptx or an openmp host fallback): keep, not AMD GPU code.
        return EntryId(text=text, kind=kind, triple=rest)
    tail = rest[len(AMDGPU_TRIPLE) :]
    if tail and not tail.startswith("-"):
        raise BundleFormatError(f"entry ID {text!r}: triple {AMDGPU_TRIPLE!r} is followed by junk")
    # 4-field triples put an (empty) environment between triple and target: `--gfx1100`; an old
    # 3-field triple has one dash. A non-empty environment ends at the processor's `gfx`.
    tail = tail.lstrip("-")
    gfx_at = tail.find("gfx")
    target = tail[gfx_at:] if gfx_at > 0 else tail
    if not target:
        raise BundleFormatError(f"entry ID {text!r} names no target processor")
    processor, *feature_texts = target.split(":")
    if not processor or not all(ch.isalnum() or ch == "-" for ch in processor):
        raise BundleFormatError(f"entry ID {text!r}: {processor!r} is not a processor name")
    features: list[tuple[str, str]] = []
    for item in feature_texts:
        name, sign = item[:-1], item[-1:]
        if sign not in ("+", "-") or not name.isalpha():
            raise BundleFormatError(
                f"entry ID {text!r}: target feature {item!r} is not '<name>+' or '<name>-'"
            )
        features.append((name, sign))
    return EntryId(
        text=text,
        kind=kind,
        triple=AMDGPU_TRIPLE,
        processor=processor.lower(),
        features=tuple(features),
    )


# ---------------------------------------------------------------------------------------------
# Plain bundles


@dataclass(frozen=True, kw_only=True)
class _RawEntry:
    text: str
    offset: int
    size: int


def _read_exact(source: ByteSource, offset: int, size: int, what: str) -> bytes:
    data = source.read_at(offset, size)
    if len(data) != size:
        raise BundleFormatError(
            f"truncated bundle: {what} needs {size} bytes at offset {offset:#x}, "
            f"only {len(data)} are there"
        )
    return data


def read_entry_table(
    source: ByteSource, start: int, limit: int, limits: Limits
) -> tuple[list[_RawEntry], int]:
    """Entries of the plain bundle at `start`; `limit` is how many bytes the bundle may span.

    Returns the entries and the end of the table (relative to `start`).
    """
    header = _read_exact(source, start, 32, "the bundle header")
    if header[:24] != PLAIN_MAGIC:
        raise BundleFormatError(f"no {PLAIN_MAGIC.decode()} magic at offset {start:#x}")
    (count,) = struct.unpack_from("<Q", header, 24)
    if count == 0 or count > limits.max_entries:
        raise BundleFormatError(
            f"bundle at offset {start:#x} declares {count} entries "
            f"(accepted: 1..{limits.max_entries})"
        )
    # Read the table in one go when it is small (the usual case), else entry by entry.
    pos = 32
    chunk = source.read_at(start + pos, min(count * 96 + 64, 1 << 16))
    chunk_at = pos
    entries: list[_RawEntry] = []
    for index in range(count):
        fixed = _slice_or_read(source, start, chunk, chunk_at, pos, 24, f"entry {index} header")
        offset, size, id_length = struct.unpack("<QQQ", fixed)
        pos += 24
        if id_length == 0 or id_length > limits.max_id_length:
            raise BundleFormatError(
                f"entry {index} of the bundle at {start:#x} has an ID length of {id_length} "
                f"(accepted: 1..{limits.max_id_length})"
            )
        raw = _slice_or_read(source, start, chunk, chunk_at, pos, id_length, f"entry {index} ID")
        pos += id_length
        try:
            text = raw.decode("ascii")
        except UnicodeDecodeError:
            raise BundleFormatError(
                f"entry {index} of the bundle at {start:#x} has a non-ASCII ID {raw[:40]!r}"
            ) from None
        if not text.isprintable():
            raise BundleFormatError(
                f"entry {index} of the bundle at {start:#x} has an unprintable ID {text[:40]!r}"
            )
        if offset + size > limit:
            raise BundleFormatError(
                f"entry {text!r} of the bundle at {start:#x} spans {offset:#x}+{size:#x}, "
                f"past the end of its data ({limit:#x} bytes): the bundle is truncated or its "
                "entry table lies"
            )
        entries.append(_RawEntry(text=text, offset=offset, size=size))
    return entries, pos


def _slice_or_read(
    source: ByteSource, start: int, chunk: bytes, chunk_at: int, pos: int, size: int, what: str
) -> bytes:
    rel = pos - chunk_at
    if rel + size <= len(chunk):
        return chunk[rel : rel + size]
    return _read_exact(source, start + pos, size, what)


@functools.lru_cache(maxsize=4096)
def check_code_object(
    entry_id: EntryId, header_bytes: bytes | None, mach_name: MachName
) -> CodeObjectCheck:
    """Compare an entry's code-object ELF header with what its ID says (cached: pure)."""
    if entry_id.is_host:
        return CodeObjectCheck(status="host")
    if header_bytes is None:
        return CodeObjectCheck(
            status="not-checked", detail="code object lies beyond the decompressed prefix"
        )
    if not entry_id.is_amdgpu:
        return CodeObjectCheck(status="not-checked", detail="not an AMDGPU entry")
    try:
        header = decode_code_object_header(header_bytes)
    except ElfReadError as exc:
        return CodeObjectCheck(status="mismatch", detail=f"code object: {exc.what}")
    version = header.code_object_version
    base = CodeObjectCheck(status="ok", code_object_version=version, e_flags=header.e_flags)
    problems: list[str] = []
    if header.e_machine != EM_AMDGPU:
        problems.append(f"e_machine is {header.e_machine}, not EM_AMDGPU ({EM_AMDGPU})")
    else:
        name = mach_name(header.mach)
        if name is None:
            return CodeObjectCheck(
                status="not-checked",
                detail=f"EF_AMDGPU_MACH {header.mach:#x} is not in the arch table",
                code_object_version=version,
                e_flags=header.e_flags,
            )
        if name != entry_id.processor:
            problems.append(
                f"ID says {entry_id.processor}, e_flags mach {header.mach:#x} is {name}"
            )
        if (version or 0) >= 4:
            for feature, value in (("xnack", header.xnack), ("sramecc", header.sramecc)):
                wanted = {"+": ("on",), "-": ("off",), "": ("any", "unsupported")}[
                    entry_id.feature(feature)
                ]
                if value not in wanted:
                    problems.append(
                        f"ID says {feature}{entry_id.feature(feature) or ' any'}, "
                        f"e_flags say {feature} {value}"
                    )
    if problems:
        return CodeObjectCheck(
            status="mismatch",
            detail="; ".join(problems),
            code_object_version=version,
            e_flags=header.e_flags,
        )
    return base


def _entries(
    raw: list[_RawEntry],
    header_reader: Callable[[_RawEntry], bytes | None],
    mach_name: MachName,
) -> tuple[Entry, ...]:
    out: list[Entry] = []
    for item in raw:
        entry_id = parse_entry_id(item.text)
        header = None
        if not entry_id.is_host and item.size >= 52:
            header = header_reader(item)
        elif not entry_id.is_host:
            header = b""  # too small to be an ELF: decode reports it
        out.append(
            Entry(
                entry_id=entry_id,
                offset=item.offset,
                size=item.size,
                check=check_code_object(entry_id, header, mach_name),
            )
        )
    return tuple(out)


def parse_plain_bundle(
    source: ByteSource, start: int, limit: int, mach_name: MachName, limits: Limits = DEFAULT_LIMITS
) -> Bundle:
    """The plain bundle at `start`, which may span at most `limit` bytes."""
    raw, table_end = read_entry_table(source, start, limit, limits)

    def header_of(item: _RawEntry) -> bytes:
        return source.read_at(start + item.offset, min(item.size, _CODE_OBJECT_HEADER))

    end = max([table_end, *(e.offset + e.size for e in raw)])
    return Bundle(
        offset=start,
        stored_size=end,
        container="plain",
        uncompressed_size=end,
        entries=_entries(raw, header_of, mach_name),
    )


# ---------------------------------------------------------------------------------------------
# Compressed bundles


class _WindowReader:
    """File-like `read(n)` over [start, end) of a ByteSource, for the decompressors."""

    def __init__(self, source: ByteSource, start: int, end: int) -> None:
        self._source = source
        self._pos = start
        self._end = end

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            size = 1 << 16
        size = min(size, self._end - self._pos)
        if size <= 0:
            return b""
        data = self._source.read_at(self._pos, size)
        self._pos += len(data)
        return data


class _Inflater:
    """Decompresses a payload on demand, never producing more than `cap` bytes."""

    def __init__(
        self,
        method: str,
        reader: _WindowReader,
        cap: int,
        limits: Limits,
        where: str,
        declared: int,
    ) -> None:
        self._cap = cap
        self._declared = declared
        self._where = where
        self.buffer = bytearray()
        self.ended = False
        self._method = method
        self._reader = reader
        if method == "zstd":
            import zstandard

            self._zstd_error: type[Exception] = zstandard.ZstdError
            dctx = _zstd_decompressor(limits.max_zstd_window)
            self._stream = dctx.stream_reader(reader, read_size=131075, read_across_frames=False)
        else:
            self._zlib = zlib.decompressobj()
            self._pending = b""

    def ensure(self, size: int) -> None:
        """Grow the buffer to `size` bytes (bounded by cap), or until the stream ends."""
        size = min(size, self._cap)
        try:
            while len(self.buffer) < size and not self.ended:
                want = max(size - len(self.buffer), 4096)
                piece = self._next(want)
                if not piece:
                    self.ended = True
                    raise BundleFormatError(
                        f"{self._where}: the {self._method} payload ends after "
                        f"{len(self.buffer)} decompressed bytes, the header declares "
                        f"{self._declared} (the header's sizes lie, or the bundle is truncated)"
                    )
                self.buffer += piece
        except self._errors() as exc:
            raise BundleFormatError(
                f"{self._where}: the {self._method} payload does not decompress ({exc})"
            ) from None

    def _errors(self) -> tuple[type[BaseException], ...]:
        if self._method == "zstd":
            return (self._zstd_error, ValueError, OSError)
        return (zlib.error, ValueError)

    def _next(self, want: int) -> bytes:
        if self._method == "zstd":
            return bytes(self._stream.read(want))
        while True:
            if self._zlib.eof:
                return b""
            data = self._zlib.unconsumed_tail or self._reader.read(16384)
            if not data:
                return b""
            out = self._zlib.decompress(data, want)
            if out:
                return out


@functools.lru_cache(maxsize=4)
def _zstd_decompressor(max_window: int) -> Any:
    """One decompression context per window cap, reused bundle after bundle (not threadsafe)."""
    import zstandard

    return zstandard.ZstdDecompressor(max_window_size=max_window)


class _PrefixSource:
    """ByteSource over an inflater's output, clamped to the table cap (reads there are short)."""

    def __init__(self, inflater: _Inflater, cap: int) -> None:
        self._inflater = inflater
        self._cap = cap
        self.hit_cap = False

    def read_at(self, offset: int, size: int) -> bytes:
        if offset < 0 or size < 0:
            return b""
        if offset + size > self._cap:
            self.hit_cap = True
            size = max(self._cap - offset, 0)
        self._inflater.ensure(offset + size)
        return bytes(self._inflater.buffer[offset : offset + size])


def parse_ccob_header(head: bytes, start: int) -> tuple[int, str, int | None, int, int]:
    """(version, method, total size or None for v1, uncompressed size, header size)."""
    if len(head) < 8 or head[:4] != CCOB_MAGIC:
        raise BundleFormatError(f"truncated bundle: no complete CCOB header at {start:#x}")
    version, method_code = struct.unpack_from("<HH", head, 4)
    header_size = _CCOB_HEADER_SIZE.get(version)
    if header_size is None:
        raise BundleFormatError(f"CCOB at {start:#x} has version {version} (known: 1, 2, 3)")
    if len(head) < header_size:
        raise BundleFormatError(f"truncated bundle: CCOB v{version} header at {start:#x}")
    method = _CCOB_METHODS.get(method_code)
    if method is None:
        raise BundleFormatError(
            f"CCOB at {start:#x} uses compression method {method_code} (known: 0 zlib, 1 zstd)"
        )
    total: int | None
    if version == 1:
        total = None
        (uncompressed,) = struct.unpack_from("<I", head, 8)
    elif version == 2:
        total, uncompressed = struct.unpack_from("<II", head, 8)
    else:
        total, uncompressed = struct.unpack_from("<QQ", head, 8)
    return version, method, total, uncompressed, header_size


def parse_ccob_bundle(
    source: ByteSource, start: int, limit: int, mach_name: MachName, limits: Limits = DEFAULT_LIMITS
) -> Bundle:
    """The compressed bundle at `start`; only the first bytes of its payload are decompressed."""
    head = source.read_at(start, 32)
    version, method, total, uncompressed, header_size = parse_ccob_header(head, start)
    where = f"CCOB v{version} at {start:#x}"
    if total is not None and (total <= header_size or total > limit):
        raise BundleFormatError(
            f"{where} declares a total size of {total} bytes, but {limit} bytes remain in the "
            "section (the header's sizes lie)"
        )
    if uncompressed < 32:
        raise BundleFormatError(f"{where} declares an uncompressed size of only {uncompressed}")
    payload_end = start + (total if total is not None else limit)
    reader = _WindowReader(source, start + header_size, payload_end)
    cap = min(uncompressed, limits.max_table_bytes + limits.check_prefix_bytes)
    _check_zstd_content_size(source, start + header_size, method, uncompressed, where)
    inflater = _Inflater(method, reader, cap, limits, where, uncompressed)
    table_cap = min(uncompressed, limits.max_table_bytes)
    table_source = _PrefixSource(inflater, table_cap)
    try:
        raw, _ = read_entry_table(table_source, 0, uncompressed, limits)
    except BundleFormatError as exc:
        if table_source.hit_cap and table_cap < uncompressed:
            raise BundleFormatError(
                f"{where}: the entry table reaches past the first {table_cap} decompressed "
                "bytes that are accepted (possible zip bomb)"
            ) from None
        raise BundleFormatError(
            f"{where} (declaring {uncompressed} uncompressed bytes): {exc.what}"
        ) from None
    # Code-object headers are checked only where they fall inside the check budget.
    budget = min(cap, len(inflater.buffer) + limits.check_prefix_bytes)
    wanted = [e.offset + _CODE_OBJECT_HEADER for e in raw if e.size and e.offset < budget]
    if wanted:
        inflater.ensure(min(max(wanted), budget))
    prefix = inflater.buffer

    def header_of(item: _RawEntry) -> bytes | None:
        need = item.offset + min(item.size, _CODE_OBJECT_HEADER)
        if need > len(prefix):
            return None
        return bytes(prefix[item.offset : need])

    stored = (
        total
        if total is not None
        else header_size
        + _v1_payload_length(source, start + header_size, start + limit, method, limits, where)
    )
    return Bundle(
        offset=start,
        stored_size=stored,
        container=f"ccob-v{version}",
        compression=method,
        uncompressed_size=uncompressed,
        entries=_entries(raw, header_of, mach_name),
    )


def _check_zstd_content_size(
    source: ByteSource, at: int, method: str, uncompressed: int, where: str
) -> None:
    """A zstd frame usually records its content size: it must equal the CCOB header's."""
    if method != "zstd":
        return
    import zstandard

    head = source.read_at(at, 18)
    try:
        content = zstandard.frame_content_size(head)
    except zstandard.ZstdError:
        return  # not a valid frame header: decompression reports it
    if content >= 0 and content != uncompressed:
        raise BundleFormatError(
            f"{where} declares {uncompressed} uncompressed bytes, its zstd frame holds "
            f"{content} (the header's sizes lie)"
        )


def _v1_payload_length(
    source: ByteSource, start: int, end: int, method: str, limits: Limits, where: str
) -> int:
    """CCOB v1 has no total size: find where its compressed stream ends."""
    if method == "zstd":
        return _zstd_frame_length(source, start, end, where)
    inflater = zlib.decompressobj()
    reader = _WindowReader(source, start, end)
    consumed = produced = 0
    try:
        while not inflater.eof:
            data = inflater.unconsumed_tail or reader.read(1 << 16)
            if not data:
                raise BundleFormatError(f"{where}: zlib stream is truncated")
            if not inflater.unconsumed_tail:
                consumed += len(data)
            produced += len(inflater.decompress(data, 1 << 16))
            if produced > limits.max_v1_inflate:
                raise BundleFormatError(
                    f"{where}: more than {limits.max_v1_inflate} bytes inflated while looking "
                    "for the end of a v1 zlib stream (possible zip bomb)"
                )
    except zlib.error as exc:
        raise BundleFormatError(f"{where}: zlib payload does not decompress ({exc})") from None
    return consumed - len(inflater.unused_data)


def _zstd_frame_length(source: ByteSource, start: int, end: int, where: str) -> int:
    """Length of the zstd frame at `start`, from its block headers (RFC 8878), no decoding."""
    head = source.read_at(start, 18)
    if len(head) < 6 or head[:4] != b"\x28\xb5\x2f\xfd":
        raise BundleFormatError(f"{where}: payload is not a zstd frame")
    descriptor = head[4]
    fcs_flag, single, checksum, dict_flag = (
        descriptor >> 6,
        (descriptor >> 5) & 1,
        (descriptor >> 2) & 1,
        descriptor & 3,
    )
    pos = 5 + (0 if single else 1) + (0, 1, 2, 4)[dict_flag]
    pos += (1 if single else 0, 2, 4, 8)[fcs_flag]
    while True:
        block = source.read_at(start + pos, 3)
        if len(block) < 3:
            raise BundleFormatError(f"{where}: zstd frame is truncated")
        value = block[0] | block[1] << 8 | block[2] << 16
        last, kind, size = value & 1, (value >> 1) & 3, value >> 3
        if kind == 3:
            raise BundleFormatError(f"{where}: zstd frame has a reserved block type")
        pos += 3 + (1 if kind == 1 else size)
        if start + pos > end:
            raise BundleFormatError(f"{where}: zstd frame runs past the end of the section")
        if last:
            break
    return pos + (4 if checksum else 0)


# ---------------------------------------------------------------------------------------------
# Walking a section


class _ReadAhead:
    """ByteSource that serves reads inside the last window it fetched (one read per bundle).

    Stepping to a bundle reads a window at the end of the previous one; the padding, the next
    bundle's header and entry table, and usually its first code-object header all fall inside.
    """

    WINDOW = 16 << 10

    def __init__(self, source: ByteSource) -> None:
        self._source = source
        self._at = 0
        self._data = b""

    def fill(self, offset: int) -> bytes:
        self._at, self._data = offset, self._source.read_at(offset, self.WINDOW)
        return self._data

    def read_at(self, offset: int, size: int) -> bytes:
        rel = offset - self._at
        if rel >= 0 and rel + size <= len(self._data):
            return self._data[rel : rel + size]
        return self._source.read_at(offset, size)


def _skip_padding(source: _ReadAhead, pos: int, size: int) -> int:
    """First non-zero byte at or after `pos` (bundles are padded to 4096 with zeros)."""
    chunk = source.fill(pos)
    while pos < size:
        if not chunk:
            return size
        if chunk[0]:
            return pos
        stripped = chunk.lstrip(b"\0")
        if stripped:
            return pos + len(chunk) - len(stripped)
        pos += len(chunk)
        chunk = source.fill(pos)
    return size


def parse_bundle_at(
    source: ByteSource, start: int, size: int, mach_name: MachName, limits: Limits = DEFAULT_LIMITS
) -> Bundle:
    """The bundle (plain or CCOB) at `start` of a section of `size` bytes."""
    magic = source.read_at(start, len(PLAIN_MAGIC))
    if magic == PLAIN_MAGIC:
        return parse_plain_bundle(source, start, size - start, mach_name, limits)
    if magic[:4] == CCOB_MAGIC:
        return parse_ccob_bundle(source, start, size - start, mach_name, limits)
    raise BundleFormatError(
        f"bytes at section offset {start:#x} ({magic[:8].hex()}) start neither a "
        f"{PLAIN_MAGIC.decode()} nor a CCOB bundle"
    )


def walk_fatbin(
    source: ByteSource, size: int, mach_name: MachName, limits: Limits = DEFAULT_LIMITS
) -> FatbinScan:
    """Every bundle of a `.hip_fatbin`-like section, stepping by each bundle's own size.

    A malformed bundle ends the walk (its size cannot be trusted, so the next bundle's position
    is unknown); the bundles before it are kept and the problem is returned with its offset.
    """
    bundles: list[Bundle] = []
    pos = 0
    ahead = _ReadAhead(source)
    while True:
        pos = _skip_padding(ahead, pos, size)
        if pos >= size:
            return FatbinScan(bundles=tuple(bundles))
        try:
            bundle = parse_bundle_at(ahead, pos, size, mach_name, limits)
        except BundleFormatError as exc:
            return FatbinScan(bundles=tuple(bundles), problem=exc.what, problem_offset=pos)
        bundles.append(bundle)
        pos += max(bundle.stored_size, 1)
