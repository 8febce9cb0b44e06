#!/usr/bin/env bash
# HIP compiles with Debian 12's hipcc (HIP 5.2, clang 15.0.6) and GCC 12's libstdc++, each as a
# one-edge Ninja build (build.ninja written here, the object paths PyTorch's torch_hip target uses).
#  real-libstdcxx-assertions-device: CXXFLAGS carry -D_GLIBCXX_ASSERTIONS (as distro default flags
#    do); std::array::operator[] in device code calls the host-only std::__glibcxx_assert_fail.
#  real-hipify-cuda-runtime-header: a .hip file that still includes <cuda_runtime.h> (not hipified).
#  real-gpu-target-gfx1201: PYTORCH_ROCM_ARCH=gfx1201, which clang 15 does not know.
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../cases
export HIP_PLATFORM=amd
t=$(mktemp -d)
src=aten/src/ATen/native/hip
obj=caffe2/CMakeFiles/torch_hip.dir/__/aten/src/ATen/native/hip
build() {  # $1 case dir, $2 file name, $3 flags; source on stdin
  local d=$t/$1
  mkdir -p "$d/$src" "$d/build"
  cat > "$d/$src/$2"
  cat > "$d/build/build.ninja" <<N
rule HIP_COMPILER
  command = /usr/bin/hipcc \$DEFINES \$FLAGS -MD -MF \$out.d -o \$out -c \$in
  description = Building HIP object \$out
  depfile = \$out.d
  deps = gcc
build $obj/$2.o: HIP_COMPILER $d/$src/$2
  DEFINES = -DUSE_ROCM -D__HIP_PLATFORM_AMD__=1 -DTORCH_HIP_BUILD_MAIN_LIB
  FLAGS = -fPIC -std=c++17 -O3 -DNDEBUG $3
N
  (cd "$d/build" && ninja 2>&1) | sed -e "s#$d#/home/user/pytorch#g"
}
build assert TensorCompare.hip "--offload-arch=gfx1030 -D_GLIBCXX_ASSERTIONS" \
  > "$cases/real-libstdcxx-assertions-device.log" <<'C'
#include <hip/hip_runtime.h>
#include <array>

__device__ float clamp_pick(const std::array<float, 4>& bounds, int i) { return bounds[i]; }

__global__ void clamp_kernel(float* out, const float* in, int n) {
  std::array<float, 4> bounds{0.f, 1.f, 2.f, 3.f};
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] < clamp_pick(bounds, i & 3) ? in[i] : clamp_pick(bounds, i & 3);
}
C
build hipify Activation.hip "--offload-arch=gfx1030" > "$cases/real-hipify-cuda-runtime-header.log" <<'C'
#include <hip/hip_runtime.h>
#include <cuda_runtime.h>

__global__ void relu_kernel(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] > 0.f ? in[i] : 0.f;
}
C
build arch Activation.hip "--offload-arch=gfx1201" > "$cases/real-gpu-target-gfx1201.log" <<'C'
#include <hip/hip_runtime.h>

__global__ void relu_kernel(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] > 0.f ? in[i] : 0.f;
}
C
rm -rf "$t"
