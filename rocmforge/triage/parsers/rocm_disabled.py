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



def _torch_without_hip(match: re.Match[str], view: LineView) -> Reading | None:
    version, label = match.group("ver"), match.group("label")
    build = "a CPU-only build" if label == "cpu" else f"the CUDA {label[2:]} build"
    # A CUDA wheel on an AMD host is the wrong wheel (python-packaging/torch, as the corpus
    # labels every CUDA-wheel case); a CPU-only torch has no GPU backend at all.
    wheel = label != "cpu"
    return Reading(
        subject="torch" if wheel else "USE_ROCM",
        klass="python-packaging" if wheel else "",
        cause=f"the installed torch is {version}, {build} (torch.version.hip is None): it has "
              "no HIP backend, so it cannot use the AMD GPU; pip took torch from an index "
              "without ROCm wheels (PyPI or a CUDA index)",
        fix="install the ROCm build of torch (a +rocm wheel) from the ROCm index of your ROCm "
            "release (`pip install torch --index-url https://download.pytorch.org/whl/"
            "rocmX.Y`, or TheRock's index for your GPU family), or the wheel `invoke build` "
            "made; check `python -c 'import torch; print(torch.version.hip)'` names a HIP "
            "version")


def _no_nccl_backend(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="USE_NCCL",
        cause="this torch was built without the NCCL backend, which a ROCm torch serves "
              "with RCCL under the name \"nccl\": a CPU-only torch, a Windows torch, or a "
              "source build configured with USE_DISTRIBUTED or USE_NCCL off (or that did not "
              "find RCCL)",
        fix="on Linux use a ROCm torch with RCCL (the kit's build keeps USE_NCCL on; "
            "`python -c 'import torch.distributed as d; print(d.is_nccl_available())'` must "
            "print True); where there is no RCCL (Windows, a CPU torch) pass "
            "backend=\"gloo\" to init_process_group")


RULES: tuple[Rule, ...] = (
    Rule(id="hipified-tree-without-use-rocm", klass="rocm-disabled",
         triggers=("torch::jit::cuda",),
         pattern=rx(r"[\u2018']?(?P<member>\w+)[\u2019']? is not a member of "
                     r"[\u2018']?torch::jit::cuda[\u2019']?"
                     r"|no member named '(?P<member2>\w+)' in namespace 'torch::jit::cuda'"),
         read=_hipified_without_rocm, source="pytorch/pytorch@611e9b9:torch/csrc/jit/ir/ir.cpp "
         "(the cuda:: cases under #if !defined(USE_ROCM)); pytorch/pytorch#115725, #108344, "
         "#145670"),
    Rule(id="torch-build-without-hip", klass="rocm-disabled",
         triggers=("+cu", "+cpu"),
         pattern=rx(r"(?:torch\.__version__|torch version|PyTorch version)\W{0,4}"
                    r"(?P<ver>\d+\.\d+\.\d+[\w.]*\+(?P<label>cu\d{2,3}|cpu))\b"),
         requires=rx(r"torch\.version\.hip\W{0,4}None\b"),
         read=_torch_without_hip, source="torch's generated torch/version.py (the wheel's "
         "local label +cuNNN/+cpu/+rocmX.Y in __version__, `hip: Optional[str] = None` "
         "unless a ROCm build; read in the torch 2.13.0+cpu installed here); "
         "invoke-ai/InvokeAI#7977"),
    Rule(id="torch-distributed-no-nccl", klass="rocm-disabled",
         triggers=("have NCCL built in", "no attribute '_nccl_"),
         pattern=rx(r"^RuntimeError: Distributed package doesn't have NCCL built in"
                    r"|^AttributeError: module 'torch\._C' has no attribute '_nccl_\w+'"),
         # A CUDA torch without NCCL (Windows, macOS) prints it too: not a ROCm question.
         unless=rx(r"\+cu\d{2,3}\b|\bnvcc\b|libcudart|\bCUDA_HOME\b"),
         read=_no_nccl_backend, source="torch 2.13.0+cpu as installed here: "
         "torch/distributed/distributed_c10d.py (_new_process_group_helper raises this "
         "RuntimeError when is_nccl_available() is False) and torch/cuda/nccl.py (version() "
         "calls torch._C._nccl_version); same path in pytorch/pytorch "
         "(commit not established); reproduced by make/devpt6.sh"),
)
