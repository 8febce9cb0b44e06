"""Triton pin: parsing, the tree layouts, and fetching raw pin files from a real local HTTP server
(pytest-httpserver), including a 404, a slow reply and a malformed pin."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from rocmforge.sources.triton_pin import (
    TRITON_PIN,
    TRITON_ROCM_PIN,
    TRITON_VERSION_FILE,
    PinError,
    fallback_layout,
    fetch_pin,
    parse_pin,
    read_pin_from_tree,
    version_from_ref,
)

SHA = "bfeb066872bc1e8b2d2bc0a3b295b99dd77206e7"  # pytorch-rocm-build.md 3.6: 2.9.1's pin
OTHER = "cf34004b8a67d290a962da166f5aa2fc66751326"


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_parse_pin_accepts_only_a_full_commit() -> None:
    assert parse_pin(SHA + "\n", source="t") == SHA
    assert parse_pin(SHA.upper(), source="t") == SHA
    with pytest.raises(PinError, match="short hash 'bfeb0668' \\(8 hex digits\\)"):
        parse_pin("bfeb0668\n", source="t")
    with pytest.raises(PinError, match="looks like a branch or tag name"):
        parse_pin("release/3.5.x\n", source="t")
    with pytest.raises(PinError, match="is empty"):
        parse_pin("\n", source="t")
    with pytest.raises(PinError, match="has 2 lines"):
        parse_pin(f"{SHA}\n{OTHER}\n", source="t")


def test_version_from_ref() -> None:
    assert version_from_ref("v2.9.1") == "2.9.1"
    assert version_from_ref("v2.10.0-rc3") == "2.10.0"
    assert version_from_ref("main") == ""
    assert version_from_ref(SHA) == ""


def test_fallback_layout_follows_the_2_5_rule() -> None:
    old = fallback_layout("2.4.0a0")
    assert old.pin_files == (TRITON_ROCM_PIN, TRITON_PIN)
    assert old.repo == "https://github.com/ROCm/triton.git"
    new = fallback_layout("2.9.1")
    assert new.pin_files == (TRITON_PIN,) and new.wheel_name == "pytorch-triton-rocm"
    assert new.repo == "https://github.com/triton-lang/triton.git"


def test_tree_new_layout(tmp_path: Path) -> None:
    tree = write_tree(
        tmp_path, {"version.txt": "2.9.1\n", TRITON_PIN: SHA + "\n", TRITON_VERSION_FILE: "3.5.1\n"}
    )
    pin = read_pin_from_tree(tree)
    assert (pin.commit, pin.version, pin.pin_file) == (SHA, "3.5.1", TRITON_PIN)


def test_tree_old_layout_prefers_triton_rocm(tmp_path: Path) -> None:
    tree = write_tree(
        tmp_path,
        {
            "version.txt": "2.4.0a0\n",
            TRITON_PIN: OTHER + "\n",
            TRITON_ROCM_PIN: SHA + "\n",
            TRITON_VERSION_FILE: "3.0.0\n",
        },
    )
    pin = read_pin_from_tree(tree)
    assert (pin.commit, pin.pin_file, pin.version) == (SHA, TRITON_ROCM_PIN, "3.0.0")


def test_tree_new_version_ignores_stale_rocm_pin(tmp_path: Path) -> None:
    tree = write_tree(
        tmp_path,
        {"version.txt": "2.8.0a0\n", TRITON_PIN: SHA + "\n", TRITON_ROCM_PIN: OTHER + "\n"},
    )
    pin = read_pin_from_tree(tree)
    assert (pin.commit, pin.pin_file, pin.version) == (SHA, TRITON_PIN, "")


def test_tree_without_pin(tmp_path: Path) -> None:
    with pytest.raises(PinError, match="has no Triton pin file"):
        read_pin_from_tree(tmp_path)


def test_tree_with_branch_name_pin(tmp_path: Path) -> None:
    tree = write_tree(tmp_path, {"version.txt": "2.9.1\n", TRITON_PIN: "main\n"})
    with pytest.raises(PinError, match="'main', which looks like a branch"):
        read_pin_from_tree(tree)


# ------------------------------------------------------------------------------------ over HTTP


def pin_url(server: HTTPServer) -> str:
    return server.url_for("/pytorch/{ref}/{path}")


def test_fetch_pin_new_layout(httpserver: HTTPServer) -> None:
    httpserver.expect_request(f"/pytorch/v2.9.1/{TRITON_PIN}").respond_with_data(SHA + "\n")
    httpserver.expect_request(f"/pytorch/v2.9.1/{TRITON_VERSION_FILE}").respond_with_data("3.5.1\n")
    pin = fetch_pin(pin_url(httpserver), "v2.9.1", retries=0)
    assert (pin.commit, pin.version, pin.pin_file) == (SHA, "3.5.1", TRITON_PIN)


def test_fetch_pin_old_layout_reads_version_txt_for_a_commit(httpserver: HTTPServer) -> None:
    ref = "a" * 40
    httpserver.expect_request(f"/pytorch/{ref}/version.txt").respond_with_data("2.4.0a0\n")
    httpserver.expect_request(f"/pytorch/{ref}/{TRITON_ROCM_PIN}").respond_with_data(SHA)
    httpserver.expect_request(f"/pytorch/{ref}/{TRITON_VERSION_FILE}").respond_with_data("3.0.0")
    pin = fetch_pin(pin_url(httpserver), ref, retries=0)
    assert (pin.commit, pin.pin_file, pin.repo) == (
        SHA,
        TRITON_ROCM_PIN,
        "https://github.com/ROCm/triton.git",
    )


def test_fetch_pin_404_is_a_clear_error(httpserver: HTTPServer) -> None:
    httpserver.expect_request(f"/pytorch/v9.9.9/{TRITON_PIN}").respond_with_data("no", status=404)
    with pytest.raises(PinError, match="No Triton pin for PyTorch v9.9.9 \\(HTTP 404") as info:
        fetch_pin(pin_url(httpserver), "v9.9.9", retries=2, backoff=0)
    assert info.value.exit_code == 2
    assert len(httpserver.log) == 1  # a 404 is not retried


def test_fetch_pin_slow_reply_times_out_after_retries(httpserver: HTTPServer) -> None:
    def slow(_: Request) -> Response:
        time.sleep(0.5)
        return Response(SHA)

    httpserver.expect_request(f"/pytorch/v2.9.1/{TRITON_PIN}").respond_with_handler(slow)
    started = time.monotonic()
    with pytest.raises(PinError, match="after 2 tries \\(no answer within 0.1 s\\)"):
        fetch_pin(pin_url(httpserver), "v2.9.1", timeout=0.1, retries=1, backoff=0.01)
    assert time.monotonic() - started < 3


def test_fetch_pin_retries_a_5xx_then_succeeds(httpserver: HTTPServer) -> None:
    path = f"/pytorch/v2.9.1/{TRITON_PIN}"
    httpserver.expect_ordered_request(path).respond_with_data("busy", status=503)
    httpserver.expect_ordered_request(path).respond_with_data(SHA)
    httpserver.expect_request(f"/pytorch/v2.9.1/{TRITON_VERSION_FILE}").respond_with_data("3.5.1")
    pin = fetch_pin(pin_url(httpserver), "v2.9.1", retries=2, backoff=0)
    assert pin.commit == SHA


def test_fetch_pin_malformed(httpserver: HTTPServer) -> None:
    httpserver.expect_request(f"/pytorch/v2.9.1/{TRITON_PIN}").respond_with_data("<html>oops")
    with pytest.raises(PinError) as info:
        fetch_pin(pin_url(httpserver), "v2.9.1", retries=0)
    assert info.value.what == (
        f"The Triton pin {pin_url(httpserver).format(ref='v2.9.1', path=TRITON_PIN)} holds "
        "'<html>oops', which is not a commit"
    )


def test_fetch_pin_short_hash(httpserver: HTTPServer) -> None:
    httpserver.expect_request(f"/pytorch/v2.9.1/{TRITON_PIN}").respond_with_data("bfeb0668")
    with pytest.raises(PinError, match="holds the short hash 'bfeb0668' \\(8 hex digits\\)"):
        fetch_pin(pin_url(httpserver), "v2.9.1", retries=0)


def test_pin_url_without_placeholders() -> None:
    with pytest.raises(PinError, match="lacks \\{ref\\} or \\{path\\}"):
        fetch_pin("https://example.invalid/x", "v2.9.1", retries=0)


@pytest.mark.parametrize(
    "bad_url",
    ["ftp://mirror/{ref}/{path}", "{ref}/{path}", "https:///{ref}/{path}", "http://[::1/{ref}/{path}"],
    ids=["ftp", "no-scheme", "no-host", "broken-ipv6"],
)
def test_pin_url_that_is_not_http_fails_at_once(bad_url: str, httpserver: HTTPServer) -> None:
    started = time.monotonic()
    with pytest.raises(PinError) as info:
        fetch_pin(bad_url, "v2.9.1", retries=3, backoff=1.0)
    assert info.value.what == (
        f"The pin_url setting {bad_url!r} is not an http:// or https:// URL with a host"
    )
    assert time.monotonic() - started < 0.5  # refused before any request, so no retry/backoff


@pytest.mark.parametrize("timeout", [0.0, -1.0, float("nan")])
def test_fetch_pin_refuses_a_timeout_that_is_not_positive(timeout: float) -> None:
    with pytest.raises(PinError, match="is not a positive number of seconds"):
        fetch_pin("https://example.invalid/{ref}/{path}", "v2.9.1", timeout=timeout)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "HTTPSConnectionPool(host='raw.example.org', port=443): Max retries exceeded "
            "(Caused by NameResolutionError(\"Failed to resolve 'raw.example.org' "
            "([Errno -2] Name or service not known)\"))",
            "cannot resolve the host raw.example.org (no DNS or no network)",
        ),
        (
            "HTTPConnectionPool(host='127.0.0.1', port=9): Max retries exceeded (Caused by "
            "NewConnectionError('[Errno 111] Connection refused'))",
            "connection refused by 127.0.0.1",
        ),
        ("something odd", "ConnectionError: something odd"),
    ],
)
def test_short_reason_keeps_what_a_person_needs(text: str, expected: str) -> None:
    import requests

    from rocmforge.sources.triton_pin import short_reason

    assert short_reason(requests.ConnectionError(text)) == expected
