"""A build or run that took the CUDA path instead of ROCm: torch not compiled with a GPU
backend, CUDA's toolkit, NCCL or driver asked for, HIP_PLATFORM=nvcc, ATen's HIP parts missing.

Owns: the parsers (rules) for these messages; each reads its values out of the line and
declines where the line alone does not prove the cause. Must not: read files, run programs
or pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _not_compiled(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="USE_ROCM", cause="this torch was built without GPU support (the "
                   "configure ran with USE_ROCM off, or a CPU wheel from PyPI is installed)",
                   fix="rebuild with ROCm found (`invoke build --arch <gfx>`; its configure "
                   "check stops a CPU-only build), and install the wheel from the kit's dist/ "
                   "(`invoke install`)")


def _cuda_path(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="USE_ROCM", cause="the configure took the CUDA path (it looked for "
                   "the CUDA toolkit or nvcc) instead of ROCm: HIP_PLATFORM is nvidia/nvcc, or "
                   "ROCm was not found so the project fell back to CUDA",
                   fix="set HIP_PLATFORM=amd (and for PyTorch USE_ROCM=1 USE_CUDA=0), point "
                   "ROCM_PATH and HIP_PATH at the ROCm install and CXX at its hipcc or clang++, "
                   "then configure from a clean build folder")


def _hip_platform_nvcc(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="USE_ROCM", cause="HIP is set up for the NVIDIA platform "
                   "(HIP_PLATFORM nvcc/nvidia): hipcc and hipconfig look for nvcc and CUDA, not "
                   "the ROCm compiler", fix="export HIP_PLATFORM=amd (the kit sets it for its "
                   "steps), install ROCm's HIP SDK for AMD GPUs, and check with `hipconfig "
                   "--platform` (it must say amd)")


def _cuda_path_with_rocm_torch(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="USE_ROCM", cause="the package's setup took its CUDA path (it looked for nvcc "
        "/ CUDA_HOME) although the torch installed is a ROCm build: this release of the package "
        "has no ROCm build, or its ROCm path was not selected",
        fix="use a release (or fork) of the package with ROCm support and build it against the "
            "ROCm torch without build isolation (`pip install --no-build-isolation .`), with "
            "ROCM_HOME (or ROCM_PATH) set and hipcc on PATH so torch's cpp_extension finds "
            "ROCm; for flash-attention its ROCm backend (CK or Triton)")


def _cuda_nccl(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="USE_ROCM", cause="PyTorch's configure took the CUDA path (a CUDA toolkit on "
        "the machine turned USE_CUDA on) and looked for NCCL, CUDA's collective library: a "
        "ROCm build asks for RCCL instead (cmake/External/rccl.cmake)",
        fix="turn CUDA off for the ROCm build (USE_CUDA=0, as the kit does) and configure "
            "again from a clean build folder")


def _no_nvidia_driver(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="USE_ROCM",
        cause="the imported torch is a CUDA build (it looks for an NVIDIA driver): a torch "
              "without ROCm support was installed, e.g. pulled from PyPI by another package's "
              "requirements",
        fix="install a ROCm build of torch (from PyTorch's ROCm index, --index-url "
            "https://download.pytorch.org/whl/rocmX.Y, or the kit's wheel) and check "
            "`python -c 'import torch; print(torch.version.hip)'` prints a version")


def _aten_hip_missing(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="USE_ROCM",
        cause="the torch that ran was built without ROCm (no ATen_hip library): its configure "
              "did not find ROCm, or it was built for the CPU or for CUDA",
        fix="rebuild with ROCm found at configure (USE_ROCM=1, ROCM_PATH set; `invoke build "
            "--rocm-path /opt/rocm-X.Y`, whose verify step checks torch.version.hip), or "
            "install a ROCm build of torch")


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
    Rule(id="not-compiled-with-gpu", klass="rocm-disabled",
         triggers=("not compiled with",),
         pattern=rx(r"Torch not compiled with (?:CUDA|ROCm|HIP) enabled"),
         read=_not_compiled, steps=("verify", "install", "build", "collect"),
         source="torch/cuda/__init__.py _lazy_init"),
    Rule(id="cuda-toolkit-path", klass="rocm-disabled",
         triggers=("CUDA_TOOLKIT_ROOT_DIR", "No CMAKE_CUDA_COMPILER could be found"),
         pattern=rx(r"^Specify CUDA_TOOLKIT_ROOT_DIR|No CMAKE_CUDA_COMPILER could be found"),
         read=_cuda_path,
         source="CMake FindCUDA / enable_language(CUDA); ROCm/rocRAND#5, ROCm/hipCUB#128"),
    Rule(id="hip-platform-nvcc", klass="rocm-disabled",
         triggers=("HIP_PLATFORM", "nvcc"),
         pattern=rx(r"^HIP_PLATFORM\s*:\s*(?:nvcc|nvidia)\b|Can't exec \"nvcc\""),
         read=_hip_platform_nvcc, source="hipconfig output; ROCm/HIP#338"),
    Rule(id="cuda-path-with-rocm-torch", klass="rocm-disabled",
         triggers=("nvcc was not found", "CUDA_HOME environment variable is not set"),
         pattern=rx(r"nvcc was not found|CUDA_HOME environment variable is not set"),
         requires=rx(r"\+rocm\d"),
         read=_cuda_path_with_rocm_torch, source="Dao-AILab/flash-attention#205; "
         "torch.utils.cpp_extension's CUDA_HOME check"),
    Rule(id="cuda-nccl", klass="rocm-disabled",
         triggers=("Could NOT find NCCL",),
         pattern=rx(r"Could NOT find NCCL\b"),
         requires=rx(r"External/nccl\.cmake"),
         read=_cuda_nccl, source="pytorch/pytorch:cmake/Dependencies.cmake (External/nccl.cmake "
         "only under USE_CUDA, rccl.cmake under USE_ROCM; stored copy, commit not pinned); "
         "ROCm/TheRock#1503"),
    Rule(id="cuda-torch-no-driver", klass="rocm-disabled",
         triggers=("Found no NVIDIA driver on your system",),
         pattern=rx(r"Found no NVIDIA driver on your system"),
         read=_no_nvidia_driver, source="pytorch/pytorch c10/cuda/CUDAFunctions.cpp "
         "(TORCH_CHECK \"Found no NVIDIA driver on your system\"; commit not read)"),
    Rule(id="aten-hip-missing", klass="rocm-disabled",
         triggers=("ATen_hip",),
         pattern=rx(r"(?i)cannot initialize HIP without (?:the )?ATen_hip library"),
         read=_aten_hip_missing, source="pytorch/pytorch aten/src/ATen/detail/"
         "HIPHooksInterface.h (\"Cannot initialize HIP without ATen_hip library.\"; commit "
         "not read)"),
    Rule(id="hipified-tree-without-use-rocm", klass="rocm-disabled",
         triggers=("torch::jit::cuda",),
         pattern=rx(r"[\u2018']?(?P<member>\w+)[\u2019']? is not a member of "
                     r"[\u2018']?torch::jit::cuda[\u2019']?"
                     r"|no member named '(?P<member2>\w+)' in namespace 'torch::jit::cuda'"),
         read=_hipified_without_rocm, source="pytorch/pytorch@611e9b9:torch/csrc/jit/ir/ir.cpp "
         "(the cuda:: cases under #if !defined(USE_ROCM)); pytorch/pytorch#115725, #108344, "
         "#145670"),
)
