#!/usr/bin/env bash
# Build-side shapes of the r8/r9 misses, made with the real programs here (dev pool d6, not
# blind): cmake 3.25.1 (a deprecation turned error, an unknown policy, a non-existent target),
# ninja + clang-22 + ld.lld 22 (a stale version-script entry, a non-PIC object in a shared
# library), a copy of clang-22's driver without ld.lld beside it or on PATH (an amdgcn link),
# and torch 2.13's torch.utils.hipify (an argument it does not take, a listed source missing).
# Writes rounds/d6/cases/real-*.log; the .toml answers are committed beside them.
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d6/cases
mkdir -p "$cases"
t=$(mktemp -d)
hide() { sed -e "s#$t#/home/user/src#g"; }

# cmake: cmake_minimum_required(VERSION 2.8) under -Werror=deprecated.
mkdir -p "$t/dep" && printf 'cmake_minimum_required(VERSION 2.8)\nproject(demo NONE)\n' \
  > "$t/dep/CMakeLists.txt"
(cd "$t/dep" && cmake -Werror=deprecated -S . -B build 2>&1) | grep -v '^See also' | hide \
  > "$cases/real-cmake-deprecation-error-werror.log"

# cmake: a policy newer than this CMake (CMP0144 came with 3.27).
mkdir -p "$t/pol" && printf 'cmake_minimum_required(VERSION 3.20)\nproject(demo NONE)\n%s\n' \
  'cmake_policy(SET CMP0144 NEW)' > "$t/pol/CMakeLists.txt"
(cd "$t/pol" && cmake -S . -B build 2>&1) | grep -v '^See also' | hide \
  > "$cases/real-cmake-unknown-policy-cmp0144.log"

# cmake: get_target_property on a target no subproject defined.
mkdir -p "$t/tgt" && printf 'cmake_minimum_required(VERSION 3.20)\nproject(demo NONE)\n%s\n' \
  'get_target_property(_type rocm-llvm-tools TYPE)' > "$t/tgt/CMakeLists.txt"
(cd "$t/tgt" && cmake -S . -B build 2>&1) | grep -v '^See also' | hide \
  > "$cases/real-neg-cmake-nonexistent-target.log"

# ninja + ld.lld: a version script naming a symbol the objects no longer define, and an
# object compiled without -fPIC linked into a shared library.
mkdir -p "$t/lnk" && cd "$t/lnk" || exit 1
printf 'int hipKept(void) { return 1; }\n' > kept.c
printf 'hip_4.2 { global: hipKept; hipTexRefGetArray; local: *; };\n' > hip_hcc.map
printf 'static const int table[4] = {1, 2, 3, 4};\nint lookup(int i) { return table[i]; }\n' \
  > lookup.c
cat > build.ninja <<'EOF'
rule cc
  command = clang-22 $flags -c $in -o $out
rule so
  command = clang-22 -shared -fuse-ld=lld $flags -o $out $in
build kept.o: cc kept.c
  flags = -fPIC -O2
build lib/libamdhip64.so.6.0.1: so kept.o
  flags = -Wl,-soname,libamdhip64.so.6 -Wl,--version-script=$$PWD/hip_hcc.map
build lookup.o: cc lookup.c
  flags = -fno-pic -O1
build lib/libkernels_shared.so: so lookup.o
  flags = -Wl,-soname,libkernels_shared.so
EOF
ninja -k 0 lib/libamdhip64.so.6.0.1 2>&1 | hide > "$cases/real-lld-undefined-version-script.log"
ninja -k 0 lib/libkernels_shared.so 2>&1 | hide > "$cases/real-lld-not-pic-object-shared.log"

# clang's driver without ld.lld: a copy of the driver in a folder of its own, PATH without LLVM.
mkdir -p "$t/tc" && cp /usr/lib/llvm-22/bin/clang "$t/tc/clang-22"
printf 'int k(int a) { return a + 1; }\n' > "$t/k.c"
(cd "$t" && PATH=/usr/bin:/bin ./tc/clang-22 --target=amdgcn-amd-amdhsa -mcpu=gfx900 \
  -nogpulib k.c -o k.co 2>&1) | hide > "$cases/real-clang-ld-lld-missing-amdgcn.log"

# torch.utils.hipify: an argument this torch's hipify() does not take, and a listed source
# that is not in the tree.
mkdir -p "$t/ext/csrc" && printf '#include <cuda_runtime.h>\nint f() { return 0; }\n' \
  > "$t/ext/csrc/ops.cu"
(cd "$t/ext" && python3 - "$t/ext" 2>&1 <<'EOF'
import sys
from torch.utils.hipify.hipify_python import hipify
hipify(project_directory=sys.argv[1], output_directory=sys.argv[1], includes=["csrc/*"],
       is_pytorch_extension=True, hipify_only_listed_files=True)
EOF
) | hide > "$cases/real-hipify-unknown-argument.log"
(cd "$t/ext" && python3 - "$t/ext" 2>&1 <<'EOF'
import sys
from torch.utils.hipify.hipify_python import hipify
root = sys.argv[1]
hipify(project_directory=root, output_directory=root, includes=[root + "/*"],
       extra_files=[root + "/csrc/selective_kernel.cu"], is_pytorch_extension=True)
EOF
) | hide > "$cases/real-hipify-listed-source-missing.log"
cd / && rm -rf "$t"
