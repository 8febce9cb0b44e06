#!/usr/bin/env bash
# rocm-install: torch.utils.cpp_extension writes `nvcc = <ROCM_HOME>/bin/hipcc` into the
# extension's build.ninja; with an empty ROCM_HOME that is the relative bin/hipcc. Real ninja
# runs that rule (dash as /bin/sh here) and bash runs the same command line.
# Writes rounds/d4/cases/real-rocm-home-empty-relative-hipcc.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d4/cases
t=$(mktemp -d)
python3 -c "import os; print('nvcc =', os.path.join('', 'bin', 'hipcc'))" > "$t/build.ninja"
cat >> "$t/build.ninja" <<'NJ'
rule cuda_compile
  command = $nvcc -c $in -o $out -fPIC -DWITH_HIP -D__HIP_PLATFORM_AMD__=1 --offload-arch=gfx1100
build nms_kernel.o: cuda_compile nms_kernel.hip
NJ
touch "$t/nms_kernel.hip"
{ echo "Emitting ninja build file $t/build.ninja..."; echo "Compiling objects..."
  (cd "$t" && LANG=C ninja -v 2>&1)
  (cd "$t" && LANG=C bash -c 'bin/hipcc -c nms_kernel.hip -o nms_kernel.o' 2>&1)
} | sed -e "s#$t#/home/user/vision/build/temp.linux-x86_64-cpython-312#g" \
  > "$cases/real-rocm-home-empty-relative-hipcc.log"
rm -rf "$t"
