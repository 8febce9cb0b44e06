"""What `invoke inspect` found: per-library records, the cross-library summary, `--expect` checks.

Owns: the frozen report values, the summary arithmetic (targets common to all libraries with
device code, targets missing from some), matching expected targets against bundle entries, and
the versioned JSON document and table rows. An entry proves its target only when nothing
contradicts it: a damaged entry or one whose ELF header disagrees with its ID proves nothing.
Must not: read files or print.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from rocmforge.inspect.bundle_records import Bundle, Damage, EntryId
from rocmforge.inspect.kpack import KpackRef
from rocmforge.inspect.rawcode import RawCodeObject

if TYPE_CHECKING:
    from rocmforge.fsutil import JSONDoc
    from rocmforge.knowledge.targets import TargetId

SCHEMA = "rocmforge.inspect/1"
LIKELY_CAUSE = (
    "the target list did not reach the compiler: check that PYTORCH_ROCM_ARCH (or the "
    "--offload-arch flags of the library's own build) named it when this file was compiled, "
    "and that the build was not reused from a configure with another arch list "
    "(build/CMakeCache.txt)"
)


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """What `invoke inspect` concludes (inspect/verdict.py judges): exit_code 0 or 1; `problems`
    say why it is 1, `notes` are worth saying either way."""

    exit_code: int
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def message(self) -> str:
        return " ".join(self.problems or self.notes)


@dataclass(frozen=True, kw_only=True)
class LibraryReport:
    """One ELF file (on disk, or a member of a wheel) and what its offload sections hold.

    status: "ok" (bundles or raw code objects read), "partial" (some read, some damaged),
    "no-device-code" (no .hip_fatbin, no raw code object), "stripped" (.hip_fatbin without
    bytes), "rdc" (-fgpu-rdc or new-driver object, device code not yet linked), "split"
    (kpack: device code split out and no archive found; `error` says where it was looked
    for), "error" (unreadable). `raw_scan`: the section table was lost and the bundles were found by
    scanning the file's bytes (offsets are file offsets); such a result is always "partial".
    The summaries below are computed once (cached_property): a PyTorch library has tens of
    thousands of entries and the table, summary and --expect all ask for them.
    """

    path: str
    status: str
    bundles: tuple[Bundle, ...] = ()
    rdc_entries: tuple[EntryId, ...] = ()
    notes: tuple[str, ...] = ()
    error: str = ""
    damage: tuple[Damage, ...] = ()  # malformed regions the walk stepped over
    raw_code_objects: tuple[RawCodeObject, ...] = ()
    raw_scan: bool = False
    deep: bool = False  # read with --deep: every compressed bundle decompressed and hashed
    # TheRock's kpack split: the marker naming the archives, and the archives read for it (their
    # entries are in `bundles`, container "kpack"). Status "split": no archive was found.
    kpack_ref: KpackRef | None = None
    kpack_archives: tuple[str, ...] = ()
    kpack_unreadable: tuple[str, ...] = ()  # archives its marker names that cannot be read
    archive: bool = False  # a row of a kpack archive itself (unreadable, or no library names it)

    @property
    def readable(self) -> bool:
        return self.status != "error"

    @property
    def failed(self) -> bool:
        """A FAIL row: unreadable, or read only in part."""
        return self.status in ("error", "partial")

    @cached_property
    def entry_ids(self) -> tuple[EntryId, ...]:
        """Each distinct device entry ID (bundle entries, -fgpu-rdc sections, raw objects)."""
        # Keyed on the text (a str caches its hash; an EntryId hashes five fields per call).
        ids = {row[0].text: row[0] for b in self.bundles for row in b.rows
               if row[0].kind != "host"}  # fmt: skip
        return self._with_other_ids(ids)

    def _with_other_ids(self, ids: dict[str, EntryId]) -> tuple[EntryId, ...]:
        """`ids` (from bundle rows) followed by the -fgpu-rdc and raw code objects' IDs."""
        found = {e: None for e in ids.values()}
        found.update((e, None) for e in self.rdc_entries if not e.is_host)
        found.update((r.entry_id, None) for r in self.raw_code_objects if r.entry_id is not None)
        return tuple(found)

    @cached_property
    def proven_ids(self) -> tuple[EntryId, ...]:
        """Device entry IDs with at least one entry nothing contradicts (not damaged, and its
        code object's header agrees with the ID or lies beyond what was decompressed)."""
        ids = {
            row[0].text: row[0]
            for b in self.bundles
            for row in b.rows
            if row[0].kind != "host" and row[3].status not in ("mismatch", "damaged")
        }
        return self._with_other_ids(ids)

    @cached_property
    def targets(self) -> tuple[str, ...]:
        """Canonical target IDs of every AMDGPU entry, sorted, without duplicates."""
        return tuple(sorted({e.target for e in self.entry_ids if e.is_amdgpu}))

    @property
    def has_device_code(self) -> bool:
        return bool(self.targets)

    @cached_property
    def _statuses(self) -> Counter[str]:
        """How many entries have each check status ("ok", "not-checked", "mismatch", ...)."""
        return Counter(row[3].status for b in self.bundles for row in b.rows)

    @cached_property
    def proven_targets(self) -> tuple[str, ...]:
        return tuple(sorted({e.target for e in self.proven_ids if e.is_amdgpu}))

    @cached_property
    def code_object_versions(self) -> tuple[int, ...]:
        versions = {row[3].code_object_version for b in self.bundles for row in b.rows}
        versions.update(r.code_object_version for r in self.raw_code_objects)
        versions.discard(None)
        return tuple(sorted(v for v in versions if v is not None))

    @cached_property
    def containers(self) -> tuple[str, ...]:
        """How bundles are stored: 'plain', 'ccob-v3/zstd', ... (sorted, unique)."""
        kinds = {
            f"{b.container}/{b.compression}" if b.compression else b.container
            for b in self.bundles
        }
        if self.raw_code_objects:
            kinds.add("raw")
        return tuple(sorted(kinds))

    @cached_property
    def mismatches(self) -> tuple[str, ...]:
        if not self._statuses["mismatch"]:
            return ()
        return tuple(
            f"bundle at {b.offset:#x}, {row[0].text}: {row[3].detail}"
            for b in self.bundles
            for row in b.rows
            if row[3].status == "mismatch"
        )

    @cached_property
    def unchecked(self) -> int:
        return self._statuses["not-checked"]

    @cached_property
    def damaged_entries(self) -> int:
        return self._statuses["damaged"]

    @cached_property
    def verified_bundles(self) -> int:
        """Compressed bundles whose whole payload matched the header's hash (--deep)."""
        return sum(1 for b in self.bundles if b.verified)


