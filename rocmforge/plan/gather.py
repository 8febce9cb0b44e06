"""Gathering a build's facts: the machine, the tree, the work dir, the network, the tables.

Owns: the side-effect half of `invoke plan`, `invoke build`, `invoke env` and `invoke doctor`:
each probe once (their own caches as they are), every file and table the planner needs read
once, the network asked once (the SDK index, the `--with` refs, the shared cache), all in one
`BuildFacts` (plan.facts). The tasks call `gather_build_facts` / `gather_input_facts` and then
plan.prepare's pure planner themselves; `prepare_build` and `resolve_build_inputs` are the same
two steps in one call (doctor's cache rows, tests, benchmarks). Doctor's verdicts for the build
are gathered here too: they judge probe results, with the compiler the pure planner chose.
Must not: decide what the build does (plan.prepare, plan.build_plan) or run a step.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from rocmforge.plan.prepare import (
    BuildInputs,
    PreparedBuild,
    build_inputs,
    choose_compilers,
    judged_by_build_choice,
    plan_prepared,
)
from rocmforge.settings import Settings

if TYPE_CHECKING:
    from rocmforge.knowledge.addon_table import AddOnTables
    from rocmforge.knowledge.components import Component
    from rocmforge.knowledge.extensions import ExtensionSource
    from rocmforge.knowledge.releases import PytorchRelease, RocmRelease
    from rocmforge.knowledge.rocm_sdk import SdkTable
    from rocmforge.knowledge.targets import TargetId
    from rocmforge.plan.build_plan import PreflightRow
    from rocmforge.plan.doctor_row import DoctorRow
    from rocmforge.plan.facts import BuildConfig, BuildFacts
    from rocmforge.plan.features import FeaturePlan
    from rocmforge.plan.pytorch import PytorchSide
    from rocmforge.plan.rocm_facts import RocmFacts
    from rocmforge.plan.rocm_sdk import SdkPlan
    from rocmforge.probes.facts import Facts
    from rocmforge.probes.rocm_components import ComponentFound
    from rocmforge.probes.triton_targets import TritonProbeReport
    from rocmforge.toolchain.select import CompilerChoice
    from rocmforge.workdir import WorkDir

# What the build's preflight probes: nothing (`invoke env`, skip_preflight), the ROCm
# libraries' code per target only (`invoke plan`: kept in the probe store, so cheap), or that
# and doctor's real compile of a kernel per target (`invoke build`).
Preflight = Literal["none", "forecast", "probe"]


def prepare_build(
    settings: Settings, *, with_preflight: bool = True, compile_probes: bool = True
) -> PreparedBuild:
    """Gather, then plan (plan.prepare.plan_prepared): the inputs, doctor's verdicts and the
    Plan for one invocation (probes run here, once).

    `compile_probes=False` leaves out doctor's real compile of a kernel per target (about a
    second each): `invoke plan` lists the steps, `invoke build` must know the toolchain works.
    """
    preflight = preflight_for(settings, compile_probes=compile_probes,
                              with_preflight=with_preflight)
    return plan_prepared(settings, gather_build_facts(settings, preflight=preflight))


def preflight_for(settings: Settings, *, compile_probes: bool,
                  with_preflight: bool = True) -> Preflight:
    """What the build's preflight probes: nothing with skip_preflight, else the libraries'
    code per target, and (`compile_probes`: `invoke build`) a real compile per target."""
    if not with_preflight or settings.skip_preflight:
        return "none"
    return "probe" if compile_probes else "forecast"


def resolve_build_inputs(settings: Settings, *, facts: Facts | None = None,
                         environ: Mapping[str, str] | None = None,
                         pytorch: PytorchSide | None = None,
                         components: tuple[tuple[Component, ComponentFound], ...] | None = None,
                         ) -> BuildInputs:
    """Gather (unless `facts`, the machine's, is given), then plan.prepare.build_inputs: the
    targets, CC/CXX and the environment. `pytorch`, `components`: what this invocation
    already read with these facts (doctor), else read here."""
    return build_inputs(settings, gather_input_facts(settings, machine=facts, environ=environ,
                                                     pytorch=pytorch, components=components))


def gather_build_facts(settings: Settings, *, preflight: Preflight = "probe",
                       environ: Mapping[str, str] | None = None) -> BuildFacts:
    """Everything plan.prepare.plan_prepared reads for a plan or a build: the inputs' facts,
    then doctor's verdicts for the build (`preflight`), what the work dir holds, the patch
    series' digests, the `--with` extensions resolved and the upstream-fixes table."""
    from rocmforge.sources import describe_sources, patch_digest_inputs, series_root
    from rocmforge.sources.upstream_fixes import load_fixes

    environ = os.environ if environ is None else environ
    facts = gather_input_facts(settings, environ=environ)
    rows: tuple[PreflightRow, ...] = ()
    if preflight != "none":
        rows = _preflight_rows(settings, facts, compile_probes=preflight == "probe",
                               environ=environ)
    summary = describe_sources(settings)
    return dataclasses.replace(  # read in the order the serial prepare read them (errors)
        facts,
        preflight=rows,
        sources=summary.as_dict() if summary.pytorch_commit else None,
        tree_version=summary.pytorch_version,
        extension_sources=extension_sources_of(settings, facts.workdir,
                                               facts.pytorch.release.ref_version),
        addon_tables=addon_tables_of(settings),
        fixes=load_fixes(),
        patch_inputs=patch_digest_inputs(series_root(settings)),
        stale_companions=companions_in_dist(facts.workdir),
        rocm_facts=rocm_facts_of(facts.machine, facts.components),
    )


def gather_input_facts(settings: Settings, *, machine: Facts | None = None,
                       environ: Mapping[str, str] | None = None,
                       pytorch: PytorchSide | None = None,
                       components: tuple[tuple[Component, ComponentFound], ...] | None = None,
                       ) -> BuildFacts:
    """What plan.prepare.build_inputs reads: probe the machine (unless `machine` is given),
    read the PyTorch side, parse the targets, read config/build.toml and the tables, find the
    GCC installs, the ROCm components and AOTriton, probe the shared cache tool, and (with the
    rocm_sdk setting) ask the SDK index. Bad input raises here; the index is asked last, after
    the pure planner has said any refusal of its own (no compiler the build accepts, ...)."""
    from rocmforge.errors import RocmforgeError
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.knowledge.features import load_features
    from rocmforge.knowledge.targets import parse_targets, requested_targets
    from rocmforge.plan.facts import BuildFacts
    from rocmforge.plan.prepare_features import aotriton_state, sdk_to_come
    from rocmforge.plan.pytorch import pytorch_for
    from rocmforge.plan.rocm_facts import hip_version_of
    from rocmforge.probes.compilers import find_gcc_installs
    from rocmforge.probes.facts import gather_facts
    from rocmforge.workdir import workdir_for

    workdir = workdir_for(settings.work_dir)
    pytorch = pytorch if pytorch is not None else pytorch_for(settings, workdir)
    machine = machine if machine is not None else gather_facts(settings)
    machine = _with_sdk_to_come(settings, machine, workdir)
    targets = requested_targets(settings.arch, machine.gpus.targets, load_arch_table())
    if not targets:
        # parse_targets' own refusal: no --arch and no GPU found says what to pass.
        targets = parse_targets("", load_arch_table())
    names = [str(t) for t in targets]
    if components is None:
        components = component_report(machine, pytorch)
    rocm_version = machine.rocm.version if machine.rocm is not None else ""
    sdk_table, sdk = _sdk_plan_for(settings, machine, names)
    try:
        remote_cache, refused = tuple(shared_cache_env(settings, machine)), None
    except RocmforgeError as exc:
        remote_cache, refused = (), exc
    facts = BuildFacts(
        machine=machine,
        workdir=workdir,
        pytorch=pytorch,
        targets=tuple(targets),
        environ=tuple((os.environ if environ is None else environ).items()),
        config=build_config(),
        gcc_installs=find_gcc_installs("/"),
        rocm_release=rocm_release_of(machine),
        remote_cache=remote_cache,
        remote_cache_refused=refused,
        components=components,
        feature_specs=tuple(load_features()),
        aotriton=aotriton_state(workdir, pytorch, rocm_version, names,
                                hip_version_of(machine.rocm)),
        sdk=sdk,
        sdk_to_come=sdk_to_come(settings, machine),
    )
    if sdk is not None and sdk_table is not None:
        # The planner's own refusals (no compiler the build accepts, a bad inherited
        # variable) come before the network is asked, as they always did: it says them now.
        build_inputs(settings, facts)
        _check_sdk_index(sdk, sdk_table)
    return facts


def build_config() -> BuildConfig:
    """config/build.toml, checked (ConfigError for a key or a type it does not know)."""
    from rocmforge.knowledge.toml_files import check_keys, config_dir, expect_type, read_toml
    from rocmforge.plan.facts import BuildConfig

    build_toml = read_toml(config_dir() / "build.toml")
    check_keys(build_toml, where="config/build.toml",
               optional=("env", "configure", "cache", "inherit"))
    cache_table = expect_type(build_toml.get("cache", {}), dict, where="config/build.toml [cache]")
    check_keys(cache_table, where="config/build.toml [cache]", optional=("hip_launcher_min_rocm",))
    env = expect_type(build_toml.get("env", {}), dict, where="config/build.toml [env]")
    inherit = expect_type(build_toml.get("inherit", {}), dict,
                          where="config/build.toml [inherit]")
    configure_table = expect_type(build_toml.get("configure", {}), dict,
                                  where="config/build.toml [configure]")
    configure = expect_type(configure_table.get("env", {}), dict,
                            where="config/build.toml [configure] env")
    return BuildConfig(
        env=tuple((str(k), str(v)) for k, v in env.items()),
        inherit={str(k): v for k, v in inherit.items()},
        configure_env=tuple((str(k), str(v)) for k, v in configure.items()),
        hip_launcher_min_rocm=str(cache_table.get("hip_launcher_min_rocm", "")),
    )


def rocm_release_of(machine: Facts) -> RocmRelease | None:
    """config/rocm.toml's row for the install's version (what the compiler policy judges
    by); None without an install, a version or a row."""
    from rocmforge.errors import RocmforgeError
    from rocmforge.knowledge import releases

    if machine.rocm is None or not machine.rocm.version:
        return None
    try:
        return releases.rocm_release_for(machine.rocm.version)
    except (RocmforgeError, KeyError, ValueError):
        return None


def compiler_choice_of(settings: Settings, machine: Facts, pytorch: PytorchSide,
                       workdir: WorkDir) -> CompilerChoice:
    """The compiler pair the build would choose on `machine` (doctor's host-compiler verdict):
    the GCC installs and the install's table row gathered, then the planner's own choice."""
    from rocmforge.plan.facts import BuildConfig, BuildFacts
    from rocmforge.probes.compilers import find_gcc_installs

    facts = BuildFacts(machine=machine, workdir=workdir, pytorch=pytorch, targets=(),
                       environ=(), config=BuildConfig(), gcc_installs=find_gcc_installs("/"),
                       rocm_release=rocm_release_of(machine))
    return choose_compilers(settings, facts)[0]


def _with_sdk_to_come(settings: Settings, machine: Facts, workdir: WorkDir) -> Facts:
    """With the rocm_sdk setting and the SDK not in the build venv yet: the rocm-sdk step
    installs it and stops, and the next run plans from it. Until then the plan stands on the
    SDK to come, not on whatever ROCm the machine has."""
    if not (settings.rocm_sdk or settings.rocm_sdk_version) or (
            machine.rocm is not None and machine.rocm.layout == "pip SDK"):
        return machine
    from rocmforge.probes.rocm import RocmInstall

    return dataclasses.replace(machine, rocm=RocmInstall(
        root=workdir.venv, version=settings.rocm_sdk_version, source="rocm_sdk setting",
        version_source="the rocm_sdk_version setting",
        layout="pip SDK (installed by the rocm-sdk step)"), rocm_problem="")


def _sdk_plan_for(settings: Settings, machine: Facts,
                  targets: Sequence[str]) -> tuple[SdkTable | None, SdkPlan | None]:
    from rocmforge.knowledge.rocm_sdk import load_sdk_table
    from rocmforge.plan.rocm_sdk import sdk_plan

    if not settings.rocm_sdk and not settings.rocm_sdk_version:
        return None, None
    table = load_sdk_table()
    return table, sdk_plan(settings, list(targets), table, machine.rocm)


def _check_sdk_index(sdk: SdkPlan, table: SdkTable) -> None:
    """Not in the venv yet (or a target's device package is not): the index is asked now,
    before any step makes a venv or a checkout or pip runs, whether it holds the release and
    the targets' device packages."""
    if sdk.installed_root and not devices_to_install(sdk):
        return
    from rocmforge.plan.rocm_sdk import other_route
    from rocmforge.sources.rocm_sdk_index import check_sdk_index

    check_sdk_index(sdk.index, sdk.version, sdk.device_packages,
                    other_route=other_route(sdk, table))


def devices_to_install(sdk: SdkPlan) -> bool:
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
            choice: CompilerChoice | None = compiler_choice_of(settings, facts, pytorch,
                                                               workdir)
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


def addon_tables_of(settings: Settings) -> AddOnTables | None:
    """config/companions.toml and extensions.toml when the settings name an add-on (the
    planner reads them as facts); None without one (no file read)."""
    if not tuple(settings.companions or ()):
        return None
    from rocmforge.knowledge.addon_table import load_addon_tables

    return load_addon_tables()


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


def rocm_facts_of(machine: Facts, components: Sequence[tuple[Component, ComponentFound]] | None,
                  ) -> RocmFacts | None:
    """The selected install's facts beside its table row (None without an install)."""
    from rocmforge.plan.rocm_facts import rocm_facts_for

    if machine.rocm is None:
        return None
    return rocm_facts_for(machine.rocm, [found for _, found in components or ()])


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


def _preflight_rows(settings: Settings, facts: BuildFacts, *, compile_probes: bool,
                    environ: Mapping[str, str]) -> tuple[PreflightRow, ...]:
    """Doctor's rows for the build, as doctor judged them (its host-compiler row already is the
    build's verdict: a compiler the table warns about is refused unless allow_compiler).

    The same real compile probe doctor runs (`compile_probes`): a ROCm that cannot target a GPU
    fails here. Without it (`invoke plan`) the ROCm libraries' code per target is still read
    (kept in the probe store, so it is cheap), so the forecast counts those FAILs too."""
    from rocmforge.plan.build_plan import PreflightRow
    from rocmforge.plan.doctor import diagnose
    from rocmforge.probes.facts import library_code_of, with_target_probes

    inputs = build_inputs(settings, facts)
    machine = inputs.facts
    if compile_probes:
        probed = with_target_probes(machine, inputs.target_names, environ=environ)
    elif machine.rocm is None:
        probed = machine
    else:
        probed = dataclasses.replace(machine, library_code=library_code_of(machine.rocm.root,
                                                                           environ=environ))
    probed = judged_by_build_choice(probed, inputs.choice)  # the compiler the build uses
    from rocmforge.knowledge.arches import load_arch_table

    found: tuple[DoctorRow, ...] = diagnose(
        probed, inputs.targets, settings, table=load_arch_table(), release=inputs.release,
        components=inputs.components)  # same install: target probes do not change it
    if settings.cache_remote and inputs.targets:
        # An unreachable shared cache stops sccache's server partway through the build.
        from rocmforge.plan.cache_doctor import probed_cache_rows

        found += probed_cache_rows(dict(inputs.env), cache_remote=settings.cache_remote,
                                   hip_compiler=inputs.compilers.get("hip", ""),
                                   hip_target=str(inputs.targets[0]), environ=environ)
    if inputs.features is not None:  # a feature asked for that cannot be built FAILs here
        found += inputs.features.rows
    # The files configure downloads (AOTriton): gone (FAIL), or not checkable offline (WARN).
    from rocmforge.plan.download_rows import aotriton_download_doctor

    found += tuple(aotriton_download_doctor(settings, probed, list(inputs.target_names),
                                            inputs.pytorch, inputs.features))
    from rocmforge.plan.preflight_more import more_preflight_rows  # Triton's LLVM, vLLM's FP8

    found += tuple(more_preflight_rows(settings, probed, inputs.target_names,
                                       {**environ, **dict(inputs.env)}))
    return tuple(PreflightRow(status=r.status, check=r.check, detail=r.detail, fix=r.fix)
                 for r in found)
