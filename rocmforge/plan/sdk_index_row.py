"""Doctor's row for the pinned pip ROCm SDK: is the release (and each target's device package)
on its index?

The build's plan already asks the index before any step (plan.gather._check_sdk_index, via
sources.rocm_sdk_index.check_sdk_index) and stops with exit 2 or 3; this shows the same answer
as a doctor row, asked with a 5 s bound. Owns: the row (an index that lacks the release or a
device package FAILs with that error's fix; an index that cannot be read is a WARN, never OK;
an SDK already in the build venv with every device package is OK without asking). Must not:
choose the index or the packages (plan.rocm_sdk does) or install anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rocmforge.errors import RocmforgeError
from rocmforge.plan.doctor_row import DoctorRow

if TYPE_CHECKING:
    from rocmforge.probes.facts import Facts
    from rocmforge.settings import Settings

CHECK = "ROCm SDK index"
INDEX_TIMEOUT_S = 5.0


def sdk_index_rows(settings: Settings, facts: Facts, targets: Sequence[str]) -> list[DoctorRow]:
    if not settings.rocm_sdk and not settings.rocm_sdk_version:
        return []
    from rocmforge.knowledge.rocm_sdk import load_sdk_table
    from rocmforge.plan.gather import devices_to_install
    from rocmforge.plan.rocm_sdk import other_route, sdk_plan
    from rocmforge.sources.rocm_sdk_index import SdkIndexUnreachable, check_sdk_index

    table = load_sdk_table()
    try:
        sdk = sdk_plan(settings, targets, table, facts.rocm)
    except RocmforgeError as exc:
        return [DoctorRow(check=CHECK, status="FAIL", detail=_said(exc), fix=exc.fix)]
    if sdk is None:
        return []
    if sdk.installed_root and not devices_to_install(sdk):
        return [DoctorRow(check=CHECK, status="OK",
                          detail=f"rocm {sdk.version} is installed in the build venv "
                          f"({sdk.installed_root}) with its device packages")]
    try:
        check_sdk_index(sdk.index, sdk.version, sdk.device_packages,
                        other_route=other_route(sdk, table), timeout_s=INDEX_TIMEOUT_S)
    except SdkIndexUnreachable as exc:
        return [DoctorRow(check=CHECK, status="WARN",
                          detail=f"cannot check: {_said(exc)}", fix=exc.fix)]
    except RocmforgeError as exc:
        return [DoctorRow(check=CHECK, status="FAIL", detail=_said(exc), fix=exc.fix)]
    devices = ", ".join(sdk.device_packages)
    return [DoctorRow(check=CHECK, status="OK",
                      detail=f"{sdk.index} lists rocm {sdk.version}"
                      + (f" and {devices} at it" if devices else ""))]


def _said(exc: RocmforgeError) -> str:
    return "; ".join(p for p in (exc.what, exc.why) if p)
