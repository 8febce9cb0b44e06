"""Shared compile-cache backends: config/cache.toml as typed data, and the `cache_remote` URL.

Owns: `CacheBackends` (which URL schemes ccache and sccache store in, the variables that carry a
URL to each, and the versions that brought them, each fact with its source in
config/cache.toml), the `cache` setting's choices (`CacheMode`), `RemoteCache` (one parsed
`cache_remote` URL) and `parse_remote()`, which refuses what no cache can use: an unknown
scheme, a URL without a host or bucket, a bad port, or a password (the build environment is
written into `plan --json` and the manifest beside the wheel). Pure: no network, no subprocess.
Must not: decide which cache is in use or probe its version (plan.cache_env and probes.cache
do).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

from rocmforge.errors import UsageError
from rocmforge.knowledge.toml_files import check_keys, config_dir, expect_type, read_toml

CACHE_FILE = "cache.toml"
# The `cache` setting: which compiler cache a build uses (auto: sccache, else ccache, else none;
# plan.environment.chosen_cache decides).
CacheMode = Literal["auto", "ccache", "sccache", "none"]
CACHE_MODES: tuple[CacheMode, ...] = get_args(CacheMode)
Scheme = Literal["redis", "rediss", "s3", "gs", "http", "https"]
SCHEMES: tuple[Scheme, ...] = ("redis", "rediss", "s3", "gs", "http", "https")
# Ports a URL without one means (Redis's default port; HTTP's and HTTPS's).
_DEFAULT_PORTS: Mapping[str, int] = {"redis": 6379, "rediss": 6379, "http": 80, "https": 443}
_EXAMPLES = ("redis://cache.example:6379, s3://bucket/prefix, gs://bucket/prefix or "
             "http://cache.example/ccache")

_CCACHE_KEYS = ("remote_since", "secondary_variable", "remote_variable",
                "remote_variable_since", "schemes", "base_dir_variable")
_SCCACHE_VARIABLES = ("redis_endpoint", "redis_username", "redis_password", "s3_bucket",
                      "s3_prefix", "gcs_bucket", "gcs_prefix", "gcs_rw_mode", "webdav_endpoint")


@dataclass(frozen=True, kw_only=True)
class CcacheFacts:
    """ccache's remote storage: since which version, under which variable, for which schemes."""

    remote_since: str
    secondary_variable: str
    remote_variable: str
    remote_variable_since: str
    schemes: tuple[str, ...]
    base_dir_variable: str


@dataclass(frozen=True, kw_only=True)
class SccacheFacts:
    """sccache's remote backends: the oldest version the kit drives, schemes, variable names."""

    min_version: str
    schemes: tuple[str, ...]
    variables: Mapping[str, str]


@dataclass(frozen=True, kw_only=True)
class CacheBackends:
    ccache: CcacheFacts
    sccache: SccacheFacts

    def schemes_of(self, cache: str) -> tuple[str, ...]:
        return self.ccache.schemes if cache == "ccache" else self.sccache.schemes


@dataclass(frozen=True, kw_only=True)
class RemoteCache:
    """One `cache_remote` URL, checked: no credentials in it, a host or bucket present."""

    url: str
    scheme: Scheme
    host: str  # the server, or the bucket for s3:// and gs://
    port: int  # 0 for buckets
    path: str  # the key prefix of a bucket (no leading "/"), the HTTP path, the Redis db path

    @property
    def is_bucket(self) -> bool:
        return self.scheme in ("s3", "gs")


