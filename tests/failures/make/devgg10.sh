#!/usr/bin/env bash
# ggml's HIP backend (-DGGML_HIP=ON) configured and compiled the ways users do, with the real
# programs (issue 40, devgg10). ggml is ggml-org/ggml@d99724f2b141fed9e1a9f402213506c081433465
# taken from its mirror (fetch github:ggml-org/ggml); the ROCm is Debian's 5.2 (hipcc,
# hip-config, no hipblas/rocblas CMake packages, no amd_comgr CMake package).
#  - cmake 4 on a machine with CUDA's nvcc: CMAKE_HIP_PLATFORM unset, `hipconfig --platform`
#    says nvidia, CMake tests nvcc as the HIP compiler, "- broken"
#  - cmake 4 given -DCMAKE_HIP_COMPILER=hipcc, and HIPCXX=hipcc: "… is set to the hipcc
#    wrapper … This is not supported."
#  - cmake 4 with clang++-22 as the HIP compiler: no GPU_TARGETS ("Failed to find a default
#    HIP architecture"); with GPU_TARGETS, hip-lang's find_dependency(amd_comgr) fails
#  - CXX=hipcc (ggml's legacy path) without HIP_PLATFORM: hipcc links with -lcuda
#  - CXX=hipcc with HIP_PLATFORM=amd: hipblas not found; with stand-in hipblas/rocblas CMake
#    packages (STAND-INS: Debian's ROCm 5.2 here ships none; they only let find_package pass),
#    ggml's own "At least ROCM/HIP V6.1 is required" against the real hip 5.2
#  - hipcc compiling ggml-cuda/arange.cu against ROCm 5.2's headers (a stand-in, empty
#    hipblas/hipblas.h, the same boundary): "'hip/hip_bf16.h' file not found"
#  - hipcc compiling ggml@a0a3dd6b's fattn-wmma-f16.cu (an older ggml, before hip_bf16.h)
#    with empty STAND-IN hipblas.h and rocblas.h: clang's "use of undeclared identifier
#    'HIPBLAS_STATUS_ALLOC_FAILED'" and its source echo, a negative (no status was reported)
#  - koboldcpp's Makefile link line for LLAMA_HIPBLAS without /opt/rocm (ROCM_PATH=/usr,
#    HCXX=hipcc, -lhipblas -lamdhip64 -lrocblas: LostRuins/koboldcpp@2da346a5:Makefile) on a
#    one-function object: ld finds no libhipblas / librocblas
#  - the head of the last configure, before its error (warnings and rocm_agent_enumerator's
#    traceback on a machine without /dev/kfd): a negative
# Needs git, cmake (3.25), a CMake 4 (CMAKE4, default /opt/rf-cmake4/bin/cmake), ninja,
# hipcc, hipconfig, clang++-22, nvcc and the ggml mirror (GGML_MIRROR). Writes
# rounds/d11/cases/real-*.log (the .toml answers are committed beside them). About a minute.
set -u
cmake4=${CMAKE4:-/opt/rf-cmake4/bin/cmake}
mirror=${GGML_MIRROR:-/work/.mirror/ggml-org+ggml/repo}
commit=d99724f2b141fed9e1a9f402213506c081433465
older=a0a3dd6b989ca1a3b839760241da41654a2501c6
for tool in git cmake "$cmake4" ninja hipcc hipconfig clang++-22 nvcc; do
  command -v "$tool" > /dev/null || { echo "devgg10.sh: $tool is not installed" >&2; exit 2; }
done
for c in "$commit" "$older"; do
  git --git-dir="$mirror" cat-file -e "$c^{commit}" 2> /dev/null || {
    echo "devgg10.sh: no ggml mirror with $c at $mirror (set GGML_MIRROR)" >&2; exit 2; }
done
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d11/cases
mkdir -p "$cases"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
scrub() { sed -e "s#$t/ggml#/home/user/ggml#g" -e "s#$t#/home/user#g"; }
git --git-dir="$mirror" archive "$commit" | tar -x -C "$t" --one-top-level=ggml
g=$t/ggml
conf() {  # conf <log> <cmake> <env...> -- <cmake args...>
  local log=$1 cm=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  (cd "$g" && env -u HIP_PLATFORM -u HIPCXX "${envs[@]}" "$cm" -S . -B "b-$log" -G Ninja \
    -DGGML_HIP=ON -DGGML_CCACHE=OFF "$@" 2>&1) | scrub > "$cases/$log.log"
}

