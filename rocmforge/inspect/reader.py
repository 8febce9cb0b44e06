"""Finding and opening the ELF files to inspect: plain files, directory trees, wheel members.

Owns: walking paths (thousands of files are fine: only 4 bytes of each are read to spot ELF),
mapping files and wheels read-only (mmap: the walk touches only the pages of bundle headers,
entry tables and code-object headers, and hands them back as it goes), reading wheel members in
place (a stored member is a window on the mapped zip file; a deflated one is read in one pass
by `member`, or streamed twice with a small block cache when that cannot answer; large members
in parallel threads), the raw-byte scan of a file whose section table is lost, what the user
gave that cannot be inspected at all (`unusable_paths`), and turning every per-file failure
into a `LibraryReport` with status "error" so the other files are still reported.
Must not: write anything, extract wheels to disk, print, or load whole sections into memory.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import stat
import zipfile
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO

from rocmforge.inspect.assembly import (
    ReadOptions,
    assemble,
    damaged_file_report,
    readable_fatbin,
)
from rocmforge.inspect.bundle_records import DEFAULT_LIMITS, FatbinScan, Limits, MachName
from rocmforge.inspect.bundles import scan_raw_bytes, walk_fatbin
from rocmforge.inspect.byte_source import (
    BufferSource,
    ByteSource,
    StreamSource,
    member_data_offset,
)
from rocmforge.inspect.elf import (
    ELF_MAGIC,
    ElfReadError,
    SectionSpan,
    read_host_layout,
)
from rocmforge.inspect.kpack import MAGIC as KPACK_MAGIC
from rocmforge.inspect.member import inflater, inspect_deflated
from rocmforge.inspect.rawcode import RawCodeObject, find_raw_code_objects
from rocmforge.inspect.report import InspectReport, LibraryReport, SourceRead

# Members of a wheel that are never ELF; anything else gets its first 4 bytes read.
_TEXT_SUFFIXES = (
    ".py", ".pyi", ".pyc", ".h", ".hpp", ".cuh", ".hip", ".txt", ".json", ".cmake", ".md",
    ".yaml", ".yml", ".toml", ".cfg", ".typed", ".pth", ".csv", ".html", ".js", ".css",
)  # fmt: skip
_WHEEL_SUFFIXES = (".whl", ".zip")


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
    deep: bool = False,
    inflater: str = "",
) -> InspectReport:
    """Inspect files, directories and wheels; a failure in one file never hides the others.

    `deep`: decompress every compressed bundle whole, check its hash, and cross-check every
    code object (the default reads only entry tables and the headers within a small prefix).
    `inflater`: the module that inflates deflated wheel members ("": the fastest installed,
    see rocmforge.inspect.member.INFLATERS).
    """
    options = ReadOptions(names=mach_name or default_mach_name(), limits=limits, deep=deep,
                          inflater=inflater)  # fmt: skip
    libraries: list[LibraryReport] = []
    sources: list[SourceRead] = []
    skipped = 0
    for path in paths:
        source, found, passed = _read_source(Path(path), options)
        sources.append(source)
        libraries.extend(found)
        skipped += passed
    if any(lib.kpack_ref is not None for lib in libraries) or any(
        s.kind in ("wheel", "directory", "kpack") for s in sources
    ):
        from rocmforge.inspect.kpack_links import link_kpack

        libraries, sources = link_kpack(libraries, sources, options)
        # The archives in wheels and directories were passed over as non-ELF files; they are
        # counted as archives now (an archive given by itself was never counted as skipped).
        skipped = max(0, skipped - sum(s.archives for s in sources if s.kind != "kpack"))
    return InspectReport(libraries=tuple(libraries), skipped_files=skipped,
                         sources=tuple(sources), deep=deep)  # fmt: skip


def _read_source(path: Path, options: ReadOptions) -> tuple[SourceRead, list[LibraryReport], int]:
    """One path the user gave: what it is, the libraries in it, and how many files were not ELF."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        failed = LibraryReport(path=str(path), status="error",
                               error=f"cannot read it ({exc.strerror or exc})")  # fmt: skip
        return SourceRead(path=str(path), kind="missing"), [failed], 0
    if stat.S_ISDIR(mode):
        libs, files, skipped = _walk_directory(path, options)
        kind = "directory"
    elif path.name.endswith(_WHEEL_SUFFIXES):
        libs, files, skipped = _inspect_wheel(path, options)
        kind = "wheel"
    elif _starts_with(path, KPACK_MAGIC):
        return SourceRead(path=str(path), kind="kpack", files=1), [], 0
    else:
        libs, files, skipped = [_inspect_file(path, options)], 1, 0
        kind = "file"
    elf = sum(1 for lib in libs if not lib.error.startswith(_NOT_LISTED))
    return SourceRead(path=str(path), kind=kind, files=files, elf_files=elf), libs, skipped


