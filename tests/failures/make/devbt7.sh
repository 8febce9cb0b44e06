#!/usr/bin/env bash
# Build-side message families of issue 40 (r15 after, devbt7), made with the real programs:
#  - g++-12 -x hip: GCC's driver "language hip not recognized" (host-compiler:
#    hip-language-to-gcc)
#  - clang++-22 -x hip --offload-arch=gfx942 -fsanitize=address -Werror: -Woption-ignored as
#    an error (gpu-target: offload-option-needs-feature); the same without -Werror is only a
#    warning (a negative: nothing claimed)
# Writes rounds/d9/cases/real-*.log (the .toml answers are committed beside them).
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d9/cases
t=$(mktemp -d)
echo '__global__ void k() {}' > "$t/k.hip"
(cd "$t" && g++-12 -x hip -c k.hip -o k.o 2>&1) > "$cases/real-gcc-language-hip.log"
(cd "$t" && clang++-22 -x hip --offload-arch=gfx942 -fsanitize=address -Werror -nogpulib \
  -nogpuinc -fsyntax-only -D__global__= k.hip 2>&1) > "$cases/real-clang-asan-gfx942-werror.log"
(cd "$t" && clang++-22 -x hip --offload-arch=gfx942 -fsanitize=address -nogpulib \
  -nogpuinc -fsyntax-only -D__global__= k.hip 2>&1) > "$cases/neg-real-clang-asan-gfx942-warning.log"
rm -rf "$t"
