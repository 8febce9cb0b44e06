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
    from rocmforge.knowledge.components import Component
    from rocmforge.knowledge.extensions import ExtensionSource
    from rocmforge.knowledge.releases import PytorchRelease
    from rocmforge.knowledge.targets import TargetId
    from rocmforge.plan.build_plan import BuildOptions, PreflightRow
    from rocmforge.plan.doctor_row import DoctorRow
    from rocmforge.plan.features import FeaturePlan
    from rocmforge.plan.pytorch import PytorchSide
    from rocmforge.plan.rocm_facts import RocmFacts
    from rocmforge.plan.rocm_sdk import SdkPlan
    from rocmforge.probes.compilers import HostCompiler
    from rocmforge.probes.facts import Facts
    from rocmforge.probes.rocm_components import ComponentFound
    from rocmforge.probes.triton_targets import TritonProbeReport
    from rocmforge.sources.upstream_fixes import BuildConditions, FixDecision
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


def resolve_build_inputs(settings: Settings, *, facts: Facts | None = None,
                         environ: Mapping[str, str] | None = None,
                         pytorch: PytorchSide | None = None,
                         components: tuple[tuple[Component, ComponentFound], ...] | None = None,
                         ) -> BuildInputs:
    """Probe (unless `facts` is given), parse the targets, choose CC/CXX, build the environment.
    `pytorch`, `components`: what this invocation already read with these facts (doctor), else
    read here."""
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.knowledge.targets import parse_targets, requested_targets
    from rocmforge.knowledge.toml_files import check_keys, config_dir, expect_type, read_toml
    from rocmforge.plan.environment import inherited_variables
    from rocmforge.plan.prepare_features import features_for_build
    from rocmforge.plan.pytorch import pytorch_for
    from rocmforge.probes.facts import gather_facts
    from rocmforge.workdir import workdir_for

    workdir = workdir_for(settings.work_dir)
    pytorch = pytorch if pytorch is not None else pytorch_for(settings, workdir)
    facts = facts if facts is not None else gather_facts(settings)
    if (settings.rocm_sdk or settings.rocm_sdk_version) \
            and (facts.rocm is None or facts.rocm.layout != "pip SDK"):
        # The SDK is not in the build venv yet: the rocm-sdk step installs it and stops, and the
        # next run plans from it. Until then the plan stands on the SDK to come, not on
        # whatever ROCm the machine has.
        from rocmforge.probes.rocm import RocmInstall

        facts = dataclasses.replace(facts, rocm=RocmInstall(
            root=workdir.venv, version=settings.rocm_sdk_version, source="rocm_sdk setting",
            version_source="the rocm_sdk_version setting",
            layout="pip SDK (installed by the rocm-sdk step)"), rocm_problem="")
    targets = requested_targets(settings.arch, facts.gpus.targets, load_arch_table())
    if not targets:
        # parse_targets' own refusal: no --arch and no GPU found says what to pass.
        targets = parse_targets("", load_arch_table())
    choice, compilers = _choose_compilers(settings, facts, pytorch.release)
    build_toml = read_toml(config_dir() / "build.toml")
    check_keys(build_toml, where="config/build.toml",
               optional=("env", "configure", "cache", "inherit"))
    cache_table = expect_type(build_toml.get("cache", {}), dict, where="config/build.toml [cache]")
    check_keys(cache_table, where="config/build.toml [cache]", optional=("hip_launcher_min_rocm",))
    env = {str(k): str(v) for k, v in
           expect_type(build_toml.get("env", {}), dict, where="config/build.toml [env]").items()}
    env.update(inherited_variables(os.environ if environ is None else environ,
                                   expect_type(build_toml.get("inherit", {}), dict,
                                               where="config/build.toml [inherit]"), targets))
    env.update(
        _computed_env(
            settings,
            facts,
            targets,
            compilers,
            hip_launcher_min_rocm=str(cache_table.get("hip_launcher_min_rocm", "")),
        )
    )
    if components is None:
        components = component_report(facts, pytorch)
    features = features_for_build(settings, facts, [str(t) for t in targets], workdir, pytorch,
                                  components)
    env.update(features.env)
    sdk = _sdk_for(settings, facts, targets)
    if sdk is not None:
        from rocmforge.plan.rocm_sdk import sdk_env

        # The wheel's version is the tree's version.txt with +rocm<version>: only once the plan
        # is made from the checkout (tree-facts stops a run planned without it).
        env.update(sdk_env(sdk, pytorch.facts.version if pytorch.from_tree else ""))
    env.update({str(k): str(v) for k, v in settings.build_env.items()})
    configure_table = expect_type(build_toml.get("configure", {}), dict,
                                  where="config/build.toml [configure]")
    configure = expect_type(configure_table.get("env", {}), dict,
                            where="config/build.toml [configure] env")
    return BuildInputs(
        settings=settings,
        facts=facts,
        targets=tuple(targets),
        workdir=workdir,
        pytorch=pytorch,
        choice=choice,
        compilers=compilers,
        env=tuple(env.items()),
        configure_env=tuple((str(k), str(v)) for k, v in configure.items()),
        features=features,
        components=components,
        sdk=sdk,
    )


