#!/usr/bin/env bash
# missing-component: find_package(HIP 1.0) finds a hip-config.cmake 6.0.0 whose version file
# (write_basic_package_version_file, COMPATIBILITY SameMajorVersion) refuses 1.0, as a
# distribution's split HIP package can. The lookup sits in cmake/public/LoadHIP.cmake, not
# REQUIRED (a CMake Warning, as in PyTorch), and again REQUIRED (a CMake Error), with
# cmake 3.25 (system) and CMake 4 (/opt/rf-cmake4).
# Writes rounds/d4/cases/real-cmake-refused-hip-version-{warning,error}.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d4/cases
t=$(mktemp -d)
mkdir -p "$t/pkg" "$t/prefix/lib/cmake/hip" "$t/src/cmake/public"
cat > "$t/pkg/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(hipver NONE)
include(CMakePackageConfigHelpers)
write_basic_package_version_file(${OUT}/hip-config-version.cmake VERSION 6.0.0
                                 COMPATIBILITY SameMajorVersion)
file(WRITE ${OUT}/hip-config.cmake "set(HIP_FOUND TRUE)\n")
CM
cmake -S "$t/pkg" -B "$t/pkgb" -DOUT="$t/prefix/lib/cmake/hip" >/dev/null
cat > "$t/src/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(Torch NONE)
include(cmake/public/LoadHIP.cmake)
CM
cat > "$t/src/cmake/public/LoadHIP.cmake" <<'CM'
macro(find_package_and_print_version PACKAGE_NAME)
  find_package("${PACKAGE_NAME}" ${ARGN})
  message("${PACKAGE_NAME} VERSION: ${${PACKAGE_NAME}_VERSION}")
endmacro()
find_package_and_print_version(HIP 1.0 ${HIP_REQUIRED})
if(NOT HIP_FOUND)
  message(FATAL_ERROR "HIP not found")
endif()
CM
run() {  # cmake binary, extra args
  (cd "$t/src" && "$1" -S . -B "$t/b$RANDOM" -DCMAKE_PREFIX_PATH="$t/prefix" "${@:2}" 2>&1) \
    | sed -e "s#$t/prefix#/usr#g" -e "s#$t/src#/home/user/pytorch#g" -e "s#$t/b[0-9]*#/home/user/pytorch/build#g"
}
{ echo "\$ cmake --version: $(cmake --version | head -1)"; run cmake
  echo "\$ CMake 4: $(/opt/rf-cmake4/bin/cmake --version | head -1)"; run /opt/rf-cmake4/bin/cmake
} > "$cases/real-cmake-refused-hip-version-warning.log"
{ run /opt/rf-cmake4/bin/cmake -DHIP_REQUIRED=REQUIRED; } > "$cases/real-cmake-refused-hip-version-error.log"
rm -rf "$t"
# The same LoadHIP.cmake lookup with no HIP config at all in the prefix (cmake 3.25.1): the
# CMake Warning "Could not find a package configuration file provided by "HIP"".
# Writes rounds/d4/cases/real-cmake-loadhip-no-hip-config.log
t=$(mktemp -d)
mkdir -p "$t/prefix" "$t/src/cmake/public"
printf 'cmake_minimum_required(VERSION 3.18)\nproject(Torch NONE)\ninclude(cmake/public/LoadHIP.cmake)\n' > "$t/src/CMakeLists.txt"
cat > "$t/src/cmake/public/LoadHIP.cmake" <<'CM'
macro(find_package_and_print_version PACKAGE_NAME)
  find_package("${PACKAGE_NAME}" ${ARGN})
  message("${PACKAGE_NAME} VERSION: ${${PACKAGE_NAME}_VERSION}")
endmacro()
find_package_and_print_version(HIP 1.0)
CM
(cd "$t/src" && cmake -S . -B "$t/b" -DCMAKE_PREFIX_PATH="$t/prefix" 2>&1) \
  | sed -e "s#$t/src#/home/user/pytorch#g" -e "s#$t/b#/home/user/pytorch/build#g" \
  > "$cases/real-cmake-loadhip-no-hip-config.log"
rm -rf "$t"
