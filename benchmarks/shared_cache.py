"""Benchmark: what a shared compile cache (Redis) gives a second machine.

Generates a compile set (C++ translation units that include heavy standard headers, and HIP
kernels compiled by clang-22 for two GPU targets) and compiles it, with as many parallel jobs as
there are cores, three ways:

  no cache   compiled directly, no launcher: what every machine pays without a cache
  cold       machine 1 through the cache, empty Redis: misses, plus the cost of storing
  shared     machine 2 (another work dir, another empty local cache), the same Redis: hits

Each machine's environment comes from the kit (`resolve_build_inputs`, as `invoke env`/`build`
use), pointed at a redis-server this script starts on a free port. Hit rates are the cache's own
statistics. Needs redis-server, clang-22, and ccache and/or sccache.

    python3 benchmarks/shared_cache.py [--cache ccache|sccache|both] [--cxx 24] [--hip 8]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from cachehelpers import running_redis  # noqa: E402

from rocmforge.plan.gather import resolve_build_inputs  # noqa: E402
from rocmforge.probes.cache import CacheCounters, CacheSession, probe_cache_tool  # noqa: E402
from rocmforge.settings import defaults_from_config, resolve  # noqa: E402

HIP_ARCHS = ("gfx1100", "gfx942")
CXX_UNIT = """\
#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace unit{n} {{
template <typename T> std::string describe(const std::vector<T>& values) {{
  std::map<T, int> counts;
  for (const T& v : values) ++counts[v];
  std::ostringstream out;
  for (const auto& [k, c] : counts) out << k << ':' << c << ';';
  return out.str();
}}
}}  // namespace unit{n}

int rf_unit{n}(const char* text) {{
  std::regex words("[a-z]+{n}");
  std::vector<long> lengths;
  std::string s(text);
  for (std::sregex_iterator it(s.begin(), s.end(), words), end; it != end; ++it)
    lengths.push_back(static_cast<long>(it->length()) + {n});
  std::sort(lengths.begin(), lengths.end());
  return static_cast<int>(unit{n}::describe(lengths).size());
}}
"""
HIP_UNIT = """\
struct dim3 {{ unsigned x, y, z; }};
typedef struct ihipStream_t* hipStream_t;
extern "C" int hipLaunchKernel(const void*, dim3, dim3, void**, __SIZE_TYPE__, hipStream_t);

template <int N> __attribute__((device)) float poly(float x) {{
  float acc = 0.0f;
#pragma unroll
  for (int i = 0; i < N; ++i) acc = acc * x + (i + {n});
  return acc;
}}

__attribute__((global)) void rf_kernel{n}(float* data, int n) {{
  int i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  if (i < n) data[i] = poly<{n} + 32>(data[i]);
}}
"""


def write_sources(src: Path, cxx: int, hip: int) -> None:
    src.mkdir(parents=True, exist_ok=True)
    for n in range(cxx):
        (src / f"unit{n}.cpp").write_text(CXX_UNIT.format(n=n))
    for n in range(hip):
        (src / f"kernel{n}.hip").write_text(HIP_UNIT.format(n=n))


def commands(src: Path, env: Mapping[str, str]) -> list[list[str]]:
    """Compile lines as a CMake build runs them: absolute source paths, objects in build/."""
    out: list[list[str]] = []
    for path in sorted(src.glob("*.cpp")):
        out.append([env["CXX"], "-O2", "-std=c++17", "-c", str(path), "-o", path.stem + ".o"])
    for path in sorted(src.glob("*.hip")):
        out.append(["clang-22", "-x", "hip", *[f"--offload-arch={a}" for a in HIP_ARCHS],
                    "-nogpulib", "-nogpuinc", "-O3", "-c", str(path), "-o", path.stem + ".o"])
    return out


def kit_env(cache: str, remote: str, work: Path) -> dict[str, str]:
    settings = resolve(defaults=defaults_from_config(), environ={},
                       flags={"arch": ";".join(HIP_ARCHS), "cache": cache,
                              "cache_remote": remote, "work_dir": str(work)})
    return dict(resolve_build_inputs(settings).env)


def run_all(argvs: Sequence[list[str]], compile_one: Callable[[list[str]], tuple[int, list[str]]],
            jobs: int) -> tuple[float, float]:
    """Wall seconds, and CPU seconds of the child processes this script waited for (the
    compilers under ccache or run directly; sccache compiles in its server, not counted)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for code, argv in pool.map(compile_one, argvs):
            if code != 0:
                raise SystemExit(f"compile failed ({code}): {' '.join(argv)}")
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def machine(root: Path, cxx: int, hip: int) -> tuple[Path, Path]:
    work = root / "work"
    write_sources(work / "src", cxx, hip)
    build = work / "build"
    build.mkdir(parents=True, exist_ok=True)
    return work, build


