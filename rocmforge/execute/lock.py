"""The build lock: one build per work dir.

Owns: `<state>/build.lock`, created with O_CREAT|O_EXCL and holding the holder's pid, start time,
host and command line, plus the process group of the step it is running. A lock whose pid is dead
(a SIGKILLed or crashed build) is taken over with a message, after ending that build's orphaned
step process group, which would otherwise keep writing into the tree. A live holder is an error
(exit 2) that names it. Must not: run build steps.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from rocmforge.errors import RocmforgeError
from rocmforge.execute.stamps import atomic_write_text


class BuildLocked(RocmforgeError):
    """Another live build holds this work dir (exit 2: nothing was changed)."""


@dataclass(frozen=True, kw_only=True)
class LockHolder:
    pid: int
    started: str
    host: str
    argv: tuple[str, ...] = ()
    step_pgid: int = 0


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie counts as dead: it will never release the lock.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def read_holder(path: Path) -> LockHolder | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        return LockHolder(
            pid=int(doc["pid"]),
            started=str(doc["started"]),
            host=str(doc.get("host", "")),
            argv=tuple(str(a) for a in doc.get("argv", ())),
            step_pgid=int(doc.get("step_pgid", 0)),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


class BuildLock:
    """Held for the duration of one `invoke build`; use as a context manager."""

    def __init__(self, path: Path, *, say: Callable[[str], None] | None = None) -> None:
        self.path = path
        self._say = say or (lambda msg: print(msg, file=sys.stderr))
        self.holder: LockHolder | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        me = LockHolder(pid=os.getpid(), started=_now(), host=socket.gethostname(),
                        argv=tuple(sys.argv))
        for _attempt in range(3):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                self._handle_existing()
                continue
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(_holder_json(me), indent=2) + "\n")
            self.holder = me
            return
        raise BuildLocked(
            f"Could not take the build lock {self.path}",
            "another process kept re-creating it while this build tried to take it over",
            "wait for the other build to finish, then run the command again",
        )

    def _handle_existing(self) -> None:
        holder = read_holder(self.path)
        if holder is None:
            # Written by a process killed between open() and write(): empty or partial JSON.
            # Only treat it as stale when it is not brand new (a live writer may be mid-write).
            try:
                age = time.time() - self.path.stat().st_mtime
            except FileNotFoundError:
                return
            if age < 2.0:
                time.sleep(0.2)
                return
            self._say(f"rocmforge: taking over the unreadable build lock {self.path}.")
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            return
        same_host = holder.host in ("", socket.gethostname())
        if holder.pid == os.getpid() and same_host:
            raise BuildLocked(
                f"This process already holds the build lock {self.path}",
                "a build cannot be started twice from one process",
                "let the first build finish",
            )
        if not same_host or _pid_alive(holder.pid):
            where = f" on {holder.host}" if holder.host else ""
            raise BuildLocked(
                f"Another build (pid {holder.pid}{where}, started {holder.started}) is using "
                f"this work dir; its lock is {self.path}",
                "two builds in one tree would overwrite each other's files",
                "wait for it to finish, stop it, or give this build another --work-dir",
            )
        self._say(
            f"rocmforge: the build lock {self.path} belongs to pid {holder.pid} (started "
            f"{holder.started}), which is no longer running; taking it over."
        )
        if holder.step_pgid > 0 and _group_alive(holder.step_pgid):
            self._say(
                f"rocmforge: ending process group {holder.step_pgid} left running by that build."
            )
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(holder.step_pgid, signal.SIGKILL)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def set_step_group(self, pgid: int) -> None:
        """Record the process group of the running step (for a later takeover to end it)."""
        if self.holder is None:
            return
        self.holder = LockHolder(pid=self.holder.pid, started=self.holder.started,
                                 host=self.holder.host, argv=self.holder.argv, step_pgid=pgid)
        with contextlib.suppress(OSError):
            atomic_write_text(self.path, json.dumps(_holder_json(self.holder), indent=2) + "\n")

    def release(self) -> None:
        if self.holder is None:
            return
        current = read_holder(self.path)
        if current is not None and current.pid == self.holder.pid:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
        self.holder = None

    def __enter__(self) -> BuildLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _holder_json(holder: LockHolder) -> dict[str, object]:
    return {
        "pid": holder.pid,
        "started": holder.started,
        "host": holder.host,
        "argv": list(holder.argv),
        "step_pgid": holder.step_pgid,
    }


@contextlib.contextmanager
def build_lock(path: Path, *, say: Callable[[str], None] | None = None) -> Iterator[BuildLock]:
    lock = BuildLock(path, say=say)
    with lock:
        yield lock
