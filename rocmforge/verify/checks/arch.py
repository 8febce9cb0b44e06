"""Check `arch`: the compiled GPU target list covers the requested targets and every device.

Owns: parsing target IDs (`gfx942:sramecc+:xnack-`), the coverage rule between a compiled entry
and a device or requested target, and the rebuild advice. The compiled list comes from
`torch._C._cuda_getArchFlags()`, a compile-time string that works without a GPU (unlike
`torch.cuda.get_arch_list()`, which returns [] then); see shared/reference/pytorch-rocm-build.md
section 6. On a CUDA build the same check compares the device's sm_XY (from its compute
capability) with the sm_* entries, so it is real on NVIDIA hardware too.
Must not: run kernels.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

from rocmforge.verify.checks import CheckContext, result
from rocmforge.verify.model import CheckResult, Status

NAME = "arch"

# Generic targets and the processors they run on (AMDGPUUsage "AMDGPU Generic Processors",
# shared/reference/rocm-arch-toolchain.md 1.3; gfx9-4-generic's membership is unverified there).
GENERIC_MEMBERS: dict[str, frozenset[str]] = {
    "gfx9-generic": frozenset({"gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"}),
    "gfx9-4-generic": frozenset({"gfx942", "gfx950"}),
    "gfx10-1-generic": frozenset({"gfx1010", "gfx1011", "gfx1012", "gfx1013"}),
    "gfx10-3-generic": frozenset({f"gfx103{i}" for i in range(7)}),
    "gfx11-generic": frozenset(
        {"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152"}
    ),
    "gfx12-generic": frozenset({"gfx1200", "gfx1201"}),
}


@dataclass(frozen=True, kw_only=True)
class TargetId:
    """A clang target ID: base processor plus pinned features, e.g. gfx90a + {xnack: '-'}."""

    base: str
    features: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, text: str) -> TargetId:
        parts = text.strip().split(":")
        features = []
        for part in parts[1:]:
            if part and part[-1] in "+-":
                features.append((part[:-1], part[-1]))
        return cls(base=parts[0], features=tuple(sorted(features)))

    def __str__(self) -> str:
        return ":".join([self.base, *(f"{k}{v}" for k, v in self.features)])


def covers(entry: TargetId, target: TargetId) -> bool:
    """True when code compiled for `entry` runs on `target`.

    Same base (or a generic target listing it), and every feature the entry pins is pinned the
    same way in the target: `gfx90a` code runs with xnack on or off, `gfx90a:xnack+` only on.
    """
    base_ok = entry.base == target.base or target.base in GENERIC_MEMBERS.get(entry.base, ())
    if not base_ok:
        return False
    pinned = dict(target.features)
    return all(pinned.get(name) == value for name, value in entry.features)


def cuda_covers(entries: list[str], sm: str) -> str:
    """'sass' when an sm_XY(a) entry matches, 'ptx' when only compute_XY <= device, else ''."""
    number = int(sm[3:])
    for entry in entries:
        if entry.startswith("sm_") and entry[3:].rstrip("af") == str(number):
            return "sass"
    for entry in entries:
        digits = entry[8:].rstrip("af")
        if entry.startswith("compute_") and digits.isdigit() and int(digits) <= number:
            return "ptx"
    return ""


def compiled_arch_list(torch: ModuleType) -> list[str] | None:
    getter = getattr(torch._C, "_cuda_getArchFlags", None)
    if getter is None:
        return None
    flags = getter()
    return str(flags).split() if flags else []


def rebuild_advice(missing: list[str], compiled: list[str]) -> str:
    wanted = sorted({*(e.split(":")[0] for e in compiled if not e.endswith("generic")),
                     *(m.split(":")[0] for m in missing)})
    arch = ";".join(wanted)
    return (
        f"rebuild with PYTORCH_ROCM_ARCH=\"{arch}\" (`invoke build --arch \"{arch}\"`) and a clean "
        "configure: a changed arch list needs a fresh build/CMakeCache.txt"
    )


def run(ctx: CheckContext) -> CheckResult:
    torch = ctx.torch
    hip = getattr(torch.version, "hip", None)
    compiled = compiled_arch_list(torch)
    expect = list(ctx.options.expect)
    figures: dict[str, Any] = {"compiled": compiled, "expected": expect}
    if compiled is None:
        if expect:
            return result(NAME, Status.FAIL,
                          f"CPU-only build: no GPU targets compiled, expected {', '.join(expect)}",
                          **figures)
        return result(NAME, Status.SKIP,
                      "CPU-only build: torch._C has no _cuda_getArchFlags (no GPU targets)",
                      **figures)

    problems: list[str] = []
    notes: list[str] = []
    entries = [TargetId.parse(e) for e in compiled]
    if hip:
        missing = [t for t in expect if not any(covers(e, TargetId.parse(t)) for e in entries)]
        if missing:
            problems.append(f"requested {', '.join(missing)} not in the compiled list")
    else:
        missing = [t for t in expect if t not in compiled]
        if missing:
            problems.append(f"requested {', '.join(missing)} not in the compiled list")

    devices: list[dict[str, Any]] = []
    if ctx.on_gpu and torch.cuda.is_available():
        for index in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(index)
            if hip:
                name = str(getattr(props, "gcnArchName", ""))
                target = TargetId.parse(name)
                ok = any(covers(e, target) for e in entries)
                devices.append({"index": index, "target": name, "base": target.base,
                                "features": dict(target.features), "covered": ok})
                if not ok:
                    missing.append(name)
                    problems.append(f"device {index} is {name}, which no compiled entry covers")
            else:
                major, minor = torch.cuda.get_device_capability(index)
                sm = f"sm_{major}{minor}"
                how = cuda_covers(compiled, sm)
                devices.append({"index": index, "target": sm, "name": props.name, "covered": how})
                if not how:
                    missing.append(sm)
                    problems.append(f"device {index} ({props.name}) is {sm}, not in the list")
                elif how == "ptx":
                    notes.append(f"device {index} {sm} runs only through PTX JIT")
    figures["devices"] = devices

    if problems:
        advice = rebuild_advice(missing, compiled) if hip else (
            "install a PyTorch build whose arch list includes it")
        return result(NAME, Status.FAIL, "; ".join(problems) + "; " + advice, **figures)
    checked = [d["target"] for d in devices]
    what = f"{len(compiled)} compiled targets"
    if expect:
        what += f" cover requested {', '.join(expect)}"
    if checked:
        what += f"; devices {', '.join(checked)} covered"
    elif not ctx.on_gpu:
        what += "; no devices checked (--device cpu)"
    if notes:
        return result(NAME, Status.WARN, what + "; " + "; ".join(notes), **figures)
    return result(NAME, Status.PASS, what, **figures)
