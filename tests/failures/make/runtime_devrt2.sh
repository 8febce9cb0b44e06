#!/usr/bin/env bash
# Cases for the r8/r9 families of devrt2 (issue 40), made with the real programs here, written to
# rounds/d6/cases (.log only; the .toml beside each is committed by hand):
#  real-builtin-needs-mai-insts-gfx1030: Debian 12's hipcc (HIP 5.2, clang 15) compiles a
#    monorepo project's sample that calls an MFMA builtin for gfx1030 (RDNA2, no mai-insts).
#  real-pkgconf-required-module-missing: CMake 3.25's pkg_check_modules(REQUIRED) asks pkgconf
#    1.8 for libdw, whose .pc is not installed here.
#  real-neg-pkgconf-optional-module-configure-done: the same module asked for without REQUIRED:
#    pkgconf prints the same line, the configure goes on and finishes.
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d6/cases
mkdir -p "$cases"
export HIP_PLATFORM=amd
t=$(mktemp -d)
mkdir -p "$t/src/projects/mfma-sample/sample"
cat > "$t/src/projects/mfma-sample/sample/flop.cpp" <<'C'
#include <hip/hip_runtime.h>
typedef float float4_t __attribute__((ext_vector_type(4)));
typedef _Float16 half4_t __attribute__((ext_vector_type(4)));
__global__ void flop_kernel(float4_t* out, half4_t a) {
  float4_t acc = out[threadIdx.x];
  acc = __builtin_amdgcn_mfma_f32_16x16x16f16(a, a, acc, 0, 0, 0);
  out[threadIdx.x] = acc;
}
C
/usr/bin/hipcc --offload-arch=gfx1030 -x hip -c "$t/src/projects/mfma-sample/sample/flop.cpp" \
  -o "$t/flop.o" 2>&1 | sed -e "s#$t#/home/user/rocm-systems#g" \
  > "$cases/real-builtin-needs-mai-insts-gfx1030.log"
pkgconf_case() {  # $1 case name, $2 REQUIRED or ""
  local d=$t/$1
  mkdir -p "$d/build"
  cat > "$d/CMakeLists.txt" <<C
cmake_minimum_required(VERSION 3.16)
project(profiler_sample LANGUAGES C)
find_package(PkgConfig REQUIRED)
pkg_check_modules(DW $2 libdw)
C
  (cd "$d/build" && cmake .. 2>&1) | sed -e "s#$d#/home/user/profiler#g" \
    -e 's#([0-9.]*s)#(0.1s)#' > "$cases/$1.log"
}
pkgconf_case real-pkgconf-required-module-missing REQUIRED
pkgconf_case real-neg-pkgconf-optional-module-configure-done ""
rm -rf "$t"
