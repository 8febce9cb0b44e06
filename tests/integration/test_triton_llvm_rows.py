"""Doctor's row for the LLVM Triton's setup.py downloads (issue 40 item 3): a real PyTorch tree
names the Triton pin, a real Triton git repo holds cmake/llvm-hash.txt at that commit (or a
real HTTP server serves the raw file), and pytest-httpserver plays the llvm-builds host: 206,
409 (the old host's answer in triton-lang/triton#4527). This machine's DNS has no github.com:
the real "cannot check offline"."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from rocmforge.plan.triton_llvm_rows import (
    LLVM_BUILDS,
    llvm_archive,
    llvm_system_suffix,
    no_download_row,
    parse_llvm_hash,
    raw_hash_url,
    triton_llvm_doctor,
)
from rocmforge.probes.triton_llvm import HostSystem, host_system
from rocmforge.settings import Settings
from tests.gitfixtures import commit_files, new_repo

LLVM_HASH = "8957e64a20fc7f4277565c6cfe3e555c119783ce"
SUFFIX = {"TRITON_LLVM_SYSTEM_SUFFIX": "ubuntu-x64"}


@pytest.mark.parametrize(("machine", "glibc", "alma", "expected"), [
    ("x86_64", "2.35", False, "ubuntu-x64"),
    ("x86_64", "2.28", False, "almalinux-x64"),
    ("x86_64", "2.17", False, "centos-x64"),
    ("aarch64", "2.35", True, "almalinux-arm64"),
    ("aarch64", "2.35", False, "ubuntu-arm64"),
    ("riscv64", "2.35", False, ""),
    ("x86_64", "", False, ""),
])
def test_the_host_names_the_archive_as_triton_does(machine: str, glibc: str, alma: bool,
                                                   expected: str) -> None:
    host = HostSystem(system="Linux", machine=machine, glibc=glibc, almalinux=alma)
    assert llvm_system_suffix(host) == expected
    assert llvm_system_suffix(host, "rocky-x64") == "rocky-x64"


def test_this_machine_has_a_prebuilt_llvm() -> None:
    host = host_system()
    if (host.system, host.machine) != ("Linux", "x86_64") or host.glibc < "2.29":
        pytest.skip(f"not an x86_64 Linux with glibc > 2.28: {host}")
    assert llvm_system_suffix(host) == "ubuntu-x64"  # this machine: glibc 2.36


def test_the_archive_url_is_the_hash_prefix_and_the_system() -> None:
    archive = llvm_archive(LLVM_HASH + "\n", "ubuntu-x64")
    assert archive.name == "llvm-8957e64a-ubuntu-x64"
    assert archive.url == LLVM_BUILDS + "llvm-8957e64a-ubuntu-x64.tar.gz"
    assert archive.url == ("https://oaitriton.blob.core.windows.net/public/llvm-builds/"
                           "llvm-8957e64a-ubuntu-x64.tar.gz")  # the URL in the real log


def test_raw_urls_and_hash_parsing() -> None:
    commit = "a" * 40
    assert raw_hash_url("https://github.com/triton-lang/triton.git", commit) == (
        f"https://raw.githubusercontent.com/triton-lang/triton/{commit}/cmake/llvm-hash.txt")
    assert raw_hash_url("git@github.com:ROCm/triton", commit).startswith(
        "https://raw.githubusercontent.com/ROCm/triton/")
    assert raw_hash_url("https://gitlab.example/triton.git", commit) == ""
    assert parse_llvm_hash(LLVM_HASH + "\n") == LLVM_HASH
    assert parse_llvm_hash("<html>Not Found</html>") == ""


def test_cases_without_a_download(tmp_path: Path) -> None:
    row = no_download_row("wheel", {}, "ubuntu-x64")
    assert row is not None and row.status == "OK" and "prebuilt wheel" in row.detail
    row = no_download_row("source", {"LLVM_SYSPATH": str(tmp_path)}, "ubuntu-x64")
    assert row is not None and (row.status, row.detail) == (
        "OK", f"not downloaded: LLVM_SYSPATH={tmp_path} (Triton's setup.py then uses that LLVM)")
    row = no_download_row("source", {"LLVM_SYSPATH": str(tmp_path / "none")}, "ubuntu-x64")
    assert row is not None and row.status == "WARN"
    row = no_download_row("source", {"TRITON_OFFLINE_BUILD": "1"}, "ubuntu-x64")
    assert row is not None and row.status == "FAIL"
    assert "'Requested an offline build but LLVM_SYSPATH is not set'" in row.detail
    row = no_download_row("auto", {}, "")
    assert row is not None and row.status == "WARN"
    assert no_download_row("source", {"TRITON_OFFLINE_BUILD": "0"}, "ubuntu-x64") is None


def test_auto_without_a_version_file_builds_from_source(tmp_path: Path,
                                                        httpserver: HTTPServer) -> None:
    """The pin has no triton_version.txt: auto cannot match a wheel, so a gone archive FAILs."""
    settings, _ = _work(tmp_path, clone=True, version="")
    settings = Settings(work_dir=settings.work_dir, triton_mode="auto")
    httpserver.expect_request("/llvm-builds/llvm-8957e64a-ubuntu-x64.tar.gz").respond_with_data(
        b"", status=409)
    (row,) = triton_llvm_doctor(settings, {**SUFFIX, "HOME": str(tmp_path)},
                                base=httpserver.url_for("/llvm-builds/"))
    assert row.status == "FAIL" and "(auto:" not in row.detail


def _work(tmp_path: Path, *, clone: bool, version: str = "3.5.0") -> tuple[Settings, str]:
    """A work dir whose PyTorch tree pins a Triton commit; the Triton repo cloned or not."""
    triton = new_repo(tmp_path / "triton-upstream")
    pin = commit_files(triton, {"cmake/llvm-hash.txt": LLVM_HASH + "\n"}, "llvm pin")
    work = tmp_path / "work"
    pytorch = work / "src" / "pytorch"
    (pytorch / ".ci/docker/ci_commit_pins").mkdir(parents=True)
    (pytorch / ".ci/docker/ci_commit_pins/triton.txt").write_text(pin + "\n")
    (pytorch / "version.txt").write_text("2.9.0a0\n")
    if version:
        (pytorch / ".ci/docker/triton_version.txt").write_text(version + "\n")
    if clone:
        (work / "src").mkdir(exist_ok=True)
        triton.rename(work / "src" / "triton")
    return Settings(work_dir=str(work), triton_mode="source"), pin


def test_the_pinned_hash_answers_ok(tmp_path: Path, httpserver: HTTPServer) -> None:
    settings, _ = _work(tmp_path, clone=True)
    httpserver.expect_request("/llvm-builds/llvm-8957e64a-ubuntu-x64.tar.gz").respond_with_data(
        b"\x1f", status=206, headers={"Content-Range": "bytes 0-0/1048576000"})
    (row,) = triton_llvm_doctor(settings, {**SUFFIX, "HOME": str(tmp_path)},
                                base=httpserver.url_for("/llvm-builds/"))
    assert (row.check, row.status) == ("Triton LLVM download", "OK")
    assert row.detail == ("llvm-8957e64a-ubuntu-x64.tar.gz answers (localhost, 1000 MiB): the "
                          "LLVM Triton's setup.py downloads")


@pytest.mark.parametrize(("mode", "status"), [("source", "FAIL"), ("auto", "WARN")])
def test_a_gone_archive_stops_a_source_build(tmp_path: Path, httpserver: HTTPServer,
                                              mode: str, status: str) -> None:
    settings, _ = _work(tmp_path, clone=True)
    settings = Settings(work_dir=settings.work_dir, triton_mode=mode)  # type: ignore[arg-type]
    httpserver.expect_request("/llvm-builds/llvm-8957e64a-ubuntu-x64.tar.gz").respond_with_data(
        b"PublicAccessNotPermitted", status=409)
    (row,) = triton_llvm_doctor(settings, {**SUFFIX, "HOME": str(tmp_path)},
                                base=httpserver.url_for("/llvm-builds/"))
    assert row.status == status
    url = httpserver.url_for("/llvm-builds/llvm-8957e64a-ubuntu-x64.tar.gz")
    assert row.detail.startswith(f"{url} answers HTTP 409")
    assert "LLVM_SYSPATH" in row.fix


def test_an_archive_never_published_for_the_pin_fails(tmp_path: Path,
                                                     httpserver: HTTPServer) -> None:
    """triton-lang/triton#4550: the pinned hash's centos-x64 archive did not exist (404)."""
    settings, _ = _work(tmp_path, clone=True)
    httpserver.expect_request("/llvm-builds/llvm-8957e64a-centos-x64.tar.gz").respond_with_data(
        b"BlobNotFound", status=404)
    (row,) = triton_llvm_doctor(settings, {"TRITON_LLVM_SYSTEM_SUFFIX": "centos-x64",
                                           "HOME": str(tmp_path)},
                                base=httpserver.url_for("/llvm-builds/"))
    url = httpserver.url_for("/llvm-builds/llvm-8957e64a-centos-x64.tar.gz")
    assert (row.status, row.detail) == (
        "FAIL", f"{url} answers HTTP 404 (NOT FOUND): Triton's setup.py would stop there")
    assert row.fix == ("unpack llvm-<rev>-<system>.tar.gz where the network reaches it and set "
                       "LLVM_SYSPATH to it in build_env, or --triton wheel")


