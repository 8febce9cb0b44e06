"""Compressed offload bundles (`CCOB` v1/v2/v3): the header, and bounded decompression.

Owns: parsing a CCOB header (reference rocm-arch-toolchain.md §5.3; the method codes of
llvm::compression::Format, OffloadBundle.h), the decompression of a payload's first bytes
without ever producing more than a cap (`Inflater`, zlib or zstd), a file-like window on a
`ByteSource` for the decompressors (`WindowReader`, in place over a mapping), the zstd frame
header's declared content size and frame length read from block headers (RFC 8878), and the
end of a v1 zlib stream (no total size in its header), bounded against zip bombs.
Must not: walk a section (bundles.py does), open files, print, or raise anything but
`BundleFormatError`.
"""

from __future__ import annotations

import mmap
import struct
import threading
import zlib
from typing import TYPE_CHECKING, Any

from rocmforge.inspect.bundle_records import CCOB_MAGIC, BundleFormatError, Limits
from rocmforge.inspect.byte_source import BufferSource, ByteSource

if TYPE_CHECKING:
    from zstandard import ZstdDecompressor

_CCOB_METHODS = {0: "zlib", 1: "zstd"}  # llvm::compression::Format (OffloadBundle.h)
_CCOB_HEADER_SIZE = {1: 20, 2: 24, 3: 32}


class WindowReader:
    """File-like `read(n)` over [start, end) of a ByteSource, for the decompressors.

    Over a BufferSource it hands out memoryview slices (no copies) and offers the whole window
    as `view`, which zstd reads in place; `close()` must run before the buffer's mmap closes.
    """

    def __init__(self, source: ByteSource, start: int, end: int) -> None:
        self._source = source
        self._pos = start
        self._end = end
        self.view: memoryview | None = None
        if isinstance(source, BufferSource):
            lo = source.base + start
            hi = source.base + min(max(end, start), source.size)
            self.view = memoryview(source.buffer)[lo:hi]
            self._pos, self._end = 0, len(self.view)

    def read(self, size: int = -1) -> bytes | memoryview:
        if size < 0:
            size = 1 << 16
        size = min(size, self._end - self._pos)
        if size <= 0:
            return b""
        data: bytes | memoryview
        if self.view is not None:
            data = self.view[self._pos : self._pos + size]
        else:
            data = self._source.read_at(self._pos, size)
        self._pos += len(data)
        return data

    def close(self) -> None:
        if self.view is not None:
            self.view.release()
            self.view = None


