"""Which GPU targets a wheel, directory or ELF file really contains (`invoke inspect`).

Owns: the public entry points used by the inspect task and by verification's static half:
`inspect_paths(paths) -> InspectReport` and `missing_targets(report, expected)`. Layout:
`bundles` walks a section's bundles and their tables (pure), `bundle_records` holds what it
returns and parses entry IDs, `ccob` the compressed bundle's header and bounded decompression,
`code_object_check` a code object's header against its entry ID, `byte_source` the byte ranges
they all read through, `elf` is the only ELF reader, `rawcode` finds code objects embedded in
data sections, `reader` opens files, directories and wheel members, `member` reads a deflated
wheel member in one pass, `kpack` decodes TheRock's kpack markers and archives, `kpack_links`
follows each marker to its archives, `report` holds the results and their JSON/table forms,
`verdict` turns a report into the exit status and its reasons.
Public names are loaded from their modules on first use.
Must not: write to disk, extract wheels, or print.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rocmforge.inspect.bundle_records import (
        Bundle,
        BundleFormatError,
        Entry,
        EntryId,
        Limits,
        parse_entry_id,
    )
    from rocmforge.inspect.bundles import walk_fatbin
    from rocmforge.inspect.reader import inspect_paths
    from rocmforge.inspect.report import (
        SCHEMA,
        InspectReport,
        LibraryReport,
        MissingTarget,
        missing_targets,
        to_json,
    )

# Name -> the module that defines it. Loaded on first use (PEP 562), so a caller that needs one
# module (`rocmforge.inspect.elf` for `invoke doctor`) does not load the reader and its imports.
_HOMES = {
    "Bundle": "bundle_records",
    "BundleFormatError": "bundle_records",
    "Entry": "bundle_records",
    "EntryId": "bundle_records",
    "Limits": "bundle_records",
    "parse_entry_id": "bundle_records",
    "walk_fatbin": "bundles",
    "inspect_paths": "reader",
    "SCHEMA": "report",
    "InspectReport": "report",
    "LibraryReport": "report",
    "MissingTarget": "report",
    "missing_targets": "report",
    "to_json": "report",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


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
