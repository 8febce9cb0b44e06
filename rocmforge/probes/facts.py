"""Probe aggregate: everything the planners and the doctor need to know about this machine.

Owns: calling each probe once with the same root/environment/runner and bundling the results in
one frozen `Facts`, plus adding the per-target compile probe once the targets are known. Must
not: judge anything (doctor.py does) or raise for a machine that merely lacks something; only bad
input (a --rocm-path or ROCM_PATH that is not ROCm) raises, as ProbeError.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rocmforge.knowledge.targets import TargetId
    from rocmforge.probes.cmake_prefix import PackageConfig
    from rocmforge.probes.sccache_start import SccacheStart

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from rocmforge.errors import ProbeError
from rocmforge.probes import Runner, run_command
from rocmforge.probes.compile_probe import TargetProbe, probe_install_targets
from rocmforge.probes.compilers import HostCompiler, default_compiler, find_host_compilers
from rocmforge.probes.gpus import GpuScan, find_gpus
from rocmforge.probes.hazards import Hazards, probe_hazards
from rocmforge.probes.library_code import LibraryCode
from rocmforge.probes.rocm import (
    RocmInstall,
    find_rocm_installs,
    path_variable_warnings,
    select_rocm,
)
from rocmforge.probes.system import SystemFacts, gather_system


@dataclass(frozen=True, kw_only=True)
class Facts:
    rocm_installs: tuple[RocmInstall, ...]
    rocm: RocmInstall | None  # the selected install; None when there is none
    rocm_problem: str  # why none is selected ("" when one is)
    path_warnings: tuple[str, ...]  # ROCM_PATH / HIP_PATH disagreements
    hipcc_owner: RocmInstall | None  # the install `hipcc` on PATH belongs to
    gpus: GpuScan
    system: SystemFacts
    environ_flags: Mapping[str, str]  # the build-relevant variables already set (CC, CXX, ...)
    # Host compilers on PATH, and the one the build would use (settings gcc/clang, else `c++`).
    compilers: tuple[HostCompiler, ...] = ()
    host_compiler: HostCompiler | None = None
    target_probes: tuple[TargetProbe, ...] = ()
    # Conditions known to break a build later (rocmforge.probes.hazards); None: not probed.
    hazards: Hazards | None = None
    # The targets each ROCm library PyTorch links has code for (probes.library_code); None: not
    # probed (only doctor and the build's preflight read the libraries).
    library_code: tuple[LibraryCode, ...] | None = None
    # sccache started with the SCCACHE_* storage the build inherits (probes.sccache_start);
    # None: not probed (no sccache in use, no storage variable, or the kit's cache_remote).
    sccache_start: SccacheStart | None = None
    # Each ROCm component's CMake config on CMAKE_PREFIX_PATH, configured with the real cmake
    # (probes.cmake_prefix); () when the variable is unset or names none.
    prefix_configs: tuple[PackageConfig, ...] = ()


# Variables from the caller's environment that change what a build does; doctor reports them.
REPORTED_VARIABLES = (
    "CC",
    "CXX",
    "HIP_PLATFORM",
    "PYTORCH_ROCM_ARCH",
    "MAX_JOBS",
    "ROCM_HOME",
    "HIP_CLANG_PATH",
    "USE_CUDA",
)


def _requested_rocm(settings, run: Runner) -> tuple[str, Path | None]:
    """The ROCm the settings ask for: with the rocm_sdk(_version) setting, the pip SDK in the venv
    once the rocm-sdk step installed it (its `rocm-sdk path --root`); else rocm_path."""
    if not (getattr(settings, "rocm_sdk", "") or getattr(settings, "rocm_sdk_version", "")):
        return settings.rocm_path, None
    from rocmforge.probes.rocm import SDK_CLI, read_sdk_cli
    from rocmforge.workdir import workdir_for

    cli = workdir_for(settings.work_dir).venv / "bin" / SDK_CLI
    if not cli.is_file():
        return settings.rocm_path, None
    root = read_sdk_cli(cli, run).root
    return (root or settings.rocm_path), cli


def gather_facts(
    settings,
    *,
    root: Path = Path("/"),
    environ: Mapping[str, str] = os.environ,
    run: Runner = run_command,
    python_paths: Sequence[str] | None = None,
    on_rocm: Callable[[RocmInstall], object] | None = None,
) -> Facts:
    """Probe the machine for `settings` (a rocmforge.settings.Settings). `on_rocm` is called
    with the selected install as soon as it is known, while the other probes still run (doctor
    starts its per-target compiles there)."""
    path_env = environ.get("PATH", "")
    # The probes mostly wait on subprocesses (hipcc is a slow Perl script, each compiler answers
    # `--version`): start the independent ones first, find ROCm meanwhile, then the GPU probe,
    # which needs the chosen install's tool directories.
    with ThreadPoolExecutor(max_workers=4) as pool:
        system = pool.submit(
            gather_system,
            work_dir=Path(settings.work_dir),
            root=root,
            environ=environ,
            python_paths=python_paths,
            run=run,
        )
        found = pool.submit(find_host_compilers, path_env)
        default = pool.submit(default_compiler, "c++", path_env)
        requested, sdk_cli = _requested_rocm(settings, run)
        installs = find_rocm_installs(
            root, environ, requested=requested, python_paths=python_paths, run=run,
            sdk_cli=sdk_cli,
        )
        try:
            rocm: RocmInstall | None = select_rocm(installs, requested, environ)
            problem = ""
        except ProbeError as exc:
            if settings.rocm_path or environ.get("ROCM_PATH") or installs:
                raise
            rocm, problem = None, exc.paragraph()
        tool_dirs: list[Path] = []
        if rocm is not None and on_rocm is not None:
            on_rocm(rocm)
        if rocm is not None:
            tool_dirs = [rocm.root / "bin", rocm.root / "lib/llvm/bin", rocm.root / "llvm/bin"]
        gpus = pool.submit(find_gpus, root=root, environ=environ, tool_dirs=tool_dirs, run=run)
        compilers = found.result()
    if settings.gcc or settings.clang:
        chosen = choose_host_compiler(compilers, gcc=settings.gcc, clang=settings.clang)
    else:
        chosen = default.result()
    from rocmforge.workdir import workdir_for

    work = workdir_for(settings.work_dir)
    hazards = probe_hazards(rocm_root=rocm.root if rocm else None, checkout=work.pytorch,
                            sources=work.src, venv=work.venv, environ=environ, root=root,
                            dist=work.dist, state=work.state, work_dir=work.root)
    system_facts = system.result()
    return Facts(
        rocm_installs=installs,
        rocm=rocm,
        rocm_problem=problem,
        path_warnings=path_variable_warnings(installs, environ),
        hipcc_owner=next((i for i in installs if i.hipcc_on_path), None),
        gpus=gpus.result(),
        system=system_facts,
        environ_flags={k: environ[k] for k in REPORTED_VARIABLES if k in environ},
        compilers=compilers,
        host_compiler=chosen,
        hazards=hazards,
        sccache_start=_sccache_start(settings, system_facts, environ),
        prefix_configs=_prefix_configs(system_facts, environ, work.pytorch),
    )


def _prefix_configs(system: SystemFacts, environ: Mapping[str, str], checkout: Path
                    ) -> tuple[PackageConfig, ...]:
    """The ROCm components' configs on CMAKE_PREFIX_PATH, configured (5 s in all), each with
    the version the checkout's LoadHIP.cmake asks for it, where it names one."""
    if not environ.get("CMAKE_PREFIX_PATH") or system.cmake.path is None:
        return ()
    from rocmforge.knowledge.components import load_components
    from rocmforge.probes.cmake_prefix import probe_prefix_path

    return probe_prefix_path(environ, [c.name for c in load_components()],
                             cmake=str(system.cmake.path), versions=_asked_versions(checkout))


