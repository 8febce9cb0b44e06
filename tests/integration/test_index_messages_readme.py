"""The README's "Exit codes" table says how each index failure's message starts and its exit
code: every message the Triton wheel's index client and the pip ROCm SDK's index check really
print matches a row of it (with that row's code), and every index message the table writes is
one of them. The SDK's wording ("The pip ROCm SDK index …") is its own, not "The package
index …". Then the SDK's own messages: a device package without the release, and an index
without the rocm project on each route (TheRock's per-family indexes: ROCm/TheRock@89553ce3:
docs/packaging/legacy_per_family_releases.md).

Real parts: the kit's clients against a local server (pytest-httpserver) answering 500, a
captive-portal page, 404, too slowly, a refused port, and a file: index on disk.
"""

from __future__ import annotations

import re
import socket
import time
from pathlib import Path

import pytest

from rocmforge.errors import RocmforgeError
from rocmforge.knowledge.rocm_sdk import load_sdk_table
from rocmforge.plan.rocm_sdk import other_route, sdk_plan
from rocmforge.settings import Settings
from rocmforge.sources.rocm_sdk_index import _no_sdk_fix, check_sdk_index
from rocmforge.sources.triton_wheel import IndexClient

README = Path(__file__).resolve().parents[2] / "README.md"
MULTI = "10.1.0a20260811"


def _readme_templates() -> list[tuple[int, str, re.Pattern[str]]]:
    """(code, template, pattern) of each backticked message start in the conditions table."""
    text = README.read_text(encoding="utf-8")
    table = text[text.index("| condition | code | message starts with |"):]
    table = table[:table.index("\n\n")]
    found = []
    for line in table.splitlines()[2:]:
        _condition, code, message = (cell.strip() for cell in line.strip("| ").split(" | "))
        for template in re.findall(r"`([^`]+)`", message):
            if template == "file:":
                continue
            pattern = re.escape(template).replace(re.escape("…"), ".*")
            pattern = re.sub(r"<[^>]+>", ".+?", pattern.replace("\\<", "<").replace("\\>", ">"))
            found.append((int(code), template, re.compile(pattern)))
    return found


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _said(call) -> tuple[int, str]:  # noqa: ANN001
    with pytest.raises(RocmforgeError) as caught:
        call()
    return caught.value.exit_code, caught.value.what


def _real_messages(httpserver, tmp_path: Path) -> list[tuple[str, int, str]]:  # noqa: ANN001
    from werkzeug import Response

    def slow(_request):  # noqa: ANN001, ANN202
        time.sleep(1.2)
        return Response("late")

    for base in ("/t500/", "/s500/"):
        httpserver.expect_request(re.compile(f"^{base}")).respond_with_data("error", status=500)
    for base in ("/tportal/", "/sportal/"):
        httpserver.expect_request(re.compile(f"^{base}")).respond_with_data(
            "captive portal", content_type="text/plain")
    for base in ("/tslow/", "/sslow/"):
        httpserver.expect_request(re.compile(f"^{base}")).respond_with_handler(slow)
    httpserver.expect_request(re.compile("^/gone/")).respond_with_data("no", status=404)
    httpserver.expect_request("/whl/rocm/").respond_with_data(
        f'<a href="/f/rocm-{MULTI}.tar.gz">rocm-{MULTI}.tar.gz</a>', content_type="text/html")
    refused = f"http://127.0.0.1:{_closed_port()}/simple/"

    def triton(base: str) -> tuple[int, str]:
        client = IndexClient(index_url=base, timeout_s=0.5, retries=0)
        return _said(lambda: client.files("pytorch-triton-rocm"))

    def sdk(base: str, version: str = MULTI) -> tuple[int, str]:
        return _said(lambda: check_sdk_index(base, version, (), timeout_s=0.5))

    url = httpserver.url_for
    return [
        (case, *said) for case, said in (
            ("triton 500", triton(url("/t500/"))),
            ("triton portal", triton(url("/tportal/"))),
            ("triton slow", triton(url("/tslow/"))),
            ("triton refused", triton(refused)),
            ("triton 404", triton(url("/gone/"))),
            ("sdk 500", sdk(url("/s500/"))),
            ("sdk portal", sdk(url("/sportal/"))),
            ("sdk slow", sdk(url("/sslow/"))),
            ("sdk refused", sdk(refused)),
            ("sdk 404", sdk(url("/gone/"))),
            ("sdk no release", sdk(url("/whl/"), "10.1.0a20260901")),
            ("sdk file: not a folder", sdk((tmp_path / "none" / "whl").as_uri() + "/")),
        )]


