"""rocmforge.process on real programs: argv, streams, log, timeouts, process groups, interrupts."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from rocmforge import process

PY = sys.executable
REPO_ROOT = Path(__file__).resolve().parents[2]


def _alive(pid: int) -> bool:
    stat = process.proc_stat(pid)
    return stat is not None and stat.state not in ("Z", "X")


def test_argv_streams_status_and_duration(tmp_path: Path) -> None:
    done = process.run([PY, "-c", "import sys; print('out', sys.argv[1:]); "
                        "print('err', file=sys.stderr); sys.exit(3)", "a b", "$(x)"],
                       cwd=tmp_path, env={"PATH": os.environ["PATH"], "RF_X": "1"})
    assert done.argv == (PY, "-c", done.argv[2], "a b", "$(x)")
    assert (done.returncode, done.stdout, done.stderr) == (3, "out ['a b', '$(x)']\n", "err\n")
    assert done.output == "out ['a b', '$(x)']\nerr\n"
    assert done.started and not done.timed_out and not done.ok
    assert 0 < done.duration_s < 30


def test_env_is_the_whole_environment_and_cwd_is_used(tmp_path: Path) -> None:
    done = process.run([PY, "-c", "import os; print(sorted(k for k in os.environ "
                        "if k.startswith('RF_')), os.getcwd())"],
                       cwd=tmp_path, env={"RF_ONLY": "1"})
    assert done.stdout == f"['RF_ONLY'] {tmp_path}\n"


def test_a_missing_program_or_folder_is_a_result_not_an_exception(tmp_path: Path) -> None:
    missing = process.run(["rocmforge-no-such-program-xyz", "--version"])
    assert (missing.returncode, missing.started) == (127, False)
    assert missing.stderr == ("cannot run rocmforge-no-such-program-xyz: No such file or "
                              "directory")
    no_dir = process.run([PY, "-c", "pass"], cwd=tmp_path / "gone")
    assert (no_dir.returncode, no_dir.started) == (127, False)
    assert no_dir.stderr == f"cannot run {PY}: No such file or directory ({tmp_path / 'gone'})"
    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\n")
    denied = process.run([str(script)])
    assert (denied.returncode, denied.started) == (126, False)
    assert denied.stderr == f"cannot run {script}: Permission denied"


def test_log_gets_the_echo_and_both_streams_and_output_can_stay_out_of_memory() -> None:
    log = io.StringIO()
    done = process.run([PY, "-c", "import sys; print('one', flush=True); "
                        "print('two', file=sys.stderr)"], log=log, echo=True, keep_output=False)
    lines = log.getvalue().splitlines()
    assert lines[0] == f"+ {PY} -c 'import sys; print('\"'\"'one'\"'\"', flush=True); " \
        "print('\"'\"'two'\"'\"', file=sys.stderr)'"
    assert sorted(lines[1:]) == ["one", "two"]
    assert (done.stdout, done.stderr, done.returncode) == ("", "", 0)


def test_undecodable_bytes_are_replaced_not_raised() -> None:
    done = process.run([PY, "-c", "import sys; sys.stdout.buffer.write(b'a\\xffb\\xc3')"])
    assert done.stdout == "a\ufffdb\ufffd"


def test_the_program_leads_its_own_process_group() -> None:
    seen: list[tuple[int, int]] = []
    done = process.run([PY, "-c", "import os; print(os.getpgid(0), os.getsid(0))"],
                       on_start=lambda pid: seen.append((pid, os.getpgid(pid))))
    pid, pgid = seen[0]
    assert pid == pgid != os.getpgid(0)
    assert done.stdout == f"{pid} {pid}\n"


def test_timeout_ends_the_whole_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    body = ("import subprocess, sys, time;"
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
            f"open({str(pidfile)!r}, 'w').write(str(p.pid)); print('started', flush=True);"
            "time.sleep(60)")
    started = time.monotonic()
    done = process.run([PY, "-c", body], timeout=2.0)
    assert time.monotonic() - started < 15
    assert (done.returncode, done.timed_out) == (124, True)
    assert done.stdout == "started\n"
    assert done.stderr == "timed out after 2.0s"
    assert not _alive(int(pidfile.read_text()))


def test_a_background_child_holding_the_pipes_does_not_hang_the_caller() -> None:
    """The program exits but leaves a child with its stdout: run() returns shortly after and
    leaves that child alone (only an interrupt or a timeout ends a group)."""
    body = ("import subprocess, sys;"
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)']);"
            "print(p.pid, flush=True)")
    started = time.monotonic()
    done = process.run([PY, "-c", body])
    assert time.monotonic() - started < process.DRAIN_IDLE_S + 5
    background = int(done.stdout)
    try:
        assert done.returncode == 0
        assert _alive(background)
    finally:
        os.kill(background, signal.SIGKILL)


def test_group_members_and_start_ticks_of_a_real_group() -> None:
    child = subprocess.Popen([PY, "-c", "import time; time.sleep(30)"], start_new_session=True)
    try:
        assert process.group_members(child.pid) == (child.pid,)
        stat = process.proc_stat(child.pid)
        assert stat is not None and stat.pgrp == child.pid and stat.start_ticks > 0
        assert process.start_ticks(child.pid) == stat.start_ticks
        assert process.start_ticks(os.getpid()) <= stat.start_ticks
        assert process.command_line(child.pid) == f"{PY} -c 'import time; time.sleep(30)'"
    finally:
        child.kill()
        child.wait()
    assert process.group_members(child.pid) == ()
    assert process.proc_stat(2**31) is None and process.group_members(2**31) == ()
    assert len(process.boot_id()) == 36


_DRIVER = textwrap.dedent("""
    import json, sys
    from rocmforge import process
    body = sys.argv[1]
    try:
        process.run([sys.executable, "-c", body], grace_s=float(sys.argv[2]))
    except process.Interrupted as exc:
        print(json.dumps({"survivors": exc.survivors, "killed": exc.killed}), flush=True)
        sys.exit(130)
