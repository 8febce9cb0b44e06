"""Check `memory`: the caching allocator gives memory back, and survives running out.

Owns four probes on device 0: (1) allocate and free 64 MiB blocks in a loop: allocated memory
returns to its baseline; (2) after `empty_cache`, reserved memory returns to where it was;
(3) an allocation twice the device's size raises torch.OutOfMemoryError and a matmul still runs
after it; (4) three forward+backward passes of a small transformer block: allocated memory after
the third equals that after the second (no growth once gradients exist), and deleting the block
returns to the baseline.
Must not: run on the CPU (the accounting belongs to the device allocator).
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

from rocmforge.verify.checks import CheckContext, result
from rocmforge.verify.model import MIB, CheckResult, Status

if TYPE_CHECKING:
    import torch as _torch

NAME = "memory"


def transformer_step(torch: ModuleType, device: _torch.device | str, steps: int = 1
                     ) -> list[int]:
    """Forward+backward of a small transformer block `steps` times; allocated bytes after each.
    The block and its input are gone when this returns."""
    block = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024,
                                             batch_first=True, device=device)
    x = torch.randn(8, 128, 256, device=device)
    after_step = []
    for _ in range(steps):
        block(x).square().mean().backward()
        torch.cuda.synchronize()
        after_step.append(torch.cuda.memory_allocated(device))
    del block, x
    return after_step


def run(ctx: CheckContext) -> CheckResult:
    torch = ctx.torch
    missing = ctx.gpu_missing_reason()
    if missing:
        return result(NAME, Status.SKIP, f"allocator checks need a GPU ({missing})")
    cuda = torch.cuda
    device = torch.device("cuda", 0)
    problems: list[str] = []
    figures: dict[str, Any] = {}

    # Warm-up: the first matmul and attention on a stream allocate library workspaces (cuBLAS,
    # hipBLASLt) through the caching allocator and keep them; take the baseline after that.
    transformer_step(torch, device)
    cuda.synchronize()
    cuda.empty_cache()
    baseline = cuda.memory_allocated(device)
    reserved_before = cuda.memory_reserved(device)
    peak_reserved = reserved_before
    for _ in range(20):
        blocks = [torch.empty(64 * MIB, dtype=torch.uint8, device=device) for _ in range(4)]
        peak_reserved = max(peak_reserved, cuda.memory_reserved(device))
        del blocks
    cuda.synchronize()
    after_loop = cuda.memory_allocated(device)
    cuda.empty_cache()
    reserved_after = cuda.memory_reserved(device)
    figures.update(baseline_allocated=baseline, allocated_after_loop=after_loop,
                   reserved_before=reserved_before, reserved_peak=peak_reserved,
                   reserved_after_empty_cache=reserved_after)
    if after_loop != baseline:
        problems.append(f"allocated {after_loop} B after the free loop, baseline {baseline} B")
    if reserved_after > reserved_before:
        problems.append(f"reserved {reserved_after} B after empty_cache, was {reserved_before} B")

    total = cuda.get_device_properties(device).total_memory
    oom_class = getattr(torch, "OutOfMemoryError", None) or cuda.OutOfMemoryError
    try:
        hog = torch.empty(2 * total, dtype=torch.uint8, device=device)
        del hog
        problems.append(f"allocating {2 * total} B (twice the device) did not raise")
        figures["oom_raised"] = False
    except oom_class:
        figures["oom_raised"] = True
    try:
        a = torch.ones(256, 256, device=device)
        figures["works_after_oom"] = bool(float((a @ a)[0, 0]) == 256.0)
        del a
    except RuntimeError as exc:
        figures["works_after_oom"] = False
        problems.append(f"device unusable after OOM: {exc}")
    if figures.get("works_after_oom") is False and not any("unusable" in p for p in problems):
        problems.append("matmul after OOM gave a wrong result")

    after_step = transformer_step(torch, device, steps=3)
    cuda.synchronize()
    after_delete = cuda.memory_allocated(device)
    figures.update(transformer_allocated_per_step=after_step,
                   transformer_allocated_after_delete=after_delete)
    if after_step[-1] != after_step[-2]:
        problems.append(f"transformer step grew allocated memory {after_step[-2]} -> "
                        f"{after_step[-1]} B")
    if after_delete != baseline:
        problems.append(f"allocated {after_delete} B after deleting the block, "
                        f"baseline {baseline} B")
    cuda.empty_cache()

    if problems:
        return result(NAME, Status.FAIL, "; ".join(problems), **figures)
    return result(NAME, Status.PASS,
                  "free loop returns to baseline, empty_cache releases, OOM raises "
                  "OutOfMemoryError and the device keeps working, no growth in fwd+bwd",
                  **figures)
