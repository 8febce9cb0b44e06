#!/usr/bin/env bash
# Pool d3 (dev, not blind): what runs after the build, made with the real tools here.
#  d3-real-torchvision-built-for-other-torch: the real torchvision 0.29.1 wheel (built for
#    torch 2.14.1, in /opt/rf-tv-0.29.1) imported by the real torch 2.13.0+cpu of this
#    machine's Python: its _meta_registrations.py registers a fake kernel for torchvision::nms,
#    an operator its compiled library did not register with this torch.
#  d3-real-torchvision-built-for-other-torch-cut: the same output cut before the exception
#    line, as threads often post it (ROCm/TheRock#1261): the frames alone.
#  d3-real-rocsolver-needs-newer-rocblas: a stand-in librocsolver.so.0 (gcc 12) linked against
#    a librocblas.so.4 that defines a rocBLAS internal C++ template; at run time an older
#    librocblas.so.4 without it is found first; `import torch` loads librocsolver with ctypes
#    the way torch's _C does through DT_NEEDED (glibc's loader prints the same line).
#  d3-real-triton-ops-gone-triton34 (and -cut, without the exception line): a package written
#    for Triton 2.x (`from triton.ops.matmul_perf_model import ...`, as bitsandbytes 0.43 did)
#    imported with the real Triton 3.4.0 of /opt/rf-triton-3.4.0, which has no triton.ops.
#  d3-real-torch-hip-needs-newer-hip-runtime: a stand-in libtorch_hip.so linked against a
#    libamdhip64.so.5 that has symbol version hip_5.3, loaded with the real ROCm 5.2
#    libamdhip64.so.5 of this machine (versions hip_4.2 ... hip_5.2).
#  d3-neg-real-hip-runtime-no-device (negative): a HIP program (hipcc of ROCm 5.2) run by the
#    ROCm 5.2 runtime on this machine without a GPU: "hsa_init failed", hipErrorNoDevice. No
#    cause is proven (no GPU, no /dev/kfd access, a container without the device): no claim.
#    The runtime's timestamps and thread ids are fixed to one value so reruns compare equal.
# Paths are rewritten: the temporary folder to /home/user/rocm-venv, the Python prefix to /usr.
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d3/cases
py=$(command -v python3)
prefix=$("$py" -c "import sys;print(sys.base_prefix)")
t=$(mktemp -d)
fix() { sed -e "s#$t#/home/user/rocm-venv#g; s#$prefix#/usr#g"; }
# 1, 2: torchvision built for another torch
mkdir -p "$t/sp"
ln -s /opt/rf-tv-0.29.1/lib/python3.11/site-packages/torchvision "$t/sp/torchvision"
(cd "$t" && PYTHONPATH="$t/sp" "$py" -c "import torchvision" 2>&1) | fix \
  > "$cases/d3-real-torchvision-built-for-other-torch.log"
grep -v '^RuntimeError: ' "$cases/d3-real-torchvision-built-for-other-torch.log" \
  > "$cases/d3-real-torchvision-built-for-other-torch-cut.log"
# 3: librocsolver needs a rocBLAS internal symbol the loaded rocBLAS lacks
mkdir -p "$t/new" "$t/old" "$t/opt/rocm/lib" "$t/sp2/torch"
cat > "$t/blas_new.cpp" <<'CPP'
struct _rocblas_handle;
enum rocblas_status_ { rocblas_status_success = 0 };
template <bool A, bool B, typename T>
rocblas_status_ rocblas_internal_syr2k_template(_rocblas_handle *, int n, T *x) {
  return n > 0 && x ? rocblas_status_success : rocblas_status_success;
}
template rocblas_status_ rocblas_internal_syr2k_template<false, true, float>(_rocblas_handle *, int, float *);
extern "C" int rocblas_create_handle(void **h) { *h = nullptr; return 0; }
CPP
cat > "$t/blas_old.cpp" <<'CPP'
extern "C" int rocblas_create_handle(void **h) { *h = nullptr; return 0; }
CPP
cat > "$t/solver.cpp" <<'CPP'
struct _rocblas_handle;
enum rocblas_status_ { rocblas_status_success = 0 };
template <bool A, bool B, typename T>
rocblas_status_ rocblas_internal_syr2k_template(_rocblas_handle *, int n, T *x);
extern "C" int rocsolver_ssyevd(_rocblas_handle *h, int n, float *a) {
  return rocblas_internal_syr2k_template<false, true, float>(h, n, a);
}
CPP
g++ -shared -fPIC -Wl,-soname,librocblas.so.4 -o "$t/new/librocblas.so.4" "$t/blas_new.cpp"
g++ -shared -fPIC -Wl,-soname,librocblas.so.4 -o "$t/old/librocblas.so.4" "$t/blas_old.cpp"
g++ -shared -fPIC -Wl,-soname,librocsolver.so.0 -o "$t/opt/rocm/lib/librocsolver.so.0" \
  "$t/solver.cpp" -L"$t/new" -l:librocblas.so.4
