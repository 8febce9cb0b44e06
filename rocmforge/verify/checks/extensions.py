"""Check `extensions`: each extension the build made (flash-attention, bitsandbytes, ...) works
with this torch.

Owns: rows per extension the manifest names (kind "extension"):
- `<name>`: its module imports and is the version the build made;
- `<name>.targets`: its libraries' device code read with the kit's `invoke inspect` holds every
  built target (a backend that compiles at run time, flash-attention's Triton one, has none and
  says so);
- `<name>.op`: one op on the device against a reference where the recipe names one
  (flash_attn_func against SDPA's math backend, bitsandbytes' Linear8bitLt against a float
  Linear, xformers' memory_efficient_attention against SDPA); SKIP with the reason without a
  device.
With no extension in the manifest, one SKIP row named `extensions`. Must not: import anything
outside the standard library, torch and the extensions (it runs in the target venv).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType

from rocmforge.knowledge.addons import VERIFY_OPS
from rocmforge.verify.checks import CheckContext, no_binary_diagnosis, result
from rocmforge.verify.checks.static import TIMEOUT_S, inspect_argv
from rocmforge.verify.model import CheckResult, ExpectedExtension, Status

NAME = "extensions"
# The ops and their tolerance are knowledge.addons' VERIFY_OPS (a recipe naming another is
# refused when config/extensions.toml loads); OPS below implements each of them.
TOLERANCE = VERIFY_OPS


def expected_from_manifest(doc: Mapping[str, object]) -> tuple[ExpectedExtension, ...]:
    """The extensions a manifest says were built (companions entries of kind "extension")."""
    section = doc.get("companions")
    targets = doc.get("targets")
    built = tuple(str(t) for t in targets) if isinstance(targets, list) else ()
    found = []
    for name, entry in (section.items() if isinstance(section, dict) else ()):
        if not isinstance(entry, dict) or entry.get("kind") != "extension":
            continue
        wheel = str(entry.get("wheel") or "")
        found.append(ExpectedExtension(
            name=str(name), module=str(entry.get("module") or ""),
            distribution=wheel.split("-")[0] if wheel else "",
            version=str(entry.get("version") or ""), backend=str(entry.get("backend") or ""),
            verify=str(entry.get("verify") or ""), targets=built))
    return tuple(found)


def run(ctx: CheckContext) -> list[CheckResult]:
    expected = ctx.options.extensions
    if not expected:
        why = ("no --manifest given" if not ctx.options.manifest_given
               else "the manifest names no extension")
        return [result(NAME, Status.SKIP, why)]
    rows: list[CheckResult] = []
    for extension in expected:
        module, row = _imported(extension)
        rows.append(row)
        if module is None:
            continue
        rows.append(_targets(extension, module))
        rows.append(_op(ctx, extension, module))
    return rows


def _imported(extension: ExpectedExtension) -> tuple[ModuleType | None, CheckResult]:
    if not extension.module:
        return None, result(extension.name, Status.SKIP,
                            "its recipe names no module to import (a generic extension)")
    try:
        module = importlib.import_module(extension.module)
    except Exception as exc:  # noqa: BLE001 - any import failure is the finding
        return None, result(extension.name, Status.FAIL,
                            f"import {extension.module} failed: {type(exc).__name__}: {exc}")
    try:
        version = importlib.metadata.version(extension.distribution) \
            if extension.distribution else ""
    except importlib.metadata.PackageNotFoundError:
        version = ""
    # A plain folder's version is its files' digest (the manifest's), not the wheel's.
    stated = "" if extension.version.startswith("sha256:") else extension.version
    if stated and version and version != stated:
        return module, result(extension.name, Status.FAIL,
                              f"{extension.distribution} {version} is installed, the build made "
                              f"{extension.version}")
    return module, result(extension.name, Status.PASS,
                          f"import {extension.module} works ({extension.distribution} "
                          f"{version or '?'}, built with backend {extension.backend or 'one'})")


def _targets(extension: ExpectedExtension, module: ModuleType) -> CheckResult:
    name = f"{extension.name}.targets"
    if extension.backend == "triton":
        return result(name, Status.SKIP, "the Triton backend compiles its kernels at run time: "
                      "no device code to read")
    if module.__file__ is None:
        return result(name, Status.FAIL, f"{extension.module} has no __file__")
    folder = Path(module.__file__).resolve().parent
    if not any(folder.rglob("*.so")):
        return result(name, Status.FAIL, f"{folder} holds no shared library with device code")
    try:
        done = subprocess.run(inspect_argv(folder, extension.targets), capture_output=True,
                              text=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return result(name, Status.FAIL, f"inspect of {folder} took over {TIMEOUT_S} s")
    if done.returncode == 3:
        return result(name, Status.SKIP, "the kit's inspect is not installed in this environment")
    if done.returncode == 0:
        return result(name, Status.PASS, f"{', '.join(extension.targets) or 'its targets'} "
                      f"present in {folder}")
    lines = (done.stderr or done.stdout).strip().splitlines()
    return result(name, Status.FAIL, " ".join(lines[-3:])[:600] or f"exit {done.returncode}")


def _op(ctx: CheckContext, extension: ExpectedExtension, module: ModuleType) -> CheckResult:
    name = f"{extension.name}.op"
    if not extension.verify:
        return result(name, Status.SKIP, "its recipe names no op to check (import only)")
    missing = ctx.gpu_missing_reason()
    if missing:
        return result(name, Status.SKIP, missing)
    op = OPS.get(extension.verify)
    if op is None:
        return result(name, Status.SKIP, f"no check for op {extension.verify!r} in this kit")
    try:
        error = op(ctx.torch, module)
    except (RuntimeError, AttributeError, TypeError, ImportError) as exc:
        arch = no_binary_diagnosis(ctx, exc)
        return result(name, Status.FAIL, arch or f"{extension.verify}: {type(exc).__name__}: "
                      f"{exc}")
    limit = TOLERANCE[extension.verify]
    status = Status.PASS if error <= limit else Status.FAIL
    return result(name, status, f"{extension.verify} matches the reference within "
                  f"{error:.2g} (limit {limit:g})", relative_error=error)


def _relative(torch: ModuleType, out: object, ref: object) -> float:
    diff = (out.float() - ref.float()).abs().max().item()  # type: ignore[attr-defined]
    scale = ref.float().abs().max().item()  # type: ignore[attr-defined]
    return float(diff / max(scale, 1e-30))


def _flash_attn(torch: ModuleType, module: ModuleType) -> float:
    q, k, v = (torch.randn(2, 128, 4, 64, device="cuda", dtype=torch.float16) for _ in range(3))
    out = module.flash_attn_func(q, k, v)
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        ref = torch.nn.functional.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2)
    return _relative(torch, out, ref)


def _linear8bit(torch: ModuleType, module: ModuleType) -> float:
    torch.manual_seed(0)
    dense = torch.nn.Linear(256, 128, bias=False).half()
    quantized = module.nn.Linear8bitLt(256, 128, bias=False, has_fp16_weights=False)
    quantized.load_state_dict(dense.state_dict())
    quantized = quantized.to("cuda")
    x = torch.randn(16, 256, dtype=torch.float16)
    return _relative(torch, quantized(x.to("cuda")).cpu(), dense(x))


def _xformers(torch: ModuleType, module: ModuleType) -> float:
    ops = importlib.import_module(f"{module.__name__}.ops")
    q, k, v = (torch.randn(2, 128, 4, 64, device="cuda", dtype=torch.float16) for _ in range(3))
    out = ops.memory_efficient_attention(q, k, v)
    ref = torch.nn.functional.scaled_dot_product_attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2)
    return _relative(torch, out, ref)


OPS: dict[str, Callable[[ModuleType, ModuleType], float]] = {
    "flash_attn_func": _flash_attn,
    "linear8bitlt": _linear8bit,
    "memory_efficient_attention": _xformers,
}
