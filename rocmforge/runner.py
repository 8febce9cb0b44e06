"""The one executor: runs a Plan's steps, resumably, under a lock, and explains failures.

Owns: running each Step through Invoke's `Context.run` (argv joined with `shlex.join`, env passed
with `env=`, no pty, `warn=True`), printing `+ <argv>` and the environment variables that changed
since the previous step, teeing output to `<work>/logs/<step>.log`, stamping a step (keyed by its
digest) only after it succeeded, skipping steps whose stamp matches and redoing the first changed
one and everything after it, the build lock, Ctrl-C/SIGTERM handling (the step's process group is
ended, no stamp is written, the resume command is printed), and failure triage through
`rocmforge.diagnostics` when that module is present. "python" steps call registered in-process
actions (`register_action`).

Under `invoke --dry` (`c.config.run.dry`) it prints every step and writes nothing: no folders,
no logs, no stamps, no lock. Must not: decide what to run (the planners do) or parse arguments.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TextIO, cast

from invoke import Context
from invoke.runners import Local

from rocmforge.buildlock import BuildLock
from rocmforge.errors import RocmforgeError, StepFailed
from rocmforge.plan.model import Plan, Step
from rocmforge.stamps import Stamp, read_stamp, remove_stamp, write_stamp
from rocmforge.workdir import WorkDir

RELEVANT_LINES = 30


class TextSink(Protocol):
    """Where step output goes: the console, a log file, or both (_Tee)."""

    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...

# Seconds between SIGTERM to a step's process group and SIGKILL.
KILL_GRACE_S = 5.0


class StepInterrupted(RocmforgeError):
    """Ctrl-C (or SIGTERM) stopped a step; no stamp was written. Exit 130 like a shell."""

    exit_code = 130


@dataclass(frozen=True, kw_only=True)
class StepResult:
    """What happened to one step in this run: ran, skipped (stamp matched), failed, dry."""

    name: str
    status: str
    duration_s: float
    digest: str
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class ActionContext:
    """What an in-process ("python") action gets: its step, the plan, paths and a way to run."""

    step: Step
    plan: Plan
    workdir: WorkDir
    extras: Mapping[str, Any]
    results: Sequence[StepResult]
    runner: StepRunner
    log: TextSink

    def say(self, message: str) -> None:
        """A line for the console and the step's log."""
        self.log.write(f"{message}\n")
        self.log.flush()

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str = "",
        env: Mapping[str, str] | None = None,
        check: bool = True,
    ) -> int:
        """Run one sub-command of this action through the same Context, log and interrupts."""
        return self.capture(argv, cwd=cwd, env=env, check=check)[0]

    def capture(
        self,
        argv: Sequence[str],
        *,
        cwd: str = "",
        env: Mapping[str, str] | None = None,
        check: bool = True,
    ) -> tuple[int, str]:
        """Like run(), and also return what the command printed on stdout."""
        merged = dict(self.step.env)
        merged.update(env or {})
        code, out = self.runner._run_argv(
            tuple(argv), cwd=cwd or self.step.cwd, env=merged, log=self.log, step=self.step
        )
        if check and code != 0:
            raise _SubcommandFailed(argv, code)
        return code, out


class _SubcommandFailed(Exception):
    def __init__(self, argv: Sequence[str], code: int) -> None:
        super().__init__(f"{shlex.join(argv)} exited with {code}")
        self.code = code


Action = Callable[[ActionContext], "Mapping[str, Any] | None"]
ACTIONS: dict[str, Action] = {}
# One line per action for `--dry` and `invoke plan`: what it would do.
ACTION_SUMMARIES: dict[str, str] = {}


def register_action(name: str, summary: str) -> Callable[[Action], Action]:
    """Make `fn` the action behind "python" steps whose argv[0] is `name`."""

    def decorate(fn: Action) -> Action:
        ACTIONS[name] = fn
        ACTION_SUMMARIES[name] = summary
        return fn

    return decorate


