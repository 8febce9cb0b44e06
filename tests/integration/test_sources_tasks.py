"""The sources tasks through the real `invoke` program: exit codes, one-paragraph errors, no
traceback, and the tree unchanged after a bad input."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from gitfixtures import SUB_URL, FakeRemotes, build_remotes, git, tree_state, url
from pytest_httpserver import HTTPServer

pytestmark = pytest.mark.slow
KIT = Path(__file__).resolve().parents[2]
SHA = "bfeb066872bc1e8b2d2bc0a3b295b99dd77206e7"


@pytest.fixture(scope="module")
def remotes(tmp_path_factory: pytest.TempPathFactory) -> FakeRemotes:
    return build_remotes(tmp_path_factory.mktemp("remotes"))


def invoke(
    args: list[str], work: Path, remotes: FakeRemotes, **env: str
) -> subprocess.CompletedProcess[str]:
    full = {
        **os.environ,
        "ROCMFORGE_WORK_DIR": str(work),
        "ROCMFORGE_PYTORCH_REPO": remotes.pytorch_url,
        "ROCMFORGE_MIRRORS": f"{SUB_URL}={url(remotes.sub)}",
        "ROCMFORGE_TRITON_REPO": url(remotes.triton),
        "NO_COLOR": "1",
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", "invoke", *args],
        cwd=KIT,
        env=full,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_checkout_pin_and_triton_checkout(remotes: FakeRemotes, tmp_path: Path) -> None:
    done = invoke(["checkout", "--ref", "v2.9.1"], tmp_path, remotes)
    assert done.returncode == 0, done.stderr
    assert f"PyTorch checked out v2.9.1 = {remotes.tags['v2.9.1']}" in done.stdout
    assert (tmp_path / "rocmforge.lock").is_file()
    again = invoke(["checkout", "--ref", "v2.9.1"], tmp_path, remotes)
    assert "PyTorch already at v2.9.1" in again.stdout
    pin = invoke(["triton.pin"], tmp_path, remotes)
    assert pin.returncode == 0, pin.stderr
    assert f"commit     {remotes.triton_commits[1]}" in pin.stdout
    assert "version    3.5.1" in pin.stdout
    tri = invoke(["triton.checkout"], tmp_path, remotes)
    assert tri.returncode == 0, tri.stderr
    assert git("rev-parse", "HEAD", cwd=tmp_path / "src/triton") == remotes.triton_commits[1]
    patch = invoke(["patch", "--check"], tmp_path, remotes)
    assert patch.returncode == 0, patch.stderr
    # The checkout marked the work dir as the kit's, so `invoke clean --all` may remove it.
    assert (tmp_path / "state" / "work-dir").is_file()
    cleaned = invoke(["clean", "--all"], tmp_path, remotes)
    assert cleaned.returncode == 0, cleaned.stderr
    assert not (tmp_path / "src").exists()


def test_bad_ref_exit_2_no_traceback_tree_unchanged(remotes: FakeRemotes, tmp_path: Path) -> None:
    assert invoke(["checkout", "--ref", "v2.8.0"], tmp_path, remotes).returncode == 0
    before = tree_state(tmp_path / "src/pytorch")
    bad = invoke(["checkout", "--ref", "v9.9.9"], tmp_path, remotes)
    assert bad.returncode == 2
    assert "rocmforge: 'v9.9.9' is not a tag, branch or full commit" in bad.stderr
    assert "Traceback" not in bad.stderr
    assert tree_state(tmp_path / "src/pytorch") == before


def test_dirty_tree_exit_2(remotes: FakeRemotes, tmp_path: Path) -> None:
    assert invoke(["checkout", "--ref", "v2.8.0"], tmp_path, remotes).returncode == 0
    (tmp_path / "src/pytorch/version.txt").write_text("mine\n")
    before = tree_state(tmp_path / "src/pytorch")
    bad = invoke(["checkout", "--ref", "v2.9.1"], tmp_path, remotes)
    assert bad.returncode == 2 and "has local changes" in bad.stderr and "stash push" in bad.stderr
    assert tree_state(tmp_path / "src/pytorch") == before


def test_unreachable_mirror_exit_3(remotes: FakeRemotes, tmp_path: Path) -> None:
    bad = invoke(
        ["checkout", "--ref", "v2.9.1"],
        tmp_path,
        remotes,
        ROCMFORGE_MIRRORS=f"{SUB_URL}={(tmp_path / 'gone.git').as_uri()}",
    )
    # A mirror git cannot reach: the environment failed (exit 3, issue 18 item 5c).
    assert bad.returncode == 3 and "Cannot fetch the submodules" in bad.stderr
    assert not (tmp_path / "src/pytorch").exists()


def test_pin_over_http_branch_name_exit_2(
    remotes: FakeRemotes, tmp_path: Path, httpserver: HTTPServer
) -> None:
    base = "/pytorch/v2.9.1/.ci/docker"
    httpserver.expect_request(f"{base}/ci_commit_pins/triton.txt").respond_with_data("main\n")
    bad = invoke(
        ["triton.pin", "--ref", "v2.9.1"],
        tmp_path,
        remotes,
        ROCMFORGE_PIN_URL=httpserver.url_for("/pytorch/{ref}/{path}"),
    )
    assert bad.returncode == 2 and "looks like a branch or tag name" in bad.stderr


def test_pin_over_http_json(remotes: FakeRemotes, tmp_path: Path, httpserver: HTTPServer) -> None:
    base = "/pytorch/v2.9.1/.ci/docker"
    httpserver.expect_request(f"{base}/ci_commit_pins/triton.txt").respond_with_data(SHA)
    httpserver.expect_request(f"{base}/triton_version.txt").respond_with_data("3.5.1\n")
    done = invoke(
        ["triton.pin", "--ref", "v2.9.1", "--json"],
        tmp_path,
        remotes,
        ROCMFORGE_PIN_URL=httpserver.url_for("/pytorch/{ref}/{path}"),
        ROCMFORGE_TRITON_REPO="",
    )
    assert done.returncode == 0, done.stderr
    assert f'"commit": "{SHA}"' in done.stdout and '"version": "3.5.1"' in done.stdout


def test_patch_without_checkout_exit_2(remotes: FakeRemotes, tmp_path: Path) -> None:
    bad = invoke(["patch"], tmp_path, remotes)
    assert bad.returncode == 2 and "There is no PyTorch checkout" in bad.stderr


@pytest.mark.parametrize(
    ("args", "env", "fragment"),
    [
        (["--timeout", "abc"], {}, "--timeout 'abc' is not a number of seconds"),
        (["--timeout", "-1"], {}, "The HTTP timeout -1 s is not a positive number of seconds"),
        ([], {"ROCMFORGE_PIN_URL": "ftp://mirror/{ref}/{path}"},
         "The pin_url setting 'ftp://mirror/{ref}/{path}' is not an http:// or https:// URL"),
        ([], {"ROCMFORGE_PIN_URL": "https://mirror/{ref}"},
         "The pin_url setting 'https://mirror/{ref}' lacks {ref} or {path}"),
    ],
    ids=["timeout-text", "timeout-negative", "pin-url-ftp", "pin-url-no-path"],
)
def test_pin_over_http_bad_input_exit_2(
    remotes: FakeRemotes, tmp_path: Path, args: list[str], env: dict[str, str], fragment: str
) -> None:
    bad = invoke(["triton.pin", "--ref", "v2.9.1", *args], tmp_path, remotes, **env)
    assert bad.returncode == 2, bad.stderr
    assert bad.stderr.startswith("rocmforge: ")
    assert fragment in bad.stderr
    assert "Traceback" not in bad.stderr
    assert bad.stdout == ""
    assert not tmp_path.joinpath("src").exists()


def test_work_dir_under_a_file_is_one_paragraph_exit_2(
    remotes: FakeRemotes, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    bad = invoke(["checkout", "--ref", "v2.8.0"], blocker / "work", remotes)
    assert bad.returncode == 2, bad.stderr
    # Refused with the settings, before the checkout takes the work dir's lock.
    assert bad.stderr == (
        f"rocmforge: The work dir {blocker}/work cannot be made: {blocker} is a file, not a "
        "folder. The kit keeps the sources, the venv, logs and dist/ in the work dir "
        "(--work-dir / setting work_dir), so it must be a folder or not exist yet. Fix: pass "
        "--work-dir a folder (or a path that does not exist yet), e.g. --work-dir .rocmforge.\n"
    )
    assert blocker.read_text() == "not a folder\n"
