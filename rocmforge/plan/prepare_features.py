"""Gathering what plan.features decides from: the tree's AOTriton, the work dir's fetched prefix,
the install's components.

Owns: `aotriton_state` (what plan.gather hands the pure plan.features in BuildFacts),
`features_for_build` (doctor's gathering: state and decision in one call) and `aotriton_fetch_for`
(what `invoke fetch` downloads), all three reading files only: the checkout's aotriton.cmake /
aotriton_version.txt, the table before a checkout, the marker of a fetched prefix. Must not:
download (sources.aotriton.fetch_aotriton does, from the fetch task) or decide (plan.features).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rocmforge.knowledge.components import Component
    from rocmforge.plan.features import AotritonState, FeaturePlan
    from rocmforge.plan.pytorch import PytorchSide
    from rocmforge.probes.facts import Facts
    from rocmforge.probes.rocm_components import ComponentFound
    from rocmforge.settings import Settings
    from rocmforge.sources.aotriton import AotritonFetch, AotritonRelease
    from rocmforge.workdir import WorkDir


def aotriton_release_for(workdir: WorkDir, pytorch: PytorchSide) -> AotritonRelease | None:
    """The checkout's AOTriton facts when the work dir holds the tree being built."""
    if not pytorch.from_tree:
        return None
    # Here: importing rocmforge.sources loads all of it (~30 ms), needed only with a checkout.
    from rocmforge.sources.aotriton import release_from_tree

    return release_from_tree(workdir.pytorch)


def aotriton_fetch_for(release: AotritonRelease | None, rocm_version: str,
                       targets: Sequence[str], *, base_url: str = "",
                       hip_version: str = "") -> AotritonFetch | None:
    """The files configure would download (None before a checkout or without a ROCm version:
    the table has no sha256 list, so nothing can be fetched safely). `hip_version` is what the
    newer aotriton.cmake looks the runtime up by (it differs from ROCm's from ROCm 10)."""
    if release is None or not rocm_version:
        return None
    from rocmforge.sources.aotriton import plan_fetch

    return plan_fetch(release, rocm_version, targets, base_url=base_url,
                      machine=os.uname().machine or "x86_64",  # platform.machine()'s source
                      hip_version=hip_version)


def aotriton_state(workdir: WorkDir, pytorch: PytorchSide, rocm_version: str,
                   targets: Sequence[str], hip_version: str = "") -> AotritonState:
    from rocmforge.knowledge.features import load_aotriton_table
    from rocmforge.plan.features import AotritonState

    release = aotriton_release_for(workdir, pytorch)
    fetch = aotriton_fetch_for(release, rocm_version, targets, hip_version=hip_version)
    prefix = None
    if fetch is not None:  # only with a checkout (see aotriton_release_for)
        from rocmforge.sources.aotriton import fetched_prefix

        prefix = fetched_prefix(workdir.aotriton, fetch)
    return AotritonState(release=release, table=load_aotriton_table(), fetch=fetch, prefix=prefix)


def features_for_build(settings: Settings, facts: Facts, targets: Sequence[str],
                       workdir: WorkDir, pytorch: PytorchSide,
                       components: Sequence[tuple[Component, ComponentFound]] | None = None,
                       ) -> FeaturePlan:
    """The feature decisions of one build (components: gather.component_report's pairs)."""
    from rocmforge.knowledge.features import load_features
    from rocmforge.plan.features import plan_features
    from rocmforge.plan.rocm_facts import hip_version_of

    rocm_version = facts.rocm.version if facts.rocm is not None else ""
    state = aotriton_state(workdir, pytorch, rocm_version, targets, hip_version_of(facts.rocm))
    return plan_features(load_features(), settings.features, targets, components, state,
                         rocm_version=rocm_version,
                         layout=facts.rocm.layout if facts.rocm is not None else "",
                         sdk_to_come=sdk_to_come(settings, facts))


def sdk_to_come(settings: Settings, facts: Facts) -> str:
    """The extras the rocm-sdk step installs, when the build uses the pip SDK and the install
    the plan stands on is that SDK to come (prepare.resolve_build_inputs puts it in place of
    the probes' install until the step has run: a pip SDK layout the probes did not find, whose
    components are not there to find yet); "" otherwise (an installed SDK, whose components are
    found or not as any install's, or another install that doctor judges as it is)."""
    from rocmforge.knowledge.components import SDK, layout_kind, load_sdk_extras

    if not (settings.rocm_sdk or settings.rocm_sdk_version) or facts.rocm is None:
        return ""
    layout = facts.rocm.layout
    if layout_kind(layout) != SDK or layout == "pip SDK":  # "pip SDK": probes.rocm's word
        return ""
    return load_sdk_extras().components
