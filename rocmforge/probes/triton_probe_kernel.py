"""The kernel the Triton target probe compiles (triton_codegen.py loads it by path).

Owns: one small @triton.jit kernel (masked vector add: loads, stores, program id, a constexpr
block size) that exercises Triton's whole AMD pipeline down to a code object.
Must not: import anything but triton; use `from __future__ import annotations` (Triton reads
the `tl.constexpr` annotation of BLOCK when the kernel is defined, in every 3.x release).
"""

import triton
import triton.language as tl

# The argument names and Triton types, in order; BLOCK is the constexpr.
POINTER_ARGS = ("x_ptr", "y_ptr", "out_ptr")
SCALAR_ARGS = ("n_elements",)
CONSTEXPR = "BLOCK"
BLOCK_SIZE = 256


@triton.jit
def rocmforge_probe_add(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
