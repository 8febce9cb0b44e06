"""The work-dir lock with real processes, real signals and real files (issue 14 items 1-3, 7-9).

Exclusion is a kernel flock; the JSON record is for messages and for ending a killed build's
leftover step group, which happens only when the group's leader pid, start time and boot id all
match.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from werkzeug import Request, Response

from rocmforge import process
from rocmforge.errors import RocmforgeError
from rocmforge.execute.lock import BuildLock, BuildLocked, work_lock
from rocmforge.workdir import WorkDir, workdir_for

PY = sys.executable
REPO_ROOT = Path(__file__).resolve().parents[2]
CHILD_ENV = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}


def _alive(pid: int) -> bool:
    stat = process.proc_stat(pid)
    return stat is not None and stat.state not in ("Z", "X")


def _dead_pid() -> int:
    dead = subprocess.Popen([PY, "-c", "pass"])
    dead.wait()
    return dead.pid


def _record(path: Path, **fields: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"pid": _dead_pid(), "started": "2026-01-01T00:00:00", "host": socket.gethostname(),
           "argv": ["invoke", "build"], "boot_id": process.boot_id()}
    doc.update(fields)
    path.write_text(json.dumps(doc))


def _lock_free(path: Path) -> bool:
    """Whether no process holds the kernel lock on `path` (a missing file is free)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def _sleeper_group() -> subprocess.Popen[bytes]:
    """A leader in a group of its own with one child: what a step looks like."""
    body = ("import subprocess, sys, time;"
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
            "time.sleep(60)")
    group = subprocess.Popen([PY, "-c", body], start_new_session=True)
    deadline = time.monotonic() + 10
    while len(process.group_members(group.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(process.group_members(group.pid)) == 2
    return group


# --- item 1: a takeover ends only the group the dead build started ---------------------------


def test_takeover_ends_the_leftover_group_when_leader_start_and_boot_match(tmp_path: Path) -> None:
    group = _sleeper_group()
    members = process.group_members(group.pid)
    path = tmp_path / "state" / "build.lock"
    _record(path, step_pgid=group.pid, step_start_ticks=process.start_ticks(group.pid))
    messages: list[str] = []
    with BuildLock(path, say=messages.append):
        assert process.group_members(group.pid) == ()
    group.wait()
    assert not any(_alive(pid) for pid in members)
    assert messages[1] == (f"rocmforge: ending process group {group.pid} "
                           f"({shlex.join(group.args)}) left running by that build.")


def test_takeover_spares_an_unrelated_process_recorded_with_a_wrong_start_time(
        tmp_path: Path) -> None:
    """A real unrelated process holds the recorded pid (pid reuse): it must survive."""
    unrelated = subprocess.Popen([PY, "-c", "import time; time.sleep(60)"],
                                 start_new_session=True)
    try:
        path = tmp_path / "state" / "build.lock"
        wrong = process.start_ticks(unrelated.pid) - 1
        _record(path, step_pgid=unrelated.pid, step_start_ticks=wrong)
        messages: list[str] = []
        with BuildLock(path, say=messages.append):
            pass
        assert unrelated.poll() is None and _alive(unrelated.pid)
        assert messages[1] == (f"rocmforge: process group {unrelated.pid} recorded in that "
                               "lock is not the one that build started (its leader's start "
                               "time differs (the pid was reused)); it is left alone.")
        assert not path.exists()
    finally:
        unrelated.kill()
        unrelated.wait()


def test_takeover_spares_a_group_recorded_before_a_reboot(tmp_path: Path) -> None:
    unrelated = subprocess.Popen([PY, "-c", "import time; time.sleep(60)"],
                                 start_new_session=True)
    try:
        path = tmp_path / "state" / "build.lock"
        _record(path, step_pgid=unrelated.pid,
                step_start_ticks=process.start_ticks(unrelated.pid),
                boot_id="00000000-0000-0000-0000-000000000000")
        messages: list[str] = []
        with BuildLock(path, say=messages.append):
            pass
        assert _alive(unrelated.pid)
        assert "(the system was rebooted since); it is left alone." in messages[1]
    finally:
        unrelated.kill()
        unrelated.wait()


def test_members_of_a_group_whose_leader_is_gone_are_neither_killed_nor_run_beside(
        tmp_path: Path) -> None:
    body = ("import subprocess, sys;"
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
            "print(p.pid, flush=True)")
    leader = subprocess.Popen([PY, "-c", body], start_new_session=True, stdout=subprocess.PIPE,
                              text=True)
    ticks = process.start_ticks(leader.pid)
    assert leader.stdout is not None
    orphan = int(leader.stdout.readline())
    leader.wait(timeout=20)
    leader.stdout.close()
    try:
        assert process.group_members(leader.pid) == (orphan,)
        path = tmp_path / "state" / "build.lock"
        _record(path, step_pgid=leader.pid, step_start_ticks=ticks)
        before = path.read_text()
        with pytest.raises(BuildLocked) as info:
            BuildLock(path, say=lambda m: None).acquire()
        assert info.value.exit_code == 3  # its leftovers are in the way for now
        assert info.value.what == (
            f"The build that held {path} left processes in its step's process group "
            f"{leader.pid} (pids {orphan} {PY} -c 'import time; time.sleep(60)'), but that "
            "group's leader has exited")
        assert f"end them with `kill -- -{leader.pid}`" in info.value.fix
        assert _alive(orphan)
        assert path.read_text() == before and _lock_free(path)
    finally:
        os.kill(orphan, signal.SIGKILL)


# --- item 3: racing takers of a stale lock ---------------------------------------------------

_RACER = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from rocmforge.execute.lock import BuildLock, BuildLocked
    path, go = Path(sys.argv[1]), sys.argv[2]
    while not os.path.exists(go):
        time.sleep(0.001)
    def slow_console(message):  # a terminal over a slow link: widens any check-then-act gap
        time.sleep(0.05)

    lock = BuildLock(path, say=slow_console)
    try:
        lock.acquire()
    except BuildLocked:
        print("refused", flush=True)
        sys.exit(0)
    print("won", flush=True)
    time.sleep(0.4)
    lock.release()
""")


def test_racing_takers_of_a_stale_lock_never_both_win(tmp_path: Path) -> None:
    """20 trials x 3 processes released at once onto a lock left by a dead build."""
    outcomes = []
    started = time.monotonic()
    for trial in range(20):
        path = tmp_path / f"t{trial}" / "state" / "build.lock"
        _record(path)
        go = tmp_path / f"go{trial}"
        racers = [subprocess.Popen([PY, "-c", _RACER, str(path), str(go)], env=CHILD_ENV,
                                   stdout=subprocess.PIPE, text=True) for _ in range(3)]
        time.sleep(0.3)  # let all three reach the starting line
        go.write_text("")
        results = sorted(r.communicate(timeout=30)[0].strip() for r in racers)
        outcomes.append(results)
    assert time.monotonic() - started < 120
    assert outcomes == [["refused", "refused", "won"]] * 20


# --- item 2: Ctrl-C waits for the step's group; the lock is freed only after it ---------------

_STUBBORN_STEP = textwrap.dedent("""
    import signal, subprocess, sys, time
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    open(sys.argv[1], "w").write(str(p.pid))
    time.sleep(120)
""")

_BUILD_DRIVER = textwrap.dedent("""
    import sys
    from rocmforge.errors import RocmforgeError
    from rocmforge.execute.model import Plan, Step
    from rocmforge.execute.runner import StepRunner
    from rocmforge.workdir import workdir_for
    work, body, pidfile, grace = sys.argv[1:5]
    steps = (Step(name="stubborn", argv=(sys.executable, "-c", body, pidfile), why="s"),)
    try:
        StepRunner(None, Plan(settings={}, targets=(), steps=steps), workdir_for(work),
                   actions={}, resume_hint="run it again", kill_grace_s=float(grace)).execute()
    except RocmforgeError as exc:
        print(exc.paragraph(), flush=True)
        sys.exit(exc.exit_code)
""")


def test_ctrl_c_frees_the_lock_only_after_a_stubborn_detached_group_is_gone(
        tmp_path: Path) -> None:
    work = tmp_path / "work"
    pidfile = tmp_path / "grandchild.pid"
    lock_path = work / "state" / "build.lock"
    kit = subprocess.Popen([PY, "-c", _BUILD_DRIVER, str(work), _STUBBORN_STEP, str(pidfile),
                            "1.5"], env=CHILD_ENV, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 30
    while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    grandchild = int(pidfile.read_text())
    assert not _lock_free(lock_path)
    kit.send_signal(signal.SIGINT)
    samples: list[tuple[bool, bool]] = []
    deadline = time.monotonic() + 30
    while kit.poll() is None and time.monotonic() < deadline:
        samples.append((_lock_free(lock_path), _alive(grandchild)))
        time.sleep(0.02)
    out, _ = kit.communicate(timeout=30)
    assert kit.returncode == 130, out
    # During the grace period the group lives and the lock is held ...
    assert (False, True) in samples
    # ... and at no moment was the lock free while the group's process still ran.
    assert (True, True) not in samples
    assert not _alive(grandchild)
    assert ("Interrupted during step stubborn; its process group was ended (a process of it "
            "ignored SIGTERM, so the group was sent SIGKILL) and no stamp was written for "
            "it") in out
    assert _lock_free(lock_path) and not lock_path.exists()


# --- item 8: a pid no kernel hands out ------------------------------------------------------


def test_a_lock_naming_pid_2_pow_31_is_taken_over_with_a_note_not_a_traceback(
        tmp_path: Path) -> None:
    path = tmp_path / "state" / "build.lock"
    _record(path, pid=2**31, step_pgid=2**31 + 7)
    messages: list[str] = []
    with BuildLock(path, say=messages.append):
        assert json.loads(path.read_text())["pid"] == os.getpid()
    assert messages == [
        f"rocmforge: the lock {path} names pid 2147483648, which no Linux system hands out "
        "(pids are below 2^22); the kernel lock on it is free, so no process holds it: this "
        "run takes it over and ends no process."]


def test_a_held_lock_with_an_impossible_pid_is_one_paragraph(tmp_path: Path) -> None:
    path = tmp_path / "state" / "build.lock"
    path.parent.mkdir(parents=True)
    holder = subprocess.Popen([PY, "-c", textwrap.dedent(f"""
        import fcntl, os, time
        fd = os.open({str(path)!r}, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, b'{{"pid": 99999999999, "started": "x", "host": ""}}')
        print("held", flush=True)
        time.sleep(60)
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(BuildLocked) as info:
            BuildLock(path).acquire()
        assert info.value.paragraph() == (
            f"Another rocmforge process is using this work dir (its lock file names no valid "
            f"holder); its lock is {path}. Two builds in one tree would overwrite each other's "
            "files; the kernel lock on that file is held, so the holder is alive. Fix: wait for "
            f"it to finish or stop it (`fuser -v {path}` names it), or give this build another "
            "--work-dir.")
    finally:
        holder.kill()
        holder.wait()


def test_clean_with_a_pid_2_pow_31_lock_is_no_traceback(tmp_path: Path) -> None:
    work = tmp_path / "w"
    (work / "logs").mkdir(parents=True)
    (work / "state").mkdir()
    (work / "state" / "work-dir").write_text("rocmforge\n")
    _record(work / "state" / "build.lock", pid=2**31)
    done = subprocess.run([PY, "-m", "invoke", "clean", "--logs", "--work-dir", str(work)],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "names pid 2147483648, which no Linux system hands out" in done.stderr
    assert done.stdout.splitlines() == [f"removed {work / 'logs'}"]
    assert not (work / "state" / "build.lock").exists()


# --- item 9: a full disk while writing the lock ----------------------------------------------


def _try_tmpfs(mount_point: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount_point)],
                          capture_output=True)
    return done.returncode == 0


def _fill(folder: Path) -> None:
    with open(folder / "filler", "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A work dir on a real full 64 KiB tmpfs (root) or, failing that, a work dir whose writes
    the kernel refuses through RLIMIT_FSIZE = 0 in the child (EFBIG): (work dir, strerror)."""
    mount_point = tmp_path / "mnt"
    mount_point.mkdir()
    if _try_tmpfs(mount_point):
        try:
            (mount_point / "w" / "state").mkdir(parents=True)
            _fill(mount_point)
            yield mount_point / "w", "No space left on device"
        finally:
            subprocess.run(["umount", str(mount_point)], check=True)
        return
    (mount_point / "w" / "state").mkdir(parents=True)
    yield mount_point / "w", "File too large"


_ONE_STEP_DRIVER = textwrap.dedent("""
    import resource, sys
    from rocmforge.errors import RocmforgeError
    from rocmforge.execute.model import Plan, Step
    from rocmforge.execute.runner import StepRunner
    from rocmforge.workdir import workdir_for
    work, marker, limit = sys.argv[1:4]
    if limit == "1":
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))
    steps = (Step(name="touch", argv=(sys.executable, "-c", f"open({marker!r}, 'w')"), why="t"),)
    try:
        StepRunner(None, Plan(settings={}, targets=(), steps=steps), workdir_for(work),
                   actions={}, resume_hint="run it again").execute()
    except RocmforgeError as exc:
        print(exc.paragraph(), flush=True)
        sys.exit(exc.exit_code)
    print("ok")
