"""Compile probe against the real toolchains on this machine: Debian's ROCm 5.2 (hipcc driving
clang-15) and clang-22. Expected outcomes from reference rocm-arch-toolchain.md §6.2."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rocmforge.probes.compile_probe import (
    check_device_lib,
    compile_argv,
    compile_failure_fix,
    device_lib_name,
    explain_compile_failure,
    probe_install_targets,
    probe_targets,
)
from rocmforge.probes.rocm import find_rocm_installs

FOUR = ["gfx90a", "gfx942", "gfx1151", "gfx1100"]


def test_device_lib_names() -> None:
    assert device_lib_name("gfx90a:xnack-") == "oclc_isa_version_90a.bc"
    assert device_lib_name("gfx1100") == "oclc_isa_version_1100.bc"
    assert device_lib_name("gfx11-generic") == ""


def test_device_lib_check_on_a_fake_bitcode_dir(tmp_path: Path) -> None:
    (tmp_path / "oclc_isa_version_90a.bc").write_bytes(b"BC")
    assert check_device_lib("gfx90a", tmp_path)[0] is True
    ok, reason = check_device_lib("gfx1100", tmp_path)
    assert ok is False
    assert reason.startswith("this ROCm has no device library for gfx1100")
    assert check_device_lib("gfx11-generic", tmp_path)[0] is None


def test_explain_known_failures() -> None:
    unknown = "clang: error: invalid target ID 'gfx942'; format is a processor name followed by"
    assert explain_compile_failure(unknown, "gfx942", 15) == (
        "this toolchain (LLVM 15) does not know gfx942"
    )
    nolib = "clang: error: cannot find ROCm device library for gfx1100; provide its path via"
    assert explain_compile_failure(nolib, "gfx1100", 15) == (
        "this ROCm has no device library for gfx1100"
    )
    assert explain_compile_failure("x\nfatal error: boom\n", "gfx90a", 15) == "fatal error: boom"


def test_a_target_verdict_has_no_triage_fix() -> None:
    """The fresh compile's fix must equal the kept one's (''): doctor then advises a ROCm that
    has the target, never triage's "point clang at the ROCm install"."""
    nolib = "clang: error: cannot find ROCm device library for gfx1100; provide its path via"
    unknown = "clang: error: invalid target ID 'gfx942'; format is a processor name followed by"
    assert compile_failure_fix(nolib) == ""
    assert compile_failure_fix(unknown) == ""


def test_clang_argv_is_device_only_with_rocm_paths() -> None:
    argv = compile_argv(
        Path("/r/lib/llvm/bin/clang++"),
        "gfx942",
        Path("k.hip"),
        Path("k.o"),
        driver="clang",
        rocm_root=Path("/r"),
        device_lib_dir=Path("/r/bc"),
    )
    assert argv == [
        "/r/lib/llvm/bin/clang++",
        "-x",
        "hip",
        "--rocm-path=/r",
        "--rocm-device-lib-path=/r/bc",
        "--offload-arch=gfx942",
        "--cuda-device-only",
        "-c",
        "k.hip",
        "-o",
        "k.o",
    ]


@pytest.mark.slow
@pytest.mark.needs_tool("hipcc")
def test_real_debian_rocm_52() -> None:
    usr = next(
        i
        for i in find_rocm_installs(Path("/"), os.environ, python_paths=[])
        if i.root == Path("/usr")
    )
    results = {p.target: p for p in probe_install_targets(usr, FOUR)}
    assert results["gfx90a"].compiles is True
    assert results["gfx90a"].device_lib is True
    assert results["gfx90a"].argv[0] == "/usr/bin/hipcc"
    assert "--cuda-device-only" in results["gfx90a"].argv
    for target in ("gfx942", "gfx1151"):
        assert results[target].compiles is False
        assert results[target].compile_reason == f"this toolchain (LLVM 15) does not know {target}"
    assert results["gfx1100"].compiles is False
    assert results["gfx1100"].compile_reason == "this ROCm has no device library for gfx1100"
    assert results["gfx1100"].device_lib is False


@pytest.mark.slow
@pytest.mark.needs_tool("clang++-22", "clang-offload-bundler-22")
def test_real_clang_22_accepts_all_four() -> None:
    results = probe_targets(
        FOUR,
        compiler=Path("/usr/bin/clang++-22"),
        driver="clang",
        llvm_major=22,
        extra_args=["-nogpulib", "-nogpuinc"],
    )
    assert [(p.target, p.compiles) for p in results] == [(t, True) for t in FOUR]
    assert all(p.device_lib is None for p in results)