def test_readme_table_says_how_each_real_index_message_starts(tmp_path: Path,
                                                              httpserver) -> None:  # noqa: ANN001
    templates = _readme_templates()
    messages = _real_messages(httpserver, tmp_path)
    used: set[str] = set()
    for case, code, what in messages:
        rows = [(c, t) for c, t, pattern in templates if pattern.match(what)]
        assert rows, f"{case}: README has no row for {what!r}"
        assert {c for c, _ in rows} == {code}, f"{case}: exit {code}, README says {rows}"
        used.update(t for _, t in rows)
    # The SDK speaks of its own index, never of "the package index".
    assert all(what.startswith(("The pip ROCm SDK index", "The index"))
               for case, _, what in messages if case.startswith("sdk"))
    index_templates = {t for _, t, _ in templates if "index" in t}
    assert index_templates <= used, f"README rows no message prints: {index_templates - used}"


def test_a_device_package_without_the_release_names_rocm_in_its_spelling(
        tmp_path: Path) -> None:
    root = tmp_path / "index"
    for project, name in (("rocm", "rocm-10.1.0a20260812.tar.gz"),
                          ("rocm-sdk-device-gfx1100",
                           f"rocm_sdk_device_gfx1100-{MULTI}-py3-none-linux_x86_64.whl")):
        (root / project).mkdir(parents=True)
        (root / project / "index.html").write_text(f'<a href="x/{name}">{name}</a>')
    index = root.as_uri() + "/"
    with pytest.raises(RocmforgeError) as caught:
        check_sdk_index(index, "10.1.0a20260812", ("rocm-sdk-device-gfx1100",))
    assert caught.value.paragraph() == (
        f"The index {index} has rocm-sdk-device-gfx1100 but not at 10.1.0a20260812. ROCm SDK "
        "10.1.0a20260812 (the rocm package) installs rocm-sdk-device-gfx1100==10.1.0a20260812, "
        "and the index lists 1 other release(s) of it. Fix: pass --rocm-sdk-version with a "
        f"release that has gfx1100 (newest: {MULTI}), or drop gfx1100 from --arch.")


def test_an_index_without_rocm_sends_a_per_family_release_to_its_familys_index(
        httpserver) -> None:  # noqa: ANN001
    """A release before the multi-arch index is only on its family's per-family index:
    dropping --rocm-sdk gives TheRock's of that family, never the multi-arch index."""
    httpserver.expect_request(re.compile("^/")).respond_with_data("no", status=404)
    mirror = httpserver.url_for("/v2/gfx94X-dcgpu/")
    with pytest.raises(RocmforgeError) as caught:
        check_sdk_index(mirror, "7.12.0a20260202", ())
    assert caught.value.exit_code == 2
    assert caught.value.fix == (
        "ROCm SDK 7.12.0a20260202 predates the multi-arch index (its first release is "
        "7.13.0a0), so only the per-family index of gfx94X-dcgpu has it: drop --rocm-sdk to use "
        "TheRock's (https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/), or pass your mirror's "
        "per-family index URL with {family} where the family goes")
    from packaging.version import Version

    # An index URL that names no family: the template, to be filled in.
    assert _no_sdk_fix("https://mirror.example/whl/", Version("7.12.0a20260202")).endswith(
        "so only the per-family index of the targets' family has it: drop --rocm-sdk to use "
        "TheRock's (https://rocm.nightlies.amd.com/v2/{family}/, with your targets' family), or "
        "pass your mirror's per-family index URL with {family} where the family goes")
    # TheRock's own per-family index without it: deleted or never there; newer releases are
    # on the multi-arch index.
    assert _no_sdk_fix("https://rocm.nightlies.amd.com/v2/gfx110X-all/",
                       Version("7.12.0a20260202")) == (
        "TheRock's per-family index of gfx110X-all does not have it (no new per-family releases "
        "are made, and old ones may be deleted: TheRock's docs/packaging/"
        "legacy_per_family_releases.md): pass --rocm-sdk-version with a release from 7.13.0a0 "
        "on (the multi-arch index has those), or pass a mirror's per-family index with "
        "--rocm-sdk (a URL with {family})")
    # A multi-arch release: the multi-arch index, as before.
    assert _no_sdk_fix("https://mirror.example/whl/", Version(MULTI)) == (
        "drop --rocm-sdk to use TheRock's multi-arch index "
        "(https://rocm.nightlies.amd.com/whl-multi-arch/), or pass your mirror's index URL (the "
        "folder whose rocm/ page lists the rocm files)")


def test_the_other_route_sentence_asks_no_one_to_drop_a_flag_they_did_not_pass() -> None:
    table = load_sdk_table()
    chosen = sdk_plan(Settings(rocm_sdk_version="7.12.0a20260202"), ["gfx1100"], table, None)
    given = sdk_plan(Settings(rocm_sdk="https://m.example/v2/{family}/",
                              rocm_sdk_version="7.12.0a20260202"), ["gfx1100"], table, None)
    assert chosen is not None and given is not None
    assert other_route(chosen, table) == (
        "a release from 7.13.0a0 on is on the multi-arch index, which the build takes for such "
        "a --rocm-sdk-version")
    assert other_route(given, table) == (
        "a release from 7.13.0a0 on is on the multi-arch index: drop --rocm-sdk (or pass the "
        "multi-arch index, without {family})")
