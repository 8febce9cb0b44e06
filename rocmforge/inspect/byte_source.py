"""Random access to byte ranges: the `ByteSource` protocol the bundle, kpack and code-object
readers read through, and its sources (a buffer or an mmap, bytes in memory, a seekable stream,
a stored wheel member's place in its zip file).

Owns: reading [offset, offset+size) of a range without loading the range (pread on a file
descriptor, slices of a mapping) and handing mapped pages back. Must not: parse any format but
a zip local header, walk directories, or print.
"""

from __future__ import annotations

import contextlib
import io
import mmap
import os
import struct
import zipfile
from typing import IO, Protocol


class ByteSource(Protocol):
    """Random access to a byte range; short reads mean the range ends there."""

    def read_at(self, offset: int, size: int) -> bytes: ...


class BufferSource:
    """A ByteSource over [base, base+size) of a buffer: bytes, or an mmap of the whole file.

    The walk recognises it and slices the buffer directly instead of calling `read_at`.
    """

    __slots__ = ("base", "buffer", "size")

    def __init__(self, buffer: bytes | mmap.mmap, base: int = 0, size: int | None = None) -> None:
        self.buffer = buffer
        self.base = base
        self.size = len(buffer) - base if size is None else size

    def read_at(self, offset: int, size: int) -> bytes:
        if offset < 0 or size <= 0 or offset >= self.size:
            return b""
        end = min(offset + size, self.size)
        return bytes(self.buffer[self.base + offset : self.base + end])

    def release_before(self, offset: int) -> None:
        """Unmap the pages before `offset` that the walk is done with (mmap only).

        Each page fault maps its neighbours too (fault-around), so without this a walk over a
        1 GiB file would end with most of it counted in the process's RSS. The pages stay in
        the page cache; only this process's mapping of them goes.
        """
        if not isinstance(self.buffer, mmap.mmap):
            return
        end = (self.base + offset) // mmap.PAGESIZE * mmap.PAGESIZE
        start = self.base // mmap.PAGESIZE * mmap.PAGESIZE
        if end > start:
            with contextlib.suppress(OSError, ValueError, AttributeError):
                self.buffer.madvise(mmap.MADV_DONTNEED, start, end - start)


class BytesSource(BufferSource):
    """A ByteSource over bytes already in memory (tests, fuzzing)."""

    def __init__(self, data: bytes) -> None:
        super().__init__(bytes(data))

    @property
    def data(self) -> bytes:
        return bytes(self.buffer)


class StreamSource:
    """ByteSource over [base, base+size) of a seekable binary stream."""

    def __init__(self, stream: IO[bytes], base: int, size: int) -> None:
        self._stream = stream
        self._base = base
        self._size = size
        self._fd: int | None = None
        if isinstance(stream, io.FileIO | io.BufferedReader):
            self._fd = stream.fileno()  # pread: no seek, no 8 KiB buffer fill per small read

    def read_at(self, offset: int, size: int) -> bytes:
        if offset < 0 or size <= 0 or offset >= self._size:
            return b""
        size = min(size, self._size - offset)
        if self._fd is not None:
            return os.pread(self._fd, size, self._base + offset)
        self._stream.seek(self._base + offset)
        return self._stream.read(size)


def member_data_offset(raw: IO[bytes], info: zipfile.ZipInfo) -> int:
    """Where a member's (compressed) bytes start: after its local header."""
    raw.seek(info.header_offset)
    local = raw.read(30)
    if len(local) < 30 or local[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"bad local header for {info.filename}")
    name_len, extra_len = struct.unpack_from("<HH", local, 26)
    return info.header_offset + 30 + name_len + extra_len
