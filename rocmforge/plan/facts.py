"""What one invocation learned before planning: the machine, the tree, the work dir, the tables.

Owns: `BuildFacts`, the one record the gathering half (plan.gather) fills and the planning half
(plan.prepare.plan_prepared) reads, and `BuildConfig`, config/build.toml as read. Every field
is a value: no callable, no open file, nothing the planner could ask again. Must not: probe,
read files or plan; it is data only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rocmforge.errors import RocmforgeError
    from rocmforge.knowledge.addon_table import AddOnTables
    from rocmforge.knowledge.components import Component
    from rocmforge.knowledge.extensions import ExtensionSource
    from rocmforge.knowledge.features import FeatureSpec
    from rocmforge.knowledge.releases import RocmRelease
    from rocmforge.knowledge.targets import TargetId
    from rocmforge.plan.build_plan import PreflightRow
    from rocmforge.plan.features import AotritonState
    from rocmforge.plan.pytorch import PytorchSide
    from rocmforge.plan.rocm_facts import RocmFacts
    from rocmforge.plan.rocm_sdk import SdkPlan
    from rocmforge.probes.compilers import GccInstall
    from rocmforge.probes.facts import Facts
    from rocmforge.probes.rocm_components import ComponentFound
    from rocmforge.sources.upstream_fixes import UpstreamFix
    from rocmforge.workdir import WorkDir


@dataclass(frozen=True, kw_only=True)
class BuildConfig:
    """config/build.toml, checked: the fixed variables, the variables taken from the caller's
    environment (the [inherit] rule), configure's own variables and the ROCm from which HIP
    gets a compiler launcher."""

    env: tuple[tuple[str, str], ...] = ()
    inherit: Mapping[str, object] | None = None
    configure_env: tuple[tuple[str, str], ...] = ()
    hip_launcher_min_rocm: str = ""


@dataclass(frozen=True, kw_only=True)
class BuildFacts:
    """Everything `invoke plan`, `invoke build` and `invoke env` learn from the machine, the
    tree, the work dir, the network and the kit's tables, gathered once (plan.gather); the
    planner is a pure function of the settings and this record.

    The fields below `sdk` are the build's alone (plan.gather.gather_build_facts fills them
    for plan and build; `invoke env` and doctor's cache rows leave them at their defaults)."""

    machine: Facts  # the probes' record; with the SDK to come in place of the ROCm install
    workdir: WorkDir
    pytorch: PytorchSide  # the PyTorch being built: the tree's facts, else the table's
    targets: tuple[TargetId, ...]  # --arch, else the GPUs found (never empty)
    environ: tuple[tuple[str, str], ...]  # the caller's environment, for the [inherit] rule
    config: BuildConfig
    gcc_installs: tuple[GccInstall, ...] = ()  # the GCC dirs clang could pick (probes.compilers)
    # config/rocm.toml's row for the install's version (the compiler policy); None: unknown
    rocm_release: RocmRelease | None = None
    # The shared cache's variables (plan.cache_env, after probing the cache tool); () without
    remote_cache: tuple[tuple[str, str], ...] = ()
    # Why the kit refuses the cache_remote setting, kept as data: the planner says it where
    # the environment is made (after the compiler choice), as the serial order always did.
    remote_cache_refused: RocmforgeError | None = None
    # component_report's pairs; None without a ROCm install
    components: tuple[tuple[Component, ComponentFound], ...] | None = None
    feature_specs: tuple[FeatureSpec, ...] = ()  # config/features.toml
    aotriton: AotritonState | None = None  # None: no feature plan (old callers)
    sdk: SdkPlan | None = None  # the pip ROCm SDK, the index already asked; None without it
    # The extras the rocm-sdk step will install when the plan stands on that SDK to come
    # (prepare_features.sdk_to_come); "" otherwise
    sdk_to_come: str = ""
    # --- the build's alone ------------------------------------------------------------------
    # Doctor's verdicts for the build (the probes judged, the chosen compiler judged), as
    # doctor made them; () when preflight is skipped.
    preflight: tuple[PreflightRow, ...] = ()
    sources: Mapping[str, object] | None = None  # what the work dir holds (describe_sources)
    tree_version: str = ""  # the checkout's version.txt ("" before the checkout)
    patch_inputs: Mapping[str, str] | None = None  # sha256 of each patch of the series
    extension_sources: tuple[ExtensionSource, ...] = ()  # `--with` extensions, resolved
    # config/companions.toml and extensions.toml as read; None when no add-on is named
    addon_tables: AddOnTables | None = None
    stale_companions: tuple[str, ...] = ()  # companions dist/ holds that the settings drop
    rocm_facts: RocmFacts | None = None  # the install's facts beside its table row
    fixes: tuple[UpstreamFix, ...] = ()  # config/upstream_fixes.toml

    @property
    def target_names(self) -> tuple[str, ...]:
        return tuple(str(t) for t in self.targets)
