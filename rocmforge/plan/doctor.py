"""The doctor's judgement: Facts + targets + Settings -> rows of OK / WARN / FAIL.

Owns: what counts as a problem before a multi-hour PyTorch build, the reason in each row, and the
fix — a command a user can paste — for every FAIL. Pure: no os.environ, no subprocess, no files;
everything comes in through `Facts` (rocmforge.probes.facts) and the knowledge tables.
Must not: probe or print (the `doctor` task does both).

Thresholds and their sources:
- free disk: FAIL below 10 GiB (PyTorch's README floor for any source build), WARN below 30 GiB
  (our estimate for ROCm: the hipified sources are rewritten in place, `libtorch_hip.so` alone is
  about 1.3 GB per fat binary in torch 2.3.1+rocm6.0 (pytorch/pytorch#129165), plus its objects,
  a Triton build and the wheel; pytorch-rocm-build.md §1.1, §5.5 of rocm-arch-toolchain.md);
- memory: MAX_JOBS = min(cores, floor(mem / per-job GiB)) (plan.environment); FAIL when even
  one job does not fit (flash-attention TUs take about 4.5 GB each, pytorch/pytorch#124018, §5.3);
- CMake: `knowledge.compiler_policy.cmake_minimum(torch)` (3.20 or PyTorch's own, whichever is
  higher).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rocmforge.errors import RocmforgeError
from rocmforge.plan.doctor_row import DoctorRow, Status
from rocmforge.plan.environment import max_jobs
from rocmforge.versions import version_key

if TYPE_CHECKING:
    from rocmforge.knowledge.arches import ArchTable
    from rocmforge.knowledge.components import Component
    from rocmforge.knowledge.releases import PytorchRelease
    from rocmforge.knowledge.targets import TargetId
    from rocmforge.probes.facts import Facts
    from rocmforge.probes.rocm import RocmInstall
    from rocmforge.probes.rocm_components import ComponentFound
    from rocmforge.probes.system import SystemFacts
    from rocmforge.settings import Settings

DISK_FAIL_GIB = 10.0
DISK_WARN_GIB = 30.0
ROCM_INSTALL_DOCS = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/"


def diagnose(
    facts: Facts,
    targets: Sequence[TargetId],
    settings: Settings,
    *,
    table: ArchTable | None = None,
    release: PytorchRelease | None = None,
    components: Sequence[tuple[Component, ComponentFound]] | None = None,
) -> tuple[DoctorRow, ...]:
    """All rows, in the order a reader fixes them: ROCm, targets, toolchain, tools, machine.

    `release` is the PyTorch being built as plan.pytorch decided it (the tree's facts when the
    checkout exists, the table's estimate before); None reads it the same way here.
    `components` pairs each ROCm component the PyTorch needs with what the install has (None:
    not probed, no row)."""
    if release is None:
        from rocmforge.plan.pytorch import pytorch_for
        from rocmforge.workdir import workdir_for

        release = pytorch_for(settings, workdir_for(settings.work_dir)).release
    rows: list[DoctorRow] = []
    rows += _rocm_rows(facts)
    rows += _rocm_for_pytorch_rows(facts, release, components)
    rows += _target_rows(facts, targets, settings, table, release)
    rows += _kernel_rows(facts, targets, table)
    rows += _compiler_rows(facts, settings, release)
    rows += _tool_rows(facts, release)
    rows += _hazard_rows(facts, settings)
    rows += _ck_rows(facts, targets, settings)
    rows += _sccache_rows(facts)
    rows += _machine_rows(facts, settings)
    return tuple(rows)


# --- ROCm -----------------------------------------------------------------------------------


def _rocm_rows(facts: Facts) -> list[DoctorRow]:
    rocm = facts.rocm
    if rocm is None:
        return [
            DoctorRow(
                check="ROCm install",
                status="FAIL",
                detail=facts.rocm_problem or "no ROCm install found",
                fix="sudo apt-get install hipcc rocminfo   # Debian/Ubuntu; or install ROCm from "
                + ROCM_INSTALL_DOCS
                + " and pass --rocm-path /opt/rocm-X.Y.Z",
            )
        ]
    others = [str(i.root) for i in facts.rocm_installs if i.root != rocm.root]
    detail = (
        f"{rocm.label} (found via {rocm.source}; version from "
        f"{rocm.version_source or 'nowhere'}; LLVM {rocm.llvm_major or '?'})"
    )
    if others:
        detail += "; also found: " + ", ".join(others)
    rows = [
        DoctorRow(
            check="ROCm install",
            status="OK" if rocm.version else "WARN",
            detail=detail,
            fix="" if rocm.version else "pass --rocm-path to an install with .info/version",
        )
    ]
    release_row = _rocm_release_row(rocm)
    if release_row is not None:
        rows.append(release_row)
    root_q = shlex.quote(str(rocm.root))
    if facts.path_warnings:
        rows += [
            DoctorRow(
                check="ROCM_PATH/HIP_PATH",
                status="WARN",
                detail=w,
                fix=f"export ROCM_PATH={root_q} HIP_PATH={root_q}",
            )
            for w in facts.path_warnings
        ]
    else:
        rows.append(
            DoctorRow(
                check="ROCM_PATH/HIP_PATH",
                status="OK",
                detail=f"consistent; the build exports both as {rocm.root}",
            )
        )
    owner = facts.hipcc_owner
    if owner is None:
        rows.append(
            DoctorRow(
                check="hipcc on PATH",
                status="OK" if rocm.hipcc else "WARN",
                detail="no hipcc on PATH; the build uses "
                f"{rocm.hipcc or 'the ROCm clang'} through ROCM_PATH",
                fix="" if rocm.hipcc else f"install HIP into {rocm.root} (hipcc package)",
            )
        )
    elif owner.root.resolve() == rocm.root.resolve():
        rows.append(
            DoctorRow(
                check="hipcc on PATH",
                status="OK",
                detail=f"{owner.hipcc} belongs to the selected install",
            )
        )
    else:
        rows.append(
            DoctorRow(
                check="hipcc on PATH",
                status="WARN",
                detail=f"hipcc on PATH is {owner.hipcc} ({owner.label}), not the selected "
                f"{rocm.label}; scripts that call plain `hipcc` get the other ROCm",
                fix=f'export PATH={shlex.quote(str(rocm.root / "bin"))}:"$PATH"',
            )
        )
    return rows


def _rocm_for_pytorch_rows(
    facts: Facts,
    release: PytorchRelease,
    components: Sequence[tuple[Component, ComponentFound]] | None,
) -> list[DoctorRow]:
    """The ROCm release against the PyTorch release's range, and every component PyTorch's
    CMake looks for: a build missing one fails at configure, an hour in."""
    rocm = facts.rocm
    if rocm is None:
        return []
    rows: list[DoctorRow] = []
    supported = [v for v in release.rocm if v]
    have = ".".join(rocm.version.split(".")[:2])
    floor = release.rocm_min
    if floor and rocm.version:
        # The checkout's LoadHIP.cmake says the oldest ROCm it configures with: that decides,
        # not the releases wheels are built for.
        if version_key(rocm.version, width=3) < version_key(floor, width=3):
            rows.append(DoctorRow(
                check="ROCm for PyTorch", status="FAIL",
                detail=f"{release.label}'s LoadHIP.cmake stops below ROCm {floor} "
                       f"({release.rocm_min_source}); ROCm {rocm.version} at {rocm.root}",
                fix=f"install ROCm {floor} or newer and pass --rocm-path to it, or build an "
                    "older PyTorch (--ref)"))
            return rows + _component_rows(rocm, components)
        if supported and have and version_key(have, width=2) < version_key(supported[0],
                                                                             width=2):
            rows.append(DoctorRow(
                check="ROCm for PyTorch", status="WARN",
                detail=f"ROCm {rocm.version} is accepted by {release.label}'s LoadHIP.cmake "
                       f"(ROCm >= {floor}, {release.rocm_min_source}) but older than the ROCm "
                       f"releases its wheels are built for ({', '.join(supported)}): not "
                       "tested upstream"))
            return rows + _component_rows(rocm, components)
    if supported and have:
        span = f"{supported[0]}-{supported[-1]}" if len(supported) > 1 else supported[0]
        where = (f"{release.label} ships wheels for ROCm {span} (config/pytorch.toml, from "
                 f"RELEASE.md); ROCm {rocm.version} at {rocm.root}")
        if version_key(have, width=2) < version_key(supported[0], width=2):
            older = _releases_with_rocm(have)
            rows.append(DoctorRow(
                check="ROCm for PyTorch", status="FAIL",
                detail=f"{where} is older than the oldest of them",
                fix=f"install ROCm {supported[-1]} and pass --rocm-path /opt/rocm-"
                    f"{supported[-1]}.x" + (
                        f", or build PyTorch {older[-1]} (--ref release/{older[-1]}), the newest "
                        f"release the table lists for ROCm {have}" if older else
                        f" (no PyTorch release in config/pytorch.toml ships wheels for ROCm "
                        f"{have}, so an older --ref does not help)")))
        elif version_key(have, width=2) > version_key(supported[-1], width=2):
            rows.append(DoctorRow(
                check="ROCm for PyTorch", status="WARN",
                detail=f"{where} is newer than the newest of them: not tested upstream, and "
                "a newer ROCm's API changes can stop an older PyTorch's compile (PyTorch "
                "2.4 needed a backport to build on ROCm 7.0, ROCm/pytorch#2325)",
                fix=_newer_rocm_fix(have, release, supported[-1])))
        else:
            rows.append(DoctorRow(check="ROCm for PyTorch", status="OK",
                                  detail=f"{where} is in that range"))
    return rows + _component_rows(rocm, components)


def _component_rows(rocm: RocmInstall,
                    components: Sequence[tuple[Component, ComponentFound]] | None,
                    ) -> list[DoctorRow]:
    """Every component PyTorch's CMake looks for, found or missing in the install."""
    from rocmforge.knowledge.components import install_fix

    rows: list[DoctorRow] = []
    if components is None:
        return rows
    missing = [c for c, found in components if c.required and not found.found]
    optional = [c for c, found in components if not c.required and not found.found]
    present = [f"{c.name} {found.version or '?'}" for c, found in components if found.found]
    if missing:
        rows.append(DoctorRow(
            check="ROCm components", status="FAIL",
            detail=f"{len(missing)} of {len(components)} components PyTorch's CMake requires "
                   f"are not in {rocm.root}: " + ", ".join(c.name for c in missing)
                   + (f" (found: {', '.join(present)})" if present else ""),
            fix=install_fix(missing, rocm.layout,
                            found=[c for c, found in components if c.required and found.found])))
    else:
        rows.append(DoctorRow(check="ROCm components", status="OK",
                              detail=f"all {len(present)} found in {rocm.root}: "
                                     + ", ".join(present)))
    if optional:
        rows.append(DoctorRow(
            check="ROCm optional", status="WARN",
            detail="not found (the build goes on without them): "
                   + ", ".join(c.name for c in optional),
            fix=install_fix(optional, rocm.layout)))
    return rows


def _newer_rocm_fix(have: str, release: PytorchRelease, newest: str) -> str:
    """A ROCm newer than the release's wheels: the newest PyTorch whose wheels are built for
    it, else the release's own newest ROCm."""
    newer = [v for v in _releases_with_rocm(have)
             if version_key(v, width=3) > version_key(release.version, width=3)]
    if newer:
        return (f"build PyTorch {newer[-1]}, whose wheels are built for ROCm {have}: "
                f"--ref release/{newer[-1]}")
    return (f"install ROCm {newest} (the newest {release.label} is built for) and pass "
            f"--rocm-path /opt/rocm-{newest}.x")


def _releases_with_rocm(have: str) -> list[str]:
    """PyTorch releases of config/pytorch.toml whose ROCm list has `have` (major.minor), oldest
    first: an older --ref is advice only when one exists."""
    from rocmforge.knowledge.releases import load_pytorch_releases

    found = [row.version for row in load_pytorch_releases().values()
             if have in {".".join(v.split(".")[:2]) for v in row.rocm if v}]
    return sorted(found, key=lambda v: version_key(v, width=3))


def _rocm_release_row(rocm: RocmInstall) -> DoctorRow | None:
    if not rocm.version:
        return None
    try:
        from rocmforge.knowledge.releases import rocm_release_for

        release = rocm_release_for(rocm.version)
    except ImportError:
        return None
    except (RocmforgeError, KeyError, ValueError) as exc:
        return DoctorRow(
            check="ROCm release",
            status="WARN",
            detail=f"ROCm {rocm.version} is not in the kit's release table ({exc})",
            fix="",
        )
    if release is None:
        return DoctorRow(
            check="ROCm release",
            status="WARN",
            detail=f"ROCm {rocm.version} is not in the kit's release table",
        )
    llvm = getattr(release, "llvm_major", 0)
    mismatch = bool(llvm and rocm.llvm_major and llvm != rocm.llvm_major)
    detail = f"ROCm {rocm.version}: the table says LLVM {llvm or '?'}"
    if mismatch:
        detail += f", but this install's clang is LLVM {rocm.llvm_major} (a distro build)"
    return DoctorRow(check="ROCm release", status="OK", detail=detail)


# --- targets --------------------------------------------------------------------------------


def _target_rows(facts: Facts, targets: Sequence[TargetId], settings: Settings,
                 table: ArchTable | None,
                 release: PytorchRelease | None = None) -> list[DoctorRow]:
    rows: list[DoctorRow] = []
    gpus = facts.gpus
    found = ", ".join(
        f"{a.target}{' (' + a.product + ')' if a.product else ''}" for a in gpus.agents
    )
    if gpus.agents:
        rows.append(
            DoctorRow(check="GPUs found", status="OK", detail=f"{found} (via {gpus.source})")
        )
    else:
        rows.append(
            DoctorRow(
                check="GPUs found",
                status="WARN",
                detail="no AMD GPU visible (" + "; ".join(gpus.tried) + "); building works without "
                "one, running the verification needs one",
            )
        )
    for name, value in gpus.overrides:
        rows.append(
            DoctorRow(
                check=name,
                status="WARN",
                detail=f"{name}={value} makes the runtime report a different GPU than the "
                "hardware; detection here used KFD sysfs where possible, and a build for the "
                "spoofed target only works when the ISAs really are compatible",
                fix=f"unset {name}",
            )
        )
    if not targets:
        rows.append(
            DoctorRow(
                check="targets",
                status="FAIL",
                detail="no --arch given and no GPU found, so there is nothing to build for",
                fix="invoke doctor --arch gfx1100   # or mi300, rdna3, gfx90a; also "
                "ROCMFORGE_ARCH or invoke.yaml rocm.arch",
            )
        )
        return rows
    names = [str(t) for t in targets]
    origin = "--arch/settings" if settings.arch else f"GPUs found via {gpus.source}"
    rows.append(
        DoctorRow(check="targets", status="OK", detail=f"{';'.join(names)} (from {origin})")
    )
    if settings.arch and gpus.agents:
        present = {a.target for a in gpus.agents}
        missing = sorted({n.split(":")[0] for n in names} - present)
        absent = sorted(present - {n.split(":")[0] for n in names})
        if absent:
            rows.append(
                DoctorRow(
                    check="targets vs GPUs",
                    status="WARN",
                    detail=f"this machine has {', '.join(absent)}, which the build does not target "
                    f"(targets: {';'.join(names)}); the result will not run on it "
                    "('invalid device function')",
                    fix=f"invoke doctor --arch '{';'.join(sorted(set(names) | set(absent)))}'",
                )
            )
        elif missing:
            rows.append(
                DoctorRow(
                    check="targets vs GPUs",
                    status="OK",
                    detail=f"also building for {', '.join(missing)} (not present here)",
                )
            )
    if facts.rocm is None:
        return rows
    probes = {p.target: p for p in facts.target_probes}
    for name in names:
        probe = probes.get(name)
        if probe is None:
            rows.append(
                DoctorRow(
                    check=f"compile {name}",
                    status="WARN",
                    detail="not probed: the selected ROCm has neither hipcc nor clang",
                    fix="sudo apt-get install hipcc   # or pass --rocm-path",
                )
            )
            continue
        fix = "" if probe.compiles else (probe.compile_fix or
                                         _toolchain_fix(name, facts.rocm, table, release))
        detail = probe.compile_reason
        if probe.cached_at:
            detail += (f" (result cached {probe.cached_at}; nothing it depends on changed "
                       "since; --no-cache compiles afresh)")
        rows.append(
            DoctorRow(
                check=f"compile {name}",
                status="OK" if probe.compiles else "FAIL",
                detail=detail,
                fix=fix,
            )
        )
        if probe.device_lib is None:
            rows.append(
                DoctorRow(check=f"device lib {name}", status="OK", detail=probe.device_lib_reason)
            )
        else:
            rows.append(
                DoctorRow(
                    check=f"device lib {name}",
                    status="OK" if probe.device_lib else "FAIL",
                    detail=probe.device_lib_reason,
                    fix="" if probe.device_lib else _toolchain_fix(name, facts.rocm, table,
                                                                   release),
                )
            )
    return rows


def check_addon_words(settings: Settings) -> None:
    """Refuse `--with` / the companions setting as `invoke plan` and `invoke build` do (an
    unknown name, a repeated one, a malformed git URL or ref: UsageError, exit 2), before doctor
    probes anything, so that `invoke doctor --with …` judges the add-ons the build would make.
    A remote is not asked here: its row says whether it can be read."""
    from rocmforge.knowledge.companions import load_companions, parse_requests
    from rocmforge.knowledge.extensions import load_extensions, parse_source, split_with

    table = load_extensions()
    companions, extensions = split_with(settings.companions, table)
    parse_requests(companions, load_companions())
    for word in extensions:
        parse_source(word, table, settings.companion_repos)


def _toolchain_fix(target: str, rocm: RocmInstall, table: ArchTable | None,
                   release: PytorchRelease | None = None) -> str:
    """A newer ROCm is the fix for an unknown target or a missing device library: one that the
    PyTorch being built ships wheels for and that has the target (the same ROCm the "ROCm for
    PyTorch" row names, never a second, different advice)."""
    processor = target.split(":")[0]
    arch = table.get(processor) if table is not None else None
    floor = arch.rocm_min if arch is not None else ""
    need = f"ROCm >= {floor}" if floor else "a newer ROCm"
    if arch is not None and floor and arch.llvm_min:
        need += f", LLVM >= {arch.llvm_min}"
    pick = ""
    if release is not None:
        usable = [v for v in release.rocm if v and (not floor or version_key(v, width=2)
                                                    >= version_key(floor, width=2))]
        if usable:
            pick = (f"install ROCm {usable[-1]} (the newest {release.label} ships wheels for; "
                    f"{processor} needs {need})")
        elif release.rocm and floor:
            pick = (f"install {need}; {release.label} ships wheels only for ROCm "
                    f"{', '.join(v for v in release.rocm if v)}, so build a newer PyTorch too "
                    "(--ref)")
    if not pick:
        pick = f"install {need}"
    return (
        f"{pick} from {ROCM_INSTALL_DOCS} ({rocm.label} cannot build {processor}), then run "
        f"`invoke doctor --arch {target} --rocm-path /opt/rocm-<version>`"
    )


# --- host compiler --------------------------------------------------------------------------


def _compiler_rows(facts: Facts, settings: Settings,
                   release: PytorchRelease) -> list[DoctorRow]:
    compilers = getattr(facts, "compilers", ())
    chosen = getattr(facts, "host_compiler", None)
    if chosen is None:
        wanted = (
            f"gcc-{settings.gcc}"
            if settings.gcc
            else (f"clang-{settings.clang}" if settings.clang else "gcc")
        )
        pkg = (
            f"gcc-{settings.gcc} g++-{settings.gcc}"
            if settings.gcc
            else f"clang-{settings.clang}"
            if settings.clang
            else "g++"
        )
        return [
            DoctorRow(
                check="host compiler",
                status="FAIL",
                detail=f"{wanted} not found on PATH"
                + (f" (found: {', '.join(c.label for c in compilers)})" if compilers else ""),
                fix=f"sudo apt-get install {pkg}",
            )
        ]
    from rocmforge.knowledge.compiler_policy import build_verdict, judge_compiler
    from rocmforge.knowledge.releases import rocm_release_for

    try:
        rocm = rocm_release_for(facts.rocm.version) if facts.rocm and facts.rocm.version else None
    except (RocmforgeError, KeyError, ValueError):
        rocm = None
    torch = release
    if rocm is None:
        return [
            DoctorRow(
                check="host compiler",
                status="WARN",
                detail=f"{chosen.label} ({chosen.cc}); ROCm "
                f"{facts.rocm.version if facts.rocm else '?'} is not in the kit's tables, so "
                "the compiler was not judged",
            )
        ]
    verdict = judge_compiler(chosen.kind, chosen.version, rocm, torch,
                             installed={(c.kind, c.major) for c in compilers if c.origin != "rocm"})
    # One verdict for doctor, toolchain and the build: the build refuses a compiler the table
    # warns about (a judged WARN) as it refuses a FAIL, unless allow_compiler; then both are WARN.
    graded, reason = build_verdict(verdict.status, verdict.reason,
                                   allow_compiler=settings.allow_compiler)
    status: Status = "OK" if graded == "OK" else ("WARN" if graded == "WARN" else "FAIL")
    fix = _build_compiler_fix(verdict.fix, settings.arch) if status != "OK" else ""
    if status == "FAIL" and not fix:
        fix = ("sudo apt-get install gcc-11 g++-11 && invoke doctor --gcc 11; for this build "
               "only: `invoke build --gcc 11`")
    return [
        DoctorRow(
            check="host compiler",
            status=status,
            detail=f"{chosen.label} ({chosen.cc}): {reason}",
            fix=fix,
        )
    ]


def _build_compiler_fix(fix: str, arch: str = "") -> str:
    """`invoke toolchain --gcc 11 (...)` -> also the build-only form `invoke build --arch A
    --gcc 11` (the build refuses to run without a target: issue 41 item 7)."""
    import re
    import shlex

    match = re.search(r"invoke toolchain (--(?:gcc|clang) \d+)", fix)
    if not match or "invoke build" in fix:
        return fix
    target = f"--arch {shlex.quote(arch)}" if arch else "--arch <target>"
    return f"{fix}; for this build only: `invoke build {target} {match.group(1)}`"


# --- build tools ----------------------------------------------------------------------------


def _tool_rows(facts: Facts, release: PytorchRelease) -> list[DoctorRow]:
    system = facts.system
    rows: list[DoctorRow] = []
    minimum = _cmake_minimum(release)
    if system.cmake.path is None:
        rows.append(
            DoctorRow(
                check="cmake",
                status="FAIL",
                detail="cmake not found on PATH",
                fix=f"python3 -m pip install 'cmake>={minimum}'",
            )
        )
    elif version_key(system.cmake.version, width=3) < version_key(minimum, width=3):
        rows.append(
            DoctorRow(
                check="cmake",
                status="FAIL",
                detail=f"cmake {system.cmake.version} at {system.cmake.path} is older than "
                f"{minimum}, the minimum for "
                + (f"the checkout folder's tree ({release.cmake_min_source})"
                   if release.cmake_min_source else release.label),
                fix=f"python3 -m pip install 'cmake>={minimum}'",
            )
        )
    else:
        rows.append(
            DoctorRow(
                check="cmake", status="OK", detail=f"cmake {system.cmake.version} (>= {minimum})"
            )
        )
    if system.ninja.path is None:
        rows.append(
            DoctorRow(
                check="ninja",
                status="WARN",
                detail="ninja not found; the build falls back to make (slower, "
                "and MAX_JOBS is then not applied per compile)",
                fix="python3 -m pip install ninja",
            )
        )
    else:
        rows.append(DoctorRow(check="ninja", status="OK", detail=f"ninja {system.ninja.version}"))
    rows += _python_rows(system, release)
    cuda_triton = [t for t in system.triton if t.name == "triton"]
    if cuda_triton:
        t = cuda_triton[0]
        rows.append(
            DoctorRow(
                check="triton",
                status="WARN",
                detail=f"the CUDA `triton` {t.version} is installed ({t.location}); it provides "
                "the same `triton` module as pytorch-triton-rocm and would shadow it, so "
                "torch.compile fails on ROCm",
                fix="python3 -m pip uninstall -y triton",
            )
        )
    else:
        rocm_triton = [t for t in system.triton if t.name != "triton"]
        detail = (
            f"{rocm_triton[0].name} {rocm_triton[0].version}"
            if rocm_triton
            else "no triton installed; the build installs pytorch-triton-rocm at the pin"
        )
        rows.append(DoctorRow(check="triton", status="OK", detail=detail))
    return rows


def _kernel_rows(facts: Facts, targets: Sequence[TargetId],
                 table: ArchTable | None) -> list[DoctorRow]:
    from rocmforge.plan.kernel_rows import kernel_rows

    return kernel_rows(facts.library_code, targets, table,
                       facts.rocm.layout if facts.rocm is not None else "")


def _hazard_rows(facts: Facts, settings: Settings) -> list[DoctorRow]:
    from rocmforge.plan.hazard_rows import hazard_rows
    from rocmforge.workdir import workdir_for

    return hazard_rows(facts.hazards, cmake_version=facts.system.cmake.version or "",
                       cmake_policy_minimum=settings.cmake_policy_minimum,
                       venv=str(workdir_for(settings.work_dir).venv),
                       layout=facts.rocm.layout if facts.rocm is not None else "",
                       work_dir=str(workdir_for(settings.work_dir).root))


def _ck_rows(facts: Facts, targets: Sequence[TargetId], settings: Settings) -> list[DoctorRow]:
    from rocmforge.plan.hazard_rows import ck_rows

    processors = list(dict.fromkeys(str(t).split(":")[0] for t in targets))
    return ck_rows(facts.hazards, processors,
                   ck_on=dict(settings.features).get("ck") == "on")


def _sccache_rows(facts: Facts) -> list[DoctorRow]:
    from rocmforge.plan.hazard_rows import prefix_rows, sccache_rows

    return (sccache_rows(getattr(facts, "sccache_start", None))
            + prefix_rows(getattr(facts, "prefix_configs", ())))


def _python_rows(system: SystemFacts, release: PytorchRelease) -> list[DoctorRow]:
    python = system.python
    rows: list[DoctorRow] = []
    spec = release.python
    where = f"Python {python.version} ({python.executable})"
    if spec and not _python_ok(python.version, spec):
        rows.append(
            DoctorRow(
                check="python",
                status="FAIL",
                detail=f"{where} is outside {spec}, the range {release.label} supports",
                fix="export ROCMFORGE_PYTHON=/usr/bin/python3.12   # any interpreter in " + spec,
            )
        )
    else:
        rng = f" ({release.label} needs {spec})" if spec else ""
        rows.append(DoctorRow(check="python", status="OK", detail=where + rng))
    if python.isolated:
        kind = "conda env" if python.in_conda else "venv"
        rows.append(DoctorRow(check="python env", status="OK", detail=f"running in a {kind}"))
    else:
        rows.append(
            DoctorRow(
                check="python env",
                status="WARN",
                detail="not in a venv or conda env: installing the built torch here would change "
                "the system/user site-packages",
                fix="python3 -m venv .venv && . .venv/bin/activate && python -m pip install -e .",
            )
        )
    return rows


def _python_ok(version: str, spec: str) -> bool:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(spec).contains(version, prereleases=True)
    except InvalidSpecifier:
        return True


def _cmake_minimum(release: PytorchRelease) -> str:
    from rocmforge.knowledge.compiler_policy import cmake_minimum

    return str(cmake_minimum(release))


# --- machine --------------------------------------------------------------------------------


def _machine_rows(facts: Facts, settings: Settings) -> list[DoctorRow]:
    system = facts.system
    rows: list[DoctorRow] = []
    free = system.disk_free_gib
    where = f"{free:.1f} GiB free at {system.disk_checked_at} (work dir {system.work_dir})"
    if free < DISK_FAIL_GIB:
        rows.append(
            DoctorRow(
                check="disk",
                status="FAIL",
                detail=where + f"; a PyTorch source build needs >= {DISK_FAIL_GIB:.0f} GiB",
                fix="export ROCMFORGE_WORK_DIR=/path/on/a/bigger/disk",
            )
        )
    elif free < DISK_WARN_GIB:
        rows.append(
            DoctorRow(
                check="disk",
                status="WARN",
                detail=where + f"; a ROCm build with Triton and the wheel usually "
                f"needs about {DISK_WARN_GIB:.0f} GiB",
                fix="export ROCMFORGE_WORK_DIR=/path/on/a/bigger/disk",
            )
        )
    else:
        rows.append(DoctorRow(check="disk", status="OK", detail=where))
    per_job = settings.mem_per_job_gib
    fitting = max_jobs(system.cores, system.mem_total_gib, per_job)
    jobs = settings.max_jobs or max_jobs(system.cores, system.mem_total_gib, per_job)
    rule = (
        f"MAX_JOBS={jobs} (set)"
        if settings.max_jobs
        else f"MAX_JOBS={jobs} = min({system.cores} cores, floor({system.mem_total_gib:.1f} GiB / "
        f"{per_job:g} GiB per job))"
    )
    if system.mem_total_gib < per_job:
        rows.append(
            DoctorRow(
                check="memory",
                status="FAIL",
                detail=f"{system.mem_total_gib:.1f} GiB total is less than one compile job's "
                f"{per_job:g} GiB; the heaviest HIP TUs (flash attention) take about 4.5 GB",
                fix="add swap (sudo fallocate -l 16G /swapfile && sudo mkswap /swapfile && sudo "
                "swapon /swapfile) or build on a bigger machine",
            )
        )
    elif settings.max_jobs and settings.max_jobs * per_job > system.mem_total_gib:
        rows.append(
            DoctorRow(
                check="memory",
                status="WARN",
                detail=f"{rule}: {settings.max_jobs} jobs x {per_job:g} GiB exceeds "
                f"{system.mem_total_gib:.1f} GiB; expect the OOM killer ('Killed signal')",
                fix=f"export ROCMFORGE_MAX_JOBS={fitting}",
            )
        )
    else:
        rows.append(
            DoctorRow(
                check="memory",
                status="OK",
                detail=f"{system.mem_total_gib:.1f} GiB, {system.cores} cores: {rule}",
            )
        )
    dev = system.devices
    if not dev.kfd_present:
        rows.append(
            DoctorRow(
                check="/dev/kfd",
                status="WARN",
                detail="/dev/kfd is absent (no amdgpu driver or not passed into this "
                "container): building works, running on a GPU does not",
                fix="sudo modprobe amdgpu   # in a container: --device=/dev/kfd --device=/dev/dri",
            )
        )
    elif not dev.kfd_rw:
        rows.append(
            DoctorRow(
                check="/dev/kfd",
                status="WARN",
                detail="/dev/kfd exists but this user cannot open it read-write",
                fix='sudo usermod -aG render,video "$USER"   # then log in again',
            )
        )
    else:
        rows.append(DoctorRow(check="/dev/kfd", status="OK", detail="present and read-write"))
    if dev.is_root:
        rows.append(
            DoctorRow(
                check="render group",
                status="OK",
                detail="running as root (group membership not needed)",
            )
        )
    elif dev.render_group_exists and not dev.in_render_group:
        rows.append(
            DoctorRow(
                check="render group",
                status="WARN",
                detail="this user is not in the `render` group that owns /dev/dri/renderD*",
                fix='sudo usermod -aG render,video "$USER"   # then log in again',
            )
        )
    else:
        detail = "member of render" if dev.in_render_group else "no `render` group on this system"
        rows.append(DoctorRow(check="render group", status="OK", detail=detail))
    return rows