cat > "$t/sp2/torch/__init__.py" <<'PY'
import ctypes
ctypes.CDLL("/home/user/rocm-venv/opt/rocm/lib/librocsolver.so.0".replace(
    "/home/user/rocm-venv", __file__.rsplit("/sp2/", 1)[0]), mode=ctypes.RTLD_GLOBAL)
PY
(cd "$t" && LD_LIBRARY_PATH="$t/old" PYTHONPATH="$t/sp2" "$py" -c "import torch" 2>&1) | fix \
  > "$cases/d3-real-rocsolver-needs-newer-rocblas.log"
# 4, 5: a package written for Triton 2.x imported with the real Triton 3.4.0 (no triton.ops)
tp=/opt/rf-triton-3.4.0/bin/python
mkdir -p "$t/sp3/oldkernels"
echo 'from .matmul import fused_matmul  # noqa: F401' > "$t/sp3/oldkernels/__init__.py"
cat > "$t/sp3/oldkernels/matmul.py" <<'PY'
import triton
from triton.ops.matmul_perf_model import early_config_prune, estimate_matmul_time


def fused_matmul(a, b):
    return triton.cdiv(a, b), early_config_prune, estimate_matmul_time
PY
(cd "$t" && PYTHONPATH="$t/sp3" "$tp" -c "import oldkernels" 2>&1) \
  | sed -e "s#$t/sp3#/home/user/venv/lib/python3.11/site-packages#g" \
  > "$cases/d3-real-triton-ops-gone-triton34.log"
grep -v '^ModuleNotFoundError: ' "$cases/d3-real-triton-ops-gone-triton34.log" \
  > "$cases/d3-real-triton-ops-gone-triton34-cut.log"
# 6: a torch library built against a newer HIP runtime than the real ROCm 5.2 libamdhip64.so.5
# of this machine (it exports symbol versions hip_4.2 ... hip_5.2): glibc's version check
mkdir -p "$t/hipnew" "$t/sp4/torch/lib"
printf 'hip_5.2 { global: hipGetDeviceCount; local: *; };\nhip_5.3 { global: hipDrvGetErrorName; } hip_5.2;\n' \
  > "$t/hip.map"
cat > "$t/hipnew.c" <<'C'
int hipGetDeviceCount(int *n) { *n = 0; return 0; }
int hipDrvGetErrorName(int err, const char **s) { (void)err; *s = 0; return 0; }
C
gcc -shared -fPIC -Wl,-soname,libamdhip64.so.5 -Wl,--version-script="$t/hip.map" \
  -o "$t/hipnew/libamdhip64.so.5" "$t/hipnew.c"
echo 'int hipDrvGetErrorName(int, const char **); int torch_hip_probe(void) { const char *s; return hipDrvGetErrorName(0, &s); }' \
  > "$t/th.c"
gcc -shared -fPIC -o "$t/sp4/torch/lib/libtorch_hip.so" "$t/th.c" -L"$t/hipnew" -l:libamdhip64.so.5
cat > "$t/sp4/torch/__init__.py" <<'PY'
import ctypes
import os

ctypes.CDLL(os.path.join(os.path.dirname(__file__), "lib", "libtorch_hip.so"), mode=ctypes.RTLD_GLOBAL)
PY
(cd "$t" && PYTHONPATH="$t/sp4" "$py" -c "import torch" 2>&1) \
  | sed -e "s#$t/sp4#/home/user/venv/lib/python3.11/site-packages#g; s#$prefix#/usr#g" \
  > "$cases/d3-real-torch-hip-needs-newer-hip-runtime.log"
# 7 (negative): a HIP program built by ROCm 5.2's hipcc run by ROCm 5.2's runtime on this
# machine, which has no GPU and no /dev/kfd: HSA does not start, HIP reports no device
cat > "$t/nodev.cpp" <<'CPP'
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>
#define CHECK(x) do { hipError_t e = (x); if (e != hipSuccess) { fprintf(stderr, "HIP error %s: %s at %s:%d\n", hipGetErrorName(e), hipGetErrorString(e), __FILE__, __LINE__); exit(1); } } while (0)
__global__ void fill(float *x) { x[0] = 1.0f; }
int main() {
  int n = 0;
  CHECK(hipGetDeviceCount(&n));
  float *p;
  CHECK(hipMalloc(&p, 64));
  hipLaunchKernelGGL(fill, 1, 1, 0, 0, p);
  CHECK(hipDeviceSynchronize());
  printf("devices: %d\n", n);
}
CPP
HIP_PLATFORM=amd hipcc --offload-arch=gfx1030 -nogpulib "$t/nodev.cpp" -o "$t/nodev"
(cd "$t" && AMD_LOG_LEVEL=1 ./nodev 2>&1) | sed -e "s#$t#/home/user/src#g" \
  -e 's/ [0-9]\+ us: [0-9]\+ : \[tid:0x[0-9a-f]\+\]/ 26110495105 us: 5163 : [tid:0x7f0bd9767880]/' \
  > "$cases/d3-neg-real-hip-runtime-no-device.log"
rm -rf "$t"
