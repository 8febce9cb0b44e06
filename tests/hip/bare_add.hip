// HIP kernel for clang-22 with -nogpulib -nogpuinc: no HIP headers, only clang builtins.
struct dim3 { unsigned x, y, z; };
typedef struct ihipStream_t* hipStream_t;
// Clang's HIP host stub needs a declaration of the launch function; no HIP headers are used.
extern "C" int hipLaunchKernel(const void* func, dim3 grid, dim3 block, void** args,
                               __SIZE_TYPE__ shared_bytes, hipStream_t stream);

__attribute__((global)) void bare_add(float* data, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  if (i < n) data[i] += 1.0f;
}
