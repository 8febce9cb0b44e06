// Small HIP kernel for Debian's hipcc (ROCm 5.2, clang-15): uses the HIP headers and device libs.
#include <hip/hip_runtime.h>

__global__ void add_one(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}