class _Tee:
    """A text stream writing to the console and the step's log file."""

    def __init__(self, console: TextIO, log: TextIO | None) -> None:
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


class _GroupLocal(Local):
    """Invoke's local runner, with the command in its own session so the whole process group
    (ninja, the compilers under it) can be ended on Ctrl-C, and with a working directory."""

    step_cwd: str = ""
    on_start: Callable[[int], None] = staticmethod(lambda pgid: None)  # type: ignore[assignment]
    interrupted = False

    def start(self, command: str, shell: str, env: dict[str, Any]) -> None:
        self.process = subprocess.Popen(
            command,
            shell=True,
            executable=shell,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            cwd=self.step_cwd or None,
            start_new_session=True,
        )
        type(self).on_start(self.process.pid)

    def send_interrupt(self, interrupt: KeyboardInterrupt) -> None:
        pgid = self.process.pid
        first = not type(self).interrupted
        type(self).interrupted = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGTERM if first else signal.SIGKILL)
        if first:
            timer = threading.Timer(KILL_GRACE_S, _kill_group, args=(pgid,))
            timer.daemon = True
            timer.start()

    def close_proc_stdin(self) -> None:  # stdin is /dev/null; nothing to close
        return None

    def write_proc_stdin(self, data: str) -> None:
        return None


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


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
        c: Context,
        plan: Plan,
        workdir: WorkDir,
        *,
        extras: Mapping[str, Any] | None = None,
        console: TextIO | None = None,
        resume_hint: str = "",
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.c = c
        self.plan = plan
        self.workdir = workdir
        self.extras = dict(extras or {})
        self.console = console or sys.stdout
        self.resume_hint = resume_hint or "run the same command again"
        self.results: list[StepResult] = []
        self._env_before: dict[str, str] = dict(os.environ if environ is None else environ)
        self._lock: BuildLock | None = None

    # -- public ------------------------------------------------------------------------------

    @property
    def dry(self) -> bool:
        try:
            return bool(self.c.config.run.dry)
        except AttributeError:
            return False

    def first_to_run(self) -> int:
        """Index of the first step whose stamp is missing or has another digest (len = none)."""
        for index, step in enumerate(self.plan.steps):
            stamp = read_stamp(self.workdir.state, step.name)
            if stamp is None or stamp.digest != step.digest():
                return index
        return len(self.plan.steps)

    def execute(self) -> list[StepResult]:
        start_at = self.first_to_run()
        if self.dry:
            self._print_dry(start_at)
            return self.results
        lock = BuildLock(self.workdir.state / "build.lock", say=self._say)
        with lock:
            self._lock = lock
            try:
                self._execute_from(start_at)
            finally:
                self._lock = None
        return self.results

    # -- internals ---------------------------------------------------------------------------

    def _say(self, message: str) -> None:
        self.console.write(message + "\n")
        self.console.flush()

    def _print_dry(self, start_at: int) -> None:
        self._say(f"rocmforge: dry run, {len(self.plan.steps)} steps; nothing is run or written.")
        env_before = dict(self._env_before)
        for index, step in enumerate(self.plan.steps):
            state = "done (stamp matches), would skip" if index < start_at else "would run"
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
            summary = ACTION_SUMMARIES.get(step.argv[0], "in-process action")
            return f"+ {where}[python] {shlex.join(step.argv)}  # {summary}"
        return f"+ {where}{shlex.join(step.argv)}"

    def _execute_from(self, start_at: int) -> None:
        steps = self.plan.steps
        for step in steps[:start_at]:
            stamp = read_stamp(self.workdir.state, step.name)
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
            self._say("rocmforge: every step is up to date; nothing to do.")
            return
        # Stamps after the first changed step describe a tree that is about to change.
        for step in steps[start_at:]:
            remove_stamp(self.workdir.state, step.name)
        env_before = dict(self._env_before)
        for index in range(start_at, len(steps)):
            step = steps[index]
            self._say(f"==> [{index + 1}/{len(steps)}] {step.name}: {step.why}")
            env_before = self._print_env(step, env_before)
            self._run_step(step)

    def _log_path(self, step: Step) -> Path:
        return self.workdir.logs / f"{step.name}.log"

    def _run_step(self, step: Step) -> None:
        log_path = self._log_path(step)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        details: Mapping[str, Any] | None = None
        try:
            with log_path.open("w", encoding="utf-8", errors="replace") as log_file:
                tee = _Tee(self.console, log_file)
                if step.kind == "python":
                    details = self._run_action(step, tee)
                else:
                    code, _ = self._run_argv(step.argv, cwd=step.cwd, env=step.env, log=tee,
                                             step=step)
                    if code != 0:
                        raise _SubcommandFailed(step.argv, code)
        except _SubcommandFailed as exc:
            self._record(step, "failed", started)
            raise self._failure(step, f"exited with status {exc.code}") from None
        except StepInterrupted:
            self._record(step, "interrupted", started)
            raise
        except KeyboardInterrupt:
            self._record(step, "interrupted", started)
            raise self._interrupted(step) from None
        except StepFailed:
            self._record(step, "failed", started)
            raise
        except RocmforgeError:
            self._record(step, "failed", started)
            raise
        except OSError as exc:
            self._record(step, "failed", started)
            raise StepFailed(
                f"Step {step.name} failed: {exc.strerror or exc} ({exc.filename or 'no file'})",
                "the operating system refused a write or read (a full disk or a missing "
                "folder is the usual cause); no stamp was written, so nothing is marked done",
                f"free space or fix the path, then {self.resume_hint}",
            ) from None
        duration = time.monotonic() - started
        write_stamp(
            self.workdir.state,
            Stamp(
                step=step.name,
                digest=step.digest(),
                finished=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                duration_s=duration,
                details=dict(details) if details else None,
            ),
        )
        self.results.append(
            StepResult(name=step.name, status="ran", duration_s=duration, digest=step.digest(),
                       details=dict(details or {}))
        )

    def _record(self, step: Step, status: str, started: float) -> None:
        self.results.append(
            StepResult(name=step.name, status=status, duration_s=time.monotonic() - started,
                       digest=step.digest())
        )

    def _run_action(self, step: Step, tee: _Tee) -> Mapping[str, Any] | None:
        name = step.argv[0] if step.argv else ""
        action = ACTIONS.get(name)
        if action is None:
            raise StepFailed(
                f"Step {step.name} names the in-process action {name!r}, which is not registered",
                "the plan and the runner disagree about the actions that exist",
                "report this as a bug in rocmforge",
            )
        tee.write(f"+ [python] {shlex.join(step.argv)}\n")
        tee.flush()
        ctx = ActionContext(step=step, plan=self.plan, workdir=self.workdir, extras=self.extras,
                            results=tuple(self.results), runner=self, log=tee)
        with _sigterm_as_interrupt():
            return action(ctx)

    def _run_argv(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        log: TextSink,
        step: Step,
    ) -> tuple[int, str]:
        """Run argv through Invoke in its own process group; return exit status and stdout."""
        lock = self._lock

        def started(pid: int) -> None:
            if lock is not None:
                lock.set_step_group(pid)

        runner_class = cast(
            "type[_GroupLocal]",
            type(
                "_StepLocal",
                (_GroupLocal,),
                {"step_cwd": cwd, "on_start": staticmethod(started), "interrupted": False},
            ),
        )
        log.write(f"+ {shlex.join(argv)}\n")
        log.flush()
        previous = self.c.config.runners.local
        self.c.config.runners.local = runner_class
        try:
            with _sigterm_as_interrupt():
                result = self.c.run(
                    shlex.join(argv),
                    env=dict(env),
                    pty=False,
                    warn=True,
                    echo=False,
                    hide=False,
                    in_stream=False,
                    out_stream=log,
                    err_stream=log,
                )
        finally:
            self.c.config.runners.local = previous
            if lock is not None:
                lock.set_step_group(0)
        if runner_class.interrupted:
            raise KeyboardInterrupt
        if result is None or result.exited is None:
            return 1, ""
        return int(result.exited), str(result.stdout or "")

    def _interrupted(self, step: Step) -> StepInterrupted:
        return StepInterrupted(
            f"Interrupted during step {step.name}; its process group was ended and no stamp "
            "was written for it",
            f"every step before it is stamped, so nothing finished is lost (its partial output "
            f"is in {self._log_path(step)})",
            f"to resume, {self.resume_hint}",
        )

    def _failure(self, step: Step, how: str) -> StepFailed:
        log_path = self._log_path(step)
        try:
            text = log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        cause = ""
        fix = ""
        lines: list[str] = []
        triage = _triage(text, step.name)
        if triage is not None:
            cause = str(getattr(triage, "cause", "") or "")
            fix = str(getattr(triage, "fix", "") or "")
            signature = str(getattr(triage, "signature", "") or "")
            if signature:
                cause = f"{cause} (matched {signature})" if cause else f"matched {signature}"
            lines = [str(x) for x in getattr(triage, "relevant_lines", ()) or ()]
        if not lines:
            lines = [line for line in text.splitlines() if line.strip()][-RELEVANT_LINES:]
        lines = lines[-RELEVANT_LINES:]
        self._say(f"---- the {len(lines)} most relevant lines of {log_path} ----")
        for line in lines:
            self._say(f"    {line}")
        self._say("----")
        error = StepFailed(
            f"Step {step.name} failed: {self._command_line(step)[2:]} {how}. Full log: {log_path}",
            cause or "no known failure signature matched the log; the lines above end it",
            (fix + "; then " if fix else "fix the cause shown above, then ") + self.resume_hint
            + " (finished steps are kept)",
        )
        error.lines = lines  # type: ignore[attr-defined]
        return error


