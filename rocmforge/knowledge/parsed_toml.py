"""The kit's parsed TOML documents, kept across runs by their content.

Owns: a folder of JSON files (`$ROCMFORGE_CACHE_DIR/toml`, else `$XDG_CACHE_HOME/rocmforge/toml`,
else `~/.cache/rocmforge/toml`), one per distinct document, named by the sha256 of the file's
bytes. The pure-Python TOML parser takes ~50 ms for the config/ files on every `invoke plan`;
hashing the bytes and loading JSON takes ~2 ms. A key is the content itself, so an edited file
(however fast, whatever its mtime) is parsed again. Documents JSON cannot hold exactly (TOML
dates and times) are never kept. Must not: decide what a document means, or fail a read: cache
trouble only costs the parse.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from rocmforge.fsutil import write_atomic

DISABLE_ENV = "ROCMFORGE_PROBE_CACHE"  # "0" also turns this cache off (one switch for both)


def cache_folder() -> Path:
    explicit = os.environ.get("ROCMFORGE_CACHE_DIR")
    if explicit:
        return Path(explicit) / "toml"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rocmforge" / "toml"


def parsed(data: bytes, parse: Callable[[bytes], dict[str, object]]) -> dict[str, object]:
    """`parse(data)`, or the document an earlier run parsed from the same bytes."""
    if os.environ.get(DISABLE_ENV, "1").strip().lower() in ("0", "no", "false", "off"):
        return parse(data)
    name = hashlib.sha256(data).hexdigest() + ".json"
    stored = cache_folder() / name
    with contextlib.suppress(OSError, ValueError):
        document = json.loads(stored.read_text(encoding="utf-8"))
        if isinstance(document, dict):
            return document
    document = parse(data)
    with contextlib.suppress(OSError, TypeError, ValueError):
        # TypeError: a TOML date/time, which JSON would not give back as the same type.
        write_atomic(stored, json.dumps(document, allow_nan=True))
    return document
