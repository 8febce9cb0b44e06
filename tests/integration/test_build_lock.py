"""`invoke build --lock FILE` builds exactly the locked tree (issue 18 item 13).

A real fixture "pytorch" repository (tests/fixtures/fakepytorch, as in test_build_e2e.py): its tag
v2.8.0 is locked by `invoke checkout`, then the tag is moved to a new commit. The plan of a
locked build names the lock's commits, a fixture build checks out the locked commit (not the
moved tag), and the manifest says so; a lock file that is missing, malformed or names a patch
the kit does not have is exit 2 with one paragraph, and nothing is written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from buildhelpers import assert_manifest_describes_wheel
from test_build_e2e import LLVM22, make_fixture_repo

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.needs_tool("git")


def invoke(*args: str, work: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "HIP_PLATFORM": "amd", "ROCMFORGE_WORK_DIR": str(work),
           "ROCMFORGE_BUILD_ENV": f"HIP_CLANG_PATH={LLVM22}"}
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def git_out(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


BUILD = ("--arch", "gfx1100", "--clang", "22", "--triton", "skip", "--skip-preflight",
         "--system-site-packages")


@pytest.fixture(scope="module")
def locked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str, str]:
    """(fixture repo, lock file, locked commit, the commit the moved tag names now)."""
    root = tmp_path_factory.mktemp("lock")
    repo = make_fixture_repo(root / "pytorch")
    locked_commit = git_out(repo, "rev-parse", "HEAD")
    done = invoke("checkout", "--repo", str(repo), "--ref", "v2.8.0", work=root / "first")
    assert done.returncode == 0, done.stderr
    lock = root / "first" / "rocmforge.lock"
    # The tag moves on: a build of --ref v2.8.0 would now get another tree.
    (repo / "moved.txt").write_text("after the lock\n")
    subprocess.run(["git", "-C", str(repo), "add", "moved.txt"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@example.com", "-c", "user.name=t",
                    "commit", "-q", "-m", "moved"], check=True)
    subprocess.run(["git", "-C", str(repo), "tag", "-f", "v2.8.0"], check=True,
                   capture_output=True)
    moved = git_out(repo, "rev-parse", "HEAD")
    assert moved != locked_commit
    return repo, lock, locked_commit, moved


def test_lock_is_the_table_flag_k() -> None:
    from rocmforge.settings import BUILD_FLAGS, FLAG_BY_NAME

    flag = FLAG_BY_NAME["lock"]
    assert (flag.long, flag.short, flag.setting) == ("--lock", "k", "lock_file")
    assert "lock" in BUILD_FLAGS


def test_plan_of_a_locked_build_shows_the_locks_commits(locked, tmp_path: Path) -> None:
    repo, lock, commit, _ = locked
    work = tmp_path / "w"
    done = invoke("plan", *BUILD, "--lock", str(lock), "--ref", "v2.9.1", "--json", work=work)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["lock"]["file"] == str(lock)
    assert doc["lock"]["pytorch"] == {"repo": str(repo), "ref": "v2.8.0", "commit": commit}
    assert doc["lock"]["triton"]["commit"] == "0123456789abcdef0123456789abcdef01234567"
    assert doc["settings"]["pytorch_repo"] == str(repo)
    assert doc["settings"]["pytorch_ref"] == "v2.8.0"  # --ref v2.9.1 lost to the lock
    assert doc["settings"]["origins"]["pytorch_ref"] == f"lock file {lock}"
    assert doc["settings"]["origins"]["pytorch_repo"] == f"lock file {lock}"
    text = invoke("plan", *BUILD, "--lock", str(lock), "--ref", "v2.9.1", work=work)
    assert text.returncode == 0, text.stderr
    assert (f"note: building the tree locked in {lock}: PyTorch {commit} (v2.8.0 of {repo}), "
            "0 submodule commits, Triton 0123456789abcdef0123456789abcdef01234567, 0 patches "
            "with their sha256") in text.stderr
    assert "note: pytorch_ref 'v2.9.1' is not used: the lock's commit wins" in text.stderr
    dry = invoke("--dry", "build", *BUILD, "-k", str(lock), work=work)
    assert dry.returncode == 0, dry.stderr
    assert "checkout" in dry.stdout
    assert not work.exists()  # plan and --dry write nothing


def test_checkout_with_the_lock_flag_or_setting_reproduces_the_commit(locked,
                                                                      tmp_path: Path) -> None:
    """`invoke checkout --lock FILE` (and ROCMFORGE_LOCK_FILE, the same setting) check out the
    locked commit, not the commit the moved tag names now."""
    _, lock, commit, moved = locked
    by_flag = invoke("checkout", "-k", str(lock), work=tmp_path / "a")
    assert by_flag.returncode == 0, by_flag.stderr
    assert by_flag.stdout.splitlines()[0] == (
        f"PyTorch checked out {commit} = {commit} in {tmp_path / 'a' / 'src' / 'pytorch'}")
    assert "0 submodules; lock written to" in by_flag.stdout
    env_work = tmp_path / "b"
    by_env = subprocess.run([sys.executable, "-m", "invoke", "checkout"], cwd=REPO_ROOT,
                            env={**os.environ, "ROCMFORGE_WORK_DIR": str(env_work),
                                 "ROCMFORGE_LOCK_FILE": str(lock)},
                            capture_output=True, text=True, timeout=120)
    assert by_env.returncode == 0, by_env.stderr
    for work in (tmp_path / "a", env_work):
        assert git_out(work / "src" / "pytorch", "rev-parse", "HEAD") == commit != moved


@pytest.mark.slow
@pytest.mark.needs_tool("clang-22", "clang-offload-bundler-22")
def test_a_locked_build_builds_the_locked_commit_not_the_moved_tag(locked,
                                                                  tmp_path: Path) -> None:
    repo, lock, commit, moved = locked
    work = tmp_path / "w"
    done = invoke("build", *BUILD, "--lock", str(lock), work=work)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert git_out(work / "src" / "pytorch", "rev-parse", "HEAD") == commit != moved
    assert not (work / "src" / "pytorch" / "moved.txt").exists()
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    assert manifest["source"]["commit"] == commit
    assert manifest["lock"]["pytorch"] == {"repo": str(repo), "ref": "v2.8.0", "commit": commit}
    # The lock the build wrote is the lock it was given.
    assert (work / "rocmforge.lock").read_text() == lock.read_text()
    assert_manifest_describes_wheel(work)
    again = invoke("build", *BUILD, "--lock", str(lock), work=work)
    assert again.returncode == 0, again.stderr
    assert "every step is up to date; nothing to do" in again.stdout


@pytest.mark.parametrize(("text", "problem"), [
    (None, "Cannot read lock file {lock}: No such file or directory. `--lock` names the file to "
           "reproduce. Fix: check the path."),
    ("schema = [", "Lock file {lock} is not usable: not valid TOML"),
    ('schema = 1\n[pytorch]\nrepo = "x"\ncommit = "abc"\n',
     "Lock file {lock} is not usable: pytorch.commit = 'abc' is not a full hash. A lock file "
     "names exact commits; the kit does not guess missing ones. Fix: write it again with "
     "`invoke checkout` (or fix the named entry)."),
    ('schema = 1\n[pytorch]\nrepo = "x"\ncommit = "' + "a" * 40 + '"\n[[patches]]\n'
     'project = "pytorch"\nfile = "pytorch/9999-gone.patch"\nsha256 = "' + "b" * 64 + '"\n',
     "Lock file {lock} names the patch pytorch/9999-gone.patch, which is not in "),
])
def test_a_bad_lock_is_exit_2_and_writes_nothing(tmp_path: Path, text: str | None,
                                                 problem: str) -> None:
    lock = tmp_path / "rocmforge.lock"
    if text is not None:
        lock.write_text(text)
    work = tmp_path / "w"
    for task in ("plan", "build"):
        done = invoke(task, *BUILD, "--lock", str(lock), work=work)
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stderr.startswith("rocmforge: " + problem.format(lock=lock)), done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert not work.exists()
