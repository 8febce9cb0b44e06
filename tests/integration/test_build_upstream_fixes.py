"""`invoke build` with config/upstream_fixes.toml naming commits of the fixture "pytorch" that
sit on a side branch the build's checkout never fetches: the patches step fetches each by SHA
(the fixture repo serves any SHA, uploadpack.allowAnySHA1InWant, as GitHub does), applies it,
and the lock and manifest.json record it; a new entry reruns the patches step and every step
after it. Real git, real clang-22 (the fixture build of tests/integration/test_build_e2e.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

pytestmark = [pytest.mark.slow, pytest.mark.needs_tool("clang-22", "clang-offload-bundler-22",
                                                       "git")]


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@example.com",
                           "-c", "user.name=t", *args],
                          check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _side_commit(repo: Path, name: str, text: str) -> str:
    """A commit on a branch of its own off v2.8.0, not reachable from the tag."""
    back = _git(repo, "rev-parse", "--abbrev-ref", "HEAD")
    _git(repo, "checkout", "-q", "-b", f"fix-{name}", "v2.8.0")
    (repo / name).write_text(text)
    _git(repo, "add", name)
    _git(repo, "commit", "-q", "-m", f"upstream fix {name}")
    sha = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", back)
    return sha


def _config(root: Path, entries: dict[str, str]) -> Path:
    """The kit's config/ with an upstream_fixes.toml of `entries` (id -> sha)."""
    from test_build_e2e import REPO_ROOT

    folder = root / "config"
    if not folder.is_dir():
        shutil.copytree(REPO_ROOT / "config", folder)
    (folder / "upstream_fixes.toml").write_text("".join(
        f'[[fix]]\nid = "{fid}"\nsha = "{sha}"\nsha_source = "test fixture"\nverified = true\n'
        f'pytorch = ">=2.8,<2.9"\nrocm = ""\ntargets = ["gfx1100"]\ncompiler = ""\n'
        f'platform = ""\ntitle = "{fid}"\nwhy = "{fid} breaks"\nthread = "o/r#1"\n\n'
        for fid, sha in entries.items()))
    return folder


def _plan_fixes(work: Path, repo: Path, config: Path) -> list[dict[str, object]]:
    from test_build_e2e import REPO_ROOT, build_env

    argv = [sys.executable, "-m", "invoke", "plan", "--json", "--arch", "gfx1100", "--work-dir",
            str(work), "--repo", str(repo), "--ref", "v2.8.0", "--clang", "22", "--triton",
            "skip", "--skip-preflight", "--system-site-packages"]
    done = subprocess.run(argv, cwd=REPO_ROOT, env=build_env(ROCMFORGE_CONFIG_DIR=str(config)),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    fixes = doc["settings"]["upstream_fixes"]
    assert isinstance(fixes, list)
    return fixes


def test_build_fetches_applies_and_records_upstream_fixes(tmp_path: Path) -> None:
    from test_build_e2e import make_fixture_repo, run_build

    repo = make_fixture_repo(tmp_path / "pytorch")
    _git(repo, "config", "uploadpack.allowAnySHA1InWant", "true")
    first_sha = _side_commit(repo, "FIX_ONE.txt", "one\n")
    second_sha = _side_commit(repo, "FIX_TWO.txt", "two\n")
    work = tmp_path / "work"
    config = _config(tmp_path, {"one": first_sha})

    before = _plan_fixes(work, repo, config)
    assert [(f["id"], f["verdict"], f["reason"]) for f in before] == [
        ("one", "after checkout", "decided after the checkout: PyTorch <2.9,>=2.8 and targets "
                                  "gfx1100")]

    first = run_build(work, repo, environ={"ROCMFORGE_CONFIG_DIR": str(config)})
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    tree = work / "src" / "pytorch"
    assert f"upstream fix one (pytorch/pytorch@{first_sha[:12]}): applied" in first.stdout
    assert (tree / "FIX_ONE.txt").read_text() == "one\n"
    assert _git(tree, "rev-parse", "HEAD") == _git(repo, "rev-parse", "v2.8.0^{commit}")
    lock = (work / "rocmforge.lock").read_text()
    assert f'[[upstream_fixes]]\nid = "one"\nsha = "{first_sha}"\nstate = "applied"\n' in lock
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    assert [(f["id"], f["sha"], f["state"]) for f in manifest["upstream_fixes"]] == [
        ("one", first_sha, "applied")]
    assert manifest["lock"]["upstream_fixes"] == manifest["upstream_fixes"]

    after = _plan_fixes(work, repo, config)
    assert [(f["id"], f["verdict"], f["reason"]) for f in after] == [
        ("one", "applies", "PyTorch 2.8.0a0 is <2.9,>=2.8, targets gfx1100")]

    # A new entry for this build: the patches step's digest changes, so it runs again (on the
    # pristine tree) and so does everything after it.
    _config(tmp_path, {"one": first_sha, "two": second_sha})
    second = run_build(work, repo, environ={"ROCMFORGE_CONFIG_DIR": str(config)})
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    assert (tree / "FIX_ONE.txt").read_text() == "one\n"
    assert (tree / "FIX_TWO.txt").read_text() == "two\n"
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    assert [(f["id"], f["state"]) for f in manifest["upstream_fixes"]] == [
        ("one", "applied"), ("two", "applied")]
    assert "==> [5/16] patches: " in second.stdout + second.stderr
    third = run_build(work, repo, environ={"ROCMFORGE_CONFIG_DIR": str(config)})
    assert third.returncode == 0, third.stdout[-3000:] + third.stderr[-3000:]
    assert "==> patches: done (stamp matches), skipped" in third.stdout + third.stderr
    # The checkout's re-check rewrote the lock; the fixes still in the tree stay in it, so the
    # lock and manifest.json still agree.
    relocked = tomllib.loads((work / "rocmforge.lock").read_text())
    assert relocked["upstream_fixes"] == manifest["upstream_fixes"]

    # The lock of that build, built again after the table lost an entry: refused before the
    # tree is touched (exit 2), since the lock reproduces the tree with both fixes.
    from test_build_e2e import REPO_ROOT, build_argv, build_env

    mine = tmp_path / "my.lock"
    shutil.copy(work / "rocmforge.lock", mine)
    state = (_git(tree, "rev-parse", "HEAD"), _git(tree, "status", "--porcelain"))
    _config(tmp_path, {"one": first_sha})
    argv = [a for a in build_argv(work, repo, "gfx1100") if a not in ("--ref", "v2.8.0")]
    done = subprocess.run([*argv, "--lock", str(mine)], cwd=REPO_ROOT,
                          env=build_env(ROCMFORGE_CONFIG_DIR=str(config)), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 2, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"The upstream fixes this build needs differ from {mine}: two " \
        f"{second_sha[:12]}." in " ".join((done.stdout + done.stderr).split())
    assert (_git(tree, "rev-parse", "HEAD"), _git(tree, "status", "--porcelain")) == state