def _sdk_for(settings: Settings, facts: Facts, targets: Sequence[TargetId]) -> SdkPlan | None:
    from rocmforge.knowledge.rocm_sdk import load_sdk_table
    from rocmforge.plan.rocm_sdk import sdk_plan

    if not settings.rocm_sdk and not settings.rocm_sdk_version:
        return None
    table = load_sdk_table()
    sdk = sdk_plan(settings, [str(t) for t in targets], table, facts.rocm)
    if sdk is not None and (not sdk.installed_root or _devices_to_install(sdk)):
        # Not in the venv yet (or a target's device package is not): the index is asked now,
        # before any step makes a venv or a checkout or pip runs, whether it holds the release
        # and the targets' device packages.
        from rocmforge.plan.rocm_sdk import other_route
        from rocmforge.sources.rocm_sdk_index import check_sdk_index

        check_sdk_index(sdk.index, sdk.version, sdk.device_packages,
                        other_route=other_route(sdk, table))
    return sdk


def _devices_to_install(sdk: SdkPlan) -> bool:
    """Whether a device package of the plan is missing from the site-packages that hold the
    installed SDK (a target added since the SDK was installed)."""
    from importlib.metadata import distributions
    from pathlib import Path

    from packaging.utils import canonicalize_name

    from rocmforge.plan.rocm_sdk import same_release

    if not sdk.device_packages:
        return False
    site = Path(sdk.installed_root).parent
    there = {canonicalize_name(d.metadata["Name"] or ""): d.version
             for d in distributions(path=[str(site)])}
    return not all(same_release(there.get(canonicalize_name(p), ""), sdk.version)
                   for p in sdk.device_packages)


def judged_by_build_choice(facts: Facts, choice: CompilerChoice) -> Facts:
    """Facts whose host compiler is the one the build will use, so doctor judges that one."""
    return dataclasses.replace(facts, host_compiler=_as_host_compiler(choice, facts))


@dataclass(frozen=True, kw_only=True)
class DoctorInputs:
    """What `invoke doctor` judges: the machine (with the compile probe per target and the host
    compiler the build would choose), the targets parsed once, the PyTorch being built, and the
    Triton target probe of the chosen Python (None when it has no triton or no target)."""

    facts: Facts
    targets: tuple[TargetId, ...]
    release: PytorchRelease
    triton: TritonProbeReport | None
    components: tuple[tuple[Component, ComponentFound], ...] | None
    features: FeaturePlan | None = None  # each optional part, its components found or missing
    pytorch: PytorchSide | None = None  # the PyTorch side read once (for the cache rows)


