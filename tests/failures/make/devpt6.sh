#!/usr/bin/env bash
# d9 (devpt6): what the installed torch itself prints when a PyTorch build lacks a part a
# ROCm user expects, each made by the real torch 2.13.0+cpu wheel (a CPU-only build, no GPU
# backend and no NCCL/RCCL) and its hipify: init_process_group(backend="nccl"),
# torch.cuda.set_device, torch.cuda.Stream, torch.cuda.Event, torch.cuda.nccl.version,
# preferred_blas_library("hipblaslt") and preferred_linalg_library("magma"),
# hipify given a project folder that does not exist, hipify whose output file cannot be
# written (a link to /proc/version stands in for a file the user may not write), and (a
# negative) autocast("cuda") that only warns; then two FATAL_ERRORs of PyTorch's
# LoadHIP.cmake under the real cmake. A second or two each. Needs python3 with torch.
# Writes rounds/d9/cases/{real,neg}-torch-*.log and real-pytorch-loadhip-*.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d9/cases
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
# The torch cases need a torch with no GPU backend (2.13.0+cpu here); a CUDA or ROCm wheel
# prints other messages, so they are skipped there (the LoadHIP cases still run).
cpu=$(python3 -c 'import torch; print(torch.version.cuda is None and torch.version.hip is None)')
site=$(python3 -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')
# case <id> <python source>: the script run as train.py in a fresh folder, its output kept.
case_() {
  [ "$cpu" = True ] || { echo "skipped $1: torch has a GPU backend" >&2; return; }
  local id=$1; mkdir -p "$t/$id"; printf '%s\n' "$2" > "$t/$id/train.py"
  (cd "$t/$id" && timeout 60 python3 train.py 2>&1) \
    | sed -e "s#$t/$id#/home/user/proj#g" -e "s#$site#/usr/lib/python3/site-packages#g" \
    > "$cases/$id.log"
}
case_ real-torch-distributed-no-nccl-built-in 'import torch.distributed as dist
dist.init_process_group(backend="nccl", init_method="tcp://127.0.0.1:29511",
                        rank=0, world_size=1)'
case_ real-torch-c-no-cuda-set-device 'import torch
torch.cuda.set_device(0)'
case_ real-torch-cuda-stream-requires-cuda 'import torch
side = torch.cuda.Stream()'
case_ real-torch-cuda-event-dummy-class 'import torch
start = torch.cuda.Event(enable_timing=True)'
case_ real-torch-cuda-nccl-version-missing 'import torch
print("NCCL", torch.cuda.nccl.version())'
case_ real-torch-preferred-blas-hipblaslt-not-compiled 'import torch
torch.backends.cuda.preferred_blas_library("hipblaslt")'
case_ real-torch-preferred-linalg-magma-not-compiled 'import torch
torch.backends.cuda.preferred_linalg_library("magma")'
case_ real-torch-hipify-project-folder-missing 'from torch.utils.hipify import hipify_python
hipify_python.hipify(project_directory="/home/user/ext/csrc",
                     output_directory="/home/user/ext/csrc", is_pytorch_extension=True)'
case_ neg-torch-autocast-cuda-unavailable-warning 'import torch
with torch.autocast("cuda"):
    x = torch.ones(2) * 2
print("loss", float(x.sum()))'
# hipify of an extension whose k.hip cannot be written: hipify warns and keeps k.cu.
if [ "$cpu" = True ]; then
mkdir -p "$t/ext/csrc"
printf '%s\n' '#include <cuda_runtime.h>' '__global__ void k(float* x) { x[0] = 1; }' \
  > "$t/ext/csrc/k.cu"
ln -s /proc/version "$t/ext/csrc/k.hip"
(cd "$t/ext" && EXT="$t/ext" timeout 60 python3 -c 'import os
from torch.utils.hipify import hipify_python
ext = os.environ["EXT"]
hipify_python.hipify(project_directory=ext, output_directory=ext, show_progress=False,
                     includes=[ext + "/csrc/*"], is_pytorch_extension=True)' 2>&1) \
  | sed -e "s#$t/ext#/home/user/ext#g" > "$cases/real-torch-hipify-output-not-written.log"
fi
# PyTorch's LoadHIP.cmake checks, stood in by their lines (the fork named in the rules'
# source) under the real cmake: ROCM_PATH set to a folder that does not exist, and a ROCm
# root whose include folder has neither hip/hip_version.h nor rocm-core/rocm_version.h.
mkdir -p "$t/pt/cmake/public" "$t/rocm/include"
cat > "$t/pt/CMakeLists.txt" <<'X'
cmake_minimum_required(VERSION 3.18 FATAL_ERROR)
project(Torch CXX C)
set(USE_ROCM ON)
include(cmake/public/LoadHIP.cmake)
X
cat > "$t/pt/cmake/public/LoadHIP.cmake" <<'X'
set(PYTORCH_FOUND_HIP FALSE)
if(DEFINED ENV{ROCM_PATH})
  file(TO_CMAKE_PATH "$ENV{ROCM_PATH}" ROCM_PATH)
  if(NOT EXISTS ${ROCM_PATH})
    message(FATAL_ERROR
      "ROCM_PATH environment variable is set to ${ROCM_PATH} but does not exist.\n"
      "Set a valid ROCM_PATH or unset ROCM_PATH environment variable to fix.")
  endif()
endif()
set(ROCM_INCLUDE_DIRS ${ROCM_PATH}/include)
find_file(ROCM_VERSION_HEADER_PATH NAMES rocm-core/rocm_version.h hip/hip_version.h
  NO_DEFAULT_PATH PATHS ${ROCM_INCLUDE_DIRS})
if(NOT ROCM_VERSION_HEADER_PATH)
  message(FATAL_ERROR "Could not find hip/hip_version.h or rocm-core/rocm_version.h in ${ROCM_INCLUDE_DIRS}")
endif()
X
loadhip() {  # loadhip <id> <ROCM_PATH>
  rm -rf "$t/pt/build"
  (cd "$t/pt" && ROCM_PATH=$2 cmake -S . -B build 2>&1) \
    | sed -e "s#$t/pt#/home/user/pytorch#g" -e "s#$t/rocm#/opt/rocm-7.0.0#g" > "$cases/$1.log"
}
loadhip real-pytorch-loadhip-rocm-path-missing /opt/rocm-6.4.1
loadhip real-pytorch-loadhip-version-header-missing "$t/rocm"
# setup.py's submodule check (check_submodules, the same in PyTorch's and pytorch/ao's
# setup.py): ao's real setup.py at 36027d82, taken from a git copy of pytorch/ao
# (AO_GIT; skipped without one), run in a folder that is not a clone (its own `git submodule
# update` fails) and again with third_party/cutlass holding only a stray file.
AO_GIT=${AO_GIT:-/work/.mirror/pytorch+ao/repo}
if [ "$cpu" = True ] && git -C "$AO_GIT" cat-file -e 36027d82d1ad9949597ea16002ff4940374b1b94 2>/dev/null; then
  mkdir -p "$t/ao/third_party/cutlass"
  git -C "$AO_GIT" archive 36027d82d1ad9949597ea16002ff4940374b1b94 setup.py version.txt \
    .gitmodules | tar -x -C "$t/ao"
  ao() {  # ao <id>: python3 setup.py --version in the copy
    (cd "$t/ao" && GIT_CEILING_DIRECTORIES="$t" timeout 120 python3 setup.py --version 2>&1) \
      | sed -e "s#$t/ao#/home/user/ao#g" > "$cases/$1.log"
  }
  ao real-setup-submodule-init-failed
  echo partial > "$t/ao/third_party/cutlass/README.md"
  ao real-setup-submodule-files-missing
else
  echo "skipped the setup.py cases: no pytorch/ao git copy at $AO_GIT" >&2
fi
# A negative: LoadHIP's optional packages missing (rccl, hipblaslt, hipsparselt looked up
# without REQUIRED; the fork copy's "hipblaslt requested but not found" warning), after which
# the configure goes on and completes.
cat > "$t/pt/cmake/public/LoadHIP.cmake" <<'X'
macro(find_package_and_print_version PACKAGE_NAME)
  find_package("${PACKAGE_NAME}" ${ARGN})
  if(NOT ${PACKAGE_NAME}_FOUND)
    message("Optional package ${PACKAGE_NAME} not found")
  else()
    message("${PACKAGE_NAME} VERSION: ${${PACKAGE_NAME}_VERSION}")
  endif()
endmacro()
set(USE_ROCM_HIPBLASLT ON)
find_package_and_print_version(hipblaslt)
if(NOT hipblaslt_FOUND)
  message(WARNING "hipblaslt requested but not found; disabling USE_ROCM_HIPBLASLT")
  set(USE_ROCM_HIPBLASLT OFF)
endif()
find_package_and_print_version(rccl)
find_package_and_print_version(hipsparselt)
X
loadhip neg-pytorch-loadhip-optional-packages-missing "$t/rocm"
