#!/usr/bin/env bash
# host-compiler / rocm-install: CMAKE_CXX_COMPILER names a compiler that does not exist: a
# ROCm hipcc of a release that is not installed (rocm-install), and a g++-13 that is not
# installed (host-compiler); cmake 3.25.1 and CMake 4 (/opt/rf-cmake4).
# Writes rounds/d4/cases/real-cmake-cxx-compiler-{hipcc,gcc}-missing.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d4/cases
t=$(mktemp -d)
printf 'cmake_minimum_required(VERSION 3.18)\nproject(Torch CXX C)\n' > "$t/CMakeLists.txt"
(cd "$t" && cmake -S . -B b1 -DCMAKE_CXX_COMPILER=/opt/rocm-6.2.0/bin/hipcc 2>&1) \
  | sed -e "s#$t#/home/user/pytorch#g" > "$cases/real-cmake-cxx-compiler-hipcc-missing.log"
(cd "$t" && /opt/rf-cmake4/bin/cmake -S . -B b2 -DCMAKE_CXX_COMPILER=/usr/bin/g++-13 2>&1) \
  | sed -e "s#$t#/home/user/pytorch#g" > "$cases/real-cmake-cxx-compiler-gcc-missing.log"
rm -rf "$t"
