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
from dataclasses import dataclass
from typing import Any, Literal

from rocmforge.errors import RocmforgeError
from rocmforge.plan.environment import max_jobs

Status = Literal["OK", "WARN", "FAIL"]
DISK_FAIL_GIB = 10.0
DISK_WARN_GIB = 30.0
ROCM_INSTALL_DOCS = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/"


@dataclass(frozen=True, kw_only=True)
class DoctorRow:
    check: str
    status: Status
    detail: str
    fix: str = ""

    def to_json(self) -> dict[str, str]:
        return {"check": self.check, "status": self.status, "detail": self.detail, "fix": self.fix}


def exit_status(rows: Sequence[DoctorRow]) -> int:
    """1 when any row FAILs (the build would fail), else 0."""
    return 1 if any(r.status == "FAIL" for r in rows) else 0


def requested_targets(arch_text: str, gpu_targets: Sequence[str], table: Any) -> tuple[Any, ...]:
    """The targets to check: --arch / settings first, else the GPUs found. Parsed without the
    toolchain's LLVM major so that an unsupported target becomes a doctor row with its reason
    (the compile probe), not a refusal before anything was checked."""
    from rocmforge.knowledge.targets import parse_targets

    text = arch_text.strip() or ";".join(gpu_targets)
    if not text:
        return ()
    return parse_targets(text, table)


def diagnose(
    facts: Any, targets: Sequence[Any], settings: Any, *, table: Any = None
) -> tuple[DoctorRow, ...]:
    """All rows, in the order a reader fixes them: ROCm, targets, toolchain, tools, machine."""
    rows: list[DoctorRow] = []
    rows += _rocm_rows(facts)
    rows += _target_rows(facts, targets, settings, table)
    rows += _compiler_rows(facts, settings)
    rows += _tool_rows(facts, settings)
    rows += _machine_rows(facts, settings)
    return tuple(rows)


# --- ROCm -----------------------------------------------------------------------------------


def _rocm_rows(facts: Any) -> list[DoctorRow]:
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


def _rocm_release_row(rocm: Any) -> DoctorRow | None:
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


def _target_rows(facts: Any, targets: Sequence[Any], settings: Any, table: Any) -> list[DoctorRow]:
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
        fix = "" if probe.compiles else _toolchain_fix(name, facts.rocm, table)
        rows.append(
            DoctorRow(
                check=f"compile {name}",
                status="OK" if probe.compiles else "FAIL",
                detail=probe.compile_reason,
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
                    fix="" if probe.device_lib else _toolchain_fix(name, facts.rocm, table),
                )
            )
    return rows


def _toolchain_fix(target: str, rocm: Any, table: Any) -> str:
    """A newer ROCm is the fix for an unknown target or a missing device library."""
    processor = target.split(":")[0]
    arch = table.get(processor) if table is not None else None
    need = ""
    if arch is not None and arch.rocm_min:
        need = f"ROCm >= {arch.rocm_min}"
        if arch.llvm_min:
            need += f" (LLVM >= {arch.llvm_min})"
    need = need or "a newer ROCm"
    return (
        f"install {need} from {ROCM_INSTALL_DOCS}, then: invoke doctor --arch {target} "
        f"--rocm-path /opt/rocm-<version>   # {rocm.label} cannot build {processor}"
    )


# --- host compiler --------------------------------------------------------------------------


def _compiler_rows(facts: Any, settings: Any) -> list[DoctorRow]:
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
    try:
        from rocmforge.knowledge.compiler_policy import judge_compiler
        from rocmforge.knowledge.releases import pytorch_release_for, rocm_release_for
    except ImportError:
        return [
            DoctorRow(
                check="host compiler",
                status="WARN",
                detail=f"{chosen.label} ({chosen.cc}); the compiler policy table is not "
                "installed, so it was not judged",
            )
        ]
    try:
        rocm = rocm_release_for(facts.rocm.version) if facts.rocm and facts.rocm.version else None
    except (RocmforgeError, KeyError, ValueError):
        rocm = None
    try:
        torch = pytorch_release_for(settings.pytorch_ref)
    except (RocmforgeError, KeyError, ValueError):
        torch = None
    if rocm is None or torch is None:
        missing = (
            "ROCm " + (facts.rocm.version if facts.rocm else "?")
            if rocm is None
            else (f"PyTorch {settings.pytorch_ref}")
        )
        return [
            DoctorRow(
                check="host compiler",
                status="WARN",
                detail=f"{chosen.label} ({chosen.cc}); {missing} is not in the kit's tables, so "
                "the compiler was not judged",
            )
        ]
    verdict = judge_compiler(chosen.kind, chosen.version, rocm, torch)
    # One verdict for doctor, toolchain and the build: the build refuses a compiler the table
    # warns about (a judged WARN) as it refuses a FAIL, unless allow_compiler; then both are WARN.
    status: Status = "OK" if verdict.status == "OK" else "FAIL"
    reason = verdict.reason
    if status == "FAIL" and settings.allow_compiler:
        status = "WARN"
        reason = f"{reason} (allowed by --allow-compiler)"
    elif status == "FAIL" and verdict.status == "WARN":
        reason = (f"{reason}; the build refuses a compiler the table warns about unless "
                  "--allow-compiler is given")
    fix = _build_compiler_fix(verdict.fix) if status != "OK" else ""
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


