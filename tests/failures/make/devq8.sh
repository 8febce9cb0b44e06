#!/usr/bin/env bash
# The same conditions in the other compiler's or linker's words (d10, devq8): each condition a
# rule was written from, made here with the tool whose wording the rule missed.
#  g++-12 -nostdinc++: GCC's "fatal error: cstdint: No such file or directory" (clang: "'cstdint'
#    file not found").
#  g++-12 on `static SHARED alignas(16) D smem[4]` (SHARED a GNU attribute): "standard attributes
#    in middle of decl-specifiers" (clang: "'alignas' attribute cannot be applied to types").
#  g++-12 given clang's HIP option --cuda-device-only (the build's HIP flags reached GCC).
#  ld.gold, a position-dependent object with a local symbol linked -shared: "requires dynamic
#    R_X86_64_32 reloc which may overflow at runtime" (no "against '<sym>'").
#  ld.gold and ld.lld given -l:libamdhip64.so.6 that is not there: gold names the file alone
#    ("cannot find libamdhip64.so.6"), lld keeps the colon ("-l:libamdhip64.so.6").
#  clang++-22 --ld-path=<missing file>: "invalid linker name in argument '--ld-path=...'".
#  ld.gold and ld.lld on a source and its hipified twin (ops.cpp, ops_hip.cpp) both linked: gold's
#    "<obj>: multiple definition of '<sym>'", lld's "duplicate symbol" then ">>> defined at".
#  clang-22 with no ld / as on PATH: "unable to execute command: posix_spawn failed: No such
#    file or directory", then "linker (assembler) command failed with exit code 1".
# Cases go to rounds/d10/cases; a few seconds. Refuses to run without its tools.
set -u
for tool in g++-12 gcc-12 clang-22 clang++-22 ld.gold /usr/lib/llvm-22/bin/ld.lld; do
  command -v "$tool" > /dev/null || { echo "devq8.sh: $tool is not installed" >&2; exit 2; }
done
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d10/cases
mkdir -p "$cases"
t=$(mktemp -d)
cd "$t" || exit 1
lld=(-fuse-ld=lld -B/usr/lib/llvm-22/bin/)

printf '#include <cstdint>\nstd::uint32_t mask(std::uint32_t x) { return x & 0xffu; }\n' > bits.cpp
g++-12 -nostdinc++ -c bits.cpp -o bits.o > "$cases/real-gcc-cstdint-no-such-file.log" 2>&1

printf '#define SHARED __attribute__((used))\nstruct D { float x; };\nvoid f() { static SHARED alignas(16) D smem[4]; (void)smem; }\n' > shared.cpp
g++-12 -std=c++17 -c shared.cpp -o shared.o > "$cases/real-gcc-alignas-after-gnu-attribute.log" 2>&1

printf 'int probe_device(int x) { return x; }\n' > device.cpp
g++-12 --cuda-device-only -c device.cpp -o device.o \
  > "$cases/real-gcc-hip-cuda-device-only.log" 2>&1

printf 'static int counter;\nint *counter_ptr() { return &counter; }\n' > state.cpp
g++-12 -fno-pic -fno-PIE -c state.cpp -o state.o
g++-12 -fuse-ld=gold -shared state.o -o libstate.so \
  > "$cases/real-gold-not-pic-local-symbol.log" 2>&1

printf 'int main() { return 0; }\n' > main.cpp
g++-12 -c main.cpp -o main.o
g++-12 -fuse-ld=gold main.o -l:libamdhip64.so.6 -o app \
  > "$cases/real-gold-cannot-find-l-colon-file.log" 2>&1
g++-12 "${lld[@]}" main.o -l:libamdhip64.so.6 -o app \
  > "$cases/real-lld-cannot-find-l-colon-file.log" 2>&1

clang++-22 --ld-path=/opt/llvm/bin/ld.lld main.o -o app \
  > "$cases/real-clang-ld-path-missing.log" 2>&1

printf 'int roi_align_forward(int n) { return n * 2; }\n' > roi_align.cpp
cp roi_align.cpp roi_align_hip.cpp
for f in roi_align roi_align_hip; do g++-12 -c "$f.cpp" -o "$f.o"; done
g++-12 -fuse-ld=gold main.o roi_align.o roi_align_hip.o -o app \
  > "$cases/real-gold-hipified-twin-duplicate.log" 2>&1
g++-12 "${lld[@]}" main.o roi_align.o roi_align_hip.o -o app \
  > "$cases/real-lld-hipified-twin-duplicate.log" 2>&1

printf 'int main(void) { return 0; }\n' > probe.c
gcc-12 -c probe.c -o probe.o
cc=$(command -v clang-22)
env PATH=/nonexistent "$cc" probe.o -o probe > "$cases/real-clang-spawn-ld-missing.log" 2>&1
env PATH=/nonexistent "$cc" -fno-integrated-as -c probe.c -o probe.o \
  > "$cases/real-clang-spawn-as-missing.log" 2>&1

for f in "$cases"/real-*.log; do
  sed -i -e "s#$t#/home/user/src#g" "$f"
done
rm -rf "$t"
