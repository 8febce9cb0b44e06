#!/usr/bin/env bash
# Look-alikes of the older rules that answer the most corpus cases (issue 40, rv11's review),
# made with the real programs:
#  - torch 2.13 (CPU) sharing a 4 MiB tensor (share_memory_(), as a DataLoader worker does)
#    with a 64 KiB tmpfs on /dev/shm, in a user and mount namespace (unshare -rm): "unable
#    to allocate shared memory(shm) for file </torch_…>: No space left on device (28)".
#    /dev/shm is full, not the work dir's disk (disk-full read it with df -h . $TMPDIR)
#  - bash -x running a CI step that greps a build log for known messages: the trace line
#    "+ grep -c 'No space left on device' build.log" (disk-full) and "+ grep -c 'fatal error:
#    hip/hip_runtime.h: No such file or directory' build.log" (missing-header) only name them
#  - cmake 3.25 with g++-12: check_function_exists(hipMalloc) links CheckFunctionExists.cxx.o
#    without libamdhip64 and fails on purpose; CMakeError.log keeps "undefined reference to
#    `hipMalloc'" (undefined-reference read it as libamdhip64 missing from the link); and its
#    right twin: a program calling hipMalloc linked without -lamdhip64
#  - cmake 3.25 with clang++-22: check_cxx_source_compiles with CMAKE_REQUIRED_FLAGS "-x hip
#    --offload-arch=gfx9999 -nogpulib -nogpuinc", a probe of one target as CK's
#    rocm_check_target_ids makes ("make sure all the targets on the list are actually
#    supported by the current compiler"): "unsupported HIP gpu architecture: gfx9999" in
#    CMakeError.log (unsupported-offload-arch read it); its right twin: the same flags given to
#    a real compile
#  - clang++-22 on the user's own source in a folder named ck (/home/user/ck/src/main.cpp):
#    an undeclared identifier there is not Composable Kernel's (ck-error read /ck/ as CK)
# Needs bash, cmake, g++-12, clang++-22, python3 with torch, unshare and mount (a kernel that
# lets an unprivileged user namespace mount tmpfs, or root). Writes rounds/d11/cases/*.log (the
# .toml answers are committed beside them). About ten seconds (torch's import).
set -u
for tool in bash cmake g++-12 clang++-22 python3 unshare mount; do
  command -v "$tool" > /dev/null || { echo "rv11.sh: $tool is not installed here" >&2; exit 2; }
done
python3 -c 'import torch' 2> /dev/null || { echo "rv11.sh: python3 has no torch" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d11/cases
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
scrub() { sed -e "s#$t#/home/user#g" -e 's#TryCompile-[A-Za-z0-9]*#TryCompile-x#g' \
  -e 's#cmTC_[0-9a-f]*#cmTC_0#g' -e 's#/torch_[0-9_]*#/torch_4242_1234567890_0#g' \
  -e 's#/tmp/cc[A-Za-z0-9]*\.o#/tmp/ccXXXXXX.o#g'; }

cat > "$t/share.py" <<'PY'
import torch
torch.zeros(1 << 20).share_memory_()
PY
(cd "$t" && unshare -rm sh -c 'mount -t tmpfs -o size=64k tmpfs /dev/shm && exec python3 share.py' \
  2>&1) | sed -e 's#File "/[^"]*/site-packages/#File "/usr/lib/python3/site-packages/#' | scrub \
  > "$cases/real-torch-share-memory-dev-shm-full.log"
grep -q 'No space left on device' "$cases/real-torch-share-memory-dev-shm-full.log" || exit 1

printf 'ok\n' > "$t/build.log"
(cd "$t" && bash -xc "grep -c 'No space left on device' build.log; grep -c 'fatal error: \
hip/hip_runtime.h: No such file or directory' build.log; echo 'no known failure'" 2>&1) \
  | scrub > "$cases/neg-bash-x-grep-known-messages.log"

mkdir -p "$t/proj"
printf 'cmake_minimum_required(VERSION 3.10)\nproject(x CXX)\ninclude(CheckFunctionExists)\ncheck_function_exists(hipMalloc HAVE_HIPMALLOC)\n' \
  > "$t/proj/CMakeLists.txt"
(cd "$t/proj" && CXX=g++-12 cmake -S . -B build > /dev/null 2>&1) || exit 1
scrub < "$t/proj/build/CMakeFiles/CMakeError.log" > "$cases/neg-cmake-function-probe-hipmalloc.log"
printf 'extern "C" int hipMalloc(void**, unsigned long);\nint main() { void* p; return hipMalloc(&p, 4); }\n' \
  > "$t/app.cpp"
(cd "$t" && g++-12 -o app app.cpp 2>&1) | scrub > "$cases/real-ld-hipmalloc-without-amdhip64.log"

mkdir -p "$t/ck/src"
printf 'int main() { return undeclared_value; }\n' > "$t/ck/src/main.cpp"
(cd "$t/ck" && clang++-22 -c "$t/ck/src/main.cpp" -o /dev/null 2>&1) | scrub \
  > "$cases/neg-clang-own-folder-named-ck.log"

mkdir -p "$t/arch"
cat > "$t/arch/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.10)
project(x CXX)
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-x hip --offload-arch=gfx9999 -nogpulib -nogpuinc")
check_cxx_source_compiles("int main() { return 0; }" HAVE_GFX9999)
CM
(cd "$t/arch" && CXX=clang++-22 cmake -S . -B build > /dev/null 2>&1) || exit 1
scrub < "$t/arch/build/CMakeFiles/CMakeError.log" > "$cases/neg-cmake-target-probe-offload-arch.log"
(cd "$t/ck" && clang++-22 -x hip --offload-arch=gfx9999 -nogpulib -nogpuinc -c src/main.cpp \
  -o /dev/null 2>&1) | scrub > "$cases/real-clang-offload-arch-gfx9999-unsupported.log"
