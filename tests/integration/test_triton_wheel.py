"""Triton wheel from a real local index (pytest-httpserver), verified downloads, build plan."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import pytest
from conftest import missing_real_part
from packaging.tags import Tag
from werkzeug import Response

from rocmforge.errors import RocmforgeError
from rocmforge.sources.triton_pin import TRITON_PIN, UPSTREAM_TRITON, TritonPin
from rocmforge.sources.triton_wheel import (
    PEP691_JSON,
    DownloadFailed,
    IndexClient,
    IndexUnavailable,
    NoMatchingWheel,
    download_verified,
    find_wheel,
    triton_conflicts,
    triton_source_build_argv,
)


def pin_of(version: str, commit: str, wheel_name: str = "pytorch-triton-rocm") -> TritonPin:
    """A pin as read from a PyTorch tree (the one TritonPin of sources.triton_pin)."""
    return TritonPin(version=version, commit=commit, repo=UPSTREAM_TRITON, wheel_name=wheel_name,
                     pin_file=TRITON_PIN)


PIN = pin_of("3.5.0", "abc12345" + "0" * 32)
CP311 = [Tag("cp311", "cp311", "linux_x86_64"), Tag("py3", "none", "any")]
GOOD_NAME = "pytorch_triton_rocm-3.5.0+gitabc12345-cp311-cp311-linux_x86_64.whl"


def make_wheel(filename: str, payload_bytes: int = 4096) -> bytes:
    """A small but real wheel: a module, METADATA, WHEEL and RECORD in a zip."""
    name, version = filename.split("-")[:2]
    dist_info = f"{name}-{version}.dist-info"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("triton/__init__.py", f"__version__ = '{version}'\n")
        zf.writestr("triton/_blob.bin", os.urandom(payload_bytes))
        zf.writestr(
            f"{dist_info}/METADATA",
            f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n",
        )
        zf.writestr(
            f"{dist_info}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: rocmforge-tests\nRoot-Is-Purelib: false\n"
            "Tag: cp311-cp311-linux_x86_64\n",
        )
        zf.writestr(f"{dist_info}/RECORD", "")
    return buf.getvalue()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def wheel_bytes() -> bytes:
    return make_wheel(GOOD_NAME)


def serve_index(httpserver, files: dict[str, bytes], *, form: str, hashes: dict[str, str]):
    """Serve a project page in PEP 691 JSON or PEP 503 HTML plus the wheel files."""
    for filename, data in files.items():
        httpserver.expect_request(f"/files/{filename}").respond_with_data(
            data, content_type="application/octet-stream"
        )
    if form == "json":
        doc = {
            "meta": {"api-version": "1.0"},
            "name": "pytorch-triton-rocm",
            "files": [
                {"filename": f, "url": f"../../files/{f}", "hashes": {"sha256": hashes[f]}}
                for f in files
            ],
        }
        httpserver.expect_request("/simple/pytorch-triton-rocm/").respond_with_data(
            json.dumps(doc), content_type=PEP691_JSON
        )
    else:
        links = "\n".join(
            f'<a href="/files/{f}#sha256={hashes[f]}">{f}</a><br/>' for f in files
        )
        httpserver.expect_request("/simple/pytorch-triton-rocm/").respond_with_data(
            f"<!DOCTYPE html><html><body>\n{links}\n</body></html>", content_type="text/html"
        )
    return IndexClient(index_url=httpserver.url_for("/simple"), timeout_s=5, retries=0)


@pytest.mark.parametrize("form", ["json", "html"])
def test_picks_and_downloads_the_pinned_wheel(httpserver, tmp_path, wheel_bytes, form):
    other = "pytorch_triton_rocm-3.5.0+gitdeadbeef-cp311-cp311-linux_x86_64.whl"
    release = "pytorch_triton_rocm-3.5.0-cp311-cp311-linux_x86_64.whl"
    wrong_py = "pytorch_triton_rocm-3.5.0+gitabc12345-cp312-cp312-linux_x86_64.whl"
    files = {n: make_wheel(n, 100) for n in (other, release, wrong_py)}
    files[GOOD_NAME] = wheel_bytes
    client = serve_index(httpserver, files, form=form, hashes={n: sha(d) for n, d in files.items()})
    choice = find_wheel(client, PIN, CP311)
    assert choice.filename == GOOD_NAME
    assert choice.version == "3.5.0+gitabc12345"
    assert choice.sha256 == sha(wheel_bytes)
    assert choice.url == httpserver.url_for(f"/files/{GOOD_NAME}")
    assert choice.tag == "cp311-cp311-linux_x86_64"
    path = download_verified(choice.url, choice.sha256, tmp_path / "dist", progress=True)
    assert path == tmp_path / "dist" / GOOD_NAME
    assert path.read_bytes() == wheel_bytes
    init = zipfile.ZipFile(path).read("triton/__init__.py")
    assert init == b"__version__ = '3.5.0+gitabc12345'\n"
    assert os.listdir(tmp_path / "dist") == [GOOD_NAME]


def test_release_wheel_is_used_when_no_commit_build_exists(httpserver):
    release = "pytorch_triton_rocm-3.5.0-cp311-cp311-linux_x86_64.whl"
    data = make_wheel(release, 10)
    client = serve_index(httpserver, {release: data}, form="html", hashes={release: sha(data)})
    assert find_wheel(client, PIN, CP311).filename == release


def test_old_ten_hex_and_radeon_suffixes_match_the_pin():
    assert PIN.accepts(__import__("packaging.version").version.Version("3.5.0+abc1234500")) == 0
    from packaging.version import Version

    assert PIN.accepts(Version("3.5.0+rocm6.4.2.gitabc12345")) == 0
    assert PIN.accepts(Version("3.5.1+gitabc12345")) is None
    assert PIN.accepts(Version("3.5.0+gitdeadbeef")) is None


def test_no_wheel_for_this_interpreter(httpserver):
    wrong_py = "pytorch_triton_rocm-3.5.0+gitabc12345-cp312-cp312-linux_x86_64.whl"
    data = make_wheel(wrong_py, 10)
    client = serve_index(httpserver, {wrong_py: data}, form="json", hashes={wrong_py: sha(data)})
    with pytest.raises(NoMatchingWheel) as info:
        find_wheel(client, PIN, CP311)
    assert "Versions listed: 3.5.0+gitabc12345" in str(info.value)
    assert "falls back to compiling Triton" in str(info.value)


def test_missing_project_is_404_no_matching_wheel(httpserver):
    httpserver.expect_request("/simple/pytorch-triton-rocm/").respond_with_data("nope", status=404)
    client = IndexClient(index_url=httpserver.url_for("/simple/"), timeout_s=5, retries=0)
    with pytest.raises(NoMatchingWheel, match="has no project pytorch-triton-rocm"):
        find_wheel(client, PIN, CP311)


def test_index_timeout_is_index_unavailable(httpserver):
    def slow(_request):
        time.sleep(6)
        return Response("late", content_type="text/html")

    httpserver.expect_request("/simple/pytorch-triton-rocm/").respond_with_handler(slow)
    client = IndexClient(index_url=httpserver.url_for("/simple"), timeout_s=0.3, retries=0)
    start = time.perf_counter()
    with pytest.raises(IndexUnavailable, match=r"did not answer within 0\.3 s") as info:
        find_wheel(client, PIN, CP311)
    # The server answers after 6 s: returning well before proves the 0.3 s limit was applied
    # (with room for a busy machine).
    assert time.perf_counter() - start < 4.5
    assert info.value.exit_code == 3  # an index that does not answer: the environment failed
    assert isinstance(info.value, RocmforgeError)


def test_unreachable_index_is_index_unavailable():
    import socket

    with socket.socket() as sock:  # a port that was just free: connection refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = IndexClient(index_url=f"http://127.0.0.1:{port}/simple", timeout_s=5, retries=0)
    with pytest.raises(IndexUnavailable, match="could not be reached"):
        find_wheel(client, PIN, CP311)


def test_wrong_sha256_leaves_nothing(httpserver, tmp_path, wheel_bytes):
    httpserver.expect_request(f"/files/{GOOD_NAME}").respond_with_data(wheel_bytes)
    dest = tmp_path / "dist"
    with pytest.raises(DownloadFailed, match="does not match its published sha256") as info:
        download_verified(httpserver.url_for(f"/files/{GOOD_NAME}"), "0" * 64, dest, False)
    assert f"got {sha(wheel_bytes)}" in str(info.value)
    assert os.listdir(dest) == []


def test_corrupt_body_leaves_nothing(httpserver, tmp_path, wheel_bytes):
    corrupt = bytearray(wheel_bytes)
    corrupt[100] ^= 0xFF
    httpserver.expect_request(f"/files/{GOOD_NAME}").respond_with_data(bytes(corrupt))
    dest = tmp_path / "dist"
    with pytest.raises(DownloadFailed, match="does not match"):
        download_verified(
            httpserver.url_for(f"/files/{GOOD_NAME}"), sha(wheel_bytes), dest, False
        )
    assert os.listdir(dest) == []


def test_truncated_body_leaves_nothing(httpserver, tmp_path, wheel_bytes):
    def short(_request):
        # Content-Length promises the whole wheel; the server sends half and closes.
        response = Response(wheel_bytes[: len(wheel_bytes) // 2], direct_passthrough=True)
        response.headers["Content-Length"] = str(len(wheel_bytes))
        response.headers["Connection"] = "close"
        return response

    httpserver.expect_request(f"/files/{GOOD_NAME}").respond_with_handler(short)
    dest = tmp_path / "dist"
    with pytest.raises(DownloadFailed, match=r"broke off|truncated|timed out"):
        download_verified(
            httpserver.url_for(f"/files/{GOOD_NAME}"), sha(wheel_bytes), dest, False,
            timeout_s=3,
        )
    assert os.listdir(dest) == []


def test_http_error_on_download(httpserver, tmp_path):
    httpserver.expect_request(f"/files/{GOOD_NAME}").respond_with_data("gone", status=404)
    with pytest.raises(DownloadFailed, match="the server answered HTTP 404") as info:
        download_verified(httpserver.url_for(f"/files/{GOOD_NAME}"), "a" * 64, tmp_path, False)
    assert info.value.exit_code == 3  # README "Exit codes": a server's HTTP error
    assert os.listdir(tmp_path) == []


def test_invalid_expected_hash_is_refused(tmp_path):
    with pytest.raises(DownloadFailed, match="without a valid sha256"):
        download_verified("http://127.0.0.1:9/x.whl", "md5:abc", tmp_path, False)


def _tmpfs(path: Path, size: str) -> bool:
    if os.geteuid() != 0:
        return False
    path.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def test_disk_full_on_tmpfs_leaves_nothing(httpserver, tmp_path):
    big = make_wheel(GOOD_NAME, payload_bytes=512 * 1024)
    httpserver.expect_request(f"/files/{GOOD_NAME}").respond_with_data(big)
    small = tmp_path / "small"
    if not _tmpfs(small, "128k"):
        missing_real_part("mounting a tmpfs needs root and mount permission")
    try:
        from rocmforge.errors import DiskFull

        with pytest.raises(DiskFull, match="No space left on device") as info:
            download_verified(httpserver.url_for(f"/files/{GOOD_NAME}"), sha(big), small, False)
        assert info.value.exit_code == 3
        assert info.value.what.startswith("The disk refused a write to ")
        assert f"`df -h {small}`" in info.value.fix
        assert os.listdir(small) == []
    finally:
        subprocess.run(["umount", str(small)], check=True)


def test_file_size_limit_reported_by_the_os(httpserver, tmp_path):
    """RLIMIT_FSIZE in a child process: the OS refuses the write (EFBIG), nothing is left."""
    big = make_wheel(GOOD_NAME, payload_bytes=512 * 1024)
    httpserver.expect_request(f"/files/{GOOD_NAME}").respond_with_data(big)
    dest = tmp_path / "dist"
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        from pathlib import Path
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
        from rocmforge.errors import RocmforgeError
        from rocmforge.sources.triton_wheel import download_verified
        try:
            download_verified({httpserver.url_for(f"/files/{GOOD_NAME}")!r}, {sha(big)!r},
                              Path({str(dest)!r}), False)
        except RocmforgeError as exc:
            print(exc)
            sys.exit(exc.exit_code)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    # The disk refusing the write, as everywhere: exit 3, one message (issue 30 item 9).
    assert done.returncode == 3, done.stderr
    assert "The disk refused a write to" in done.stdout and "File too large" in done.stdout
    assert "Traceback" not in done.stderr
    assert os.listdir(dest) == []


def test_plain_progress_when_not_a_tty(httpserver, tmp_path, wheel_bytes, capsys):
    httpserver.expect_request(f"/files/{GOOD_NAME}").respond_with_data(wheel_bytes)
    download_verified(
        httpserver.url_for(f"/files/{GOOD_NAME}"), sha(wheel_bytes), tmp_path, True
    )
    err = capsys.readouterr().err
    assert f"downloading {GOOD_NAME}" in err
    assert f"downloaded {GOOD_NAME}: {len(wheel_bytes)} bytes" in err


def test_source_build_argv_root_layout(tmp_path):
    plan = triton_source_build_argv(
        tmp_path / "triton",
        pin_of("3.5.1", "bfeb066872bc1e8b2d2bc0a3b295b99dd77206e7"),
        python="/venv/bin/python",
        dist_dir=tmp_path / "dist",
        llvm_syspath="/opt/llvm-triton",
        max_jobs=6,
    )
    assert plan.cwd == tmp_path / "triton"
    assert plan.argv == (
        "/venv/bin/python", "setup.py", "bdist_wheel", "--dist-dir", str(tmp_path / "dist")
    )
    assert dict(plan.env) == {
        "TRITON_WHEEL_NAME": "pytorch-triton-rocm",
        "MAX_JOBS": "6",
        "LLVM_SYSPATH": "/opt/llvm-triton",
        "LLVM_INCLUDE_DIRS": "/opt/llvm-triton/include",
        "LLVM_LIBRARY_DIR": "/opt/llvm-triton/lib",
    }


def test_source_build_argv_python_dir_for_old_triton(tmp_path):
    plan = triton_source_build_argv(
        tmp_path, pin_of("3.1.0", "cf34004b8a67d290a962da166f5aa2fc66751326"),
        python="python3", dist_dir=tmp_path / "d", with_clang_lld=True,
    )
    assert plan.cwd == tmp_path / "python"
    assert plan.env == {
        "TRITON_WHEEL_NAME": "pytorch-triton-rocm",
        "TRITON_BUILD_WITH_CLANG_LLD": "1",
    }
    probed = triton_source_build_argv(
        tmp_path, pin_of("3.1.0", "c" * 40), python="python3",
        dist_dir=tmp_path, setup_at_root=True,
    )
    assert probed.cwd == tmp_path


def test_conflicts_remove_cuda_triton_and_other_providers():
    found = triton_conflicts(
        ["numpy", "Triton", "pytorch_triton", "pytorch-triton-rocm"],
        keep="pytorch-triton-rocm", python="/venv/bin/python",
    )
    assert found.names == ("pytorch-triton", "triton")
    assert found.uninstall_argv == (
        "/venv/bin/python", "-m", "pip", "uninstall", "--yes", "pytorch-triton", "triton"
    )
    none = triton_conflicts(["numpy", "triton-rocm"], keep="triton-rocm", python="python")
    assert none.names == () and none.uninstall_argv == ()


def test_the_pin_read_from_a_tree_picks_its_wheel(tmp_path):
    # One TritonPin: the pin read from a PyTorch 2.10 tree goes to the index reader as it is (the
    # build used to copy it by hand into a second TritonPin class with other field names).
    from rocmforge.sources.triton_pin import TRITON_VERSION_FILE, read_pin_from_tree
    from rocmforge.sources.triton_wheel import IndexFile, pick_wheel

    commit = "5f1ad2d8" + "e" * 32
    (tmp_path / "version.txt").write_text("2.10.0a0\n")
    (tmp_path / TRITON_PIN).parent.mkdir(parents=True)
    (tmp_path / TRITON_PIN).write_text(commit + "\n")
    (tmp_path / TRITON_VERSION_FILE).write_text("3.6.0\n")
    pin = read_pin_from_tree(tmp_path)
    assert (pin.wheel_name, pin.version, pin.commit) == ("triton-rocm", "3.6.0", commit)
    name = "triton_rocm-3.6.0+git5f1ad2d8-cp311-cp311-linux_x86_64.whl"
    files = [IndexFile(filename=GOOD_NAME, url="u1", sha256="a" * 64),
             IndexFile(filename=name, url="u2", sha256="b" * 64)]
    choice = pick_wheel(files, pin, CP311)
    assert (choice.filename, choice.url, choice.version) == (name, "u2", "3.6.0+git5f1ad2d8")


# --- a network failure mid-download is exit 3 (the environment failed), nothing kept -----------

class HalfBodyServer:
    """A real HTTP/1.1 server on a local socket (a thread) that answers every request with a
    200 whose Content-Length is the whole body, sends the first half, then either resets the
    connection (SO_LINGER 0: the client sees ECONNRESET) or stalls until the client gives up."""

    def __init__(self, body: bytes, *, stall: bool = False) -> None:
        import socket
        import threading

        self.body, self.stall, self.requests = body, stall, 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _serve(self) -> None:
        import socket
        import struct

        self.sock.settimeout(0.2)
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                self.requests += 1
                half = self.body[: len(self.body) // 2]
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                             + f"Content-Length: {len(self.body)}\r\n\r\n".encode() + half)
                if self.stall:
                    self.done.wait(10)
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    def close(self) -> None:
        self.done.set()
        self.thread.join(timeout=15)
        self.sock.close()


@pytest.fixture
def half_body(wheel_bytes):
    servers: list[HalfBodyServer] = []

    def make(body: bytes = wheel_bytes, *, stall: bool = False) -> HalfBodyServer:
        servers.append(HalfBodyServer(body, stall=stall))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


def test_a_reset_mid_download_is_exit_3_and_keeps_nothing(half_body, tmp_path, wheel_bytes):
    from rocmforge.errors import EXIT_ENVIRONMENT
    from rocmforge.sources.triton_wheel import DownloadInterrupted

    server = half_body()
    url = server.url(f"/files/{GOOD_NAME}")
    dest = tmp_path / "downloads"
    with pytest.raises(DownloadInterrupted) as err:
        download_verified(url, sha(wheel_bytes), dest, False, timeout_s=5)
    assert err.value.exit_code == EXIT_ENVIRONMENT == 3
    # The count is what was written before the reset (a read of a whole chunk that meets the
    # reset returns nothing, so it can be 0): never the whole body.
    got = re.fullmatch(rf"Cannot fetch {re.escape(GOOD_NAME)} from {re.escape(url)}: the "
                       rf"download broke off after (\d+) of {len(wheel_bytes)} bytes",
                       err.value.what)
    assert got is not None and int(got[1]) <= len(wheel_bytes) // 2, err.value.what
    assert "Connection broken" in err.value.why and "reset" in err.value.why.lower()
    assert err.value.fix.startswith("nothing was kept (no partial wheel in the downloads folder "
                                    "or the venv); check the network (or proxy)")
    assert os.listdir(dest) == []


def test_a_stall_mid_download_is_a_timeout_exit_3_and_keeps_nothing(half_body, tmp_path,
                                                                     wheel_bytes):
    from rocmforge.sources.triton_wheel import DownloadInterrupted

    server = half_body(stall=True)
    url = server.url(f"/files/{GOOD_NAME}")
    dest = tmp_path / "downloads"
    started = time.monotonic()
    with pytest.raises(DownloadInterrupted) as err:
        download_verified(url, sha(wheel_bytes), dest, False, timeout_s=1)
    assert time.monotonic() - started < 8
    assert err.value.exit_code == 3
    # Every byte the server sent before it stalled is counted (issue 30 item 11: it said 0).
    assert err.value.what == (f"Cannot fetch {GOOD_NAME} from {url}: the download broke off "
                              f"after {len(wheel_bytes) // 2} of {len(wheel_bytes)} bytes")
    assert "timed out" in err.value.why
    assert os.listdir(dest) == []


@pytest.mark.slow
@pytest.mark.needs_tool("git", "clang-22")
def test_build_whose_triton_wheel_download_breaks_off_exits_3(half_body, httpserver,
                                                                tmp_path):
    """Through the real command line: the index (pytest-httpserver) lists the pinned wheel at a
    URL whose server sends half the wheel and resets. Exit 3 with the fetch advice and how to
    resume; no wheel in downloads/ or dist/, none in the venv, no triton stamp."""
    from buildhelpers import make_wheel as make_real_wheel
    from buildhelpers import sha256_of
    from test_build_e2e import make_fixture_repo, run_build

    pin = "0123456789abcdef0123456789abcdef01234567"
    wheel = make_real_wheel(tmp_path / "index", "pytorch-triton-rocm", f"3.4.0+git{pin[:8]}",
                            {"triton/__init__.py": "__version__ = '3.4.0'\n" + "#" * 200_000})
    server = half_body(wheel.read_bytes())
    file_url = server.url(f"/files/{wheel.name}")
    httpserver.expect_request("/simple/pytorch-triton-rocm/").respond_with_json(
        {"meta": {"api-version": "1.0"}, "name": "pytorch-triton-rocm",
         "files": [{"filename": wheel.name, "url": file_url,
                    "hashes": {"sha256": sha256_of(wheel)}}]},
        content_type=PEP691_JSON)
    repo = make_fixture_repo(tmp_path / "pytorch")
    work = tmp_path / "w"
    done = run_build(work, repo, triton="wheel",
                     environ={"ROCMFORGE_TRITON_INDEX": httpserver.url_for("/simple")})
    assert done.returncode == 3, done.stdout[-3000:] + done.stderr[-3000:]
    assert server.requests == 1
    err = " ".join(done.stderr.split())
    size = wheel.stat().st_size
    assert re.search(rf"Cannot fetch {re.escape(wheel.name)} from {re.escape(file_url)}: the "
                     rf"download broke off after \d+ of {size} bytes", err), err
    assert "nothing was kept (no partial wheel in the downloads folder or the venv)" in err
    assert (f"step triton stopped and no stamp was written for it; its log is "
            f"{work / 'logs' / 'triton.log'}; once that is fixed, ") in err
    assert "(the steps already done are stamped and are not run again)" in err
    assert "Traceback" not in done.stderr
    assert f"downloaded {wheel.name}" not in done.stdout + done.stderr
    assert re.search(rf"the download of {re.escape(wheel.name)} stopped after \d+ bytes",
                     done.stderr)
    assert list((work / "downloads").iterdir()) == []
    assert not list(work.glob("dist/*.whl"))
    assert not (work / "state" / "stamps" / "triton.json").exists()
    listed = subprocess.run([str(work / "venv" / "bin" / "python"), "-m", "pip", "list",
                             "--format=json", "--disable-pip-version-check"],
                            capture_output=True, text=True, check=True).stdout
    assert "pytorch-triton-rocm" not in {d["name"].lower() for d in json.loads(listed)}


@pytest.mark.parametrize("body, why", [
    ("{not json", "the body does not parse"),
    (json.dumps({"meta": {"api-version": "1.0"}, "name": "pytorch-triton-rocm",
                 "files": [{"filename": GOOD_NAME, "url": f"/files/{GOOD_NAME}",
                            "hashes": "sha256=abc"}]}), "'hashes' is an object"),
    (json.dumps({"files": {"not": "a list"}}), "'files' must be a list"),
    (json.dumps(["a", "list"]), "'files' must be a list"),
])
def test_a_malformed_index_page_is_one_paragraph_exit_3(httpserver, body: str, why: str) -> None:
    """Issue 30 item 10: invalid JSON was 'the operating system refused a write or read', a
    string 'hashes' a traceback; both are the index's fault, named with its URL, exit 3."""
    httpserver.expect_request("/simple/pytorch-triton-rocm/").respond_with_data(
        body, content_type=PEP691_JSON)
    client = IndexClient(index_url=httpserver.url_for("/simple"), timeout_s=5)
    with pytest.raises(IndexUnavailable) as err:
        client.files("pytorch-triton-rocm")
    assert err.value.exit_code == 3
    assert httpserver.url_for("/simple/pytorch-triton-rocm/") in err.value.what
    assert why in err.value.why


def test_a_file_size_limit_while_unpacking_aotriton_is_the_disk_not_the_tarball(tmp_path):
    """Unpacking a real tarball under RLIMIT_FSIZE: the disk refused the write (exit 3), not
    'the published file itself is not a readable tarball'."""
    import io
    import tarfile

    archive = tmp_path / "aotriton.tar.gz"
    payload = os.urandom(256 * 1024)
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo("aotriton/lib/libaotriton_v2.so")
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    dest = tmp_path / "aotriton" / ".prefix.x"
    dest.mkdir(parents=True)
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        from pathlib import Path
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
        from rocmforge.errors import RocmforgeError
        from rocmforge.sources.aotriton import _unpack_into
        try:
            _unpack_into(Path({str(archive)!r}), Path({str(dest)!r}))
        except RocmforgeError as exc:
            print(exc)
            sys.exit(exc.exit_code)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "The disk refused a write to" in done.stdout and "File too large" in done.stdout
    assert "not a readable tarball" not in done.stdout
