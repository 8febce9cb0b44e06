"""Doctor's compiler-cache rows for one invocation: the probing half, like plan.prepare.

Owns: building the environment the build would use (plan.prepare.resolve_build_inputs, so the
cache, its variables and the HIP_CLANG_LAUNCHER decision are the build's own), probing that
cache (rocmforge.probes.cache.probe_shared_cache) and handing the result to the pure
plan.cache_rows. A `cache_remote` the build would refuse becomes a FAIL row with the same
paragraph. Must not: judge (cache_rows does) or print.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rocmforge.errors import RocmforgeError
from rocmforge.plan.cache_rows import CONFIG_CHECK, shared_cache_rows
from rocmforge.plan.doctor import DoctorRow

if TYPE_CHECKING:
    from rocmforge.knowledge.components import Component
    from rocmforge.knowledge.targets import TargetId
    from rocmforge.plan.pytorch import PytorchSide
    from rocmforge.probes.facts import Facts
    from rocmforge.probes.rocm_components import ComponentFound
    from rocmforge.settings import Settings


def cache_doctor_rows(settings: Settings, facts: Facts, targets: Sequence[TargetId], *,
                      environ: Mapping[str, str],
                      use_cache: bool = False,
                      pytorch: PytorchSide | None = None,
                      components: tuple[tuple[Component, ComponentFound], ...] | None = None,
                      ) -> tuple[DoctorRow, ...]:
    """The cache rows for `invoke doctor` (and a build's preflight): () without a cache.
    `use_cache`: the HIP test compile's result may come from the probe store (doctor's
    default; `--no-cache` or ROCMFORGE_PROBE_CACHE=0 turn it off). `pytorch`, `components`:
    the PyTorch side and the ROCm components the caller already read for these facts (not
    read twice)."""
    from rocmforge.knowledge.cache_backends import parse_remote
    from rocmforge.plan.prepare import resolve_build_inputs, shared_cache_env
    from rocmforge.probes.cache import probe_shared_cache

    try:
        shared_cache_env(settings, facts)
    except RocmforgeError as exc:
        return (DoctorRow(check=CONFIG_CHECK, status="FAIL",
                          detail=" ".join(p for p in (exc.what, exc.why) if p),
                          fix=exc.fix),)
    if not targets:
        return ()
    try:
        inputs = resolve_build_inputs(settings, facts=facts, pytorch=pytorch,
                                      components=components)
    except RocmforgeError:
        return ()  # no ROCm, no targets: doctor's other rows say so
    remote = parse_remote(settings.cache_remote) if settings.cache_remote else None
    probe = probe_shared_cache(dict(inputs.env), remote=remote,
                               hip_compiler=inputs.compilers.get("hip", ""),
                               hip_target=str(targets[0]), environ=environ,
                               use_cache=use_cache)
    return shared_cache_rows(probe)
