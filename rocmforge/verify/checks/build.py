"""Check `build`: is this torch a ROCm build, and does it see a GPU.

Owns: the verdict on `torch.version.hip` / `torch.version.cuda` and the runtime figures (device
count, HIP runtime and MIOpen versions from the build config). A CPU-only or CUDA build FAILS
here, naming which, because the kit exists to produce ROCm builds.
Must not: run kernels (that is `ops`).
"""

from __future__ import annotations

from typing import Any

from rocmforge.verify.checks import CheckContext, result
from rocmforge.verify.model import CheckResult, Status

NAME = "build"


def build_kind(hip: str | None, cuda: str | None, rocm: str | None = None) -> str:
    """'ROCm 10.0.0 (HIP 7.15.26333)', 'ROCm (HIP 7.2.53211)', 'CUDA 13.0 build' or 'CPU-only
    build' from torch.version. torch.version.hip is HIP's version, which is not ROCm's from ROCm
    10 (10.0 ships HIP 7.15), so it is never printed as the ROCm release; torch.version.rocm
    (where the torch has it) is."""
    if hip and rocm:
        return f"ROCm {rocm} (HIP {hip})"
    if hip:
        return f"ROCm (HIP {hip})"
    if cuda:
        return f"CUDA {cuda} build"
    return "CPU-only build"


def config_value(config_text: str, key: str) -> str:
    """Last token of the first config line holding `key` (how collect_env reads it), or ""."""
    for line in config_text.splitlines():
        if key in line:
            return line.strip().split()[-1]
    return ""


def run(ctx: CheckContext) -> CheckResult:
    torch = ctx.torch
    hip = getattr(torch.version, "hip", None)
    cuda = getattr(torch.version, "cuda", None)
    rocm = getattr(torch.version, "rocm", None)
    kind = build_kind(hip, cuda, rocm)
    figures: dict[str, Any] = {
        "torch": torch.__version__,
        "torch_version_hip": hip,
        "torch_version_rocm": rocm,
        "torch_version_cuda": cuda,
        "build": kind,
    }
    try:
        available = bool(torch.cuda.is_available())
        count = int(torch.cuda.device_count()) if available else 0
    except Exception as exc:  # noqa: BLE001 - a broken runtime is itself a finding
        available, count = False, 0
        figures["runtime_error"] = f"{type(exc).__name__}: {exc}"
    figures["gpu_available"] = available
    figures["device_count"] = count
    try:
        config_text = str(torch.__config__.show())
    except Exception:  # noqa: BLE001 - only used for version figures
        config_text = ""
    figures["hip_runtime"] = config_value(config_text, "HIP Runtime") or None
    figures["miopen"] = config_value(config_text, "MIOpen") or None
    if available:
        figures["devices"] = [torch.cuda.get_device_name(i) for i in range(count)]

    if not hip:
        return result(NAME, Status.FAIL, f"not a ROCm build ({kind})", **figures)
    if ctx.on_gpu and not available:
        return result(
            NAME,
            Status.FAIL,
            f"{kind} build, but no GPU is visible (torch.cuda.is_available() is False); "
            "check /dev/kfd and /dev/dri permissions (groups video/render) and "
            "HIP_VISIBLE_DEVICES",
            **figures,
        )
    where = f"{count} device(s)" if available else "no GPU (--device cpu)"
    return result(NAME, Status.PASS, f"{kind} build, {where}", **figures)