def _triage(text: str, step_name: str) -> Any:
    try:
        from rocmforge import diagnostics  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        return None
    triage = getattr(diagnostics, "triage", None)
    if triage is None:
        return None
    return triage(text, step_name)


def run_plan(
    c: Context,
    plan: Plan,
    workdir: WorkDir,
    *,
    extras: Mapping[str, Any] | None = None,
    resume_hint: str = "",
    console: TextIO | None = None,
) -> list[StepResult]:
    """Execute `plan` (see StepRunner); the build actions are registered on first use."""
    return StepRunner(c, plan, workdir, extras=extras, resume_hint=resume_hint,
                      console=console).execute()


# ------------------------------------------------------------------------ the pipeline's actions
# In-process steps of the build plan (rocmforge.plan.build_plan). Each gets an ActionContext,
# writes only inside the work dir, runs sub-commands through ctx.run (so they are logged and
# interruptible), and returns details that are kept in its stamp (read by `collect`).

_USE_ROCM_LINE = re.compile(r"^--\s+USE_ROCM\s+:\s*(\S*)\s*$", re.MULTILINE)
_ARCH_LINE = re.compile(r"^(?:--\s*)?Building PyTorch for GPU arch:\s*(.*?)\s*$", re.MULTILINE)


def _details_of(ctx: ActionContext, step_name: str) -> Mapping[str, Any]:
    for result in ctx.results:
        if result.name == step_name:
            return result.details
    return {}