def doctor_facts(settings: Settings, environ: Mapping[str, str], *,
                 use_cache: bool = False) -> DoctorInputs:
    """Facts and targets for `invoke doctor`: probe, parse the targets (default: the GPUs
    found), compile a kernel per target, put the host compiler the build would choose in place
    of whatever `c++` is (so doctor judges what the build will use), and, when the chosen Python
    has a Triton, compile a Triton kernel per target with it. A machine with no usable ROCm or
    compiler keeps its probed compiler: doctor's rows say what is missing.

    The two compile probes wait on programs of their own (the compilers, the chosen Python):
    each starts in the background as soon as what it needs is known (the Triton probe: the
    targets, so before the machine is probed when --arch names them; the per-target compiles:
    the targets and the ROCm install, so while the rest of the machine is probed when --arch
    names them). The PyTorch side needs no probe: it is read while the machine is probed; the
    ROCm components, the features and the host compiler are read while the compiles run. None
    of those reads a probe's result, and a probe's error is raised before the PyTorch side's,
    so the inputs (and the first error) are the ones the serial order made. `use_cache`: the
    per-target compile verdicts may come from the probe store
    (compile_probe.probe_targets)."""
    import sys
    from concurrent.futures import Future, ThreadPoolExecutor

    from rocmforge.errors import RocmforgeError
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.knowledge.targets import requested_targets
    from rocmforge.plan.prepare_features import features_for_build
    from rocmforge.plan.pytorch import pytorch_for
    from rocmforge.probes.compile_probe import TargetProbe, probe_install_targets
    from rocmforge.probes.facts import gather_facts
    from rocmforge.probes.rocm import RocmInstall
    from rocmforge.probes.triton_targets import probe_triton_targets
    from rocmforge.workdir import workdir_for

    workdir = workdir_for(settings.work_dir)
    table = load_arch_table()
    python = settings.python or sys.executable
    triton = None
    with ThreadPoolExecutor(max_workers=3) as pool:
        pending = None
        compiles: Future[tuple[TargetProbe, ...]] | None = None
        early: tuple[TargetId, ...] = ()
        # --arch names the targets before any probe (the GPUs found only fill in a missing
        # --arch): the Triton probe, which needs nothing else, starts first, and the
        # per-target compiles start once the ROCm install is chosen.
        if settings.arch.strip():
            early = requested_targets(settings.arch, (), table)
            pending = pool.submit(probe_triton_targets, python, [str(t) for t in early],
                                  table=table, environ=environ, answer_here=True)

        def compile_early(rocm: RocmInstall) -> None:
            nonlocal compiles
            if early:
                compiles = pool.submit(probe_install_targets, rocm, [str(t) for t in early],
                                       environ=environ, use_cache=use_cache)

        gathering = pool.submit(gather_facts, settings, environ=environ, on_rocm=compile_early)
        try:
            pytorch: PytorchSide | RocmforgeError = pytorch_for(settings, workdir)
        except RocmforgeError as exc:
            pytorch = exc  # raised after the probes' own errors, as the serial order would
        facts = gathering.result()
        if isinstance(pytorch, RocmforgeError):
            raise pytorch
        targets = requested_targets(settings.arch, facts.gpus.targets, table)
        names = [str(t) for t in targets]
        if compiles is not None and tuple(early) != tuple(targets):
            compiles = None  # (never so today: --arch alone decides the targets when given)
        if compiles is None and facts.rocm is not None and targets:
            compiles = pool.submit(probe_install_targets, facts.rocm, names, environ=environ,
                                   use_cache=use_cache)
        if pending is None and targets:  # a Python without triton answers at once; its
            # report then has no rows
            pending = pool.submit(probe_triton_targets, python, names, table=table,
                                  environ=environ, answer_here=True)
        release = pytorch.release
        components = component_report(facts, pytorch)
        features = features_for_build(settings, facts, names, workdir, pytorch, components)
        # With or without targets: one host-compiler verdict, the one the build would reach
        # (chosen from the compilers found; the compile probes do not enter into it).
        try:
            choice: CompilerChoice | None = _choose_compilers(settings, facts, release)[0]
        except RocmforgeError:
            choice = None
        probes = compiles.result() if compiles is not None else ()
        if pending is not None:
            triton = pending.result()
    if facts.rocm is not None and targets:
        from rocmforge.probes.facts import library_code_of

        facts = dataclasses.replace(facts, target_probes=probes,
                                    library_code=library_code_of(facts.rocm.root,
                                                                 environ=environ))
    if choice is not None:
        facts = judged_by_build_choice(facts, choice)
    return DoctorInputs(facts=facts, targets=targets, release=release, triton=triton,
                        components=components, features=features, pytorch=pytorch)


