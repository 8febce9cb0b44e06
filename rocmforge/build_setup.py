"""Preparing a build: settings + probes -> compiler choice, environment, preflight rows, Plan.

Owns: the "resolve -> probe -> plan" half of `invoke plan` and `invoke build` (the runner owns
"execute"). Probes run here once per invocation and their results are passed down, so the
planner stays pure. Must not: run build steps or write anything.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rocmforge.settings import Settings


@dataclass(frozen=True, kw_only=True)
class PreparedBuild:
    """What one invocation of plan/build knows before anything runs."""

    settings: Settings
    plan: Any  # rocmforge.plan.model.Plan
    extras: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class BuildInputs:
    """What the machine and the settings decide before any step: the one source of the build
    environment, shared by `invoke env`, `invoke plan`, `invoke build` and doctor's verdicts."""

    facts: Any  # rocmforge.probes.facts.Facts
    targets: tuple[Any, ...]  # rocmforge.targets.TargetId
    choice: Any  # rocmforge.toolchain.select.CompilerChoice
    compilers: dict[str, str]  # cc, cxx, hip
    env: tuple[tuple[str, str], ...]  # config/build.toml < computed < the build_env setting
    configure_env: tuple[tuple[str, str], ...]


def resolve_build_inputs(settings: Settings, *, facts: Any = None) -> BuildInputs:
    """Probe (unless `facts` is given), parse the targets, choose CC/CXX, build the environment."""
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.knowledge.toml_files import check_keys, config_dir, read_toml
    from rocmforge.probes.facts import gather_facts
    from rocmforge.targets import parse_targets

    facts = facts if facts is not None else gather_facts(settings)
    arch_text = settings.arch or ";".join(facts.gpus.targets)
    # Parsed without the ROCm clang's LLVM major: HIP_CLANG_PATH may name a newer compiler.
    targets = parse_targets(arch_text, load_arch_table(), llvm_major=0)
    choice, compilers = _choose_compilers(settings, facts)
    build_toml = read_toml(config_dir() / "build.toml")
    check_keys(build_toml, where="config/build.toml", optional=("env", "configure", "cache"))
    cache_table = build_toml.get("cache", {})
    check_keys(cache_table, where="config/build.toml [cache]", optional=("hip_launcher_min_rocm",))
    env = {str(k): str(v) for k, v in build_toml.get("env", {}).items()}
    env.update(
        _computed_env(
            settings,
            facts,
            targets,
            compilers,
            hip_launcher_min_rocm=str(cache_table.get("hip_launcher_min_rocm", "")),
        )
    )
    env.update({str(k): str(v) for k, v in settings.build_env.items()})
    configure = build_toml.get("configure", {}).get("env", {})
    return BuildInputs(
        facts=facts,
        targets=tuple(targets),
        choice=choice,
        compilers=compilers,
        env=tuple(env.items()),
        configure_env=tuple((str(k), str(v)) for k, v in configure.items()),
    )


def judged_by_build_choice(facts: Any, choice: Any) -> Any:
    """Facts whose host compiler is the one the build will use, so doctor judges that one."""
    return dataclasses.replace(facts, host_compiler=_as_host_compiler(choice, facts))


def doctor_facts(settings: Settings, environ: Mapping[str, str]) -> tuple[Any, tuple[Any, ...]]:
    """Facts and targets for `invoke doctor`: probe, parse the targets (default: the GPUs
    found), compile a kernel per target, and put the host compiler the build would choose in
    place of whatever `c++` is, so doctor judges what the build will use. A machine with no
    usable ROCm or compiler keeps its probed compiler: doctor's rows say what is missing."""
    from rocmforge.doctor import requested_targets
    from rocmforge.errors import RocmforgeError
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.probes.facts import gather_facts, with_target_probes

    facts = gather_facts(settings, environ=environ)
    targets = requested_targets(settings.arch, facts.gpus.targets, load_arch_table())
    facts = with_target_probes(facts, targets, environ=environ)
    if targets:
        try:
            choice = resolve_build_inputs(settings, facts=facts).choice
        except RocmforgeError:
            return facts, targets
        facts = judged_by_build_choice(facts, choice)
    return facts, targets


def prepare_build(
    settings: Settings, *, with_preflight: bool = True, compile_probes: bool = True
) -> PreparedBuild:
    """Settings, Plan and the runner's extras for one invocation (probes run here, once).

    `compile_probes=False` leaves out doctor's real compile of a kernel per target (about a
    second each): `invoke plan` lists the steps, `invoke build` must know the toolchain works.
    """
    from rocmforge.build_actions import patch_digest_inputs
    from rocmforge.plan.build_plan import BuildOptions, PreflightRow, plan_build
    from rocmforge.probes.facts import with_target_probes
    from rocmforge.sources import describe_sources
    from rocmforge.workdir import workdir_for

    inputs = resolve_build_inputs(settings)
    facts, targets, choice = inputs.facts, inputs.targets, inputs.choice
    compilers = inputs.compilers
    target_names = tuple(str(t) for t in targets)
    env = dict(inputs.env)
    configure_env = dict(inputs.configure_env)

    release = _release_style(settings.pytorch_ref)
    rows: list[PreflightRow] = []
    if with_preflight and not settings.skip_preflight:
        # Doctor judges the compiler the build really uses, not whatever `c++` is.
        # The same real compile probe doctor runs: a ROCm that cannot target a GPU fails here.
        probed = (
            with_target_probes(facts, target_names, environ=os.environ) if compile_probes else facts
        )
        judged = judged_by_build_choice(probed, choice)
        rows = _preflight_rows(judged, targets, settings)
    workdir = workdir_for(settings.work_dir)
    options = BuildOptions(
        build_style=release["build_style"],
        scikit_build_core=release["scikit_build_core"],
        pytorch_version=release["version"],
        python=settings.python or sys.executable or "python3",
        tracks_main=release["tracks_main"],
        configure_env=configure_env,
    )
    summary = describe_sources(settings)
    sources = summary.as_dict() if summary.pytorch_commit else None
    plan = plan_build(settings, facts, target_names, workdir=workdir, env=env,
                      compilers=compilers, options=options, preflight=rows,
                      patch_inputs=patch_digest_inputs(), sources=sources)
    extras = {"settings": settings, "facts": facts, "preflight_rows": rows,
              "environ": dict(os.environ)}
    return PreparedBuild(settings=settings, plan=plan, extras=extras)


