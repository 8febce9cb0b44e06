"""What `invoke inspect` concludes from a report: its exit status and the sentences that say why.

Exit 0 means proven: every library was read whole and, with `--expect`, every expected target
is in every library with device code, and some library has device code at all. Exit 1: a
check failed (a FAIL row, no HIP device code with `--expect`, a missing target). Bad input
(exit 2) is found before reading, by the task.
Owns: that decision, as a pure function of the report (the `Verdict` record it returns lives in
inspect/report.py, whose JSON document carries it). Must not: read files or print.
"""

from __future__ import annotations

from collections.abc import Sequence

from rocmforge.inspect.kpack import missing_archive_cause
from rocmforge.inspect.report import (
    LIKELY_CAUSE,
    InspectReport,
    LibraryReport,
    MissingTarget,
    Verdict,
)

CPU_ONLY = "no HIP device code: a CPU-only build"
_NAMED = 5  # files named in a sentence before "and N more"


def judge(
    report: InspectReport, expected: Sequence[str], missing: Sequence[MissingTarget]
) -> Verdict:
    """The verdict on a report read with `expected` targets (empty: none asked for)."""
    problems: list[str] = []
    notes = [_empty_source_note(s.path, s.kind, s.files) for s in report.sources
             if s.kind in ("wheel", "directory") and s.elf_files == 0
             and s.archives == 0]  # fmt: skip
    failed = report.failed
    split = [lib for lib in report.libraries if lib.status == "split"]
    if split:
        problems.append(
            f"{len(split)} kpack-split librar(y/ies) read without their archives (TheRock "
            f"multi-arch): {split[0].path}: {split[0].error}"
            + (f" (and {len(split) - 1} more)" if len(split) > 1 else "")
            + ". Nothing proves their targets. Fix: give the device packages on the same "
            "command line (the *-device-gfx* wheels), or install them beside the host package"
        )
    if failed:
        first = failed[0]
        what = first.error or first.status
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        problems.append(
            f"{_failed_count(report)} could not be read completely "
            f"(FAIL rows above): {first.path}: {what}{more}. A damaged or truncated file proves "
            "nothing about the targets it was built for. Fix: download or build it again"
        )
    if expected and not report.with_device_code and not split:
        problems.append(_no_device_code(report))
    elif not report.with_device_code and report.libraries and not failed and not split:
        notes.append(f"{CPU_ONLY}? none of the {len(report.libraries)} ELF file(s) read holds "
                     "any (pass --expect TARGETS to make that a failure)")  # fmt: skip
    absent = [m for m in missing if not m.listed]
    unproven = [m for m in missing if m.listed]
    split_refs = {lib.path: lib for lib in report.libraries if lib.kpack_ref is not None}
    kpack_absent = [m for m in absent if m.path in split_refs]
    absent = [m for m in absent if m.path not in split_refs]
    for target in sorted({m.target for m in kpack_absent}):
        pairs = [m for m in kpack_absent if m.target == target]
        lib = split_refs[pairs[0].path]
        assert lib.kpack_ref is not None
        more = f" (and {len(pairs) - 1} more)" if len(pairs) > 1 else ""
        problems.append(
            f"expected {target} not found in {len(pairs)} of {len(report.with_device_code)} "
            f"libraries with device code{more}: "
            + missing_archive_cause(lib.path, lib.kpack_ref, target, lib.kpack_unreadable)
        )
    if absent:
        targets = sorted({m.target for m in absent})
        problems.append(
            f"{len(absent)} library/target pair(s) missing: expected "
            f"{', '.join(targets)} not found in "
            f"{len({m.path for m in absent})} of {len(report.with_device_code)} libraries "
            f"with device code. Likely cause: {LIKELY_CAUSE}"
        )
    if unproven:
        pair = unproven[0]
        more = f" (and {len(unproven) - 1} more)" if len(unproven) > 1 else ""
        problems.append(
            f"expected {pair.target} is listed in {pair.path}, but only in entries that are "
            f"damaged or whose code object names another target, so nothing proves it{more}"
        )
    return Verdict(exit_code=1 if problems else 0, problems=tuple(_end(p) for p in problems),
                   notes=tuple(_end(n) for n in notes))  # fmt: skip


def _failed_count(report: InspectReport) -> str:
    """"1 of 2 libraries", "1 of 2 kpack archives", or both joined by "and"."""
    parts = []
    for rows, what in ((report.elf_rows, "libraries"), (report.archive_rows, "kpack archives")):
        bad = sum(1 for lib in rows if lib.failed)
        if bad:
            total = len(rows) if what == "libraries" else sum(s.archives for s in report.sources)
            parts.append(f"{bad} of {max(total, bad)} {what}")
    return " and ".join(parts)


def _no_device_code(report: InspectReport) -> str:
    libs = report.libraries
    if not libs:
        paths = ", ".join(s.path for s in report.sources[:_NAMED])
        return (
            f"{CPU_ONLY}? {paths} hold(s) no ELF files at all, so no expected target can be "
            "there. Fix: pass the ROCm wheel, or its installed torch/lib folder"
        )
    stripped = [lib for lib in libs if lib.status == "stripped"]
    if stripped:
        return (
            f"no HIP device code in the files read: {_names(stripped)} carry a stripped "
            ".hip_fatbin (the kernels were split into separate device packages), and no other "
            "file holds device code. Fix: inspect the device packages (the *-device-gfx* "
            "wheels) with the same --expect"
        )
    return (
        f"{CPU_ONLY}. None of the {len(libs)} ELF file(s) read ({_names(libs)}) holds an "
        "offload bundle (.hip_fatbin) or an AMDGPU code object. Fix: build with ROCm "
        "(`invoke build --arch ...`) or install a ROCm wheel (a +rocm local version), "
        "not a +cpu or CUDA one"
    )


def _names(libs: Sequence[LibraryReport]) -> str:
    shown = ", ".join(lib.path for lib in libs[:_NAMED])
    return shown + (f" and {len(libs) - _NAMED} more" if len(libs) > _NAMED else "")


def _empty_source_note(path: str, kind: str, files: int) -> str:
    what = "members" if kind == "wheel" else "files"
    return (f"{path} was read: it holds no ELF files ({files} {what}, none a library or "
            "executable), so there is no device code in it to report")  # fmt: skip


def _end(text: str) -> str:
    return text if text.endswith((".", "?", "!")) else text + "."
