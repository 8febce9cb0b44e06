"""Doctor's rows for the files PyTorch's configure downloads (issue 40 item 3): the fixture
tree's aotriton.cmake decides the URLs (as sources.aotriton reads it), a real HTTP server
(pytest-httpserver) answers 206, 200, 404 or 409 (Triton's LLVM host began answering 409:
triton-lang/triton#4527), a closed port refuses, a listening socket never answers, and this
machine's own DNS has no github.com (the real "cannot check offline")."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from rocmforge.knowledge.features import load_aotriton_table
from rocmforge.plan.download_rows import aotriton_downloads, ask, download_rows
from rocmforge.plan.features import AotritonState
from rocmforge.probes.reachable import probe_url
from rocmforge.sources.aotriton import plan_fetch, release_from_tree

FAKE_TREE = Path(__file__).resolve().parents[1] / "fixtures" / "fakepytorch"


def _state(base_url: str, prefix: Path | None = None) -> AotritonState:
    release = release_from_tree(FAKE_TREE)
    assert release is not None
    fetch = plan_fetch(release, release.rocm[-1].removeprefix("rocm"), ["gfx942"],
                       base_url=base_url)
    return AotritonState(release=release, table=load_aotriton_table(), fetch=fetch,
                         prefix=prefix)


def test_the_trees_files_answer_and_the_row_is_ok(httpserver: HTTPServer) -> None:
    state = _state(httpserver.url_for("/releases/"))
    urls = aotriton_downloads(state, attention_on=True)
    assert urls and all(u.startswith(httpserver.url_for("/releases/")) for u in urls)
    for url in urls:
        httpserver.expect_request("/" + url.split("/", 3)[3]).respond_with_data(
            b"\x1f", status=206, headers={"Content-Range": "bytes 0-0/2097152"})
    reaches = ask(urls)
    assert [(r.answer, r.status, r.size) for r in reaches] == [("http", 206, 2097152)] * len(urls)
    (row,) = download_rows(reaches)
    assert (row.check, row.status) == ("AOTriton download", "OK")
    assert row.detail == (f"{len(urls)} file(s) configure downloads answer (localhost, "
                          f"{2 * len(urls)} MiB); their sha256 is checked when downloaded, "
                          "not here")


def test_nothing_is_asked_when_fetched_or_attention_is_off(tmp_path: Path) -> None:
    state = _state("https://example.invalid/")
    assert aotriton_downloads(state, attention_on=False) == ()
    assert aotriton_downloads(_state("https://example.invalid/", prefix=tmp_path),
                              attention_on=True) == ()
    assert aotriton_downloads(None, attention_on=True) == ()


@pytest.mark.parametrize("status", [404, 409])
def test_a_url_the_server_no_longer_serves_fails(httpserver: HTTPServer, status: int) -> None:
    httpserver.expect_request("/llvm-builds/llvm.tar.gz").respond_with_data(
        b"PublicAccessNotPermitted", status=status)
    url = httpserver.url_for("/llvm-builds/llvm.tar.gz")
    (row,) = download_rows(ask([url]))
    assert row.status == "FAIL"
    assert row.detail.startswith(f"{url} answers HTTP {status}")
    assert row.fix.startswith("invoke fetch --base-url")


def test_a_server_without_ranges_is_read_one_byte_only(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/whole").respond_with_data(b"x" * 4096, status=200)
    reach = probe_url(httpserver.url_for("/whole"))
    assert (reach.answer, reach.status, reach.size) == ("http", 200, 4096)


def test_offline_is_a_warning_never_ok() -> None:
    """This machine has no DNS for github.com: the real URL cannot be checked."""
    url = "https://github.com/ROCm/aotriton/releases/download/0.11b/x.tar.gz"
    reach = probe_url(url)
    if reach.answer != "offline":
        pytest.skip(f"this machine reaches github.com ({reach}); the offline case needs none")
    (row,) = download_rows([reach])
    assert row.status == "WARN"
    assert row.detail.startswith("cannot check offline: github.com for x.tar.gz: no such host")
    assert row.fix.startswith("invoke fetch   #")


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A socket that listens and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        yield int(sock.getsockname()[1])


def test_a_refusal_and_a_silence_are_warnings_within_the_bound(silent_port: int) -> None:
    began = time.monotonic()
    reaches = ask(["http://127.0.0.1:1/a.tar.gz", f"http://127.0.0.1:{silent_port}/b.tar.gz"],
                  timeout=1.0)
    assert time.monotonic() - began < 3.0
    assert [r.answer for r in reaches] == ["refused", "timeout"]
    rows = download_rows(reaches)
    assert [r.status for r in rows] == ["WARN", "WARN"]
    assert rows[0].detail == ("127.0.0.1 did not answer for a.tar.gz: connection refused; "
                              "configure downloads it")