@register_action("preflight", "doctor's rows for this build; any FAIL stops the build")
def _preflight(ctx: ActionContext) -> Mapping[str, Any]:
    if ctx.step.inputs.get("skip") == "True":
        ctx.say("preflight skipped (--skip-preflight)")
        return {"skipped": True}
    rows = list(ctx.extras.get("preflight_rows", ()))
    for row in rows:
        ctx.say(f"{row.status:<5} {row.check}: {row.detail}")
    failed = [row for row in rows if row.status == "FAIL"]
    if failed:
        raise StepFailed(
            f"Preflight found {len(failed)} problem(s) that would make the build fail: "
            + "; ".join(f"{row.check} ({row.detail})" for row in failed),
            "doctor's FAIL rows are known to end a build, often hours in",
            "; ".join(row.fix for row in failed if row.fix) or "run `invoke doctor` for details",
        )
    return {"rows": len(rows), "warnings": sum(1 for r in rows if r.status == "WARN")}


@register_action("compilers", "print and record `<compiler> --version` of CC, CXX and HIP")
def _compilers(ctx: ActionContext) -> Mapping[str, Any]:
    compilers = dict(ctx.plan.settings.get("compilers", {}))
    versions: dict[str, str] = {}
    tools = {**compilers}
    for extra in ("cmake", "ninja"):
        found = shutil.which(extra)
        if found:
            tools[extra] = found
    for role, exe in sorted(tools.items()):
        code, out = ctx.capture([exe, "--version"], check=role not in ("cmake", "ninja"))
        first = next((line.strip() for line in out.splitlines() if line.strip()), "")
        versions[role] = f"{exe}: {first}" if code == 0 else f"{exe}: (--version failed)"
    return {"toolchain": versions}