@functools.lru_cache(maxsize=4)
def load_cache_backends(directory: str | None = None) -> CacheBackends:
    """config/cache.toml, checked key by key (a misspelled key is a ConfigError)."""
    path: Path = config_dir(directory) / CACHE_FILE
    data = read_toml(path)
    check_keys(data, where=CACHE_FILE, required=("ccache", "sccache"))
    ccache = expect_type(data["ccache"], dict, where=f"{CACHE_FILE} [ccache]")
    check_keys(ccache, where=f"{CACHE_FILE} [ccache]", required=_CCACHE_KEYS)
    sccache = expect_type(data["sccache"], dict, where=f"{CACHE_FILE} [sccache]")
    check_keys(sccache, where=f"{CACHE_FILE} [sccache]",
               required=("min_version", "schemes", "variables"))
    variables = expect_type(sccache["variables"], dict, where=f"{CACHE_FILE} [sccache.variables]")
    check_keys(variables, where=f"{CACHE_FILE} [sccache.variables]", required=_SCCACHE_VARIABLES)
    return CacheBackends(
        ccache=CcacheFacts(
            remote_since=_text(ccache, "remote_since"),
            secondary_variable=_text(ccache, "secondary_variable"),
            remote_variable=_text(ccache, "remote_variable"),
            remote_variable_since=_text(ccache, "remote_variable_since"),
            schemes=_schemes(ccache["schemes"], where=f"{CACHE_FILE} [ccache] schemes"),
            base_dir_variable=_text(ccache, "base_dir_variable"),
        ),
        sccache=SccacheFacts(
            min_version=_text(sccache, "min_version"),
            schemes=_schemes(sccache["schemes"], where=f"{CACHE_FILE} [sccache] schemes"),
            variables={str(k): _text(variables, k) for k in _SCCACHE_VARIABLES},
        ),
    )


def parse_remote(text: str, *, source: str = "cache_remote") -> RemoteCache:
    """Check a `cache_remote` URL; every refusal is a UsageError paragraph naming `source`."""
    raw = text.strip()
    parts = urlsplit(raw)
    scheme = parts.scheme.lower() if "://" in raw else ""
    if scheme not in SCHEMES:
        said = f"the scheme {scheme!r}" if scheme else "no scheme"
        raise UsageError(
            f"cache_remote {raw!r} (from {source}) has {said}, which no compiler cache the kit "
            "drives can store in",
            "ccache stores in redis:// and http://; sccache in redis://, rediss://, s3://, "
            "gs://, http:// and https:// (config/cache.toml)",
            f"give a URL such as {_EXAMPLES}, or leave cache_remote empty",
        )
    if parts.password is not None or parts.username:
        raise UsageError(
            f"cache_remote (from {source}) carries credentials in its URL",
            "the build environment is printed by `invoke plan --json` and `invoke env`, and "
            "written into the manifest beside the wheel, so a password there would leak",
            "remove them from the URL and give them to the cache itself: sccache reads "
            "SCCACHE_REDIS_USERNAME/SCCACHE_REDIS_PASSWORD (Redis), SCCACHE_WEBDAV_USERNAME/"
            "SCCACHE_WEBDAV_PASSWORD (HTTP) and the AWS/Google variables (S3/GCS) from the "
            "environment; for ccache, keep the URL with its password in ccache.conf "
            "(remote_storage) and leave cache_remote empty",
        )
    try:
        port = parts.port or 0
    except ValueError:
        raise UsageError(
            f"cache_remote {raw!r} (from {source}) has a port that is not a number from 0 to "
            "65535",
            "the cache would fail to connect on every compile",
            f"correct the port, e.g. {_EXAMPLES.split(',')[0]}",
        ) from None
    host = parts.hostname or ""
    if not host:
        what = "bucket" if scheme in ("s3", "gs") else "host"
        raise UsageError(
            f"cache_remote {raw!r} (from {source}) names no {what}",
            f"a {scheme}:// URL needs one to say where the shared cache lives",
            f"give a URL such as {_EXAMPLES}",
        )
    path = parts.path
    if scheme in ("s3", "gs"):
        path = path.strip("/")
    return RemoteCache(url=raw, scheme=scheme, host=host,  # type: ignore[arg-type]
                       port=port or _DEFAULT_PORTS.get(scheme, 0), path=path)


def _text(table: Mapping[str, Any], key: str) -> str:
    return str(expect_type(table[key], str, where=f"{CACHE_FILE} {key}")).strip()


def _schemes(value: Any, *, where: str) -> tuple[str, ...]:
    items = expect_type(value, list, where=where)
    unknown = [str(item) for item in items if item not in SCHEMES]
    if unknown:
        from rocmforge.errors import ConfigError

        raise ConfigError(
            f"{where} names {', '.join(unknown)}, which the kit does not know",
            f"the kit parses only {', '.join(SCHEMES)} URLs",
            f"remove them from {CACHE_FILE}, or teach rocmforge.knowledge.cache_backends",
        )
    return tuple(str(item) for item in items)