""")


def test_a_full_disk_while_writing_the_lock_is_one_message_and_leaves_no_lock(
        full_disk: tuple[Path, str], tmp_path: Path) -> None:
    work, strerror = full_disk
    limit = "1" if strerror == "File too large" else "0"
    marker = tmp_path / "step-ran"
    lock = work / "state" / "build.lock"
    for _attempt in range(2):  # the retry must say the same, not "someone else re-created it"
        done = subprocess.run([PY, "-c", _ONE_STEP_DRIVER, str(work), str(marker), limit],
                              env=CHILD_ENV, capture_output=True, text=True, timeout=60)
        # The one answer for a disk that refuses a write: exit 3 (issue 30 item 9; it was 1).
        assert done.returncode == 3, done.stdout + done.stderr
        assert "Traceback" not in done.stderr
        assert done.stdout == (
            f"The disk refused a write to {lock}: {strerror}. The file system is full, over a "
            "quota, or the file is above a size limit (ulimit -f); nothing half-written was "
            f"kept. Fix: free space there (`df -h {work / 'state'}`), then run the same command "
            "again.\n")
        assert not lock.exists()
        assert not marker.exists()
    (work.parent / "filler").unlink(missing_ok=True)
    done = subprocess.run([PY, "-c", _ONE_STEP_DRIVER, str(work), str(marker), "0"],
                          env=CHILD_ENV, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, "ok"), done.stderr
    assert marker.exists() and not lock.exists()


# --- item 7: temp files a SIGKILL left -------------------------------------------------------

_DOWNLOADER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from rocmforge.sources.triton_wheel import download_verified
    download_verified(sys.argv[1], "0" * 64, Path(sys.argv[2]), False)
""")


