"""Probe: does sccache start its server with the storage variables the build inherits?

sccache reads its storage from SCCACHE_* variables (SCCACHE_REDIS, SCCACHE_BUCKET, ...) and
checks the storage before its server listens. A remote that does not answer makes every compile
wait, then stop with "Timed out waiting for server startup" (reproduced here: sccache 0.16.0
with SCCACHE_REDIS=redis://127.0.0.1:1; the server gives up after 30 s with "cache storage
failed to read"), which the build log shows without a known cause (mozilla/sccache#1751: the
check is on purpose). The kit's own cache_remote setting is probed by probes/cache.py; this
probe covers the variables a user or CI already exported.

Owns: starting `sccache` as a foreground server (SCCACHE_START_SERVER=1, SCCACHE_NO_DAEMON=1)
on a private port with the caller's SCCACHE_* variables, waiting at most `timeout` seconds for
it to listen or exit, and stopping it. Must not: judge (plan/hazard_rows.py does), talk to the
user's own sccache server (its port), or leave a process behind.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

# The variables that point sccache at a shared storage (sccache's docs/Configuration.md and
# the per-backend pages); any of them set makes the server check that storage at start.
STORAGE_VARIABLES = (
    "SCCACHE_REDIS", "SCCACHE_REDIS_ENDPOINT", "SCCACHE_REDIS_CLUSTER_ENDPOINTS",
    "SCCACHE_MEMCACHED", "SCCACHE_MEMCACHED_ENDPOINT", "SCCACHE_BUCKET", "SCCACHE_GCS_BUCKET",
    "SCCACHE_AZURE_CONNECTION_STRING", "SCCACHE_WEBDAV_ENDPOINT", "SCCACHE_GHA_ENABLED",
)
# The variables whose value is one server's URL, and the port a URL without one means.
URL_VARIABLES = ("SCCACHE_REDIS", "SCCACHE_REDIS_ENDPOINT", "SCCACHE_MEMCACHED",
                 "SCCACHE_MEMCACHED_ENDPOINT", "SCCACHE_WEBDAV_ENDPOINT")
DEFAULT_PORTS = {"redis": 6379, "rediss": 6379, "tcp": 11211, "memcached": 11211, "http": 80,
                 "https": 443}
START_TIMEOUT_S = 5.0
CONNECT_TIMEOUT_S = 2.0

StartState = Literal["listening", "exited", "no-answer", "not-run"]


@dataclass(frozen=True, kw_only=True)
class SccacheStart:
    sccache: str
    """The sccache that was started."""
    storage: tuple[tuple[str, str], ...]
    """The storage variables it was started with (credentials in URLs masked)."""
    state: StartState
    """listening: the storage answered; exited: sccache stopped with `message`; no-answer:
    neither within `waited` seconds; not-run: the program could not be started."""
    waited: float
    message: str = ""
    unreachable: tuple[str, ...] = ()
    """For a server that did not answer: each storage URL a TCP connect proved unreachable
    ('SCCACHE_REDIS 127.0.0.1:1: Connection refused')."""


def storage_variables(environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple((name, _masked(environ[name])) for name in STORAGE_VARIABLES
                 if environ.get(name))


def _masked(value: str) -> str:
    """redis://user:secret@host:6379 -> redis://***@host:6379 (the row shows the value)."""
    try:
        parts = urlsplit(value)
    except ValueError:
        return value
    if "@" not in parts.netloc:
        return value
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))


def unreachable_endpoints(environ: Mapping[str, str], *,
                          timeout: float = CONNECT_TIMEOUT_S) -> tuple[str, ...]:
    """The URL-valued storage variables whose host does not take a TCP connection: refused,
    no such host (a timeout proves nothing and is not listed)."""
    out = []
    for name in URL_VARIABLES:
        value = environ.get(name, "")
        if not value:
            continue
        try:
            parts = urlsplit(value if "://" in value else f"tcp://{value}")
            host, port = parts.hostname, parts.port or DEFAULT_PORTS.get(parts.scheme)
        except ValueError:
            continue
        if not host or not port:
            continue
        try:
            with socket.create_connection((host, port), timeout=timeout):
                pass
        except (ConnectionRefusedError, socket.gaierror) as exc:
            reason = exc.strerror if isinstance(exc, ConnectionRefusedError) else str(exc)
            out.append(f"{name} {host}:{port}: {reason}")
        except OSError:
            continue
    return tuple(out)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def probe_sccache_start(sccache: str, environ: Mapping[str, str], *,
                        timeout: float = START_TIMEOUT_S) -> SccacheStart:
    """Start `sccache` in the foreground on a free port with `environ`'s variables and report
    whether it listened, exited, or neither within `timeout` seconds; it is stopped after."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        # A TCP connect to each storage URL runs alongside: it proves "refused" or "no such
        # host" when the server only shows silence (both within the same `timeout`).
        connects = pool.submit(unreachable_endpoints, environ,
                               timeout=min(CONNECT_TIMEOUT_S, timeout))
        start = _start(sccache, environ, timeout)
        unreachable = connects.result()
    if start.state != "no-answer":
        return start
    return dataclasses.replace(start, unreachable=unreachable)


def _start(sccache: str, environ: Mapping[str, str], timeout: float) -> SccacheStart:
    storage = storage_variables(environ)
    port = _free_port()
    env = {k: v for k, v in environ.items() if k != "SCCACHE_SERVER_UDS"}
    env.update(SCCACHE_START_SERVER="1", SCCACHE_NO_DAEMON="1", SCCACHE_SERVER_PORT=str(port),
               SCCACHE_IDLE_TIMEOUT="0")
    started = time.monotonic()
    with tempfile.TemporaryFile() as errors:
        try:
            proc = subprocess.Popen([sccache], env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=errors,
                                    start_new_session=True)
        except OSError as exc:
            return SccacheStart(sccache=sccache, storage=storage, state="not-run", waited=0.0,
                                message=str(exc))
        state: StartState = "no-answer"
        try:
            while time.monotonic() - started < timeout:
                if proc.poll() is not None:
                    state = "exited"
                    break
                if _listening(port):
                    state = "listening"
                    break
                time.sleep(0.05)
        finally:
            _stop(proc)
        waited = time.monotonic() - started
        errors.seek(0)
        text = errors.read(8192).decode(errors="replace")
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if state == "exited" and not first:
        first = f"exit status {proc.returncode}"
    return SccacheStart(sccache=sccache, storage=storage, state=state, waited=waited,
                        message=first if state == "exited" else "")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop the server this probe started (its own session: nothing else is in the group)."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        proc.wait()
