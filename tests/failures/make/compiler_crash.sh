#!/usr/bin/env bash
# compiler-crash: clang 22 (Debian clang-22) compiling a slow HIP translation unit (generated)
# (clang++-22 -x hip --offload-arch=gfx1100 -nogpulib -nogpuinc) in a one-edge Ninja build; after
# 8 s (in its -O2 codegen) its device-side `clang -cc1` process is sent SIGSEGV, so the frontend's own crash handler
# prints the stack dump and the driver writes its crash reproducer, as for a real segfault.
# Temp dir rewritten to /home/user/pytorch; reproducer names made stable (TMPDIR=/tmp).
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../cases
export HIP_PLATFORM=amd
t=$(mktemp -d)
src=aten/src/ATen/native/hip
obj=caffe2/CMakeFiles/torch_hip.dir/__/aten/src/ATen/native/hip
mkdir -p "$t/$src" "$t/build" "$t/tmp"
{  # 6000 small device functions: the device-side -O2 codegen runs about a minute
  echo '#define __device__ __attribute__((device))'
  echo '#define __global__ __attribute__((global))'
  for i in $(seq 0 5999); do
    echo "__device__ __attribute__((noinline)) float op_$i(float x, int k) { for (int j = 0; j < k; ++j) x = x * $i.5f + (float)(j ^ $i); return x; }"
  done
  echo '__global__ void reduce_kernel(float* out, int k) {'
  echo '  float acc = 0.f;'
  for i in $(seq 0 5999); do echo "  acc += op_$i(out[$((i % 64))], k);"; done
  echo '  out[0] = acc;'
  echo '}'
} > "$t/$src/Reduce.hip"
cat > "$t/build/build.ninja" <<N
rule HIP_COMPILER
  command = /usr/bin/clang++-22 -x hip \$FLAGS -o \$out -c \$in
  description = Building HIP object \$out
build $obj/Reduce.hip.o: HIP_COMPILER $t/$src/Reduce.hip
  FLAGS = --offload-arch=gfx1100 -nogpulib -nogpuinc -fPIC -std=c++17 -O2
N
(cd "$t/build" && TMPDIR=$t/tmp exec ninja > "$t/out" 2>&1) &
build=$!
descendants() { local c; for c in $(pgrep -P "$1"); do echo "$c"; descendants "$c"; done; }
cc1=""
for _ in $(seq 1 60); do
  for p in $(descendants "$build"); do
    tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | grep -q -- '-cc1 .*-fcuda-is-device' && cc1=$p
  done
  [ -n "$cc1" ] && break
  sleep 0.5
done
sleep 8
[ -n "$cc1" ] && kill -SEGV "$cc1"
wait "$build"
sed -e "s#$t/tmp#/tmp#g; s#$t#/home/user/pytorch#g" \
    -e 's#/tmp/Reduce-gfx1100-[0-9a-f]*\.#/tmp/Reduce-gfx1100-000000.#g; s#/tmp/Reduce-[0-9a-f]*\.#/tmp/Reduce-000000.#g' \
    -e 's#-cuid=[0-9a-f]*#-cuid=0000000000000000#g; s#Reduce-gfx1100-[0-9a-f]*\.o#Reduce-gfx1100-000000.o#g' \
    "$t/out" > "$cases/real-compiler-crash-clang-segv.log"
rm -rf "$t"
