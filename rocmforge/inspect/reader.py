"""Finding and opening the ELF files to inspect: plain files, directory trees, wheel members.

Owns: walking paths (thousands of files are fine: only 4 bytes of each are read to spot ELF),
mapping files and wheels read-only (mmap: the walk touches only the pages of bundle headers,
entry tables and code-object headers, and hands them back as it goes), reading wheel members in
place (a stored member is a window on the mapped zip file; a deflated one is streamed, with a
small block cache for the seeks pyelftools makes), and turning every per-file
failure into a `LibraryReport` with status "error" so the other files are still reported.
Must not: write anything, extract wheels to disk, print, or load whole sections into memory.
"""

from __future__ import annotations

import contextlib
import functools
import io
import mmap
import os
import stat
import struct
import zipfile
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO

from rocmforge.inspect.bundles import (
    DEFAULT_LIMITS,
    BufferSource,
    Bundle,
    BundleFormatError,
    ByteSource,
    Damage,
    EntryId,
    Limits,
    MachName,
    parse_entry_id,
    walk_fatbin,
)
from rocmforge.inspect.elf import ELF_MAGIC, RDC_BUNDLE_PREFIX, ElfReadError, read_host_layout
from rocmforge.inspect.report import InspectReport, LibraryReport

# Members of a wheel that are never ELF; anything else gets its first 4 bytes read.
_TEXT_SUFFIXES = (
    ".py", ".pyi", ".pyc", ".h", ".hpp", ".cuh", ".hip", ".txt", ".json", ".cmake", ".md",
    ".yaml", ".yml", ".toml", ".cfg", ".typed", ".pth", ".csv", ".html", ".js", ".css",
)  # fmt: skip
_WHEEL_SUFFIXES = (".whl", ".zip")


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


class _Positioned:
    """seek()/tell() of a read-only view `_length` bytes long; subclasses implement read()."""

    _length: int
    _pos: int

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._pos, os.SEEK_END: self._length}[whence]
        self._pos = max(base + offset, 0)
        return self._pos

    def tell(self) -> int:
        return self._pos


class _Window(_Positioned):
    """A read-only, seekable file object over [start, start+length) of another file."""

    def __init__(self, raw: IO[bytes], start: int, length: int) -> None:
        self._raw = raw
        self._start = start
        self._length = length
        self._pos = 0

    def read(self, size: int = -1) -> bytes:
        remaining = self._length - self._pos
        if remaining <= 0:
            return b""
        size = remaining if size is None or size < 0 else min(size, remaining)
        self._raw.seek(self._start + self._pos)
        data = self._raw.read(size)
        self._pos += len(data)
        return data


class _BlockCache(_Positioned):
    """Seekable reads over a forward-only-cheap stream (a deflated zip member).

    Seeking backwards in a deflated member means inflating from its start again; caching the
    last blocks read (16 MiB at most) serves pyelftools' small back-and-forth header reads.
    """

    BLOCK = 1 << 16

    def __init__(self, raw: IO[bytes], length: int, blocks: int = 256) -> None:
        self._raw = raw
        self._length = length
        self._blocks: OrderedDict[int, bytes] = OrderedDict()
        self._capacity = blocks
        self._pos = 0

    def _block(self, index: int) -> bytes:
        block = self._blocks.get(index)
        if block is None:
            self._raw.seek(index * self.BLOCK)
            block = self._raw.read(self.BLOCK)
            self._blocks[index] = block
            if len(self._blocks) > self._capacity:
                self._blocks.popitem(last=False)
        else:
            self._blocks.move_to_end(index)
        return block

    def read(self, size: int = -1) -> bytes:
        end = self._length if size is None or size < 0 else min(self._length, self._pos + size)
        parts: list[bytes] = []
        while self._pos < end:
            index, within = divmod(self._pos, self.BLOCK)
            block = self._block(index)
            piece = block[within : within + end - self._pos]
            if not piece:
                break
            parts.append(piece)
            self._pos += len(piece)
        return b"".join(parts)


def default_mach_name() -> MachName:
    """EF_AMDGPU_MACH -> processor name, from the kit's arch table (config/arches.toml)."""
    from rocmforge.knowledge.arches import load_arch_table

    table = load_arch_table()

    def name(mach: int) -> str | None:
        arch = table.by_mach(mach)
        return arch.name if arch is not None else None

    return name