def component_report(
    facts: Facts, pytorch: PytorchSide
) -> tuple[tuple[Component, ComponentFound], ...] | None:
    """Each ROCm component this PyTorch's CMake looks for (its LoadHIP.cmake once checked out,
    the table before) with what the selected ROCm install has; None without an install."""
    from rocmforge.knowledge.components import components_for
    from rocmforge.probes.rocm_components import find_components

    if facts.rocm is None:
        return None
    from rocmforge.plan.cmake_condition import evaluate, rocm_variables

    tree = None
    if pytorch.from_tree and pytorch.facts.rocm_components:
        # LoadHIP looks for some components only on some ROCm releases (if(ROCM_VERSION_DEV
        # VERSION_GREATER_EQUAL ...)) or in one branch of an if/else: a branch that does not
        # run for this install asks for nothing. What cannot be decided stays as written.
        variables = rocm_variables(facts.rocm.version)
        tree = [(c.name, c.required, f"tree: cmake/public/LoadHIP.cmake:{c.line}")
                for c in pytorch.facts.rocm_components
                if evaluate(c.condition, variables) is not False]
    wanted = components_for(tree, facts.rocm.version)
    found = find_components(facts.rocm.root, [c.name for c in wanted])
    return tuple(zip(wanted, found, strict=True))


def prepare_build(
    settings: Settings, *, with_preflight: bool = True, compile_probes: bool = True
) -> PreparedBuild:
    """Inputs, doctor's verdicts and the Plan for one invocation (probes run here, once).

    `compile_probes=False` leaves out doctor's real compile of a kernel per target (about a
    second each): `invoke plan` lists the steps, `invoke build` must know the toolchain works.
    """
    from rocmforge.plan.build_plan import BuildOptions, plan_build
    from rocmforge.probes.facts import with_target_probes
    from rocmforge.sources import describe_sources, patch_digest_inputs, series_root

    inputs = resolve_build_inputs(settings)
    rows: tuple[PreflightRow, ...] = ()
    if with_preflight and not settings.skip_preflight:
        # The same real compile probe doctor runs: a ROCm that cannot target a GPU fails here;
        # doctor judges the compiler the build really uses, not whatever `c++` is.
        if compile_probes:
            probed = with_target_probes(inputs.facts, inputs.target_names, environ=os.environ)
        else:
            # `invoke plan`: no compile, but the ROCm libraries' code per target is read (kept
            # in the probe store, so it is cheap), so the forecast counts those FAILs too.
            from rocmforge.probes.facts import library_code_of

            probed = inputs.facts if inputs.facts.rocm is None else dataclasses.replace(
                inputs.facts, library_code=library_code_of(inputs.facts.rocm.root,
                                                           environ=os.environ))
        rows = _preflight_rows(judged_by_build_choice(probed, inputs.choice), inputs)
    release = inputs.release
    options = BuildOptions(
        build_style=release.build_style,
        scikit_build_core=release.scikit_build_core,
        pytorch_version=release.ref_version,  # "" for main, a commit, a branch: unknown yet
        python=settings.python or sys.executable or "python3",
        tracks_main=release.tracks_main,
        configure_env=dict(inputs.configure_env),
    )
    summary = describe_sources(settings)
    sources = summary.as_dict() if summary.pytorch_commit else None
    extensions = extension_sources_of(settings, inputs.workdir, release.ref_version)
    fixes = upstream_fix_decisions(inputs, summary.pytorch_version)
    plan = plan_build(settings, inputs.facts, inputs.target_names, workdir=inputs.workdir,
                      env=dict(inputs.env), compilers=inputs.compilers, options=options,
                      preflight=rows, patch_inputs=patch_digest_inputs(series_root(settings)),
                      sources=sources, pytorch=inputs.pytorch,
                      stale_companions=() if settings.companions
                      else companions_in_dist(inputs.workdir),
                      rocm_facts=rocm_facts_of(inputs), sdk=inputs.sdk,
                      extension_sources=extensions, upstream_fixes=fixes)
    return PreparedBuild(inputs=inputs, options=options, preflight=rows, plan=plan,
                         extension_sources=extensions)


