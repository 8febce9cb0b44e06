"""Doctor's compiler-cache rows: a real Redis PING (and AUTH), a real HTTP HEAD, the cache's own
trial compiles, and the verdicts with their fixes. Real parts: redis-server, pytest-httpserver,
ccache/sccache, clang-22. The pure judge is also fed TrialCompile records for the one case no
real tool here produces (a cache that refuses `-x hip`)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from cachehelpers import running_redis
from pytest_httpserver import HTTPServer

from rocmforge.knowledge.cache_backends import parse_remote
from rocmforge.plan.cache_rows import shared_cache_rows
from rocmforge.plan.gather import cache_doctor_rows, doctor_facts, resolve_build_inputs
from rocmforge.probes.cache import (
    CacheCounters,
    CacheTool,
    SharedCacheProbe,
    TrialCompile,
    check_backend,
    free_port,
    ping_redis,
    probe_shared_cache,
    resp_command,
)
from rocmforge.settings import Settings, defaults_from_config, resolve

redis_needed = pytest.mark.needs_tool("redis-server")


def settings_for(cache: str, remote: str, work: Path) -> Settings:
    return resolve(defaults=defaults_from_config(), environ={},
                   flags={"arch": "gfx1100", "cache": cache, "cache_remote": remote,
                          "work_dir": str(work)})


def test_resp_is_redis_wire_format() -> None:
    assert resp_command("PING") == b"*1\r\n$4\r\nPING\r\n"
    assert resp_command("AUTH", "u", "pässword") == \
        b"*3\r\n$4\r\nAUTH\r\n$1\r\nu\r\n$9\r\np\xc3\xa4ssword\r\n"


# --- the backend -----------------------------------------------------------------------------


@redis_needed
def test_a_real_redis_answers_ping(tmp_path: Path) -> None:
    with running_redis(tmp_path) as redis:
        check = ping_redis(parse_remote(redis.url))
    assert check.state == "ok"
    assert check.detail.startswith(f"Redis at 127.0.0.1:{redis.port} answered PING in ")


@redis_needed
def test_a_password_protected_redis(tmp_path: Path) -> None:
    with running_redis(tmp_path, "--requirepass", "s3cret") as redis:
        remote = parse_remote(redis.url)
        without = ping_redis(remote)
        wrong = ping_redis(remote, password="nope")
        right = ping_redis(remote, password="s3cret")
        as_user = ping_redis(remote, username="default", password="s3cret")
    assert (without.state, wrong.state, right.state, as_user.state) == ("auth", "auth", "ok", "ok")
    assert without.detail == (f"Redis at 127.0.0.1:{redis.port} wants credentials: NOAUTH "
                              "Authentication required.")
    assert wrong.detail.startswith(f"Redis at 127.0.0.1:{redis.port} refused the credentials: "
                                   "-WRONGPASS")


def test_nothing_listening_is_a_failure() -> None:
    port = free_port()
    check = ping_redis(parse_remote(f"redis://127.0.0.1:{port}"), timeout_s=2)
    assert check.state == "fail"
    assert check.detail == f"cannot connect to 127.0.0.1:{port}: Connection refused"


def test_a_server_that_never_answers_times_out() -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        port = silent.getsockname()[1]
        check = ping_redis(parse_remote(f"redis://127.0.0.1:{port}"), timeout_s=0.3)
    assert (check.state, check.detail) == ("fail",
                                           f"no answer from 127.0.0.1:{port} within 0.3 s")


def test_an_http_server_is_not_a_redis(httpserver: HTTPServer) -> None:
    check = ping_redis(parse_remote(f"redis://127.0.0.1:{httpserver.port}"), timeout_s=3)
    assert check.state == "fail"
    # Werkzeug answers the RESP bytes with an HTML "400 Bad request syntax" page.
    assert check.detail.startswith(f"127.0.0.1:{httpserver.port} is not a Redis server: it "
                                   "answered PING with '<!DOCTYPE HTML>")


@pytest.mark.parametrize(("status", "state"), [(200, "ok"), (404, "ok"), (401, "auth"),
                                               (403, "auth"), (503, "fail")])
def test_http_head(httpserver: HTTPServer, status: int, state: str) -> None:
    httpserver.expect_request("/ccache", method="HEAD").respond_with_data("", status=status)
    url = httpserver.url_for("/ccache")
    check = check_backend(parse_remote(url))
    assert check.state == state
    assert check.detail.startswith(f"HEAD {url}: HTTP {status}")


def test_http_nothing_listening() -> None:
    url = f"http://127.0.0.1:{free_port()}/ccache"
    check = check_backend(parse_remote(url), timeout_s=2)
    assert (check.state, check.detail) == ("fail", f"HEAD {url} failed: [Errno 111] Connection "
                                                   "refused")


def test_buckets_are_left_to_the_cache() -> None:
    check = check_backend(parse_remote("s3://bkt/prefix"))
    assert check.state == "unchecked"


# --- the rows, from real probes --------------------------------------------------------------


@redis_needed
@pytest.mark.needs_tool("clang-22", "clang-offload-bundler-22")
@pytest.mark.parametrize("cache", [
    pytest.param("ccache", marks=pytest.mark.needs_tool("ccache")),
    pytest.param("sccache", marks=pytest.mark.needs_tool("sccache")),
])
def test_rows_for_a_working_shared_cache(cache: str, tmp_path: Path) -> None:
    with running_redis(tmp_path / "redis") as redis:
        settings = settings_for(cache, redis.url, tmp_path / "work")
        env = dict(resolve_build_inputs(settings).env)
        remote = parse_remote(redis.url)
        host_only = probe_shared_cache(env, remote=remote, hip_compiler="clang-22",
                                       hip_target="gfx1100", environ=os.environ)
        # What plan.environment exports from ROCm 7.13 on (test_buildenv.py covers that
        # decision): hipcc's device compiles then go through the cache too.
        launcher = {**env, "HIP_CLANG_LAUNCHER": env["CMAKE_CXX_COMPILER_LAUNCHER"]}
        device_too = probe_shared_cache(launcher, remote=remote, hip_compiler="clang-22",
                                        hip_target="gfx1100", environ=os.environ)
    assert host_only is not None and device_too is not None
    backend, config, hip = shared_cache_rows(host_only)
    assert (backend.check, backend.status) == ("shared cache backend", "OK")
    assert (config.check, config.status) == ("shared cache config", "OK")
    assert config.detail.endswith(f"a test compile was stored in {redis.url}")
    assert (hip.check, hip.status) == ("cache covers HIP", "WARN")
    assert hip.detail.startswith(f"host code only: {cache} caches `clang-22 -x hip "
                                 "--offload-arch=gfx1100`, but hipcc of this ROCm does not pass")
    # The second probe found the first one's entry in Redis (fresh local cache, same source).
    _, config2, hip2 = shared_cache_rows(device_too)
    assert config2.detail.endswith(f"a test compile was served from {redis.url}")
    assert (hip2.status, hip2.detail) == ("OK", f"{cache} caches `clang-22 -x hip "
                                          "--offload-arch=gfx1100` and hipcc passes its device "
                                          "compiles through HIP_CLANG_LAUNCHER")


@redis_needed
@pytest.mark.needs_tool("ccache")
def test_doctor_reports_an_unreachable_backend_with_its_fix(tmp_path: Path) -> None:
    port = free_port()
    settings = settings_for("ccache", f"redis://127.0.0.1:{port}", tmp_path / "work")
    found = doctor_facts(settings, os.environ)
    facts, targets = found.facts, found.targets
    rows = {row.check: row for row in cache_doctor_rows(settings, facts, targets,
                                                         environ=os.environ)}
    backend = rows["shared cache backend"]
    assert (backend.status, backend.detail) == (
        "FAIL", f"cannot connect to 127.0.0.1:{port}: Connection refused")
    assert backend.fix == (f"start Redis there (`redis-server --port {port}`), let this machine "
                           f"reach 127.0.0.1:{port} (firewall, bind address), or correct "
                           "cache_remote (ROCMFORGE_CACHE_REMOTE, invoke.yaml "
                           "rocm.cache_remote)")
    config = rows["shared cache config"]
    assert config.status == "FAIL"
    assert "met 1 error(s) or timeout(s)" in config.detail
    assert "falls back to compiling locally" in config.detail


@pytest.mark.needs_tool("sccache")
def test_doctor_reports_sccache_refusing_an_unreachable_backend(tmp_path: Path) -> None:
    port = free_port()
    settings = settings_for("sccache", f"redis://127.0.0.1:{port}", tmp_path / "work")
    found = doctor_facts(settings, os.environ)
    facts, targets = found.facts, found.targets
    rows = cache_doctor_rows(settings, facts, targets, environ=os.environ)
    assert [(r.check, r.status) for r in rows] == [("shared cache backend", "FAIL"),
                                                   ("shared cache config", "FAIL"),
                                                   ("cache covers HIP", "WARN")]
    assert rows[1].detail.startswith("sccache ")
    assert "refused the configuration (SCCACHE_REDIS_ENDPOINT=redis://127.0.0.1:" in \
        rows[1].detail
    assert rows[2].detail == "not proven: sccache did not start (see the config row)"


@pytest.mark.needs_tool("ccache")
def test_doctor_turns_a_refused_setting_into_a_row(tmp_path: Path) -> None:
    settings = settings_for("ccache", "gs://bkt", tmp_path / "work")
    found = doctor_facts(settings, os.environ)
    facts, targets = found.facts, found.targets
    rows = cache_doctor_rows(settings, facts, targets, environ=os.environ)
    assert [(r.check, r.status) for r in rows] == [("shared cache config", "FAIL")]
    assert rows[0].detail == ("ccache cannot store its cache in gs:// (gs://bkt) ccache has "
                              "built-in backends for redis://, http:// only (config/cache.toml)")
    assert rows[0].fix.startswith("use sccache instead")


def test_no_cache_no_rows(tmp_path: Path) -> None:
    settings = settings_for("none", "", tmp_path / "work")
    found = doctor_facts(settings, os.environ)
    facts, targets = found.facts, found.targets
    assert cache_doctor_rows(settings, facts, targets, environ=os.environ) == ()


# --- the judge on records --------------------------------------------------------------------


def test_a_cache_that_refuses_hip_is_host_code_only() -> None:
    """ccache counts `-x hip` under unsupported_source_language where it does not know HIP."""
    tool = CacheTool(name="ccache", path="/usr/bin/ccache", version="4.1")
    refused = TrialCompile(language="hip", argv=("/opt/rocm/llvm/bin/clang++", "-x", "hip",
                                                 "--offload-arch=gfx942", "-c", "k.hip"),
                           compiled=True,
                           counters=CacheCounters(uncacheable=1,
                                                  reasons=("unsupported_source_language",)))
    probe = SharedCacheProbe(tool=tool, remote=None, variables=(), hip_trial=refused,
                             hip_launcher=True)
    (row,) = shared_cache_rows(probe)
    assert (row.status, row.detail) == (
        "WARN", "host code only: ccache does not cache `clang++ -x hip --offload-arch=gfx942` "
        "(unsupported_source_language); every HIP file compiles uncached on every machine")
