"""What a tool answered to a read-only question (`--version`), kept by the tool file's identity.

Owns: one small JSON cache (`$ROCMFORGE_CACHE_DIR`, else `$XDG_CACHE_HOME/rocmforge`, else
`~/.cache/rocmforge`) mapping (real path, size, mtime, inode, arguments) to the output. A
reinstalled or upgraded tool changes the key, so a stale answer cannot be returned. Probes ask on
every `invoke plan`/`doctor`/`env`; hipcc (a Perl script) alone takes about 0.25 s to answer.
Must not: cache anything that depends on more than the file and its arguments, or fail a probe:
cache trouble only costs the run.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from rocmforge.fsutil import write_atomic

CACHE_DIR_ENV = "ROCMFORGE_CACHE_DIR"
CACHE_NAME = "tool-output.json"

_lock = threading.Lock()
_memory: dict[str, str] = {}


def cache_file() -> Path:
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        return Path(explicit) / CACHE_NAME
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rocmforge" / CACHE_NAME


def tool_key(tool: Path, args: Sequence[str]) -> str | None:
    """The identity of `tool args`, or None when the file cannot be read (then: no caching)."""
    try:
        real = tool.resolve()
        stat = real.stat()
    except OSError:
        return None
    return "|".join([str(real), str(stat.st_size), str(stat.st_mtime_ns), str(stat.st_ino),
                     *args])


def cached_output(tool: Path, args: Sequence[str], ask: Callable[[], str | None]) -> str | None:
    """`ask()` once per tool identity; answers that are None or empty are never kept."""
    key = tool_key(tool, args)
    if key is None:
        return ask()
    with _lock:
        if key in _memory:
            return _memory[key]
        stored = _load()
    if key in stored:
        with _lock:
            _memory[key] = stored[key]
        return stored[key]
    answer = ask()
    if answer:
        with _lock:
            _memory[key] = answer
            stored = _load()
            stored[key] = answer
            with contextlib.suppress(OSError):
                write_atomic(cache_file(), json.dumps(stored, indent=1, sort_keys=True))
    return answer


def _load() -> dict[str, str]:
    try:
        data = json.loads(cache_file().read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): str(v) for k, v in data.items()}