conf real-cmake4-hip-platform-nvidia-nvcc "$cmake4" --
conf real-cmake4-hip-compiler-hipcc-wrapper "$cmake4" -- -DCMAKE_HIP_COMPILER=hipcc
conf real-cmake4-hipcxx-env-hipcc-wrapper "$cmake4" HIPCXX=hipcc --
conf real-ggml-hip-no-default-architecture "$cmake4" -- -DCMAKE_HIP_COMPILER=clang++-22 \
  -DCMAKE_HIP_PLATFORM=amd
conf real-ggml-hip-lang-amd-comgr-missing "$cmake4" -- -DCMAKE_HIP_COMPILER=clang++-22 \
  -DCMAKE_HIP_PLATFORM=amd -DGPU_TARGETS=gfx1100
conf real-ggml-hipcc-cxx-nvidia-lcuda cmake CXX=hipcc -- -DGPU_TARGETS=gfx1100
conf real-ggml-hipcc-cxx-hipblas-missing cmake HIP_PLATFORM=amd CXX=hipcc -- \
  -DGPU_TARGETS=gfx1100

# STAND-INS for the two packages Debian's ROCm 5.2 lacks, so that ggml reaches its check
mkdir -p "$t/stub/lib/cmake/hipblas" "$t/stub/lib/cmake/rocblas" "$t/stub/include/hipblas"
echo 'add_library(roc::hipblas INTERFACE IMPORTED)' > "$t/stub/lib/cmake/hipblas/hipblas-config.cmake"
echo 'add_library(roc::rocblas INTERFACE IMPORTED)' > "$t/stub/lib/cmake/rocblas/rocblas-config.cmake"
: > "$t/stub/include/hipblas/hipblas.h"
conf real-ggml-hip-rocm-older-than-check cmake HIP_PLATFORM=amd CXX=hipcc -- \
  -DGPU_TARGETS=gfx1100 -DCMAKE_PREFIX_PATH="$t/stub"
# the same configure's output up to its error: warnings and a recovered probe only
sed -n '/^CMake Error/q;p' "$cases/real-ggml-hip-rocm-older-than-check.log" \
  > "$cases/neg-ggml-hip-configure-head-warnings.log"

(cd "$g/src/ggml-cuda" && HIP_PLATFORM=amd hipcc -x hip --offload-arch=gfx1030 -DGGML_USE_HIP \
  -I../../include -I.. -I. -I"$t/stub/include" -c arange.cu -o "$t/arange.o" 2>&1) | scrub \
  > "$cases/real-ggml-hip-bf16-header-rocm52.log"

git --git-dir="$mirror" archive "$older" | tar -x -C "$t" --one-top-level=old
mkdir -p "$t/stub/include/rocblas"
: > "$t/stub/include/rocblas/rocblas.h"
(cd "$t/old/src/ggml-cuda" && HIP_PLATFORM=amd hipcc -x hip --offload-arch=gfx1030 \
  -DGGML_USE_HIP -DGGML_HIP_ROCWMMA_FATTN -I../../include -I.. -I. -I"$t/stub/include" \
  -c fattn-wmma-f16.cu -o "$t/fattn.o" 2>&1) | sed -e "s#$t/old#/home/user/ggml#g" \
  -e "s#$t#/home/user#g" > "$cases/neg-ggml-hip-stand-in-hipblas-status-undeclared.log"

printf 'int ggml_f(void) { return 1; }\n' > "$t/k.cpp"
(cd "$t" && HIP_PLATFORM=amd hipcc -fPIC -c k.cpp -o k.o && HIP_PLATFORM=amd hipcc -fPIC k.o \
  -shared -o koboldcpp_hipblas.so -L/usr/lib -Wl,-rpath=/usr/lib -L/usr/lib64 \
  -Wl,-rpath=/usr/lib64 -lhipblas -lamdhip64 -lrocblas 2>&1) | scrub \
  > "$cases/real-koboldcpp-make-hipcc-cannot-find-lhipblas.log"
