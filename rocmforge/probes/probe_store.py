"""Results of expensive probes kept across runs, keyed on everything that decides them.

Owns: the key (`probe_key`: a kind, the identity of every file that decides the answer (real
path, size, mtime, ctime, inode; "missing" when absent), the texts it compiles or parses and the
environment variables that change it, hashed), the store (`probe-results.json` beside the tool
cache: `$ROCMFORGE_CACHE_DIR`, else `$XDG_CACHE_HOME/rocmforge`, else `~/.cache/rocmforge`), and
the switch (`ROCMFORGE_PROBE_CACHE=0`, or a caller's `enabled=False` from `--no-cache`), and
`PathStamp`, what a kept answer rests on besides its key (a path as it was, stat'ed again by
`changed`).
A changed tool changes its identity and so the key: a stale answer is never returned.
Must not: decide what goes into a key (the probe that owns the answer does), keep an answer
that is not JSON, or fail a probe: cache trouble only costs the run.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from rocmforge.fsutil import write_atomic
from rocmforge.probes.tool_cache import cache_file as tool_cache_file

DISABLE_ENV = "ROCMFORGE_PROBE_CACHE"  # "0": every probe runs afresh
STORE_NAME = "probe-results.json"
MAX_ENTRIES = 64  # oldest entries go first; a key changes with every tool upgrade

_lock = threading.Lock()


@dataclass(frozen=True, kw_only=True)
class Stored:
    """A kept answer and when it was stored (UTC, ISO 8601 to the second)."""

    value: dict[str, object]
    stored_at: str


Stamp = tuple[int, int, int, int, int]  # (device, inode, size, mtime_ns, ctime_ns)


@dataclass(frozen=True, kw_only=True)
class PathStamp:
    """One path a kept answer depends on, as it was: a file a compile read, or a folder it
    searched (or would have searched) for one. `stamp` is None when nothing was there. The
    path is stat'ed as it was named, through any symlink, so a retargeted link shows as another
    inode; a folder's mtime moves when an entry is added, removed or renamed in it; the ctime
    moves with every write and cannot be set back, so an edit that restores the mtime shows."""

    path: str
    stamp: Stamp | None

    def as_json(self) -> list[object]:
        return [self.path, list(self.stamp) if self.stamp is not None else None]

    @classmethod
    def of_json(cls, data: object) -> PathStamp | None:
        if not isinstance(data, list) or len(data) != 2 or not isinstance(data[0], str):
            return None
        if data[1] is None:
            return cls(path=data[0], stamp=None)
        raw = data[1]
        if not isinstance(raw, list) or len(raw) != 5 or not all(isinstance(v, int)
                                                                 for v in raw):
            return None
        return cls(path=data[0], stamp=(raw[0], raw[1], raw[2], raw[3], raw[4]))


def stamp_of(path: str) -> Stamp | None:
    """The stamp of what `path` names now (symlinks followed); None when nothing is there."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


def changed(stamps: Iterable[PathStamp]) -> str:
    """The first path that is not as recorded ("" when none): each is stat'ed again."""
    for kept in stamps:
        now = stamp_of(kept.path)
        if now != kept.stamp:
            if now is None:
                return f"{kept.path} is gone"
            return f"{kept.path} appeared" if kept.stamp is None else f"{kept.path} changed"
    return ""


def store_file() -> Path:
    return tool_cache_file().parent / STORE_NAME


def enabled(environ: Mapping[str, str]) -> bool:
    return environ.get(DISABLE_ENV, "1").strip().lower() not in ("0", "no", "false", "off")


def file_identity(path: str | os.PathLike[str]) -> str:
    """`real path|size|mtime_ns|ctime_ns|inode` of the file `path` names, or `path|missing`.
    The ctime moves with every write and cannot be set back, so an edit that restores the
    mtime still changes the identity."""
    try:
        real = Path(path).resolve()
        stat = real.stat()
    except (OSError, RuntimeError):
        return f"{os.fspath(path)}|missing"
    return f"{real}|{stat.st_size}|{stat.st_mtime_ns}|{stat.st_ctime_ns}|{stat.st_ino}"


# Variables that change between shells, or that only the kit, Invoke, Python or pytest read:
# they never change what a compiler or its driver script does, so keys leave them out.
VOLATILE_VARIABLES = frozenset((
    "PWD", "OLDPWD", "SHLVL", "_", "TERM", "COLUMNS", "LINES", "LS_COLORS", "DISPLAY",
    "SSH_CLIENT", "SSH_CONNECTION", "SSH_TTY", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "TMUX",
    "TMUX_PANE", "STY", "WINDOW", "WINDOWID", "MAIL", "HISTFILE", "NO_COLOR", "COLORTERM",
    "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "TERM_SESSION_ID", "GPG_TTY", "XDG_SESSION_ID",
    "XDG_SESSION_TYPE", "XDG_SESSION_CLASS", "DBUS_SESSION_BUS_ADDRESS", "INVOCATION_ID",
    "JOURNAL_STREAM"))
KIT_PREFIXES = ("ROCMFORGE_", "INVOKE_", "PYTHON", "PYTEST_")


def compiler_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The variables of `env` a compiler (or its driver script) may read: all but
    VOLATILE_VARIABLES and the kit's, Invoke's, Python's and pytest's own (KIT_PREFIXES)."""
    return {k: v for k, v in env.items()
            if k not in VOLATILE_VARIABLES and not k.startswith(KIT_PREFIXES)}


def probe_key(kind: str, *, files: Iterable[str | os.PathLike[str]], texts: Iterable[str],
              env: Mapping[str, str]) -> str:
    """One hash over everything named: a change to any file, text or variable is a new key."""
    document = json.dumps({
        "kind": kind,
        "files": [[os.fspath(f), file_identity(f)] for f in files],
        "texts": list(texts),
        "env": sorted(env.items()),
    }, sort_keys=True)
    return hashlib.sha256(document.encode()).hexdigest()


def lookup(key: str) -> Stored | None:
    return lookup_many([key]).get(key)


def lookup_many(keys: Iterable[str]) -> dict[str, Stored]:
    """The kept answers of those `keys` that have one (the store is read once)."""
    entries = _load()
    found: dict[str, Stored] = {}
    for key in keys:
        entry = entries.get(key)
        if not isinstance(entry, dict):
            continue
        value, stored_at = entry.get("value"), entry.get("stored_at")
        if isinstance(value, dict) and isinstance(stored_at, str):
            found[key] = Stored(value=value, stored_at=stored_at)
    return found


def store(key: str, value: dict[str, object]) -> None:
    """Keep `value` under `key` (the oldest entries beyond MAX_ENTRIES are dropped)."""
    store_many({key: value})


def store_many(values: Mapping[str, dict[str, object]]) -> None:
    """Keep each value under its key, in one write of the store."""
    if not values:
        return
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with _lock:
        entries = _load()
        for key, value in values.items():
            entries[key] = {"value": value, "stored_at": stamp}
        kept = sorted(entries.items(), key=lambda kv: str(kv[1].get("stored_at", "")))
        kept = kept[-MAX_ENTRIES:]
        with contextlib.suppress(OSError, TypeError, ValueError):
            write_atomic(store_file(), json.dumps(dict(kept), indent=1, sort_keys=True))


def _load() -> dict[str, dict[str, object]]:
    try:
        data = json.loads(store_file().read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, dict)}
