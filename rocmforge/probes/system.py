"""Probe: the machine around the compiler — cores, memory, disk, build tools, Python, devices.

Owns: reading cores (CPU affinity), memory (`/proc/meminfo`, capped by a cgroup v2 limit), free
disk where the work dir will live, `cmake`/`ninja` versions, the Python interpreter and whether
it is an isolated env (venv/conda), a CUDA `triton` distribution that would shadow
`pytorch-triton-rocm`, `/dev/kfd` and render-group access, and `/etc/os-release`.
Must not: write anything or judge the values (that is `rocmforge.plan.doctor`). Roots, PATH and the
Python search path are parameters so tests can point them at temp dirs.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rocmforge.knowledge.triton import TRITON_PROVIDERS, canonical_name
from rocmforge.probes import Runner, run_command
from rocmforge.versions import dotted_version

GIB = 1024**3


@dataclass(frozen=True, kw_only=True)
class ToolVersion:
    """An executable found on PATH and the version it printed ("" when it could not be read)."""

    path: Path | None
    version: str


@dataclass(frozen=True, kw_only=True)
class PythonEnv:
    """The interpreter the kit runs under and whether it is isolated from the system site."""

    executable: str
    version: str  # "3.11.7"
    in_venv: bool
    in_conda: bool

    @property
    def isolated(self) -> bool:
        return self.in_venv or self.in_conda


@dataclass(frozen=True, kw_only=True)
class TritonDist:
    """An installed distribution that provides the `triton` module."""

    name: str  # one of knowledge.triton.TRITON_PROVIDERS ("triton" is the CUDA build from PyPI)
    version: str
    location: str


@dataclass(frozen=True, kw_only=True)
class DeviceAccess:
    """Whether this user can open the GPU devices a ROCm process needs."""

    kfd_present: bool
    kfd_rw: bool
    render_group_exists: bool
    in_render_group: bool
    is_root: bool


@dataclass(frozen=True, kw_only=True)
class SystemFacts:
    cores: int
    mem_total_gib: float
    mem_available_gib: float
    work_dir: Path
    disk_checked_at: Path  # the work dir or its nearest existing parent
    disk_free_gib: float
    cmake: ToolVersion
    ninja: ToolVersion
    python: PythonEnv
    triton: tuple[TritonDist, ...]
    devices: DeviceAccess
    os_release: Mapping[str, str]
    # Compiler caches on PATH: name ("ccache", "sccache") -> path; read by the cache setting.
    compiler_caches: Mapping[str, str] = field(default_factory=dict)


# --- pure parsers ---------------------------------------------------------------------------


def parse_meminfo(text: str) -> tuple[float, float]:
    """(MemTotal, MemAvailable) in GiB from /proc/meminfo ("MemTotal:  24683568 kB")."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        fields = rest.split()
        if fields and fields[0].isdigit():
            values[key.strip()] = int(fields[0]) * (1024 if fields[1:2] == ["kB"] else 1)
    total = values.get("MemTotal", 0) / GIB
    available = values.get("MemAvailable", values.get("MemFree", 0)) / GIB
    return total, available


