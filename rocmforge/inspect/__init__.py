"""Which GPU targets a wheel, directory or ELF file really contains (`invoke inspect`).

Owns: the public entry points used by the inspect task and by verification's static half:
`inspect_paths(paths) -> InspectReport` and `missing_targets(report, expected)`. Layout:
`bundles` parses bundle bytes (pure), `elf` is the only ELF reader, `rawcode` finds code
objects embedded in data sections, `reader` opens files, directories and wheel members,
`member` reads a deflated wheel member in one pass, `report` holds the results and their
JSON/table forms, `verdict` turns a report into the exit status and its reasons.
Must not: write to disk, extract wheels, or print.
"""

from __future__ import annotations

from rocmforge.inspect.bundles import (
    Bundle,
    BundleFormatError,
    Entry,
    EntryId,
    Limits,
    parse_entry_id,
    walk_fatbin,
)
from rocmforge.inspect.reader import inspect_paths
from rocmforge.inspect.report import (
    SCHEMA,
    InspectReport,
    LibraryReport,
    MissingTarget,
    missing_targets,
    to_json,
)

__all__ = [
    "SCHEMA",
    "Bundle",
    "BundleFormatError",
    "Entry",
    "EntryId",
    "InspectReport",
    "LibraryReport",
    "Limits",
    "MissingTarget",
    "inspect_paths",
    "missing_targets",
    "parse_entry_id",
    "to_json",
    "walk_fatbin",
]
