"""Issue 31 item 4, issue 38 item 1: a build against TheRock's pip ROCm SDK (the rocm_sdk and
rocm_sdk_version settings), on today's multi-arch index and on an older release's per-family one.

The SDK packages are stand-ins built here (tests/fixtures/rocm_sdk: real shared libraries, a real
`rocm-sdk` command, the multi-arch names and extras of TheRock's index) and served from a real
local index (pytest-httpserver); pip, the fixture PyTorch build (clang-22 HIP compile) and
`import torch` are real."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import missing_real_part
from sdkhelpers import make_multi_arch_sdk, make_sdk_wheels, serve_wheels, setuptools_wheel
from test_build_e2e import make_fixture_repo, run_build

from rocmforge.errors import UsageError
from rocmforge.knowledge.rocm_sdk import load_sdk_table
from rocmforge.plan.rocm_sdk import init_module_text, sdk_env, sdk_plan
from rocmforge.settings import Settings
from rocmforge.sources.rocm_sdk_index import (
    SdkIndexLacks,
    SdkIndexUnreachable,
    check_sdk_index,
    versions_on_page,
)

pytestmark = [pytest.mark.needs_tool("clang++-22"), pytest.mark.needs_tool("cc")]

VERSION = "7.14.1"
TARGETS = ("gfx1100", "gfx1101", "gfx1102", "gfx1103")
# A multi-arch nightly (the one ROCm/TheRock#7328 names) and the targets of its stand-in.
MULTI = "10.1.0a20260811"
MULTI_TARGETS = ("gfx1100", "gfx1101", "gfx942")
MULTI_ARCH_INDEX = "https://rocm.nightlies.amd.com/whl-multi-arch/"


def test_the_version_alone_takes_the_multi_arch_index_with_a_device_extra_per_target() -> None:
    sdk = sdk_plan(Settings(rocm_sdk_version=MULTI), ["gfx1100", "gfx942:xnack+", "gfx1100"],
                   load_sdk_table(), None)
    assert sdk is not None
    assert (sdk.route, sdk.index, sdk.family, sdk.route_note) == (
        "multi-arch", MULTI_ARCH_INDEX, "", "")
    assert sdk.pip_args == ("install", "--index-url", MULTI_ARCH_INDEX,
                            f"rocm[libraries,devel,device-gfx1100,device-gfx942]=={MULTI}")
    assert sdk.device_packages == ("rocm-sdk-device-gfx1100", "rocm-sdk-device-gfx942")
    assert sdk.wheel_requires == f"rocm[libraries,device-gfx1100,device-gfx942]=={MULTI}"
    # A mirror of it: the URL given, the same extras.
    mirror = sdk_plan(Settings(rocm_sdk="https://mirror.example/whl/", rocm_sdk_version=MULTI),
                      ["gfx1100"], load_sdk_table(), None)
    assert mirror is not None and mirror.pip_args == (
        "install", "--index-url", "https://mirror.example/whl/",
        f"rocm[libraries,devel,device-gfx1100]=={MULTI}")


def test_a_release_before_multi_arch_takes_its_per_family_index_with_a_note() -> None:
    sdk = sdk_plan(Settings(rocm_sdk_version="7.12.0a20260202"), ["gfx1101"], load_sdk_table(),
                   None)
    assert sdk is not None
    assert (sdk.route, sdk.index, sdk.device_packages) == (
        "per-family", "https://rocm.nightlies.amd.com/v2/gfx110X-all/", ())
    assert sdk.pip_args[-1] == "rocm[libraries,devel]==7.12.0a20260202"
    assert sdk.route_note == ("ROCm SDK 7.12.0a20260202 predates the multi-arch index (its "
                              "first release is 7.13.0a0): it comes from its family's "
                              "per-family index")


def test_the_init_module_preloads_upstreams_list_with_hipfile() -> None:
    """TheRock's own preload list (build_prod_wheels.py) with each library's file and folder
    (_dist_info.py): hipfile is there (TheRock#7328), MIOpen is libMIOpen, liblzma sits in
    lib/rocm_sysdeps/lib."""
    sdk = sdk_plan(Settings(rocm_sdk_version=MULTI), ["gfx1100"], load_sdk_table(), None)
    assert sdk is not None
    names = [lib.name for lib in sdk.preload]
    assert names[-1] == "hipfile" and names[:3] == ["amd_comgr", "amd_smi", "amdhip64"]
    assert len(names) == 22 == len(set(names))
    text = init_module_text(sdk)
    assert "    ('hipfile', 'lib', 'libhipfile.so*'),\n" in text
    assert "    ('miopen', 'lib', 'libMIOpen.so*'),\n" in text
    assert ("    ('rocm_sysdeps_liblzma', 'lib/rocm_sysdeps/lib', 'librocm_sysdeps_liblzma.so.*'),"
            "\n") in text
    compile(text, "_rocm_init.py", "exec")


def test_sdk_plan_fills_the_family_and_pins_the_version() -> None:
    settings = Settings(rocm_sdk="https://rocm.nightlies.amd.com/v2/{family}/",
                        rocm_sdk_version=VERSION)
    sdk = sdk_plan(settings, ["gfx1100", "gfx1101"], load_sdk_table(), None)
    assert sdk is not None
    assert (sdk.index, sdk.family, sdk.requirement, sdk.wheel_requires, sdk.installed_root) == (
        "https://rocm.nightlies.amd.com/v2/gfx110X-all/", "gfx110X-all",
        "rocm[libraries,devel]==7.14.1", "rocm[libraries]==7.14.1", "")
    assert sdk_env(sdk, "2.16.0") == [
        ("PYTORCH_EXTRA_INSTALL_REQUIREMENTS", "rocm[libraries]==7.14.1"),
        ("PYTORCH_BUILD_VERSION", "2.16.0+rocm7.14.1"), ("PYTORCH_BUILD_NUMBER", "1")]
    # Without a known torch version the suffix cannot be written; the requirement still is.
    assert sdk_env(sdk, "") == [("PYTORCH_EXTRA_INSTALL_REQUIREMENTS", "rocm[libraries]==7.14.1")]
    compile(init_module_text(sdk), "_rocm_init.py", "exec")  # the module is valid Python


@pytest.mark.parametrize(("sdk", "version", "targets", "message"), [
    ("https://x/{family}/", "", ("gfx1100",), "rocm_sdk is set without rocm_sdk_version"),
    ("https://x/{family}/", "seven", ("gfx1100",), "rocm_sdk_version is 'seven', not a version"),
    ("/opt/wheels", VERSION, ("gfx1100",), "rocm_sdk is '/opt/wheels', not a package index "
     "URL: it does not start with http://, https:// or file:"),
    ("https:/mirror/whl/", VERSION, ("gfx1100",), "rocm_sdk is 'https:/mirror/whl/', not a "
     "package index URL: it names no host"),
    ("https://mirror/{famliy}/", VERSION, ("gfx1100",), "rocm_sdk is 'https://mirror/{famliy}/', "
     "not a package index URL: its only field may be {family}"),
    ("https://mirror/my whl/", VERSION, ("gfx1100",), "rocm_sdk is 'https://mirror/my whl/', not "
     "a package index URL: it holds a space"),
    ("https://x/{family}/", VERSION, ("gfx1100", "gfx942"),
     "No one ROCm SDK family holds all of gfx1100, gfx942"),
])
def test_sdk_settings_refused_with_a_reason(sdk: str, version: str, targets: tuple[str, ...],
                                            message: str) -> None:
    with pytest.raises(UsageError) as caught:
        sdk_plan(Settings(rocm_sdk=sdk, rocm_sdk_version=version), targets, load_sdk_table(),
                 None)
    assert caught.value.what == message


def test_build_against_the_multi_arch_sdk(tmp_path: Path, httpserver) -> None:  # noqa: ANN001
    """The index as upstream's: `rocm` an sdist (pip builds it, setuptools from the index), the
    rest wheels."""
    setuptools = setuptools_wheel()
    if setuptools is None:
        missing_real_part("a setuptools wheel for the local index (virtualenv's seed wheels)")
    wheels = make_multi_arch_sdk(tmp_path / "sdk", MULTI, MULTI_TARGETS, sdist=True)
    index = serve_wheels(httpserver, [*wheels, setuptools], prefix="/whl-multi-arch")
    repo = make_fixture_repo(tmp_path / "pytorch")
    work = tmp_path / "work"
    sdk_env_vars = {"ROCMFORGE_ROCM_SDK": index, "ROCMFORGE_ROCM_SDK_VERSION": MULTI}

    first = run_build(work, repo, environ=sdk_env_vars)
    assert first.returncode == 1, first.stdout + first.stderr
    output = first.stdout + first.stderr
    assert f"The pip ROCm SDK {MULTI} is now in the build venv" in output
    assert "run the same command again" in output
    pip_log = (work / "logs" / "rocm-sdk.log").read_text()
    assert f"rocm[libraries,devel,device-gfx1100]=={MULTI}" in pip_log
    assert "does not provide the extra" not in pip_log

    second = run_build(work, repo, environ=sdk_env_vars)
    assert second.returncode == 0, second.stdout + second.stderr
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    root = work / "venv" / "lib"
    sdk = manifest["rocm_sdk"]
    assert (sdk["version"], sdk["index"], sdk["route"], sdk["family"]) == (
        MULTI, index, "multi-arch", "")
    assert sdk["device_packages"] == {"rocm-sdk-device-gfx1100": MULTI}
    assert sdk["targets"] == list(MULTI_TARGETS)
    assert Path(sdk["root"]).name == "_rocm_sdk_devel"
    assert Path(sdk["root"]).is_relative_to(root)
    assert manifest["env"]["ROCM_PATH"] == sdk["root"]
    assert manifest["env"]["PYTORCH_BUILD_VERSION"] == f"2.8.0a0+rocm{MULTI}"
    wheel = work / "dist" / manifest["wheels"]["torch"]
    assert wheel.name.startswith(f"torch-2.8.0a0+rocm{MULTI}-")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = next(archive.read(n).decode() for n in names
                        if n.endswith(".dist-info/METADATA"))
        init = archive.read("torch/_rocm_init.py").decode()
    assert f"Requires-Dist: rocm[device-gfx1100,libraries]=={MULTI}" in metadata \
        or f"Requires-Dist: rocm[libraries,device-gfx1100]=={MULTI}" in metadata, metadata
    assert f"SDK_VERSION = '{MULTI}'" in init

    # The install step put the wheel into the build venv beside the SDK: importing torch loads
    # the SDK's own libraries (read back from the process's memory map), hipfile among them, and
    # those upstream keeps under another name (libMIOpen) or in another folder (liblzma).
    python = work / "venv" / "bin" / "python"
    loaded = subprocess.run(
        [str(python), "-c", "import torch; print(open('/proc/self/maps').read())"],
        capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    for path in ("/_rocm_sdk_core/lib/libamdhip64.so", "/_rocm_sdk_core/lib/libamd_comgr.so",
                 "/_rocm_sdk_core/lib/libhipfile.so.0",
                 "/_rocm_sdk_core/lib/rocm_sysdeps/lib/librocm_sysdeps_liblzma.so.5",
                 "/_rocm_sdk_libraries/lib/libhipblas.so",
                 "/_rocm_sdk_libraries/lib/libMIOpen.so.1"):
        assert path in loaded, path

    # A target added later whose device package the index lacks: the plan asks the index
    # again (the venv has no rocm-sdk-device-gfx1102) and stops before pip runs.
    added = _invoke("plan", work, "--arch", "gfx1100,gfx1102", "--rocm-sdk", index,
                    "--rocm-sdk-version", MULTI)
    assert added.returncode == 2, added.stdout + added.stderr
    assert added.stderr.startswith(f"rocmforge: The index {index} has no rocm-sdk-device-gfx1102")

    # The same work dir built again without the SDK: the kit's _rocm_init.py leaves the tree
    # (a wheel without the SDK must not look for its libraries at import).
    third = run_build(work, repo)
    assert third.returncode == 0, third.stdout + third.stderr
    plain = json.loads((work / "dist" / "manifest.json").read_text())
    with zipfile.ZipFile(work / "dist" / plain["wheels"]["torch"]) as archive:
        assert "torch/_rocm_init.py" not in archive.namelist()
    assert "rocm_sdk" not in plain


def test_an_extra_the_rocm_package_lacks_stops_the_build(tmp_path: Path,
                                                         httpserver) -> None:  # noqa: ANN001
    """ROCm/TheRock#5347's index: rocm-sdk-device-gfx1101 is there, but the rocm sdist does
    not declare device-gfx1101. Real pip builds the sdist (setuptools from the same index), only
    warns, and installs no gfx1101 device package; the rocm-sdk step stops (exit 1)."""
    setuptools = setuptools_wheel()
    if setuptools is None:
        missing_real_part("a setuptools wheel for the local index (virtualenv's seed wheels)")
    wheels = make_multi_arch_sdk(tmp_path / "sdk", MULTI, MULTI_TARGETS, declared=("gfx1100",),
                                 sdist=True)
    index = serve_wheels(httpserver, [*wheels, setuptools], prefix="/whl-multi-arch")
    work = tmp_path / "work"
    done = run_build(work, make_fixture_repo(tmp_path / "pytorch"), arch="gfx1100,gfx1101",
                     environ={"ROCMFORGE_ROCM_SDK": index, "ROCMFORGE_ROCM_SDK_VERSION": MULTI})
    assert done.returncode == 1, done.stdout + done.stderr
    log = (work / "logs" / "rocm-sdk.log").read_text()
    assert f"rocm-{MULTI}.tar.gz" in log
    assert f"WARNING: rocm {MULTI} does not provide the extra 'device-gfx1101'" in log
    assert (f"rocmforge: pip installed rocm[libraries,devel,device-gfx1100,device-gfx1101]=={MULTI}"
            f" from {index} without rocm-sdk-device-gfx1101: the build venv has no device code "
            "for gfx1101.") in done.stderr
    assert f"rocm-sdk-device-gfx1101=={MULTI}`" in done.stderr
    assert not (work / "state" / "stamps" / "rocm-sdk.json").exists()


def test_pre_release_sdks_and_a_new_pin() -> None:
    """The nightlies' versions keep their pre-release part, and a venv holding another SDK
    release than the one pinned is not taken for it (the rocm-sdk step replaces it and the build
    stops once, as on a first run)."""
    from pathlib import Path as P

    from rocmforge.plan.rocm_sdk import same_release
    from rocmforge.probes.rocm import RocmInstall, sdk_version

    assert sdk_version("7.10.0a20251021\n") == "7.10.0a20251021"
    assert sdk_version("rocm-sdk 7.14.1") == "7.14.1"
    assert same_release("7.10.0a20251021", "7.10.0a20251021")
    assert not same_release("7.14.1", "7.14.2")
    old = RocmInstall(root=P("/w/venv/lib/python3.11/site-packages/_rocm_sdk_devel"),
                      version="7.14.1", source="--rocm-path", layout="pip SDK")
    settings = Settings(rocm_sdk="https://x/{family}/", rocm_sdk_version="7.14.2")
    sdk = sdk_plan(settings, ["gfx1100"], load_sdk_table(), old)
    assert sdk is not None and sdk.installed_root == ""
    same = sdk_plan(Settings(rocm_sdk="https://x/{family}/", rocm_sdk_version="7.14.1"),
                    ["gfx1100"], load_sdk_table(), old)
    assert same is not None and same.installed_root == str(old.root)


@pytest.mark.parametrize(("args", "start"), [
    (["--arch", "gfx1100", "--rocm-sdk", "https://x/{family}/"],
     "rocmforge: rocm_sdk is set without rocm_sdk_version."),
    (["--rocm-sdk", "https://x/{family}/", "--rocm-sdk-version", "7.14.1", "--arch",
      "gfx1100,gfx942"], "rocmforge: No one ROCm SDK family holds all of gfx1100, gfx942."),
    (["--arch", "gfx1100", "--with", "./no-such-extension"],
     "rocmforge: './no-such-extension' (--with) names no folder: "),
])
def test_bad_sdk_and_extension_input_is_one_paragraph_exit_2(tmp_path: Path, args: list[str],
                                                             start: str) -> None:
    import os
    import sys

    argv = [sys.executable, "-m", "invoke", "build", "-w", str(tmp_path / "w"), *args]
    done = subprocess.run(argv, cwd=Path(__file__).resolve().parents[2], capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "HIP_PLATFORM": "amd", "NO_COLOR": "1"})
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(start), done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert not (tmp_path / "w").exists()


def _invoke(task: str, work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    import os
    import sys

    return subprocess.run([sys.executable, "-m", "invoke", task, "-w", str(work), *args],
                          cwd=Path(__file__).resolve().parents[2], capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "HIP_PLATFORM": "amd", "NO_COLOR": "1",
                               "COLUMNS": "80"})


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(("case", "code", "start"), [
    ("malformed", 2, "rocmforge: rocm_sdk is 'https:/mirror/whl/', not a package index URL: it "
     "names no host."),
    ("unreachable", 3, "rocmforge: The pip ROCm SDK index http://127.0.0.1:{port}/whl/ could "
     "not be reached."),
    ("no such target", 2, "rocmforge: The index {index} has no rocm-sdk-device-gfx1102: it "
     "publishes no device code for gfx1102."),
    ("no such version", 2, "rocmforge: The index {index} has no rocm 10.1.0a20260901."),
    ("not an SDK index", 2, "rocmforge: The index {other} has no rocm project, so it is no pip "
     "ROCm SDK index."),
])
def test_sdk_index_failures_are_one_paragraph_before_anything_is_made(
        tmp_path: Path, httpserver, case: str, code: int, start: str) -> None:  # noqa: ANN001
    """Each failure is said by the plan, which asks the index before any step: its own exit
    code, one paragraph, no work dir (no venv, no checkout)."""
    wheels = make_multi_arch_sdk(tmp_path / "sdk", MULTI, MULTI_TARGETS)
    index = serve_wheels(httpserver, wheels, prefix="/whl-multi-arch")
    httpserver.expect_request("/other/rocm/").respond_with_data("not found", status=404)
    port = _closed_port()
    url, version, arch = {
        "malformed": ("https:/mirror/whl/", MULTI, "gfx1100"),
        "unreachable": (f"http://127.0.0.1:{port}/whl/", MULTI, "gfx1100"),
        "no such target": (index, MULTI, "gfx1100,gfx1102"),
        "no such version": (index, "10.1.0a20260901", "gfx1100"),
        "not an SDK index": (httpserver.url_for("/other") + "/", MULTI, "gfx1100"),
    }[case]
    work = tmp_path / "w"
    for task in ("plan", "build"):
        done = _invoke(task, work, "--arch", arch, "--rocm-sdk", url, "--rocm-sdk-version",
                       version)
        assert done.returncode == code, done.stdout + done.stderr
        expected = start.format(port=port, index=index, other=url)
        assert done.stderr.startswith(expected), done.stderr
        assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
        assert not work.exists()


def test_the_plan_shows_the_exact_pip_line(tmp_path: Path, httpserver) -> None:  # noqa: ANN001
    wheels = make_multi_arch_sdk(tmp_path / "sdk", MULTI, MULTI_TARGETS)
    index = serve_wheels(httpserver, wheels, prefix="/whl-multi-arch")
    done = _invoke("plan", tmp_path / "w", "--arch", "gfx1100,gfx942", "--rocm-sdk", index,
                   "--rocm-sdk-version", MULTI, "--json")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    step = next(s for s in plan["steps"] if s["name"] == "rocm-sdk")
    python = str(tmp_path / "w" / "venv" / "bin" / "python")
    assert step["effects"]["commands"][0] == [
        python, "-m", "pip", "install", "--index-url", index,
        f"rocm[libraries,devel,device-gfx1100,device-gfx942]=={MULTI}"]
    assert plan["settings"]["rocm_sdk"]["device_packages"] == [
        "rocm-sdk-device-gfx1100", "rocm-sdk-device-gfx942"]
    assert (f"the build venv gets the pip ROCm SDK from the multi-arch index first: `{python} -m "
            f"pip install --index-url {index} 'rocm[libraries,devel,device-gfx1100,device-gfx942]"
            f"=={MULTI}'`;") in " ".join(plan["notes"])
    assert not (tmp_path / "w").exists()


def test_versions_on_a_project_page() -> None:
    """Upstream's `rocm` is an sdist (ROCm/TheRock#5351's log: rocm-7.14.0a20260519.tar.gz),
    its rocm-sdk-* packages wheels; other projects' files and odd names are left out."""
    from packaging.version import Version

    files = ("rocm-7.14.0a20260519.tar.gz", "rocm-10.1.0a20260811.tar.gz",
             "rocm-10.1.0a20260811-py3-none-any.whl", "rocm_sdk_core-10.1.0-py3-none-any.whl",
             "index.html", "rocm-notaversion.zip")
    assert versions_on_page(files, "rocm") == (Version("10.1.0a20260811"),
                                               Version("7.14.0a20260519"))
    assert versions_on_page(
        ("rocm_sdk_device_gfx950-7.14.0a20260519-py3-none-linux_x86_64.whl",),
        "rocm-sdk-device-gfx950") == (Version("7.14.0a20260519"),)