def test_a_download_killed_by_sigkill_leaves_a_part_file_that_the_next_run_removes(
        tmp_path: Path, httpserver) -> None:
    requested = threading.Event()
    release = threading.Event()

    def slow(request: Request) -> Response:
        def body() -> Iterator[bytes]:
            yield b"x" * 65536
            requested.set()
            release.wait(30)
            yield b"x" * 65536

        return Response(body(), headers={"Content-Length": str(2 * 65536)})

    httpserver.expect_request("/t/triton-3.5.0-cp311-cp311-linux_x86_64.whl") \
        .respond_with_handler(slow)
    work = workdir_for(tmp_path / "work")
    child = subprocess.Popen([PY, "-c", _DOWNLOADER,
                              httpserver.url_for("/t/triton-3.5.0-cp311-cp311-linux_x86_64.whl"),
                              str(work.downloads)], env=CHILD_ENV)
    try:
        assert requested.wait(30)
        deadline = time.monotonic() + 10
        while not list(work.downloads.glob(".*.part")) and time.monotonic() < deadline:
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        release.set()
    parts = list(work.downloads.glob(".*.part"))
    assert len(parts) == 1 and parts[0].name.startswith(".triton-3.5.0-cp311")
    # The kit's other temp files a SIGKILL leaves, by the names its writers give them, and
    # files of the same folders that are not the kit's temp files.
    stamp_tmp = work.state / "stamps" / ".first.json.k2j4h5.tmp"
    wheel_tmp = work.dist / ".torch-2.9.0-cp311-cp311-linux_x86_64.whl.4242.tmp"
    kept = [work.dist / "notes.tmp", work.dist / ".hidden", work.downloads / "keep.part",
            work.root / ".x.tmp"]
    for path in (stamp_tmp, wheel_tmp, *kept):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    (work.dist / ".dir.tmp").mkdir()
    from rocmforge.execute.model import Plan, Step
    from rocmforge.execute.runner import StepRunner

    lines: list[str] = []

    class Console:
        def write(self, text: str) -> int:
            lines.extend(text.splitlines())
            return len(text)

        def flush(self) -> None:
            return None

    steps = (Step(name="noop", argv=(PY, "-c", "pass"), why="n"),)
    StepRunner(None, Plan(settings={}, targets=(), steps=steps), work, actions={},
               console=Console()).execute()  # type: ignore[arg-type]
    removed = sorted([parts[0], stamp_tmp, wheel_tmp])
    assert lines[0] == (f"rocmforge: removed 3 temp file(s) that a killed run left: "
                        f"{', '.join(str(p) for p in removed)}")
    assert not any(p.exists() for p in removed)
    assert all(p.exists() for p in kept) and (work.dist / ".dir.tmp").is_dir()


