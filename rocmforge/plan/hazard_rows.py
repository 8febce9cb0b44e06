"""Doctor rows for the conditions rocmforge.probes.hazards reads: each a failure users hit late
in a build (tests/failures has the real logs), stopped or warned about before it starts.

Owns: the verdict and the fix of each row. A row appears only where the probe found something
(or where the kit applies a remedy the user should know about). Must not: probe anything.
"""

from __future__ import annotations

from rocmforge.plan.doctor import DoctorRow
from rocmforge.probes.hazards import Hazards, describe
from rocmforge.versions import version_key

SETUPTOOLS_WITHOUT_PKG_RESOURCES = "82"  # setuptools 82.0.0 removed pkg_resources


def hazard_rows(hazards: Hazards | None, *, cmake_version: str, cmake_policy_minimum: str,
                venv: str, layout: str = "") -> list[DoctorRow]:
    if hazards is None:
        return []
    rows: list[DoctorRow] = []
    rows += _thrust_rows(hazards, layout)
    if hazards.runtime_copies:
        rows.append(DoctorRow(
            check="HIP runtime copies", status="WARN",
            detail="a second HIP/HSA runtime, not the selected install's, is on the loader or "
            f"link path: {describe(hazards.runtime_copies)}; the build may link it and torch "
            "load it (undefined symbol hsa_…/hip…, or 'HIP was built using' another release)",
            fix="take its folder off LD_LIBRARY_PATH / LIBRARY_PATH (or remove its "
            "/etc/ld.so.conf.d entry and run ldconfig), so one ROCm install provides both"))
    rows += _cmake_rows(hazards, cmake_version, cmake_policy_minimum)
    rows += _setuptools_rows(hazards, venv)
    if hazards.venv_foreign:
        rows.append(DoctorRow(
            check="build venv", status="WARN",
            detail=f"the build venv ({venv}) holds {', '.join(hazards.venv_foreign)}: a CUDA "
            "`triton` shadows ROCm's (torch.compile then finds no driver or links -lcuda), "
            "and a non-ROCm torch there is what build scripts import until the new one is "
            "installed",
            fix=f"{venv}/bin/python -m pip uninstall -y "
            + " ".join(sorted({f.split()[0] for f in hazards.venv_foreign}))))
    rows += pin_rows(hazards)
    pinned = {str(r.prefix) for r in hazards.pins}
    if hazards.venv_torch and hazards.built_torch and hazards.venv_torch != hazards.built_torch \
            and venv not in pinned:  # a pinned build venv: its "venv torch" row is pin_rows
        rows.append(DoctorRow(
            check="venv torch", status="WARN",
            detail=f"the build venv ({venv}) has torch {hazards.venv_torch}, but the finished "
            f"build's dist/manifest.json names torch {hazards.built_torch}: a later `pip "
            "install` replaced the torch that was built (extensions built now would be built "
            "against the wrong one)",
            fix=f"invoke install --python {venv}/bin/python   # puts the built wheels back and "
            "pins the venv to them"))
    return rows


def _thrust_packages(layout: str) -> str:
    """rocThrust's and hipCUB's packages for the install's layout (config/rocm_components.toml)."""
    from rocmforge.knowledge.components import load_components

    rows = {c.name: c for c in load_components()}
    names = {rows[n].install_hint(layout) for n in ("rocthrust", "hipcub") if n in rows}
    return "; ".join(sorted(names))


def pin_rows(hazards: Hazards) -> list[DoctorRow]:
    """Per venv the kit pinned: "venv torch" when a pinned wheel was replaced (another version,
    or the same version from an index), "venv pin" when pip in this environment would not read
    the kit's constraint file (and OK when it would)."""
    rows: list[DoctorRow] = []
    for report in hazards.pins:
        python = f"{report.prefix}/bin/python"
        if report.replaced:
            rows.append(DoctorRow(
                check="venv torch", status="WARN",
                detail=f"{report.prefix}: " + "; ".join(report.replaced) + ": something "
                "replaced what the kit built and pinned there (extensions built now would be "
                "built against it)",
                fix=f"invoke install --python {python}   # puts the built wheels back and pins "
                "the venv to them"))
        state = report.state
        pinned = ", ".join(f"{n}=={v}" for n, v in report.pins[:3]) + \
            (" …" if len(report.pins) > 3 else "")
        if state.holds and report.left_out:
            rows.append(DoctorRow(
                check="venv pin", status="WARN",
                detail=f"`pip install` in {report.prefix} keeps {pinned}, but not your "
                f"constraint file(s) {' '.join(report.left_out)}: your pip configuration "
                "named them after the kit wrote the venv's line, which replaces them there",
                fix=f"invoke install --python {python}   # writes the line again with them"))
            continue
        if state.holds:
            rows.append(DoctorRow(
                check="venv pin", status="OK",
                detail=f"`pip install` in {report.prefix} keeps {pinned}: pip takes its "
                f"constraint from {state.source}"))
            continue
        rows.append(DoctorRow(
            check="venv pin", status="WARN",
            detail=f"`pip install` in {report.prefix} can replace {pinned}: in this shell pip "
            + (f"takes its constraint from {state.source} ({' '.join(state.constraints)}), "
               if state.constraints else f"reads no constraint ({state.source}), "
               if state.source else "reads no constraint, ")
            + "which does not name the kit's file",
            fix=f"invoke install --python {python}   # writes the pin and its hook again"))
    return rows


