"""The runner on real commands: stamps, resume, dry, lock, failure triage, interrupts."""

from __future__ import annotations

import io
import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from invoke import Config, Context

from rocmforge.errors import StepFailed
from rocmforge.execute.lock import BuildLock, BuildLocked, _pid_alive
from rocmforge.execute.model import Plan, Step
from rocmforge.execute.runner import StepRunner, env_diff
from rocmforge.execute.stamps import read_stamp
from rocmforge.workdir import workdir_for

PY = sys.executable


def _ctx(dry: bool = False) -> Context:
    return Context(Config(overrides={"run": {"dry": dry}}))


def _steps(tmp: Path, marker: str = "one") -> tuple[Step, ...]:
    out = tmp / "out.txt"
    return (
        Step(name="first", argv=(PY, "-c", f"open({str(out)!r}, 'a').write('first\\n')"),
             why="append first"),
        Step(name="second", argv=(PY, "-c", f"open({str(out)!r}, 'a').write('{marker}\\n')"),
             why="append marker", env={"RF_MARK": marker}),
        Step(name="third", argv=(PY, "-c", f"open({str(out)!r}, 'a').write('third\\n')"),
             why="append third"),
    )


def _run(tmp: Path, steps: tuple[Step, ...], dry: bool = False, console=None, actions=None):
    plan = Plan(settings={}, targets=("gfx1100",), steps=steps)
    runner = StepRunner(_ctx(dry), plan, workdir_for(tmp / "work"), console=console,
                        actions=actions or {},
                        resume_hint="run `invoke build` again")
    return runner.execute()


def test_runs_in_order_stamps_and_skips_on_rerun(tmp_path: Path, capsys) -> None:
    results = _run(tmp_path, _steps(tmp_path))
    assert [r.status for r in results] == ["ran", "ran", "ran"]
    assert (tmp_path / "out.txt").read_text() == "first\none\nthird\n"
    stamp = read_stamp(tmp_path / "work" / "state", "second")
    assert stamp is not None and stamp.digest == _steps(tmp_path)[1].digest()
    assert "+ " + PY in (tmp_path / "work" / "logs" / "first.log").read_text()
    again = _run(tmp_path, _steps(tmp_path))
    assert [r.status for r in again] == ["skipped", "skipped", "skipped"]
    assert (tmp_path / "out.txt").read_text() == "first\none\nthird\n"
    out = capsys.readouterr().out
    assert "every step is up to date; nothing to do" in out
    assert "export RF_MARK=one" in out


def test_changed_step_reruns_it_and_everything_after(tmp_path: Path) -> None:
    _run(tmp_path, _steps(tmp_path))
    results = _run(tmp_path, _steps(tmp_path, marker="two"))
    assert [r.status for r in results] == ["skipped", "ran", "ran"]
    assert (tmp_path / "out.txt").read_text() == "first\none\nthird\ntwo\nthird\n"


def test_dry_prints_every_step_and_writes_nothing(tmp_path: Path, capsys) -> None:
    results = _run(tmp_path, _steps(tmp_path), dry=True)
    assert [r.status for r in results] == ["dry", "dry", "dry"]
    assert not (tmp_path / "work").exists()
    assert not (tmp_path / "out.txt").exists()
    out = capsys.readouterr().out
    assert out.count("would run") == 3
    assert f"+ {PY} -c" in out


def test_failure_names_the_step_shows_last_lines_and_writes_no_stamp(tmp_path: Path,
                                                                     capsys) -> None:
    lines = "\n".join(f"print('line {i}')" for i in range(50))
    script = tmp_path / "fail.py"
    script.write_text(lines + "\nimport sys; sys.exit(3)\n")
    steps = (_steps(tmp_path)[0], Step(name="boom", argv=(PY, str(script)), why="fails"))
    with pytest.raises(StepFailed) as info:
        _run(tmp_path, steps)
    err = info.value
    assert err.exit_code == 1
    assert "Step boom failed" in err.what and "exited with status 3" in err.what
    assert "run `invoke build` again" in err.fix
    assert len(err.lines) == 30 and err.lines[-1] == "line 49"  # type: ignore[attr-defined]
    assert read_stamp(tmp_path / "work" / "state", "boom") is None
    assert read_stamp(tmp_path / "work" / "state", "first") is not None


