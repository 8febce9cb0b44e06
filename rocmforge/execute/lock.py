"""The work-dir lock: one build (or other tree-changing task) per work dir, kernel-enforced.

Owns: `<state>/build.lock`. Exclusion is the kernel's `flock(LOCK_EX | LOCK_NB)` on the open
file: held while the kit's process lives and dropped by the kernel however it ends, so two
processes can never both hold it and a dead holder never blocks anyone. The JSON inside (pid,
start, host, argv, task, and the identity of the running step's process group: leader pid, its
start time in clock ticks after boot from /proc/<pid>/stat field 22, and the boot id) is only
read for the busy message and to end a group a killed holder left running, which happens only
when all three still match. The file is unlinked on release while still locked, and a taker
checks that the file it locked is still the one at the path (same inode), so an unlink never
lets two holders in. `work_lock()` is the context manager tasks take. Must not: run build
steps, or end a process group it cannot prove is the one a holder of this lock started.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from rocmforge import process
from rocmforge.errors import EnvironmentFailed, RocmforgeError, disk_full

if TYPE_CHECKING:
    from rocmforge.workdir import WorkDir

LOCK_NAME = "build.lock"
# How long a takeover waits for a SIGKILLed leftover group to disappear.
TAKEOVER_WAIT_S = 10.0
# Attempts at locking the file at the path while other processes keep unlinking it.
_ATTEMPTS = 50


class BuildLocked(EnvironmentFailed):
    """Another live process holds this work dir: exit 3, as for anything around the input that
    stops a task for now (the same command works once that build is done); nothing changed."""


@dataclass(frozen=True, kw_only=True)
class LockHolder:
    """What a holder wrote into the lock: who it is, and the step group it is running."""

    pid: int
    started: str
    host: str
    argv: tuple[str, ...] = ()
    task: str = "build"
    boot_id: str = ""
    # The running step's process group: its leader's pid (= the group id) and start time.
    step_pgid: int = 0
    step_start_ticks: int = 0


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _valid_pid(pid: int) -> bool:
    """A pid the kernel can have (pid_max is at most 2^22; anything >= 2^31 overflows kill)."""
    return 0 < pid < 2**31


def _pid_alive(pid: int) -> bool:
    if not _valid_pid(pid):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie counts as dead: it will never release the lock.
    stat = process.proc_stat(pid)
    return stat is None or stat.state not in ("Z", "X")


def parse_holder(text: str) -> LockHolder | None:
    """The holder a lock file's text names, or None when it is empty, not the kit's JSON, or
    names impossible values (a pid that no kernel hands out). Trailing bytes after the JSON
    object (a rewrite cut short) are ignored."""
    try:
        doc, _ = json.JSONDecoder().raw_decode(text.strip())
    except ValueError:
        return None
    if not isinstance(doc, Mapping):
        return None
    try:
        holder = LockHolder(
            pid=int(doc["pid"]),
            started=str(doc["started"]),
            host=str(doc.get("host", "")),
            argv=tuple(str(a) for a in doc.get("argv", ())),
            task=str(doc.get("task", "build")),
            boot_id=str(doc.get("boot_id", "")),
            step_pgid=int(doc.get("step_pgid", 0)),
            step_start_ticks=int(doc.get("step_start_ticks", 0)),
        )
    except (KeyError, TypeError, ValueError):
        return None
    if not _valid_pid(holder.pid) or not (holder.step_pgid == 0 or _valid_pid(holder.step_pgid)):
        return None
    return holder


def _record_problem(text: str) -> str:
    """Why a lock file's text names no holder, in words for the takeover note."""
    try:
        doc, _ = json.JSONDecoder().raw_decode(text.strip())
    except ValueError:
        return "is not the kit's JSON (a write cut short, or another program's file)"
    if isinstance(doc, Mapping):
        for key in ("pid", "step_pgid"):
            value = doc.get(key)
            if isinstance(value, int) and not isinstance(value, bool) \
                    and value != 0 and not _valid_pid(value):
                return (f"names {key} {value}, which no Linux system hands out (pids are "
                        "below 2^22)")
    return "does not name a holder the kit can read"


