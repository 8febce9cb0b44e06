#!/usr/bin/env bash
# rocm-install: a ROCm package's CMake files declare an imported target whose library is not
# on disk. Real cmake installs a tiny library as the exported target hip::hipfft (the namespace
# and name ROCm's hipfft uses), the library file is removed (a component not installed), and
# a consumer's find_package(hipfft) stops in the generated hipfft-targets.cmake.
# Writes rounds/d8/cases/real-rocm-imported-target-file-missing.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d8/cases
t=$(mktemp -d)
mkdir -p "$t/lib" "$t/use"
cat > "$t/lib/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(hipfft C)
add_library(hipfft SHARED fft.c)
install(TARGETS hipfft EXPORT hipfft-targets LIBRARY DESTINATION lib)
install(EXPORT hipfft-targets NAMESPACE hip:: DESTINATION lib/cmake/hipfft)
file(WRITE ${CMAKE_BINARY_DIR}/hipfft-config.cmake
     "include(\${CMAKE_CURRENT_LIST_DIR}/hipfft-targets.cmake)\n")
install(FILES ${CMAKE_BINARY_DIR}/hipfft-config.cmake DESTINATION lib/cmake/hipfft)
CM
echo 'int hipfft_version(void) { return 1; }' > "$t/lib/fft.c"
cat > "$t/use/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(use C)
find_package(hipfft CONFIG REQUIRED)
CM
cmake -S "$t/lib" -B "$t/lib/b" -DCMAKE_INSTALL_PREFIX="$t/opt/rocm" >/dev/null 2>&1
cmake --build "$t/lib/b" --target install >/dev/null 2>&1
rm -f "$t"/opt/rocm/lib/libhipfft.so*
(LANG=C cmake -S "$t/use" -B "$t/use/b" -DCMAKE_PREFIX_PATH="$t/opt/rocm" 2>&1) \
  | sed -e "s#$t/opt/rocm#/opt/rocm-7.1.0#g" -e "s#$t#/home/user/proj#g" \
  > "$cases/real-rocm-imported-target-file-missing.log"
rm -rf "$t"
