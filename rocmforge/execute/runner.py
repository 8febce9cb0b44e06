"""The one executor: runs a Plan's steps, resumably, under a lock, and explains failures.
Owns: running each Step's argv through `rocmforge.process.run` (no shell: its own process group,
the step's env over the inherited one), printing `+ <argv>` and the environment variables that
changed since the previous step, writing each step's output to `<work>/logs/<step>.log` (the
console sees the step lines, the command of a command step, the elapsed time and, on failure, the
triage; on a terminal one live line shows the running step, its elapsed time and its last output
line; `verbose=True` also tees the whole output to the console), stamping a step (keyed by its
digest) only after it succeeded, skipping steps whose stamp matches and redoing the first changed
one and everything after it (their stamps are removed before it runs and written back when it fails
on bad input, exit 2, which promises nothing changed), the work-dir lock (rocmforge.execute.lock:
the running step's process group is recorded in it), removing the temp files a killed run left
(rocmforge.execute.leftovers) once the lock is held, Ctrl-C/SIGTERM handling (the step's process
group gets SIGTERM, SIGKILL after `kill_grace_s` or at a second Ctrl-C, and the runner goes on,
releasing the lock, only once the group is gone; no stamp is written and the resume command is
printed), a status line per finished step (`[3/15] checkout ... 2.1 s`), and failure triage through
`rocmforge.triage` (the one rule set `invoke triage` uses: the parsers and
config/diagnostics.toml; cause, fix and at most 30 relevant lines are shown). "python" steps
call the in-process actions of the `ActionTable` the task hands in (`run_plan(...,
actions=BUILD_ACTIONS)`, rocmforge.execute.actions); the runner knows no action by name.

Volatile steps (`Step.volatile`, e.g. the checkout of a branch): a matching stamp proves only that
the step's inputs are the same, not that what they name is (`main` moves). So the runner runs such
a step again as a check, with its output going to its log (the console sees it only when something
changed or failed). The action returns a `fingerprint` (the commits it resolved); the same
fingerprint as in the stamp keeps the chain, so the later steps are skipped as before; another one
(or none) removes every later stamp first and then stamps the step, so the build redoes everything
after it. A fingerprint read from what is on disk, not from "did I move it", makes this safe across
a crash: a tree moved by a killed run still differs from the stamp on the next one.

Under `invoke --dry` (`c.config.run.dry`, or `dry=True`) it prints every step and writes nothing:
no folders, no logs, no stamps, no lock. Must not: decide what to run (the planners do), parse
arguments, or know what any step does (no step action lives here).
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from rocmforge import process
from rocmforge.errors import EXIT_BAD_INPUT, EnvironmentFailed, RocmforgeError, StepFailed
from rocmforge.execute.actions import (
    ActionContext,
    ActionTable,
    Details,
    StepResult,
    StepStatus,
    SubcommandFailed,
    TextSink,
)
from rocmforge.execute.leftovers import remove_leftovers
from rocmforge.execute.lock import BuildLock, lock_path
from rocmforge.execute.model import Plan, Step
from rocmforge.execute.progress import Progress, duration
from rocmforge.execute.stamps import Stamp, read_stamp, remove_stamp, write_stamp
from rocmforge.execute.states import first_to_run, missing_outputs, stray_wheels, writes_manifest
from rocmforge.triage.engine import MAX_EVIDENCE
from rocmforge.workdir import WorkDir, mark_work_dir

if TYPE_CHECKING:
    from invoke import Context

    from rocmforge.triage.model import Diagnosis

RELEVANT_LINES = MAX_EVIDENCE  # the most lines a failure shows


# Seconds between SIGTERM to a step's process group and SIGKILL (rocmforge.process).
KILL_GRACE_S = process.KILL_GRACE_S


class StepInterrupted(RocmforgeError):
    """Ctrl-C (or SIGTERM) stopped a step; no stamp was written. Exit 130 like a shell."""

    exit_code = 130


class _Tee:
    """A text stream writing to the console side (the console, a live line or a buffer) and
    the step's log file."""

    def __init__(self, console: TextSink, log: TextIO | None) -> None:
        self.console = console
        self.logfile = log

    def write(self, text: str) -> int:
        self.console.write(text)
        if self.logfile is not None:
            self.logfile.write(text)
        return len(text)

    def flush(self) -> None:
        self.console.flush()
        if self.logfile is not None:
            self.logfile.flush()


