"""Check `ops`: common kernels give the right numbers on the device under test.

Owns: a fixed list of small operations (matmul in fp32/fp16/bf16, conv2d, softmax, layer norm, a
reduction, indexing), each compared with a float64 reference computed on the CPU from the same
(already rounded) inputs, under a stated tolerance. Errors are measured as
max|out - ref| / max(max|ref|, 1e-30), so one tolerance works whatever the magnitude.
Tolerances: fp32 1e-4 (K <= 512 accumulations: a few ulp of 2^-24 times sqrt(K), with TF32 off),
fp16 5e-3 (output rounding 2^-11 plus reduced-precision reductions, which PyTorch allows by
default), bf16 2e-2 (output rounding 2^-8 plus the same), indexing exact.
A launch error meaning "no code for this GPU" becomes the arch diagnosis.
Must not: time anything (that is `perf`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Any

from rocmforge.verify.checks import CheckContext, no_binary_diagnosis, result
from rocmforge.verify.model import CheckResult, Status

if TYPE_CHECKING:
    from torch import Tensor

NAME = "ops"

TOLERANCE = {"float32": 1e-4, "float16": 5e-3, "bfloat16": 2e-2, "exact": 0.0}


@contextlib.contextmanager
def exact_fp32(torch: ModuleType) -> Iterator[None]:
    """TF32 off for the check (cuDNN/MIOpen convs allow it by default), restored afterwards."""
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def relative_error(torch: ModuleType, out: Tensor, ref: Tensor) -> float:
    out64, ref64 = out.detach().to("cpu", torch.float64), ref.detach().to("cpu", torch.float64)
    scale = max(float(ref64.abs().max()), 1e-30)
    return float((out64 - ref64).abs().max()) / scale


def cases(torch: ModuleType, device: str
          ) -> list[tuple[str, str, Callable[[], tuple[Tensor, Tensor]]]]:
    """(name, tolerance key, fn returning (device result, float64 CPU reference))."""
    gen = torch.Generator().manual_seed(1234)

    def randn(*shape: int, dtype: Any = torch.float32) -> Any:
        return torch.randn(*shape, generator=gen, dtype=torch.float32).to(dtype)

    def matmul(dtype: Any) -> Callable[[], tuple[Any, Any]]:
        def go() -> tuple[Any, Any]:
            a, b = randn(256, 512, dtype=dtype), randn(512, 384, dtype=dtype)
            out = a.to(device) @ b.to(device)
            return out, a.double() @ b.double()
        return go

    def conv2d() -> tuple[Any, Any]:
        x, w, bias = randn(2, 8, 32, 32), randn(16, 8, 3, 3), randn(16)
        out = torch.nn.functional.conv2d(x.to(device), w.to(device), bias.to(device), padding=1)
        return out, torch.nn.functional.conv2d(x.double(), w.double(), bias.double(), padding=1)

    def softmax() -> tuple[Any, Any]:
        x = randn(64, 1000) * 4
        return torch.softmax(x.to(device), dim=-1), torch.softmax(x.double(), dim=-1)

    def layer_norm() -> tuple[Any, Any]:
        x, w, b = randn(128, 768), randn(768), randn(768)
        f = torch.nn.functional.layer_norm
        return (f(x.to(device), (768,), w.to(device), b.to(device)),
                f(x.double(), (768,), w.double(), b.double()))

    def reduction() -> tuple[Any, Any]:
        # Sum of |x| over 2^20 elements per row: every term positive, so the relative error
        # measures the reduction tree, not cancellation.
        x = randn(4, 1 << 18).abs()
        return x.to(device).sum(dim=1), x.double().sum(dim=1)

    def indexing() -> tuple[Any, Any]:
        x = torch.arange(10_000, dtype=torch.int64)
        idx = torch.randint(0, 10_000, (4096,), generator=gen)
        mask = (x % 3) == 0
        xd, idxd = x.to(device), idx.to(device)
        picked = torch.cat([xd[idxd], xd[mask.to(device)], torch.gather(xd, 0, idxd)])
        scattered = torch.zeros(10_000, dtype=torch.int64, device=device).index_add_(
            0, idxd, torch.ones_like(idxd))
        out = torch.cat([picked, scattered])
        ref = torch.cat([x[idx], x[mask], torch.gather(x, 0, idx),
                         torch.zeros(10_000, dtype=torch.int64).index_add_(
                             0, idx, torch.ones_like(idx))])
        return out, ref.double()

    return [
        ("matmul_fp32", "float32", matmul(torch.float32)),
        ("matmul_fp16", "float16", matmul(torch.float16)),
        ("matmul_bf16", "bfloat16", matmul(torch.bfloat16)),
        ("conv2d_fp32", "float32", conv2d),
        ("softmax_fp32", "float32", softmax),
        ("layer_norm_fp32", "float32", layer_norm),
        ("sum_fp32", "float32", reduction),
        ("indexing_int64", "exact", indexing),
    ]


def run(ctx: CheckContext) -> CheckResult:
    torch = ctx.torch
    if ctx.on_gpu and not torch.cuda.is_available():
        return result(NAME, Status.SKIP, ctx.gpu_missing_reason())
    device = ctx.device
    errors: dict[str, float] = {}
    failures: list[str] = []
    with exact_fp32(torch):
        for name, kind, fn in cases(torch, device):
            try:
                out, ref = fn()
                if ctx.on_gpu:
                    torch.cuda.synchronize()
            except RuntimeError as exc:
                diagnosis = no_binary_diagnosis(ctx, exc)
                if diagnosis:
                    return result(NAME, Status.FAIL, f"{name}: {diagnosis}", errors=errors)
                failures.append(f"{name} raised {type(exc).__name__}: {exc}")
                continue
            error = relative_error(torch, out, ref)
            errors[name] = error
            if not error <= TOLERANCE[kind]:  # also catches NaN
                failures.append(f"{name} error {error:.3g} > {TOLERANCE[kind]:g}")
    figures = {"device": device, "relative_error": errors, "tolerance": TOLERANCE}
    if failures:
        return result(NAME, Status.FAIL, "; ".join(failures), **figures)
    return result(NAME, Status.PASS,
                  f"{len(errors)} ops match the float64 CPU reference on {device}", **figures)
