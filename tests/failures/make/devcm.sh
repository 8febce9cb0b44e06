#!/usr/bin/env bash
# d9 (devcm): CMake's own failure messages, each made by the real cmake on a tiny project:
# find_* REQUIRED, FindPython's components, find_package of packages outside ROCm,
# add_subdirectory of a missing folder, an unknown command, a download hash mismatch, a
# FetchContent clone that fails, a generator mismatch, and (CMake 4, /opt/rf-cmake4, skipped
# when absent) enable_language(HIP) without a GPU. cmake 3.25.1 (Debian 12), a few seconds.
# patchelf, libnuma's headers and library link (numa.h, libnuma.so) and fmt are not installed
# here nor on CI (.ci/run). Writes rounds/d9/cases/real-cmake*.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d9/cases
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
C4=/opt/rf-cmake4/bin/cmake
# case <id> <cmake> [args...]: the CMakeLists.txt from stdin, configured in a fresh folder.
case_() {
  local id=$1 bin=$2; shift 2
  mkdir -p "$t/$id"; cat > "$t/$id/CMakeLists.txt"
  (cd "$t/$id" && "$bin" -S . -B build "$@" 2>&1) \
    | sed -e "s#$t/$id#/home/user/proj#g" -e "s#$t#/tmp/work#g" > "$cases/real-$id.log"
}
case_ cmake-find-program-required cmake <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext NONE)
find_program(PATCHELF_EXECUTABLE NAMES patchelf REQUIRED)
X
case_ cmake-find-library-required cmake <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext C)
find_library(NUMA_LIBRARY NAMES numa REQUIRED)
X
case_ cmake-find-path-required cmake <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext C)
find_path(NUMA_INCLUDE_DIR NAMES numa.h REQUIRED)
X
# A Python without NumPy: a fresh venv (no packages).
python3 -m venv "$t/venv"
case_ cmake-python-numpy-missing cmake -DPython_EXECUTABLE="$t/venv/bin/python" <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext NONE)
find_package(Python REQUIRED COMPONENTS Interpreter NumPy)
X
case_ cmake-python-interpreter-too-old cmake -DPython3_EXECUTABLE="$t/venv/bin/python" <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext NONE)
find_package(Python3 3.99 REQUIRED COMPONENTS Interpreter)
X
case_ cmake-package-config-fmt-missing cmake <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext NONE)
find_package(fmt REQUIRED)
X
case_ cmake-fphsa-gtest-missing cmake -DGTEST_ROOT=/nonexistent <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext C CXX)
find_package(GTest REQUIRED)
X
case_ cmake-add-subdirectory-submodule-missing cmake <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext NONE)
add_subdirectory(third_party/fmt)
X
case_ cmake-unknown-command-rocm-install cmake <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext NONE)
rocm_install(TARGETS ext)
X
case_ cmake-download-hash-mismatch cmake <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext NONE)
file(WRITE ${CMAKE_BINARY_DIR}/served.tar.gz "<html>proxy login</html>")
file(DOWNLOAD file://${CMAKE_BINARY_DIR}/served.tar.gz ${CMAKE_BINARY_DIR}/dep.tar.gz
     EXPECTED_HASH SHA256=4ab4c7c42ee8a8ba5e0a8a2fbc0c2ef9b3f3b3e2c6a3f7f04d2b6d1f4e6c8a9b)