def test_clean_removes_the_kit_temp_files_and_says_so(tmp_path: Path) -> None:
    work = workdir_for(tmp_path / "w")
    (work.state).mkdir(parents=True)
    (work.state / "work-dir").write_text("rocmforge\n")
    leftovers = [work.dist / ".manifest.json.abc123.tmp", work.downloads / ".t.whl.xyz.part"]
    for path in leftovers:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("half")
    (work.dist / "torch-2.9.0-cp311-cp311-linux_x86_64.whl").write_text("wheel")
    done = subprocess.run([PY, "-m", "invoke", "--dry", "clean", "--work-dir", str(work.root)],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"would remove {p}" for p in leftovers]
    assert all(p.exists() for p in leftovers) and not (work.state / "build.lock").exists()
    done = subprocess.run([PY, "-m", "invoke", "clean", "--work-dir", str(work.root)],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"removed {p}" for p in leftovers]
    assert not any(p.exists() for p in leftovers)
    assert (work.dist / "torch-2.9.0-cp311-cp311-linux_x86_64.whl").exists()


# --- the lock as a context manager for tasks -------------------------------------------------


def test_clean_is_refused_while_a_build_holds_the_lock(tmp_path: Path) -> None:
    work = workdir_for(tmp_path / "w")
    (work.logs).mkdir(parents=True)
    with _build_holding(work, tmp_path) as holder:
        for dry in ([], ["--dry"]):
            done = subprocess.run([PY, "-m", "invoke", *dry, "clean", "--work-dir",
                                   str(work.root)], cwd=REPO_ROOT, capture_output=True,
                                  text=True, timeout=120)
            assert done.returncode == 3  # another build: exit 3 (it works once that one is done)
            assert done.stderr.startswith(f"rocmforge: Another build (pid {holder.pid} on "
                                          f"{socket.gethostname()}, started ")
            assert work.logs.exists()