def no_cache(root: Path, env: Mapping[str, str], cxx: int, hip: int,
             jobs: int) -> tuple[float, float]:
    import subprocess

    work, build = machine(root, cxx, hip)

    def compile_one(argv: list[str]) -> tuple[int, list[str]]:
        return subprocess.run(argv, cwd=build, capture_output=True, check=False).returncode, argv

    return run_all(commands(work / "src", env), compile_one, jobs)


def cached(root: Path, env: Mapping[str, str], cxx: int, hip: int,
           jobs: int) -> tuple[tuple[float, float], CacheCounters]:
    work, build = machine(root, cxx, hip)
    launcher = env["CMAKE_CXX_COMPILER_LAUNCHER"]
    name = "sccache" if Path(launcher).name.startswith("sccache") else "ccache"
    tool = probe_cache_tool(name, launcher)  # type: ignore[arg-type]
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CCACHE_", "SCCACHE_"))}
    base.update({k: v for k, v in env.items() if k.startswith(("CCACHE_", "SCCACHE_"))})
    with CacheSession(tool, base, root / "local-cache", remote=True) as session:
        problem = session.start()
        if problem:
            raise SystemExit(f"{name} did not start: {problem}")

        def compile_one(argv: list[str]) -> tuple[int, list[str]]:
            return session.compile(argv, cwd=build).returncode, argv

        seconds = run_all(commands(work / "src", env), compile_one, jobs)
        return seconds, session.counters()


def bench(cache: str, tmp: Path, cxx: int, hip: int, jobs: int) -> None:
    with running_redis(tmp / f"redis-{cache}") as redis:
        plain = kit_env("none", "", tmp / "plain" / "work")
        base_s, base_cpu = no_cache(tmp / f"{cache}-plain", plain, cxx, hip, jobs)
        one = tmp / f"{cache}-machine-1"
        two = tmp / f"{cache}-machine-2"
        (cold_s, cold_cpu), cold = cached(one, kit_env(cache, redis.url, one / "work"), cxx,
                                          hip, jobs)
        (warm_s, warm_cpu), warm = cached(two, kit_env(cache, redis.url, two / "work"), cxx,
                                          hip, jobs)
    units = cxx + hip
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\n{cache} on Redis: {cxx} C++ + {hip} HIP units ({'+'.join(HIP_ARCHS)}), "
          f"{jobs} parallel jobs on {os.cpu_count()} cores (load average after: {load})")
    cpu_note = "" if cache == "ccache" else " (client only: sccache compiles in its server)"
    print(f"  no cache            {base_s:7.2f} s wall  {base_cpu:7.2f} s CPU")
    print(f"  cold (machine 1)    {cold_s:7.2f} s wall  {cold_cpu:7.2f} s CPU{cpu_note}   "
          f"hits {cold.hits}/{cold.cacheable}, remote errors {cold.remote_errors}")
    print(f"  shared (machine 2)  {warm_s:7.2f} s wall  {warm_cpu:7.2f} s CPU   "
          f"hits {warm.hits}/{warm.cacheable} ({warm.hit_rate:.0%}), from Redis "
          f"{warm.remote_hits}, uncached {warm.uncacheable}")
    print(f"  cold / no cache     {cold_s / base_s:7.2f}x wall"
          + (f", {cold_cpu / base_cpu:.2f}x CPU" if cache == "ccache" else "")
          + "  (the cost of storing)")
    print(f"  no cache / shared   {base_s / warm_s:7.1f}x wall  (what machine 2 gains)")
    farm = 8
    print(f"  {farm} machines, same ref (from these numbers): {cold_s + (farm - 1) * warm_s:.1f} s "
          f"of compiling instead of {farm * base_s:.1f} s")
    if warm.hits != units:
        raise SystemExit(f"machine 2 was not served everything from Redis ({warm})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", choices=("ccache", "sccache", "both"), default="both")
    parser.add_argument("--cxx", type=int, default=24, help="C++ translation units")
    parser.add_argument("--hip", type=int, default=8, help="HIP translation units")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    for tool in ("redis-server", "clang-22"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed")
    caches = ("ccache", "sccache") if args.cache == "both" else (args.cache,)
    with tempfile.TemporaryDirectory(prefix="rocmforge-bench-cache-") as tmp:
        for cache in caches:
            if shutil.which(cache) is None:
                print(f"{cache}: not installed, skipped")
                continue
            bench(cache, Path(tmp), args.cxx, args.hip, args.jobs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
