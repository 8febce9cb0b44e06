"""One file's report from what its reading found: the walk of its .hip_fatbin, its raw code
objects, its layout, and how damage is summarised.

Owns: `ReadOptions` (how every file of one call is read), `assemble` (the LibraryReport of one
file), `damaged_file_report` (a file whose section table is unreadable) and `damage_summary`.
Shared by the reader (files on disk, wheel members read whole) and the one-pass reader of
deflated wheel members (member.py), which both import it; it imports neither. Must not: read
files.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from rocmforge.inspect.bundle_records import (
    DEFAULT_LIMITS,
    Bundle,
    BundleFormatError,
    Damage,
    EntryId,
    FatbinScan,
    Limits,
    MachName,
    parse_entry_id,
)
from rocmforge.inspect.elf import RDC_BUNDLE_PREFIX, HostLayout, SectionSpan
from rocmforge.inspect.kpack import KpackFormatError, KpackRef, parse_marker
from rocmforge.inspect.rawcode import RawCodeObject
from rocmforge.inspect.report import LibraryReport


@dataclass(frozen=True, kw_only=True)
class ReadOptions:
    """How every file of one call is read: names of machines, caps, and --deep."""

    names: MachName
    limits: Limits = DEFAULT_LIMITS
    deep: bool = False
    inflater: str = ""  # module that inflates deflated members ("": the fastest installed)


def readable_fatbin(span: SectionSpan) -> bool:
    return not span.nobits and span.size > 0


def assemble(
    display: str,
    layout: HostLayout,
    size: int,
    scan: FatbinScan | None,
    raw: tuple[RawCodeObject, ...],
    options: ReadOptions,
    marker: bytes | None = None,
) -> LibraryReport:
    """The report of one file from its layout, the walk of its .hip_fatbin (None when it has
    no readable one), the raw code objects of its data sections and the bytes of its
    `.rocm_kpack_ref` marker (None: it has none). A marker is decoded here; the reader follows
    it to its archives afterwards (reader.link_kpack)."""
    notes: list[str] = []
    ref: KpackRef | None = None
    if layout.kpack_ref is not None:
        try:
            ref = parse_marker(marker or b"")
        except KpackFormatError as exc:
            return LibraryReport(path=display, status="error", deep=options.deep,
                                 error=f"its .rocm_kpack_ref section cannot be read: {exc.what}")
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
    fatbin = layout.hip_fatbin
    cut_raw = [r for r in raw if r.entry_id is None and "past the end" in r.problem]
    common = LibraryReport(path=display, status="ok", rdc_entries=tuple(rdc),
                           raw_code_objects=raw, deep=options.deep, kpack_ref=ref)  # fmt: skip
    if fatbin is None or not readable_fatbin(fatbin) or scan is None:
        rdc_status = "rdc" if (rdc or layout.llvm_offloading is not None) else "no-device-code"
        if ref is not None:
            rdc_status = "stripped"  # until reader.link_kpack finds its archives
        elif fatbin is not None:
            notes.insert(
                0,
                ".hip_fatbin is stripped (NOBITS or empty): the targets cannot be read from "
                "this file; look for the kernels in separate device packages",
            )
            rdc_status = "stripped"
        elif rdc_status == "no-device-code":
            if raw:
                rdc_status = "ok"
            else:
                notes.append(
                    "no .hip_fatbin section and no AMDGPU code object in its data sections: "
                    "this file carries no HIP device code"
                )
        if cut_raw:
            return dataclasses.replace(common, status="partial", notes=tuple(notes),
                                       error=_raw_damage(cut_raw))  # fmt: skip
        return dataclasses.replace(common, status=rdc_status, notes=tuple(notes))
    truncated = ""
    present = max(min(fatbin.size, size - fatbin.offset), 0)
    if present < fatbin.size:
        truncated = (
            f".hip_fatbin ({fatbin.size} bytes at file offset {fatbin.offset:#x}) runs past the "
            f"end of the file ({size} bytes): the file is truncated; the bundles in its first "
            f"{present} bytes were read"
        )
    if scan.damage or truncated or cut_raw:
        parts = [truncated] if truncated else []
        if scan.damage:
            parts.append(damage_summary(scan.bundles, scan.damage))
        if cut_raw:
            parts.append(_raw_damage(cut_raw))
        return dataclasses.replace(
            common,
            status="partial" if scan.bundles or raw else "error",
            bundles=scan.bundles,
            notes=tuple(notes),
            error="; ".join(parts),
            damage=scan.damage,
        )
    return dataclasses.replace(common, status="ok", bundles=scan.bundles, notes=tuple(notes))


def _raw_damage(cut: Sequence[RawCodeObject]) -> str:
    first = cut[0]
    return f"raw code object at {first.section}+{first.offset:#x}: {first.problem}"


def damaged_file_report(
    display: str, scan: FatbinScan | None, options: ReadOptions, why: str
) -> LibraryReport:
    """The section table is unreadable: what a walk from the first bundle magic found."""
    if scan is None or not scan.bundles:
        return LibraryReport(
            path=display,
            status="error",
            error=f"{why}; no readable offload bundle was found in its raw bytes either",
            damage=scan.damage if scan is not None else (),
            deep=options.deep,
        )
    first, last = scan.bundles[0], scan.bundles[-1]
    error = (
        f"{why}: the section table cannot be read, so the file's raw bytes were scanned for "
        f"bundle headers: {len(scan.bundles)} bundle(s) found between file offsets "
        f"{first.offset:#x} and {last.offset + last.stored_size:#x}. This result comes from a "
        "damaged file"
    )
    if scan.damage:
        error += "; " + damage_summary(scan.bundles, scan.damage, where="file offset")
    return LibraryReport(path=display, status="partial", bundles=scan.bundles, error=error,
                         damage=scan.damage, raw_scan=True, deep=options.deep)  # fmt: skip


def damage_summary(
    bundles: Sequence[Bundle], damage: Sequence[Damage], *, where: str = ".hip_fatbin offset"
) -> str:
    """One paragraph: the first damaged bundle, what of it was kept, where the walk went on."""
    first = damage[0]
    before = sum(1 for b in bundles if b.offset < first.offset)
    text = f"bundle {before + 1} at {where} {first.offset:#x}: {first.problem}"
    if first.entries_kept:
        # The bundle was read up to the damage; its table says where the walk goes on.
        if first.resumed_at is not None:
            text += f"; the walk went on at offset {first.resumed_at:#x}"
    elif first.resumed_at is not None:
        text += (
            f"; the walk resumed at the next bundle magic, offset {first.resumed_at:#x} "
            f"({first.resumed_at - first.offset} bytes skipped)"
        )
    else:
        text += "; no bundle magic follows at a 4096-byte boundary"
    if len(damage) > 1:
        text += f"; {len(damage)} damaged regions in all"
    return text