def _thrust_rows(hazards: Hazards, layout: str = "") -> list[DoctorRow]:
    if not hazards.cuda_thrust:
        return []
    where = describe(hazards.cuda_thrust)
    if hazards.rocthrust is None:
        return [DoctorRow(
            check="thrust", status="FAIL",
            detail=f"CUDA's thrust is on the include path ({where}) and the ROCm install has no "
            "rocThrust, so HIP compiles include CUDA's headers and stop at "
            "'cuda_runtime_api.h' file not found (ROCm/pytorch#361)",
            fix=f"install rocThrust and hipCUB in the ROCm install ({_thrust_packages(layout)}), "
            "and remove CUDA's thrust (Debian/Ubuntu: sudo apt-get remove libthrust-dev) or "
            "take its folder off CPATH/CPLUS_INCLUDE_PATH")]
    via_variable = [f for f in hazards.cuda_thrust if f.via != "system include folder"]
    if not via_variable:
        return []  # rocThrust's -I comes before the system folders
    return [DoctorRow(
        check="thrust", status="WARN",
        detail="CUDA's thrust is on the include path through a variable "
        f"({describe(via_variable)}); "
        f"rocThrust is at {hazards.rocthrust}, but a compile that does not name ROCm's "
        "include folder first (an extension, a submodule) takes CUDA's",
        fix="take the CUDA folder off " + ", ".join(sorted({f.via for f in via_variable})))]


def _cmake_rows(hazards: Hazards, cmake_version: str, minimum: str) -> list[DoctorRow]:
    if not hazards.cmake_floors:
        return []
    shown = ", ".join(f"{path} ({version})" for path, version in hazards.cmake_floors[:4])
    more = len(hazards.cmake_floors) - 4
    listing = shown + (f" and {more} more" if more > 0 else "")
    if minimum:
        return [DoctorRow(
            check="cmake policy", status="OK",
            detail=f"the checkout declares cmake_minimum_required below 3.5 in {listing}; "
            f"CMake 4 refuses that, so the build sets CMAKE_POLICY_VERSION_MINIMUM={minimum} "
            "(recorded in the build environment; CMake 3 ignores it)",
            fix="")]
    four = cmake_version and version_key(cmake_version, width=3) >= version_key("4", width=3)
    return [DoctorRow(
        check="cmake policy", status="FAIL" if four else "WARN",
        detail=f"the checkout declares cmake_minimum_required below 3.5 in {listing}, and "
        "cmake_policy_minimum is off: CMake 4 stops with 'Compatibility with CMake < 3.5 has "
        "been removed'" + (f" (cmake here is {cmake_version})" if four else
                           " once the build venv installs CMake 4"),
        fix="leave cmake_policy_minimum at its default (3.5), or use CMake 3 in the build "
        "venv (python -m pip install 'cmake<4')")]


def _setuptools_rows(hazards: Hazards, venv: str) -> list[DoctorRow]:
    if not hazards.pkg_resources:
        return []
    users = ", ".join(hazards.pkg_resources)
    have = hazards.venv_setuptools
    too_new = bool(have) and version_key(have, width=3) >= version_key(
        SETUPTOOLS_WITHOUT_PKG_RESOURCES, width=3)
    if have and not too_new:
        return [DoctorRow(check="setuptools", status="OK",
                          detail=f"{users} import pkg_resources; the build venv's setuptools "
                          f"{have} still has it")]
    return [DoctorRow(
        check="setuptools", status="FAIL" if too_new else "WARN",
        detail=f"{users} import pkg_resources, which setuptools 82 removed; the build venv "
        + (f"has setuptools {have}" if have else "will get the newest setuptools")
        + " (pytorch/vision#9380)",
        fix=f"{venv}/bin/python -m pip install 'setuptools<82' (or a release of that project "
        "whose setup.py no longer imports pkg_resources)")]