def extension_sources_of(settings: Settings, workdir: WorkDir,
                         torch_version: str = "") -> tuple[ExtensionSource, ...]:
    """Every extension `--with` names, resolved before the plan (its ref on the remote, its
    folder on disk: bad input is a UsageError here, before anything is written), in the order
    its steps run (plan.extensions.build_order: the last build's unchanged ones first)."""
    from rocmforge.knowledge.extensions import load_extensions, split_with
    from rocmforge.plan.extensions import build_order
    from rocmforge.sources.extension_sources import resolve_sources

    table = load_extensions()
    _, words = split_with(settings.companions, table)
    if not words:
        return ()
    sources = resolve_sources(words, table, repos=settings.companion_repos,
                              mirrors=settings.mirrors, torch_version=torch_version)
    return build_order(sources, extensions_in_dist(workdir))


def extensions_in_dist(workdir: WorkDir) -> tuple[tuple[str, str, str], ...]:
    """(name, repo, commit or sha256:digest) of each extension dist/manifest.json names, in its
    order; () when there is no readable manifest."""
    from rocmforge.errors import ConfigError
    from rocmforge.knowledge.manifest import read_manifest

    path = workdir.dist / "manifest.json"
    if not path.is_file():
        return ()
    try:
        raw = read_manifest(path).doc.get("companions", {})
    except ConfigError:
        return ()
    if not isinstance(raw, dict):
        return ()
    return tuple((str(name), str(entry.get("repo", "")),
                  str(entry.get("commit", "") or entry.get("version", "")))
                 for name, entry in raw.items()
                 if isinstance(entry, dict) and entry.get("kind") == "extension")


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


def upstream_fix_decisions(inputs: BuildInputs, version: str) -> tuple[FixDecision, ...]:
    """config/upstream_fixes.toml against this build (see fix_conditions)."""
    from rocmforge.sources.upstream_fixes import decide, load_fixes

    return decide(load_fixes(), fix_conditions(inputs, version))


def rocm_facts_of(inputs: BuildInputs) -> RocmFacts | None:
    """The selected install's facts beside its table row (None without an install)."""
    from rocmforge.plan.rocm_facts import rocm_facts_for

    if inputs.facts.rocm is None:
        return None
    return rocm_facts_for(inputs.facts.rocm, [found for _, found in inputs.components or ()])


def companions_in_dist(workdir: WorkDir) -> tuple[str, ...]:
    """The companions dist/manifest.json names (an earlier `--with` build); () when there is
    no readable manifest."""
    from rocmforge.errors import ConfigError
    from rocmforge.knowledge.manifest import read_manifest

    path = workdir.dist / "manifest.json"
    if not path.is_file():
        return ()
    try:
        return tuple(read_manifest(path).companions)
    except ConfigError:
        return ()


def _judge_for(facts: Facts,
               torch_release: PytorchRelease) -> tuple[Judge | None, tuple[tuple[str, int], ...]]:
    """The compiler policy's judge and recommendation for the ROCm install facts already found
    (no second ROCm probe); (None, ()) when the tables do not know the pair."""
    from rocmforge.errors import RocmforgeError
    from rocmforge.knowledge import compiler_policy, releases
    from rocmforge.toolchain.select import Verdict

    if facts.rocm is None or not facts.rocm.version:
        return None, ()
    try:
        rocm_release = releases.rocm_release_for(facts.rocm.version)
    except (RocmforgeError, KeyError, ValueError):
        return None, ()

    def judge(kind: str, version: str) -> Verdict:
        verdict = compiler_policy.judge_compiler(kind, version, rocm_release, torch_release)
        return Verdict(status=verdict.status, reason=verdict.reason, fix=verdict.fix)

    recommended = tuple((str(k), int(m)) for k, m in
                        compiler_policy.recommended_compilers(rocm_release, torch_release))
    return judge, recommended


def _choose_compilers(settings: Settings, facts: Facts,
                      release: PytorchRelease) -> tuple[CompilerChoice, dict[str, str]]:
    """CC/CXX from the compilers gather_facts already identified (no second inventory)."""
    from rocmforge.probes.compilers import find_gcc_installs
    from rocmforge.toolchain.select import ToolchainInventory, choose_build_compilers

    judge, recommended = _judge_for(facts, release)
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
        remote_cache=shared_cache_env(settings, facts),
    )
    return env.as_dict()


