"""AITER's JIT builds: the checks its build helpers make before they compile a kernel.

Owns: this family's rules. The compilers' own messages during those builds are the compiler
modules' (compiler_flags.py reads AITER's flag probe as no failure). Must not: read files, run
programs or pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

_GFX = re.compile(r"gfx[0-9a-f]{3,4}")


def _arch_not_allowed(match: re.Match[str], view: LineView) -> Reading | None:
    archs = _GFX.findall(match.group("archs"))
    if not archs:
        return None  # no target named: the list says nothing about which one was refused
    named = ", ".join(archs)
    return Reading(
        subject=archs[0],
        cause=f"AITER's JIT build refused the GPU target(s) {named}: before compiling a "
              "kernel it checks the targets (GPU_ARCHS, or the GPU found at run time) "
              "against the list of targets this AITER release supports, and "
              f"{named} is not on it",
        fix=f"use an AITER release whose JIT supports {archs[0]} (newer releases added "
            "targets to the list), or run the op on a supported GPU; setting GPU_ARCHS to "
            "another target does not make the kernels run on this one")


def _unknown_build_target(match: re.Match[str], view: LineView) -> Reading | None:
    gfx = match.group("gfx")
    return Reading(
        subject=gfx,
        cause=f"AITER resolves its kernels' build targets from GPU_ARCHS through its table of "
              f"known targets and their CU counts (GFX_CU_NUM_MAP, build_targets.py), and "
              f"{gfx} has no entry in this release's table, so the build stops before any "
              "kernel is generated",
        fix=f"use an AITER release whose GFX_CU_NUM_MAP lists {gfx} (or add {gfx} with its CU "
            "count there in a source build), or set GPU_ARCHS to a target the table lists; "
            "a build on the GPU itself without GPU_ARCHS detects the target instead")


RULES: tuple[Rule, ...] = (
    Rule(id="aiter-unknown-build-target", klass="gpu-target",
         triggers=("in GPU_ARCHS",),
         pattern=rx(r"Unknown gfx '(?P<gfx>gfx[0-9a-f]{3,4}[\w:+-]*)' in GPU_ARCHS"),
         read=_unknown_build_target,
         source="ROCm/aiter@e4048607a535ace3a2b51ded31b1c8c2d45c0879:aiter/jit/utils/"
         "build_targets.py get_build_targets_env() (`raise RuntimeError(f\"Unknown gfx "
         "'{gfx}' in GPU_ARCHS — add it to GFX_CU_NUM_MAP in build_targets.py. Known targets: "
         "...\")`); ROCm/aiter#4525"),
    Rule(id="aiter-arch-not-allowed", klass="gpu-target",
         triggers=("One of GPU archs of ",),
         pattern=rx(r"One of GPU archs of \[(?P<archs>[^\]]*)\] is invalid or not supported"),
         read=_arch_not_allowed,
         source="ROCm/aiter@b8e87b39d8200e4a190198d5e4b96a9f4b15938f:csrc/cpp_itfs/utils.py "
         "validate_and_update_archs() (`assert all(arch in allowed_archs ...), f\"One of GPU "
         "archs of {archs} is invalid or not supported\"`; the list differs between "
         "releases); ROCm/aiter#3919"),
)
