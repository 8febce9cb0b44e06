"""Small file-system helpers shared by the kit's writers.

Owns: `write_atomic()`, the one way the kit replaces a small file (a lock file, saved compiler
state, a vendored file): bytes go to a temp file in the same folder, are fsynced, then renamed
over the target with `os.replace`, so a crash, a full disk or a SIGKILL leaves either the old
file or the new one, never half of one. Also `JSONValue`/`JSONDoc`, the types of the JSON
documents the kit reads and writes. Must not: decide what to write or where; callers own their
paths and formats. Streams that need hashing while they are written (wheel downloads) keep
their own temp-file handling.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

JSONValue = str | int | float | bool | None | Sequence["JSONValue"] | Mapping[str, "JSONValue"]
"""Any value `json.dumps` writes and `json.loads` returns (read-only views, so a `dict[str, str]`
or a `tuple` is one too); narrow with isinstance before use."""
JSONDoc = dict[str, JSONValue]
"""A JSON object the kit writes or reads: a versioned document or one of its records."""


def write_atomic(path: Path, data: bytes | str) -> None:
    """Replace `path` with `data` (str is written as UTF-8) in one rename; create its folder.

    The temp file (`.<name>.*.tmp` beside `path`) is removed again when anything fails.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes 0600; the file gets the mode any new file would (0644 under the usual
        # umask 022), so a manifest beside its wheels is as readable as they are.
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def current_umask() -> int:
    """The process umask, read from /proc (setting it to read it back would race threads);
    022 where /proc does not say."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022