def test_the_hash_is_read_over_http_before_the_clone(tmp_path: Path,
                                                      httpserver: HTTPServer) -> None:
    settings, pin = _work(tmp_path, clone=False)
    httpserver.expect_request(f"/triton-lang/triton/{pin}/cmake/llvm-hash.txt").respond_with_data(
        LLVM_HASH + "\n")
    httpserver.expect_request("/llvm-builds/llvm-8957e64a-ubuntu-x64.tar.gz").respond_with_data(
        b"\x1f", status=206)
    (row,) = triton_llvm_doctor(settings, {**SUFFIX, "HOME": str(tmp_path)},
                                raw_template=httpserver.url_for("/{owner}/{repo}/{commit}/{path}"),
                                base=httpserver.url_for("/llvm-builds/"))
    assert row.status == "OK" and row.detail.startswith("llvm-8957e64a-ubuntu-x64.tar.gz answers")


def test_a_triton_repo_on_this_machine_names_the_hash(tmp_path: Path,
                                                      httpserver: HTTPServer) -> None:
    settings, _ = _work(tmp_path, clone=False)
    settings = Settings(work_dir=settings.work_dir, triton_mode="source",
                        triton_repo=str(tmp_path / "triton-upstream"))
    httpserver.expect_request("/llvm-builds/llvm-8957e64a-ubuntu-x64.tar.gz").respond_with_data(
        b"\x1f", status=206)
    (row,) = triton_llvm_doctor(settings, {**SUFFIX, "HOME": str(tmp_path)},
                                base=httpserver.url_for("/llvm-builds/"))
    assert row.status == "OK" and row.detail.startswith("llvm-8957e64a-ubuntu-x64.tar.gz answers")


