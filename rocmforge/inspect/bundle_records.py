"""Clang offload bundles as records: entry IDs, bundles, entries, damage, limits.

Owns: the values a bundle walk returns (`Bundle`, its `Row`s, `Entry`, `CodeObjectCheck`,
`Damage`, `FatbinScan`), the caps that keep a walk bounded (`Limits`), the one error a malformed
bundle raises (`BundleFormatError`), the two magics and the AMDGPU triple, and entry-ID parsing
(`hip`/`hipv4`, 3- or 4-field triples, target features, both host spellings; reference
rocm-arch-toolchain.md §5.2). Must not: read bytes (bundles.py walks, ccob.py decompresses,
code_object_check.py compares headers), open files or print.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from rocmforge.errors import RocmforgeError

PLAIN_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
CCOB_MAGIC = b"CCOB"
AMDGPU_TRIPLE = "amdgcn-amd-amdhsa"


class BundleFormatError(RocmforgeError):
    """Bundle bytes that do not follow the format: truncated, sizes that lie, bad compression."""


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Caps that keep memory flat and stop hostile inputs (zip bombs, absurd counts)."""

    max_entries: int = 4096
    max_id_length: int = 4096
    # Decompressed bytes accepted to reach the end of a compressed bundle's entry table.
    max_table_bytes: int = 1 << 20
    # Decompressed bytes per compressed bundle spent on code-object header checks.
    check_prefix_bytes: int = 32 << 10
    # Plain bundles: code-object headers read per entry ID (each read touches a payload page);
    # later ones are "not-checked" unless the walk is deep.
    checks_per_id: int = 16
    # zstd window cap (memory): frames that need more are reported, not decoded.
    max_zstd_window: int = 1 << 27
    # CCOB v1 has no total size: bytes we are willing to inflate to find a zlib stream's end.
    max_v1_inflate: int = 1 << 32
    # Damaged regions recorded (each followed by a search for the next bundle) before giving up.
    max_damage: int = 1000


DEFAULT_LIMITS = Limits()
MachName = Callable[[int], "str | None"]


@dataclass(frozen=True, kw_only=True)
class EntryId:
    """One parsed entry ID, e.g. `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`."""

    text: str
    kind: str
    triple: str
    processor: str = ""
    features: tuple[tuple[str, str], ...] = ()

    @property
    def is_host(self) -> bool:
        return self.kind == "host"

    @property
    def is_amdgpu(self) -> bool:
        return not self.is_host and self.triple == AMDGPU_TRIPLE and self.processor != ""

    @property
    def target(self) -> str:
        """Canonical target ID: processor, then features in alphabetical order."""
        if not self.processor:
            return ""
        return ":".join([self.processor, *(f"{n}{v}" for n, v in sorted(self.features))])

    def feature(self, name: str) -> str:
        """'+', '-' or '' (Any) for a target feature."""
        return dict(self.features).get(name, "")


@dataclass(frozen=True, kw_only=True)
class CodeObjectCheck:
    """Result of comparing a code object's ELF header with its entry ID.

    "damaged": the entry's bytes run past the bundle's data, or (deep) the code object's own
    section header table runs past the entry; a damaged entry proves nothing.
    """

    status: str  # "ok", "mismatch", "not-checked", "host", "damaged"
    detail: str = ""
    code_object_version: int | None = None
    e_flags: int | None = None


@dataclass(frozen=True, kw_only=True)
class Entry:
    entry_id: EntryId
    offset: int  # from the start of the (uncompressed) bundle
    size: int
    check: CodeObjectCheck


# One entry as the walk stores it: (entry ID, offset, size, check). Plain tuples, because a
# PyTorch library has tens of thousands of entries; `Bundle.entries` builds `Entry` values.
Row = tuple[EntryId, int, int, CodeObjectCheck]