def _judge_for(facts: Any, pytorch_ref: str) -> tuple[Any, tuple[tuple[str, int], ...]]:
    """The compiler policy's judge and recommendation for the ROCm install facts already found
    (no second ROCm probe); (None, ()) when the tables do not know the pair."""
    from rocmforge.errors import RocmforgeError
    from rocmforge.knowledge import compiler_policy, releases
    from rocmforge.toolchain.select import Verdict

    if facts.rocm is None or not facts.rocm.version:
        return None, ()
    try:
        rocm_release = releases.rocm_release_for(facts.rocm.version)
        torch_release = releases.pytorch_release_for(pytorch_ref)
    except (RocmforgeError, KeyError, ValueError):
        return None, ()

    def judge(kind: str, version: str) -> Verdict:
        verdict = compiler_policy.judge_compiler(kind, version, rocm_release, torch_release)
        return Verdict(status=verdict.status, reason=verdict.reason, fix=verdict.fix)

    recommended = tuple((str(k), int(m)) for k, m in
                        compiler_policy.recommended_compilers(rocm_release, torch_release))
    return judge, recommended


def _choose_compilers(settings: Any, facts: Any) -> tuple[Any, dict[str, str]]:
    """CC/CXX from the compilers gather_facts already identified (no second inventory)."""
    from rocmforge.probes.compilers import find_gcc_installs
    from rocmforge.toolchain.select import ToolchainInventory, choose_build_compilers

    judge, recommended = _judge_for(facts, settings.pytorch_ref)
    inventory = ToolchainInventory(compilers=tuple(facts.compilers),
                                   gcc_installs=find_gcc_installs("/"))
    choice = choose_build_compilers(
        inventory, gcc=settings.gcc, clang=settings.clang,
        allow_compiler=settings.allow_compiler, judge=judge, recommended=recommended,
        rocm_llvm_major=int(getattr(facts.rocm, "llvm_major", 0) or 0) if facts.rocm else 0,
    )
    compilers = {"cc": str(choice.cc), "cxx": str(choice.cxx)}
    hip = settings.build_env.get("HIP_CLANG_PATH", "")
    if hip:
        compilers["hip"] = os.path.join(hip, "clang++")
    elif facts.rocm is not None and getattr(facts.rocm, "clang", None):
        compilers["hip"] = str(facts.rocm.clang)
    return choice, compilers


def _as_host_compiler(choice: Any, facts: Any) -> Any:
    """The HostCompiler record of the chosen pair (what doctor's "host compiler" row judges)."""
    from rocmforge.probes.compilers import HostCompiler

    for compiler in facts.compilers:
        if compiler.cc == choice.cc:
            return compiler
    return HostCompiler(kind=choice.kind, major=choice.major, version=choice.version,
                        cc=choice.cc, cxx=choice.cxx)


def _computed_env(
    settings: Any,
    facts: Any,
    targets: Any,
    compilers: dict[str, str],
    *,
    hip_launcher_min_rocm: str = "",
) -> dict[str, str]:
    from rocmforge.buildenv import build_environment

    env = build_environment(
        settings,
        facts,
        targets,
        cc=compilers["cc"],
        cxx=compilers["cxx"],
        hip_launcher_min_rocm=hip_launcher_min_rocm,
    )
    return env.as_dict()


def _release_style(ref: str) -> dict[str, Any]:
    """Build style from the version table (config/pytorch.toml)."""
    from rocmforge.knowledge.releases import pytorch_release_for

    release = pytorch_release_for(ref)
    return {
        "build_style": str(release.build_style),
        "scikit_build_core": bool(release.scikit_build_core),
        "version": str(release.ref_version),  # "" for main/a commit/a branch: unknown here
        "tracks_main": bool(release.tracks_main),
    }


def _preflight_rows(facts: Any, targets: Any, settings: Any) -> list[Any]:
    """Doctor's rows for the build; its "host compiler" row is the shared compiler verdict
    (issue 3 item 4), and the build refuses a judged WARN as well as a FAIL unless
    allow_compiler is set (then the row stays a WARN)."""
    from rocmforge.doctor import diagnose
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.plan.build_plan import PreflightRow

    rows = []
    for r in diagnose(facts, targets, settings, table=load_arch_table()):
        status, fix = str(r.status), str(getattr(r, "fix", "") or "")
        # A judged verdict carries a fix; an unjudged one (tables unknown) has none.
        if r.check == "host compiler" and status == "WARN" and fix and not settings.allow_compiler:
            status = "FAIL"
        if r.check == "host compiler" and status == "FAIL":
            fix = _build_compiler_fix(fix)
        rows.append(PreflightRow(status=status, check=str(r.check), detail=str(r.detail), fix=fix))
    return rows


def _build_compiler_fix(fix: str) -> str:
    """`invoke toolchain --gcc 11 (...)` -> also the build-only form `invoke build --gcc 11`."""
    match = re.search(r"invoke toolchain (--(?:gcc|clang) \d+)", fix)
    if not match or "invoke build" in fix:
        return fix
    return f"{fix}; for this build only: `invoke build {match.group(1)}`"
