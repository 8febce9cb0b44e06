"""Triton kernels the `triton` check runs. Imported only when triton is importable.

The kernel is the Triton target probe's (rocmforge/probes/triton_probe_kernel.py, a masked vector
add): one kernel, compiled for a target by the probe and run on the device here. It is loaded by
path, like the probe does, so verify does not import the kit's probes package (verify imports
only the stdlib, torch and triton).
"""

import importlib.util
from pathlib import Path

import triton

KERNEL_FILE = Path(__file__).resolve().parents[2] / "probes" / "triton_probe_kernel.py"


def _load_kernel():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("rocmforge_triton_probe_kernel", KERNEL_FILE)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the probe kernel from {KERNEL_FILE}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.rocmforge_probe_add


add_kernel = _load_kernel()


def vector_add(torch, x, y):  # type: ignore[no-untyped-def]
    out = torch.empty_like(x)
    n = x.numel()
    block = 1024
    add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    return out
