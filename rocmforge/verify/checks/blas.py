"""Check `blas`: the first GEMM through each BLAS library torch can use, with the library named.

Owns: one fp16 and one fp32 matmul per BLAS backend, chosen with
`torch.backends.cuda.preferred_blas_library` ("cublas" is rocBLAS on ROCm and cuBLAS on CUDA,
"cublaslt" is hipBLASLt / cuBLASLt), each against a float64 CPU reference, with PyTorch's own
warnings captured: on ROCm PyTorch falls back from hipBLASLt to rocBLAS on a target hipBLASLt
does not list ("Attempting to use hipBLASLt on a unsupported architecture!",
pytorch/pytorch#138067), and rocBLAS stops with "Cannot read ... TensileLibrary" when its
Tensile files have no code for the GPU (pytorch/pytorch#179865, ROCm/rocBLAS#1339). Verdict
per library: PASS (right numbers), WARN (hipBLASLt fell back: GEMMs still run, on rocBLAS),
FAIL with the library and its error. Must not: time anything (`perf` does) or repeat `ops`'
other kernels.
"""

from __future__ import annotations

import warnings
from types import ModuleType

from rocmforge.verify.checks import CheckContext, no_binary_diagnosis, result
from rocmforge.verify.checks.ops import TOLERANCE, exact_fp32, relative_error
from rocmforge.verify.model import CheckResult, Status

NAME = "blas"

# torch's name for the backend -> the library's name on ROCm and on CUDA.
BACKENDS = (("cublas", "rocBLAS", "cuBLAS"), ("cublaslt", "hipBLASLt", "cuBLASLt"))
FALLBACK_MARKERS = ("unsupported architecture", "falling back", "fallback")
TENSILE_MARKERS = ("TensileLibrary", "Tensile", "rocblas_status_invalid")


def library_name(torch: ModuleType, backend: str) -> str:
    for name, rocm, cuda in BACKENDS:
        if name == backend:
            return rocm if torch.version.hip is not None else cuda
    return backend


def _gemm(torch: ModuleType, device: str, dtype: object) -> float:
    generator = torch.Generator().manual_seed(7)
    a = torch.randn(256, 384, generator=generator).to(dtype)
    b = torch.randn(384, 128, generator=generator).to(dtype)
    out = (a.to(device) @ b.to(device)).cpu()
    torch.cuda.synchronize()
    return relative_error(torch, out, a.double() @ b.double())


def run(ctx: CheckContext) -> CheckResult:
    torch = ctx.torch
    missing = ctx.gpu_missing_reason()
    if missing:
        return result(NAME, Status.SKIP, missing)
    select = getattr(torch.backends.cuda, "preferred_blas_library", None)
    if select is None:
        return result(NAME, Status.SKIP, "this torch cannot choose its BLAS library "
                      "(torch.backends.cuda.preferred_blas_library is missing)")
    before = select()
    verdicts: dict[str, str] = {}
    errors: dict[str, dict[str, float]] = {}
    failed: list[str] = []
    warned: list[str] = []
    try:
        for backend, _, _ in BACKENDS:
            library = library_name(torch, backend)
            errors[library] = {}
            with warnings.catch_warnings(record=True) as caught, exact_fp32(torch):
                warnings.simplefilter("always")
                try:
                    select(backend)
                    for kind, dtype in (("float16", torch.float16), ("float32", torch.float32)):
                        errors[library][kind] = error = _gemm(torch, ctx.device, dtype)
                        if not error <= TOLERANCE[kind]:
                            raise ArithmeticError(f"{kind} error {error:.3g} > "
                                                  f"{TOLERANCE[kind]:g}")
                except (RuntimeError, ArithmeticError) as exc:
                    failed.append(_failure(ctx, library, exc))
                    verdicts[library] = "FAIL"
                    continue
            said = [str(w.message) for w in caught]
            fell_back = [m for m in said if any(k in m.lower() for k in FALLBACK_MARKERS)]
            if fell_back:
                warned.append(f"{library}: torch fell back to another library ({fell_back[0]})")
                verdicts[library] = "WARN"
            else:
                verdicts[library] = "PASS"
    finally:
        select(before)
    figures = {"device": ctx.device, "libraries": verdicts, "relative_error": errors}
    if failed:
        return result(NAME, Status.FAIL, "; ".join(failed + warned), **figures)
    if warned:
        return result(NAME, Status.WARN, "; ".join(warned), **figures)
    return result(NAME, Status.PASS,
                  "the first fp16 and fp32 GEMM match the float64 CPU reference through "
                  + " and ".join(verdicts), **figures)


def _failure(ctx: CheckContext, library: str, exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    arch = no_binary_diagnosis(ctx, exc)
    if arch:
        return f"{library}: {arch}"
    if any(marker in str(exc) for marker in TENSILE_MARKERS):
        return (f"{library} has no kernels for this GPU ({text}): install a ROCm whose "
                f"{library} ships this target's Tensile library files (`invoke doctor` lists "
                "them per target)")
    return f"{library}: {type(exc).__name__}: {text}"
