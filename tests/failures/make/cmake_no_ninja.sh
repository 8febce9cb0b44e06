#!/usr/bin/env bash
# cmake: configure with -G Ninja where no ninja is on PATH (a PATH holding only cmake), as a
# build venv without the ninja package does; cmake 3.25.1 and CMake 4 (/opt/rf-cmake4).
# Writes rounds/d4/cases/real-cmake-no-ninja.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d4/cases
t=$(mktemp -d)
mkdir -p "$t/bin" "$t/src"
ln -s /usr/bin/cmake "$t/bin/cmake"; ln -s /opt/rf-cmake4/bin/cmake "$t/bin/cmake4"
printf 'cmake_minimum_required(VERSION 3.18)\nproject(Torch CXX C)\n' > "$t/src/CMakeLists.txt"
{ (cd "$t/src" && env PATH="$t/bin" cmake -G Ninja -S . -B build 2>&1)
  (cd "$t/src" && env PATH="$t/bin" cmake4 -G Ninja -S . -B build4 2>&1)
} | sed -e "s#$t/src#/home/user/pytorch#g" > "$cases/real-cmake-no-ninja.log"
rm -rf "$t"
