"""Doctor rows: does each ROCm library PyTorch links hold code for every requested target?

A build for a target whose rocSPARSE, rocRAND or rocBLAS has no kernels for it succeeds, and
the first sparse op, random number or matmul fails at run time (the second most reported pain:
pytorch/pytorch#179865 and ROCm/rocBLAS#1339 for rocBLAS; #138067 for hipBLASLt). Owns: the
verdict per library (a required library without code for a target FAILs, an optional one
WARNs), a generic target in the library covering its members, a kpack-split library whose
archives are absent (its own finding, not "no code"), and the fix, with the packages for the
install's layout (knowledge.components.device_code_hint). Must not: read the install
(probes/library_code.py does).
"""

from __future__ import annotations

from collections.abc import Sequence

from rocmforge.knowledge.arches import ArchTable
from rocmforge.knowledge.components import device_code_hint
from rocmforge.knowledge.targets import TargetId
from rocmforge.plan.doctor_row import DoctorRow, Status
from rocmforge.probes.library_code import LibraryCode


def covered(processor: str, held: Sequence[str], table: ArchTable | None) -> bool:
    """`processor` has code in a library holding `held`: its own, or a generic target's
    whose members include it (gfx11-generic runs on gfx1100)."""
    if processor in held:
        return True
    if table is None:
        return False
    for name in held:
        arch = table.get(name)
        if arch is not None and arch.generic and processor in arch.generic_members:
            return True
    return False


def kernel_rows(found: Sequence[LibraryCode] | None, targets: Sequence[TargetId],
                table: ArchTable | None, layout: str = "") -> list[DoctorRow]:
    """One row per library; `layout` (RocmInstall.layout) picks the packages the fix names:
    per-target device packages where the install has them (ROCm >= 7.14, the pip SDK)."""
    if not found or not targets:
        return []
    processors = list(dict.fromkeys(t.base for t in targets))
    rows = []
    for code in found:
        library = code.library
        missing = [p for p in processors if not covered(p, code.targets, table)]
        where = ", ".join(code.where)
        held = ", ".join(code.targets) or "no GPU target"
        cached = (f" (read {code.cached_at}; nothing changed since)" if code.cached_at
                  else "")
        if code.archives:
            where += f" (kpack: {len(code.archives)} archive(s))"
        if not missing:
            rows.append(DoctorRow(check=f"kernels {library.name}", status="OK",
                                  detail=f"{where} holds code for {', '.join(processors)} "
                                         f"(all it holds: {held}){cached}"))
            continue
        status: Status = "FAIL" if library.need == "required" else "WARN"
        packages = device_code_hint(layout, missing)
        if code.split_missing and not code.targets:
            rows.append(DoctorRow(
                check=f"kernels {library.name}", status=status,
                detail=f"{code.split_missing[0]} (device code split out by TheRock's kpack; "
                       f"its archives are not installed, so nothing proves code for "
                       f"{', '.join(missing)})",
                fix=f"install the device packages for {', '.join(missing)} beside this "
                    f"install ({packages or 'TheRock multi-arch: rocm-sdk-device-<target>'}; "
                    "RFC0008), or pass --rocm-path to an install that has them"))
            continue
        if library.workaround and library.need == "optional":
            # An optional library torch can be kept off: the variables, not a reinstall.
            rows.append(DoctorRow(
                check=f"kernels {library.name}", status=status,
                detail=f"{where} holds code for {held}, none for {', '.join(missing)}: "
                       f"{library.used_for}{cached}",
                fix=library.workaround))
            continue
        if packages:
            rows.append(DoctorRow(
                check=f"kernels {library.name}", status=status,
                detail=f"{where} holds code for {held}, none for {', '.join(missing)}: "
                       f"{library.used_for} would fail on that GPU at run time{cached}",
                fix=f"install the kernels for {', '.join(missing)}: {packages}"))
            continue
        rows.append(DoctorRow(
            check=f"kernels {library.name}", status=status,
            detail=f"{where} holds code for {held}, none for {', '.join(missing)}: "
                   f"{library.used_for} would fail on that GPU at run time{cached}",
            fix=f"install a ROCm whose {library.name} ships {', '.join(missing)} code (AMD's "
                "ROCm packages for a release that supports the GPU"
                + _sdk_way_out(missing)
                + f"), or build {library.name} for it (`cmake -DAMDGPU_TARGETS="
                f"\"{';'.join(missing)}\"`) and pass --rocm-path to that install"))
    return rows


def _sdk_way_out(missing: Sequence[str]) -> str:
    """", or TheRock's pip SDK: --rocm-sdk-version" (its multi-arch index has a device package
    per target, config/rocm_sdk.toml)."""
    from rocmforge.knowledge.rocm_sdk import load_sdk_table

    table = load_sdk_table()
    extras = ",".join(table.extra_of(t) for t in missing)
    return (f", or TheRock's pip SDK with its {extras} code: `--rocm-sdk-version` with a "
            f"release from {table.first_multi_arch} on")