class Bundle(NamedTuple):
    """One bundle found in a section: where, how stored, and its entries.

    A NamedTuple, not a frozen dataclass: a PyTorch library holds tens of thousands of bundles
    and a frozen dataclass costs four times as much to make (one `object.__setattr__` per
    field); it is as immutable. Build it with keywords.
    """

    offset: int  # from the start of the section
    stored_size: int  # bytes it takes in the section
    container: str  # "plain", "ccob-v1", "ccob-v2", "ccob-v3"
    compression: str = ""  # "", "zlib", "zstd"
    uncompressed_size: int = 0
    rows: tuple[Row, ...] = ()
    # What was wrong inside this bundle ("" when nothing): its rows are the entries that could
    # be read. `size_known` False: the table broke off, so its extent is unknown and the walk
    # looks for the next bundle magic.
    problem: str = ""
    size_known: bool = True
    declared_entries: int = 0
    # Deep walks: the payload decompressed whole and matched the CCOB header's hash.
    verified: bool = False

    @property
    def compressed(self) -> bool:
        """A compressed offload bundle (CCOB); kpack pseudo-bundles are not (kpack.py)."""
        return self.container not in ("plain", "kpack")

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(Entry(entry_id=i, offset=o, size=s, check=c) for i, o, s, c in self.rows)

    @property
    def device_entries(self) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if not e.entry_id.is_host)


@dataclass(frozen=True, kw_only=True)
class Damage:
    """A malformed bundle, and where the walk found the next bundle magic (None: nowhere).

    `entries_kept`: the bundle's table was read up to the damage and those entries are in the
    scan's bundles (0: nothing of it could be read).
    """

    offset: int  # section offset of the malformed bundle
    problem: str
    resumed_at: int | None
    entries_kept: int = 0


@dataclass(frozen=True, kw_only=True)
class FatbinScan:
    """Every bundle read from one section, and each damaged region the walk stepped over."""

    bundles: tuple[Bundle, ...]
    damage: tuple[Damage, ...] = ()

    @property
    def problem(self) -> str:
        return self.damage[0].problem if self.damage else ""

    @property
    def problem_offset(self) -> int | None:
        return self.damage[0].offset if self.damage else None


@functools.lru_cache(maxsize=4096)
def parse_entry_id(text: str) -> EntryId:
    """Parse `<kind>-<triple>[-<target-id>]`, tolerant of 3/4-field triples (reference §5.2).

    Cached: a PyTorch library repeats the same few IDs in thousands of bundles.
    """
    kind, sep, rest = text.partition("-")
    if not sep or not kind or not rest:
        raise BundleFormatError(f"entry ID {text!r} has no '<kind>-<triple>' form")
    if kind == "host":
        return EntryId(text=text, kind=kind, triple=rest.rstrip("-"))
    if not rest.startswith(AMDGPU_TRIPLE):
        # Another offload target (e.g. nvptx or an openmp host fallback): keep, not AMD GPU code.
        return EntryId(text=text, kind=kind, triple=rest)
    tail = rest[len(AMDGPU_TRIPLE) :]
    if tail and not tail.startswith("-"):
        raise BundleFormatError(f"entry ID {text!r}: triple {AMDGPU_TRIPLE!r} is followed by junk")
    # 4-field triples put an (empty) environment between triple and target: `--gfx1100`; an old
    # 3-field triple has one dash. A non-empty environment ends at the processor's `gfx`.
    tail = tail.lstrip("-")
    gfx_at = tail.find("gfx")
    target = tail[gfx_at:] if gfx_at > 0 else tail
    if not target:
        raise BundleFormatError(f"entry ID {text!r} names no target processor")
    processor, *feature_texts = target.split(":")
    if not processor or not all(ch.isalnum() or ch == "-" for ch in processor):
        raise BundleFormatError(f"entry ID {text!r}: {processor!r} is not a processor name")
    features: list[tuple[str, str]] = []
    for item in feature_texts:
        name, sign = item[:-1], item[-1:]
        if sign not in ("+", "-") or not name.isalpha():
            raise BundleFormatError(
                f"entry ID {text!r}: target feature {item!r} is not '<name>+' or '<name>-'"
            )
        features.append((name, sign))
    return EntryId(
        text=text,
        kind=kind,
        triple=AMDGPU_TRIPLE,
        processor=processor.lower(),
        features=tuple(features),
    )
