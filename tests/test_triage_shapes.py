"""The shapes found by scoring held-out rounds (rocmforge.triage.shapes and the rules it
widened), each on the lines of the real thread it came from, plus `alternatives` when two
classes fit and the symbol parser for MSVC/lld names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocmforge.triage import explain_text
from rocmforge.triage.shapes import symbol_name

REPO_ROOT = Path(__file__).resolve().parents[1]
R1 = REPO_ROOT / "tests" / "failures" / "rounds" / "r1" / "cases"


@pytest.mark.parametrize(("raw", "name"), [
    ("__declspec(dllimport) class std::tuple<class at::Tensor, class at::Tensor> __cdecl "
     "at::native::transform_bias_rescale_qkv_cuda(class at::Tensor const &, __int64)",
     "at::native::transform_bias_rescale_qkv_cuda"),
    ("void __cdecl at::hip::detail::group_gemm_ck(class at::Tensor const &)",
     "at::hip::detail::group_gemm_ck"),
    ("_Z39ncclNvmlDeviceGetCurrPcieLinkGenerationP13nvmlDevice_stPj",
     "ncclNvmlDeviceGetCurrPcieLinkGeneration"),
    ("hipMalloc", "hipMalloc"),
])
def test_symbol_name_is_the_qualified_name_without_decoration(raw: str, name: str) -> None:
    assert symbol_name(raw) == name


@pytest.mark.parametrize(("text", "klass", "subject", "rule"), [
    ("lld-link: error: undefined symbol: void __cdecl at::f(class at::Tensor const &)",
     "link", "at::f", "linker-undefined-symbol"),
    ("/usr/bin/ld: não foi possível localizar -lrccl\ncollect2: error: ld returned 1 exit status",
     "link", "librccl", "ld-localized-cannot-find"),
    ("cc1plus: killed by the kernel", "out-of-memory", "cc1plus", "compiler-killed"),
    ("##[warning]Available diskspace is less than 10% of total on /",
     "disk-full", "disk", "disk-full"),
    ("clang: error: cannot find ROCm device library; provide its path via '--rocm-path'",
     "rocm-install", "device library", "rocm-device-library"),
    ("ERROR Missing dependencies:\n\tcmake<4.0,>=3.20", "cmake", "cmake",
     "build-missing-dependency"),
    ("hipErrorFileNotFound at rocblas/library/src/tensile_host.cpp", "math-library",
     "rocblas", "tensile-host-error"),
])
def test_a_shape_is_read_from_its_line(text: str, klass: str, subject: str, rule: str) -> None:
    found = explain_text(text)
    assert (found.klass, found.subject, found.rule) == (klass, subject, rule)


def test_ld_in_another_language_without_the_link_failure_claims_nothing() -> None:
    assert explain_text("/usr/bin/ld: não foi possível localizar -lrccl").klass is None


def test_an_imported_target_names_its_package() -> None:
    text = ('CMake Error at Caffe2Targets.cmake:110 (set_target_properties):\n'
            '  The link interface of target "torch_hip_library" contains:\n\n'
            '    hiprtc::hiprtc\n\n  but the target was not found.  Possible reasons include:\n')
    found = explain_text(text)
    assert (found.klass, found.subject) == ("missing-component", "hiprtc")
    assert "hiprtc::hiprtc" in found.cause


def test_a_package_hint_inside_a_warning_block_claims_nothing() -> None:
    text = ('CMake Warning at x.cmake:1 (find_package):\n'
            '  "foo" provides a separate development package or SDK, be sure it has\n'
            '  been installed.\n')
    assert explain_text(text).klass is None


def test_a_loader_symbol_cut_short_names_the_library() -> None:
    found = explain_text("ImportError: /opt/rocm/lib/libMIOpen.so.1: undefined symbol: "
                         "_ZN2ck16tensor_operation6device8instance59add_device_conv")
    assert (found.klass, found.subject) == ("import", "libMIOpen.so.1")


def test_hip_header_missing_under_an_installed_torch_is_the_install_layout() -> None:
    text = ("                 from /venv/lib/python3.12/site-packages/torch/include/torch/csrc/"
            "inductor/aoti_include/cuda.h:3,\n"
            "/x/device_utils.h:14:10: fatal error: hip/hip_runtime.h: No such file or "
            "directory\n")
    found = explain_text(text)
    assert (found.klass, found.subject) == ("rocm-install", "hip/hip_runtime.h")
    assert "ROCM_HOME" in found.fix
    # The same header missing from a plain compile stays a missing component.
    assert explain_text(text.splitlines()[1]).klass == "missing-component"


def test_invalid_isa_alone_proves_no_target() -> None:
    text = ("Callback: Queue 0x7d aborting with error : HSA_STATUS_ERROR_INVALID_ISA: The "
            "instruction set architecture is invalid. code: 0x100f")
    assert explain_text(text).klass is None


def test_two_classes_fitting_give_the_stronger_and_list_the_other() -> None:
    found = explain_text((R1 / "math-library-hipblaslt-no-co-gfx1100-pytorch127169.log")
                         .read_text())
    assert (found.klass, found.subject) == ("math-library", "hipblaslt")
    assert [(a.klass, a.subject, a.rule) for a in found.alternatives] == [
        ("gpu-target", "gfx1100", "no-binary-for-gpu")]
    assert "Cannot find CO in the bundle" in found.alternatives[0].evidence.text
    done = subprocess.run(
        [sys.executable, "-m", "invoke", "triage", "-", "--json"], cwd=REPO_ROOT,
        input=(R1 / "math-library-hipblaslt-no-co-gfx1100-pytorch127169.log").read_text(),
        capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["alternatives"][0]["class"] == "gpu-target"
    assert doc["alternatives"][0]["evidence"]["line"] == 1


def test_one_class_gives_no_alternatives() -> None:
    found = explain_text("c++: fatal error: Killed signal terminated program cc1plus")
    assert found.klass == "out-of-memory" and found.alternatives == ()
    assert found.to_json()["alternatives"] == []
