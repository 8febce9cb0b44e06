#!/usr/bin/env bash
# Build-side message families of issue 40 (r12 after, devbt4), made with the real programs:
#  - clang++-22 compiling HIP for gfx908 whose inline asm uses the DPP8 modifier (a GFX10+
#    operand): the AMDGPU assembler's "not a valid operand." inside a Composable Kernel
#    header (composable-kernel: ck-dpp8-not-on-target)
#  - cmake 3.25.1 configuring a project that asks for Tensile's msgpack the way Tensile's
#    host library does (find_package(msgpack REQUIRED NAMES msgpack msgpack-cxx msgpack-c))
#    with no msgpack-cxx installed (missing-component: cmake-config-file, msgpack)
#  - g++-12 compiling a hipified source whose hipified header (blas_utils_hip.h) still
#    includes CUDA's <mma.h> (hipify: missing-header, mma.h)
#  - cmake 3.25.1: a Composable Kernel-like package whose exported static library
#    (composable_kernel::device_other_operations) is missing from the install, then
#    find_package'd by a consumer (composable-kernel: ck-imported-library-missing)
#  - Debian 12's hipcc 5.2 (HIP_PLATFORM=amd) given nvcc's --expt-relaxed-constexpr and
#    --use_fast_math (hipify: nvcc-flag-to-hipcc), and compiling a call of
#    cudaThreadExchangeStreamCaptureMode that hipify left (hipify: hipify-cuda-call-left)
#  - GNU ld 2.40 linking a program against a shared library (named libtorch_cpu.so) that needs
#    hypot at a glibc symbol version this system's glibc lacks (GLIBC_2.99, given to it by a
#    stand-in libm built with that version node) (link: undefined-reference, newer glibc)
#  - clang++-22 compiling a HIP kernel for --offload-arch=gfx12-generic with
#    -mcode-object-version=5 (gpu-target: the backend's generic-target refusal)
#  - python3 under `ulimit -v` (400 MB) mapping 2 GiB, as a build step's worker allocating
#    past the memory it may use (out-of-memory: python-enomem)
# Writes rounds/d8/cases/real-*.log (the .toml answers are committed beside them).
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d8/cases
mkdir -p "$cases"
t=$(mktemp -d)
mkdir -p "$t/src/include/ck/utility"
cat > "$t/src/include/ck/utility/inner_product_dpp8.hpp" <<'CPP'
#pragma once
__device__ inline void dot_dpp8(float& c, unsigned a, unsigned b)
{
    asm volatile("\n v_dot2c_f32_f16_dpp %0, %1, %2 dpp8:[1, 1, 1, 1, 1, 1, 1, 1]"
                 : "=v"(c) : "v"(a), "v"(b), "0"(c));
}
CPP
cat > "$t/src/gemm_dpp_instance.cpp" <<'CPP'
#include "ck/utility/inner_product_dpp8.hpp"
__global__ void k(float* c, unsigned a, unsigned b) { dot_dpp8(*c, a, b); }
CPP
(cd "$t/src" && clang++-22 -x hip --offload-arch=gfx908 -nogpulib -O0 -I"$t/src/include" \
  -c "$t/src/gemm_dpp_instance.cpp" -o gemm.o 2>&1) | sed -e "s#$t/src#/build/source#g" \
  > "$cases/real-ck-dpp8-asm-on-gfx908.log"
mkdir -p "$t/mp"
cat > "$t/mp/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(tensile_host CXX)
find_package(msgpack REQUIRED NAMES msgpack msgpack-cxx msgpack-c)
CM
(cmake -S "$t/mp" -B "$t/mpb" 2>&1) | sed -e "s#$t/mpb#/build/tensile/build#g" \
  -e "s#$t/mp#/build/tensile/Source/lib#g" > "$cases/real-cmake-tensile-msgpack-not-found.log"
mkdir -p "$t/ops"
printf '#pragma once\n#include <mma.h>\n' > "$t/ops/blas_utils_hip.h"
printf '#include "blas_utils_hip.h"\nint op() { return 0; }\n' > "$t/ops/core_ops_hip.cpp"
(cd "$t" && g++-12 -c ops/core_ops_hip.cpp -o core.o 2>&1) \
  > "$cases/real-gcc-hipified-header-includes-mma-h.log"
mkdir -p "$t/ck/src" "$t/use"
cat > "$t/ck/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(composable_kernel CXX)
file(WRITE ${CMAKE_BINARY_DIR}/ops.cpp "int other_op() { return 0; }\n")
add_library(device_other_operations STATIC ${CMAKE_BINARY_DIR}/ops.cpp)
install(TARGETS device_other_operations EXPORT device_other_operationsTargets
  ARCHIVE DESTINATION lib)