def test_no_hash_file_is_never_ok(tmp_path: Path, httpserver: HTTPServer) -> None:
    settings, pin = _work(tmp_path, clone=False)
    template = httpserver.url_for("/{owner}/{repo}/{commit}/{path}")
    (row,) = triton_llvm_doctor(settings, {**SUFFIX, "HOME": str(tmp_path)},
                                raw_template=template)
    assert row.status == "WARN"
    assert row.detail.startswith("cannot check: no cmake/llvm-hash.txt read for the pinned "
                                 "Triton (http://localhost:")
    assert ": HTTP 500); setup.py downloads LLVM" in row.detail  # pytest-httpserver's no-match


def test_an_unpacked_llvm_in_tritons_cache_means_no_download(tmp_path: Path,
                                                             httpserver: HTTPServer) -> None:
    settings, _ = _work(tmp_path, clone=True)
    base = httpserver.url_for("/llvm-builds/")
    cached = tmp_path / "home" / ".triton" / "llvm" / "llvm-8957e64a-ubuntu-x64"
    cached.mkdir(parents=True)
    (cached / "version.txt").write_text(f"{base}llvm-8957e64a-ubuntu-x64.tar.gz")
    (row,) = triton_llvm_doctor(settings, {**SUFFIX, "HOME": str(tmp_path / "home")}, base=base)
    assert row.status == "OK" and row.detail.startswith(
        "not downloaded: llvm-8957e64a-ubuntu-x64 is already unpacked in")
    assert len(httpserver.log) == 0  # nothing was asked


def test_skip_mode_and_no_checkout_give_no_row(tmp_path: Path) -> None:
    assert triton_llvm_doctor(Settings(work_dir=str(tmp_path), triton_mode="skip"), {}) == []
    assert triton_llvm_doctor(Settings(work_dir=str(tmp_path), triton_mode="source"),
                              SUFFIX) == []


def test_offline_is_a_warning_never_ok(tmp_path: Path) -> None:
    """This machine has no DNS for raw.githubusercontent.com: the real hash cannot be read."""
    settings, _ = _work(tmp_path, clone=False)
    (row,) = triton_llvm_doctor(settings, {**SUFFIX, "HOME": str(tmp_path)})
    if "offline" not in row.detail:
        pytest.skip(f"this machine reaches GitHub ({row.detail})")
    assert row.status == "WARN"
    assert row.detail.startswith("cannot check offline: cmake/llvm-hash.txt of the pinned "
                                 "Triton (https://raw.githubusercontent.com/triton-lang/triton/")
