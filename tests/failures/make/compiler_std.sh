#!/usr/bin/env bash
# host-compiler: a tree asks for a C++ standard the selected compiler does not know. GCC
# (g++-11) says "unrecognized command-line option '-std=…'", clang (clang++-15) "invalid
# value '…' in '-std=…'"; both run under ninja as a build would run them.
# Writes rounds/d4/cases/real-gcc-std-unknown.log and real-clang-std-unknown.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d4/cases
t=$(mktemp -d)
echo 'int main() { return 0; }' > "$t/Allocator.cpp"
for cxx in g++-11 clang++-15; do
  cat > "$t/build.ninja" <<NJ
rule cxx
  command = /usr/bin/$cxx -std=c++26 -O2 -fPIC -c \$in -o \$out
build c10/core/Allocator.cpp.o: cxx Allocator.cpp
NJ
  name=$([ "$cxx" = g++-11 ] && echo gcc || echo clang)
  (cd "$t" && LANG=C ninja 2>&1) | sed -e "s#$t#/home/user/pytorch/build#g" \
    > "$cases/real-$name-std-unknown.log"
done
rm -rf "$t"
# host-compiler: HIP flags (the ones ROCm's hip::device target adds) reaching GCC, as when a
# project compiles its HIP sources with CXX=g++.
# Writes rounds/d4/cases/real-gcc-given-hip-flags.log
t=$(mktemp -d)
echo 'int main() { return 0; }' > "$t/device_histogram.cpp"
cat > "$t/build.ninja" <<'NJ'
rule cxx
  command = /usr/bin/g++-12 -x hip --offload-arch=gfx1100 --hip-link -O3 -c $in -o $out
build library/src/device_histogram.cpp.o: cxx device_histogram.cpp
NJ
(cd "$t" && LANG=C ninja 2>&1) | sed -e "s#$t#/home/user/rocPRIM/build#g" \
  > "$cases/real-gcc-given-hip-flags.log"
rm -rf "$t"
