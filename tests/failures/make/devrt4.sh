#!/usr/bin/env bash
# Cases for the r12 families of devrt4 (issue 40), made with the real programs here, written to
# rounds/d8/cases (.log only; the .toml beside each is committed by hand):
#  real-generic-target-cov5-gfx11-generic: clang++-22 compiles a HIP kernel for the generic
#    target gfx11-generic with -mcode-object-version=5; the AMDGPU backend refuses it.
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d8/cases
mkdir -p "$cases"
t=$(mktemp -d)
printf '__attribute__((global)) void k(int *p) { *p = 1; }\n' > "$t/k.hip"
clang++-22 -x hip --offload-arch=gfx11-generic -mcode-object-version=5 --cuda-device-only \
  -nogpulib -nogpuinc -c "$t/k.hip" -o "$t/k.o" > "$cases/real-generic-target-cov5-gfx11-generic.log" 2>&1
rm -rf "$t"