@dataclass(frozen=True, kw_only=True)
class MissingTarget:
    """An expected target that a library with device code lacks.

    `found`: the targets its entries prove. `listed`: the target is in its entry tables, but
    only in entries that are damaged or whose code object says another target.
    """

    target: str
    path: str
    found: tuple[str, ...]
    listed: bool = False


@dataclass(frozen=True, kw_only=True)
class SourceRead:
    """One path the user gave, and what reading it found.

    kind: "wheel", "directory", "file", "kpack" (an archive given by itself) or "missing"
    (could not be opened or listed). `files`: files (or wheel members) looked at; `elf_files`:
    those reported as libraries; `archives`: kpack archives in it.
    """

    path: str
    kind: str
    files: int = 0
    elf_files: int = 0
    archives: int = 0


@dataclass(frozen=True, kw_only=True)
class InspectReport:
    libraries: tuple[LibraryReport, ...]
    skipped_files: int = 0  # non-ELF files passed over inside directories and wheels
    sources: tuple[SourceRead, ...] = ()
    deep: bool = False

    @property
    def failed(self) -> tuple[LibraryReport, ...]:
        """Libraries shown as FAIL rows: unreadable, or read only in part."""
        return tuple(lib for lib in self.libraries if lib.failed)

    @property
    def readable(self) -> tuple[LibraryReport, ...]:
        return tuple(lib for lib in self.libraries if lib.readable)

    @property
    def elf_rows(self) -> tuple[LibraryReport, ...]:
        """The rows of libraries and executables (not of kpack archives)."""
        return tuple(lib for lib in self.libraries if not lib.archive)

    @property
    def archive_rows(self) -> tuple[LibraryReport, ...]:
        """The rows of kpack archives: unreadable ones, and ones no library read here names."""
        return tuple(lib for lib in self.libraries if lib.archive)

    @property
    def errors(self) -> tuple[LibraryReport, ...]:
        return tuple(lib for lib in self.libraries if lib.status in ("error", "partial"))

    @property
    def with_device_code(self) -> tuple[LibraryReport, ...]:
        return tuple(lib for lib in self.libraries if lib.has_device_code)

    @property
    def all_targets(self) -> tuple[str, ...]:
        return tuple(sorted({t for lib in self.with_device_code for t in lib.targets}))

    @property
    def common_targets(self) -> tuple[str, ...]:
        """Targets every library with device code carries."""
        libs = self.with_device_code
        if not libs:
            return ()
        common = set(libs[0].targets)
        for lib in libs[1:]:
            common &= set(lib.targets)
        return tuple(sorted(common))

    @property
    def missing_from_some(self) -> dict[str, tuple[str, ...]]:
        """Target -> the libraries (with device code) that lack it."""
        out: dict[str, tuple[str, ...]] = {}
        for target in self.all_targets:
            lacking = tuple(lib.path for lib in self.with_device_code if target not in lib.targets)
            if lacking:
                out[target] = lacking
        return out