class _LiveLine:
    """Where a step's output goes on the console when the build is quiet: on a terminal, one
    line redrawn in place (`[14/16] build  812.4 s  [1234/8094] 15%  ETA 1 h 12 min  <its last
    output line>`); elsewhere a plain progress line every few minutes of a long step."""

    REDRAW_S = 0.1
    PLAIN_EVERY_S = 300.0  # a plain progress line this often when the console is not a terminal

    def __init__(self, console: TextIO, label: str, *, live: bool) -> None:
        self.console = console
        self.label = label
        self.live = live
        self.started = time.monotonic()
        self._last = ""
        self._partial = ""
        self._drawn_at = 0.0
        self._drawn = False
        self.progress = Progress()
        self._plain_at = self.started

    def write(self, text: str) -> int:
        lines = (self._partial + text).split("\n")
        self._partial = lines[-1]
        now = time.monotonic()
        for line in lines[:-1]:
            self.progress.feed(line, now)
        if not self.live:
            # Not a terminal: a plain progress line every few minutes of a long step.
            if self.progress.text() and now - self._plain_at >= self.PLAIN_EVERY_S:
                self._plain_at = now
                self.console.write(f"{self.label}  {duration(now - self.started)}  "
                                   f"{self.progress.text()}\n")
                self.console.flush()
            return len(text)
        shown = [line for line in lines if line.strip()]
        if shown:
            self._last = shown[-1].strip()
        if now - self._drawn_at >= self.REDRAW_S:
            self._draw(now)
        return len(text)

    def _draw(self, now: float) -> None:
        from rocmforge.render import terminal_width

        # The console's own width (COLUMNS wins), as for every other line the runner prints.
        width = terminal_width(self.console) - 1
        done = self.progress.text()
        line = (f"{self.label}  {now - self.started:.1f} s  " + (f"{done}  " if done else "")
                + self._last)
        self.console.write("\r\x1b[K" + line[:width])
        self.console.flush()
        self._drawn_at = now
        self._drawn = True

    def flush(self) -> None:
        pass

    def clear(self) -> None:
        """Remove the live line so the next console line starts on a clean row."""
        if self._drawn:
            self.console.write("\r\x1b[K")
            self.console.flush()
            self._drawn = False


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """A SIGTERM to the build (e.g. from a CI timeout) ends the step like Ctrl-C does."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def env_diff(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """`export K=V` lines (quoted) for variables that are new or changed, `unset K` for removed."""
    lines = [
        f"export {key}={shlex.quote(after[key])}"
        for key in sorted(after)
        if before.get(key) != after[key]
    ]
    lines += [f"unset {key}" for key in sorted(before) if key not in after]
    return lines


class StepRunner:
    """Executes one Plan. Create one per `invoke build`; call `execute()`."""

    def __init__(
        self,
        c: Context | None,
        plan: Plan,
        workdir: WorkDir,
        *,
        actions: ActionTable,
        console: TextIO | None = None,
        resume_hint: str = "",
        environ: Mapping[str, str] | None = None,
        dry: bool | None = None,
        kill_grace_s: float = KILL_GRACE_S,
        verbose: bool = False,
    ) -> None:
        self.c = c
        self.verbose = verbose
        self._dry = dry
        self.kill_grace_s = kill_grace_s
        self.plan = plan
        self.workdir = workdir
        self.actions = actions
        self.console = console or sys.stdout
        self.resume_hint = resume_hint or "run the same command again"
        self.results: list[StepResult] = []
        self._env_before: dict[str, str] = dict(os.environ if environ is None else environ)
        self._lock: BuildLock | None = None

    # -- public ------------------------------------------------------------------------------

    @property
    def dry(self) -> bool:
        """`dry=` when given, else Invoke's `--dry` (`c.config.run.dry`)."""
        if self._dry is not None:
            return self._dry
        try:
            return bool(self.c.config.run.dry) if self.c is not None else False
        except AttributeError:
            return False

    def first_to_run(self) -> int:
        return first_to_run(self.plan, self.workdir)

    def execute(self) -> list[StepResult]:
        start_at = self.first_to_run()
        if self.dry:
            self._print_dry(start_at)
            return self.results
        lock = BuildLock(lock_path(self.workdir), say=self._say, task="build")
        with lock:
            removed = remove_leftovers(self.workdir)
            if removed:
                self._say(f"rocmforge: removed {len(removed)} temp file(s) that a killed run "
                          f"left: {', '.join(str(p) for p in removed)}")
            mark_work_dir(self.workdir.state)
            self._lock = lock
            try:
                self._execute_from(start_at)
            finally:
                self._lock = None
        return self.results

    # -- internals ---------------------------------------------------------------------------

    def _say(self, message: str) -> None:
        from rocmforge.render import fit

        # On a terminal, wrapped at word boundaries (a terminal cuts words in two).
        self.console.write(fit(message, self.console) + "\n")
        self.console.flush()

    def _print_dry(self, start_at: int) -> None:
        self._say(f"rocmforge: dry run, {len(self.plan.steps)} steps; nothing is run or written.")
        env_before = dict(self._env_before)
        recollect = any(stray_wheels(step) for step in self.plan.steps[:start_at])
        for index, step in enumerate(self.plan.steps):
            if index >= start_at:
                state = "would run"
            elif recollect and writes_manifest(step):
                state = ("stamp matches, would run again (dist/ holds a wheel the manifest "
                         "does not list)")
            elif step.volatile:
                state = ("stamp matches, would re-check (volatile: a change of what it resolves "
                         "to redoes every later step)")
            else:
                state = "done (stamp matches), would skip"
            self._say(f"==> [{index + 1}/{len(self.plan.steps)}] {step.name}: {state}")
            self._say(f"    {step.why}")
            env_before = self._print_env(step, env_before)
            self._say(self._command_line(step))
            self.results.append(
                StepResult(name=step.name, status="dry", duration_s=0.0, digest=step.digest())
            )

    def _print_env(self, step: Step, shown: dict[str, str]) -> dict[str, str]:
        """Print the variables this step sets that differ from what was last shown; a step
        without an env of its own inherits and prints nothing (scikit-build-core style)."""
        if not step.env:
            return shown
        after = {**shown, **step.env}
        for line in env_diff(shown, after):
            self._say(f"    {line}")
        return after

    def _command_line(self, step: Step) -> str:
        where = f"(cd {shlex.quote(step.cwd)}) " if step.cwd else ""
        if step.kind == "python":
            summary = self.actions[step.action][1] if step.action in self.actions \
                else "in-process action"
            return f"+ {where}[python] {shlex.join(step.argv)}  # {summary}"
        return f"+ {where}{shlex.join(step.argv)}"

    def _execute_from(self, start_at: int) -> None:
        steps = self.plan.steps
        # A wheel in dist/ the manifest does not list voids no build: the collect steps (those
        # writing the manifest) run again, and their collect removes it; the rest stay done.
        stray = list(dict.fromkeys(Path(w).name for step in steps[:start_at]
                                   for w in stray_wheels(step)))
        recollect = [step for step in steps[:start_at] if stray and writes_manifest(step)]
        if recollect:
            self._say(f"==> dist/ holds {', '.join(stray)}, which its manifest does not list: "
                      f"{', '.join(s.name for s in recollect)} run again, the builds stay done")
        for index, step in enumerate(steps[:start_at]):
            if step in recollect:
                if step is recollect[0]:  # a kill midway leaves them to run, never stale stamps
                    for later in recollect:
                        remove_stamp(self.workdir.state, later.name)
                self._say(f"==> [{index + 1}/{len(steps)}] {step.name}: {step.why}")
                self._run_step(step)
                continue
            stamp = read_stamp(self.workdir.state, step.name)
            if step.volatile and stamp is not None:
                if self._run_step(step, recheck=stamp):
                    start_at = index + 1  # it changed: every later step runs again
                    break
                continue
            self._say(f"==> {step.name}: done (stamp matches), skipped")
            self.results.append(
                StepResult(
                    name=step.name,
                    status="skipped",
                    duration_s=stamp.duration_s if stamp else 0.0,
                    digest=step.digest(),
                    details=(stamp.details or {}) if stamp else {},
                )
            )
        if start_at >= len(steps):
            self._say("rocmforge: " + ("every other step is up to date." if recollect else
                                       "every step is up to date; nothing to do."))
            return
        gone = missing_outputs(steps[start_at])
        if gone and read_stamp(self.workdir.state, steps[start_at].name) is not None:
            self._say(f"==> {steps[start_at].name}: its stamp matches, but {'; '.join(gone)}; "
                      "it runs again, and so does every step after it")
        # Stamps after the first changed step describe a tree that is about to change. They
        # are kept in memory until that step succeeds: one that fails on bad input (exit 2:
        # nothing was changed) gets them back, so the next good build resumes where it was.
        kept = [stamp for step in steps[start_at:]
                if (stamp := read_stamp(self.workdir.state, step.name)) is not None]
        for step in steps[start_at:]:
            remove_stamp(self.workdir.state, step.name)
        env_before = dict(self._env_before)
        for index in range(start_at, len(steps)):
            step = steps[index]
            self._say(f"==> [{index + 1}/{len(steps)}] {step.name}: {step.why}")
            env_before = self._print_env(step, env_before)
            try:
                self._run_step(step)
            except RocmforgeError as exc:
                if index == start_at and exc.exit_code == EXIT_BAD_INPUT:
                    for stamp in kept:
                        write_stamp(self.workdir.state, stamp)
                raise

    def _log_path(self, step: Step) -> Path:
        return self.workdir.logs / f"{step.name}.log"

    def _run_step(self, step: Step, *, recheck: Stamp | None = None) -> bool:
        """Run `step` and stamp it. With `recheck` (the matching stamp of a volatile step) its
        output goes to the log and a buffer, and the buffer reaches the console only when the
        fingerprint changed or the step failed. True when later steps must run again (always
        for a plain run; for a re-check, when the fingerprint differs)."""
        log_path = self._log_path(step)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        details: Details | None = None
        held = io.StringIO() if recheck is not None else None
        quiet = self._quiet_sink(step) if held is None and not self.verbose else None
        if quiet is not None and step.kind != "python":
            self._say(self._command_line(step))
        try:
            try:
                with log_path.open("w", encoding="utf-8", errors="replace") as log_file:
                    shown: TextSink = held if held is not None else (
                        quiet if quiet is not None else self.console)
                    tee = _Tee(shown, log_file)
                    if step.kind == "python":
                        details = self._run_action(step, tee)
                    else:
                        code, _ = self._run_argv(step.argv, cwd=step.cwd, env=step.env,
                                                 log=tee, step=step, keep_output=False)
                        if code != 0:
                            raise SubcommandFailed(step.argv, code)
            except BaseException:
                if quiet is not None:
                    quiet.clear()
                if held is not None:  # a failed check is shown like a failed step
                    self._say(f"==> [{self.plan.steps.index(step) + 1}/{len(self.plan.steps)}] "
                              f"{step.name}: re-check of a volatile step failed (its "
                              f"output: {log_path})")
                    if self.verbose:
                        self.console.write(held.getvalue())
                raise
        except SubcommandFailed as exc:
            self._record(step, "failed", started)
            raise self._failure(step, f"exited with status {exc.code}") from None
        except StepInterrupted:
            self._record(step, "interrupted", started)
            raise
        except KeyboardInterrupt as exc:
            self._record(step, "interrupted", started)
            raise self._interrupted(
                step, exc if isinstance(exc, process.Interrupted) else None) from None
        except RocmforgeError as exc:
            self._record(step, "failed", started)
            if quiet is not None:
                self._show_log(step)
            if isinstance(exc, EnvironmentFailed):  # a fetch, a disk: say where and how to resume
                with contextlib.suppress(OSError), log_path.open("a", encoding="utf-8") as log:
                    log.write(f"rocmforge: {exc.paragraph()}\n")
                raise exc.in_step(str(log_path), self.resume_hint, step.name) from None
            raise
        except OSError as exc:
            self._record(step, "failed", started)
            from rocmforge.errors import disk_full

            full = disk_full(exc, self.workdir.root)
            if full is not None:  # the disk's one message (README "Exit codes")
                raise full.in_step(str(log_path), self.resume_hint, step.name) from None
            raise EnvironmentFailed(
                f"Step {step.name} failed: {exc.strerror or exc} ({exc.filename or 'no file'})",
                "the operating system refused a write or read (a full disk or a missing "
                "folder is the usual cause); no stamp was written, so nothing is marked done",
                f"free space or fix the path, then {self.resume_hint}",
            ) from None
        if quiet is not None:
            quiet.clear()
        return self._finish(step, started, details, recheck, held)

    def _show_log(self, step: Step) -> None:
        """A quiet step that failed with an explained error: its output (an in-process step's
        is short: a table, a few lines) or, when long, the lines the triage picks."""
        log_path = self._log_path(step)
        try:
            text = log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) > 2 * RELEVANT_LINES:
            lines = list(explain_log(log_path, step.name, step.env)[1])
        if not lines:
            return
        self._say(f"---- {step.name}'s output ({log_path}) ----")
        for line in lines:
            self._say(f"    {line}")
        self._say("----")

    def _quiet_sink(self, step: Step) -> _LiveLine:
        """The console side of a quiet step: a live line on a terminal, else nothing."""
        from rocmforge.render import wants_plain

        index = self.plan.steps.index(step) + 1
        return _LiveLine(self.console, f"[{index}/{len(self.plan.steps)}] {step.name}",
                         live=not wants_plain(self.console))

    def _finish(
        self,
        step: Step,
        started: float,
        details: Details | None,
        recheck: Stamp | None,
        held: io.StringIO | None,
    ) -> bool:
        """Stamp a step that succeeded; for a re-check, keep the chain or break it."""
        duration = time.monotonic() - started
        kept = dict(details or {})
        fingerprint = str(kept.pop("fingerprint", "") or "")
        # An action may say that what it checked changed although its fingerprint did not
        # (the tree-facts step: the kit's edits of the tree were undone).
        redo_later = bool(kept.pop("redo_later", False))
        if recheck is not None:
            if fingerprint and fingerprint == recheck.fingerprint and not redo_later:
                self._say(f"==> {step.name}: done (stamp matches), skipped; re-checked in "
                          f"{duration:.1f} s, unchanged ({fingerprint[:12]})")
                self.results.append(StepResult(name=step.name, status="checked",
                                               duration_s=duration, digest=step.digest(),
                                               details=kept))
                return False
            index = self.plan.steps.index(step)
            self._say(f"==> [{index + 1}/{len(self.plan.steps)}] {step.name}: re-check found a "
                      f"change (fingerprint {recheck.fingerprint[:12] or 'none'} -> "
                      f"{fingerprint[:12] or 'none'}); every later step runs again "
                      f"(its output: {self._log_path(step)})")
            if self.verbose:
                self.console.write(held.getvalue() if held is not None else "")
            # Later stamps go first: a crash before the new stamp leaves them gone, never valid.
            for later in self.plan.steps[index + 1:]:
                remove_stamp(self.workdir.state, later.name)
        write_stamp(
            self.workdir.state,
            Stamp(
                step=step.name,
                digest=step.digest(),
                finished=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                duration_s=duration,
                details=kept or None,
                fingerprint=fingerprint,
            ),
        )
        self.results.append(
            StepResult(name=step.name, status="ran", duration_s=duration, digest=step.digest(),
                       details=kept)
        )
        self._status_line(step, duration)
        return True

    def _status_line(self, step: Step, duration: float) -> None:
        """`[3/15] checkout ... 2.1 s` once a step is done (bold green on a terminal)."""
        from rocmforge.render import wants_plain

        index = self.plan.steps.index(step) + 1
        line = f"[{index}/{len(self.plan.steps)}] {step.name} ... {duration:.1f} s"
        if not wants_plain(self.console):
            line = f"\x1b[1;32m{line}\x1b[0m"
        self._say(line)

    def _record(self, step: Step, status: StepStatus, started: float) -> None:
        self.results.append(
            StepResult(name=step.name, status=status, duration_s=time.monotonic() - started,
                       digest=step.digest())
        )

    def _run_action(self, step: Step, tee: _Tee) -> Details | None:
        name = step.action
        entry = self.actions.get(name)
        if entry is None:
            raise StepFailed(
                f"Step {step.name} names the in-process action {name!r}, which the action "
                "table handed to the runner does not have",
                "the plan and the runner's action table disagree about the actions that exist",
                "report this as a bug in rocmforge",
            )
        tee.write(f"+ [python] {shlex.join(step.argv)}\n")
        tee.flush()

        def run_argv(argv: Sequence[str], *, cwd: str, env: Mapping[str, str],
                     log: TextSink) -> tuple[int, str]:
            return self._run_argv(argv, cwd=cwd, env=env, log=log, step=step)

        def note(message: str) -> None:
            if isinstance(tee.console, _LiveLine):
                tee.console.clear()
            self._say(f"    {message}")

        ctx = ActionContext(step=step, workdir=self.workdir, results=tuple(self.results),
                            log=tee, run_argv=run_argv,
                            console_note=None if self.verbose else note)
        with _sigterm_as_interrupt():
            return entry[0](ctx)

    def _run_argv(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        log: TextSink,
        step: Step,
        keep_output: bool = True,
    ) -> tuple[int, str]:
        """Run argv (rocmforge.process: its own process group, `+ argv` and its output to the
        log); return exit status and stdout. The lock records the group while it runs and
        forgets it only once the group is gone, so a takeover after a crash can end it."""
        lock = self._lock

        def started(pid: int) -> None:
            if lock is not None:
                lock.set_step_group(pid)

        survivors: tuple[int, ...] = ()
        try:
            with _sigterm_as_interrupt():
                result = process.run(argv, env={**os.environ, **env}, cwd=cwd or None, log=log,
                                     echo=True, on_start=started, keep_output=keep_output,
                                     grace_s=self.kill_grace_s)
        except process.Interrupted as exc:
            survivors = exc.survivors
            raise
        finally:
            if lock is not None and not survivors:
                lock.set_step_group(0)
        return result.returncode, result.stdout

    def _interrupted(self, step: Step, exc: process.Interrupted | None) -> StepInterrupted:
        if exc is not None and exc.survivors:
            return StepInterrupted(
                f"Interrupted during step {step.name}; its process group {exc.pgid} was sent "
                f"SIGKILL but processes {', '.join(map(str, exc.survivors))} are still alive, "
                "and no stamp was written for it",
                "a process in uninterruptible sleep (a hung disk or mount) outlives SIGKILL "
                "until its I/O ends; the lock keeps a record of the group, so the next run "
                "ends it if it is still there, or waits for it",
                f"check `ps -o pid,stat,cmd -g {exc.pgid}`; to resume, {self.resume_hint}",
            )
        how = (" (a process of it ignored SIGTERM, so the group was sent SIGKILL)"
               if exc is not None and exc.killed else "")
        return StepInterrupted(
            f"Interrupted during step {step.name}; its process group was ended{how} and no "
            "stamp was written for it",
            f"every step before it is stamped, so nothing finished is lost (its partial output "
            f"is in {self._log_path(step)})",
            f"to resume, {self.resume_hint}",
        )

    def _failure(self, step: Step, how: str) -> StepFailed:
        """StepFailed with the triage of the step's log: cause, fix and <= 30 relevant lines."""
        log_path = self._log_path(step)
        explained, shown = explain_log(log_path, step.name, step.env)
        lines = list(shown)
        self._say(f"---- the {len(lines)} most relevant lines of {log_path} ----")
        for line in lines:
            self._say(f"    {line}")
        self._say("----")
        if explained.klass == "disk-full":
            # The step's own process hit a full disk: the disk's one message and exit 3
            # (README "Exit codes"), not a failed check.
            from rocmforge.errors import disk_refused

            words = ("no space left", "disk quota", "file size limit", "file too large",
                     "enospc", "errno 28", "errno 27")
            line = next((x.strip() for x in lines if any(w in x.lower() for w in words)),
                        "no space left on device")
            raise disk_refused(self.workdir.root, line, self.workdir.root,
                               kept="the step runs again from its start").in_step(
                str(log_path), self.resume_hint, step.name)
        cause = explained.cause
        if explained.rule:
            cause = f"{cause}; class {explained.klass} (known failure `{explained.rule}`)"
        error = StepFailed(
            f"Step {step.name} failed: {self._command_line(step)[2:]} {how}. Full log: {log_path}",
            cause or "no known failure signature matched the log; the lines above are the ones "
            "that look like errors (or its end)",
            (explained.fix + "; then " if explained.fix else "fix the cause shown above, then ")
            + self.resume_hint + " (finished steps are kept)",
        )
        error.lines = lines  # type: ignore[attr-defined]
        error.signature_id = explained.rule  # type: ignore[attr-defined]
        return error


