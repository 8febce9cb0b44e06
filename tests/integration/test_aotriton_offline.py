"""AOTriton fetched ahead, then an offline fixture build; and the same build without the fetch.

The fixture PyTorch (tests/fixtures/fakepytorch) has a cmake/External/aotriton.cmake that behaves
as PyTorch's did in the releases that read .ci/docker/aotriton_version.txt: with
AOTRITON_INSTALLED_PREFIX it links against <prefix>/lib and <prefix>/include and downloads
nothing; without it, real CMake's ExternalProject downloads the runtime tarball at build time.
Its attention step runs only when USE_FLASH_ATTENTION / USE_MEM_EFF_ATTENTION is 1 (the fixture's
one departure from PyTorch's defaults, so the other fixture builds stay fast and offline); this
test asks for it with the `features` setting (flash_attention=on).

Real parts: a real AOTriton-shaped tarball (aotriton/lib/libaotriton_v2.so compiled here with gcc
from tests/fixtures/aotriton/runtime.c, aotriton/include/aotriton/flash.h), its sha256 written
into the fixture tree's aotriton_version.txt, a real local HTTP server (pytest-httpserver) that
first answers 403 (a firewall's proxy), then serves a corrupt file, then the real one, and is
stopped before the offline build (its port refuses connections: any download would fail).

Order (one work dir, as a user would go): build without fetch -> FAIL naming AOTriton's download
and `invoke fetch`; fetch with a wrong file -> exit 3, nothing unpacked; fetch -> prefix; server
stopped; build -> PASS, the wheel holds the prefix's libaotriton_v2.so and a library linked to it.
"""

from __future__ import annotations

import ctypes
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from gitfixtures import commit_files, git
from test_build_e2e import REPO_ROOT, build_argv, build_env, make_fixture_repo, run_build

pytestmark = [pytest.mark.slow,
              pytest.mark.needs_tool("clang-22", "clang-offload-bundler-22", "git", "cmake",
                                     "gcc")]

SOURCES = REPO_ROOT / "tests" / "fixtures" / "aotriton"
VERSION_TXT = ".ci/docker/aotriton_version.txt"
# The fixture's aotriton_version.txt lists rocm6.2 and rocm6.3; the ROCm here (Debian's HIP 5.2,
# /usr/include/hip/hip_version.h) is below the range, so aotriton.cmake and the kit both clamp it
# to the first entry.
TARBALL = "aotriton-0.10b-manylinux_2_28_x86_64-rocm6.2-shared.tar.gz"
URL_PATH = f"/0.10b/{TARBALL}"


def make_tarball(tmp: Path) -> bytes:
    """AOTriton's runtime layout: one top folder `aotriton/` holding lib/ and include/."""
    lib = tmp / "libaotriton_v2.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", f"-I{SOURCES / 'include'}",
                    str(SOURCES / "runtime.c"), "-o", str(lib)], check=True)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(lib, arcname="aotriton/lib/libaotriton_v2.so")
        tar.add(SOURCES / "include" / "aotriton" / "flash.h",
                arcname="aotriton/include/aotriton/flash.h")
    return buffer.getvalue()


def with_sha(repo: Path, sha: str) -> None:
    """Write the tarball's sha256 into the tree's aotriton_version.txt (rocm6.2 entry) and move
    the v2.8.0 tag to that commit."""
    lines = (repo / VERSION_TXT).read_text().splitlines()
    lines[4] = f"{sha};{'0' * 64}"
    commit_files(repo, {VERSION_TXT: "\n".join(lines) + "\n"}, "fixture aotriton sha256")
    git("tag", "-f", "v2.8.0", cwd=repo)


def fetch_argv(work: Path, base_url: str) -> list[str]:
    return [sys.executable, "-m", "invoke", "fetch", "--arch", "gfx1100", "--work-dir", str(work),
            "--base-url", base_url]


def fetch_env(repo: Path) -> dict[str, str]:
    env = build_env()
    env.update(ROCMFORGE_PYTORCH_REPO=str(repo), ROCMFORGE_PYTORCH_REF="v2.8.0")
    return env