def entry_satisfies(entry: EntryId, base: str, sramecc: str = "", xnack: str = "") -> bool:
    """Whether code in `entry` loads on a device of that target.

    A feature the expectation leaves open accepts any entry setting; one it fixes accepts the
    same setting or an entry built for Any (AMDGPUUsage target-ID rules, reference §1.2).
    """
    if not entry.is_amdgpu or entry.processor != base:
        return False
    for name, wanted in (("sramecc", sramecc), ("xnack", xnack)):
        if wanted and entry.feature(name) not in (wanted, ""):
            return False
    return True


def missing_targets(report: InspectReport,
                    expected: Iterable[str | TargetId]) -> tuple[MissingTarget, ...]:
    """Each (expected target, library) pair where a library with device code lacks it.

    `expected` holds `TargetId`-like values (base, sramecc, xnack) or strings
    such as "gfx90a:xnack-". Libraries without device code are not counted: a host-only
    library is not missing anything. Only entries nothing contradicts count (`proven_ids`).
    """
    wanted = [_as_target(item) for item in expected]
    out: list[MissingTarget] = []
    for lib in report.with_device_code:
        for text, base, sramecc, xnack in wanted:
            if not any(entry_satisfies(e, base, sramecc, xnack) for e in lib.proven_ids):
                listed = any(entry_satisfies(e, base, sramecc, xnack) for e in lib.entry_ids)
                out.append(MissingTarget(target=text, path=lib.path, found=lib.proven_targets,
                                         listed=listed))  # fmt: skip
    return tuple(out)


def _as_target(item: str | TargetId) -> tuple[str, str, str, str]:
    if isinstance(item, str):
        base, *features = item.strip().lower().split(":")
        settings = {f[:-1]: f[-1:] for f in features if f[-1:] in ("+", "-")}
        return item, base, settings.get("sramecc", ""), settings.get("xnack", "")
    return str(item), item.base, item.sramecc, item.xnack


def library_rows(report: InspectReport) -> list[tuple[str, ...]]:
    """One row per library: status, path, bundles, targets, code object versions, storage."""
    rows: list[tuple[str, ...]] = []
    for lib in report.libraries:
        if lib.status == "error":
            rows.append(("FAIL", lib.path, "-", "-", "-", "-", lib.error))
            continue
        versions = ",".join(f"v{v}" for v in lib.code_object_versions) or "-"
        note_parts = list(lib.notes)
        if lib.status == "partial":
            note_parts.insert(0, lib.error)
        if lib.mismatches:
            note_parts.append(
                f"{len(lib.mismatches)} ID/e_flags mismatch(es): " + lib.mismatches[0]
            )
        if lib.damaged_entries:
            note_parts.append(f"{lib.damaged_entries} damaged entr(y/ies) prove nothing")
        if lib.unchecked:
            note_parts.append(f"{lib.unchecked} code object(s) not cross-checked")
        if lib.raw_code_objects:
            note_parts.append(_raw_note(lib.raw_code_objects))
        if lib.deep and any(b.compressed for b in lib.bundles):
            compressed = sum(1 for b in lib.bundles if b.compressed)
            note_parts.append(
                f"--deep: {lib.verified_bundles} of {compressed} compressed bundle(s) "
                "decompressed whole and matched their header hash"
            )
        if lib.status == "split":
            note_parts.insert(0, lib.error)
        if lib.kpack_archives:
            note_parts.append("kpack: " + ", ".join(_base(p) for p in lib.kpack_archives))
        status = {"ok": "OK", "partial": "FAIL", "rdc": "INFO", "split": "FAIL"}.get(
            lib.status, "INFO")
        if (lib.mismatches or lib.kpack_unreadable) and status != "FAIL":
            status = "WARN"
        rows.append(
            (
                status,
                lib.path,
                str(len(lib.bundles)),
                " ".join(lib.targets) or _no_targets_reason(lib),
                versions,
                " ".join(lib.containers) or "-",
                "; ".join(note_parts),
            )
        )
    return rows


def _base(path: str) -> str:
    """The file name of a path or of a wheel member (`x.whl!torch/.kpack/a.kpack`)."""
    return path.rsplit("/", 1)[-1].rsplit("!", 1)[-1]


def _raw_note(raw: Sequence[RawCodeObject]) -> str:
    sections = sorted({r.section for r in raw})
    text = (
        f"{len(raw)} raw code object(s) in {', '.join(sections)} (loaded with "
        "hipModuleLoadData, not in .hip_fatbin)"
    )
    bad = [r for r in raw if r.problem]
    if bad:
        text += f"; {len(bad)} prove nothing: {bad[0].section}+{bad[0].offset:#x}: {bad[0].problem}"
    return text