X
case_ cmake-fetchcontent-clone-failed cmake <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext NONE)
include(FetchContent)
FetchContent_Declare(cutlass GIT_REPOSITORY file:///nonexistent/cutlass.git GIT_TAG v3.5.0)
FetchContent_MakeAvailable(cutlass)
X
case_ cmake-notfound-include-dir cmake <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext C)
find_path(NUMA_INCLUDE_DIR numa.h)
file(WRITE ${CMAKE_BINARY_DIR}/a.c "int a(void) { return 0; }")
add_library(ext ${CMAKE_BINARY_DIR}/a.c)
target_include_directories(ext PRIVATE ${NUMA_INCLUDE_DIR})
X
case_ cmake-source-file-missing-submodule cmake <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext CXX)
add_library(fmt STATIC third_party/fmt/src/format.cc third_party/fmt/src/os.cc)
X
case_ cmake-no-sources-empty-glob cmake <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext CXX)
file(GLOB fmt_sources third_party/fmt/src/*.cc)
add_library(fmt STATIC ${fmt_sources})
X
case_ cmake-duplicate-target cmake <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext CXX)
file(WRITE ${CMAKE_BINARY_DIR}/a.cc "int a() { return 0; }")
add_library(fmt STATIC ${CMAKE_BINARY_DIR}/a.cc)
add_library(fmt STATIC ${CMAKE_BINARY_DIR}/a.cc)
X
# cmake pointed at an empty folder (a submodule not checked out).
mkdir -p "$t/empty/third_party/kineto"
(cd "$t/empty" && cmake -S third_party/kineto -B build 2>&1) \
  | sed -e "s#$t/empty#/home/user/pytorch#g" > "$cases/real-cmake-source-dir-no-cmakelists.log"
# clang-22 without LLVM's OpenMP runtime (libomp-22-dev is not installed here nor on CI).
(export CC=clang-22 CXX=clang++-22
case_ cmake-openmp-clang-no-libomp cmake <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext C CXX)
find_package(OpenMP REQUIRED)
X
)
# FetchContent of a URL a local HTTP server (Python's http.server) answers with 404.
mkdir -p "$t/www"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$t/www" && exec python3 -m http.server "$port" --bind 127.0.0.1 >/dev/null 2>&1) &
server=$!
sleep 1
case_ cmake-fetchcontent-url-404 cmake <<X
cmake_minimum_required(VERSION 3.18)
project(ext NONE)
include(FetchContent)
FetchContent_Declare(json URL http://127.0.0.1:$port/json-3.11.3.tar.xz)
FetchContent_MakeAvailable(json)
X
kill "$server"
sed -i -e "s#127.0.0.1:$port#127.0.0.1:8000#g" -e "s#port $port #port 8000 #" -e "s#^  Date: .*#  Date: Sat, 05 Dec 2026 17:20:31 GMT#" \
  "$cases/real-cmake-fetchcontent-url-404.log"
# A toolchain file that does not exist (both CMakes: the path moved to its own line), and a
# generator name CMake does not have.
case_ cmake-toolchain-file-missing cmake -DCMAKE_TOOLCHAIN_FILE=/opt/rocm/share/toolchain.cmake <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext NONE)
X
if [ -x "$C4" ]; then
  (cd "$t/cmake-toolchain-file-missing" && "$C4" -S . -B build4 \
     -DCMAKE_TOOLCHAIN_FILE=/opt/rocm/share/toolchain.cmake 2>&1) \
    | sed -e "s#$t/cmake-toolchain-file-missing#/home/user/proj#g" \
    >> "$cases/real-cmake-toolchain-file-missing.log"
fi
case_ cmake-generator-unknown cmake -G "Ninja Multi" <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext NONE)
X
# include() of rocm-cmake's module without rocm-cmake on the module path, and of a file in a
# submodule folder that is not checked out.
case_ cmake-include-rocm-module-missing cmake <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext NONE)
include(ROCMInstallTargets)
X
case_ cmake-include-file-missing-submodule cmake <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext NONE)
include(third_party/nlohmann/cmake/utils.cmake)
X
# The same build folder configured again with another generator.
case_ cmake-generator-mismatch cmake -G "Unix Makefiles" <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext NONE)
X
(cd "$t/cmake-generator-mismatch" && cmake -S . -B build -G Ninja 2>&1) \
  | sed -e "s#$t/cmake-generator-mismatch#/home/user/proj#g" \
  > "$cases/real-cmake-generator-mismatch.log"
if [ -x "$C4" ]; then
  # CMake 4's wordings of three families: the clone URL on its own line, the .cps file name in
  # find_package's list, FindPython's message from its newer module.
  case_ cmake4-fetchcontent-clone-failed "$C4" <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext NONE)
include(FetchContent)
FetchContent_Declare(cutlass GIT_REPOSITORY file:///nonexistent/cutlass.git GIT_TAG v3.5.0)
FetchContent_MakeAvailable(cutlass)
X
  case_ cmake4-package-config-fmt-missing "$C4" <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext NONE)
find_package(fmt REQUIRED)
X
  case_ cmake4-python-numpy-missing "$C4" -DPython_EXECUTABLE="$t/venv/bin/python" <<'X'
cmake_minimum_required(VERSION 3.18)
project(ext NONE)
find_package(Python REQUIRED COMPONENTS Interpreter NumPy)
X
fi
if [ -x "$C4" ] && [ -x /usr/bin/clang++-22 ]; then
  case_ cmake4-hip-no-default-architecture "$C4" -DCMAKE_HIP_COMPILER=/usr/bin/clang++-22 \
    -DCMAKE_HIP_COMPILER_ROCM_ROOT=/usr <<'X'
cmake_minimum_required(VERSION 3.21)
project(ext HIP)
X
fi