def inspect_paths(
    paths: Sequence[Path],
    *,
    mach_name: MachName | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> InspectReport:
    """Inspect files, directories and wheels; a failure in one file never hides the others."""
    names = mach_name or default_mach_name()
    libraries: list[LibraryReport] = []
    skipped = 0
    for path in paths:
        for item in _expand(Path(path)):
            if item is None:
                skipped += 1
            else:
                libraries.extend(item(names, limits))
    return InspectReport(libraries=tuple(libraries), skipped_files=skipped)


_Job = Callable[[MachName, Limits], list[LibraryReport]]


def _expand(path: Path) -> Iterator[_Job | None]:
    """Jobs for a path given by the user; None for each non-ELF file skipped in a directory."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        yield _failed(str(path), f"cannot read it ({exc.strerror or exc})")
        return
    if stat.S_ISDIR(mode):
        yield from _walk_directory(path)
    elif path.name.endswith(_WHEEL_SUFFIXES):
        yield lambda names, limits: _inspect_wheel(path, names, limits)
    else:
        yield lambda names, limits: [_inspect_file(path, names, limits)]


def _walk_directory(root: Path) -> Iterator[_Job | None]:
    errors: list[OSError] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=errors.append):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.is_symlink():
                continue  # the target is (or is not) inspected under its own name
            if name.endswith(_WHEEL_SUFFIXES):
                yield functools.partial(_inspect_wheel, path)
            elif not _looks_like_elf(path):
                yield None
            else:
                yield functools.partial(_inspect_file_as_list, path)
    for exc in errors:
        yield _failed(str(exc.filename), f"cannot list it ({exc.strerror or exc})")


def _inspect_file_as_list(path: Path, names: MachName, limits: Limits) -> list[LibraryReport]:
    return [_inspect_file(path, names, limits)]


def _looks_like_elf(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == ELF_MAGIC
    except OSError:
        return True  # let _inspect_file report why it cannot be read


def _failed(display: str, error: str) -> _Job:
    return lambda names, limits: [LibraryReport(path=display, status="error", error=error)]


def _mapped(handle: IO[bytes], size: int) -> AbstractContextManager[mmap.mmap | None]:
    """A read-only map of the whole file, or None where one cannot be made (empty, a pipe)."""
    if size <= 0:
        return contextlib.nullcontext()
    try:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return contextlib.nullcontext()
    # Default read-around, not MADV_RANDOM: on a cold cache MADV_RANDOM turns each touched page
    # into its own synchronous 4 KiB read (a zstd block spans 32 pages); read-around batches
    # them. Warm, the two cost the same. (benchmarks/inspect_speed.py --cold)
    return mapped


def _inspect_file(path: Path, names: MachName, limits: Limits) -> LibraryReport:
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            with _mapped(handle, size) as mapped:
                return inspect_stream(handle, size, str(path), names, limits, buffer=mapped)
    except OSError as exc:
        return LibraryReport(
            path=str(path), status="error", error=f"cannot read it ({exc.strerror or exc})"
        )


def _inspect_wheel(path: Path, names: MachName, limits: Limits) -> list[LibraryReport]:
    try:
        with (
            open(path, "rb") as raw,
            zipfile.ZipFile(raw) as archive,
            _mapped(raw, os.fstat(raw.fileno()).st_size) as mapped,
        ):
            out: list[LibraryReport] = []
            for info in archive.infolist():
                if info.is_dir() or info.filename.endswith(_TEXT_SUFFIXES):
                    continue
                display = f"{path}!{info.filename}"
                try:
                    report = _inspect_member(raw, mapped, archive, info, display, names, limits)
                except (OSError, zipfile.BadZipFile, zlib.error, EOFError, RuntimeError) as exc:
                    report = LibraryReport(
                        path=display, status="error", error=f"cannot read the member ({exc})"
                    )
                if report is not None:
                    out.append(report)
            return out
    except (OSError, zipfile.BadZipFile, zlib.error, EOFError) as exc:
        return [LibraryReport(path=str(path), status="error", error=f"not a readable zip ({exc})")]


def _inspect_member(
    raw: IO[bytes],
    mapped: mmap.mmap | None,
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    display: str,
    names: MachName,
    limits: Limits,
) -> LibraryReport | None:
    if info.compress_type == zipfile.ZIP_STORED and not info.flag_bits & 0x1:
        raw.seek(info.header_offset)
        local = raw.read(30)
        if len(local) < 30 or local[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile(f"bad local header for {info.filename}")
        name_len, extra_len = struct.unpack_from("<HH", local, 26)
        data_at = info.header_offset + 30 + name_len + extra_len
        stream: IO[bytes] = _Window(raw, data_at, info.file_size)  # type: ignore[assignment]
        if stream.read(4) != ELF_MAGIC:
            return None
        return inspect_stream(
            stream, info.file_size, display, names, limits, buffer=mapped, buffer_base=data_at
        )
    with archive.open(info) as member:
        if member.read(4) != ELF_MAGIC:
            return None
        cached: IO[bytes] = _BlockCache(member, info.file_size)  # type: ignore[assignment]
        return inspect_stream(cached, info.file_size, display, names, limits)


def inspect_stream(
    stream: IO[bytes],
    size: int,
    display: str,
    names: MachName,
    limits: Limits = DEFAULT_LIMITS,
    *,
    buffer: mmap.mmap | None = None,
    buffer_base: int = 0,
) -> LibraryReport:
    """Inspect one ELF file given as a seekable stream of `size` bytes.

    `buffer`, when given, maps the same bytes from `buffer_base` on: bundles are then parsed in
    place instead of read through the stream.
    """
    try:
        layout = read_host_layout(stream)
    except ElfReadError as exc:
        return LibraryReport(path=display, status="error", error=exc.what)
    notes: list[str] = []
    rdc: list[EntryId] = []
    for span in layout.rdc_sections:
        try:
            rdc.append(parse_entry_id(span.name[len(RDC_BUNDLE_PREFIX) :]))
        except BundleFormatError as exc:
            notes.append(f"section {span.name}: {exc.what}")
    if layout.rdc_sections:
        notes.append(
            "-fgpu-rdc object: device code is in __CLANG_OFFLOAD_BUNDLE__* sections, linked later"
        )
    if layout.llvm_offloading is not None:
        notes.append(
            f".llvm.offloading section ({layout.llvm_offloading.size} bytes, new offload "
            "driver): its images are not decoded here; `llvm-objdump --offloading` lists them"
        )
    if layout.kpack_ref:
        notes.append(
            ".rocm_kpack_ref present: kernels live in separate device packages "
            "(TheRock multi-arch, *-device-gfx* wheels)"
        )
    fatbin = layout.hip_fatbin
    rdc_status = "rdc" if (rdc or layout.llvm_offloading is not None) else "no-device-code"
    if fatbin is None:
        if rdc_status == "no-device-code":
            notes.append("no .hip_fatbin section: this file carries no HIP device code")
        return LibraryReport(
            path=display, status=rdc_status, rdc_entries=tuple(rdc), notes=tuple(notes)
        )
    if fatbin.nobits or fatbin.size == 0:
        notes.insert(
            0,
            ".hip_fatbin is stripped (NOBITS or empty): the targets cannot be read from this "
            "file; look for the kernels in separate device packages",
        )
        return LibraryReport(
            path=display, status="stripped", rdc_entries=tuple(rdc), notes=tuple(notes)
        )
    if fatbin.offset + fatbin.size > size:
        return LibraryReport(
            path=display,
            status="error",
            notes=tuple(notes),
            error=(
                f".hip_fatbin ({fatbin.size} bytes at file offset {fatbin.offset:#x}) runs past "
                f"the end of the file ({size} bytes): the file is truncated"
            ),
        )
    source: ByteSource
    if buffer is not None:
        source = BufferSource(buffer, buffer_base + fatbin.offset, fatbin.size)
    else:
        source = StreamSource(stream, fatbin.offset, fatbin.size)
    scan = walk_fatbin(source, fatbin.size, names, limits)
    if scan.damage:
        return LibraryReport(
            path=display,
            status="partial" if scan.bundles else "error",
            bundles=scan.bundles,
            rdc_entries=tuple(rdc),
            notes=tuple(notes),
            error=damage_summary(scan.bundles, scan.damage),
            damage=scan.damage,
        )
    return LibraryReport(
        path=display, status="ok", bundles=scan.bundles, rdc_entries=tuple(rdc), notes=tuple(notes)
    )


def damage_summary(bundles: Sequence[Bundle], damage: Sequence[Damage]) -> str:
    """One paragraph: the first malformed bundle, where the walk resumed, how much was lost."""
    first = damage[0]
    before = sum(1 for b in bundles if b.offset < first.offset)
    text = f"bundle {before + 1} at .hip_fatbin offset {first.offset:#x}: {first.problem}"
    if first.resumed_at is not None:
        text += (
            f"; the walk resumed at the next bundle magic, offset {first.resumed_at:#x} "
            f"({first.resumed_at - first.offset} bytes skipped)"
        )
    else:
        text += "; no bundle magic follows at a 4096-byte boundary"
    if len(damage) > 1:
        text += f"; {len(damage)} damaged regions in all"
    return text


def expand_path_words(words: Sequence[str]) -> list[Path]:
    """The paths the user meant: each word with glob characters expanded (sorted), a word that
    matches nothing or has none kept as given (so the report names it as unreadable)."""
    import glob

    found: list[Path] = []
    for word in words:
        matches = sorted(glob.glob(word)) if glob.has_magic(word) else []
        found.extend(Path(m) for m in matches or [word])
    return found
