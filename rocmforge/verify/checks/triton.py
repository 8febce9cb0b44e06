"""Check `triton`: the installed Triton is the one PyTorch pins, runs a kernel, and backs
torch.compile.

Owns: finding the pin and comparing it with what is installed, a @triton.jit vector add, and
torch.compile (Inductor, which generates Triton kernels on GPUs) of a small function compared
with eager.

Where the pin comes from, in order (we say which in the figures):
1. `--triton-pin` (the nox session passes the version of the Triton wheel the build produced);
2. the installed torch distribution's requirements (`importlib.metadata.requires("torch")`):
   PyPI/download.pytorch.org wheels declare `triton==X` (CUDA) or `pytorch-triton-rocm==X` /
   `triton-rocm==X` (ROCm); a from-source wheel usually declares none;
PyTorch's own pin file (`.ci/docker/ci_commit_pins/triton.txt`, a commit) is not installed with
torch, so with neither source the pin cannot be checked and the check is a SKIP that says so
(never a PASS: what was not compared is not proven).
Must not: fail a CPU run for lack of Triton (CPU wheels ship none); import anything outside the
standard library and the verify package at module level, except rocmforge.knowledge.triton
(standard library only).
"""

from __future__ import annotations

import importlib.metadata
import re
from typing import Any

from rocmforge.knowledge.triton import TRITON_PROVIDERS, canonical_name
from rocmforge.verify.checks import CheckContext, no_binary_diagnosis, result
from rocmforge.verify.model import CheckResult, Status

NAME = "triton"

_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*==\s*([^\s;,]+)")


def pin_from_requirements(requirements: list[str] | None) -> tuple[str, str] | None:
    """('pytorch-triton-rocm', '3.5.0+git...') from torch's Requires-Dist lines, or None."""
    for line in requirements or []:
        match = _REQUIREMENT.match(line)
        if match and canonical_name(match.group(1)) in TRITON_PROVIDERS:
            return canonical_name(match.group(1)), match.group(2)
    return None


def installed_triton_dists() -> dict[str, str]:
    found = {}
    for name in TRITON_PROVIDERS:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def compare_pin(pin: tuple[str, str] | None, installed: dict[str, str], source: str
                ) -> tuple[Status, str]:
    """PASS when the installed Triton is the pinned one, FAIL when it is another, SKIP (with the
    reason) when there is no pin to compare with: an unchecked pin is not a proven one."""
    if pin is None:
        shown = ", ".join(f"{k} {v}" for k, v in installed.items()) or "none"
        return Status.SKIP, (f"Triton installed: {shown}; the pin was not checked: no "
                             "--triton-pin given and torch declares no triton requirement (pass "
                             "--triton-pin VERSION; `nox -s verify` passes the build's)")
    dist, version = pin
    if dist != "any" and installed.get(dist) == version:
        return Status.PASS, f"{dist} {version} as pinned ({source})"
    if dist == "any" and version in installed.values():
        return Status.PASS, f"Triton {version} as pinned ({source})"
    shown = ", ".join(f"{k} {v}" for k, v in installed.items()) or "no Triton"
    return Status.FAIL, (f"torch expects {dist}=={version} ({source}) but {shown} is installed; "
                         "install the Triton wheel built with this torch")


def run(ctx: CheckContext) -> CheckResult:
    torch = ctx.torch
    installed = installed_triton_dists()
    if ctx.options.triton_pin:
        pin: tuple[str, str] | None = ("any", ctx.options.triton_pin)
        source = "--triton-pin"
    else:
        try:
            pin = pin_from_requirements(importlib.metadata.requires("torch"))
        except importlib.metadata.PackageNotFoundError:
            pin = None
        source = "torch's Requires-Dist"
    figures: dict[str, Any] = {"installed": installed,
                               "pin": None if pin is None else {"dist": pin[0], "version": pin[1],
                                                                 "source": source}}
    try:
        import triton
        figures["triton_version"] = triton.__version__
    except Exception as exc:  # noqa: BLE001 - a broken triton is reported, not raised
        figures["import_error"] = f"{type(exc).__name__}: {exc}"
        triton = None
    if not ctx.on_gpu or not torch.cuda.is_available():
        what = ctx.gpu_missing_reason()
        return result(NAME, Status.SKIP, f"Triton kernels need a GPU ({what})", **figures)
    if triton is None:
        return result(NAME, Status.FAIL, f"triton does not import: {figures['import_error']}",
                      **figures)

    pin_status, pin_text = compare_pin(pin, installed, source)
    problems = [pin_text] if pin_status is Status.FAIL else []
    try:
        from rocmforge.verify.checks._triton_kernels import vector_add

        x = torch.randn(100_003, device="cuda")
        y = torch.randn(100_003, device="cuda")
        figures["jit_vector_add_exact"] = bool(torch.equal(vector_add(torch, x, y), x + y))
        if not figures["jit_vector_add_exact"]:
            problems.append("@triton.jit vector add differs from x + y")
    except Exception as exc:  # noqa: BLE001 - compiler errors come in many types
        problems.append(no_binary_diagnosis(ctx, exc) or
                        f"@triton.jit vector add failed: {type(exc).__name__}: {exc}")

    try:
        def small(a: Any, b: Any) -> Any:
            return torch.sin(a) * b + torch.relu(b).sum(dim=-1, keepdim=True)

        torch._dynamo.reset()
        compiled = torch.compile(small)
        a = torch.randn(64, 256, device="cuda")
        b = torch.randn(64, 256, device="cuda")
        difference = float((compiled(a, b) - small(a, b)).abs().max())
        figures["compile_max_abs_diff"] = difference
        if not difference <= 1e-4:
            problems.append(f"torch.compile differs from eager by {difference:.3g}")
    except Exception as exc:  # noqa: BLE001 - Inductor failures come in many types
        line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        problems.append(f"torch.compile failed: {type(exc).__name__}: {line[:300]}")

    status, reason = verdict(pin_status, pin_text, problems)
    return result(NAME, status, reason, **figures)


def verdict(pin_status: Status, pin_text: str, problems: list[str]) -> tuple[Status, str]:
    """The check's status: FAIL on any problem; else the pin comparison's own status (a SKIP
    when the pin could not be checked), with what ran."""
    if problems:
        return Status.FAIL, "; ".join(problems)
    return pin_status, f"{pin_text}; @triton.jit vector add exact; torch.compile matches eager"
