"""Preparing a build: settings + probes -> compiler choice, environment, preflight rows, Plan.

Owns: the "resolve -> probe -> plan" half of `invoke plan` and `invoke build` (the runner owns
"execute"). Probes run here once per invocation and their results are passed down, so the
planner stays pure. Must not: run build steps or write anything.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rocmforge.settings import Settings

if TYPE_CHECKING:
    from rocmforge.execute.model import Plan
    from rocmforge.knowledge.releases import PytorchRelease
    from rocmforge.knowledge.targets import TargetId
    from rocmforge.plan.build_plan import BuildOptions, PreflightRow
    from rocmforge.plan.doctor import DoctorRow
    from rocmforge.probes.compilers import HostCompiler
    from rocmforge.probes.facts import Facts
    from rocmforge.toolchain.select import CompilerChoice, Judge
    from rocmforge.workdir import WorkDir


@dataclass(frozen=True, kw_only=True)
class BuildInputs:
    """What the settings and the machine decide before any step, made once per invocation and
    handed down: the one source of the build environment, shared by `invoke env`, `invoke plan`,
    `invoke build` and doctor's verdicts. Nothing below it re-parses a flag."""

    settings: Settings
    facts: Facts
    targets: tuple[TargetId, ...]
    workdir: WorkDir
    release: PytorchRelease  # the version table's row for the ref (an estimate before checkout)
    choice: CompilerChoice
    compilers: Mapping[str, str]  # cc, cxx and (when known) hip -> executable
    env: tuple[tuple[str, str], ...]  # config/build.toml < computed < the build_env setting
    configure_env: tuple[tuple[str, str], ...]

    @property
    def target_names(self) -> tuple[str, ...]:
        return tuple(str(t) for t in self.targets)


@dataclass(frozen=True, kw_only=True)
class PreparedBuild:
    """One invocation of plan/build before anything runs: its inputs, the options from the
    version table, doctor's verdicts for the build (used as they are), and the Plan."""

    inputs: BuildInputs
    options: BuildOptions
    preflight: tuple[PreflightRow, ...]
    plan: Plan

    @property
    def settings(self) -> Settings:
        return self.inputs.settings


def resolve_build_inputs(settings: Settings, *, facts: Facts | None = None) -> BuildInputs:
    """Probe (unless `facts` is given), parse the targets, choose CC/CXX, build the environment."""
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.knowledge.releases import pytorch_release_for
    from rocmforge.knowledge.targets import parse_targets
    from rocmforge.knowledge.toml_files import check_keys, config_dir, read_toml
    from rocmforge.probes.facts import gather_facts
    from rocmforge.workdir import workdir_for

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
        settings=settings,
        facts=facts,
        targets=tuple(targets),
        workdir=workdir_for(settings.work_dir),
        release=pytorch_release_for(settings.pytorch_ref),
        choice=choice,
        compilers=compilers,
        env=tuple(env.items()),
        configure_env=tuple((str(k), str(v)) for k, v in configure.items()),
    )


def judged_by_build_choice(facts: Facts, choice: CompilerChoice) -> Facts:
    """Facts whose host compiler is the one the build will use, so doctor judges that one."""
    return dataclasses.replace(facts, host_compiler=_as_host_compiler(choice, facts))


def doctor_facts(settings: Settings,
                 environ: Mapping[str, str]) -> tuple[Facts, tuple[TargetId, ...]]:
    """Facts and targets for `invoke doctor`: probe, parse the targets (default: the GPUs
    found), compile a kernel per target, and put the host compiler the build would choose in
    place of whatever `c++` is, so doctor judges what the build will use. A machine with no
    usable ROCm or compiler keeps its probed compiler: doctor's rows say what is missing."""
    from rocmforge.errors import RocmforgeError
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.plan.doctor import requested_targets
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
    """Inputs, doctor's verdicts and the Plan for one invocation (probes run here, once).

    `compile_probes=False` leaves out doctor's real compile of a kernel per target (about a
    second each): `invoke plan` lists the steps, `invoke build` must know the toolchain works.
    """
    from rocmforge.plan.build_plan import BuildOptions, plan_build
    from rocmforge.probes.facts import with_target_probes
    from rocmforge.sources import describe_sources, patch_digest_inputs

    inputs = resolve_build_inputs(settings)
    rows: tuple[PreflightRow, ...] = ()
    if with_preflight and not settings.skip_preflight:
        # The same real compile probe doctor runs: a ROCm that cannot target a GPU fails here;
        # doctor judges the compiler the build really uses, not whatever `c++` is.
        probed = (with_target_probes(inputs.facts, inputs.target_names, environ=os.environ)
                  if compile_probes else inputs.facts)
        rows = _preflight_rows(judged_by_build_choice(probed, inputs.choice), inputs)
    release = inputs.release
    options = BuildOptions(
        build_style=release.build_style,
        scikit_build_core=release.scikit_build_core,
        pytorch_version=release.version,
        python=settings.python or sys.executable or "python3",
        tracks_main=release.tracks_main,
        configure_env=dict(inputs.configure_env),
    )
    summary = describe_sources(settings)
    sources = summary.as_dict() if summary.pytorch_commit else None
    plan = plan_build(settings, inputs.facts, inputs.target_names, workdir=inputs.workdir,
                      env=dict(inputs.env), compilers=inputs.compilers, options=options,
                      preflight=rows, patch_inputs=patch_digest_inputs(), sources=sources)
    return PreparedBuild(inputs=inputs, options=options, preflight=rows, plan=plan)


def _judge_for(facts: Facts,
               pytorch_ref: str) -> tuple[Judge | None, tuple[tuple[str, int], ...]]:
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


def _choose_compilers(settings: Settings, facts: Facts) -> tuple[CompilerChoice, dict[str, str]]:
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


def _as_host_compiler(choice: CompilerChoice, facts: Facts) -> HostCompiler:
    """The HostCompiler record of the chosen pair (what doctor's "host compiler" row judges)."""
    from rocmforge.probes.compilers import HostCompiler

    for compiler in facts.compilers:
        if compiler.cc == choice.cc:
            return compiler
    return HostCompiler(kind=choice.kind, major=choice.major, version=choice.version,
                        cc=choice.cc, cxx=choice.cxx)


def _computed_env(
    settings: Settings,
    facts: Facts,
    targets: Sequence[TargetId],
    compilers: dict[str, str],
    *,
    hip_launcher_min_rocm: str = "",
) -> dict[str, str]:
    from rocmforge.plan.environment import build_environment

    env = build_environment(
        settings,
        facts,
        targets,
        cc=compilers["cc"],
        cxx=compilers["cxx"],
        hip_launcher_min_rocm=hip_launcher_min_rocm,
    )
    return env.as_dict()


def _preflight_rows(facts: Facts, inputs: BuildInputs) -> tuple[PreflightRow, ...]:
    """Doctor's rows for the build, as doctor judged them (its host-compiler row already is the
    build's verdict: a compiler the table warns about is refused unless allow_compiler)."""
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.plan.build_plan import PreflightRow
    from rocmforge.plan.doctor import diagnose

    found: tuple[DoctorRow, ...] = diagnose(facts, inputs.targets, inputs.settings,
                                            table=load_arch_table())
    return tuple(PreflightRow(status=r.status, check=r.check, detail=r.detail, fix=r.fix)
                 for r in found)
