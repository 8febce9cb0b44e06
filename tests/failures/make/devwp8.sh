#!/usr/bin/env bash
# The same failure at another ROCm root (d10, devwp8), made by the real compiler:
#  clang++-22 -x hip with its own resource headers (lib/clang/22/include, copied from this
#    clang) under a pip SDK's root in a venv (…/site-packages/_rocm_sdk_devel/lib/llvm, the
#    layout TheRock's rocm-sdk-devel wheel unpacks) and a stray stdint.h earlier on the
#    include path: __clang_hip_math.h then fails on 'uint64_t', as when a second install's
#    headers mix into a build (ROCm/TheRock#950 had it under /opt/rocm).
# Cases go to rounds/d10/cases; a second or two.
set -u
for tool in clang++-22 sed mktemp; do
  command -v "$tool" > /dev/null || { echo "devwp8.sh: $tool is not installed here" >&2; exit 2; }
done
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d10/cases
mkdir -p "$cases"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cd "$t" || exit 1

root=$t/venv/lib/python3.12/site-packages/_rocm_sdk_devel
mkdir -p "$root/lib/llvm/lib/clang/22" stray
cp -r "$(clang++-22 -print-resource-dir)/include" "$root/lib/llvm/lib/clang/22/"
printf '/* a stray stdint.h from another install: it defines nothing */\n' > stray/stdint.h
printf '#include <hip/hip_runtime.h>\n__global__ void k(float* x) { x[0] = 1.0f; }\n' > k.hip
log=$cases/real-clang-hip-wrapper-uint64-venv-sdk-root.log
clang++-22 -x hip --offload-arch=gfx1100 -nogpulib -resource-dir "$root/lib/llvm/lib/clang/22" \
  -isystem stray -c k.hip -o k.o > "$log" 2>&1
sed -i -e "s#$t#/home/user#g" "$log"
