"""Check `attention`: scaled_dot_product_attention through each SDPA backend.

Owns: running SDPA under `torch.nn.attention.sdpa_kernel(<backend>)` for math, memory-efficient,
flash and cuDNN (on ROCm, flash and efficient come from AOTriton/CK when built in), recording
which backends are available here, and comparing each with the math backend. Math itself is
compared with a float64 CPU reference. Tolerance: max abs difference 2e-2 in fp16 on the GPU
(outputs are O(1); fp16 keeps ~3 decimal digits and fused kernels reorder the softmax sums),
1e-5 in fp32 on the CPU.
Must not: decide performance; a missing fused backend is a WARN on a GPU, not a FAIL.
"""

from __future__ import annotations

from typing import Any

from rocmforge.verify.checks import CheckContext, no_binary_diagnosis, result
from rocmforge.verify.model import CheckResult, Status

NAME = "attention"

BACKENDS = ("MATH", "EFFICIENT_ATTENTION", "FLASH_ATTENTION", "CUDNN_ATTENTION")


def run(ctx: CheckContext) -> CheckResult:
    torch = ctx.torch
    if ctx.on_gpu and not torch.cuda.is_available():
        return result(NAME, Status.SKIP, ctx.gpu_missing_reason())
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as exc:
        return result(NAME, Status.SKIP, f"torch.nn.attention is missing ({exc})")
    device = ctx.device
    dtype = torch.float16 if ctx.on_gpu else torch.float32
    tolerance = 2e-2 if ctx.on_gpu else 1e-5
    gen = torch.Generator().manual_seed(7)
    q, k, v = (torch.randn(2, 4, 128, 64, generator=gen).to(dtype) for _ in range(3))
    sdpa = torch.nn.functional.scaled_dot_product_attention
    reference = sdpa(q.double(), k.double(), v.double(), is_causal=True)

    outputs: dict[str, Any] = {}
    unavailable: dict[str, str] = {}
    for backend_name in BACKENDS:
        backend = getattr(SDPBackend, backend_name, None)
        if backend is None:
            unavailable[backend_name] = "not in this torch's SDPBackend"
            continue
        try:
            with sdpa_kernel(backend):
                out = sdpa(q.to(device), k.to(device), v.to(device), is_causal=True)
            if ctx.on_gpu:
                torch.cuda.synchronize()
            outputs[backend_name] = out.float().cpu()
        except RuntimeError as exc:
            diagnosis = no_binary_diagnosis(ctx, exc)
            if diagnosis:
                return result(NAME, Status.FAIL, f"{backend_name}: {diagnosis}")
            first = next((ln for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
            unavailable[backend_name] = first.strip()[:200]

    figures: dict[str, Any] = {
        "device": device,
        "dtype": str(dtype).replace("torch.", ""),
        "available": sorted(outputs),
        "unavailable": unavailable,
        "tolerance_abs": tolerance,
    }
    if "MATH" not in outputs:
        return result(NAME, Status.FAIL,
                      f"the math backend failed: {unavailable.get('MATH', '?')}", **figures)
    math_error = float((outputs["MATH"].double() - reference).abs().max())
    differences = {
        name: float((out - outputs["MATH"]).abs().max())
        for name, out in outputs.items() if name != "MATH"
    }
    figures["math_vs_float64"] = math_error
    figures["max_abs_diff_vs_math"] = differences
    bad = [f"{n} differs from math by {d:.3g}" for n, d in differences.items()
           if not d <= tolerance]
    if not math_error <= tolerance:
        bad.insert(0, f"math differs from the float64 reference by {math_error:.3g}")
    if bad:
        return result(NAME, Status.FAIL, "; ".join(bad) + f" (tolerance {tolerance:g})",
                      **figures)
    summary = f"{', '.join(sorted(outputs))} agree with math within {tolerance:g}"
    if ctx.on_gpu and len(outputs) == 1:
        return result(NAME, Status.WARN,
                      "only the math backend runs on this GPU (no flash/efficient kernels built "
                      "in); attention will be slow", **figures)
    return result(NAME, Status.PASS, summary, **figures)
