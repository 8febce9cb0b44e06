"""Extension builds that find no GPU build of torch: an extension's build script reads the CUDA
or HIP setup from the torch it builds against (CUDA_HOME, find_package(Torch)'s CUDA_FOUND and
HIP_FOUND) and stops when that torch has neither.

Owns: the rules for those stops, read from the extensions' sources (NVIDIA's apex, vLLM) and
reproduced by tests/failures/make/devext6.sh. Must not: hold the printed torch version's own
reading (rocm_disabled.py) or the CUDA-path signature of a ROCm torch (config/diagnostics.toml,
cuda-path-with-rocm-torch).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

APEX_SETUP = "NVIDIA/apex@6424da3b4faa6c8f062da4a48c424fff3f02d42d:setup.py"
VLLM_CMAKE = ("vllm-project/vllm@000a1ee93b2ddc3cb06c62a71fe769c789cbf7b1:CMakeLists.txt; "
              "ROCm/vllm@f8c9a385233a8e1f724411785a1c326006640df5:CMakeLists.txt")

_FOUND_TORCH = re.compile(r"Found Torch: (?P<lib>\S+)")


def _nvcc_from_none(match: re.Match[str], view: LineView) -> Reading | None:
    # The frame just above must be the one that joins a CUDA root with bin/nvcc.
    if not any("/bin/nvcc" in line and "+" in line for line in view.previous[-3:]):
        return None
    return Reading(
        subject="USE_ROCM",
        cause="NVIDIA's apex setup.py builds the path of nvcc from torch's CUDA_HOME, and "
              "CUDA_HOME is None: the torch it builds against is a CPU or ROCm build (its "
              "torch.__version__ above), which has no CUDA toolkit to point at, and NVIDIA's "
              "apex builds its extensions with nvcc only (it has no HIP path)",
        fix="for an AMD GPU build ROCm's fork of apex (https://github.com/ROCm/apex) against a "
            "ROCm torch: install the ROCm torch first (`python -c 'import torch; "
            "print(torch.version.hip)'` must print a version), then `pip install -v "
            "--no-build-isolation .` in the fork's tree")


def _vllm_no_gpu_torch(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block != "error":
        return None
    found = next((m for m in map(_FOUND_TORCH.search, reversed(view.previous)) if m), None)
    which = f" ({found.group('lib')})" if found else ""
    return Reading(
        subject="USE_ROCM",
        cause=f"the project's CMakeLists (vLLM's, or one copied from it) picks CUDA or HIP from "
              f"what find_package(Torch) set up, and the torch it found{which} set up neither, "
              "with no HIP lookup of its own in the log (a ROCm torch's config prints one): it "
              "is a torch without ROCm support (a CPU-only wheel, as pip brings from PyPI)",
        fix="install the ROCm torch into the Python the build uses and build without "
            "isolation so pip does not bring another torch (`VLLM_TARGET_DEVICE=rocm pip "
            "install --no-build-isolation -v .`); check `python -c 'import torch; "
            "print(torch.version.hip)'` prints a version and ROCM_PATH names the ROCm root")


def _cuda_arch_is_gfx(match: re.Match[str], view: LineView) -> Reading | None:
    arch = match.group("arch")
    return Reading(
        subject="USE_ROCM",
        cause=f"torch.utils.cpp_extension took its CUDA path and was given the AMD target "
              f"{arch}: a ROCm torch builds HIP extensions and never reads "
              "TORCH_CUDA_ARCH_LIST, so the torch this build imports is not a ROCm build (a "
              "CUDA or CPU-only wheel, as pip brings from PyPI or build isolation installs)",
        fix=f"install the ROCm torch into the Python the build uses and build without "
            f"isolation (`pip install --no-build-isolation -v .`); give the target as "
            f"PYTORCH_ROCM_ARCH={arch} (TORCH_CUDA_ARCH_LIST is for NVIDIA targets); `python "
            "-c 'import torch; print(torch.version.hip)'` must print a version")


RULES: tuple[Rule, ...] = (
    # The log must show a torch without CUDA: with a CUDA torch the same line is a missing CUDA
    # toolkit, a CUDA build's failure that this kit does not explain.
    Rule(id="apex-nvcc-path-from-none", klass="rocm-disabled",
         triggers=("unsupported operand type(s) for +: 'NoneType' and 'str'",),
         pattern=rx(r"^TypeError: unsupported operand type\(s\) for \+: 'NoneType' and 'str'"),
         requires=rx(r"torch\.__version__\W{0,4}\d+\.\d+\S*\+(?:cpu|rocm)"),
         read=_nvcc_from_none,
         source=f"{APEX_SETUP} (get_cuda_bare_metal_version(CUDA_HOME): "
                "`cuda_dir + \"/bin/nvcc\"`, called at the top level for every build)"),
    Rule(id="vllm-no-cuda-or-hip", klass="rocm-disabled",
         triggers=("Can't find CUDA or HIP installation",),
         pattern=rx(r"^Can't find CUDA or HIP installation\."),
         # A ROCm torch's config that looked for HIP and failed (HIP VERSION 0.0.0, an
         # unsuitable HIP): the lines do not prove why (r2's vllm6762 negative).
         unless=rx(r"Could NOT find HIP\b|HIP VERSION:|Found HIP\b|hip-config\.cmake|"
                   r"LoadHIP\.cmake"),
         read=_vllm_no_gpu_torch,
         source=f"{VLLM_CMAKE} (the VLLM_GPU_LANG choice after find_package(Torch): "
                "message(FATAL_ERROR \"Can't find CUDA or HIP installation.\"))"),
    # A ROCm torch never reaches this check (its HIP path reads PYTORCH_ROCM_ARCH); an NVIDIA
    # target name here is a CUDA build's own problem and claims nothing.
    Rule(id="cpp-extension-cuda-arch-gfx", klass="rocm-disabled",
         triggers=("Unknown CUDA arch (gfx",),
         pattern=rx(r"Unknown CUDA arch \((?P<arch>gfx[0-9a-f]{3,4}[\w:+-]*)\) or GPU not "
                    r"supported"),
         read=_cuda_arch_is_gfx,
         source="torch 2.13.0 as installed here: torch/utils/cpp_extension.py "
                "_get_cuda_arch_flags (`raise ValueError(f\"Unknown CUDA arch ({arch}) or GPU "
                "not supported\")` for a TORCH_CUDA_ARCH_LIST entry it does not know); "
                "reproduced: make/numpy_make_hipcc.sh"),
)
