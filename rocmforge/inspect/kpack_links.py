"""Following `.rocm_kpack_ref` markers to their `.kpack` archives, after every path is read.

A host library's marker names archives relative to the library's folder, with `@GFXARCH@` for
the target (rocmforge/inspect/kpack.py has the format and its sources). They are looked for:
beside a library on disk (an install prefix, a torch/lib folder: its real folder, as the
loader resolves it), and inside the wheels given on the same command line taken together
(device wheels overlay the host wheel's folders: `torch/.kpack/torch_gfx1100.kpack` from
`amd_torch_device_gfx1100-*.whl` serves `torch/lib/libtorch_hip.so` of `torch-*.whl`).
The entries an archive holds for the library (`kernel_name#N`) become its bundle rows; a
library whose archives are all absent is "split", never "no device code"; an archive that is not
a kpack archive (bad magic, a cut table of contents) is a FAIL row of its own; an archive no
library read here names is reported as its own row.
Owns: the matching, reading each archive once (files and stored wheel members with pread and
read-ahead off; deflated members streamed front to back), and the rewritten report.
Must not: write or print.
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import os
import posixpath
import re
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path

from rocmforge.inspect.assembly import ReadOptions
from rocmforge.inspect.byte_source import ByteSource, StreamSource, member_data_offset
from rocmforge.inspect.kpack import (
    ARCH_PLACEHOLDER,
    SUFFIX,
    KpackArchive,
    KpackFormatError,
    KpackRef,
    read_archive,
)
from rocmforge.inspect.report import LibraryReport, SourceRead

# Where an archive is: ("file", real path, "") or ("wheel", wheel path, member name).
Place = tuple[str, str, str]


class _OpenWheelMember:
    """A wheel member kept open across the reads of one archive (seeks forward stream)."""

    def __init__(self, wheel: str, info: zipfile.ZipInfo) -> None:
        self._zip = zipfile.ZipFile(wheel)
        self._member = self._zip.open(info)

    def read_at(self, offset: int, size: int) -> bytes:
        self._member.seek(offset)
        return self._member.read(size)

    def close(self) -> None:
        self._member.close()
        self._zip.close()


def link_kpack(libraries: Sequence[LibraryReport], sources: Sequence[SourceRead],
               options: ReadOptions) -> tuple[list[LibraryReport], list[SourceRead]]:
    """The libraries with their kpack archives followed, archive FAIL rows and orphan archive
    rows added; the sources with the archives each holds counted."""
    on_disk, walked_wheels = _disk_archives(sources)
    # Wheels given, and wheels inside the directories given (read there, as in reader.py).
    wheels = list(dict.fromkeys([s.path for s in sources if s.kind == "wheel"] + walked_wheels))
    in_wheels = _wheel_archives(wheels)
    read: dict[Place, KpackArchive | str] = {}
    used: set[Place] = set()
    out: list[LibraryReport] = []
    for lib in libraries:
        ref = lib.kpack_ref
        if ref is None:
            out.append(lib)
            continue
        places, looked = _places_for(lib.path, ref, wheels, in_wheels)
        out.append(_linked(lib, ref, places, looked, read, options))
        used.update(places)
    for place in [*in_wheels.values(), *on_disk]:
        if place not in read and place not in used:
            found = _read(place, read, options)
            if isinstance(found, KpackArchive):
                out.append(LibraryReport(
                    path=_display(place), status="ok", bundles=(found.bundle(found.entries),),
                    archive=True,
                    notes=("kpack archive that no library read here names (give its host "
                           "library or wheel too)",)))  # fmt: skip
    for place, found in read.items():
        if isinstance(found, str):
            out.append(LibraryReport(path=_display(place), status="error", archive=True,
                                     error=f"not a readable kpack archive: {found}"))  # fmt: skip
    counted = [dataclasses.replace(s, archives=_count(s, in_wheels, on_disk)) for s in sources]
    return out, counted


def _count(source: SourceRead, in_wheels: dict[str, Place], on_disk: list[Place]) -> int:
    if source.kind == "wheel":
        return sum(1 for p in in_wheels.values() if p[1] == source.path)
    root = os.path.realpath(source.path)
    inside = [p for p in [*on_disk, *in_wheels.values()]
              if os.path.realpath(p[1]).startswith(root + os.sep) or p[1] == root]
    return len(inside)


def _linked(lib: LibraryReport, ref: KpackRef, places: list[Place], looked: list[str],
            read: dict[Place, KpackArchive | str], options: ReadOptions) -> LibraryReport:
    bundles = list(lib.bundles)
    names: list[str] = []
    notes = list(lib.notes)
    damaged: list[str] = []
    empty: list[str] = []
    for place in places:
        found = _read(place, read, options)
        if isinstance(found, str):
            damaged.append(_display(place))
            continue
        entries = found.entries_for(ref.kernel_name)
        if not entries:
            empty.append(_display(place))
            notes.append(f"{_display(place)} holds no code object for {ref.kernel_name}")
            continue
        bundles.append(found.bundle(entries))
        names.append(_display(place))
    if names:
        status = "ok" if lib.status in ("stripped", "ok") else lib.status
        notes += [f"archive {d} cannot be read (its FAIL row): its target is not proven"
                  for d in damaged]  # fmt: skip
        return dataclasses.replace(lib, status=status, bundles=tuple(bundles),
                                   notes=tuple(notes), kpack_archives=tuple(names),
                                   kpack_unreadable=tuple(damaged))  # fmt: skip
    if damaged:
        why = f"device code split out; archive {', '.join(damaged)} cannot be read (its row)"
    elif empty:
        why = (f"device code split out; archive {', '.join(empty)} holds no code object for "
               f"{ref.kernel_name} (the name its marker gives)")
    else:
        why = f"device code split out; archive {' or '.join(looked)} not found"
    return dataclasses.replace(lib, status="split", notes=tuple(notes), error=why,
                               kpack_unreadable=tuple(damaged))  # fmt: skip


def _places_for(display: str, ref: KpackRef, wheels: Sequence[str],
                in_wheels: dict[str, Place]) -> tuple[list[Place], list[str]]:
    """The archives a marker names that exist, and the patterns looked for (for the message)."""
    wheel = next((w for w in wheels if display.startswith(w + "!")), None)
    places: list[Place] = []
    looked: list[str] = []
    for search in ref.search_paths:
        if wheel is not None:
            member = display[len(wheel) + 1 :]
            pattern = posixpath.normpath(posixpath.join(posixpath.dirname(member), search))
            looked.append(pattern + " (in the wheels given)")
            match = re.compile(
                ".*?".join(re.escape(p) for p in pattern.split(ARCH_PLACEHOLDER)) + r"\Z"
            )  # fmt: skip
            places.extend(p for name, p in sorted(in_wheels.items()) if match.match(name))
            continue
        folder = os.path.dirname(os.path.realpath(display))
        pattern = os.path.normpath(os.path.join(folder, search))
        looked.append(pattern)
        spec = "*".join(glob.escape(p) for p in pattern.split(ARCH_PLACEHOLDER))
        places.extend(("file", os.path.realpath(p), "") for p in sorted(glob.glob(spec))
                      if os.path.isfile(p))  # fmt: skip
    return list(dict.fromkeys(places)), looked


def _wheel_archives(wheels: Sequence[str]) -> dict[str, Place]:
    """Member name -> place, over every wheel given (a later wheel's member wins)."""
    found: dict[str, Place] = {}
    for wheel in wheels:
        try:
            with zipfile.ZipFile(wheel) as archive:
                for info in archive.infolist():
                    if info.filename.endswith(SUFFIX) and not info.is_dir():
                        found[info.filename] = ("wheel", wheel, info.filename)
        except (OSError, zipfile.BadZipFile):
            continue  # the wheel's own FAIL row says why
    return found


def _disk_archives(sources: Sequence[SourceRead]) -> tuple[list[Place], list[str]]:
    """Archives given as files and those inside the directories given; and the wheels inside
    those directories (named as the reader names their members)."""
    found: list[Place] = []
    wheels: list[str] = []
    for source in sources:
        if source.kind == "kpack":
            found.append(("file", os.path.realpath(source.path), ""))
        elif source.kind == "directory":
            for dirpath, dirnames, filenames in os.walk(source.path):
                dirnames.sort()
                for name in sorted(filenames):
                    path = os.path.join(dirpath, name)
                    if name.endswith(SUFFIX):
                        found.append(("file", os.path.realpath(path), ""))
                    elif name.endswith((".whl", ".zip")) and not os.path.islink(path):
                        wheels.append(str(Path(dirpath) / name))
    return list(dict.fromkeys(found)), wheels


def _display(place: Place) -> str:
    kind, path, member = place
    return f"{path}!{member}" if kind == "wheel" else path


def _read(place: Place, read: dict[Place, KpackArchive | str],
          options: ReadOptions) -> KpackArchive | str:
    """The archive at `place` (read once), or what is wrong with it."""
    if place in read:
        return read[place]
    try:
        found: KpackArchive | str = _read_place(place, options)
    except KpackFormatError as exc:
        found = exc.what
    except (OSError, zipfile.BadZipFile, zlib.error, EOFError) as exc:
        found = f"cannot read it ({exc})"
    read[place] = found
    return found


def _read_place(place: Place, options: ReadOptions) -> KpackArchive:
    kind, path, member = place

    if kind == "file":
        with open(path, "rb", buffering=0) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size == 0:
                raise KpackFormatError("the file is empty")
            _random_access(handle.fileno())
            return read_archive(StreamSource(handle, 0, size), size, options.names)
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    if info.compress_type == zipfile.ZIP_STORED:
        with open(path, "rb", buffering=0) as raw:
            _random_access(raw.fileno())
            source: ByteSource = StreamSource(raw, member_data_offset(raw, info), info.file_size)
            return read_archive(source, info.file_size, options.names)
    opened = _OpenWheelMember(path, info)
    try:
        return read_archive(opened, info.file_size, options.names)
    finally:
        opened.close()



def _random_access(fd: int) -> None:
    """pread with read-ahead off: an archive is read at a few small places (its header, its
    table at the end, 64 bytes of each blob). A mapping, or the default read-ahead, would read
    megabytes around each (8 MiB here: /sys/block/*/queue/read_ahead_kb), so a cold inspect would
    read every blob whole (benchmarks/kpack_speed.py measures it)."""
    with contextlib.suppress(OSError, AttributeError):
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