def read_holder(path: Path) -> LockHolder | None:
    try:
        return parse_holder(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None


def _read_fd(fd: int) -> str:
    chunks = []
    offset = 0
    while True:
        data = os.pread(fd, 65536, offset)
        if not data:
            break
        chunks.append(data)
        offset += len(data)
        if offset > 1 << 20:  # not the kit's file; enough to know that
            break
    return b"".join(chunks).decode("utf-8", "replace")


def check_work_dir_can_be_made(work: Path) -> None:
    """RocmforgeError (exit 2) when neither `work` nor its parent exists: the kit makes the
    work dir, not folders above it, so a mistyped --work-dir must not create a tree of folders
    (as root, anywhere). The build task asks this before its network checks too."""
    if not work.exists() and not work.parent.exists():
        raise RocmforgeError(
            f"The work dir {work} cannot be made: the folder {work.parent} does not exist",
            "the kit creates its work dir inside an existing folder, never the folders "
            "above it (a typo in --work-dir would otherwise leave a tree behind)",
            f"create {work.parent} first, or pass a --work-dir inside an existing folder",
        )


class BuildLock:
    """Held for the duration of one `invoke build` (or another task); a context manager."""

    def __init__(self, path: Path, *, say: Callable[[str], None] | None = None,
                 task: str = "build") -> None:
        self.path = path
        self.task = task
        self._say = say or (lambda msg: print(msg, file=sys.stderr))
        self.holder: LockHolder | None = None
        self._fd: int | None = None

    # -- taking it ---------------------------------------------------------------------------

    def acquire(self) -> None:
        check_work_dir_can_be_made(self.path.parent.parent)  # <work dir>/state/build.lock
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise self._unwritable(exc) from None
        fd = self._lock_the_file_at_path()
        self._fd = fd
        try:
            left = _read_fd(fd)
            if left.strip():
                # A holder ended without releasing; its record stays until dealt with.
                self._take_over(parse_holder(left), left)
        except BaseException:
            self._close()
            raise
        me = LockHolder(pid=os.getpid(), started=_now(), host=socket.gethostname(),
                        argv=tuple(sys.argv), task=self.task, boot_id=process.boot_id())
        try:
            self._write(me)
        except BaseException as exc:
            # Leave no lock of ours behind: no 0-byte or half-written file.
            self._unlink_if_ours()
            self._close()
            if isinstance(exc, OSError):
                raise self._unwritable(exc) from None
            raise
        self.holder = me

    def _lock_the_file_at_path(self) -> int:
        for _attempt in range(_ATTEMPTS):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError as exc:
                raise self._unwritable(exc) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                text = _read_fd(fd)
                os.close(fd)
                raise self._busy(parse_holder(text), bool(text.strip())) from None
            except OSError:
                os.close(fd)
                raise
            # Locked; but the holder we raced may have unlinked this file on release.
            try:
                here = os.stat(self.path)
            except FileNotFoundError:
                os.close(fd)
                continue
            mine = os.fstat(fd)
            if (here.st_dev, here.st_ino) == (mine.st_dev, mine.st_ino):
                return fd
            os.close(fd)
        raise BuildLocked(
            f"Could not take the lock {self.path}",
            f"other processes removed and re-created it {_ATTEMPTS} times while this one tried",
            "wait for the other rocmforge tasks in this work dir to finish, then run again",
        )

    def _busy(self, holder: LockHolder | None, has_text: bool) -> BuildLocked:
        if holder is None:
            detail = ("its lock file names no valid holder" if has_text
                      else "it has not written its details yet")
            return BuildLocked(
                f"Another rocmforge process is using this work dir ({detail}); its lock is "
                f"{self.path}",
                "two builds in one tree would overwrite each other's files; the kernel lock on "
                "that file is held, so the holder is alive",
                f"wait for it to finish or stop it (`fuser -v {self.path}` names it), or give "
                "this build another --work-dir",
            )
        if holder.pid == os.getpid() and holder.host in ("", socket.gethostname()):
            return BuildLocked(
                f"This process already holds the lock {self.path}",
                "a build cannot be started twice from one process",
                "let the first build finish",
            )
        where = f" on {holder.host}" if holder.host else ""
        what = "build" if holder.task == "build" else f"`invoke {holder.task}`"
        return BuildLocked(
            f"Another {what} (pid {holder.pid}{where}, started {holder.started}) is using "
            f"this work dir; its lock is {self.path}",
            "two builds in one tree would overwrite each other's files",
            "wait for it to finish, stop it, or give this build another --work-dir",
        )

    def _take_over(self, left: LockHolder | None, text: str) -> None:
        """The lock was free but not empty: its holder ended without releasing it."""
        if left is None:
            self._say(f"rocmforge: the lock {self.path} {_record_problem(text)}; the kernel "
                      "lock on it is free, so no process holds it: this run takes it over and "
                      "ends no process.")
            return
        state = ("which no longer holds it (that pid is now another process)"
                 if _pid_alive(left.pid) and left.host in ("", socket.gethostname())
                 else "which is no longer running")
        self._say(
            f"rocmforge: the build lock {self.path} belongs to pid {left.pid} (started "
            f"{left.started}), {state}; taking it over."
        )
        if left.step_pgid > 0:
            self._end_leftover_group(left)

    def _end_leftover_group(self, left: LockHolder) -> None:
        pgid = left.step_pgid
        members = process.group_members(pgid)
        if not members:
            return
        same_boot = bool(left.boot_id) and left.boot_id == process.boot_id()
        leader = process.proc_stat(pgid)
        if (same_boot and leader is not None and left.step_start_ticks > 0
                and leader.start_ticks == left.step_start_ticks and leader.pgrp == pgid):
            self._say(f"rocmforge: ending process group {pgid} ({process.command_line(pgid)}) "
                      "left running by that build.")
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
            deadline = time.monotonic() + TAKEOVER_WAIT_S
            while process.group_members(pgid) and time.monotonic() < deadline:
                time.sleep(0.05)
            survivors = process.group_members(pgid)
            if survivors:
                raise BuildLocked(
                    f"Process group {pgid}, left running by the build that held {self.path}, "
                    f"still has processes {_pid_list(survivors)} {TAKEOVER_WAIT_S:g} s after "
                    "SIGKILL",
                    "a process in uninterruptible sleep (a hung disk or network mount) outlives "
                    "SIGKILL until its I/O ends, and it may still write into this work dir",
                    "wait until `ps -o pid,stat,cmd -g "
                    f"{pgid}` shows nothing, then run again",
                )
            return
        if leader is None and same_boot:
            # Its members are there but the leader whose start time was recorded is gone: the
            # kit cannot prove they are that build's, so it neither ends them nor runs beside.
            raise BuildLocked(
                f"The build that held {self.path} left processes in its step's process group "
                f"{pgid} ({_pid_list(members)}), but that group's leader has exited",
                "without the leader the kit cannot prove these processes are that build's, so "
                "it does not end them, and a new build beside them would share the tree",
                f"if they are that build's (compilers, ninja), end them with `kill -- -{pgid}`; "
                "then run again",
            )
        why = ("the system was rebooted since" if not same_boot
               else "its leader's start time differs (the pid was reused)")
        self._say(f"rocmforge: process group {pgid} recorded in that lock is not the one that "
                  f"build started ({why}); it is left alone.")

    def check_free(self) -> None:
        """Raise BuildLocked when a live process holds the lock; create and change nothing
        (for `--dry` runs, which must not write a lock file)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return  # no lock file, so nobody holds it (or an unreadable folder: a write says)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = _read_fd(fd)
            raise self._busy(parse_holder(text), bool(text.strip())) from None
        finally:
            os.close(fd)

    # -- while held --------------------------------------------------------------------------

    def set_step_group(self, pgid: int) -> None:
        """Record the process group of the running step (0: none), with what identifies it, so
        a takeover after a crash can end exactly that group."""
        if self.holder is None:
            return
        ticks = process.start_ticks(pgid) if pgid > 0 else 0
        self.holder = replace(self.holder, step_pgid=pgid, step_start_ticks=ticks)
        with contextlib.suppress(OSError):
            self._write(self.holder)

    def _write(self, holder: LockHolder) -> None:
        """Rewrite the record in place (a rename would replace the locked inode)."""
        if self._fd is None:
            return
        data = (json.dumps(_holder_json(holder), indent=2) + "\n").encode("utf-8")
        written = os.pwrite(self._fd, data, 0)
        if written != len(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path))
        os.ftruncate(self._fd, len(data))

    # -- letting go --------------------------------------------------------------------------

    def release(self) -> None:
        """Unlock. The file goes too, unless it records a step group that is still alive (then
        the next taker ends that group if it is still the same one)."""
        if self._fd is None:
            return
        holder = self.holder
        if holder is None or holder.step_pgid == 0 \
                or not process.group_members(holder.step_pgid):
            self._unlink_if_ours()
        self._close()
        self.holder = None

    def _unlink_if_ours(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            here = os.stat(self.path)
            mine = os.fstat(self._fd)
            if (here.st_dev, here.st_ino) == (mine.st_dev, mine.st_ino):
                os.unlink(self.path)

    def _close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def _unwritable(self, exc: OSError) -> RocmforgeError:
        """A full disk is DiskFull (exit 3, as everywhere); a folder the kit may not write
        (read-only, permissions) is bad input (exit 2), as for any other path."""
        reason = exc.strerror or str(exc)
        what = f"Could not write the lock {self.path}: {reason}"
        full = disk_full(exc, self.path.parent, path=self.path)
        if full is not None:  # the one answer for a disk that refuses a write: exit 3
            return full
        return RocmforgeError(
            what,
            "the work dir's state folder cannot be written",
            f"make {self.path.parent} writable or pass another --work-dir",
        )

    def __enter__(self) -> BuildLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _pid_list(pids: tuple[int, ...]) -> str:
    shown = ", ".join(f"{pid} {process.command_line(pid)}".strip() for pid in pids[:5])
    return f"pids {shown}" + (f" and {len(pids) - 5} more" if len(pids) > 5 else "")


def _holder_json(holder: LockHolder) -> dict[str, object]:
    return {
        "pid": holder.pid,
        "started": holder.started,
        "host": holder.host,
        "argv": list(holder.argv),
        "task": holder.task,
        "boot_id": holder.boot_id,
        "step_pgid": holder.step_pgid,
        "step_start_ticks": holder.step_start_ticks,
    }


def lock_path(workdir: WorkDir) -> Path:
    return workdir.state / LOCK_NAME


@contextlib.contextmanager
def work_lock(workdir: WorkDir, *, task: str,
              say: Callable[[str], None] | None = None) -> Iterator[BuildLock]:
    """Hold the work dir's lock for a task (`with work_lock(workdir, task="checkout"):`): a
    live holder is BuildLocked (exit 2), a dead one's leftovers are dealt with as above."""
    lock = BuildLock(lock_path(workdir), say=say, task=task)
    with lock:
        yield lock


def check_work_dir_free(workdir: WorkDir, *, task: str) -> None:
    """For a dry run: BuildLocked when a live process holds the work dir; writes nothing."""
    BuildLock(lock_path(workdir), task=task).check_free()