def explain_log(log_path: Path, step_name: str, env: Mapping[str, str] | None = None
                ) -> tuple[Diagnosis, tuple[str, ...]]:
    """Triage a step log from disk (streamed) with the engine and rule set of `invoke triage`,
    and the lines to show: the evidence of its first root cause; else the error-looking lines
    (no cause claimed); else the last 30 lines. A log that cannot be read explains nothing and
    shows nothing."""
    from collections import deque

    from rocmforge.triage import NotText, bounded_lines, explain_file
    from rocmforge.triage.model import Diagnosis

    try:
        found = explain_file(log_path, step_name, env or {})
    except (OSError, NotText):
        return Diagnosis.unexplained(step=step_name), ()
    lines = tuple(e.text for e in found.evidence)
    if not lines and found.klass is None:
        with log_path.open("rb") as handle:
            lines = tuple(deque((line for line in bounded_lines(handle) if line.strip()),
                                maxlen=RELEVANT_LINES))
    return found, lines[-RELEVANT_LINES:]


def run_plan(
    c: Context,
    plan: Plan,
    workdir: WorkDir,
    *,
    actions: ActionTable,
    resume_hint: str = "",
    console: TextIO | None = None,
    verbose: bool = False,
) -> list[StepResult]:
    """Execute `plan` (see StepRunner); "python" steps run the actions of `actions`;
    `verbose` also shows every step's output on the console (it always goes to its log)."""
    return StepRunner(c, plan, workdir, actions=actions, resume_hint=resume_hint,
                      console=console, verbose=verbose).execute()
