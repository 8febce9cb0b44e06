#!/usr/bin/env bash
# out-of-memory: g++ 12 compiling a template-heavy file inside a Ninja build (cmake 3.25.1 --build).
#  real-oom-virtual-memory-exhausted: the build runs under `prlimit --as=600000000` (600 MB of
#    address space); cc1plus runs out and prints GCC's own message.
#  real-oom-cc1plus-killed: no limit, a deeper instantiation (needs ~8 GB, runs ~30 min); once
#    cc1plus has run 5 s it is sent SIGKILL, which is what the kernel's OOM killer does.
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../cases
export HIP_PLATFORM=amd
t=$(mktemp -d)
mk() {  # $1 dir, $2 depth
  mkdir -p "$1/aten/src/ATen/native/hip"
  cat > "$1/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(Torch CXX)
add_library(torch_hip SHARED aten/src/ATen/native/hip/Reduce.cpp)
target_compile_options(torch_hip PRIVATE -ftemplate-depth=100000)
CM
  cat > "$1/aten/src/ATen/native/hip/Reduce.cpp" <<CPP
#include <tuple>
#include <utility>
template <int N> struct Node {
  using Prev = Node<N - 1>;
  std::tuple<int, double, typename Prev::type> v;
  using type = decltype(std::tuple_cat(std::tuple<int>{}, std::tuple<typename Prev::type>{}));
  static int value() { return Prev::value() + N; }
};
template <> struct Node<0> { using type = int; static int value() { return 0; } };
int reduce_kernel_instances() { return Node<$2>::value(); }
CPP
  cmake -G Ninja -S "$1" -B "$1/build" -DCMAKE_BUILD_TYPE=Release >/dev/null 2>&1
}
mk "$t/a" 600
(cd "$t/a" && prlimit --as=600000000 cmake --build build 2>&1) \
  | sed -e "s#$t/a#/home/user/pytorch#g" > "$cases/real-oom-virtual-memory-exhausted.log"
mk "$t/b" 3000
(cd "$t/b" && exec cmake --build build > "$t/b.out" 2>&1) &
build=$!
descendants() { local c; for c in $(pgrep -P "$1"); do echo "$c"; descendants "$c"; done; }
cc1=""
for _ in $(seq 1 120); do
  for p in $(descendants "$build"); do
    [ "$(cat /proc/$p/comm 2>/dev/null)" = cc1plus ] && cc1=$p
  done
  [ -n "$cc1" ] && break
  sleep 0.5
done
sleep 5
[ -n "$cc1" ] && kill -KILL "$cc1"
wait "$build"
sed -e "s#$t/b#/home/user/pytorch#g" "$t/b.out" > "$cases/real-oom-cc1plus-killed.log"
rm -rf "$t"
