"""hipify: the step that fails, its module missing, runaway recursion, and CUDA types
that hipified sources still name.

Owns: the parsers (rules) for these messages; each reads its values out of the line and
declines where the line alone does not prove the cause. Must not: read files, run programs
or pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _hipify_fail(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject=match.group("file"), cause="hipify could not rewrite a CUDA source "
                   "for HIP", fix="run hipify on a clean checkout (`invoke checkout` restores "
                   "it; sources hipified by another PyTorch release confuse it), then rerun")


def _hipify_module(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="torch.utils.hipify", cause="the installed torch has no "
                   "torch.utils.hipify (it predates it, or is not a full torch): the "
                   "extension's setup.py cannot hipify its CUDA sources for ROCm",
                   fix="install a ROCm torch that ships torch.utils.hipify (any 2.x release; "
                   "the kit's `invoke install`), then build the extension against it with "
                   "--no-build-isolation")


def _hipify_recursion(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="hipify_python.py", cause="hipify (torch/utils/hipify/"
                   "hipify_python.py) hit Python's recursion limit following headers that "
                   "include each other", fix="use a PyTorch whose hipify walks includes "
                   "without recursion (pytorch/pytorch#104085, in 2.1 and later) to hipify "
                   "the sources, or raise the limit for an old one "
                   "(sys.setrecursionlimit in the build script)")


def _hipified_unknown_type(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("file").replace("\\", "/")
    source = path.rsplit("/", 1)[-1]
    name = match.group("type")
    if re.search(r"/(?:caffe2|aten/src|torch/csrc)/", path):
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
    Rule(id="hipify-module-missing", klass="hipify",
         triggers=("torch.utils.hipify",),
         pattern=rx(r"No module named '?torch\.utils\.hipify"),
         read=_hipify_module, source="deepspeedai/DeepSpeed#323"),
    Rule(id="hipify-recursion", klass="hipify",
         triggers=("RecursionError",),
         pattern=rx(r"^RecursionError: maximum recursion depth exceeded"),
         requires=rx(r"hipify/hipify_python\.py"),
         read=_hipify_recursion, source="pytorch/pytorch#93827, fixed by #104085"),
    Rule(id="hipified-unknown-type", klass="hipify",
         triggers=("unknown type name '", "use of undeclared identifier '"),
         pattern=rx(r"(?P<file>[\w./\\+-]+_hip\.(?:hip|cpp|cu|h)|[\w./\\+-]+\.hip)(?::\d+)+:"
                     r" error: "
                     r"(?:unknown type name|use of undeclared identifier) "
                     r"'(?P<type>(?:hip|cu|CU)\w+)'"),
         read=_hipified_unknown_type, source="ROCm/apex#115 (hipblasOperation_t after "
         "PyTorch 2.1's hipify change); pytorch/pytorch#97640 (a CUDA name hipify does not "
         "map, left in caffe2's math_gpu.hip)"),
)
