#!/usr/bin/env bash
# link: GNU ld 2.40 (via g++ 12) failing inside a Ninja build driven by cmake 3.25.1 --build.
#  real-link-missing-library: a shared library linked with -lrocmfoo_missing (no such library).
#  real-link-undefined-reference: an executable calling c10::hip::device_count_ensure_non_zero(),
#    declared in a header but defined in no object or library on the link line.
# Writes those two cases/*.log (the build step's output only; the configure ran quietly before).
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../cases
export HIP_PLATFORM=amd
t=$(mktemp -d)
mkdir -p "$t/a" "$t/b"
# --- cannot find -l
cat > "$t/a/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(Torch CXX)
add_library(torch_hip SHARED aten/src/ATen/hip/HIPContext.cpp)
target_link_libraries(torch_hip PRIVATE rocmfoo_missing)
CM
mkdir -p "$t/a/aten/src/ATen/hip"
echo 'int hip_context_probe() { return 1; }' > "$t/a/aten/src/ATen/hip/HIPContext.cpp"
# --- undefined reference
mkdir -p "$t/b/c10/hip" "$t/b/torch/csrc"
cat > "$t/b/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(Torch CXX)
add_library(c10_hip SHARED c10/hip/HIPFunctions.cpp)
target_include_directories(c10_hip PUBLIC ${CMAKE_SOURCE_DIR})
add_executable(torch_shm_manager torch/csrc/manager.cpp)
target_link_libraries(torch_shm_manager PRIVATE c10_hip)
CM
cat > "$t/b/c10/hip/HIPFunctions.h" <<'H'
#pragma once
namespace c10 { namespace hip {
int device_count() noexcept;
void device_count_ensure_non_zero();
}}
H
cat > "$t/b/c10/hip/HIPFunctions.cpp" <<'C'
#include "c10/hip/HIPFunctions.h"
namespace c10 { namespace hip {
int device_count() noexcept { return 0; }
}}
C
cat > "$t/b/torch/csrc/manager.cpp" <<'C'
#include "c10/hip/HIPFunctions.h"
int main() {
  c10::hip::device_count_ensure_non_zero();
  return c10::hip::device_count();
}
C
for d in a b; do
  cmake -G Ninja -S "$t/$d" -B "$t/$d/build" -DCMAKE_BUILD_TYPE=Release >/dev/null 2>&1
done
(cd "$t/a" && cmake --build build -j 1 2>&1) | sed -e "s#$t/a#/home/user/pytorch#g" > "$cases/real-link-missing-library.log"
(cd "$t/b" && cmake --build build -j 1 2>&1) | sed -e "s#$t/b#/home/user/pytorch#g" > "$cases/real-link-undefined-reference.log"
rm -rf "$t"
