"""Check `perf`: GEMM TFLOP/s and device-to-device copy GB/s against the product's peak.

Owns: timing an 8192^3 bf16 and fp16 matmul and a 2 GiB device-to-device copy with device events
(3 warm-ups, 10 timed repeats, mean), and the WARN thresholds. Peaks come from
`rocmforge.knowledge.products.find_product` (stdlib-only; imported guarded so verify still runs
in a venv where only torch is installed).

Thresholds, and why:
- GEMM: WARN under 50% of the dense peak. Vendor peaks assume boost clocks and ideal tiles; a
  library GEMM at this size normally sustains well above half (on an H200 here 769-798 of 989
  TFLOP/s bf16, about 80%: device/KINDS.md). Under half means a fallback kernel, a library built
  without this arch's tuned kernels, or a throttled device: worth a look, not a failure.
- Copy: bytes read plus written per second (how KINDS.md counts its 4.3 TB/s on a 4.8 TB/s
  H200), WARN under 50% of the memory bandwidth peak for the same reasons.
With no known peak the figures are reported and the check passes with that said.
Must not: fail a run: slow is WARN, errors are FAIL only when a kernel does not run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

from rocmforge.verify.checks import CheckContext, no_binary_diagnosis, result
from rocmforge.verify.model import GIB, CheckResult, Status

if TYPE_CHECKING:
    from rocmforge.knowledge.products import ProductPeak

NAME = "perf"

GEMM_SIZE = 8192
COPY_BYTES = 2 * GIB
WARMUP = 3
REPEATS = 10
GEMM_WARN_FRACTION = 0.5
COPY_WARN_FRACTION = 0.5


def timed_ms(torch: ModuleType, fn: Callable[..., object]) -> float:
    """Mean milliseconds per call of fn, measured with device events after warm-ups."""
    for _ in range(WARMUP):
        fn()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(REPEATS):
        fn()
    end.record()
    end.synchronize()
    return float(start.elapsed_time(end)) / REPEATS


def find_peak(name: str, arch: str) -> ProductPeak | None:
    try:
        from rocmforge.knowledge.products import find_product
    except Exception:  # noqa: BLE001 - the kit may not be importable in a bare venv
        return None
    try:
        return find_product(name, arch=arch)
    except Exception:  # noqa: BLE001 - a bad table must not break verification
        return None


def run(ctx: CheckContext) -> CheckResult:
    torch = ctx.torch
    missing = ctx.gpu_missing_reason()
    if missing:
        return result(NAME, Status.SKIP, f"GPU throughput needs a GPU ({missing})")
    props = torch.cuda.get_device_properties(0)
    if torch.version.hip:
        arch = str(getattr(props, "gcnArchName", ""))
    else:
        arch = "sm_{}{}".format(*torch.cuda.get_device_capability(0))
    figures: dict[str, Any] = {"device": props.name, "arch": arch or None,
                               "gemm_size": GEMM_SIZE, "copy_bytes": COPY_BYTES}
    n = GEMM_SIZE
    try:
        for label, dtype in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
            a = torch.randn(n, n, device="cuda", dtype=dtype)
            b = torch.randn(n, n, device="cuda", dtype=dtype)
            ms = timed_ms(torch, lambda a=a, b=b: a @ b)
            figures[f"gemm_{label}_tflops"] = round(2 * n**3 / (ms * 1e-3) / 1e12, 1)
            del a, b
        src = torch.empty(COPY_BYTES, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        ms = timed_ms(torch, lambda s=src, d=dst: d.copy_(s))
        figures["copy_gbs"] = round(2 * COPY_BYTES / (ms * 1e-3) / 1e9, 1)
        del src, dst
        torch.cuda.empty_cache()
    except RuntimeError as exc:
        return result(NAME, Status.FAIL,
                      no_binary_diagnosis(ctx, exc) or f"{type(exc).__name__}: {exc}", **figures)

    return judge(figures, find_peak(props.name, arch), props.name)


def judge(figures: dict[str, object], peak: ProductPeak | None, device_name: str
          ) -> CheckResult:
    """The verdict from measured figures and the product's peak (None when unknown)."""
    measured = (f"bf16 {figures['gemm_bf16_tflops']} / fp16 {figures['gemm_fp16_tflops']} "
                f"TFLOP/s, copy {figures['copy_gbs']} GB/s")
    if peak is None:
        figures["peak"] = None
        return result(NAME, Status.PASS,
                      f"{measured}; no peak known for {device_name!r}, fractions not computed",
                      **figures)
    # A product that shows up as several devices (MI250X: two GCDs) lists whole-product peaks.
    share = max(int(getattr(peak, "devices", 1) or 1), 1)
    peaks = {"bf16": peak.bf16_tflops / share, "fp16": peak.fp16_tflops / share,
             "bandwidth": peak.bandwidth_gbs / share}
    figures["peak"] = {"name": peak.name, "devices_per_product": share,
                       "bf16_tflops": peaks["bf16"], "fp16_tflops": peaks["fp16"],
                       "bandwidth_gbs": peaks["bandwidth"], "estimate": peak.estimate,
                       "source": peak.source}
    low: list[str] = []
    fractions: dict[str, float] = {}
    for label in ("bf16", "fp16"):
        peak_value = peaks[label]
        if peak_value:
            fraction = _figure(figures, f"gemm_{label}_tflops") / peak_value
            fractions[f"gemm_{label}"] = round(fraction, 3)
            if fraction < GEMM_WARN_FRACTION:
                low.append(f"{label} GEMM at {fraction:.0%} of the {peak_value:g} TFLOP/s peak")
    if peaks["bandwidth"]:
        fraction = _figure(figures, "copy_gbs") / peaks["bandwidth"]
        fractions["copy"] = round(fraction, 3)
        if fraction < COPY_WARN_FRACTION:
            low.append(f"copy at {fraction:.0%} of the {peaks['bandwidth']:g} GB/s peak")
    figures["fraction_of_peak"] = fractions
    shown = ", ".join(f"{k} {v:.0%}" for k, v in fractions.items())
    estimate = " (peak is an estimate)" if peak.estimate else ""
    if low:
        return result(NAME, Status.WARN,
                      f"{measured}; under half of {peak.name}'s peak: {'; '.join(low)}"
                      f"{estimate}", **figures)
    return result(NAME, Status.PASS, f"{measured}; of {peak.name} peak: {shown}{estimate}",
                  **figures)


def _figure(figures: Mapping[str, object], key: str) -> float:
    """A measured number of `figures` (run() puts them there before judging)."""
    value = figures[key]
    if not isinstance(value, (int, float)):
        raise TypeError(f"figure {key!r} is {type(value).__name__}, not a number")
    return float(value)
