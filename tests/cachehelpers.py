"""Helpers for the shared-cache tests: a real redis-server on 127.0.0.1, and one "machine" that
compiles the small sources of tests/cache/ through the cache the kit's build environment names.

The server is Debian's redis-server, started on a free port with persistence off (`--save ''
--appendonly no`) in a temp dir and stopped after. A machine is a folder of its own (its work
dir with a copy of the sources, its build dir, its local cache dir); only the Redis server is
shared between machines.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rocmforge.probes.cache import CacheCounters, CacheSession, free_port, probe_cache_tool

SOURCES = Path(__file__).resolve().parent / "cache"
HIP_ARCH = "gfx1100"


@dataclass(frozen=True)
class RedisServer:
    port: int
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"


def redis_command(port: int, *words: str, timeout_s: float = 5.0) -> str:
    """One command over a plain socket; the first line of the reply."""
    from rocmforge.probes.cache import resp_command

    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as sock:
        sock.sendall(resp_command(*words))
        data = b""
        while b"\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    return data.split(b"\r\n", 1)[0].decode()


@contextmanager
def running_redis(folder: Path, *extra: str) -> Iterator[RedisServer]:
    """redis-server on 127.0.0.1 on a free port, no persistence, stopped afterwards."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", str(folder), *extra]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start: {argv}") from None
                time.sleep(0.05)
        yield RedisServer(port=port, process=process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@dataclass(frozen=True)
class MachineRun:
    counters: CacheCounters
    objects: Mapping[str, bytes]


def compile_units(root: Path, env: Mapping[str, str],
                  hip_compiler: str) -> list[tuple[str, list[str]]]:
    """The compile commands of tests/cache/ as CMake would run them: absolute paths, -I dir."""
    src = root / "src"
    include = f"-I{src}"
    return [
        ("add.o", [env["CC"], "-O1", include, "-c", str(src / "add.c"), "-o", "add.o"]),
        ("scale.o", [env["CXX"], "-O1", "-std=c++17", include, "-c", str(src / "scale.cpp"),
                     "-o", "scale.o"]),
        ("scale_hip.o", [hip_compiler, "-x", "hip", f"--offload-arch={HIP_ARCH}", "-nogpulib",
                         "-nogpuinc", "-O1", "-c", str(src / "scale.hip"), "-o",
                         "scale_hip.o"]),
    ]


def run_machine(machine: Path, env: Mapping[str, str], base_environ: Mapping[str, str], *,
                hip_compiler: str = "clang-22", remote: bool = True) -> MachineRun:
    """Copy the sources under `machine`'s work dir and compile them through the launcher `env`
    names, with `machine`'s own local cache; the cache's own statistics are returned."""
    work = machine / "work"
    src = work / "src"
    src.mkdir(parents=True, exist_ok=True)
    for item in SOURCES.iterdir():
        shutil.copy2(item, src / item.name)
    build = work / "build"
    build.mkdir(exist_ok=True)
    launcher = env["CMAKE_C_COMPILER_LAUNCHER"]
    name = "sccache" if Path(launcher).name.startswith("sccache") else "ccache"
    tool = probe_cache_tool(name, launcher)  # type: ignore[arg-type]
    merged = {k: v for k, v in base_environ.items() if not k.startswith(("CCACHE_", "SCCACHE_"))}
    merged.update({k: v for k, v in env.items() if k.startswith(("CCACHE_", "SCCACHE_"))})
    objects: dict[str, bytes] = {}
    with CacheSession(tool, merged, machine / "local-cache", remote=remote) as session:
        problem = session.start()
        assert not problem, problem
        for output, argv in compile_units(work, env, hip_compiler):
            done = session.compile(argv, cwd=build)
            assert done.returncode == 0, (argv, done.stderr)
            objects[output] = (build / output).read_bytes()
        counters = session.counters()
    return MachineRun(counters=counters, objects=objects)