def test_a_per_family_index_is_asked_for_the_release_only(tmp_path: Path,
                                                          httpserver) -> None:  # noqa: ANN001
    wheels = make_sdk_wheels(tmp_path / "sdk", VERSION, "gfx110X-all", TARGETS)
    index = serve_wheels(httpserver, wheels, prefix="/v2/gfx110X-all")
    check_sdk_index(index, VERSION, ())
    with pytest.raises(SdkIndexLacks) as caught:
        check_sdk_index(index, "7.14.2", (), other_route="a release from 7.13.0a0 on is on the "
                        "multi-arch index")
    assert caught.value.exit_code == 2
    assert caught.value.paragraph() == (
        f"The index {index} has no rocm 7.14.2. Its rocm page lists 1 release(s) and not this "
        "one. Fix: pass --rocm-sdk-version with a release it has (newest: 7.14.1); a release "
        "from 7.13.0a0 on is on the multi-arch index.")


def test_a_file_index_is_read_from_disk(tmp_path: Path) -> None:
    """pip takes a file: index too; the kit reads its PEP 503 pages from the folder."""
    root = tmp_path / "index"
    for project, name in (("rocm", f"rocm-{MULTI}.tar.gz"),
                          ("rocm-sdk-device-gfx1100",
                           f"rocm_sdk_device_gfx1100-{MULTI}-py3-none-linux_x86_64.whl")):
        (root / project).mkdir(parents=True)
        (root / project / "index.html").write_text(
            f'<html><body><a href="../../files/{name}#sha256=00">{name}</a></body></html>')
    check_sdk_index(root.as_uri() + "/", MULTI, ("rocm-sdk-device-gfx1100",))
    with pytest.raises(SdkIndexLacks, match="has no rocm-sdk-device-gfx942: it publishes no "
                       "device code for gfx942"):
        check_sdk_index(root.as_uri() + "/", MULTI, ("rocm-sdk-device-gfx942",))
    with pytest.raises(SdkIndexUnreachable) as caught:
        check_sdk_index((tmp_path / "nothing").as_uri() + "/", MULTI, ())
    assert caught.value.exit_code == 3


