"""Doctor's compiler-cache rows once the build's environment is known: the probing half.

Owns: probing the cache a build environment uses (rocmforge.probes.cache.probe_shared_cache) and
handing the result to the pure plan.cache_rows, and the FAIL row for a `cache_remote` the build
would refuse (the refusal's own paragraph). It takes the environment and compiler as made by
plan.prepare and gathered by plan.gather (`gather.cache_doctor_rows` for `invoke doctor`,
`gather._preflight_rows` for a build), so the cache, its variables and the HIP_CLANG_LAUNCHER
decision are the build's own. Must not: import plan.gather (gather imports this), judge
(cache_rows does) or print.
"""

from __future__ import annotations

from collections.abc import Mapping

from rocmforge.errors import RocmforgeError
from rocmforge.plan.cache_rows import CONFIG_CHECK, shared_cache_rows
from rocmforge.plan.doctor_row import DoctorRow


def refused_config_row(exc: RocmforgeError) -> DoctorRow:
    """The FAIL row for a cache configuration the build refuses, in the refusal's words."""
    return DoctorRow(check=CONFIG_CHECK, status="FAIL",
                     detail=" ".join(p for p in (exc.what, exc.why) if p), fix=exc.fix)


def probed_cache_rows(env: Mapping[str, str], *, cache_remote: str, hip_compiler: str,
                      hip_target: str, environ: Mapping[str, str],
                      use_cache: bool = False) -> tuple[DoctorRow, ...]:
    """The cache rows for the build environment `env` (() when it uses no cache): its cache
    probed with one HIP compile of `hip_compiler` for `hip_target`. `use_cache`: that compile's
    result may come from the probe store (doctor's default; `--no-cache` or
    ROCMFORGE_PROBE_CACHE=0 turn it off)."""
    from rocmforge.knowledge.cache_backends import parse_remote
    from rocmforge.probes.cache import probe_shared_cache

    remote = parse_remote(cache_remote) if cache_remote else None
    probe = probe_shared_cache(dict(env), remote=remote, hip_compiler=hip_compiler,
                               hip_target=hip_target, environ=environ, use_cache=use_cache)
    return shared_cache_rows(probe)
