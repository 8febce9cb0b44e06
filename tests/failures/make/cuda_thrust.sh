#!/usr/bin/env bash
# rocm-install: CUDA's thrust (Debian's libthrust-dev, unpacked in /opt/rf-thrust by .ci/run)
# on CPATH while the ROCm install (Debian's ROCm 5.2 at /usr) has no rocThrust: hipcc 5.2 takes
# CUDA's thrust/complex.h, whose system/cuda/config.h then wants CUDA's cub.
# Writes cases/real-rocm-install-cuda-thrust-cpath.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../cases
export HIP_PLATFORM=amd
t=$(mktemp -d)
mkdir -p "$t/aten/src/ATen/native/hip" "$t/build"
cat > "$t/aten/src/ATen/native/hip/SpectralOps.hip" <<'C'
#include <hip/hip_runtime.h>
#include <thrust/complex.h>

__global__ void magnitude(float* out, const float* re, const float* im, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = thrust::abs(thrust::complex<float>(re[i], im[i]));
}
C
cat > "$t/build/build.ninja" <<N
rule HIP_COMPILER
  command = /usr/bin/hipcc -DUSE_ROCM -D__HIP_PLATFORM_AMD__=1 -fPIC -std=c++17 -O3 --offload-arch=gfx1030 -o \$out -c \$in
  description = Building HIP object \$out
build caffe2/CMakeFiles/torch_hip.dir/__/aten/src/ATen/native/hip/SpectralOps.hip.o: HIP_COMPILER $t/aten/src/ATen/native/hip/SpectralOps.hip
N
(cd "$t/build" && CPATH=/opt/rf-thrust/usr/include ninja 2>&1) | sed -e "s#$t#/home/user/pytorch#g" \
  > "$cases/real-rocm-install-cuda-thrust-cpath.log"
rm -rf "$t"
