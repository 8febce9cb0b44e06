"""Doctor's verdicts on the compiler cache: the shared backend, the cache's configuration, and
whether HIP device code is cached at all.

Owns: turning a `SharedCacheProbe` (rocmforge.probes.cache) into DoctorRows, with a fix for every
FAIL. A row is OK only on proof: "+PONG" or an HTTP answer from the backend; a compile the cache
stored in (or served from) the shared backend with no remote errors; a HIP compile the cache
counted as cacheable while hipcc's device compiles pass through HIP_CLANG_LAUNCHER. Pure.
Must not: probe, or re-decide what the build environment decided (whether HIP_CLANG_LAUNCHER is
set is the environment's verdict, read from the probe).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rocmforge.plan.doctor_row import DoctorRow

if TYPE_CHECKING:
    from rocmforge.probes.cache import SharedCacheProbe, TrialCompile

BACKEND_CHECK = "shared cache backend"
CONFIG_CHECK = "shared cache config"
HIP_CHECK = "cache covers HIP"
_SETTING = "cache_remote (ROCMFORGE_CACHE_REMOTE, invoke.yaml rocm.cache_remote)"


def shared_cache_rows(probe: SharedCacheProbe | None) -> tuple[DoctorRow, ...]:
    """The rows for the cache of the build environment; () when the build uses no cache."""
    if probe is None:
        return ()
    rows: list[DoctorRow] = []
    if probe.remote is not None:
        rows.append(_backend_row(probe))
        rows.append(_config_row(probe))
    rows.append(_hip_row(probe))
    return tuple(rows)


def _backend_row(probe: SharedCacheProbe) -> DoctorRow:
    remote = probe.remote
    check = probe.backend
    assert remote is not None
    if check is None or check.state == "unchecked":
        return DoctorRow(check=BACKEND_CHECK, status="WARN",
                         detail=f"{remote.url}: not checked here "
                         f"({check.detail if check else 'no check ran'})")
    if check.state == "ok":
        return DoctorRow(check=BACKEND_CHECK, status="OK", detail=check.detail)
    if check.state == "auth":
        creds = ("SCCACHE_REDIS_USERNAME/SCCACHE_REDIS_PASSWORD" if remote.scheme.startswith(
            "redis") else "SCCACHE_WEBDAV_USERNAME/SCCACHE_WEBDAV_PASSWORD or _TOKEN")
        return DoctorRow(check=BACKEND_CHECK, status="FAIL", detail=check.detail,
                         fix=f"export {creds} for sccache (never in the URL); for ccache, put "
                         "the password into ccache.conf's remote_storage and leave "
                         "cache_remote empty")
    if remote.scheme in ("redis", "rediss"):
        fix = (f"start Redis there (`redis-server --port {remote.port}`), let this machine "
               f"reach {remote.host}:{remote.port} (firewall, bind address), or correct "
               f"{_SETTING}")
    else:
        fix = f"start the HTTP cache server at {remote.url}, or correct {_SETTING}"
    return DoctorRow(check=BACKEND_CHECK, status="FAIL", detail=check.detail, fix=fix)


def _config_row(probe: SharedCacheProbe) -> DoctorRow:
    tool = probe.tool
    remote = probe.remote
    assert remote is not None
    names = ", ".join(f"{k}={v}" for k, v in probe.variables) or "no variables"
    label = f"{tool.name} {tool.version or '?'}"
    if not probe.started:
        return DoctorRow(check=CONFIG_CHECK, status="FAIL",
                         detail=f"{label} refused the configuration ({names}): "
                         f"{probe.start_problem}",
                         fix=f"fix what it names (the backend must answer before sccache "
                         f"starts), or correct {_SETTING}")
    trial = probe.host_trial
    if trial is None or not trial.compiled:
        why = trial.problem if trial else "no test compile ran"
        return DoctorRow(check=CONFIG_CHECK, status="WARN",
                         detail=f"{label}: not proven, the test compile failed ({why})")
    counted = trial.counters
    if counted.remote_errors:
        return DoctorRow(check=CONFIG_CHECK, status="FAIL",
                         detail=f"{label} ({names}) met {counted.remote_errors} error(s) or "
                         f"timeout(s) with {remote.url} on a test compile; it falls back to "
                         "compiling locally, so no machine shares anything",
                         fix=f"make {remote.url} reachable and writable from here (see the "
                         f"backend row), or correct {_SETTING}")
    if counted.remote_hits or counted.remote_writes:
        how = ("served from" if counted.remote_hits else "stored in")
        return DoctorRow(check=CONFIG_CHECK, status="OK",
                         detail=f"{label} ({names}): a test compile was {how} {remote.url}")
    return DoctorRow(check=CONFIG_CHECK, status="FAIL",
                     detail=f"{label} ({names}) neither stored nor found a test compile in "
                     f"{remote.url} (hits {counted.hits}, misses {counted.misses}, "
                     f"uncached {counted.uncacheable})",
                     fix=f"run `{tool.path} --show-stats` after a compile to see why, or "
                     f"correct {_SETTING}")


def _hip_row(probe: SharedCacheProbe) -> DoctorRow:
    row = _hip_verdict(probe)
    if not probe.cached_at:
        return row
    return DoctorRow(check=row.check, status=row.status, fix=row.fix,
                     detail=f"{row.detail} (test compile result cached {probe.cached_at}; "
                     "nothing it depends on changed since; --no-cache compiles afresh)")


def _hip_verdict(probe: SharedCacheProbe) -> DoctorRow:
    name = probe.tool.name
    trial = probe.hip_trial
    if not probe.started:
        return DoctorRow(check=HIP_CHECK, status="WARN",
                         detail=f"not proven: {name} did not start (see the config row)")
    if trial is None:
        return DoctorRow(check=HIP_CHECK, status="WARN",
                         detail="not proven: no HIP compiler or target is known to test with")
    if not trial.compiled:
        return DoctorRow(check=HIP_CHECK, status="WARN",
                         detail=f"not proven: the HIP test compile `{_short(trial)}` failed "
                         f"({trial.problem})")
    counted = trial.counters
    if counted.uncacheable or not counted.cacheable:
        why = ", ".join(counted.reasons) or "it was not counted as cacheable"
        return DoctorRow(check=HIP_CHECK, status="WARN",
                         detail=f"host code only: {name} does not cache `{_short(trial)}` "
                         f"({why}); every HIP file compiles uncached on every machine")
    if not probe.hip_launcher:
        return DoctorRow(check=HIP_CHECK, status="WARN",
                         detail=f"host code only: {name} caches `{_short(trial)}`, but hipcc "
                         "of this ROCm does not pass its device compiles through "
                         "HIP_CLANG_LAUNCHER (config/build.toml [cache] names the first ROCm "
                         "that does), so PyTorch's HIP kernels compile uncached",
                         fix="a ROCm release at or above config/build.toml's "
                         "hip_launcher_min_rocm caches device code too")
    return DoctorRow(check=HIP_CHECK, status="OK",
                     detail=f"{name} caches `{_short(trial)}` and hipcc passes its device "
                     "compiles through HIP_CLANG_LAUNCHER")


def _short(trial: TrialCompile) -> str:
    argv = list(trial.argv)
    return " ".join([argv[0].rsplit("/", 1)[-1], *argv[1:4]]) if argv else "?"
