"""Doctor rows for the Triton target probe: one row per target, from a `TritonProbeReport`.

Owns: how a probe verdict reads in `invoke doctor` and how serious it is there. A target the
installed Triton cannot compile for is a FAIL only when that Triton is the version the build
pins (the build would install the same one); otherwise a WARN, because the build installs the
pin and probes that again. A SKIP (no ld.lld, time limit) is a WARN with its fix: nothing was
proven either way.
Must not: run the probe (the doctor task or the facts probe does, when a Triton is installed in
the chosen Python) or print.
"""

from __future__ import annotations

from rocmforge.plan.doctor_row import DoctorRow, Status
from rocmforge.probes.triton_targets import (
    LLD_FIX,
    Cause,
    TritonProbeReport,
    TritonTargetResult,
)

CHECK_PREFIX = "triton codegen"
SKIP_FIXES: dict[Cause, str] = {
    "no_lld": LLD_FIX,
    "time_limit": "run `invoke doctor` again when the machine is less busy",
    "cannot_run": "check that the chosen Python runs (`<python> -c 'import triton'`)",
}


def base_version(version: str) -> str:
    """'3.6.0+git1234' -> '3.6.0'."""
    return version.split("+", 1)[0].strip()


def triton_probe_rows(report: TritonProbeReport, *, pin_version: str = "",
                      arch_flag: str = "--arch") -> tuple[DoctorRow, ...]:
    """One row per probed target; () when the Python has no Triton (the `triton` row says so).
    `pin_version` is the Triton version the PyTorch tree pins ("" when not known yet)."""
    if not report.triton_version:
        return ()
    pinned = bool(pin_version) and base_version(pin_version) == base_version(
        report.triton_version)
    return tuple(_row(result, report, pinned, arch_flag) for result in report.results)


def _row(result: TritonTargetResult, report: TritonProbeReport, pinned: bool,
         arch_flag: str) -> DoctorRow:
    check = f"{CHECK_PREFIX} {result.target}"
    triton = f"Triton {report.triton_version}"
    if result.status == "OK":
        return DoctorRow(check=check, status="OK", detail=f"{triton}: {result.reason}")
    if result.status == "FAIL":
        status: Status = "FAIL" if pinned else "WARN"
        why = ("it is the version this PyTorch pins, so the build would install it"
               if pinned else "the build installs PyTorch's pinned Triton and probes that one")
        return DoctorRow(
            check=check,
            status=status,
            detail=f"{triton} ({report.python}) cannot generate code for {result.target}: "
                   f"{result.reason}; {why}",
            fix=f"choose a PyTorch ref whose Triton pin supports {result.target}, or drop "
                f"{result.target} from {arch_flag}",
        )
    fix = SKIP_FIXES.get(result.cause, "")
    return DoctorRow(check=check, status="WARN",
                     detail=f"{triton}: not proven for {result.target}: {result.reason}", fix=fix)

