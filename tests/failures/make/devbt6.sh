#!/usr/bin/env bash
# Build-side message families of issue 40 (r14 after, devbt6), made with the real programs:
#  - cmake 3.25.1: find_package(Torch REQUIRED) with no prefix leading to a torch install's
#    share/cmake (cmake: cmake-config-file, read as a CMake prefix problem for Torch)
#  - cmake 3.25.1: hip_add_library() without FindHIP.cmake loaded
#    (cmake: cmake-unknown-command, the hip_* commands of HIP's CMake module)
#  - clang++-22 -x hip with a --rocm-path that has no device bitcode
#    (rocm-install: rocm-device-library)
# Writes rounds/d9/cases/real-*.log (the .toml answers are committed beside them).
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d9/cases
t=$(mktemp -d)
mkdir -p "$t/ext"
cat > "$t/ext/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(ext NONE)
find_package(Torch REQUIRED)
CM
(cmake -S "$t/ext" -B "$t/extb" 2>&1) | sed -e "s#$t/extb#/src/ext/build#g" \
  -e "s#$t/ext#/src/ext#g" > "$cases/real-cmake-find-torch-no-prefix.log"
mkdir -p "$t/hip"
cat > "$t/hip/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(solver NONE)
hip_add_library(solver_kernels kernels.hip.cpp)
CM
(cmake -S "$t/hip" -B "$t/hipb" 2>&1) | sed -e "s#$t/hipb#/src/solver/build#g" \
  -e "s#$t/hip#/src/solver#g" > "$cases/real-cmake-hip-add-library-unknown.log"
mkdir -p "$t/dev" "$t/rocm"
echo '__global__ void k() {}' > "$t/dev/k.hip"
(cd "$t/dev" && clang++-22 -x hip --offload-arch=gfx1100 --rocm-path="$t/rocm" -nogpuinc \
  -c k.hip -o k.o 2>&1) | sed -e "s#$t/rocm#/opt/rocm#g" \
  > "$cases/real-clang-hip-device-library-missing.log"
rm -rf "$t"
