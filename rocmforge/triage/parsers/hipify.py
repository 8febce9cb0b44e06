"""hipify: the step that fails, its module missing, runaway recursion, and CUDA types
that hipified sources still name.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _hipify_fail(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject=match.group("file"), cause="hipify could not rewrite a CUDA source "
                   "for HIP", fix="run hipify on a clean checkout (`invoke checkout` restores "
                   "it; sources hipified by another PyTorch release confuse it), then rerun")


def _hipified_unknown_type(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("file").replace("\\", "/")
    source = path.rsplit("/", 1)[-1]
    name = match.group("type")
    if match.group("folder") and (not name.lower().startswith("cu") or
                                  "/include/hip/" in path):
        return None  # a hip* name, or ROCm's own include/hip headers: not a hipify leftover
    if re.search(r"(?:^|/)(?:caffe2|aten/src|torch/csrc|c10)/", path):
        return Reading(
            subject=source,
            cause=f"PyTorch's own hipified source {source} uses {name}, a CUDA name its hipify "
                  "does not map: this PyTorch revision's CUDA source has no ROCm path for it",
            fix="build a PyTorch revision whose source keeps a ROCm path there (the fix is "
                "upstream, or carry it as a patch), then hipify a clean checkout again")
    how = ("hipify left this CUDA name as it was (this torch's hipify has no mapping for it)"
           if name.lower().startswith("cu") else "the HIP headers do not declare it")
    return Reading(
        subject=source, cause=f"the hipified source {source} uses {name}: {how}; torch's "
        "hipify maps CUDA names differently in this release (PyTorch 2.1 moved cuBLAS from "
        "rocBLAS to hipBLAS names) than the sources were written for",
        fix="build the extension release (or branch) written for this PyTorch's hipify "
            "mapping (e.g. ROCm/apex's branch for torch >= 2.1), or a PyTorch the sources "
            "match")


RULES: tuple[Rule, ...] = (
    Rule(id="hipify-failed", klass="hipify",
         triggers=("hipify",),
         pattern=rx(r"(?i)hipify\S*: (?:error|fatal)[^:]*: "
                     r".*?(?P<file>[\w./-]+\.(?:cu|cuh|h|cpp))"),
         read=_hipify_fail, source="hipify-perl / hipify-clang"),
    Rule(id="hipified-unknown-type", klass="hipify",
         triggers=("unknown type name '", "use of undeclared identifier '"),
         pattern=rx(r"(?P<file>[\w./\\+-]+_hip\.(?:hip|cpp|cu|h)|[\w./\\+-]+\.hip"
                     r"|(?P<folder>[\w./\\+-]*[/\\]hip[/\\])[\w.+-]+\.(?:h|hpp|cuh|cpp))"
                     r"(?::\d+)+:"
                     r" error: "
                     r"(?:unknown type name|use of undeclared identifier) "
                     r"'(?P<type>(?:hip|cu|CU)\w+)'"),
         read=_hipified_unknown_type, source="torch/utils/hipify/hipify_python.py "
         "get_hip_file_path (torch 2.13 as installed here: a directory component named cuda "
         "becomes hip, c10/cuda -> c10/hip), so a CUDA name undeclared in a hip/ folder's "
         "file is one hipify left; pytorch/pytorch#63280; ROCm/apex#115 (hipblasOperation_t after "
         "PyTorch 2.1's hipify change); pytorch/pytorch#97640 (a CUDA name hipify does not "
         "map, left in caffe2's math_gpu.hip)"),
)
