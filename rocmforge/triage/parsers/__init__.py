"""The parsers: one module per message family, each with its `RULES`.

Owns: the order in which the families are tried (`PARSERS`). Must not: hold a rule itself
(a new parser goes into the module of its family) or exact messages (config/diagnostics.toml).
"""

from __future__ import annotations

from rocmforge.triage.parsers import (
    aotriton,
    build_backend,
    build_dependency,
    cmake_package,
    cmake_tool,
    compiler_crash,
    compiler_dialect,
    compiler_headers,
    composable_kernel,
    disk,
    extension_abi,
    extension_setup,
    gpu_target,
    hipcc,
    hipify,
    host_compiler,
    libstdcxx,
    link,
    link_coff,
    link_shared,
    loader,
    math_library,
    memory,
    pip_install,
    pip_usage,
    rocm_disabled,
    rocm_driver,
    rocm_install,
    rocm_probe,
    rocm_python,
    rocm_sdk,
    tensile,
    triton,
    windows_loader,
)
from rocmforge.triage.rule import Rule

__all__ = ["PARSERS"]

# Order matters only between two rules of one tier that read the same line: the first wins.
PARSERS: tuple[Rule, ...] = (
    *disk.RULES,
    *memory.RULES,
    *cmake_package.RULES,
    *build_dependency.RULES,
    *compiler_headers.RULES,
    *host_compiler.RULES,
    *compiler_dialect.RULES,
    *triton.RULES,
    *link_shared.RULES,
    *link.RULES,
    *link_coff.RULES,
    *loader.RULES,
    *windows_loader.RULES,
    *libstdcxx.RULES,
    *gpu_target.RULES,
    *tensile.RULES,
    *math_library.RULES,
    *build_backend.RULES,
    *extension_abi.RULES,
    *extension_setup.RULES,
    *rocm_sdk.RULES,
    *pip_usage.RULES,
    *pip_install.RULES,
    *cmake_tool.RULES,
    *aotriton.RULES,
    *composable_kernel.RULES,
    *compiler_crash.RULES,
    *hipify.RULES,
    *rocm_disabled.RULES,
    *rocm_install.RULES,
    *rocm_driver.RULES,
    *hipcc.RULES,
    *rocm_probe.RULES,

    *rocm_python.RULES,
)
