"""Triton kernels the `triton` check compiles. Imported only when triton is importable.

Kept in its own module without `from __future__ import annotations`: Triton reads the
`tl.constexpr` annotations of a @triton.jit function's parameters at definition time.
"""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def vector_add(torch, x, y):  # type: ignore[no-untyped-def]
    out = torch.empty_like(x)
    n = x.numel()
    block = 1024
    add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    return out