install(EXPORT device_other_operationsTargets NAMESPACE composable_kernel::
  FILE composable_kerneldevice_other_operationsTargets.cmake
  DESTINATION lib/cmake/composable_kernel)
file(WRITE ${CMAKE_BINARY_DIR}/cfg.cmake "include(\${CMAKE_CURRENT_LIST_DIR}/composable_kerneldevice_other_operationsTargets.cmake)\n")
install(FILES ${CMAKE_BINARY_DIR}/cfg.cmake DESTINATION lib/cmake/composable_kernel
  RENAME composable_kernelConfig.cmake)
CM
cmake -S "$t/ck" -B "$t/ckb" -DCMAKE_INSTALL_PREFIX="$t/prefix" >/dev/null 2>&1
cmake --build "$t/ckb" >/dev/null 2>&1 && cmake --install "$t/ckb" >/dev/null 2>&1
rm -f "$t/prefix/lib/libdevice_other_operations.a"
cat > "$t/use/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(miopen_like CXX)
find_package(composable_kernel REQUIRED)
CM
(cmake -S "$t/use" -B "$t/useb" -DCMAKE_PREFIX_PATH="$t/prefix" 2>&1) \
  | sed -e "s#$t/prefix#/opt/rocm-6.3.1#g" -e "s#$t/useb#/build/miopen/build#g" \
  -e "s#$t/use#/build/miopen#g" > "$cases/real-cmake-ck-imported-library-missing.log"
mkdir -p "$t/hip"
echo 'int x;' > "$t/hip/k.cpp"
# the command line first, as setuptools prints each compile before it runs it
nvflags=(--offload-arch=gfx90a --expt-relaxed-constexpr --use_fast_math -c k.cpp -o k.o)
(cd "$t/hip" && echo "hipcc ${nvflags[*]}" && HIP_PLATFORM=amd hipcc "${nvflags[@]}" 2>&1) \
  > "$cases/real-hipcc-given-nvcc-flags.log"
printf '#include <hip/hip_runtime.h>\nvoid f() { hipStreamCaptureMode m; cudaThreadExchangeStreamCaptureMode(&m); }\n' \
  > "$t/hip/strongstream.cpp"
(cd "$t/hip" && HIP_PLATFORM=amd hipcc --offload-arch=gfx90a -c strongstream.cpp -o s.o 2>&1) \
  > "$cases/real-hipcc-cuda-call-left-unhipified.log"
mkdir -p "$t/gl/fake" "$t/gl/lib"
printf 'double hypot(double a, double b) { return a + b; }\n' > "$t/gl/fake/h.c"
printf 'GLIBC_2.99 { global: hypot; };\n' > "$t/gl/fake/v.map"
printf 'double hypot(double, double);\ndouble use(double a, double b) { return hypot(a, b); }\n' \
  > "$t/gl/g.c"
printf 'double use(double, double);\nint main(void) { return (int)use(3, 4); }\n' > "$t/gl/m.c"
(cd "$t/gl" && gcc -shared -fPIC fake/h.c -Wl,--version-script=fake/v.map \
  -Wl,-soname,libm.so.6 -o fake/libm.so && gcc -shared -fPIC g.c -Lfake -lm \
  -o lib/libtorch_cpu.so && gcc m.c -Llib -ltorch_cpu -lm -o m 2>&1) \
  > "$cases/real-ld-shared-lib-needs-newer-glibc.log"
mkdir -p "$t/gen"
printf '__attribute__((global)) void k(int* p) { *p = 1; }\n' > "$t/gen/copyKernel.cc"
(cd "$t/gen" && clang++-22 -x hip --offload-arch=gfx12-generic -mcode-object-version=5 \
  -nogpulib --cuda-device-only -O3 -c copyKernel.cc -o copyKernel.code 2>&1) \
  > "$cases/real-clang-generic-target-cov5.log"
mkdir -p "$t/py"
printf 'import mmap\n\n\ndef parse_logic_file(n):\n    return mmap.mmap(-1, 2 * 1024**3)\n\n\nparse_logic_file(0)\n' \
  > "$t/py/create_library.py"
(cd "$t/py" && ulimit -v 400000 && python3 create_library.py 2>&1) | sed -e "s#$t/py#/build/tensile#g" \
  > "$cases/real-python-enomem-under-memory-limit.log"
rm -rf "$t"