def test_without_hipfile_in_the_preload_list_the_library_that_needs_it_fails_to_load(
        tmp_path: Path) -> None:
    """ROCm/TheRock#7328's failure, reproduced with real ELF files: a library that NEEDs
    libhipfile.so.0 (libtorch_python.so since pytorch/pytorch#191069), whose RUNPATH does not
    reach the SDK, loads only when _rocm_init.py preloaded libhipfile with RTLD_GLOBAL. The
    kit's old list (no hipfile) gives the error of that issue's log; the list now does not."""
    import dataclasses

    from sdkhelpers import shared_library

    site = tmp_path / "site"
    core = site / "_rocm_sdk_core" / "lib"
    core.mkdir(parents=True)
    (core / "libamdhip64.so").write_bytes(shared_library(tmp_path / "b", "amdhip64"))
    (core / "libhipfile.so.0").write_bytes(
        shared_library(tmp_path / "b", "hipfile", soname="libhipfile.so.0"))
    link = tmp_path / "link"
    link.mkdir()
    (link / "libhipfile.so").symlink_to(core / "libhipfile.so.0")
    consumer = tmp_path / "libtorch_python_stand_in.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(consumer),
                    str(Path(__file__).parents[1] / "fixtures" / "rocm_sdk" / "lib.c"),
                    '-DLIBRARY_NAME="torch_python"', f"-L{link}", "-Wl,--no-as-needed",
                    "-lhipfile"], check=True)
    needed = subprocess.run(["readelf", "-d", str(consumer)], capture_output=True, text=True,
                            check=True).stdout
    assert "Shared library: [libhipfile.so.0]" in needed

    sdk = sdk_plan(Settings(rocm_sdk_version=MULTI), ["gfx1100"], load_sdk_table(), None)
    assert sdk is not None
    old = dataclasses.replace(sdk, preload=tuple(lib for lib in sdk.preload
                                                 if lib.name != "hipfile"))
    results = {}
    for name, plan in (("old", old), ("now", sdk)):
        (site / f"init_{name}.py").write_text(init_module_text(plan))
        code = (f"import sys, ctypes; sys.path.insert(0, {str(site)!r}); "
                f"import init_{name} as m; m.initialize(); ctypes.CDLL({str(consumer)!r}); "
                "print('loaded')")
        results[name] = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True,
            env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert results["old"].returncode == 1
    assert "libhipfile.so.0: cannot open shared object file: No such file or directory" in (
        results["old"].stderr)
    assert results["now"].returncode == 0, results["now"].stderr
    assert results["now"].stdout == "loaded\n"
