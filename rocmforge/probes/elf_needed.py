"""The shared libraries an ELF program loads directly, found as the dynamic loader finds them.

Owns: reading DT_NEEDED, DT_RUNPATH and DT_RPATH from an ELF file's dynamic segment (a tiny
decoder: the program header table, PT_LOAD to map the string table's address, PT_DYNAMIC), and
resolving each name through the run path ($ORIGIN expanded), LD_LIBRARY_PATH and the system's
library folders. The compile probe's key names a compiler's libraries (Debian's clang-15 keeps
its code in libLLVM-15.so.1, outside the clang package's folder), and pyelftools costs ~50 ms
to import on a path that must stay fast. Must not: follow libraries of libraries, read more than
the headers and the dynamic segment, or raise for a file that is not ELF (it has none: ()).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Mapping
from pathlib import Path

_PT_LOAD, _PT_DYNAMIC = 1, 2
_DT_NULL, _DT_NEEDED, _DT_STRTAB, _DT_RPATH, _DT_RUNPATH = 0, 1, 5, 15, 29
_MAX_DYNAMIC = 1 << 20  # a dynamic segment is a few KB; anything huge is not one


def needed_names(path: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(DT_NEEDED names, run-path folders as written) of a 64-bit ELF file; ((), ()) for
    anything else or anything malformed."""
    try:
        with path.open("rb") as handle:
            return _read_needed(handle)
    except (OSError, struct.error, ValueError):
        return (), ()


def _read_needed(handle) -> tuple[tuple[str, ...], tuple[str, ...]]:  # noqa: ANN001 - a binary file
    ident = handle.read(64)
    if len(ident) < 64 or ident[:4] != b"\x7fELF" or ident[4] != 2:
        return (), ()
    order = "<" if ident[5] == 1 else ">"
    phoff, = struct.unpack_from(order + "Q", ident, 0x20)
    phentsize, phnum = struct.unpack_from(order + "HH", ident, 0x36)
    if phentsize < 56 or phnum > 4096:
        return (), ()
    handle.seek(phoff)
    table = handle.read(phentsize * phnum)
    loads: list[tuple[int, int, int]] = []  # (vaddr, offset, filesz)
    dynamic: tuple[int, int] | None = None
    for index in range(phnum):
        p_type, _flags, offset, vaddr, _paddr, filesz = struct.unpack_from(
            order + "IIQQQQ", table, index * phentsize)
        if p_type == _PT_LOAD:
            loads.append((vaddr, offset, filesz))
        elif p_type == _PT_DYNAMIC:
            dynamic = (offset, filesz)
    if dynamic is None or dynamic[1] > _MAX_DYNAMIC:
        return (), ()
    handle.seek(dynamic[0])
    data = handle.read(dynamic[1])
    needed: list[int] = []
    paths: list[int] = []
    runpath: list[int] = []
    strtab = None
    for start in range(0, len(data) - 15, 16):
        tag, value = struct.unpack_from(order + "qQ", data, start)
        if tag == _DT_NULL:
            break
        if tag == _DT_NEEDED:
            needed.append(value)
        elif tag == _DT_STRTAB:
            strtab = value
        elif tag == _DT_RPATH:
            paths.append(value)
        elif tag == _DT_RUNPATH:
            runpath.append(value)
    if strtab is None:
        return (), ()
    base = next((offset + strtab - vaddr for vaddr, offset, size in loads
                 if vaddr <= strtab < vaddr + size), None)
    if base is None:
        return (), ()

    def text(at: int) -> str:
        handle.seek(base + at)
        chunk = handle.read(4096)
        return chunk.split(b"\0", 1)[0].decode("utf-8", "replace")

    # DT_RUNPATH, when present, replaces DT_RPATH (ld.so(8)).
    folders = [f for at in (runpath or paths) for f in text(at).split(":") if f]
    return tuple(text(at) for at in needed), tuple(folders)


def system_library_dirs() -> tuple[Path, ...]:
    triplet = f"{os.uname().machine}-linux-gnu"
    return tuple(Path(p) for p in (f"/lib/{triplet}", f"/usr/lib/{triplet}", "/lib64",
                                   "/usr/lib64", "/lib", "/usr/lib"))


def needed_libraries(path: Path, environ: Mapping[str, str]) -> tuple[Path, ...]:
    """Each library `path` needs, where the loader would find it first (its run path, then
    LD_LIBRARY_PATH, then the system folders); a name found nowhere is left out."""
    names, folders = needed_names(path)
    if not names:
        return ()
    origin = str(path.resolve().parent)
    search = [Path(f.replace("$ORIGIN", origin).replace("${ORIGIN}", origin)) for f in folders]
    search += [Path(p) for p in environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p]
    search += system_library_dirs()
    found: list[Path] = []
    for name in names:
        hit = next((folder / name for folder in search if (folder / name).is_file()), None)
        if hit is not None:
            found.append(hit)
    return tuple(found)
