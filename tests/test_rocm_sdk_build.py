"""Issue 31 item 4: a build against TheRock's pip ROCm SDK (the rocm_sdk setting).

The SDK wheels are stand-ins built here (tests/fixtures/rocm_sdk: real shared libraries, a real
`rocm-sdk` command) and served from a real local index (pytest-httpserver); pip, the fixture
PyTorch build (clang-22 HIP compile) and `import torch` are real."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import pytest
from sdkhelpers import make_sdk_wheels, serve_wheels
from test_build_e2e import make_fixture_repo, run_build

from rocmforge.errors import UsageError
from rocmforge.knowledge.rocm_sdk import load_sdk_table
from rocmforge.plan.rocm_sdk import init_module_text, sdk_env, sdk_plan
from rocmforge.settings import Settings

pytestmark = [pytest.mark.needs_tool("clang++-22"), pytest.mark.needs_tool("cc")]

VERSION = "7.14.1"
TARGETS = ("gfx1100", "gfx1101", "gfx1102", "gfx1103")


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
    ("", VERSION, ("gfx1100",), "rocm_sdk_version is set but rocm_sdk is not"),
    ("/opt/wheels", VERSION, ("gfx1100",), "rocm_sdk is '/opt/wheels', not a package index URL"),
    ("https://x/{family}/", VERSION, ("gfx1100", "gfx942"),
     "No one ROCm SDK family holds all of gfx1100, gfx942"),
])
def test_sdk_settings_refused_with_a_reason(sdk: str, version: str, targets: tuple[str, ...],
                                            message: str) -> None:
    with pytest.raises(UsageError) as caught:
        sdk_plan(Settings(rocm_sdk=sdk, rocm_sdk_version=version), targets, load_sdk_table(),
                 None)
    assert caught.value.what == message


def test_build_against_the_pip_sdk(tmp_path: Path, httpserver) -> None:  # noqa: ANN001
    wheels = make_sdk_wheels(tmp_path / "sdk", VERSION, "gfx110X-all", TARGETS)
    index = serve_wheels(httpserver, wheels, prefix="/v2/gfx110X-all")
    template = index.replace("gfx110X-all", "{family}")
    repo = make_fixture_repo(tmp_path / "pytorch")
    work = tmp_path / "work"
    sdk_env_vars = {"ROCMFORGE_ROCM_SDK": template, "ROCMFORGE_ROCM_SDK_VERSION": VERSION}

    first = run_build(work, repo, environ=sdk_env_vars)
    assert first.returncode == 1, first.stdout + first.stderr
    output = first.stdout + first.stderr
    assert f"The pip ROCm SDK {VERSION} is now in the build venv" in output
    assert "run the same command again" in output

    second = run_build(work, repo, environ=sdk_env_vars)
    assert second.returncode == 0, second.stdout + second.stderr
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    root = work / "venv" / "lib"
    assert manifest["rocm_sdk"]["version"] == VERSION
    assert manifest["rocm_sdk"]["index"] == index
    assert manifest["rocm_sdk"]["family"] == "gfx110X-all"
    assert manifest["rocm_sdk"]["targets"] == list(TARGETS)
    assert Path(manifest["rocm_sdk"]["root"]).name == "_rocm_sdk_devel"
    assert Path(manifest["rocm_sdk"]["root"]).is_relative_to(root)
    assert manifest["env"]["ROCM_PATH"] == manifest["rocm_sdk"]["root"]
    assert manifest["env"]["PYTORCH_BUILD_VERSION"] == f"2.8.0a0+rocm{VERSION}"
    wheel = work / "dist" / manifest["wheels"]["torch"]
    assert wheel.name.startswith(f"torch-2.8.0a0+rocm{VERSION}-")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = next(archive.read(n).decode() for n in names
                        if n.endswith(".dist-info/METADATA"))
        init = archive.read("torch/_rocm_init.py").decode()
    assert f"Requires-Dist: rocm[libraries]=={VERSION}" in metadata
    assert f"SDK_VERSION = '{VERSION}'" in init

    # The install step put the wheel into the build venv beside the SDK: importing torch loads
    # the SDK's own libraries (read back from the process's memory map).
    python = work / "venv" / "bin" / "python"
    loaded = subprocess.run(
        [str(python), "-c", "import torch; print(open('/proc/self/maps').read())"],
        capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    assert "/_rocm_sdk_core/lib/libamdhip64.so" in loaded
    assert "/_rocm_sdk_core/lib/libamd_comgr.so" in loaded
    assert "/_rocm_sdk_libraries_gfx110X_all/lib/libhipblas.so" in loaded

    # The same work dir built again without the SDK: the kit's _rocm_init.py leaves the tree
    # (a wheel without the SDK must not look for its libraries at import).
    third = run_build(work, repo)
    assert third.returncode == 0, third.stdout + third.stderr
    plain = json.loads((work / "dist" / "manifest.json").read_text())
    with zipfile.ZipFile(work / "dist" / plain["wheels"]["torch"]) as archive:
        assert "torch/_rocm_init.py" not in archive.namelist()
    assert "rocm_sdk" not in plain


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
    done = subprocess.run(argv, cwd=Path(__file__).resolve().parents[1], capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "HIP_PLATFORM": "amd", "NO_COLOR": "1"})
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(start), done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert not (tmp_path / "w").exists()