def parse_os_release(text: str) -> dict[str, str]:
    """KEY=value lines, values optionally quoted."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key and not key.startswith("#"):
            out[key] = value.strip().strip('"').strip("'")
    return out


def parse_tool_version(text: str) -> str:
    """First dotted version in `cmake --version` ("cmake version 3.25.1") or `ninja --version`."""
    return dotted_version(text)


# --- probes ---------------------------------------------------------------------------------


def memory_gib(root: Path = Path("/")) -> tuple[float, float]:
    """Total and available memory, each capped by the cgroup v2 `memory.max` when one is set
    (a container's limit is what the compiler jobs really get)."""
    try:
        total, available = parse_meminfo((root / "proc/meminfo").read_text())
    except OSError:
        total, available = 0.0, 0.0
    try:
        limit = (root / "sys/fs/cgroup/memory.max").read_text().strip()
    except OSError:
        limit = "max"
    if limit.isdigit():
        cap = int(limit) / GIB
        total, available = (
            min(total, cap) if total else cap,
            min(available, cap) if available else cap,
        )
    return total, available


def cpu_cores() -> int:
    """Cores this process may run on (affinity respects taskset/cpuset, os.cpu_count does not)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def free_disk(work_dir: Path) -> tuple[Path, float]:
    """Free GiB on the filesystem the work dir is (or will be) on."""
    probe = work_dir.absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        return probe, shutil.disk_usage(probe).free / GIB
    except OSError:
        return probe, 0.0


def compiler_caches(
    path_env: str, environ: Mapping[str, str] = os.environ, run: Runner = run_command
) -> dict[str, str]:
    """ccache and sccache as found on PATH (name -> path); a pyenv shim is replaced by the
    program it runs, so the build does not start pyenv for every compile. pyenv's answer is
    kept across runs with what it rests on (probes.shims), unless the probe store is off or
    the runner is a fake."""
    from rocmforge.probes.probe_store import enabled
    from rocmforge.probes.shims import resolve_shim

    keep = run is run_command and enabled(environ)
    found = {name: shutil.which(name, path=path_env) for name in ("ccache", "sccache")}
    return {name: resolve_shim(path, environ, run, keep=keep)
            for name, path in found.items() if path}


def tool_version(name: str, path_env: str, run: Runner = run_command) -> ToolVersion:
    found = shutil.which(name, path=path_env)
    if found is None:
        return ToolVersion(path=None, version="")
    if run is not run_command:  # a fake runner: ask it, nothing is kept
        answer = run([found, "--version"], timeout=20.0).stdout
        return ToolVersion(path=Path(found), version=parse_tool_version(answer))
    # What `cmake --version` answers depends on its file only: asked once per tool identity, in
    # this process and across runs (rocmforge.probes.tool_cache).
    from rocmforge.probes.tool_cache import cached_output

    text = cached_output(Path(found), ("--version",),
                         lambda: run([found, "--version"], timeout=20.0).stdout)
    return ToolVersion(path=Path(found), version=parse_tool_version(text or ""))


def python_env(environ: Mapping[str, str]) -> PythonEnv:
    in_conda = bool(environ.get("CONDA_PREFIX")) and Path(sys.prefix) == Path(
        environ.get("CONDA_PREFIX", "")
    )
    return PythonEnv(
        executable=sys.executable,
        version=".".join(str(x) for x in sys.version_info[:3]),
        in_venv=sys.prefix != sys.base_prefix,
        in_conda=in_conda or (Path(sys.prefix) / "conda-meta").is_dir(),
    )


def triton_distributions(paths: Sequence[str] | None = None) -> tuple[TritonDist, ...]:
    """Installed distributions that ship the `triton` module: the CUDA `triton` from PyPI and the
    ROCm `pytorch-triton-rocm` both install it, so whichever comes first on sys.path wins."""
    from importlib import metadata

    found = []
    seen = set()
    # Asked by name, one path entry at a time (sys.path order decides which comes first): a
    # name-filtered search matches folder names only, where reading every distribution's
    # METADATA for its name took ~90 ms of each `invoke plan`.
    candidates = (dist for entry in (list(paths) if paths is not None else sys.path)
                  for provider in TRITON_PROVIDERS
                  for dist in metadata.distributions(name=provider, path=[entry]))
    for dist in candidates:
        name = canonical_name(dist.name or "")
        if name in TRITON_PROVIDERS and name not in seen:
            seen.add(name)
            location = str(getattr(dist, "_path", "") or "")
            found.append(TritonDist(name=name, version=dist.version or "", location=location))
    return tuple(found)


def device_access(root: Path = Path("/")) -> DeviceAccess:
    """ROCm processes open /dev/kfd and /dev/dri/renderD*; distros grant that to `render`."""
    import grp

    kfd = root / "dev/kfd"
    try:
        render = grp.getgrnam("render")
        render_exists = True
        in_render = render.gr_gid in os.getgroups() or render.gr_gid == os.getegid()
    except KeyError:
        render_exists, in_render = False, False
    return DeviceAccess(
        kfd_present=kfd.exists(),
        kfd_rw=kfd.exists() and os.access(kfd, os.R_OK | os.W_OK),
        render_group_exists=render_exists,
        in_render_group=in_render,
        is_root=os.geteuid() == 0,
    )


def gather_system(
    *,
    work_dir: Path,
    root: Path = Path("/"),
    environ: Mapping[str, str] = os.environ,
    python_paths: Sequence[str] | None = None,
    run: Runner = run_command,
) -> SystemFacts:
    from concurrent.futures import ThreadPoolExecutor

    path_env = environ.get("PATH", "")
    # The programs asked (the compiler caches, through a pyenv shim the slowest) answer side
    # by side while the files are read here.
    with ThreadPoolExecutor(max_workers=3) as pool:
        caches = pool.submit(compiler_caches, path_env, environ, run)
        cmake = pool.submit(tool_version, "cmake", path_env, run)
        ninja = pool.submit(tool_version, "ninja", path_env, run)
        total, available = memory_gib(root)
        checked, free = free_disk(work_dir)
        try:
            os_release = parse_os_release((root / "etc/os-release").read_text())
        except OSError:
            os_release = {}
        return SystemFacts(
            cores=cpu_cores(),
            mem_total_gib=total,
            mem_available_gib=available,
            work_dir=work_dir,
            disk_checked_at=checked,
            disk_free_gib=free,
            cmake=cmake.result(),
            ninja=ninja.result(),
            python=python_env(environ),
            triton=triton_distributions(python_paths),
            devices=device_access(root),
            os_release=os_release,
            compiler_caches=caches.result(),
        )
