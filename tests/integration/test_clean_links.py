"""`invoke clean` never deletes through a symbolic link (issue 30 item 1), through the real CLI:
src/pytorch linked to the user's own clone, downloads/ linked to a shared folder with another
process's download in it, and the whole work dir being a link."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from rocmforge.workdir import link_on_the_way, mark_work_dir

REPO_ROOT = Path(__file__).resolve().parents[2]


def invoke(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120)


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def _work(root: Path) -> Path:
    (root / "state" / "stamps").mkdir(parents=True)
    (root / "state" / "stamps" / "build.json").write_text("{}")
    (root / "src").mkdir()
    mark_work_dir(root / "state")
    return root


def _users_clone(root: Path) -> Path:
    for sub in ("build", "dist"):
        (root / sub).mkdir(parents=True)
    (root / "dist" / "torch-2.9.1-cp311-linux_x86_64.whl").write_bytes(b"the user's wheel")
    (root / "build" / "CMakeCache.txt").write_text("PYTORCH_ROCM_ARCH:STRING=gfx942\n")
    (root / "version.txt").write_text("2.9.1\n")
    return root


def test_a_linked_checkout_keeps_its_build_and_wheel(tmp_path: Path) -> None:
    clone = _users_clone(tmp_path / "my-pytorch")
    work = _work(tmp_path / "w")
    (work / "src" / "pytorch").symlink_to(clone)
    before = _files(clone)
    done = invoke("clean", "--work-dir", str(work))
    assert done.returncode == 0, done.stderr
    assert _files(clone) == before
    assert (clone / "dist" / "torch-2.9.1-cp311-linux_x86_64.whl").read_bytes() == (
        b"the user's wheel")
    link = work / "src" / "pytorch"
    assert done.stdout.splitlines() == [
        f"kept {link / 'build'}: it is reached through the link {link} -> {clone}, which is "
        "not the kit's",
        f"kept {link / 'dist'}: it is reached through the link {link} -> {clone}, which is "
        "not the kit's",
        f"removed {work / 'state' / 'stamps'}",
    ]
    # --all removes the link itself (rmtree of src/ unlinks it), never the clone.
    done = invoke("clean", "--all", "--work-dir", str(work))
    assert done.returncode == 0, done.stderr
    assert _files(clone) == before and not work.exists()


def test_a_shared_downloads_folder_keeps_another_process_download(tmp_path: Path) -> None:
    shared = tmp_path / "shared-downloads"
    shared.mkdir()
    (shared / ".triton-3.4.0-cp311.whl.4242.part").write_bytes(b"x" * 100)
    work = _work(tmp_path / "w")
    (work / "downloads").symlink_to(shared)
    done = invoke("clean", "--work-dir", str(work))
    assert done.returncode == 0, done.stderr
    assert (shared / ".triton-3.4.0-cp311.whl.4242.part").stat().st_size == 100
    done = invoke("clean", "--all", "--work-dir", str(work))
    assert done.returncode == 0, done.stderr
    assert f"removed the link {work / 'downloads'} (not what it points to, {shared})" in (
        done.stdout)
    assert (shared / ".triton-3.4.0-cp311.whl.4242.part").stat().st_size == 100


def test_a_work_dir_that_is_a_link_is_cleaned_inside_and_the_link_kept(tmp_path: Path) -> None:
    real = _work(tmp_path / "big-disk" / "rocmforge")
    (real / "dist").mkdir()
    (real / "dist" / "manifest.json").write_text("{}")
    (real / "notes.txt").write_text("mine")
    link = tmp_path / ".rocmforge"
    link.symlink_to(real)
    done = invoke("clean", "--all", "--work-dir", str(link))
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert _files(real) == ["notes.txt"]
    assert done.stdout.splitlines()[-1] == (
        f"kept {link}: a link to {real}, whose kit folders were removed; the link and its "
        "folder are yours")


def test_link_on_the_way(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").symlink_to(tmp_path / "a")
    assert link_on_the_way(tmp_path, tmp_path / "a" / "x") is None
    assert link_on_the_way(tmp_path, tmp_path / "b" / "x" / "y") == tmp_path / "b"
    assert link_on_the_way(tmp_path, tmp_path / "b") == tmp_path / "b"
    assert link_on_the_way(tmp_path / "a", tmp_path / "elsewhere") == tmp_path / "elsewhere"


def test_clean_removes_what_a_killed_aotriton_unpack_left(tmp_path: Path) -> None:
    work = _work(tmp_path / "w")
    finished = work / "aotriton" / "0.10b-rocm6.2-x86_64"
    (finished / "lib").mkdir(parents=True)
    killed = [work / "aotriton" / ".0.10b-rocm6.2-x86_64.a1b2c3d4",
              work / "aotriton" / ".unpack.e5f6g7h8"]
    for folder in killed:
        (folder / "aotriton" / "lib").mkdir(parents=True)
        (folder / "aotriton" / "lib" / "libaotriton_v2.so").write_bytes(b"half")
    done = invoke("clean", "--work-dir", str(work))
    assert done.returncode == 0, done.stderr
    assert [p for p in killed if p.exists()] == []
    assert (finished / "lib").is_dir()
    for folder in killed:
        assert f"removed {folder}" in done.stdout.splitlines()