@register_action("environment", "write state/build-env.sh with the build's exports")
def _environment(ctx: ActionContext) -> Mapping[str, Any]:
    from rocmforge.stamps import atomic_write_text

    lines = ["# Written by rocmforge: the environment of `invoke build` (source it to reproduce)."]
    lines += [f"export {k}={shlex.quote(v)}" for k, v in sorted(ctx.step.env.items())]
    path = ctx.workdir.state / "build-env.sh"
    atomic_write_text(path, "\n".join(lines) + "\n")
    ctx.say(f"wrote {path}")
    return {"env": dict(ctx.step.env), "env_file": str(path)}


@register_action("checkout", "git: clone/fetch the PyTorch ref with submodules (no clobbering)")
def _checkout(ctx: ActionContext) -> Mapping[str, Any]:
    from rocmforge.sources.checkout import checkout_tree

    settings = ctx.extras["settings"]
    result = checkout_tree(dest=ctx.workdir.pytorch, repo=settings.pytorch_repo,
                           ref=settings.pytorch_ref, mirrors=settings.mirrors, name="PyTorch")
    for line in result.log:
        ctx.say(f"+ {line}")
    ctx.say(f"PyTorch {settings.pytorch_ref} is at {result.commit}"
            + ("" if result.changed else " (already checked out)"))
    return {"commit": result.commit, "ref": settings.pytorch_ref, "repo": settings.pytorch_repo}


@register_action("patches", "apply the kit's patches for this PyTorch version")
def _patches(ctx: ActionContext) -> Mapping[str, Any]:
    try:
        from rocmforge.sources import patches as patch_module  # type: ignore[attr-defined]
    except ImportError:
        ctx.say("no patch set is defined for this version; nothing to apply")
        return {"applied": []}
    apply = getattr(patch_module, "apply_patches", None)
    if apply is None:
        ctx.say("no patch set is defined for this version; nothing to apply")
        return {"applied": []}
    applied = apply(tree=ctx.workdir.pytorch, version=ctx.step.inputs.get("version", ""))
    names = [str(getattr(p, "name", p)) for p in (applied or ())]
    for name in names:
        ctx.say(f"applied {name}")
    return {"applied": names}


@register_action("build-requirements",
                 "pip install -r requirements.txt -r requirements-build.txt (those present)")
def _build_requirements(ctx: ActionContext) -> Mapping[str, Any]:
    python = ctx.step.argv[1]
    tree = Path(ctx.step.cwd)
    files = [name for name in ("requirements.txt", "requirements-build.txt")
             if (tree / name).is_file()]
    if files:
        argv = [python, "-m", "pip", "install"]
        for name in files:
            argv += ["-r", name]
        ctx.run(argv)
    else:
        ctx.say("no requirements.txt or requirements-build.txt in the checkout")
    if ctx.plan.settings.get("build_style") == "build":
        code, _ = ctx.capture([python, "-c", "import build"], check=False)
        if code != 0:
            ctx.say("`python -m build` is not in the build venv; installing it")
            ctx.run([python, "-m", "pip", "install", "build"])
    return {"files": files}


