"""verify's `blas` check: which library a backend is on ROCm and CUDA, and how a failed first
GEMM is told. The GPU paths run on the device machine (README: what ran where); here the torch
object is a stand-in for the one boundary that cannot exist on this machine (a GPU build)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rocmforge.verify.checks import CheckContext
from rocmforge.verify.checks.blas import _failure, library_name, run
from rocmforge.verify.model import Status, VerifyOptions


def _torch(hip: str | None) -> SimpleNamespace:
    return SimpleNamespace(version=SimpleNamespace(hip=hip),
                           cuda=SimpleNamespace(is_available=lambda: True))


@pytest.mark.parametrize(("hip", "backend", "name"), [
    ("7.14.60850", "cublas", "rocBLAS"), ("7.14.60850", "cublaslt", "hipBLASLt"),
    (None, "cublas", "cuBLAS"), (None, "cublaslt", "cuBLASLt")])
def test_library_names(hip: str | None, backend: str, name: str) -> None:
    assert library_name(_torch(hip), backend) == name


def test_a_tensile_failure_names_the_library_and_the_way_out() -> None:
    ctx = CheckContext(torch=_torch("7.14.60850"), options=VerifyOptions(device="cuda"))
    # The error line's form from pytorch/pytorch#179865 (there for gfx900; path and target are
    # this test's own).
    error = RuntimeError("rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/"
                         "TensileLibrary.dat: Illegal seek for GPU arch : gfx1151")
    assert _failure(ctx, "rocBLAS", error) == (
        "rocBLAS has no kernels for this GPU (rocBLAS error: Cannot read /opt/rocm/lib/rocblas/"
        "library/TensileLibrary.dat: Illegal seek for GPU arch : gfx1151): install a ROCm whose "
        "rocBLAS ships this target's Tensile library files (`invoke doctor` lists them per "
        "target)")
    assert _failure(ctx, "hipBLASLt", RuntimeError("CUBLAS_STATUS_EXECUTION_FAILED")) == (
        "hipBLASLt: RuntimeError: CUBLAS_STATUS_EXECUTION_FAILED")


def test_cpu_device_skips() -> None:
    import torch

    checked = run(CheckContext(torch=torch, options=VerifyOptions(device="cpu")))
    assert (checked.status, checked.reason) == (Status.SKIP, "--device cpu: this check needs a GPU")