def _build_compiler_fix(fix: str) -> str:
    """`invoke toolchain --gcc 11 (...)` -> also the build-only form `invoke build --gcc 11`."""
    import re

    match = re.search(r"invoke toolchain (--(?:gcc|clang) \d+)", fix)
    if not match or "invoke build" in fix:
        return fix
    return f"{fix}; for this build only: `invoke build {match.group(1)}`"


# --- build tools ----------------------------------------------------------------------------


def _tool_rows(facts: Any, settings: Any) -> list[DoctorRow]:
    system = facts.system
    rows: list[DoctorRow] = []
    minimum = _cmake_minimum(settings)
    if system.cmake.path is None:
        rows.append(
            DoctorRow(
                check="cmake",
                status="FAIL",
                detail="cmake not found on PATH",
                fix=f"python3 -m pip install 'cmake>={minimum}'",
            )
        )
    elif _vkey(system.cmake.version) < _vkey(minimum):
        rows.append(
            DoctorRow(
                check="cmake",
                status="FAIL",
                detail=f"cmake {system.cmake.version} at {system.cmake.path} is older than "
                f"{minimum}, the minimum for PyTorch {settings.pytorch_ref}",
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
    rows += _python_rows(system, settings)
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


def _python_rows(system: Any, settings: Any) -> list[DoctorRow]:
    python = system.python
    rows: list[DoctorRow] = []
    spec = _python_spec(settings)
    where = f"Python {python.version} ({python.executable})"
    if spec and not _python_ok(python.version, spec):
        rows.append(
            DoctorRow(
                check="python",
                status="FAIL",
                detail=f"{where} is outside {spec}, the range PyTorch {settings.pytorch_ref} "
                "supports",
                fix="export ROCMFORGE_PYTHON=/usr/bin/python3.12   # any interpreter in " + spec,
            )
        )
    else:
        rng = f" (PyTorch {settings.pytorch_ref} needs {spec})" if spec else ""
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


def _python_spec(settings: Any) -> str:
    """The PyTorch release's Python specifier (">=3.10,<3.15"), "" when unknown."""
    try:
        from rocmforge.knowledge.releases import pytorch_release_for

        return str(pytorch_release_for(settings.pytorch_ref).python)
    except (ImportError, RocmforgeError, KeyError, ValueError):
        return ""


def _python_ok(version: str, spec: str) -> bool:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(spec).contains(version, prereleases=True)
    except InvalidSpecifier:
        return True


def _cmake_minimum(settings: Any) -> str:
    try:
        from rocmforge.knowledge.compiler_policy import cmake_minimum
        from rocmforge.knowledge.releases import pytorch_release_for

        return str(cmake_minimum(pytorch_release_for(settings.pytorch_ref)))
    except (ImportError, RocmforgeError, KeyError, ValueError):
        return "3.27"  # PyTorch >= 2.10 (pytorch-rocm-build.md §4); the safe floor


# --- machine --------------------------------------------------------------------------------


def _machine_rows(facts: Any, settings: Any) -> list[DoctorRow]:
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


def _vkey(version: str) -> tuple[int, ...]:
    out = []
    for piece in str(version).split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        out.append(int(digits))
    return tuple(out)


DOCTOR_SCHEMA = "rocmforge.doctor/1"


def doctor_json(facts: Any, targets: Sequence[Any], rows: Sequence[DoctorRow]) -> dict[str, Any]:
    """The versioned document of `invoke doctor --json` (schema rocmforge.doctor/1)."""
    rocm = facts.rocm
    return {
        "schema": DOCTOR_SCHEMA,
        "ok": exit_status(rows) == 0,
        "targets": [str(t) for t in targets],
        "rocm": None if rocm is None else {"root": str(rocm.root), "version": rocm.version,
                                           "llvm_major": rocm.llvm_major},
        "rows": [r.to_json() for r in rows],
    }