""")

# Starts a child that ignores SIGTERM with its output sent to /dev/null (detached from the
# pipe), writes the child's pid, and sleeps (SIGTERM ends this leader at once).
_STUBBORN = textwrap.dedent("""
    import signal, subprocess, sys, time
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    open(sys.argv[1], "w").write(str(p.pid))
    print("ready", flush=True)
    time.sleep(120)
""")


def _start_driver(tmp_path: Path, grace_s: float) -> tuple[subprocess.Popen[str], int]:
    pidfile = tmp_path / "grandchild.pid"
    body = (f"import sys; sys.argv = ['x', {str(pidfile)!r}]; exec({_STUBBORN!r})")
    driver = subprocess.Popen([PY, "-c", _DRIVER, body, str(grace_s)], cwd=REPO_ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    deadline = time.monotonic() + 30
    while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return driver, int(pidfile.read_text())


def test_interrupt_waits_for_the_group_then_kills_after_the_grace(tmp_path: Path) -> None:
    driver, grandchild = _start_driver(tmp_path, grace_s=2.0)
    sent = time.monotonic()
    driver.send_signal(signal.SIGINT)
    time.sleep(1.0)
    assert driver.poll() is None and _alive(grandchild), "returned before the grace ran out"
    out, err = driver.communicate(timeout=30)
    took = time.monotonic() - sent
    assert driver.returncode == 130, err
    assert out.strip() == '{"survivors": [], "killed": true}'
    assert 2.0 <= took < 15
    assert not _alive(grandchild)


def test_a_second_interrupt_kills_at_once(tmp_path: Path) -> None:
    driver, grandchild = _start_driver(tmp_path, grace_s=60.0)
    sent = time.monotonic()
    driver.send_signal(signal.SIGINT)
    time.sleep(0.5)
    assert driver.poll() is None
    driver.send_signal(signal.SIGINT)
    out, err = driver.communicate(timeout=30)
    assert driver.returncode == 130, err
    assert out.strip() == '{"survivors": [], "killed": true}'
    assert time.monotonic() - sent < 10
    assert not _alive(grandchild)