class Inflater:
    """Decompresses a payload on demand, never producing more than `cap` bytes."""

    def __init__(
        self,
        method: str,
        reader: WindowReader,
        cap: int,
        limits: Limits,
        where: str,
        declared: int,
    ) -> None:
        self._cap = cap
        self._declared = declared
        self._where = where
        self.data = b""  # the decompressed prefix produced so far
        self.ended = False
        self._taken = 0
        self._method = method
        self._reader = reader
        if method == "zstd":
            import zstandard

            self._zstd_error: type[Exception] = zstandard.ZstdError
            dctx = zstd_decompressor(limits.max_zstd_window)
            # A zstd block (up to 128 KiB) is decoded whole: read it in one go, in place
            # when the payload is mapped.
            source = reader.view if reader.view is not None else reader
            self._stream: Any = dctx.stream_reader(
                source, read_size=131075, read_across_frames=False  # type: ignore[arg-type]
            )  # WindowReader has the read() zstandard calls: a file-like object in all but name
        else:
            self._zlib = zlib.decompressobj()
            self._pending = b""

    def ensure(self, size: int) -> None:
        """Grow `data` to `size` bytes (bounded by cap), or until the stream ends."""
        size = min(size, self._cap)
        have = len(self.data)
        if have >= size or self.ended:
            return
        parts = [self.data] if have else []
        try:
            while have < size:
                piece = self._next(max(size - have, 4096))
                if not piece:
                    self.ended = True
                    break
                parts.append(piece)
                have += len(piece)
        except self._errors() as exc:
            raise BundleFormatError(
                f"{self._where}: the {self._method} payload does not decompress ({exc})"
            ) from None
        finally:
            self.data = parts[0] if len(parts) == 1 else b"".join(parts)
        if self.ended:
            raise self._ended_early(have)

    def take(self, size: int) -> bytes:
        """The next `size` decompressed bytes, without keeping them (deep checks)."""
        parts: list[bytes] = []
        have = 0
        try:
            while have < size:
                piece = self._next(size - have)
                if not piece:
                    raise self._ended_early(self._taken + have)
                parts.append(piece)
                have += len(piece)
        except self._errors() as exc:
            raise BundleFormatError(
                f"{self._where}: the {self._method} payload does not decompress ({exc})"
            ) from None
        self._taken += have
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def expect_end(self) -> None:
        """After the declared bytes: the stream must end there, neither later nor cut short."""
        try:
            extra = self._next(1)
            cut = self._method == "zlib" and not self._zlib.eof
        except self._errors() as exc:
            raise BundleFormatError(
                f"{self._where}: the {self._method} payload does not decompress ({exc})"
            ) from None
        if extra:
            raise BundleFormatError(
                f"{self._where}: the {self._method} payload holds more than the "
                f"{self._declared} bytes the header declares (the header's sizes lie)"
            )
        if cut:
            raise BundleFormatError(f"{self._where}: the zlib stream is truncated")

    def _ended_early(self, got: int) -> BundleFormatError:
        return BundleFormatError(
            f"{self._where}: the {self._method} payload ends after "
            f"{got} decompressed bytes, the header declares "
            f"{self._declared} (the header's sizes lie, or the bundle is truncated)"
        )

    def close(self) -> None:
        """Drop the decompressor (and with it its hold on the payload's buffer)."""
        self._stream = None

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


_ZSTD = threading.local()


def zstd_decompressor(max_window: int) -> ZstdDecompressor:
    """One decompression context per thread and window cap, reused bundle after bundle (a
    context is not threadsafe; wheel members are read in parallel threads)."""
    import zstandard

    contexts = _ZSTD.__dict__.setdefault("contexts", {})
    dctx = contexts.get(max_window)
    if dctx is None:
        dctx = contexts[max_window] = zstandard.ZstdDecompressor(max_window_size=max_window)
    return dctx


def zstd_prefix(dctx: ZstdDecompressor, view: memoryview, want: int) -> bytes | None:
    """The first `want` decompressed bytes of the zstd frame in `view` (fewer when it ends
    first), or None when it does not decompress. The reader is gone before this returns, so
    the caller can release `view`."""
    import zstandard

    reader = dctx.stream_reader(view, read_size=131075, read_across_frames=False)
    try:
        return bytes(reader.read(want))
    except (zstandard.ZstdError, ValueError, OSError):
        return None
    finally:
        del reader


def zstd_declared_size(buf: bytes | mmap.mmap, at: int, end: int) -> int | None:
    """The content size the zstd frame header at `buf[at:]` declares (RFC 8878 3.1.1.1): -1
    when it declares none, None when the bytes are not a frame header."""
    if at + 6 > end or buf[at : at + 4] != b"\x28\xb5\x2f\xfd":
        return None
    descriptor = buf[at + 4]
    fcs_flag, single = descriptor >> 6, (descriptor >> 5) & 1
    if descriptor & 0x08:
        return None  # the reserved bit
    field = at + 5 + (0 if single else 1) + (0, 1, 2, 4)[descriptor & 3]
    width = (1 if single else 0, 2, 4, 8)[fcs_flag]
    if not width:
        return -1
    if field + width > end:
        return None
    value = int.from_bytes(buf[field : field + width], "little")
    return value + 256 if width == 2 else value


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


def check_zstd_content_size(
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


def v1_payload_length(
    source: ByteSource, start: int, end: int, method: str, limits: Limits, where: str
) -> int:
    """CCOB v1 has no total size: find where its compressed stream ends."""
    if method == "zstd":
        return zstd_frame_length(source, start, end, where)
    inflater = zlib.decompressobj()
    reader = WindowReader(source, start, end)
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


def zstd_frame_length(source: ByteSource, start: int, end: int, where: str) -> int:
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
