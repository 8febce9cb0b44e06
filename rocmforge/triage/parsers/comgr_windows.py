"""A kernel compiled at run time by comgr on Windows that finds no C++ standard header.

Owns: the Windows reading of compiler_headers' `std-header-missing` (the Linux line keeps
the host-compiler reading there). Must not: read files, run programs or pick between
findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import Reading, Rule

# comgr's run-time compile folder (<temp>\comgr-<pid>-<n>-<id>\) under a Windows drive letter.
_WINDOWS_RUNTIME_COMPILE = re.compile(r"\b[A-Za-z]:\\\S*\\comgr-[\w-]+\\")

# Windows has no host libstdc++ for comgr to fall back on, and TheRock builds its Windows
# amd-llvm without libc++ (WIN32: LLVM_ENABLE_LIBCXX OFF, runtimes compiler-rt only).
WINDOWS_SOURCE = ("ROCm/TheRock@89553ce3746eda74ade42557470d25e37c91b6f0:"
                  "compiler/pre_hook_amd-llvm.cmake; ROCm/legacy-rocm-build#6314")


def windows_runtime_header(header: str, text: str) -> Reading | None:
    """The reading for a run-time compile's missing standard header under a Windows temp
    folder, or None where the line is not one."""
    if _WINDOWS_RUNTIME_COMPILE.search(text) is None:
        return None
    return Reading(
        subject=header, klass="rocm-install",
        cause=f"a kernel compiled at run time (comgr, on Windows) found no C++ standard "
              f"header '{header}': Windows has no host libstdc++ for comgr to use, and the "
              "ROCm install gives its run-time compiler none of its own (TheRock's Windows "
              "amd-llvm is built without libc++)",
        fix="use a ROCm/PyTorch build whose run-time kernels need no C++ standard header, or "
            "one whose ROCm install ships the headers to the run-time compiler (report it to "
            "the ROCm build you use); installing a compiler on the host does not help")


RULES: tuple[Rule, ...] = ()  # read through compiler_headers' std-header-missing
