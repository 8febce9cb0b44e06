// A second translation unit, so the linked .so holds two offload bundles in .hip_fatbin.
#include <hip/hip_runtime.h>

__global__ void scale(float* data, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}