def _asked_versions(checkout: Path) -> dict[str, tuple[str, str]]:
    """package -> (version, "cmake/public/LoadHIP.cmake:N") for each find_package call of the
    tree in the checkout folder (whoever put it there) that names a version and may load a
    config. The key is lower case: find_package(HIP 1.0) also loads hip-config.cmake."""
    from rocmforge.probes.tree import FOUND, LOADHIP, read_tree_facts

    if not (checkout / LOADHIP).is_file():
        return {}
    components = read_tree_facts(checkout).rocm_components
    if components.status != FOUND or components.value is None:
        return {}
    return {c.name.lower(): (c.version, f"{LOADHIP}:{c.line}") for c in components.value
            if c.version and not c.module}


def _sccache_start(settings, system: SystemFacts, environ: Mapping[str, str]
                   ) -> SccacheStart | None:
    """Start sccache with the inherited SCCACHE_* storage when the build would use sccache
    (cache auto or sccache, sccache on PATH) and the kit's cache_remote does not set it."""
    from rocmforge.probes.sccache_start import probe_sccache_start, storage_variables

    sccache = dict(getattr(system, "compiler_caches", {}) or {}).get("sccache")
    mode: str = getattr(settings, "cache", "auto")
    remote: str = getattr(settings, "cache_remote", "")
    if not sccache or mode not in ("auto", "sccache") or remote:
        return None
    if not storage_variables(environ):
        return None
    return probe_sccache_start(sccache, environ)


def choose_host_compiler(
    compilers: Sequence[HostCompiler], *, gcc: int = 0, clang: int = 0
) -> HostCompiler | None:
    """The compiler of the requested kind and major (gcc wins when both are given), or None."""
    kind, major = ("gcc", gcc) if gcc else ("clang", clang)
    return next(
        (c for c in compilers if c.kind == kind and c.major == major and c.cxx is not None), None
    )


def with_target_probes(
    facts: Facts,
    targets: Sequence[str] | Sequence[TargetId],
    *,
    environ: Mapping[str, str] = os.environ,
    run: Runner = run_command,
    use_cache: bool = False,
) -> Facts:
    """Facts plus the compile/device-library probe of each target with the selected ROCm.
    `use_cache`: verdicts may come from the probe store (doctor); the build never asks."""
    if facts.rocm is None or not targets:
        return facts
    probes = probe_install_targets(facts.rocm, [str(t) for t in targets], environ=environ,
                                   run=run, use_cache=use_cache)
    return dataclasses.replace(facts, target_probes=probes,
                               library_code=library_code_of(facts.rocm.root, environ=environ))


def library_code_of(root: Path, *, environ: Mapping[str, str] = os.environ
                    ) -> tuple[LibraryCode, ...]:
    """The ROCm libraries' targets (kept in the probe store, keyed on their files: the build's
    preflight may use the kept answer too, since the files decide it, not a compiler)."""
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.probes.library_code import probe_library_code

    return probe_library_code(root, known=frozenset(load_arch_table().names()), environ=environ)