@register_action("triton", "Triton for the pin: prebuilt wheel (sha256-checked) or source build")
def _triton(ctx: ActionContext) -> Mapping[str, Any]:
    mode = ctx.step.argv[1]
    if mode == "skip":
        ctx.say("Triton skipped (--triton skip)")
        return {"wheel": ""}
    from rocmforge.sources.triton_pin import read_pin_from_tree

    python = str(ctx.workdir.venv / "bin" / "python")
    pin = read_pin_from_tree(ctx.workdir.pytorch)
    ctx.say(f"Triton pin: {pin.commit} ({pin.wheel_name} {pin.version}) from {pin.pin_file}")
    wheel: Path | None = None
    if mode in ("auto", "wheel"):
        try:
            wheel = _download_triton_wheel(ctx, pin, python)
        except (ImportError, RocmforgeError) as exc:
            if mode == "wheel":
                raise
            message = exc.paragraph() if isinstance(exc, RocmforgeError) else str(exc)
            ctx.say(f"no prebuilt Triton wheel ({message}); building from source")
    if wheel is None:
        wheel = _build_triton(ctx, pin, python)
    # Exactly one provider of the `triton` module: the CUDA distribution goes first (§5.8).
    code, out = ctx.capture([python, "-m", "pip", "show", "triton"], check=False)
    if code == 0 and out.strip():
        ctx.say("removing the CUDA `triton` distribution from the build venv (it provides the "
                "same module as the ROCm wheel)")
        ctx.run([python, "-m", "pip", "uninstall", "-y", "triton"])
    ctx.run([python, "-m", "pip", "install", "--no-deps", "--force-reinstall", str(wheel)])
    return {"wheel": str(wheel), "commit": pin.commit, "name": pin.wheel_name}


def _download_triton_wheel(ctx: ActionContext, pin: Any, python: str) -> Path | None:
    # The other engineer's module; ImportError (not there yet) = no prebuilt wheel.
    from rocmforge import triton_wheel  # type: ignore[attr-defined,unused-ignore]

    settings = ctx.extras["settings"]
    rocm_version = ctx.step.inputs.get("rocm_version", "")
    index = str(settings.triton_index).replace("{rocm}", ".".join(rocm_version.split(".")[:2]))
    _, tags = ctx.capture([python, "-c", "from packaging import tags; "
                           "print('\\n'.join(str(t) for t in tags.sys_tags()))"], check=False)
    found = triton_wheel.find_triton_wheel(index, pin, [t for t in tags.split() if t])
    if found is None:
        return None
    return Path(triton_wheel.download_verified(found, ctx.workdir.downloads))


def _build_triton(ctx: ActionContext, pin: Any, python: str) -> Path:
    from rocmforge.sources.checkout import checkout_tree

    settings = ctx.extras["settings"]
    repo = settings.triton_repo or pin.repo
    result = checkout_tree(dest=ctx.workdir.triton, repo=repo, ref=pin.commit,
                           mirrors=settings.mirrors, name="Triton")
    for line in result.log:
        ctx.say(f"+ {line}")
    tree = ctx.workdir.triton
    setup_dir = tree / "python" if (tree / "python" / "setup.py").is_file() else tree
    out_dir = ctx.workdir.downloads / "triton-build"
    out_dir.mkdir(parents=True, exist_ok=True)
    before = set(out_dir.glob("*.whl"))
    ctx.run([python, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w",
             str(out_dir), str(setup_dir)], cwd=str(setup_dir))
    built = sorted(set(out_dir.glob("*.whl")) - before or out_dir.glob("*.whl"),
                   key=lambda p: p.stat().st_mtime)
    if not built:
        raise StepFailed("The Triton source build produced no wheel",
                         f"pip wheel wrote nothing to {out_dir}", "read the triton log")
    return built[-1]


