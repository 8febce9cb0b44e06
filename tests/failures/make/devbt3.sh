#!/usr/bin/env bash
# Build-side message families of issue 40 (r10 after, devbt3), made with the real programs:
#  - clang++-22 -Werror on a #pragma GCC diagnostic naming a GCC-only warning group
#    (host-compiler: clang-unknown-warning-werror)
#  - clang++-22 given CMake's MSVC default flags (/DWIN32 /D_WINDOWS /O2 /Ob2) as a GNU-style
#    driver (cmake: clang-given-msvc-flags)
#  - cmake 3.25.1: an imported target whose INTERFACE_INCLUDE_DIRECTORIES names a folder that
#    does not exist (cmake: cmake-imported-target-missing-include)
#  - cmake 3.25.1: a Windows path with backslashes in CMake code (cmake: cmake-invalid-escape)
#  - Debian 12's hipcc 5.2 (hipcc.pl) with ROCM_PATH at a folder that holds no clang
#    (rocm-install: hipcc-clang-missing)
# Writes rounds/d7/cases/real-*.log (the .toml answers are committed beside them).
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d7/cases
t=$(mktemp -d)
mkdir -p "$t/src"
cat > "$t/src/ops.cpp" <<'CPP'
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wclass-memaccess"
int op() { return 0; }
#pragma GCC diagnostic pop
CPP
(cd "$t/src" && clang++-22 -Werror -c ops.cpp -o ops.o 2>&1) \
  > "$cases/real-clang-unknown-warning-group-werror.log"
(cd "$t/src" && clang++-22 /DWIN32 /D_WINDOWS /O2 /Ob2 -x hip --offload-arch=gfx1100 -nogpulib -c ops.cpp \
  -o ops.o 2>&1) > "$cases/real-clang-msvc-default-flags.log"
mkdir -p "$t/imp"
cat > "$t/imp/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(consumer C)
add_library(rocprof::sdk INTERFACE IMPORTED)
set_target_properties(rocprof::sdk PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "/opt/rocm-7.0.0/include/rocprofiler-sdk")
file(WRITE ${CMAKE_BINARY_DIR}/main.c "int main(void) { return 0; }\n")
add_executable(consumer ${CMAKE_BINARY_DIR}/main.c)
target_link_libraries(consumer rocprof::sdk)
CM
(cmake -S "$t/imp" -B "$t/impb" 2>&1) | sed -e "s#$t/impb#/home/user/consumer/build#g" \
  -e "s#$t/imp#/home/user/consumer#g" > "$cases/real-cmake-imported-target-missing-include.log"
mkdir -p "$t/esc"
cat > "$t/esc/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(ext NONE)
set(ROCM_CMAKE "C:\Users\dev\rocm\lib\cmake")
CM
(cmake -S "$t/esc" -B "$t/escb" 2>&1) | sed -e "s#$t/escb#/home/user/ext/build#g" \
  -e "s#$t/esc#/home/user/ext#g" > "$cases/real-cmake-windows-path-invalid-escape.log"
mkdir -p "$t/rocm/bin"
printf 'int main() { return 0; }\n' > "$t/src/main.cpp"
(cd "$t/src" && ROCM_PATH="$t/rocm" HIP_PLATFORM=amd hipcc main.cpp -o main 2>&1) \
  | sed -e "s#$t/rocm#/home/user/rocm-6.2.0-tarball#g" > "$cases/real-hipcc-rocm-path-no-clang.log"
rm -rf "$t"
