"""A build or run that took the CUDA path instead of ROCm: torch not compiled with a GPU
backend, CUDA's toolkit, NCCL or driver asked for, HIP_PLATFORM=nvcc, ATen's HIP parts missing.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _hipified_without_rocm(match: re.Match[str], view: LineView) -> Reading | None:
    member = match.group("member") or match.group("member2")
    return Reading(
        subject="USE_ROCM",
        cause=f"torch_cpu compiled the hipified sources with USE_ROCM undefined: ir.cpp names "
              f"cuda::{member} only under #if !defined(USE_ROCM), and hipify renamed those "
              "symbols, so the configure did not enable ROCm (it did not find the ROCm "
              "install, e.g. no /opt/rocm or ROCM_PATH) while the tree was hipified",
        fix="make the configure find ROCm (ROCM_PATH / the /opt/rocm link; `invoke doctor`) "
            "and rebuild from a clean build folder with USE_ROCM=1 (check USE_ROCM in "
            "build/CMakeCache.txt), or restore the CUDA sources before a non-ROCm build")


RULES: tuple[Rule, ...] = (
    Rule(id="hipified-tree-without-use-rocm", klass="rocm-disabled",
         triggers=("torch::jit::cuda",),
         pattern=rx(r"[\u2018']?(?P<member>\w+)[\u2019']? is not a member of "
                     r"[\u2018']?torch::jit::cuda[\u2019']?"
                     r"|no member named '(?P<member2>\w+)' in namespace 'torch::jit::cuda'"),
         read=_hipified_without_rocm, source="pytorch/pytorch@611e9b9:torch/csrc/jit/ir/ir.cpp "
         "(the cuda:: cases under #if !defined(USE_ROCM)); pytorch/pytorch#115725, #108344, "
         "#145670"),
)
