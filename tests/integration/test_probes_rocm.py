"""ROCm install probe: fake /opt/rocm trees under a temp root (the AMD boundary), plus the real
Debian ROCm 5.2 under /usr on this machine."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from rocmforge.errors import ProbeError
from rocmforge.probes.rocm import (
    find_rocm_installs,
    parse_hip_version_header,
    parse_hipcc_version,
    parse_version_file,
    path_variable_warnings,
    select_rocm,
)

HIPCC_52_OUTPUT = """HIP version: 5.2.21153-0
Debian clang version 15.0.6
Target: x86_64-pc-linux-gnu
Thread model: posix
InstalledDir: /usr/bin
"""


def make_fake_rocm(root: Path, version: str, *, llvm_major: int = 19, hipcc: bool = True) -> Path:
    """A fake classic ROCm tree (named fake: there is no ROCm >= 6 on this machine)."""
    tree = root / "opt" / f"rocm-{version}"
    (tree / ".info").mkdir(parents=True)
    (tree / ".info" / "version").write_text(f"{version}-1234\n")
    llvm_bin = tree / "lib" / "llvm" / "bin"
    llvm_bin.mkdir(parents=True)
    (llvm_bin / "clang++").write_text("#!/bin/sh\nexit 0\n")
    (tree / "lib" / "llvm" / "lib" / "clang" / str(llvm_major)).mkdir(parents=True)
    bitcode = tree / "lib" / "llvm" / "amdgcn" / "bitcode"
    bitcode.mkdir(parents=True)
    (bitcode / "oclc_isa_version_942.bc").write_bytes(b"BC")
    if hipcc:
        (tree / "bin").mkdir()
        script = tree / "bin" / "hipcc"
        script.write_text("#!/bin/sh\necho 'HIP version: 9.9.0'\n")
        script.chmod(0o755)
    return tree


@pytest.fixture
def fake_root(tmp_path: Path) -> Path:
    make_fake_rocm(tmp_path, "6.4.1", llvm_major=19)
    make_fake_rocm(tmp_path, "7.0.2", llvm_major=20)
    (tmp_path / "opt" / "rocm").symlink_to("rocm-7.0.2")
    (tmp_path / "opt" / "rocmforge-not-rocm").mkdir()
    return tmp_path


def test_parsers() -> None:
    assert parse_version_file("6.4.0-15396\n") == "6.4.0"
    assert parse_version_file("7.10.1") == "7.10.1"
    assert parse_version_file("garbage") == ""
    assert (
        parse_hip_version_header(
            "#define HIP_VERSION_MAJOR 5\n#define HIP_VERSION_MINOR 2\n"
            "#define HIP_VERSION_PATCH 21153\n"
        )
        == "5.2"
    )
    report = parse_hipcc_version(HIPCC_52_OUTPUT)
    assert (report.hip_version, report.llvm_major, report.installed_dir) == ("5.2", 15, "/usr/bin")


def test_finds_each_opt_tree_once_with_version_and_llvm(fake_root: Path) -> None:
    installs = find_rocm_installs(fake_root, {"PATH": ""}, python_paths=[])
    by_version = {i.version: i for i in installs}
    assert set(by_version) == {"6.4.1", "7.0.2"}  # /opt/rocm is the same tree as 7.0.2
    new = by_version["7.0.2"]
    assert new.version_source == ".info/version"
    assert new.llvm_major == 20
    assert new.clang == new.root / "lib/llvm/bin/clang++"
    assert new.device_lib_dir == new.root / "lib/llvm/amdgcn/bitcode"
    assert new.source == "/opt/rocm*"


def test_select_prefers_opt_rocm_link_then_newest(fake_root: Path) -> None:
    installs = find_rocm_installs(fake_root, {"PATH": ""}, python_paths=[])
    assert select_rocm(installs, "", {}).version == "7.0.2"


def test_select_honours_rocm_path_and_flag(fake_root: Path) -> None:
    old = str(fake_root / "opt/rocm-6.4.1")
    environ = {"ROCM_PATH": old, "PATH": ""}
    installs = find_rocm_installs(fake_root, environ, python_paths=[])
    assert select_rocm(installs, "", environ).version == "6.4.1"
    new = str(fake_root / "opt/rocm-7.0.2")
    installs = find_rocm_installs(fake_root, environ, requested=new, python_paths=[])
    assert select_rocm(installs, new, environ).version == "7.0.2"


def test_rocm_path_that_does_not_exist_is_refused(fake_root: Path) -> None:
    missing = str(fake_root / "opt/rocm-9.9")
    installs = find_rocm_installs(fake_root, {}, requested=missing, python_paths=[])
    with pytest.raises(ProbeError) as err:
        select_rocm(installs, missing, {})
    assert f"The ROCm path {missing} given by --rocm-path does not exist" in str(err.value)
    assert "Fix: pass --rocm-path" in str(err.value)
    assert err.value.exit_code == 2


def test_rocm_path_that_is_not_rocm_is_refused(fake_root: Path) -> None:
    not_rocm = str(fake_root / "opt/rocmforge-not-rocm")
    with pytest.raises(ProbeError, match="given by ROCM_PATH is not a ROCm install"):
        select_rocm(find_rocm_installs(fake_root, {}, python_paths=[]), "", {"ROCM_PATH": not_rocm})


def test_hip_path_pointing_elsewhere_warns(fake_root: Path) -> None:
    environ = {
        "ROCM_PATH": str(fake_root / "opt/rocm-6.4.1"),
        "HIP_PATH": str(fake_root / "opt/rocm-7.0.2"),
    }
    installs = find_rocm_installs(fake_root, environ, python_paths=[])
    (warning,) = path_variable_warnings(installs, environ)
    assert "belongs to a different install than ROCM_PATH" in warning
    same = {"ROCM_PATH": str(fake_root / "opt/rocm"), "HIP_PATH": str(fake_root / "opt/rocm-7.0.2")}
    assert path_variable_warnings(installs, same) == ()


def test_hipcc_on_path_owner(fake_root: Path) -> None:
    environ = {"PATH": str(fake_root / "opt/rocm-6.4.1/bin")}
    installs = find_rocm_installs(fake_root, environ, python_paths=[])
    owners = [i.version for i in installs if i.hipcc_on_path]
    assert owners == ["6.4.1"]


def test_version_from_hipcc_when_no_version_file(tmp_path: Path) -> None:
    tree = make_fake_rocm(tmp_path, "6.2.0")
    shutil.rmtree(tree / ".info")
    (installed,) = find_rocm_installs(tmp_path, {}, python_paths=[])
    assert (installed.version, installed.version_source) == ("9.9", "hipcc --version")


def test_pip_sdk_package_is_found(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    sdk = site / "_rocm_sdk_core"
    (sdk / "lib/llvm/bin").mkdir(parents=True)
    (sdk / "lib/llvm/bin/clang++").write_text("")
    (sdk / "lib/llvm/bin/clang").write_text("")
    (sdk / "lib/llvm/lib/clang/20").mkdir(parents=True)
    (install,) = find_rocm_installs(tmp_path / "empty", {}, python_paths=[str(site)])
    assert (install.source, install.llvm_major) == ("pip rocm-sdk", 20)


@pytest.mark.needs_tool("hipcc")
def test_real_debian_rocm_under_usr() -> None:
    installs = find_rocm_installs(Path("/"), {"PATH": os.environ["PATH"]}, python_paths=[])
    usr = next(i for i in installs if i.root == Path("/usr"))
    assert usr.version == "5.2"
    assert usr.version_source == "hip_version.h"
    assert usr.llvm_major == 15
    assert usr.clang == Path("/usr/bin/clang++-15")
    assert usr.device_lib_dir == Path("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode")
    assert usr.hipcc_on_path is True


def test_therock_streams_under_opt_rocm_are_each_an_install(tmp_path: Path) -> None:
    """Issue 31: TheRock installs each stream as /opt/rocm/core-7.14, /opt/rocm/core-10.0; the
    probe looked at /opt/rocm itself only (a fake tree: no TheRock install here)."""
    made = [make_fake_rocm(tmp_path / "stage", v, llvm_major=m) for v, m in
            (("7.14.1", 23), ("10.1.0", 23))]
    (tmp_path / "opt" / "rocm").mkdir(parents=True)
    for tree, name in zip(made, ("core-7.14", "core-10.0"), strict=True):
        tree.rename(tmp_path / "opt" / "rocm" / name)
    installs = find_rocm_installs(tmp_path, {"PATH": ""}, python_paths=[])
    assert {(i.root.name, i.version, i.llvm_major) for i in installs} >= {
        ("core-7.14", "7.14.1", 23), ("core-10.0", "10.1.0", 23)}
