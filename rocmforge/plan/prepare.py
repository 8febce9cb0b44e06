"""Planning a build: settings + BuildFacts -> compiler choice, environment, options, Plan.

Owns: the pure half of `invoke plan`, `invoke build` and `invoke env` (plan.gather owns the
other: probes, files, the network, the tables; the runner owns "execute"). `plan_prepared` and
`build_inputs` are functions of their arguments alone. Must not: start a process, open a file
or a socket, read os.environ or the clock, or import plan.gather (it imports this).
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
    from rocmforge.knowledge.components import Component
    from rocmforge.knowledge.extensions import ExtensionSource
    from rocmforge.knowledge.releases import PytorchRelease, RocmRelease
    from rocmforge.knowledge.targets import TargetId
    from rocmforge.plan.build_plan import BuildOptions, PreflightRow
    from rocmforge.plan.facts import BuildFacts
    from rocmforge.plan.features import FeaturePlan
    from rocmforge.plan.pytorch import PytorchSide
    from rocmforge.plan.rocm_sdk import SdkPlan
    from rocmforge.probes.compilers import HostCompiler
    from rocmforge.probes.facts import Facts
    from rocmforge.probes.rocm_components import ComponentFound
    from rocmforge.sources.upstream_fixes import BuildConditions, FixDecision, UpstreamFix
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
    pytorch: PytorchSide  # the facts of the PyTorch being built, each with its source
    choice: CompilerChoice
    compilers: Mapping[str, str]  # cc, cxx and (when known) hip -> executable
    env: tuple[tuple[str, str], ...]  # config/build.toml < computed < the build_env setting
    configure_env: tuple[tuple[str, str], ...]
    features: FeaturePlan | None = None  # the optional parts (plan.features); None in old callers
    # component_report's pairs, scanned once here (the preflight rows use them too); None
    # without a ROCm install
    components: tuple[tuple[Component, ComponentFound], ...] | None = None
    # The pip ROCm SDK the build installs and uses (the rocm_sdk setting); None without it.
    sdk: SdkPlan | None = None

    @property
    def release(self) -> PytorchRelease:
        """The table row with the tree's facts in place (an estimate before the checkout)."""
        return self.pytorch.release

    @property
    def target_names(self) -> tuple[str, ...]:
        return tuple(str(t) for t in self.targets)

    @property
    def hip_version(self) -> str:
        """HIP's version of the install ("7.15.26333"; the table's "7.15" when the install does
        not say; "" without one): not ROCm's from ROCm 10 on. What torch.version.hip will
        report, for recipes that name files after it (plan.rocm_facts.hip_version_of)."""
        from rocmforge.plan.rocm_facts import hip_version_of

        return hip_version_of(self.facts.rocm)


@dataclass(frozen=True, kw_only=True)
class PreparedBuild:
    """One invocation of plan/build before anything runs: its inputs, the options from the
    version table, doctor's verdicts for the build (used as they are), and the Plan."""

    inputs: BuildInputs
    options: BuildOptions
    preflight: tuple[PreflightRow, ...]
    plan: Plan
    extension_sources: tuple[ExtensionSource, ...] = ()  # `--with` extensions, resolved

    @property
    def settings(self) -> Settings:
        return self.inputs.settings


def build_inputs(settings: Settings, facts: BuildFacts) -> BuildInputs:
    """The compilers, the environment, the features and the SDK variables of one invocation,
    from the settings and what was gathered (plan.gather): pure. config/build.toml < the
    [inherit]ed variables < the computed values < the features' < the SDK's < build_env."""
    from rocmforge.plan.environment import inherited_variables

    machine = facts.machine
    choice, compilers = choose_compilers(settings, facts)
    env = dict(facts.config.env)
    env.update(inherited_variables(dict(facts.environ), facts.config.inherit or {},
                                   facts.targets))
    env.update(_computed_env(settings, facts, compilers))
    features = None
    if facts.aotriton is not None:
        from rocmforge.plan.features import plan_features

        rocm = machine.rocm
        features = plan_features(facts.feature_specs, settings.features,
                                 list(facts.target_names), facts.components, facts.aotriton,
                                 rocm_version=rocm.version if rocm is not None else "",
                                 layout=rocm.layout if rocm is not None else "",
                                 sdk_to_come=facts.sdk_to_come)
        env.update(features.env)
    if facts.sdk is not None:
        from rocmforge.plan.rocm_sdk import sdk_env

        # The wheel's version is the tree's version.txt with +rocm<version>: only once the plan
        # is made from the checkout (tree-facts stops a run planned without it).
        pytorch = facts.pytorch
        env.update(sdk_env(facts.sdk, pytorch.facts.version if pytorch.from_tree else ""))
    env.update({str(k): str(v) for k, v in settings.build_env.items()})
    return BuildInputs(
        settings=settings,
        facts=machine,
        targets=facts.targets,
        workdir=facts.workdir,
        pytorch=facts.pytorch,
        choice=choice,
        compilers=compilers,
        env=tuple(env.items()),
        configure_env=facts.config.configure_env,
        features=features,
        components=facts.components,
        sdk=facts.sdk,
    )


