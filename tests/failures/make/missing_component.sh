#!/usr/bin/env bash
# missing-component: Debian 12's cmake 3.25.1 configuring a tree whose cmake/public/LoadHIP.cmake
# finds the ROCm components the way PyTorch's does (macro find_package_and_print_version ->
# find_package(${ARGN})), with ROCM_PATH=/usr (Debian's ROCm 5.2 packages). Debian ships hip,
# amd_comgr, rocrand, rocprim, hipsparse but no miopen, hipblaslt or rccl CMake package.
# Writes cases/real-missing-component-{miopen,hipblaslt,rccl}.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../cases
export HIP_PLATFORM=amd ROCM_PATH=/usr PYTORCH_ROCM_ARCH=gfx1100
make_case() {  # $1 = case suffix, $2.. = the find_package_and_print_version lines
  local name=$1; shift
  local t; t=$(mktemp -d)
  mkdir -p "$t/cmake/public"
  cat > "$t/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18 FATAL_ERROR)
project(Torch CXX C)
set(USE_ROCM ON)
include(cmake/Dependencies.cmake)
CM
  cat > "$t/cmake/Dependencies.cmake" <<'CM'
# ---[ HIP
if(USE_ROCM)
  include(${CMAKE_CURRENT_LIST_DIR}/public/LoadHIP.cmake)
endif()
CM
  {
    cat <<'CM'
set(PYTORCH_FOUND_HIP FALSE)
file(TO_CMAKE_PATH "$ENV{ROCM_PATH}" ROCM_PATH)
set(PYTORCH_ROCM_ARCH $ENV{PYTORCH_ROCM_ARCH})
message("Building PyTorch for GPU arch: ${PYTORCH_ROCM_ARCH}")
list(APPEND CMAKE_PREFIX_PATH ${ROCM_PATH})

macro(find_package_and_print_version PACKAGE_NAME)
  find_package("${PACKAGE_NAME}" ${ARGN})
  if(NOT ${PACKAGE_NAME}_FOUND)
    message("Optional package ${PACKAGE_NAME} not found")
  else()
    message("${PACKAGE_NAME} VERSION: ${${PACKAGE_NAME}_VERSION}")
  endif()
endmacro()

find_package_and_print_version(hip REQUIRED CONFIG)
if(hip_FOUND)
  set(PYTORCH_FOUND_HIP TRUE)
  message("\n***** Library versions from cmake find_package *****\n")
  find_package_and_print_version(amd_comgr REQUIRED)
  find_package_and_print_version(rocrand REQUIRED)
CM
    for l in "$@"; do echo "  $l"; done
    echo "endif()"
  } > "$t/cmake/public/LoadHIP.cmake"
  (cd "$t" && cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release 2>&1) \
    | sed -e "s#$t#/home/user/pytorch#g" > "$cases/real-missing-component-$name.log"
  rm -rf "$t"
}
make_case miopen "find_package_and_print_version(hipsparse REQUIRED)" \
  "find_package_and_print_version(rocprim REQUIRED)" "find_package_and_print_version(miopen REQUIRED)"
make_case hipblaslt "find_package_and_print_version(hipsparse REQUIRED)" \
  "find_package_and_print_version(rocprim REQUIRED)" "find_package_and_print_version(hipblaslt REQUIRED)"
make_case rccl "find_package_and_print_version(hipsparse REQUIRED)" \
  "find_package_and_print_version(rccl REQUIRED CONFIG)"