_NOT_LISTED = "cannot list it"


def _walk_directory(root: Path, options: ReadOptions) -> tuple[list[LibraryReport], int, int]:
    errors: list[OSError] = []
    libs: list[LibraryReport] = []
    files = skipped = 0
    for dirpath, dirnames, filenames in os.walk(root, onerror=errors.append):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.is_symlink():
                continue  # the target is (or is not) inspected under its own name
            files += 1
            if name.endswith(_WHEEL_SUFFIXES):
                found, _, passed = _inspect_wheel(path, options)
                libs.extend(found)
                skipped += passed
            elif not _looks_like_elf(path):
                skipped += 1
            else:
                libs.append(_inspect_file(path, options))
    for exc in errors:
        libs.append(LibraryReport(path=str(exc.filename), status="error",
                                  error=f"{_NOT_LISTED} ({exc.strerror or exc})"))  # fmt: skip
    return libs, files, skipped


def _looks_like_elf(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == ELF_MAGIC
    except OSError:
        return True  # let _inspect_file report why it cannot be read


def _starts_with(path: Path, magic: bytes) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(len(magic)) == magic
    except OSError:
        return False


def unusable_paths(paths: Sequence[Path]) -> tuple[str, ...]:
    """Why each path the user gave cannot be inspected at all (bad input), in order.

    A path must exist and be a directory, a wheel/zip (by name; a damaged one is reported as a
    FAIL row, not here), or a file that starts with the ELF magic.
    """
    out: list[str] = []
    for path in paths:
        try:
            mode = path.stat().st_mode
        except OSError as exc:
            out.append(f"{path}: {exc.strerror or exc}")
            continue
        if stat.S_ISDIR(mode) or path.name.endswith(_WHEEL_SUFFIXES):
            continue
        try:
            with open(path, "rb") as handle:
                magic = handle.read(4)
        except OSError as exc:
            out.append(f"{path}: {exc.strerror or exc}")
            continue
        if magic not in (ELF_MAGIC, KPACK_MAGIC):
            out.append(f"{path}: not a wheel, directory, ELF file or kpack archive "
                       f"(it starts with {magic.hex() or 'nothing'}, not \\x7fELF or KPAK)")
    return tuple(out)


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


def _inspect_file(path: Path, options: ReadOptions) -> LibraryReport:
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            with _mapped(handle, size) as mapped:
                return inspect_stream(handle, size, str(path), options, buffer=mapped)
    except OSError as exc:
        return LibraryReport(
            path=str(path), status="error", error=f"cannot read it ({exc.strerror or exc})"
        )


# Members at least this large are read in parallel threads (inflating releases the GIL).
_PARALLEL_BYTES = 32 << 20
_MAX_THREADS = 4


def _inspect_wheel(path: Path, options: ReadOptions) -> tuple[list[LibraryReport], int, int]:
    """The libraries in a wheel, how many members were looked at, and how many were not ELF.

    Large members are read in parallel (each thread with its own file handle), up to one per
    core and at most four; the report keeps the wheel's order.
    """
    try:
        with (
            open(path, "rb") as raw,
            zipfile.ZipFile(raw) as archive,
            _mapped(raw, os.fstat(raw.fileno()).st_size) as mapped,
        ):
            infos = [info for info in archive.infolist() if not info.is_dir()]
            wanted = [info for info in infos if not info.filename.endswith(_TEXT_SUFFIXES)]

            def one(info: zipfile.ZipInfo, handle: IO[bytes]) -> LibraryReport | None:
                display = f"{path}!{info.filename}"
                try:
                    return _inspect_member(handle, mapped, archive, info, display, options)
                except (OSError, zipfile.BadZipFile, zlib.error, EOFError, RuntimeError) as exc:
                    return LibraryReport(
                        path=display, status="error", error=f"cannot read the member ({exc})"
                    )

            def own_handle(info: zipfile.ZipInfo) -> LibraryReport | None:
                with open(path, "rb") as handle:
                    return one(info, handle)

            large = [info for info in wanted if info.file_size >= _PARALLEL_BYTES]
            threads = min(len(large), os.cpu_count() or 1, _MAX_THREADS)
            results: dict[str, LibraryReport | None] = {}
            if threads > 1:
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(threads) as pool:
                    for info, report in zip(large, pool.map(own_handle, large), strict=True):
                        results[info.filename] = report
            for info in wanted:
                if info.filename not in results:
                    results[info.filename] = one(info, raw)
            out = [r for info in wanted if (r := results[info.filename]) is not None]
            skipped = len(infos) - len(out)
            return out, len(infos), skipped
    except (OSError, zipfile.BadZipFile, zlib.error, EOFError) as exc:
        failed = LibraryReport(path=str(path), status="error", error=f"not a readable zip ({exc})")
        return [failed], 0, 0


def _inspect_member(
    raw: IO[bytes],
    mapped: mmap.mmap | None,
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    display: str,
    options: ReadOptions,
) -> LibraryReport | None:
    if info.compress_type == zipfile.ZIP_STORED and not info.flag_bits & 0x1:
        data_at = member_data_offset(raw, info)
        stream: IO[bytes] = _Window(raw, data_at, info.file_size)  # type: ignore[assignment]
        if stream.read(4) != ELF_MAGIC:
            return None
        return inspect_stream(
            stream, info.file_size, display, options, buffer=mapped, buffer_base=data_at
        )
    if info.compress_type == zipfile.ZIP_DEFLATED and not info.flag_bits & 1:
        # One pass over the member when its layout allows it (member.py); else two, below.
        # The compressed bytes are read with pread, not through the map: mapped pages that
        # were read would count in this process's RSS.
        data_at = member_data_offset(raw, info)
        compressed = StreamSource(raw, data_at, info.compress_size)
        one = inspect_deflated(compressed, info.compress_size, info.file_size, info.CRC, display,
                               options, module=inflater(options.inflater))  # fmt: skip
        if one.report is not None or one.reason == "not an ELF file":
            return one.report
    with archive.open(info) as member:
        if member.read(4) != ELF_MAGIC:
            return None
        cached: IO[bytes] = _BlockCache(member, info.file_size)  # type: ignore[assignment]
        return inspect_stream(cached, info.file_size, display, options)


def inspect_stream(
    stream: IO[bytes],
    size: int,
    display: str,
    options: ReadOptions,
    *,
    buffer: mmap.mmap | None = None,
    buffer_base: int = 0,
) -> LibraryReport:
    """Inspect one ELF file given as a seekable stream of `size` bytes.

    `buffer`, when given, maps the same bytes from `buffer_base` on: bundles are then parsed in
    place instead of read through the stream.
    """

    def source_of(offset: int, length: int) -> ByteSource:
        if buffer is not None:
            return BufferSource(buffer, buffer_base + offset, length)
        return StreamSource(stream, offset, length)

    try:
        layout = read_host_layout(stream)
    except ElfReadError as exc:
        stream.seek(0)
        if stream.read(4) != ELF_MAGIC:
            return LibraryReport(path=display, status="error", error=exc.what)
        found = scan_raw_bytes(source_of(0, size), size, options.names, options.limits,
                               deep=options.deep)  # fmt: skip
        return damaged_file_report(display, found, options, exc.what)
    fatbin = layout.hip_fatbin
    # Regions in file order: a deflated member is read front to back, never rewound.
    regions: list[tuple[int, SectionSpan]] = [
        (span.offset, span) for span in layout.data_sections
        if not span.nobits and span.offset + span.size <= size
    ]  # fmt: skip
    if fatbin is not None and readable_fatbin(fatbin):
        regions.append((fatbin.offset, fatbin))
    regions.sort(key=lambda item: item[0])
    scan: FatbinScan | None = None
    raw: list[RawCodeObject] = []
    for offset, span in regions:
        if span is fatbin:
            present = max(min(span.size, size - offset), 0)
            scan = walk_fatbin(source_of(offset, present), present, options.names,
                               options.limits, deep=options.deep)  # fmt: skip
        else:
            raw.extend(find_raw_code_objects(source_of(offset, span.size), span.size, span.name,
                                             options.names))  # fmt: skip
    marker_span = layout.kpack_ref
    marker = (source_of(marker_span.offset, marker_span.size).read_at(0, marker_span.size)
              if marker_span is not None and not marker_span.nobits else None)  # fmt: skip
    return assemble(display, layout, size, scan, tuple(raw), options, marker)


def expand_path_words(words: Sequence[str]) -> list[Path]:
    """The paths the user meant: each word with glob characters expanded (sorted), a word that
    matches nothing or has none kept as given (so the report names it as unreadable)."""
    import glob

    found: list[Path] = []
    for word in words:
        matches = sorted(glob.glob(word)) if glob.has_magic(word) else []
        found.extend(Path(m) for m in matches or [word])
    return found