def shared_cache_env(settings: Settings, facts: Facts) -> list[tuple[str, str]]:
    """The shared cache's variables: the cache in use, probed for its version (only when
    cache_remote is set), then plan.cache_env's pure choice."""
    if not settings.cache_remote:
        return []
    from rocmforge.knowledge.cache_backends import load_cache_backends, parse_remote
    from rocmforge.plan.cache_env import remote_cache_env
    from rocmforge.plan.environment import chosen_cache
    from rocmforge.probes.cache import CACHE_NAMES, probe_cache_tool
    from rocmforge.workdir import workdir_for

    found = dict(getattr(facts.system, "compiler_caches", {}) or {})
    name = chosen_cache(settings.cache, found)
    tool = next((probe_cache_tool(known, found[known]) for known in CACHE_NAMES
                 if known == name), None)
    return remote_cache_env(parse_remote(settings.cache_remote), name, tool,
                            load_cache_backends(),
                            base_dir=str(workdir_for(settings.work_dir).root))


def cache_doctor_rows(settings: Settings, facts: Facts, targets: Sequence[TargetId], *,
                      environ: Mapping[str, str],
                      use_cache: bool = False,
                      pytorch: PytorchSide | None = None,
                      components: tuple[tuple[Component, ComponentFound], ...] | None = None,
                      ) -> tuple[DoctorRow, ...]:
    """The cache rows for `invoke doctor`: () without a cache. The environment is the one the
    build would make (resolve_build_inputs); a `cache_remote` it would refuse is one FAIL row.
    `use_cache`: the HIP test compile's result may come from the probe store. `pytorch`,
    `components`: the PyTorch side and the ROCm components the caller already read for these
    facts (not read twice)."""
    from rocmforge.errors import RocmforgeError
    from rocmforge.plan.cache_doctor import probed_cache_rows, refused_config_row

    try:
        shared_cache_env(settings, facts)
    except RocmforgeError as exc:
        return (refused_config_row(exc),)
    if not targets:
        return ()
    try:
        inputs = resolve_build_inputs(settings, facts=facts, pytorch=pytorch,
                                      components=components)
    except RocmforgeError:
        return ()  # no ROCm, no targets: doctor's other rows say so
    return probed_cache_rows(dict(inputs.env), cache_remote=settings.cache_remote,
                             hip_compiler=inputs.compilers.get("hip", ""),
                             hip_target=str(targets[0]), environ=environ, use_cache=use_cache)


def _preflight_rows(facts: Facts, inputs: BuildInputs) -> tuple[PreflightRow, ...]:
    """Doctor's rows for the build, as doctor judged them (its host-compiler row already is the
    build's verdict: a compiler the table warns about is refused unless allow_compiler)."""
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.plan.build_plan import PreflightRow
    from rocmforge.plan.doctor import diagnose

    found: tuple[DoctorRow, ...] = diagnose(
        facts, inputs.targets, inputs.settings, table=load_arch_table(), release=inputs.release,
        components=inputs.components)  # same install: target probes do not change it
    if inputs.settings.cache_remote and inputs.targets:
        # An unreachable shared cache stops sccache's server partway through the build.
        from rocmforge.plan.cache_doctor import probed_cache_rows

        found += probed_cache_rows(dict(inputs.env), cache_remote=inputs.settings.cache_remote,
                                   hip_compiler=inputs.compilers.get("hip", ""),
                                   hip_target=str(inputs.targets[0]), environ=os.environ)
    if inputs.features is not None:  # a feature asked for that cannot be built FAILs here
        found += inputs.features.rows
    # The files configure downloads (AOTriton): gone (FAIL), or not checkable offline (WARN).
    from rocmforge.plan.download_rows import aotriton_download_doctor

    found += tuple(aotriton_download_doctor(inputs.settings, facts,
                                            [str(t) for t in inputs.targets], inputs.pytorch,
                                            inputs.features))
    from rocmforge.plan.preflight_more import more_preflight_rows  # Triton's LLVM, vLLM's FP8
    found += tuple(more_preflight_rows(inputs.settings, facts, inputs.target_names,
                                       {**os.environ, **dict(inputs.env)}))
    return tuple(PreflightRow(status=r.status, check=r.check, detail=r.detail, fix=r.fix)
                 for r in found)
