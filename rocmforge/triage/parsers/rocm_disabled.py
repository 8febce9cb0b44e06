"""A build or run that took the CUDA path instead of ROCm: torch not compiled with a GPU
backend, CUDA's toolkit, NCCL or driver asked for, HIP_PLATFORM=nvcc, ATen's HIP parts missing;
and a torch built without one of its GPU parts (NCCL/RCCL, MAGMA, hipBLASLt), with
LoadHIP.cmake's stops where it finds no usable ROCm.

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


# LoadHIP's text as read; pytorch/pytorch's newest copy of the file is not stored here.
_LOADHIP = ("ChristophBellmann/rocm-7.11-pytorch-gfx103x@7dcb9879668f4770ae7da092b11507222df9f33f"
            ":cmake/public/LoadHIP.cmake (a fork's copy of PyTorch's file, ROCm 7.11 era); "
            "reproduced by make/devpt6.sh")

_ROCM_PATH_SET = re.compile(r"ROCM_PATH environment variable is set to (?P<path>.+?) but does\s+"
                            r"not\s+exist\.")


def _rocm_path_missing(match: re.Match[str], view: LineView) -> Reading | None:
    # The path is in the message's first lines, which CMake wraps (a path with blanks, a
    # Windows one, may span two): read it from the lines before this fixed last line.
    found = _ROCM_PATH_SET.search(" ".join(view.previous[-4:]))
    if found is None:
        return None
    path = found.group("path")
    return Reading(
        subject=path,
        cause=f"ROCM_PATH is set to {path}, which does not exist, and PyTorch's LoadHIP.cmake "
              "stops the configure for it (ROCM_PATH set means a ROCm build is meant)",
        fix="point ROCM_PATH at the ROCm root that is installed (the folder holding bin/, "
            "include/hip and lib/cmake, e.g. /opt/rocm), or unset ROCM_PATH to let LoadHIP "
            "take /opt/rocm; then configure again (`invoke build`)")


def _version_header_missing(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="hip_version.h",
        cause="PyTorch's LoadHIP.cmake found the hip package but neither "
              "rocm-core/rocm_version.h nor hip/hip_version.h in the include folders the "
              "found ROCm packages name (ROCM_INCLUDE_DIRS), so it cannot read the ROCm "
              "version: the ROCm install lacks its development headers (hip and rocm-core)",
        fix="install the ROCm development packages of that release (hip-dev and rocm-core, "
            "or TheRock's rocm[devel]) so include/hip/hip_version.h exists under the ROCm "
            "root, or point ROCM_PATH at a complete install; then configure again")


def _not_compiled_with(match: re.Match[str], view: LineView) -> Reading | None:
    lib = match.group("lib")
    # torch.backends.cuda takes "hipblaslt" as an alias of cuBLASLt: a ROCm user's call
    # names it, and the library a ROCm build lacks is then hipBLASLt.
    rocm = lib == "cuBLASLt" and any("hipblaslt" in line.lower() for line in view.previous)
    name = "hipBLASLt" if rocm else lib
    return Reading(
        subject=name.lower(),
        cause=f"this torch was built without {name}, so the preferred library cannot be set "
              f"to it: the configure did not find {name} (or its USE_ flag was off), or the "
              "torch is a CPU-only build",
        fix=f"leave the preferred library at its default (drop the preferred_"
            f"{'blas' if lib == 'cuBLASLt' else 'linalg'}_library call), or rebuild torch "
            f"with {name} installed where the configure looks (the ROCm root for ROCm's "
            "libraries, MAGMA_HOME for MAGMA)")


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
    Rule(id="loadhip-rocm-path-missing", klass="rocm-install",
         triggers=("Set a valid ROCM_PATH",),
         pattern=rx(r"^Set a valid ROCM_PATH or unset ROCM_PATH environment variable to fix"),
         read=_rocm_path_missing, source=_LOADHIP),
    Rule(id="loadhip-version-header-missing", klass="rocm-install",
         triggers=("Could not find hip/hip_version.h",),
         pattern=rx(r"^Could not find hip/hip_version\.h or rocm-core/rocm_version\.h in\b"),
         read=_version_header_missing, source=_LOADHIP),
    Rule(id="torch-preferred-library-not-compiled", klass="missing-component",
         triggers=("Cannot set preferred backend to",),
         pattern=rx(r"^RuntimeError: Cannot set preferred backend to (?P<lib>MAGMA|cuBLASLt) "
                    r"if PyTorch has not been compiled with (?P=lib)\."),
         read=_not_compiled_with, source="pytorch/pytorch aten/src/ATen/Context.cpp "
         "(setLinalgPreferredBackend / setBlasPreferredBackend TORCH_CHECKs; the text read in "
         "torch 2.13.0+cpu's libtorch_cpu.so, commit not established); torch/backends/cuda/"
         "__init__.py (\"hipblaslt\" an alias of Cublaslt); reproduced by make/devpt6.sh"),
)
