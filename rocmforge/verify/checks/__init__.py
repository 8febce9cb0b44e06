"""The checks of the verify suite, one module per check, and the loop that runs them.

Owns: `CheckContext` (torch, the options, the device under test), the shared diagnosis of
"no code for this GPU" errors, and `run_checks`. Each module `checks/<name>.py` defines
`run(ctx) -> CheckResult`, or a list of them when the check reports several parts as rows of
their own (`companions`: one row per companion part, each timed by the check).
Must not: import torch at module level (the caller hands it in), or import anything outside the
standard library, torch, triton and the companions.
"""

from __future__ import annotations

import importlib
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from rocmforge.verify.model import CheckResult, Status, VerifyOptions

# Text of the runtime errors that mean "this library holds no machine code for this GPU".
# HIP: hipErrorNoBinaryForGpu / "invalid device function"; CUDA: "no kernel image is available".
NO_BINARY_MARKERS = (
    "invalid device function",
    "hipErrorNoBinaryForGpu",
    "no kernel image is available",
    "cudaErrorNoKernelImageForDevice",
)


@dataclass(frozen=True, kw_only=True)
class CheckContext:
    """What every check sees: the imported torch module, the options, the device string."""

    torch: ModuleType
    options: VerifyOptions

    @property
    def device(self) -> str:
        return self.options.device

    @property
    def on_gpu(self) -> bool:
        return self.options.device == "cuda"

    def gpu_missing_reason(self) -> str:
        """Why GPU work cannot run here, or "" when a GPU is usable."""
        if not self.on_gpu:
            return "--device cpu: this check needs a GPU"
        if not self.torch.cuda.is_available():
            return "no GPU visible to torch (torch.cuda.is_available() is False)"
        return ""


def result(name: str, status: Status, reason: str, **figures: object) -> CheckResult:
    return CheckResult(name=name, status=status, reason=reason, figures=figures)


def no_binary_diagnosis(ctx: CheckContext, error: BaseException) -> str:
    """The arch advice for a kernel-launch failure, or "" when the error is something else."""
    text = str(error)
    if not any(marker.lower() in text.lower() for marker in NO_BINARY_MARKERS):
        return ""
    torch = ctx.torch
    device_arch = "this GPU"
    try:
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        device_arch = getattr(props, "gcnArchName", "") or device_arch
        if torch.version.hip is None:
            major, minor = torch.cuda.get_device_capability()
            device_arch = f"sm_{major}{minor}"
    except Exception:  # noqa: BLE001 - best effort; the diagnosis stands without the name
        pass
    if torch.version.hip is not None:
        fix = (
            f"rebuild with PYTORCH_ROCM_ARCH including {device_arch.split(':')[0]} and a clean "
            "configure (an arch change needs a fresh CMake cache)"
        )
    else:
        fix = f"install a PyTorch build whose arch list includes {device_arch}"
    return (
        f"the library holds no machine code for {device_arch} ({text.strip().splitlines()[0]}); "
        f"{fix}; `python -m rocmforge.verify --only arch` shows the compiled list"
    )


def load(name: str) -> Callable[[CheckContext], CheckResult | list[CheckResult]]:
    module = importlib.import_module(f"rocmforge.verify.checks.{name}")
    return module.run  # type: ignore[no-any-return]


def run_one(name: str, ctx: CheckContext) -> list[CheckResult]:
    """Run one check: its row (timed here), or its rows (timed by the check). A crash inside it
    becomes that check's FAIL, never the suite's."""
    started = time.perf_counter()
    try:
        outcome = load(name)(ctx)
    except Exception as exc:  # noqa: BLE001 - one broken check must not hide the others
        diagnosis = no_binary_diagnosis(ctx, exc)
        reason = diagnosis or f"check crashed: {type(exc).__name__}: {exc}"
        tail = traceback.format_exc().strip().splitlines()[-6:]
        outcome = result(name, Status.FAIL, reason, traceback_tail=tail)
    if isinstance(outcome, list):
        return outcome
    elapsed = time.perf_counter() - started
    return [CheckResult(
        name=outcome.name,
        status=outcome.status,
        reason=outcome.reason,
        figures=outcome.figures,
        seconds=elapsed,
    )]


def run_checks(ctx: CheckContext) -> list[CheckResult]:
    """Every asked check's rows, in the order asked."""
    return [row for name in ctx.options.only for row in run_one(name, ctx)]
