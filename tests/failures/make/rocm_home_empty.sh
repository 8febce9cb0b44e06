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
# The same command under bash with the UI in Russian (a localedef locale; glibc's libc.mo
# translates strerror and bash's own bash.mo "line"), as rocm-arch#865's log shows it.
# Writes rounds/d4/cases/real-rocm-home-empty-relative-hipcc-ru.log
t=$(mktemp -d)
localedef -i ru_RU -f UTF-8 "$t/ru_RU.UTF-8" >/dev/null 2>&1
(cd "$t" && LOCPATH="$t" LC_ALL=ru_RU.UTF-8 bash -c 'bin/hipcc -c nms_kernel.hip -o nms_kernel.o' 2>&1) \
  > "$cases/real-rocm-home-empty-relative-hipcc-ru.log"
rm -rf "$t"
