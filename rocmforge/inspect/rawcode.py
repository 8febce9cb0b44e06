"""AMDGPU code objects embedded whole in a host file's data sections (no offload bundle).

Libraries that load kernels with `hipModuleLoadData` often carry them as plain ELF images in
`.rodata` or a data section (`.incbin`, `xxd -i`), not in `.hip_fatbin`. This module finds them:
every `\\x7fELF` in a section whose 64-byte header says ELF64, little endian, EM_AMDGPU, an
AMDGPU OS ABI and ET_REL/ET_DYN, and whose section header table ends inside the section. Each is
reported with its target as the header's e_flags give it (AMDGPUUsage, reference §1.2), so
`--expect` can count it.
Owns: the search (pure, over a ByteSource or a buffer), the same decision for headers already
collected by a one-pass reader (`from_candidates`), and the `RawCodeObject` record.
Must not: open files, print, or read more than each section's bytes once.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from rocmforge.inspect.bundle_records import AMDGPU_TRIPLE, EntryId, MachName
from rocmforge.inspect.byte_source import BufferSource, ByteSource
from rocmforge.inspect.elf import EM_AMDGPU, SectionSpan, decode_code_object_header

ELF64_LE = b"\x7fELF\x02\x01\x01"  # ident of an ELF64, little endian, version 1
# ELFOSABI_AMDGPU_HSA, _PAL, _MESA3D (AMDGPUUsage "ELF Header").
_AMDGPU_OSABI = frozenset({64, 65, 66})
_ET_REL, _ET_DYN = 1, 3
_WINDOW = 1 << 22  # bytes searched per read when the section is not mapped


@dataclass(frozen=True, kw_only=True)
class RawCodeObject:
    """One code object found in a data section; `entry_id` carries its target for --expect.

    `problem` is set when the header is an AMDGPU code object's but its section headers run past
    the section (cut or overwritten), or its machine is not in the arch table: it is reported
    and proves nothing.
    """

    section: str
    offset: int  # from the section's start
    size: int  # up to the end of its section header table
    entry_id: EntryId | None
    code_object_version: int | None
    e_flags: int
    problem: str = ""


def find_raw_code_objects(
    source: ByteSource, size: int, section: str, mach_name: MachName
) -> tuple[RawCodeObject, ...]:
    """Every AMDGPU code object in a section of `size` bytes, in order."""
    found: list[RawCodeObject] = []
    pos = 0
    while pos + 64 <= size:
        at = _find_magic(source, pos, size)
        if at is None:
            break
        header = source.read_at(at, 64)
        item = _code_object_at(header, at, size, section, mach_name)
        if item is None:
            pos = at + 1
            continue
        found.append(item)
        pos = at + max(item.size, 64) if not item.problem else at + 64
    return tuple(found)


def _find_magic(source: ByteSource, start: int, size: int) -> int | None:
    """Offset of the next ELF64-LE ident at or after `start`, None when there is none."""
    if isinstance(source, BufferSource):
        lo, hi = source.base + start, source.base + min(size, source.size)
        at = source.buffer.find(ELF64_LE, lo, hi)
        return None if at < 0 else at - source.base
    overlap = len(ELF64_LE) - 1
    pos = start
    while pos < size:
        chunk = source.read_at(pos, min(_WINDOW + overlap, size - pos))
        if len(chunk) < len(ELF64_LE):
            return None
        at = chunk.find(ELF64_LE)
        if at >= 0:
            return pos + at
        pos += len(chunk) - overlap
    return None


def looks_like_code_object(header: bytes) -> bool:
    """Whether 64 header bytes are an AMDGPU code object's (ELF64 LE, EM_AMDGPU, AMDGPU ABI)."""
    if len(header) < 64 or not header.startswith(ELF64_LE):
        return False
    e_type, e_machine = struct.unpack_from("<HH", header, 16)
    (e_ehsize,) = struct.unpack_from("<H", header, 52)
    return (
        e_machine == EM_AMDGPU
        and header[7] in _AMDGPU_OSABI
        and e_type in (_ET_REL, _ET_DYN)
        and e_ehsize == 64
    )


def from_candidates(
    candidates: Sequence[tuple[int, bytes]],
    sections: Sequence[SectionSpan],
    mach_name: MachName,
) -> tuple[RawCodeObject, ...]:
    """The code objects among (file offset, 64 header bytes) candidates that lie in `sections`,
    decided as `find_raw_code_objects` decides them (one inside another's extent is skipped)."""
    found: list[RawCodeObject] = []
    for span in sorted(sections, key=lambda s: s.offset):
        after = 0
        for offset, header in candidates:
            at = offset - span.offset
            if at < after or not 0 <= at <= span.size - 64:
                continue
            item = _code_object_at(header, at, span.size, span.name, mach_name)
            if item is not None:
                found.append(item)
                after = at + (max(item.size, 64) if not item.problem else 64)
    return tuple(found)


def _code_object_at(
    header: bytes, at: int, size: int, section: str, mach_name: MachName
) -> RawCodeObject | None:
    """The code object whose header starts at `at`, or None when these bytes are not one."""
    if not looks_like_code_object(header):
        return None
    decoded = decode_code_object_header(header)
    extent = decoded.extent or 64
    version = decoded.code_object_version
    base = RawCodeObject(section=section, offset=at, size=extent, entry_id=None,
                         code_object_version=version, e_flags=decoded.e_flags)  # fmt: skip
    if at + extent > size:
        return dataclasses.replace(
            base,
            problem=f"its ELF section headers end {extent} bytes in, past the end of {section} "
            f"({size - at} bytes left): a cut or overwritten code object",
        )
    name = mach_name(decoded.mach)
    if name is None:
        return dataclasses.replace(
            base, problem=f"EF_AMDGPU_MACH {decoded.mach:#x} is not in the arch table"
        )
    features: list[tuple[str, str]] = []
    for feature, value in (("sramecc", decoded.sramecc), ("xnack", decoded.xnack)):
        if value in ("on", "off"):
            features.append((feature, "+" if value == "on" else "-"))
    target = ":".join([name, *(f"{n}{v}" for n, v in features)])
    entry_id = EntryId(
        text=f"raw-{AMDGPU_TRIPLE}--{target} ({section}+{at:#x})",
        kind="raw",
        triple=AMDGPU_TRIPLE,
        processor=name,
        features=tuple(features),
    )
    return dataclasses.replace(base, entry_id=entry_id)
