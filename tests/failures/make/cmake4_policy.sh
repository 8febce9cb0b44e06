#!/usr/bin/env bash
# cmake: CMake 4.x from PyPI (pip install 'cmake>=4,<5' in /tmp/cmake4) configuring a tree whose
# top level asks for 3.18 but a third_party subdirectory still says
# cmake_minimum_required(VERSION 3.4): CMake 4 removed compatibility with CMake < 3.5.
# Writes cases/real-cmake4-policy-minimum.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../cases
export HIP_PLATFORM=amd
[ -x /tmp/cmake4/bin/cmake ] || { python3 -m venv /tmp/cmake4 && /tmp/cmake4/bin/pip install -q 'cmake>=4,<5'; }
t=$(mktemp -d)
mkdir -p "$t/third_party/oldlib"
cat > "$t/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18 FATAL_ERROR)
project(Torch CXX C)
add_subdirectory(third_party/oldlib)
CM
cat > "$t/third_party/oldlib/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.4)
project(oldlib C)
add_library(oldlib STATIC oldlib.c)
CM
echo 'int oldlib(void) { return 0; }' > "$t/third_party/oldlib/oldlib.c"
(cd "$t" && /tmp/cmake4/bin/cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release 2>&1) \
  | sed -e "s#$t#/home/user/pytorch#g" > "$cases/real-cmake4-policy-minimum.log"
rm -rf "$t"
