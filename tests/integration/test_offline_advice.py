"""A fetch that fails (issue 18 item 5b): what failed, the log, how to resume, how to go offline,
and exit 3 ("the environment failed"), through the real `invoke` command line against real git
remotes that cannot be reached (a file:// path that does not exist, a refused HTTP port, a real
local HTTP server that answers 404) and a real Triton index that is down or 404s."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from rocmforge.errors import EXIT_ENVIRONMENT, EnvironmentFailed
from rocmforge.sources.offline import how_to_set, offline_fix
from rocmforge.sources.triton_wheel import IndexClient, IndexUnavailable, NoMatchingWheel

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.needs_tool("git")


def closed_port() -> int:
    """A local TCP port nothing listens on (bound, then closed: connecting is refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def build(work: Path, repo: str, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "invoke", "build", "--arch", "gfx1100", "--work-dir",
            str(work), "--repo", repo, "--ref", "v2.8.0", "--triton", "skip",
            "--skip-preflight", "--system-site-packages", *extra]
    env = {**os.environ, "NO_COLOR": "1", "HIP_PLATFORM": "amd"}
    return subprocess.run(argv, cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=180)


def assert_fetch_advice(done: subprocess.CompletedProcess[str], work: Path, url: str,
                        git_says: str) -> None:
    """The remote is asked for the ref before any step runs (review defect: a remote out of
    reach is exit 3 before any step, so no step's stamps are touched)."""
    assert done.returncode == EXIT_ENVIRONMENT == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "==> " not in done.stdout  # no step ran, not even a skipped one
    message = done.stderr.strip().splitlines()[-1]  # one paragraph
    assert message.startswith(f"rocmforge: Cannot fetch from {url}: git could not reach it to "
                              "resolve 'v2.8.0'. git said: ")
    assert git_says in message
    # The offline alternatives.
    assert message.endswith(f"Fix: {offline_fix('PyTorch', url)}."), message
    assert "--repo /srv/git/pytorch.git" in message
    assert f"`git clone --mirror {url} /srv/git/pytorch.git`" in message
    assert "the `mirrors` setting" in message
    assert "`invoke fetch`" in message
    assert sorted((work / "state" / "stamps").glob("*.json")) == []
    assert not (work / "logs").exists()


def test_a_file_remote_that_does_not_exist(tmp_path: Path) -> None:
    url = (tmp_path / "nowhere" / "pytorch.git").as_uri()
    done = build(tmp_path / "w", url)
    assert_fetch_advice(done, tmp_path / "w", url, "does not appear to be a git repository")
    # The same command again says the same, again before any step.
    again = build(tmp_path / "w", url)
    assert again.returncode == 3
    assert "==> " not in again.stdout
    assert again.stderr == done.stderr


def test_a_refused_http_port(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/pytorch.git"
    done = build(tmp_path / "w", url)
    assert_fetch_advice(done, tmp_path / "w", url, "Failed to connect to 127.0.0.1 port")


def test_a_local_http_server_that_answers_404(tmp_path: Path, httpserver) -> None:
    httpserver.expect_request("/pytorch.git/info/refs").respond_with_data("gone", status=404)
    url = httpserver.url_for("/pytorch.git")
    done = build(tmp_path / "w", url)
    assert_fetch_advice(done, tmp_path / "w", url, "not found")
    # git really asked this server.
    assert any(req.path == "/pytorch.git/info/refs" for req, _ in httpserver.log)


def test_triton_fetch_advice_names_skip_and_the_settings_without_flags() -> None:
    fix = offline_fix("Triton", "https://github.com/triton-lang/triton.git")
    assert "--triton skip" in fix and "--triton wheel" in fix
    # triton_index and triton_repo have no flag: the fix names their variable and yaml key.
    assert "the triton_index setting (ROCMFORGE_TRITON_INDEX=URL, or `rocm: triton_index:` in " \
           "invoke.yaml)" in fix
    assert "ROCMFORGE_TRITON_REPO=PATH" in fix
    assert how_to_set("pytorch_ref", "v2.9.1") == "--ref v2.9.1"


def test_a_triton_index_on_a_refused_port_is_the_environment() -> None:
    index = f"http://127.0.0.1:{closed_port()}/simple"
    client = IndexClient(index_url=index, timeout_s=2.0, retries=0)
    with pytest.raises(IndexUnavailable) as caught:
        client.files("pytorch-triton-rocm")
    error = caught.value
    assert isinstance(error, EnvironmentFailed) and error.exit_code == 3
    assert error.what == f"The package index {index} could not be reached"
    assert "ROCMFORGE_TRITON_INDEX=URL" in error.fix and "--triton skip" in error.fix
    assert "--triton-index" not in error.paragraph()


def test_a_triton_index_that_answers_404_names_the_setting(httpserver) -> None:
    httpserver.expect_request("/simple/pytorch-triton-rocm/").respond_with_data("no", status=404)
    client = IndexClient(index_url=httpserver.url_for("/simple"), timeout_s=5.0, retries=0)
    with pytest.raises(NoMatchingWheel) as caught:
        client.files("pytorch-triton-rocm")
    assert caught.value.fix.startswith("check the triton_index setting (ROCMFORGE_TRITON_INDEX="
                                       "URL, or `rocm: triton_index:` in invoke.yaml)")
    assert caught.value.exit_code == 2  # the index answered: its URL is the input to fix


def test_a_pin_url_on_a_refused_port_is_exit_3(tmp_path: Path) -> None:
    port = closed_port()
    env = {**os.environ, "NO_COLOR": "1",
           "ROCMFORGE_PIN_URL": f"http://127.0.0.1:{port}/{{ref}}/{{path}}"}
    done = subprocess.run([sys.executable, "-m", "invoke", "triton.pin", "--ref", "v2.8.0",
                           "--timeout", "2"], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    assert f"rocmforge: Cannot fetch http://127.0.0.1:{port}/v2.8.0/" in done.stderr
    assert "connection refused by 127.0.0.1" in done.stderr