@register_action("stale-check", "PYTORCH_ROCM_ARCH in build/CMakeCache.txt vs. the targets")
def _stale_check(ctx: ActionContext) -> Mapping[str, Any]:
    from rocmforge.stale import check_stale

    build_dir = Path(ctx.step.cwd) / ctx.step.argv[1]
    targets = tuple(t for t in ctx.step.inputs.get("targets", "").split(";") if t)
    verdict = check_stale(build_dir, targets)
    ctx.say(verdict.reason)
    if verdict.stale:
        if not build_dir.resolve().is_relative_to(ctx.workdir.root.resolve()):
            raise StepFailed(
                f"{build_dir} is stale but outside the kit's work dir {ctx.workdir.root}",
                "the kit deletes only what it made",
                f"delete {build_dir} yourself, then run the build again",
            )
        ctx.say(f"removing the stale CMake build dir {build_dir} so configure starts clean")
        shutil.rmtree(build_dir)
    return {"stale": verdict.stale, "cached": list(verdict.cached_targets or ())}


@register_action("log-check", "the configure summary must say USE_ROCM : ON for the targets")
def _log_check(ctx: ActionContext) -> Mapping[str, Any]:
    which = ctx.step.argv[1]
    log_path = ctx.workdir.logs / f"{which}.log"
    text = log_path.read_text(encoding="utf-8", errors="replace")
    targets = tuple(t for t in ctx.step.inputs.get("targets", "").split(";") if t)
    values = _USE_ROCM_LINE.findall(text)
    archs = _ARCH_LINE.findall(text)
    state = values[-1] if values else ""
    if state.upper() not in ("ON", "1", "TRUE"):
        shown = f"USE_ROCM : {state}" if values else "no `USE_ROCM :` summary line"
        raise StepFailed(
            f"The {which} log ({log_path}) shows {shown}: the build fell back to CPU only",
            "LoadHIP did not find ROCm (ROCM_PATH unset or wrong, or no HIP compiler), and "
            "PyTorch then turns USE_ROCM off without a warning (reference §2.3)",
            "check ROCM_PATH/HIP_PATH with `invoke doctor`, then `invoke clean` and build again",
        )
    if not archs:
        raise StepFailed(
            f"The {which} log ({log_path}) has no `Building PyTorch for GPU arch:` line",
            "without it there is no evidence that GPU code is built (reference §2.3)",
            "read the configure log; `invoke clean` and build again",
        )
    from rocmforge.stale import split_arch_list

    configured = split_arch_list(archs[-1])
    if targets and sorted(configured) != sorted(targets):
        raise StepFailed(
            f"Configure built for {';'.join(configured)}, but {';'.join(targets)} was requested",
            "a stale CMake cache keeps the arch list of an earlier configure (reference §5.2)",
            "run `invoke clean` and build again",
        )
    ctx.say(f"USE_ROCM : {state}; GPU arch: {';'.join(configured)}")
    return {"use_rocm": state, "archs": list(configured)}


@register_action("collect", "copy the wheels to dist/ (atomically) and write dist/manifest.json")
def _collect(ctx: ActionContext) -> Mapping[str, Any]:
    from rocmforge.manifest import build_manifest, write_manifest

    dist = ctx.workdir.dist
    built = sorted((Path(ctx.step.cwd) / "dist").glob("torch-*.whl"),
                   key=lambda p: p.stat().st_mtime)
    if not built:
        raise StepFailed(
            f"The build left no torch-*.whl in {Path(ctx.step.cwd) / 'dist'}",
            "the build step succeeded but did not package a wheel",
            "read logs/build.log",
        )
    torch_wheel = copy_atomically(built[-1], dist)
    ctx.say(f"dist: {torch_wheel.name}")
    triton_name = ""
    triton_src = str(_details_of(ctx, "triton").get("wheel", "") or "")
    if triton_src:
        triton_name = copy_atomically(Path(triton_src), dist).name
        ctx.say(f"dist: {triton_name}")
    lock: Any = {}
    if ctx.workdir.lock_file.is_file():
        from rocmforge.knowledge.toml_files import read_toml

        lock = read_toml(ctx.workdir.lock_file)
    steps = [
        {"name": r.name, "result": r.status, "duration_s": round(r.duration_s, 3)}
        for r in ctx.results
    ]
    doc = build_manifest(
        targets=list(ctx.plan.targets),
        wheels={"torch": torch_wheel.name, "triton": triton_name},
        lock=lock,
        toolchain=dict(_details_of(ctx, "compilers").get("toolchain", {})),
        env=dict(_details_of(ctx, "environment").get("env", {})),
        steps=steps,
        plan_settings={k: v for k, v in ctx.plan.settings.items() if k != "origins"},
    )
    doc["source"] = dict(_details_of(ctx, "checkout"))
    path = write_manifest(dist / "manifest.json", doc)
    ctx.say(f"wrote {path}")
    return {"torch": torch_wheel.name, "triton": triton_name}


