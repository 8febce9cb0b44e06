#!/usr/bin/env bash
# compiler-cache: sccache 0.16.0 (on PATH) as the compiler launcher of a one-edge Ninja build
# (as CMAKE_CXX_COMPILER_LAUNCHER=sccache makes PyTorch's), compiling a HIP file with clang++-22,
# with SCCACHE_REDIS naming a Redis that does not answer (127.0.0.1:9, nothing listens there).
#  real-compiler-cache-sccache-timeout: no sccache server runs, so the compile starts one; the
#    server checks its storage before it listens, the client gives up after 10 s with "Timed out
#    waiting for server startup" and the compile fails (mozilla/sccache#1751).
# The server uses a private port and cache folder (SCCACHE_SERVER_PORT, SCCACHE_DIR), so a
# user's own sccache server is never touched. Temp dir rewritten to /home/user/pytorch.
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../cases
export HIP_PLATFORM=amd
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
export SCCACHE_SERVER_PORT=4297 SCCACHE_DIR=$t/sccache SCCACHE_REDIS=redis://127.0.0.1:9
unset SCCACHE_LOG SCCACHE_NO_DAEMON SCCACHE_START_SERVER
src=aten/src/ATen/native/hip
obj=caffe2/CMakeFiles/torch_hip.dir/__/aten/src/ATen/native/hip
mkdir -p "$t/$src" "$t/build"
cat > "$t/$src/Activation.hip" <<'C'
__global__ void relu_kernel(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] < 0.f) x[i] = 0.f;
}
C
cat > "$t/build/build.ninja" <<N
rule HIP_COMPILER
  command = sccache /usr/bin/clang++-22 -x hip \$FLAGS -o \$out -c \$in
  description = Building HIP object \$out
build $obj/Activation.hip.o: HIP_COMPILER $t/$src/Activation.hip
  FLAGS = --offload-arch=gfx1100 -nogpulib -fPIC -std=c++17 -O2
N
(cd "$t/build" && ninja 2>&1) | sed -e "s#$t#/home/user/pytorch#g" \
  > "$cases/real-compiler-cache-sccache-timeout.log"
