"""Check `features`: each optional part the manifest says was built (or left out), proven here.

Owns: one CheckResult per feature of dist/manifest.json's "features" ({name: {"built", "why"}}):
SKIP with the manifest's reason when it was left out; when built, PASS only on proof (the SDPA
backend runs and matches math, torch.distributed.is_nccl_available(), hipBLASLt among
preferred_blas_library's choices, the build config names MAGMA/Kineto), FAIL when built but
unavailable or wrong. Must not: import anything but the standard library and torch (it runs in
the target venv); a part it has no proof for is SKIP, never PASS.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rocmforge.verify.checks import CheckContext, result
from rocmforge.verify.model import CheckResult, Status

SDPA = {"flash_attention": "FLASH_ATTENTION", "mem_efficient_attention": "EFFICIENT_ATTENTION"}


def check_features(ctx: CheckContext,
                   features: Mapping[str, Mapping[str, object]]) -> list[CheckResult]:
    out = []
    for name, entry in features.items():
        check = f"feature:{name}"
        if not entry.get("built"):
            why = entry.get("why", "")
            out.append(result(check, Status.SKIP, f"left out of this build: {why}"))
            continue
        try:
            out.append(_prove(ctx, check, name))
        except Exception as exc:  # noqa: BLE001 - a torch without the API is the finding
            out.append(result(check, Status.FAIL, f"could not be proven: "
                              f"{type(exc).__name__}: {exc}"))
    return out


def _prove(ctx: CheckContext, check: str, name: str) -> CheckResult:
    torch = ctx.torch
    if name in SDPA:
        return _sdpa(ctx, check, SDPA[name])
    if name == "rccl":
        ok = bool(torch.distributed.is_available() and torch.distributed.is_nccl_available())
        return result(check, Status.PASS if ok else Status.FAIL,
                      "torch.distributed.is_nccl_available() is True" if ok else
                      "built with RCCL but torch.distributed.is_nccl_available() is False")
    if name == "distributed":
        ok = bool(torch.distributed.is_available())
        return result(check, Status.PASS if ok else Status.FAIL,
                      f"torch.distributed.is_available() is {ok}")
    if name == "hipblaslt":
        return _blas(ctx, check)
    if name == "kineto":
        ok = bool(torch.autograd.kineto_available())
        return result(check, Status.PASS if ok else Status.FAIL,
                      f"torch.autograd.kineto_available() is {ok}")
    if name == "magma":
        return _magma(ctx, check)
    return result(check, Status.SKIP, f"no runtime proof for {name} in the verify suite")


def _magma(ctx: CheckContext, check: str) -> CheckResult:
    """Built with MAGMA: torch says so (torch.cuda.has_magma), and a linear solve through the
    MAGMA backend on the device matches the CPU's."""
    torch = ctx.torch
    if not bool(getattr(torch.cuda, "has_magma", False)):
        return result(check, Status.FAIL, "built with MAGMA but torch.cuda.has_magma is False")
    if ctx.options.device != "cuda":
        return result(check, Status.SKIP,
                      "torch.cuda.has_magma is True; the MAGMA solve needs a GPU")
    previous = torch.backends.cuda.preferred_linalg_library()
    try:
        torch.backends.cuda.preferred_linalg_library("magma")
        gen = torch.Generator().manual_seed(0)
        a = torch.randn(64, 64, generator=gen, dtype=torch.float64) + 64 * torch.eye(
            64, dtype=torch.float64)
        b = torch.randn(64, 4, generator=gen, dtype=torch.float64)
        got = torch.linalg.solve(a.cuda(), b.cuda()).cpu()
        want = torch.linalg.solve(a, b)
        err = float((got - want).abs().max())
    finally:
        torch.backends.cuda.preferred_linalg_library(previous)
    ok = err < 1e-9
    return result(check, Status.PASS if ok else Status.FAIL,
                  f"torch.linalg.solve through MAGMA on the device, max error {err:.1e} against "
                  "the CPU")


def _sdpa(ctx: CheckContext, check: str, backend_name: str) -> CheckResult:
    torch = ctx.torch
    missing = ctx.gpu_missing_reason()
    if missing:
        # The build's attention kernels (AOTriton's) run on the GPU only: the CPU's own SDPA
        # kernels neither prove them (a CPU flash kernel passes) nor disprove them (a CPU torch
        # has no memory-efficient kernel at all).
        return result(check, Status.SKIP, f"{backend_name} is a GPU kernel of this build; "
                      f"not run: {missing}")
    from torch.nn.attention import SDPBackend, sdpa_kernel

    dtype = torch.float16
    tolerance = 2e-2
    gen = torch.Generator().manual_seed(11)
    q, k, v = (torch.randn(2, 4, 128, 64, generator=gen).to(dtype).to(ctx.device)
               for _ in range(3))
    sdpa = torch.nn.functional.scaled_dot_product_attention
    with sdpa_kernel(SDPBackend.MATH):
        reference = sdpa(q, k, v, is_causal=True).float().cpu()
    try:
        with sdpa_kernel(getattr(SDPBackend, backend_name)):
            out = sdpa(q, k, v, is_causal=True).float().cpu()
    except RuntimeError as exc:
        first = next((ln for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
        return result(check, Status.FAIL, f"built, but {backend_name} does not run here: "
                      f"{first.strip()[:200]}", device=ctx.device)
    diff = float((out - reference).abs().max())
    figures: dict[str, Any] = {"device": ctx.device, "max_abs_diff_vs_math": diff,
                               "tolerance_abs": tolerance}
    if not diff <= tolerance:
        return result(check, Status.FAIL, f"{backend_name} differs from math by {diff:.3g}",
                      **figures)
    return result(check, Status.PASS, f"{backend_name} runs and matches math within "
                  f"{tolerance:g}", **figures)


def _blas(ctx: CheckContext, check: str) -> CheckResult:
    torch = ctx.torch
    backend = getattr(torch, "_C", None)
    choices = getattr(backend, "_BlasBackend", None)
    skip = ("name", "value")
    names = ([n for n in dir(choices) if not n.startswith("_") and n not in skip]
             if choices is not None else [])
    if not any(n.lower() in ("cublaslt", "hipblaslt") for n in names):
        return result(check, Status.FAIL, "built with hipBLASLt, but torch.backends.cuda."
                      f"preferred_blas_library offers {names or 'no choices'}")
    if not ctx.on_gpu or not torch.cuda.is_available():
        return result(check, Status.SKIP, "preferred_blas_library lists "
                      f"{'/'.join(names)}; selecting it needs a GPU")
    try:
        chosen = torch.backends.cuda.preferred_blas_library("cublaslt")
    except RuntimeError as exc:
        return result(check, Status.FAIL, f"preferred_blas_library('cublaslt') failed: {exc}")
    return result(check, Status.PASS, f"preferred_blas_library('cublaslt') -> {chosen}")