def copy_atomically(source: Path, folder: Path) -> Path:
    """Copy a file into `folder` through a temp name + os.replace: never a half-written wheel."""
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / source.name
    tmp = folder / f".{source.name}.{os.getpid()}.tmp"
    try:
        shutil.copyfile(source, tmp)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return dest


@register_action("install", "pip install the dist/ wheels into the build venv")
def _install(ctx: ActionContext) -> Mapping[str, Any]:
    python = ctx.step.argv[1]
    names = _details_of(ctx, "collect")
    wheels = [str(ctx.workdir.dist / str(names[k])) for k in ("triton", "torch") if names.get(k)]
    if not wheels:
        raise StepFailed("There is no wheel to install", "the collect step recorded none",
                         "run the build again")
    ctx.run([python, "-m", "pip", "install", "--no-deps", "--force-reinstall", *wheels])
    return {"installed": wheels}


def externally_managed(python: str) -> str:
    """The EXTERNALLY-MANAGED marker path when `python` is a PEP 668 system Python, else ""."""
    probe = (
        "import os, sys, sysconfig\n"
        "marker = os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED')\n"
        "in_venv = sys.prefix != getattr(sys, 'base_prefix', sys.prefix)\n"
        "print(marker if os.path.isfile(marker) and not in_venv else '')\n"
    )
    done = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RocmforgeError(
            f"{python} could not be run ({done.stderr.strip()[-200:] or done.returncode})",
            "the wheels are installed with that interpreter's pip",
            "pass --python with the path of a working interpreter",
        )
    return done.stdout.strip()


def clean_work_dir(workdir: WorkDir, *, everything: bool, dry: bool) -> list[str]:
    """Remove what the kit made and say what; under `dry` only say it.

    Default: the CMake build dir and the built wheels of the checkout, the stamps and the logs
    (sources, venv and dist/ stay). `everything`: each folder the kit creates under the work dir,
    and the work dir itself only when nothing else is left in it (files a user put there stay).
    A live build holding the lock is refused.
    """
    from rocmforge.buildlock import BuildLocked, _pid_alive, read_holder

    holder = read_holder(workdir.state / "build.lock")
    if holder is not None and _pid_alive(holder.pid):
        raise BuildLocked(
            f"A build (pid {holder.pid}, started {holder.started}) is running in {workdir.root}",
            "cleaning under a running build would break it",
            "wait for it to finish or stop it, then clean",
        )
    if everything:
        paths = [workdir.src, workdir.logs, workdir.state, workdir.dist, workdir.venv,
                 workdir.downloads, workdir.lock_file]
    else:
        paths = [workdir.pytorch / "build", workdir.pytorch / "dist", workdir.state / "stamps",
                 workdir.logs]
    lines: list[str] = []
    for path in paths:
        if not path.exists() and not path.is_symlink():
            continue
        lines.append(f"{'would remove' if dry else 'removed'} {path}")
        if dry:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    if everything and not dry and workdir.root.is_dir() and not any(workdir.root.iterdir()):
        workdir.root.rmdir()
        lines.append(f"removed {workdir.root}")
    if not lines:
        lines.append(f"nothing to clean in {workdir.root}")
    return lines
