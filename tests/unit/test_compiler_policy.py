"""Host-compiler verdicts: the kit's ROCm guidance intersected with PyTorch's own floor."""

from __future__ import annotations

import pytest

from rocmforge.errors import UsageError
from rocmforge.knowledge.compiler_policy import (
    cmake_minimum,
    judge_compiler,
    recommended_compilers,
)
from rocmforge.knowledge.releases import pytorch_release_for, rocm_release_for

ROCM7 = rocm_release_for("7.0.2")
TORCH29 = pytorch_release_for("v2.9.1")
TORCH213 = pytorch_release_for("v2.13.0")


@pytest.mark.parametrize(
    ("torch_ref", "kind", "version", "status", "reason", "fix"),
    [
        # PyTorch 2.9 (C++17, GCC >= 9.3, no Clang check) on ROCm 7.0
        ("v2.9.1", "gcc", "11.4.0", "OK", "GCC 11 is the kit's choice for ROCm 7.0", ""),
        ("v2.9.1", "g++", "11.2.0", "OK", "meets PyTorch 2.9's floor (GCC >= 9.3)", ""),
        ("v2.9.1", "gcc", "12.2.0", "WARN", "GCC 12.2.0 is newer than the kit's choice for "
         "ROCm 7.0 (GCC 11 or Clang 15)", "invoke toolchain --gcc 11"),
        ("v2.9.1", "gcc", "14.2.0", "WARN", "libstdc++", "--allow-compiler to keep GCC 14"),
        ("v2.9.1", "gcc", "10.5.0", "WARN", "meets PyTorch 2.9's floor (GCC >= 9.3) but is not "
         "the kit's choice", "invoke toolchain --gcc 11"),
        ("v2.9.1", "gcc", "9.2.0", "FAIL", "its CMake stops with 'GCC-9.3 or newer is required'",
         "invoke toolchain --gcc 11"),
        ("v2.9.1", "gcc", "8.5.0", "FAIL", "GCC 8.5.0 is older than PyTorch 2.9 accepts",
         "invoke toolchain --gcc 11"),
        ("v2.9.1", "clang", "15.0.6", "OK", "Clang 15 is the kit's choice for ROCm 7.0", ""),
        ("v2.9.1", "clang++", "16.0.6", "WARN", "Clang 16.0.6 is not the kit's choice",
         "invoke toolchain --clang 15"),
        ("v2.9.1", "amdclang", "20.0.0", "OK", "ships with ROCm 7.0", ""),
        # PyTorch 2.13 (C++20, GCC >= 11.3, Clang >= 16)
        ("v2.13.0", "gcc", "11.4.0", "OK", "meets PyTorch 2.13's floor (GCC >= 11.3)", ""),
        ("v2.13.0", "gcc", "11.2.0", "FAIL", "PyTorch 2.13 is C++20 and its configure requires "
         "GCC >= 11.3", "install GCC 11.3 or newer, then invoke toolchain --gcc 11"),
        ("v2.13.0", "gcc", "10.5.0", "FAIL", "older than PyTorch 2.13 accepts",
         "invoke toolchain --gcc 11"),
        ("v2.13.0", "gcc", "12.2.0", "WARN", "newer than the kit's choice",
         "invoke toolchain --gcc 11"),
        ("v2.13.0", "clang", "15.0.6", "FAIL", "Clang 15 is refused by PyTorch 2.13: it is C++20 "
         "and its configure requires Clang >= 16", "invoke toolchain --clang 16"),
        ("v2.13.0", "clang", "16.0.6", "OK", "Clang 16 is the oldest Clang PyTorch 2.13 accepts",
         ""),
        ("v2.13.0", "clang", "22.1.8", "WARN", "PyTorch 2.13 needs Clang >= 16",
         "invoke toolchain --clang 16"),
        ("v2.13.0", "amdclang++", "15.0.0", "FAIL", "ROCm's clang 15 is refused by PyTorch 2.13",
         "invoke toolchain --clang 16"),
        ("v2.13.0", "gcc", "not a version", "FAIL", "could not read a version number",
         "gcc --version"),
    ],
)
def test_verdict_table(torch_ref, kind, version, status, reason, fix):
    verdict = judge_compiler(kind, version, ROCM7, pytorch_release_for(torch_ref))
    assert verdict.status == status
    assert reason in verdict.reason
    assert fix in verdict.fix
    assert (verdict.fix == "") == (status == "OK")
    assert verdict.version == version
    assert verdict.ok == (status == "OK")


def test_kind_is_normalized():
    assert judge_compiler("g++", "11.4.0", ROCM7, TORCH29).kind == "gcc"
    assert judge_compiler("clang++", "15", ROCM7, TORCH29).kind == "clang"
    assert judge_compiler("amdclang", "20", ROCM7, TORCH29).kind == "rocm-clang"


def test_unknown_kind_is_refused():
    with pytest.raises(UsageError) as info:
        judge_compiler("icc", "2021.1", ROCM7, TORCH29)
    assert '"icc" is not a compiler kind the kit knows' in str(info.value)


def test_approximate_rocm_is_named_in_the_reason():
    rocm = rocm_release_for("7.13.0")
    verdict = judge_compiler("gcc", "12.2.0", rocm, TORCH213)
    assert "ROCm 7.13.0 (treated as 7.2)" in verdict.reason


def test_debian_rocm52_guidance():
    rocm = rocm_release_for("5.2.3")
    assert judge_compiler("gcc", "12.2.0", rocm, TORCH29).status == "WARN"
    assert judge_compiler("gcc", "11.3.0", rocm, TORCH29).status == "OK"


@pytest.mark.parametrize(
    ("torch_ref", "expected"),
    [
        ("v2.4.0", (("gcc", 11), ("clang", 15))),
        ("v2.9.1", (("gcc", 11), ("clang", 15))),
        ("v2.12.0", (("gcc", 11), ("clang", 15))),
        ("v2.13.0", (("gcc", 11), ("clang", 16))),
        ("main", (("gcc", 11), ("clang", 16))),
    ],
)
def test_recommended_compilers(torch_ref, expected):
    assert recommended_compilers(ROCM7, pytorch_release_for(torch_ref)) == expected


@pytest.mark.parametrize(
    ("torch_ref", "cmake"),
    [("v2.4.0", "3.20"), ("v2.9.1", "3.20"), ("v2.10.0", "3.27"), ("v2.14.0", "3.27")],
)
def test_cmake_minimum(torch_ref, cmake):
    assert cmake_minimum(pytorch_release_for(torch_ref)) == cmake