def _no_targets_reason(lib: LibraryReport) -> str:
    return {
        "no-device-code": "(no .hip_fatbin)",
        "stripped": "(device code stripped)",
        "rdc": "(not linked)",
        "split": "(kpack archive not found)",
    }.get(lib.status, "(none read)")


COLUMNS = ("status", "library", "bundles", "targets", "code object", "storage", "notes")


def to_json(
    report: InspectReport,
    *,
    expected: Sequence[str] = (),
    missing: Sequence[MissingTarget] = (),
    verdict: Verdict | None = None,
) -> JSONDoc:
    """The versioned JSON document of `invoke inspect --json`.

    Version 1 grew by keys only (sources, verdict, deep, raw code objects, bundle problems);
    no key changed meaning.
    """
    return {
        "schema": SCHEMA,
        "deep": report.deep,
        "sources": [
            {"path": s.path, "kind": s.kind, "files": s.files, "elf_files": s.elf_files,
             "archives": s.archives}
            for s in report.sources
        ],
        "verdict": None if verdict is None else {
            "exit_code": verdict.exit_code,
            "problems": list(verdict.problems),
            "notes": list(verdict.notes),
        },
        "libraries": [_library_json(lib) for lib in report.libraries],
        "summary": {
            "libraries": len(report.libraries),
            "readable": len(report.readable),
            "with_device_code": len(report.with_device_code),
            "skipped_files": report.skipped_files,
            "all_targets": list(report.all_targets),
            "common_targets": list(report.common_targets),
            "missing_from_some": {t: list(p) for t, p in report.missing_from_some.items()},
        },
        "expected": list(expected),
        "missing": [
            {"target": m.target, "path": m.path, "found": list(m.found), "listed": m.listed}
            for m in missing
        ],
    }


def _library_json(lib: LibraryReport) -> dict[str, Any]:
    return {
        "path": lib.path,
        "status": lib.status,
        "error": lib.error,
        "notes": list(lib.notes),
        "targets": list(lib.targets),
        "code_object_versions": list(lib.code_object_versions),
        "storage": list(lib.containers),
        "mismatches": list(lib.mismatches),
        "rdc_entries": [e.text for e in lib.rdc_entries],
        "raw_scan": lib.raw_scan,
        "kpack": None if lib.kpack_ref is None else {
            "kernel_name": lib.kpack_ref.kernel_name,
            "search_paths": list(lib.kpack_ref.search_paths),
            "archives": list(lib.kpack_archives),
        },
        "raw_code_objects": [
            {
                "section": r.section,
                "offset": r.offset,
                "size": r.size,
                "target": r.entry_id.target if r.entry_id is not None else "",
                "code_object_version": r.code_object_version,
                "e_flags": r.e_flags,
                "problem": r.problem,
            }
            for r in lib.raw_code_objects
        ],
        "damage": [
            {"offset": d.offset, "problem": d.problem, "resumed_at": d.resumed_at,
             "entries_kept": d.entries_kept}
            for d in lib.damage
        ],  # fmt: skip
        "bundles": [
            {
                "offset": b.offset,
                "stored_size": b.stored_size,
                "container": b.container,
                "compression": b.compression,
                "uncompressed_size": b.uncompressed_size,
                "problem": b.problem,
                "declared_entries": b.declared_entries,
                "verified": b.verified,
                "entries": [
                    {
                        "id": e.entry_id.text,
                        "target": e.entry_id.target,
                        "offset": e.offset,
                        "size": e.size,
                        "check": e.check.status,
                        "check_detail": e.check.detail,
                        "code_object_version": e.check.code_object_version,
                        "e_flags": e.check.e_flags,
                    }
                    for e in b.entries
                ],
            }
            for b in lib.bundles
        ],
    }


def summary_rows(report: InspectReport) -> list[tuple[str, str]]:
    """The "Summary" table: libraries read, with device code, common targets, and per target
    the libraries lacking it (first five named)."""
    libs = report.with_device_code
    elf = report.elf_rows
    rows = [
        ("libraries read", f"{sum(1 for lib in elf if lib.readable)} of {len(elf)}"
                           f" ({report.skipped_files} non-ELF files skipped)"),
    ]
    archives = sum(s.archives for s in report.sources)
    if archives:
        bad = sum(1 for lib in report.archive_rows if not lib.readable)
        rows.append(("kpack archives", f"{archives - bad} of {archives} read"))
    rows += [
        ("with device code", str(len(libs))),
        ("common to all", " ".join(report.common_targets) or "-"),
    ]
    for target, lacking in report.missing_from_some.items():
        more = " ..." if len(lacking) > 5 else ""
        rows.append((f"missing {target}",
                     f"{len(lacking)} of {len(libs)}: {', '.join(lacking[:5])}{more}"))
    return rows
