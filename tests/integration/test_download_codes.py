"""One condition, one exit code, one message (issue 41 item 9; README "Exit codes"), each through
the real `invoke` command line:

- a file that a server answers with HTTP 404 or 500 -> 3, "Cannot fetch <file> from <url>: the
  server answered HTTP <status>" (AOTriton's files via `invoke fetch`; Triton's wheel in a
  build: tests/integration/test_build_e2e.py::test_triton_wheel_from_index_wrong_then_right_sha256);
- a file whose bytes do not match its sha256 -> 3, "The download of <file> from <url> does not
  match its published sha256" (`invoke fetch` here; Triton's wheel in a build:
  tests/integration/test_build_e2e.py::test_triton_wheel_from_index_wrong_then_right_sha256);
- an index page answered with HTTP 500 -> 3; a page that is no PEP 503/691 page -> 3 (the pip
  ROCm SDK index via `invoke plan`);
- a full disk inside the wheel build -> 3, "The disk refused a write to …" (a real fixture build
  under a file-size limit, RLIMIT_FSIZE, as `prlimit --fsize` sets it).

Real parts: pytest-httpserver, git, the fixture PyTorch tree; clang-22 for the build.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SDK_VERSION = "10.1.0a20260811"


def _invoke(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=REPO_ROOT,
                          env={**os.environ, "HIP_PLATFORM": "amd", "NO_COLOR": "1",
                               "COLUMNS": "400", **(env or {})},
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("answer, why", [
    ("500", "answered HTTP 500"),
    ("malformed", "that is no PEP 503 or PEP 691 page"),
])
def test_an_sdk_index_that_fails_or_sends_another_page_is_exit_3(
        httpserver, tmp_path: Path, answer: str, why: str) -> None:
    page = httpserver.expect_request("/whl/rocm/")
    if answer == "500":
        page.respond_with_data("server error", status=500)
    else:
        page.respond_with_data("Service temporarily replaced by a captive portal",
                               content_type="text/plain")
    index = httpserver.url_for("/whl/")
    done = _invoke("plan", "-w", str(tmp_path / "w"), "--arch", "gfx1100", "--rocm-sdk", index,
                   "--rocm-sdk-version", SDK_VERSION)
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stderr.startswith("rocmforge: The pip ROCm SDK index"), done.stderr
    assert why in done.stderr
    assert "Traceback" not in done.stderr


@pytest.fixture
def checked_out(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The fixture PyTorch tree checked out by `invoke checkout`, its AOTriton sha256 set to
    that of the bytes the server will send as the right file."""
    from test_aotriton_offline import with_sha
    from test_build_e2e import make_fixture_repo

    repo = make_fixture_repo(tmp_path / "pytorch")
    with_sha(repo, _sha(b"the right bytes"))
    work = tmp_path / "work"
    env = {"ROCMFORGE_PYTORCH_REPO": str(repo), "ROCMFORGE_PYTORCH_REF": "v2.8.0"}
    done = _invoke("checkout", "--work-dir", str(work), env=env)
    assert done.returncode == 0, done.stderr
    return work, env


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


@pytest.mark.needs_tool("git")
@pytest.mark.parametrize("status", [404, 500])
def test_fetch_of_a_file_the_server_refuses_is_exit_3(
        httpserver, checked_out: tuple[Path, dict[str, str]], status: int) -> None:
    from test_aotriton_offline import TARBALL, URL_PATH

    work, env = checked_out
    httpserver.expect_request(URL_PATH).respond_with_data("no", status=status)
    done = _invoke("fetch", "--arch", "gfx1100", "--work-dir", str(work), "--base-url",
                   httpserver.url_for("/"), env=env)
    assert done.returncode == 3, done.stdout + done.stderr
    url = httpserver.url_for(URL_PATH)
    assert (f"Fetching AOTriton 0.10b's runtime failed: Cannot fetch {TARBALL} from {url}: the "
            f"server answered HTTP {status}") in done.stderr
    assert "Traceback" not in done.stderr
    assert not (work / "downloads").exists() or list((work / "downloads").iterdir()) == []


@pytest.mark.needs_tool("git")
def test_fetch_of_bytes_with_another_sha256_is_exit_3(
        httpserver, checked_out: tuple[Path, dict[str, str]]) -> None:
    from test_aotriton_offline import TARBALL, URL_PATH

    work, env = checked_out
    httpserver.expect_request(URL_PATH).respond_with_data(b"other bytes")
    done = _invoke("fetch", "--arch", "gfx1100", "--work-dir", str(work), "--base-url",
                   httpserver.url_for("/"), env=env)
    assert done.returncode == 3, done.stdout + done.stderr
    assert (f"The download of {TARBALL} from {httpserver.url_for(URL_PATH)} does not match its "
            f"published sha256") in done.stderr
    assert f"expected {_sha(b'the right bytes')}, got {_sha(b'other bytes')}" in done.stderr
    assert not (work / "downloads").exists() or list((work / "downloads").iterdir()) == []


@pytest.mark.slow
@pytest.mark.needs_tool("clang-22", "clang-offload-bundler-22", "git")
def test_a_full_disk_inside_the_wheel_build_is_exit_3_with_the_disks_message(
        tmp_path: Path) -> None:
    """A build that finished once, then rebuilt under a 16 KiB file-size limit: the wheel
    build's own writes are refused ([Errno 27] File too large, as ENOSPC for a full disk), and
    the build says what every full disk says, exit 3, not a failed check (exit 1) nor "a path in
    the settings or flags"."""
    from test_build_e2e import make_fixture_repo, run_build

    repo = make_fixture_repo(tmp_path / "pytorch")
    work = tmp_path / "work"
    first = run_build(work, repo)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    for stamp in ("build", "install", "collect"):
        (work / "state" / "stamps" / f"{stamp}.json").unlink(missing_ok=True)
    import shutil

    for built in (work / "src" / "pytorch" / "build").glob("lib.*"):
        shutil.rmtree(built)  # the wheel build compiles libtorch_hip.so (> 16 KiB) again

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 1024, 16 * 1024))

    full = run_build(work, repo, preexec_fn=small_files)
    out = full.stdout + full.stderr
    assert full.returncode == 3, out[-4000:]
    assert (f"rocmforge: The disk refused a write to {work}: clang++: error: unable to execute "
            "command: File size limit exceeded. The file system is full, over a quota, or the "
            "file is above a size limit (ulimit -f); the step runs again from its start.") in \
        " ".join(full.stderr.split()), out[-4000:]
    assert "step build stopped and no stamp was written for it" in " ".join(full.stderr.split())
    assert "free space there (`df -h " in full.stderr
    assert "settings or flags" not in out
    assert "Traceback" not in full.stderr
