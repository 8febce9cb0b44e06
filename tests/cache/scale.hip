// Shared-cache tests: a HIP kernel for clang-22 with -nogpulib -nogpuinc (no HIP headers, only
// clang's builtins), so host and device code are compiled by one cached call.
struct dim3 { unsigned x, y, z; };
typedef struct ihipStream_t* hipStream_t;
extern "C" int hipLaunchKernel(const void* func, dim3 grid, dim3 block, void** args,
                               __SIZE_TYPE__ shared_bytes, hipStream_t stream);

__attribute__((global)) void rf_scale(float* data, float factor, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  if (i < n) data[i] *= factor;
}