def _hold_lock(lock_path: Path, started: str = "2026-01-01T00:00:00") -> subprocess.Popen:
    """A real holder: another process takes the kernel lock on the file and writes its record
    (the way the kit does), then sleeps until killed."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen([PY, "-c", textwrap.dedent(f"""
        import fcntl, json, os, sys, time
        fd = os.open({str(lock_path)!r}, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, json.dumps({{"pid": os.getpid(), "started": {started!r},
                                  "host": os.uname().nodename}}).encode())
        print("held", flush=True)
        time.sleep(60)
    """)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def test_live_lock_holder_is_refused_with_pid_and_start(tmp_path: Path) -> None:
    lock_path = tmp_path / "work" / "state" / "build.lock"
    sleeper = _hold_lock(lock_path)
    try:
        with pytest.raises(BuildLocked) as info:
            _run(tmp_path, _steps(tmp_path))
        assert f"pid {sleeper.pid}" in info.value.what
        assert "2026-01-01T00:00:00" in info.value.what
        assert info.value.exit_code == 3
        assert not (tmp_path / "out.txt").exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_live_pid_in_the_file_without_the_kernel_lock_does_not_hold_it(tmp_path: Path) -> None:
    """The JSON is only a message: a record naming a live process that does not hold the
    kernel lock is taken over (and that process is left alone)."""
    lock_path = tmp_path / "work" / "state" / "build.lock"
    sleeper = subprocess.Popen([PY, "-c", "import time; time.sleep(30)"])
    try:
        lock_path.parent.mkdir(parents=True)
        lock_path.write_text(json.dumps({"pid": sleeper.pid, "started": "then", "host": ""}))
        messages: list[str] = []
        with BuildLock(lock_path, say=messages.append):
            assert json.loads(lock_path.read_text())["pid"] == os.getpid()
        assert messages == [f"rocmforge: the build lock {lock_path} belongs to pid "
                            f"{sleeper.pid} (started then), which no longer holds it (that pid "
                            "is now another process); taking it over."]
        assert sleeper.poll() is None
    finally:
        sleeper.kill()
        sleeper.wait()


def test_stale_lock_of_dead_pid_is_taken_over_with_a_message(tmp_path: Path) -> None:
    dead = subprocess.Popen([PY, "-c", "pass"])
    dead.wait()
    lock_path = tmp_path / "state" / "build.lock"
    lock_path.parent.mkdir(parents=True)
    lock_path.write_text(json.dumps({"pid": dead.pid, "started": "then", "host": ""}))
    messages: list[str] = []
    with BuildLock(lock_path, say=messages.append) as lock:
        assert json.loads(lock_path.read_text())["pid"] == os.getpid()
        assert lock.holder is not None
    assert any(f"pid {dead.pid}" in m and "taking it over" in m for m in messages)
    assert not lock_path.exists()


def test_python_action_gets_context_and_its_details_go_to_the_stamp(tmp_path: Path) -> None:
    def _echo(ctx):
        code, out = ctx.capture([PY, "-c", "print('hello from sub')"])
        return {"said": out.strip(), "code": code}

    steps = (Step(name="act", argv=("test-echo",), why="action", kind="python"),)
    results = _run(tmp_path, steps, actions={"test-echo": (_echo, "test action")})
    assert results[0].details == {"said": "hello from sub", "code": 0}
    stamp = read_stamp(tmp_path / "work" / "state", "act")
    assert stamp is not None and stamp.details == {"said": "hello from sub", "code": 0}


def test_env_diff_quotes_values() -> None:
    assert env_diff({"A": "1"}, {"A": "1", "B": "x y", "C": "$(rm -rf /)"}) == [
        "export B='x y'", "export C='$(rm -rf /)'"]


def test_sigint_ends_the_step_group_writes_no_stamp_and_resume_works(tmp_path: Path) -> None:
    """A real `invoke`-like parent gets SIGINT while its step's child (a grandchild) sleeps."""
    work = tmp_path / "work"
    pidfile = tmp_path / "grandchild.pid"
    driver = tmp_path / "driver.py"
    driver.write_text(textwrap.dedent(f"""
        import sys
        from invoke import Config, Context
        from rocmforge.errors import RocmforgeError
        from rocmforge.execute.model import Plan, Step
        from rocmforge.execute.runner import StepRunner
        from rocmforge.workdir import workdir_for
        slow = sys.argv[1] == "slow"
        body = ("import os,subprocess,sys,time;"
                "p=subprocess.Popen([sys.executable,'-c','import time; time.sleep(60)']);"
                "open({str(pidfile)!r},'w').write(str(p.pid));time.sleep(60)") if slow else "pass"
        steps = (Step(name="quick", argv=(sys.executable, "-c", "pass"), why="q"),
                 Step(name="long", argv=(sys.executable, "-c", body), why="l"))
        plan = Plan(settings={{}}, targets=(), steps=steps)
        try:
            StepRunner(Context(Config()), plan, workdir_for({str(work)!r}), actions={{}},
                       resume_hint="run it again").execute()
        except RocmforgeError as exc:
            print(exc.paragraph()); sys.exit(exc.exit_code)
    """))
    proc = subprocess.Popen([PY, str(driver), "slow"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 20
    while not pidfile.exists() and time.time() < deadline:
        time.sleep(0.1)
    assert pidfile.exists()
    time.sleep(0.2)
    grandchild = int(pidfile.read_text())
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 130, out
    assert "Interrupted during step long" in out and "run it again" in out
    deadline = time.time() + 10
    while _pid_alive(grandchild) and time.time() < deadline:
        time.sleep(0.1)
    assert not _pid_alive(grandchild), "the step's child outlived the interrupt"
    state = work / "state"
    assert read_stamp(state, "quick") is not None
    assert read_stamp(state, "long") is None
    assert not (state / "build.lock").exists()
    done = subprocess.run([PY, str(driver), "fast"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "quick: done (stamp matches), skipped" in done.stdout
    assert read_stamp(state, "long") is not None


def test_failure_matching_a_signature_shows_its_cause_fix_and_lines(tmp_path: Path) -> None:
    """A step log with GCC's OOM-kill line (the text gcc prints when the kernel kills cc1plus)
    is explained by the `compiler-killed` rule of rocmforge/triage/parsers/memory.py."""
    noise = "\n".join(f"print('[{i}/9000] Building CXX object caffe2/x{i}.o')" for i in range(200))
    script = tmp_path / "oom.py"
    script.write_text(noise + "\nprint('FAILED: caffe2/x7.o')\n"
                      "print('c++: fatal error: Killed signal terminated program cc1plus')\n"
                      "print('compilation terminated.')\nimport sys; sys.exit(1)\n")
    steps = (Step(name="build", argv=(PY, str(script)), why="compiles"),)
    with pytest.raises(StepFailed) as info:
        _run(tmp_path, steps)
    err = info.value
    assert err.signature_id == "compiler-killed"  # type: ignore[attr-defined]
    assert "class out-of-memory (known failure `compiler-killed`)" in err.why
    assert "MAX_JOBS" in err.fix and "run `invoke build` again" in err.fix
    lines = err.lines  # type: ignore[attr-defined]
    assert "c++: fatal error: Killed signal terminated program cc1plus" in lines
    assert "FAILED: caffe2/x7.o" in lines
    assert len(lines) <= 30
    assert "[5/9000] Building CXX object caffe2/x5.o" not in lines


def test_unexplained_failure_shows_the_error_looking_lines(tmp_path: Path) -> None:
    script = tmp_path / "err.py"
    script.write_text("\n".join(f"print('step {i}')" for i in range(100))
                      + "\nprint('foo.cpp:3:1: error: expected unqualified-id')\n"
                      + "\n".join(f"print('after {i}')" for i in range(100))
                      + "\nimport sys; sys.exit(2)\n")
    steps = (Step(name="odd", argv=(PY, str(script)), why="fails oddly"),)
    with pytest.raises(StepFailed) as info:
        _run(tmp_path, steps)
    assert info.value.signature_id == ""  # type: ignore[attr-defined]
    assert info.value.lines == ["foo.cpp:3:1: error: expected unqualified-id"]  # type: ignore[attr-defined]
    assert "no known failure signature matched" in info.value.why


HOSTILE = ("a b", "x; touch pwned-semicolon", "$(touch pwned-subst)", "`touch pwned-tick`",
           "it's", '"dq"', "*", "--", "&& touch pwned-and", "\\n", "")


def test_hostile_arguments_reach_the_command_intact_and_run_nothing(tmp_path: Path,
                                                                    capsys) -> None:
    """Context.run takes a shell string: the runner's must be shlex.join(argv), so that spaces,
    `;`, `$()`, backticks and quotes arrive as the very same argv, and no shell acts on them."""
    folder = tmp_path / "dir with space; $(touch pwned-cwd)"
    folder.mkdir()
    script = folder / "echo args.py"
    out = folder / "argv.json"
    script.write_text("import json, os, sys\n"
                      f"open({str(out)!r}, 'w').write(json.dumps([os.getcwd(), *sys.argv[1:],"
                      " os.environ['RF_HOSTILE']]))\n")
    steps = (Step(name="hostile", argv=(PY, str(script), *HOSTILE), why="quoting",
                  cwd=str(folder), env={"RF_HOSTILE": "v; $(touch pwned-env)"}),)
    assert [r.status for r in _run(tmp_path, steps)] == ["ran"]
    assert json.loads(out.read_text()) == [str(folder), *HOSTILE, "v; $(touch pwned-env)"]
    assert sorted(p.name for p in tmp_path.rglob("pwned*")) == []
    assert not list(Path.cwd().glob("pwned*"))
    printed = capsys.readouterr().out
    assert "    export RF_HOSTILE='v; $(touch pwned-env)'" in printed.splitlines()
    # The log's `+ ...` line is the command as a shell would take it back: the same argv.
    first = (tmp_path / "work" / "logs" / "hostile.log").read_text().splitlines()[0]
    assert first.startswith("+ ")
    assert tuple(shlex.split(first[2:])) == (PY, str(script), *HOSTILE)


def test_dry_run_lines_parse_back_to_the_argv(tmp_path: Path, capsys) -> None:
    step = Step(name="s", argv=(PY, "-c", "print('$(x); y')", "a b"), why="w",
                cwd=str(tmp_path / "a b"))
    _run(tmp_path, (step,), dry=True)
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("+ "))
    assert line == f"+ (cd {shlex.quote(str(tmp_path / 'a b'))}) {shlex.join(step.argv)}"
    assert shlex.split(line.split(") ", 1)[1]) == list(step.argv)


def test_a_stamped_step_whose_output_is_gone_runs_again_with_every_later_step(
    tmp_path: Path,
) -> None:
    """Issue 14 item 6: `rm -rf venv/` must not leave a stamp that says the venv exists."""
    made = tmp_path / "made.txt"
    make = f"open({str(made)!r}, 'w').write('x')"
    steps = (
        Step(name="make", argv=(PY, "-c", make), why="make", outputs=(str(made),)),
        Step(name="after", argv=(PY, "-c", "pass"), why="after"),
    )
    assert [r.status for r in _run(tmp_path, steps)] == ["ran", "ran"]
    assert [r.status for r in _run(tmp_path, steps)] == ["skipped", "skipped"]
    made.unlink()
    console = io.StringIO()
    assert [r.status for r in _run(tmp_path, steps, console=console)] == ["ran", "ran"]
    assert (f"==> make: its stamp matches, but {made} is gone; it runs again, and so does every "
            "step after it") in console.getvalue()
    assert made.is_file()


def test_a_first_step_refused_on_bad_input_gets_the_stamps_back(tmp_path: Path) -> None:
    """Review defect: the stamps from the first changed step on were removed before it ran, so
    a step that stopped on bad input (exit 2, nothing changed) made the next build redo
    everything. They come back; a failure of the build itself (exit 1) still removes them."""
    from rocmforge.errors import UsageError

    def _refuse(ctx):
        raise UsageError("'v9.9.9' is no ref", "the remote lacks it", "pass one it has")

    def _fail(ctx):
        raise StepFailed("it broke", "the build failed", "read the log")

    state = tmp_path / "work" / "state"
    _run(tmp_path, _steps(tmp_path))
    before = {p.name: p.read_text() for p in (state / "stamps").glob("*.json")}
    assert sorted(before) == ["first.json", "second.json", "third.json"]
    for action, code in ((_refuse, 2), (_fail, 1)):
        changed = (_steps(tmp_path)[0],
                   Step(name="second", argv=("test-act",), why="act", kind="python"),
                   _steps(tmp_path)[2])
        with pytest.raises(Exception) as info:
            _run(tmp_path, changed, actions={"test-act": (action, "test action")})
        assert getattr(info.value, "exit_code", None) == code
        left = {p.name: p.read_text() for p in (state / "stamps").glob("*.json")}
        assert left == (before if code == 2 else {"first.json": before["first.json"]})
    assert (tmp_path / "out.txt").read_text() == "first\none\nthird\n"
