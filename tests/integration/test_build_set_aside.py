"""`invoke build` of another ref in a work dir whose tree the kit already patched and hipified.

hipify edits tracked files in place (reference/pytorch-rocm-build.md 1.3, 5.7; the fixture's
tools/amd_build/build_amd.py edits third_party/gloo/cmake/Hip.cmake), so after one build the
tree is dirty. The next build of another tag stashes those edits (nothing discarded) and moves
on; `invoke checkout`, a user command, still stops with DirtyTree on the same tree.
Real git, real clang-22 (the fixture build of tests/integration/test_build_e2e.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.needs_tool("clang-22", "clang-offload-bundler-22",
                                                       "git")]

KIT_MESSAGE = "rocmforge: kit edits (patches, hipify) of {old} before moving to v2.8.1"


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@example.com",
                           "-c", "user.name=t", *args],
                          check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _build_at(work: Path, repo: Path, ref: str) -> subprocess.CompletedProcess[str]:
    from buildhelpers import assert_manifest_describes_wheel
    from test_build_e2e import REPO_ROOT, build_argv, build_env

    argv = build_argv(work, repo, "gfx1100")
    argv[argv.index("--ref") + 1] = ref
    done = subprocess.run(argv, cwd=REPO_ROOT, env=build_env(), capture_output=True, text=True,
                          timeout=300)
    if done.returncode == 0 and (work / "dist" / "manifest.json").is_file():
        assert_manifest_describes_wheel(work)
    return done


def _user_checkout(work: Path, repo: Path, ref: str) -> subprocess.CompletedProcess[str]:
    from test_build_e2e import REPO_ROOT

    env = {**os.environ, "HIP_PLATFORM": "amd", "NO_COLOR": "1",
           "ROCMFORGE_WORK_DIR": str(work)}
    return subprocess.run([sys.executable, "-m", "invoke", "checkout", "--repo", str(repo),
                           "--ref", ref], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def _status(tree: Path) -> tuple[str, str]:
    return (_git(tree, "rev-parse", "HEAD"),
            _git(tree, "status", "--porcelain", "--ignore-submodules=none"))


def test_build_of_another_tag_sets_the_kit_edits_aside(tmp_path: Path) -> None:
    from test_build_e2e import make_fixture_repo, stamps

    repo = make_fixture_repo(tmp_path / "pytorch")
    work = tmp_path / "work"
    tree = work / "src" / "pytorch"
    first = _build_at(work, repo, "v2.8.0")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    old = _git(tree, "rev-parse", "HEAD")
    # hipify edited a tracked file in place and wrote an untracked one: the tree is dirty.
    assert _git(tree, "status", "--porcelain") == (
        "M third_party/gloo/cmake/Hip.cmake\n?? csrc/kernel.hip")
    assert "third_party/gloo/cmake/Hip.cmake [ok, edited in place]" in (
        work / "logs" / "hipify.log").read_text()

    # A second tag upstream: a new version and one more kernel.
    (repo / "version.txt").write_text("2.8.1a0\n")
    kernel = repo / "csrc" / "kernel.cu"
    kernel.write_text(kernel.read_text() + "\nextern \"C\" int rf_added_in_281(void) "
                      "{ return 3; }\n")
    _git(repo, "commit", "-q", "-am", "2.8.1")
    _git(repo, "tag", "v2.8.1")
    new = _git(repo, "rev-parse", "HEAD")

    # The user's `invoke checkout` still refuses to move the dirty tree, and changes nothing.
    before = _status(tree)
    refused = _user_checkout(work, repo, "v2.8.1")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert f"rocmforge: {tree} has local changes (1 path: third_party/gloo/cmake/Hip.cmake); " \
           "not checking out v2.8.1" in refused.stderr
    assert f"git -C {tree} stash push" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert _status(tree) == before
    assert _git(tree, "stash", "list") == ""

    # The build moves on: the kit's edits go to a stash, and the new tag is built.
    second = _build_at(work, repo, "v2.8.1")
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    message = KIT_MESSAGE.format(old=old)
    assert _git(tree, "stash", "list") == f"stash@{{0}}: On (no branch): {message}"
    assert (f"set aside the kit's edits of {old[:12]} ({work / 'state' / 'kit-edits.json'} "
            f"names {old[:12]}) as git stashes, nothing discarded: 2 paths in the tree; see them "
            f"with `git -C {tree} stash list`") in second.stdout
    assert f"`git -C {tree} stash pop`" in second.stdout
    assert f"PyTorch v2.8.1 is at {new}" in (work / "logs" / "checkout.log").read_text()
    # The stash holds hipify's in-place edit and its untracked output of the old commit.
    shown = _git(tree, "stash", "show", "-p", "stash@{0}")
    assert '+set(GLOO_HIP_PLATFORM "__HIP_PLATFORM_AMD__")' in shown
    assert "rf_added_in_281" not in _git(tree, "show", "stash@{0}^3:csrc/kernel.hip")
    # The new tree was hipified afresh (the new kernel is in kernel.hip) and built.
    assert _git(tree, "rev-parse", "HEAD") == new
    assert "rf_added_in_281" in (tree / "csrc" / "kernel.hip").read_text()
    wheels = sorted(p.name for p in (work / "dist").glob("torch-*.whl"))
    assert len(wheels) == 1 and wheels[0].startswith("torch-2.8.1a0-"), wheels
    with zipfile.ZipFile(work / "dist" / wheels[0]) as archive:
        assert archive.read("torch/version.txt").decode().strip() == "2.8.1a0"
    assert stamps(work) >= {"checkout", "patches", "hipify", "build", "install"}

    # And the user's checkout back to v2.8.0 stops again on the newly hipified tree.
    before = _status(tree)
    again = _user_checkout(work, repo, "v2.8.0")
    assert again.returncode == 2, again.stdout + again.stderr
    assert f"rocmforge: {tree} has local changes" in again.stderr
    assert "not checking out v2.8.0" in again.stderr
    assert _status(tree) == before
    assert len(_git(tree, "stash", "list").splitlines()) == 1


def test_build_does_not_set_aside_edits_of_a_tree_the_kit_never_edited(tmp_path: Path) -> None:
    """A checkout made by `invoke checkout` and edited by the user: the build stops."""
    from test_build_e2e import make_fixture_repo

    repo = make_fixture_repo(tmp_path / "pytorch")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "next")
    _git(repo, "tag", "v2.8.1")
    work = tmp_path / "work"
    tree = work / "src" / "pytorch"
    done = _user_checkout(work, repo, "v2.8.0")
    assert done.returncode == 0, done.stdout + done.stderr
    (tree / "version.txt").write_text("2.8.0a0+mine\n")
    before = _status(tree)
    build = _build_at(work, repo, "v2.8.1")
    assert build.returncode == 2, build.stdout[-3000:] + build.stderr[-3000:]
    assert f"{tree} has local changes (1 path: version.txt); not checking out v2.8.1" in (
        build.stderr)
    assert _status(tree) == before
    assert _git(tree, "stash", "list") == ""


def test_a_users_edit_on_top_of_the_kits_stops_the_build(tmp_path: Path) -> None:
    """Issue 41 item 3: the user's edit of a built tree was stashed with the kit's and the wheel
    built without it. Now it stops (exit 2), names the file and the two ways out, stashes
    nothing and builds nothing, for a rebuild of the same tag and for a move to another."""
    from test_build_e2e import make_fixture_repo

    repo = make_fixture_repo(tmp_path / "pytorch")
    work = tmp_path / "work"
    tree = work / "src" / "pytorch"
    first = _build_at(work, repo, "v2.8.0")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    _git(repo, "commit", "-q", "--allow-empty", "-m", "next")
    _git(repo, "tag", "v2.8.1")
    wheel = sorted((work / "dist").glob("torch-*.whl"))
    wheel_bytes = wheel[0].read_bytes()
    # The user edits a file hipify left alone and one hipify wrote.
    (tree / "version.txt").write_text("2.8.0a0+mine\n")
    hip = tree / "csrc" / "kernel.hip"
    hip.write_text(hip.read_text() + "// mine\n")
    before = _status(tree)
    for ref in ("v2.8.0", "v2.8.1"):
        done = _build_at(work, repo, ref)
        assert done.returncode == 2, done.stdout[-3000:] + done.stderr[-3000:]
        doing = f"checking out {ref}"  # the checkout re-checks the tree first, stops there
        assert (f"rocmforge: {tree} has local changes the kit did not make (2 paths: "
                f"version.txt, csrc/kernel.hip); not {doing}") in done.stderr
        assert f"to keep them run `git -C {tree} stash push -u`" in done.stderr
        assert (f"to discard them run `git -C {tree} reset --hard && git -C {tree} clean -fd`"
                in done.stderr)
        assert "Traceback" not in done.stderr
        assert _status(tree) == before
        assert _git(tree, "stash", "list") == ""
        assert [p.read_bytes() for p in (work / "dist").glob("torch-*.whl")] == [wheel_bytes]
    assert "// mine" in hip.read_text()
    assert (tree / "version.txt").read_text() == "2.8.0a0+mine\n"
    # The first way out, as the message says: keep them in a stash; the build then goes on.
    _git(tree, "stash", "push", "-u")
    kept = _build_at(work, repo, "v2.8.1")
    assert kept.returncode == 0, kept.stdout[-3000:] + kept.stderr[-3000:]
    assert "+2.8.0a0+mine" in _git(tree, "stash", "show", "-p", "stash@{0}")
    # The second way out: discard them, with the commands the message names; the build goes on
    # and hipifies afresh.
    (tree / "mine.txt").write_text("an untracked file of mine\n")
    stopped = _build_at(work, repo, "v2.8.1")
    assert stopped.returncode == 2 and "(1 path: mine.txt)" in stopped.stderr, stopped.stderr
    _git(tree, "reset", "--hard")
    _git(tree, "clean", "-fd")
    discarded = _build_at(work, repo, "v2.8.1")
    assert discarded.returncode == 0, discarded.stdout[-3000:] + discarded.stderr[-3000:]
    assert not (tree / "mine.txt").exists()
    assert (tree / "csrc" / "kernel.hip").is_file()


def test_a_touch_or_restored_content_is_not_a_users_edit(tmp_path: Path) -> None:
    """Defect 6: the kit-edits record kept size and mtime, so `touch` of a file hipify edited
    (no content change), or an edit undone to the exact bytes, stopped the build as the user's
    edit. The record keeps each file's content (git's blob id) now: only a real edit stops."""
    from test_build_e2e import make_fixture_repo

    repo = make_fixture_repo(tmp_path / "pytorch")
    work = tmp_path / "work"
    tree = work / "src" / "pytorch"
    first = _build_at(work, repo, "v2.8.0")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    cmake = tree / "third_party" / "gloo" / "cmake" / "Hip.cmake"
    kit_text = cmake.read_text()
    recorded = (work / "state" / "kit-edits.json").read_text()
    blob = _git(tree, "hash-object", "third_party/gloo/cmake/Hip.cmake")
    assert f'"blob:{blob}"' in recorded  # the record holds what `git hash-object` says
    stat = cmake.stat()
    os.utime(cmake, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))  # `touch`
    touched = _build_at(work, repo, "v2.8.0")
    assert touched.returncode == 0, touched.stdout[-3000:] + touched.stderr[-3000:]
    assert "did not make" not in touched.stderr
    cmake.write_text(kit_text + "# mine\n")  # an edit, then undone to the exact bytes
    cmake.write_text(kit_text)
    restored = _build_at(work, repo, "v2.8.0")
    assert restored.returncode == 0, restored.stdout[-3000:] + restored.stderr[-3000:]
    assert "did not make" not in restored.stderr
    cmake.write_text(kit_text + "# mine\n")  # a real edit stops the build
    before = _status(tree)
    edited = _build_at(work, repo, "v2.8.0")
    assert edited.returncode == 2, edited.stdout[-3000:] + edited.stderr[-3000:]
    assert (f"rocmforge: {tree} has local changes the kit did not make (1 path: "
            "third_party/gloo/cmake/Hip.cmake)") in edited.stderr
    assert "Traceback" not in edited.stderr
    assert _status(tree) == before
    assert cmake.read_text() == kit_text + "# mine\n"