def plan_prepared(settings: Settings, facts: BuildFacts) -> PreparedBuild:
    """The inputs, the version table's options, doctor's verdicts (as gathered) and the Plan of
    one plan/build invocation: pure, a function of `settings` and `facts` alone."""
    from rocmforge.plan.build_plan import BuildOptions, plan_build
    from rocmforge.plan.rocm_facts import hip_version_in

    inputs = build_inputs(settings, facts)
    release = inputs.release
    options = BuildOptions(
        build_style=release.build_style,
        scikit_build_core=release.scikit_build_core,
        pytorch_version=release.ref_version,  # "" for main, a commit, a branch: unknown yet
        python=settings.python or sys.executable or "python3",
        tracks_main=release.tracks_main,
        configure_env=dict(inputs.configure_env),
    )
    fixes = upstream_fix_decisions(inputs, facts.tree_version, facts.fixes)
    plan = plan_build(settings, facts.machine, inputs.target_names, workdir=facts.workdir,
                      env=dict(inputs.env), compilers=inputs.compilers, options=options,
                      preflight=facts.preflight, patch_inputs=facts.patch_inputs,
                      sources=facts.sources, pytorch=facts.pytorch,
                      stale_companions=() if settings.companions else facts.stale_companions,
                      rocm_facts=facts.rocm_facts, sdk=facts.sdk,
                      extension_sources=facts.extension_sources, upstream_fixes=fixes,
                      addon_tables=facts.addon_tables,
                      hip_version=hip_version_in(facts.machine.rocm, facts.rocm_release))
    return PreparedBuild(inputs=inputs, options=options, preflight=facts.preflight, plan=plan,
                         extension_sources=facts.extension_sources)


def judged_by_build_choice(facts: Facts, choice: CompilerChoice) -> Facts:
    """Facts whose host compiler is the one the build will use, so doctor judges that one."""
    return dataclasses.replace(facts, host_compiler=_as_host_compiler(choice, facts))


def fix_conditions(inputs: BuildInputs, version: str = "") -> BuildConditions:
    """The build's side of config/upstream_fixes.toml's conditions: the tree's version.txt
    ("" before the checkout), the install's ROCm version, the targets, the C++ compiler's
    family. One place for the plan and the patches step."""
    from rocmforge.sources.upstream_fixes import BuildConditions, compiler_family

    rocm = inputs.facts.rocm
    return BuildConditions(
        pytorch_version=version, rocm_version=str(rocm.version) if rocm is not None else "",
        targets=inputs.target_names,
        compiler=compiler_family(str(inputs.compilers.get("cxx", ""))),
        platform="windows" if sys.platform == "win32" else "linux")


def upstream_fix_decisions(inputs: BuildInputs, version: str,
                           fixes: Sequence[UpstreamFix]) -> tuple[FixDecision, ...]:
    """config/upstream_fixes.toml (as gathered) against this build (see fix_conditions)."""
    from rocmforge.sources.upstream_fixes import decide

    return decide(fixes, fix_conditions(inputs, version))


def _judge_for(rocm_release: RocmRelease | None,
               torch_release: PytorchRelease) -> tuple[Judge | None, tuple[tuple[str, int], ...]]:
    """The compiler policy's judge and recommendation for the install's table row (gathered);
    (None, ()) when the table does not know the install."""
    from rocmforge.knowledge import compiler_policy
    from rocmforge.toolchain.select import Verdict

    if rocm_release is None:
        return None, ()

    def judge(kind: str, version: str) -> Verdict:
        verdict = compiler_policy.judge_compiler(kind, version, rocm_release, torch_release)
        return Verdict(status=verdict.status, reason=verdict.reason, fix=verdict.fix)

    recommended = tuple((str(k), int(m)) for k, m in
                        compiler_policy.recommended_compilers(rocm_release, torch_release))
    return judge, recommended


def choose_compilers(settings: Settings,
                     facts: BuildFacts) -> tuple[CompilerChoice, dict[str, str]]:
    """CC/CXX from the compilers gathered (no second inventory), and the HIP compiler."""
    from rocmforge.toolchain.select import ToolchainInventory, choose_build_compilers

    machine = facts.machine
    judge, recommended = _judge_for(facts.rocm_release, facts.pytorch.release)
    inventory = ToolchainInventory(compilers=tuple(machine.compilers),
                                   gcc_installs=facts.gcc_installs)
    choice = choose_build_compilers(
        inventory, gcc=settings.gcc, clang=settings.clang,
        allow_compiler=settings.allow_compiler, judge=judge, recommended=recommended,
        rocm_llvm_major=int(getattr(machine.rocm, "llvm_major", 0) or 0)
        if machine.rocm else 0,
    )
    compilers = {"cc": str(choice.cc), "cxx": str(choice.cxx)}
    hip = settings.build_env.get("HIP_CLANG_PATH", "")
    if hip:
        compilers["hip"] = os.path.join(hip, "clang++")
    elif machine.rocm is not None and getattr(machine.rocm, "clang", None):
        compilers["hip"] = str(machine.rocm.clang)
    return choice, compilers


def _as_host_compiler(choice: CompilerChoice, facts: Facts) -> HostCompiler:
    """The HostCompiler record of the chosen pair (what doctor's "host compiler" row judges)."""
    from rocmforge.probes.compilers import HostCompiler

    for compiler in facts.compilers:
        if compiler.cc == choice.cc:
            return compiler
    return HostCompiler(kind=choice.kind, major=choice.major, version=choice.version,
                        cc=choice.cc, cxx=choice.cxx)


def _computed_env(settings: Settings, facts: BuildFacts,
                  compilers: Mapping[str, str]) -> dict[str, str]:
    from rocmforge.plan.environment import build_environment

    if facts.remote_cache_refused is not None:
        raise facts.remote_cache_refused
    env = build_environment(
        settings,
        facts.machine,
        facts.targets,
        cc=compilers["cc"],
        cxx=compilers["cxx"],
        hip_launcher_min_rocm=facts.config.hip_launcher_min_rocm,
        remote_cache=list(facts.remote_cache),
    )
    return env.as_dict()
