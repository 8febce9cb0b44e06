"""The one way the kit starts a program.

Owns: `run()`: an argv list (never a shell), a plain `subprocess.Popen` in a session and process
group of its own, stdin from /dev/null, stdout and stderr read in the calling thread (kept in the
`Result`, and streamed to a log when one is given, after a `+ argv` line when asked), a timeout
that ends the whole group, and an interrupt (Ctrl-C, or a SIGTERM the caller turned into
KeyboardInterrupt): the group gets SIGTERM, SIGKILL after a grace period or at a second interrupt,
and `run()` raises `Interrupted` only once no process of the group is left (or after it gave up
waiting, naming the survivors). A program that cannot be started is a result (127: not found,
126: not runnable), not an exception. Also the /proc facts that name a process group across pid
reuse and reboots (`group_members`, `start_ticks`, `boot_id`).
Must not: decide what to run, build shell strings, or judge an exit status; callers do.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import selectors
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Protocol

# Seconds between SIGTERM to an interrupted program's group and SIGKILL.
KILL_GRACE_S = 5.0
# Seconds to wait for a SIGKILLed group to disappear before giving up (a process in
# uninterruptible sleep, e.g. on a hung NFS mount, can outlive SIGKILL for a while).
KILL_WAIT_S = 60.0
# After the program itself exited, how long its output pipes may stay silent before run()
# stops reading them (a background child that kept them open must not hang the caller).
DRAIN_IDLE_S = 1.0
_POLL_S = 0.05


class TextSink(Protocol):
    """Where streamed output goes (a log file, the console, or both)."""

    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...


@dataclass(frozen=True, kw_only=True)
class Result:
    """What a program did: exit status, its two streams (decoded, never None) and how long.

    `started` is False when it could not be started at all (returncode 127 when the program or
    the working directory does not exist, 126 otherwise; `stderr` says why). `timed_out` is
    True when `run()` ended it at its timeout (returncode 124, as coreutils' timeout does).
    """

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str = ""
    duration_s: float = 0.0
    started: bool = True
    timed_out: bool = False

    @property
    def output(self) -> str:
        """stdout followed by stderr."""
        return self.stdout + self.stderr

    @property
    def ok(self) -> bool:
        return self.returncode == 0


class Interrupted(KeyboardInterrupt):
    """`run()` was interrupted; its process group was ended (SIGTERM, then SIGKILL).

    `survivors` lists the pids of the group still alive when `run()` stopped waiting (empty when
    the group is gone, which is the normal case); `killed` says whether SIGKILL was needed.
    """

    def __init__(self, *, argv: tuple[str, ...], pgid: int, survivors: tuple[int, ...],
                 killed: bool) -> None:
        super().__init__(f"{shlex.join(argv)} was interrupted")
        self.argv = argv
        self.pgid = pgid
        self.survivors = survivors
        self.killed = killed


def run(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    log: TextSink | None = None,
    echo: bool = False,
    timeout: float | None = None,
    on_start: Callable[[int], None] | None = None,
    keep_output: bool = True,
    grace_s: float = KILL_GRACE_S,
) -> Result:
    """Run `argv` (no shell) in its own process group and wait for it.

    `env` is the whole environment (None: inherit this process's). With `log`, both streams
    are written to it as they arrive (after `+ <argv>` when `echo`); `keep_output=False` keeps
    them out of the Result (a long build log). `on_start(pid)` is called once the program runs;
    its pid is also its process group id. See the module docstring for timeouts and interrupts.
    """
    args = tuple(os.fspath(a) for a in argv)
    if echo and log is not None:
        log.write(f"+ {shlex.join(args)}\n")
        log.flush()
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            args,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        code = 127 if isinstance(exc, FileNotFoundError) else 126
        reason = f"cannot run {args[0] if args else '(empty argv)'}: {exc.strerror or exc}"
        if exc.filename is not None and os.fspath(exc.filename) != (args[0] if args else ""):
            reason += f" ({exc.filename})"
        if log is not None:
            log.write(f"rocmforge: {reason}\n")
            log.flush()
        return Result(argv=args, returncode=code, stdout="", stderr=reason,
                      duration_s=time.monotonic() - started, started=False)
    try:
        running = _Running(proc, args, log=log, keep=keep_output, grace_s=grace_s)
    except BaseException:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    return running.wait(timeout=timeout, on_start=on_start, started=started)


class _Running:
    """One started program: its pipes, what it printed, and how to end its group."""

    def __init__(self, proc: subprocess.Popen[bytes], argv: tuple[str, ...], *,
                 log: TextSink | None, keep: bool, grace_s: float) -> None:
        self.proc = proc
        self.argv = argv
        self.log = log
        self.keep = keep
        self.grace_s = grace_s
        self.chunks: dict[str, list[str]] = {"out": [], "err": []}
        self.decoders = {name: codecs.getincrementaldecoder("utf-8")(errors="replace")
                         for name in self.chunks}
        self.selector = selectors.DefaultSelector()
        streams: dict[str, IO[bytes] | None] = {"out": proc.stdout, "err": proc.stderr}
        for name, stream in streams.items():
            if stream is not None:
                self.selector.register(stream, selectors.EVENT_READ, name)
        self.last_output = time.monotonic()

    def wait(self, *, timeout: float | None, on_start: Callable[[int], None] | None,
             started: float) -> Result:
        deadline = started + timeout if timeout is not None else None
        timed_out = False
        exited_at = 0.0
        try:
            if on_start is not None:
                on_start(self.proc.pid)
            while True:
                if deadline is not None and time.monotonic() >= deadline:
                    timed_out = True
                    self._signal(signal.SIGKILL)
                    self._wait_group_gone(KILL_WAIT_S)
                    break
                if not self.selector.get_map():
                    # Both pipes closed; the program may still run (it closed its output).
                    try:
                        self.proc.wait(timeout=_POLL_S)
                    except subprocess.TimeoutExpired:
                        continue
                    break
                self._read(_POLL_S)
                if self.proc.poll() is not None:
                    exited_at = exited_at or time.monotonic()
                    if time.monotonic() - max(exited_at, self.last_output) >= DRAIN_IDLE_S:
                        break  # it exited; a child of it holds the pipes open
        except KeyboardInterrupt:
            survivors, killed = self._end_group()
            self._close()
            raise Interrupted(argv=self.argv, pgid=self.proc.pid, survivors=survivors,
                              killed=killed) from None
        except BaseException:
            # A failure of ours (a log write, on_start): never leave the program running.
            self._signal(signal.SIGKILL)
            self._wait_group_gone(KILL_WAIT_S)
            self._close()
            raise
        self._read(0)  # whatever is already in the pipes
        self._close()
        returncode = self.proc.wait()
        out, err = "".join(self.chunks["out"]), "".join(self.chunks["err"])
        if timed_out:
            returncode = 124
            err += f"{'' if not err or err.endswith(chr(10)) else chr(10)}timed out after " \
                   f"{timeout}s"
        return Result(argv=self.argv, returncode=returncode, stdout=out, stderr=err,
                      duration_s=time.monotonic() - started, timed_out=timed_out)

    def _read(self, wait_s: float) -> None:
        """Read what is ready on the pipes (waiting up to `wait_s` for something)."""
        if not self.selector.get_map():
            return
        for key, _ in self.selector.select(timeout=wait_s):
            data = os.read(key.fd, 65536)
            name = str(key.data)
            if not data:
                self.selector.unregister(key.fileobj)
                text = self.decoders[name].decode(b"", final=True)
            else:
                self.last_output = time.monotonic()
                text = self.decoders[name].decode(data)
            if not text:
                continue
            if self.keep:
                self.chunks[name].append(text)
            if self.log is not None:
                self.log.write(text)
                self.log.flush()

    def _close(self) -> None:
        for key in list(self.selector.get_map().values()):
            self.selector.unregister(key.fileobj)
        self.selector.close()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def _signal(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signum)

    def _end_group(self) -> tuple[tuple[int, ...], bool]:
        """SIGTERM the group; SIGKILL after the grace period or at another interrupt; wait
        until no process of the group is left. Returns (survivors, whether SIGKILL was sent)."""
        self._signal(signal.SIGTERM)
        now = time.monotonic()
        kill_at = now + self.grace_s
        give_up_at = now + self.grace_s + KILL_WAIT_S
        killed = False
        while True:
            try:
                self.proc.poll()  # reap the leader, so it does not count as alive
                members = group_members(self.proc.pid)
                if not members:
                    return (), killed
                now = time.monotonic()
                if now >= give_up_at:
                    return members, killed
                if not killed and now >= kill_at:
                    self._signal(signal.SIGKILL)
                    killed = True
                    give_up_at = now + KILL_WAIT_S
                self._read(_POLL_S)  # keep the pipes flowing while the group winds down
                if not self.selector.get_map():
                    time.sleep(_POLL_S)
            except KeyboardInterrupt:
                if not killed:  # a second Ctrl-C: no more waiting
                    self._signal(signal.SIGKILL)
                    killed = True
                    give_up_at = time.monotonic() + KILL_WAIT_S

    def _wait_group_gone(self, limit_s: float) -> None:
        give_up = time.monotonic() + limit_s
        while time.monotonic() < give_up:
            self.proc.poll()
            if not group_members(self.proc.pid):
                return
            time.sleep(_POLL_S)


# --- /proc facts ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ProcStat:
    """The fields of /proc/<pid>/stat the kit uses (proc(5))."""

    pid: int
    state: str
    pgrp: int
    start_ticks: int  # field 22, starttime: clock ticks after boot when the process started


def proc_stat(pid: int) -> ProcStat | None:
    """/proc/<pid>/stat of a process, or None when there is no such process (or pid is not a
    valid pid at all)."""
    if not 0 < pid < 2**31:
        return None
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may itself hold ")" or spaces.
    fields = text.rsplit(")", 1)[-1].split()
    try:
        return ProcStat(pid=pid, state=fields[0], pgrp=int(fields[2]),
                        start_ticks=int(fields[19]))
    except (IndexError, ValueError):
        return None


def start_ticks(pid: int) -> int:
    """When `pid` started (clock ticks after boot, /proc/<pid>/stat field 22); 0 when gone."""
    stat = proc_stat(pid)
    return stat.start_ticks if stat is not None else 0


def boot_id() -> str:
    """This boot's id (/proc/sys/kernel/random/boot_id): start ticks compare only within it."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def group_members(pgid: int) -> tuple[int, ...]:
    """Pids of the live (not zombie) processes in process group `pgid`, sorted."""
    if not 0 < pgid < 2**31:
        return ()
    try:
        names = os.listdir("/proc")
    except OSError:
        return _group_alive_fallback(pgid)
    members = []
    for name in names:
        if not name.isdigit():
            continue
        stat = proc_stat(int(name))
        if stat is not None and stat.pgrp == pgid and stat.state not in ("Z", "X"):
            members.append(stat.pid)
    return tuple(sorted(members))


def _group_alive_fallback(pgid: int) -> tuple[int, ...]:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return ()
    except PermissionError:
        pass
    return (pgid,)


def command_line(pid: int) -> str:
    """The command line of `pid` as a shell would write it ("" when gone or unreadable)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            raw = handle.read()
    except OSError:
        return ""
    parts = [p.decode("utf-8", "replace") for p in raw.split(b"\0") if p]
    return shlex.join(parts)