def test_work_lock_names_the_task_that_holds_it(tmp_path: Path) -> None:
    work = workdir_for(tmp_path / "w")
    with work_lock(work, task="checkout") as held:
        assert held.holder is not None and held.holder.task == "checkout"
        record = json.loads((work.state / "build.lock").read_text())
        assert (record["task"], record["pid"], record["boot_id"]) == (
            "checkout", os.getpid(), process.boot_id())
        with pytest.raises(BuildLocked) as info:
            BuildLock(work.state / "build.lock").acquire()
        assert info.value.what == f"This process already holds the lock {work.state / 'build.lock'}"
    assert not (work.state / "build.lock").exists()


def test_a_state_folder_that_cannot_be_made_is_bad_input_exit_2(tmp_path: Path) -> None:
    work = workdir_for(tmp_path / "w")
    work.root.mkdir()
    work.state.write_text("a file where the kit's state folder belongs")
    with pytest.raises(RocmforgeError) as info:
        BuildLock(work.state / "build.lock").acquire()
    assert info.value.exit_code == 2
    assert info.value.paragraph() == (
        f"Could not write the lock {work.state / 'build.lock'}: File exists. The work dir's "
        f"state folder cannot be written. Fix: make {work.state} writable or pass another "
        "--work-dir.")
    assert work.state.read_text().startswith("a file")


def test_checkout_patch_triton_checkout_and_install_wait_for_no_build(tmp_path: Path) -> None:
    """Issue 14 item 4: while a build holds the work dir, the tasks that change what it reads
    are refused (exit 2, one paragraph) and change nothing; before, `invoke checkout` moved the
    tree under a running build."""
    work = workdir_for(tmp_path / "w")
    with _build_holding(work, tmp_path) as holder:
        env = {**CHILD_ENV, "ROCMFORGE_WORK_DIR": str(work.root),
               "ROCMFORGE_PYTORCH_REPO": str(tmp_path / "no-such-repo")}
        for task in (["checkout"], ["patch"], ["triton.checkout"]):
            done = subprocess.run([PY, "-m", "invoke", *task], cwd=REPO_ROOT, env=env,
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 3, (task, done.stderr)
            assert done.stderr.startswith(f"rocmforge: Another build (pid {holder.pid} on "
                                          f"{socket.gethostname()}, started "), task
            assert "Traceback" not in done.stderr
        assert not work.src.exists()


@contextlib.contextmanager
def _build_holding(work: WorkDir, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A real process that holds the work dir's lock as a build does, until the block ends."""
    ready = tmp_path / "ready"
    holder = subprocess.Popen([PY, "-c", textwrap.dedent(f"""
        import time
        from pathlib import Path
        from rocmforge.execute.lock import work_lock
        from rocmforge.workdir import mark_work_dir, workdir_for
        work = workdir_for({str(work.root)!r})
        with work_lock(work, task="build"):
            mark_work_dir(work.state)
            Path({str(ready)!r}).write_text("")
            time.sleep(60)
    """)], env=CHILD_ENV)
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        yield holder
    finally:
        holder.kill()
        holder.wait()