def test_fetch_then_offline_build_and_without_fetch_a_clear_failure(tmp_path: Path) -> None:
    from pytest_httpserver import HTTPServer
    from werkzeug import Response

    tarball = make_tarball(tmp_path)
    sha = hashlib.sha256(tarball).hexdigest()
    repo = make_fixture_repo(tmp_path / "pytorch")
    with_sha(repo, sha)
    work = tmp_path / "work"
    server = HTTPServer()
    server.start()
    base = server.url_for("/")
    answers: list[Response] = [Response("proxy: forbidden", status=403)]
    server.expect_request(URL_PATH).respond_with_handler(lambda _request: answers[-1])
    environ = {"ROCMFORGE_FEATURES": "flash_attention=on"}
    extra = f"PYTORCH_AOTRITON_BASE_URL={base}"
    try:
        # 1. No fetch: the build's own download is refused -> the build fails, triage says why.
        failed = run_build(work, repo, extra=extra, environ=environ)
        out = failed.stdout + failed.stderr
        assert failed.returncode == 1, out[-3000:]
        assert "export USE_FLASH_ATTENTION=1" in out
        assert "export AOTRITON_INSTALLED_PREFIX" not in out
        assert ("The build could not download AOTriton "
                f"({base}0.10b/{TARBALL})") in out, out[-3000:]
        assert "(known failure `aotriton-download`). Fix: run `invoke fetch`" in out
        build_log = (work / "logs" / "build.log").read_text()
        assert f"error: downloading '{base}0.10b/{TARBALL}' failed" in build_log
        assert "status_code: 22" in build_log  # curl: the HTTP answer was an error (403)
        assert not (work / "src" / "pytorch" / "torch" / "lib" / "libaotriton_v2.so").exists()
        assert not (work / "dist" / "manifest.json").exists()

        # 2. A fetch that receives another file: exit 3, AOTriton named, nothing unpacked.
        answers.append(Response(tarball[: len(tarball) // 2] + b"x" * 64))
        bad = subprocess.run(fetch_argv(work, base), cwd=REPO_ROOT, env=fetch_env(repo),
                             capture_output=True, text=True, timeout=120)
        assert bad.returncode == 3, bad.stdout + bad.stderr  # README "Exit codes"
        assert (f"Fetching AOTriton 0.10b's runtime failed: The download of {TARBALL} from "
                f"{base}0.10b/{TARBALL} does not match its published sha256") in bad.stderr
        assert f"expected {sha}" in bad.stderr
        assert "tree: cmake/External/aotriton.cmake" in bad.stderr
        assert "Traceback" not in bad.stderr
        assert not (work / "aotriton").exists() or list((work / "aotriton").iterdir()) == []
        assert not (work / "downloads").exists() or list((work / "downloads").iterdir()) == []

        # 2b. While a build holds the work dir (a real process holding its lock), fetch waits
        # its turn: exit 3, nothing downloaded (issue 30 item 6).
        answers.append(Response(tarball))
        from test_lock import _build_holding

        from rocmforge.workdir import workdir_for

        with _build_holding(workdir_for(work), tmp_path) as holder:
            locked = subprocess.run(fetch_argv(work, base), cwd=REPO_ROOT, env=fetch_env(repo),
                                    capture_output=True, text=True, timeout=120)
        assert locked.returncode == 3, locked.stdout + locked.stderr
        assert f"Another build (pid {holder.pid}" in locked.stderr
        served_before = len(server.log)

        # 3. The fetch with the real file: one prefix with lib/ and include/. What a killed
        # unpack left (a half-filled prefix, a raw .unpack. folder) goes first (item 8).
        killed = [work / "aotriton" / ".0.10b-rocm6.2-x86_64.k1ll3d00",
                  work / "aotriton" / ".unpack.k1ll3d00"]
        for folder in killed:
            (folder / "lib").mkdir(parents=True)
        good = subprocess.run(fetch_argv(work, base), cwd=REPO_ROOT, env=fetch_env(repo),
                              capture_output=True, text=True, timeout=120)
        assert good.returncode == 0, good.stdout + good.stderr
        assert served_before == len(server.log) - 1
        for folder in killed:
            assert not folder.exists()
            assert f"removed {folder}: left by a run that was killed" in good.stderr
        prefix = work / "aotriton" / "0.10b-rocm6.2-x86_64"
        assert f"AOTriton 0.10b for rocm6.2 unpacked in {prefix}" in good.stderr
        assert ("ROCm 5.2 is not in AOTriton 0.10b's list (rocm6.2, rocm6.3); like "
                "aotriton.cmake, the kit took the nearest end, rocm6.2") in good.stderr
        assert (prefix / "include" / "aotriton" / "flash.h").is_file()
        served = len(server.log)
    finally:
        server.clear()
        server.stop()  # from here on the port refuses connections: the build must not download

    # 4. Offline: the plan points the build at the prefix; configure uses it, nothing downloads.
    plan = subprocess.run([*[a if a != "build" else "plan" for a in build_argv(work, repo,
                                                                              "gfx1100")],
                           "--json"], cwd=REPO_ROOT, env=build_env(extra, **environ),
                          capture_output=True, text=True, timeout=120)
    assert plan.returncode == 0, plan.stderr
    features = {f["name"]: f for f in json.loads(plan.stdout)["features"]}
    assert features["flash_attention"]["variables"] == {
        "USE_FLASH_ATTENTION": "1", "AOTRITON_INSTALLED_PREFIX": str(prefix)}
    assert f"AOTriton fetched ({prefix})" in features["flash_attention"]["why"]

    offline = run_build(work, repo, extra=extra, environ=environ)
    out = offline.stdout + offline.stderr
    assert offline.returncode == 0, out[-3000:]
    assert f"export AOTRITON_INSTALLED_PREFIX={prefix}" in out
    configure_log = (work / "logs" / "configure.log").read_text()
    assert f"-- Using Preinstalled AOTriton at {prefix}" in configure_log
    assert "Downloading" not in (work / "logs" / "build.log").read_text()
    assert served == 3  # 403, the corrupt file, the real file; nothing after the server stopped
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    assert manifest["env"]["AOTRITON_INSTALLED_PREFIX"] == str(prefix)
    assert manifest["features"]["flash_attention"]["built"] is True
    assert f"AOTriton fetched ({prefix})" in manifest["features"]["flash_attention"]["why"]
    wheel = work / "dist" / manifest["wheels"]["torch"]
    unpacked = tmp_path / "wheel"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(unpacked)
    with tarfile.open(fileobj=io.BytesIO(tarball)) as tar:
        member = tar.extractfile("aotriton/lib/libaotriton_v2.so")
        assert member is not None
        assert (unpacked / "torch/lib/libaotriton_v2.so").read_bytes() == member.read()
    # The library the fixture links against the prefix's lib/ + include/ calls into it.
    ctypes.CDLL(str(unpacked / "torch/lib/libaotriton_v2.so"), mode=ctypes.RTLD_GLOBAL)
    sdpa = ctypes.CDLL(str(unpacked / "torch/lib/libtorch_sdpa.so"))
    assert sdpa.torch_sdpa_aotriton_version() == 1010
    shutil.rmtree(unpacked)
    assert os.environ.get("AOTRITON_INSTALLED_PREFIX") is None  # nothing leaked into the tests
