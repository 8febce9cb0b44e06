#!/usr/bin/env bash
# Build-side message families of issue 40 (r13 after, devbt5), made with the real programs:
#  - automake's `missing` wrapper (lib/missing of autotools-mirror/automake@906573c9) run by
#    make for a bison rule with no bison on PATH (missing-component: automake-tool-missing)
#  - clang++-22 and g++-12 on std::reverse without <algorithm>
#    (host-compiler: std-member-missing)
#  - gcc 12 -O2 -Wall -Werror on an out-of-bounds subscript (host-compiler: gcc-warning-as-error)
#  - cmake 3.25.1: include(${CMAKE_MODULE_PATH}/X.cmake) with a three-entry module path
#    (cmake: cmake-include-list-argument)
#  - cpack 3.25.1 -G RPM without rpmbuild (cmake: cpack-rpmbuild-missing)
#  - lld-link-22 on a Release object and a Debug library member (clang-cl-22 #pragma
#    detect_mismatch, as MSVC's headers record _ITERATOR_DEBUG_LEVEL)
#    (link: lld-link-failifmismatch)
#  - clang-cl-22 on a source that declares its own __builtin_clz (an MSVC fallback)
#    (host-compiler: clang-builtin-redeclared)
# Writes rounds/d8/cases/real-*.log (the .toml answers are committed beside them).
# Needs the automake mirror at /work/.mirror/autotools-mirror+automake/repo.
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d8/cases
t=$(mktemp -d)
mkdir -p "$t/bu"
git -C /work/.mirror/autotools-mirror+automake/repo show \
  906573c97a006d4e734d24ce2a1ed493b4961497:lib/missing > "$t/bu/missing"
chmod +x "$t/bu/missing"
printf 'defparse.c: defparse.y\n\t$(SHELL) ./missing bison -d defparse.y -o $@\n' \
  > "$t/bu/Makefile"
printf '%%%%\n' > "$t/bu/defparse.y"
(cd "$t/bu" && PATH=/usr/bin:/bin env -u MAKEFLAGS make -C "$t/bu" defparse.c 2>&1) \
  | grep -v "^make: Entering\|^make: Leaving" | sed -e "s#$t/bu#/home/user/binutils/build#g" \
  > "$cases/real-automake-missing-bison.log"
mkdir -p "$t/src"
printf '#include <vector>\nvoid flip(std::vector<int>& v) { std::reverse(v.begin(), v.end()); }\n' \
  > "$t/src/context.cpp"
(cd "$t/src" && clang++-22 -fsyntax-only context.cpp 2>&1) \
  > "$cases/real-clang-std-reverse-without-algorithm.log"
(cd "$t/src" && g++-12 -fsyntax-only context.cpp 2>&1) \
  > "$cases/real-gcc-std-reverse-without-algorithm.log"
printf 'int table[1];\nint pick(void) { return table[2]; }\n' > "$t/src/pick.c"
(cd "$t/src" && gcc-12 -O2 -Wall -Werror -c pick.c -o pick.o 2>&1) \
  > "$cases/real-gcc-werror-array-bounds.log"
mkdir -p "$t/inc/cmake/modules"
echo 'message(STATUS "utilities")' > "$t/inc/cmake/modules/Utilities.cmake"
cat > "$t/inc/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(sub NONE)
list(APPEND CMAKE_MODULE_PATH "/src/parent/cmake/Modules" "/src/parent/cmake/public")
list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_SOURCE_DIR}/cmake/modules")
include(${CMAKE_MODULE_PATH}/Utilities.cmake)
CM
(cmake -S "$t/inc" -B "$t/incb" 2>&1) | sed -e "s#$t/incb#/src/parent/build#g" \
  -e "s#$t/inc#/src/parent/third_party/sub#g" > "$cases/real-cmake-include-list-argument.log"
mkdir -p "$t/rpm"
cat > "$t/rpm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(thunk C)
file(WRITE ${CMAKE_BINARY_DIR}/a.c "int a(void) { return 0; }\n")
add_library(thunk SHARED ${CMAKE_BINARY_DIR}/a.c)
install(TARGETS thunk DESTINATION lib)
set(CPACK_PACKAGE_CONTACT "dev")
set(CPACK_GENERATOR "RPM")
include(CPack)
CM
cmake -S "$t/rpm" -B "$t/rpmb" > /dev/null 2>&1
(env -u MAKEFLAGS make -C "$t/rpmb" package 2>&1) | sed -e "s#$t/rpmb#/home/user/thunk/build#g" \
  -e "s#$t/rpm#/home/user/thunk#g" > "$cases/real-cpack-rpmbuild-missing.log"
mkdir -p "$t/fm"
printf '#pragma detect_mismatch("_ITERATOR_DEBUG_LEVEL", "0")\nint helper(void);\n%s\n' \
  'int main(void) { return helper(); }' > "$t/fm/test.cpp"
printf '#pragma detect_mismatch("_ITERATOR_DEBUG_LEVEL", "2")\nint helper(void) { return 1; }\n' \
  > "$t/fm/gtest-all.cc"
(cd "$t/fm" && clang-cl-22 --target=x86_64-pc-windows-msvc /c /Zl test.cpp /Fotest.cpp.obj \
  && clang-cl-22 --target=x86_64-pc-windows-msvc /c /Zl gtest-all.cc /Fogtest-all.cc.obj \
  && llvm-lib-22 /out:gtestd.lib gtest-all.cc.obj \
  && lld-link-22 /entry:main /subsystem:console test.cpp.obj gtestd.lib /out:test.exe 2>&1) \
  > "$cases/real-lld-link-failifmismatch-debug-library.log"
printf '%s\n' '#include <stddef.h>' \
  'inline unsigned int __builtin_clz(unsigned int x) { return x ? 0u : 32u; }' \
  'int main() { return 0; }' > "$t/fm/arena.cpp"
(cd "$t/fm" && clang-cl-22 --target=x86_64-pc-windows-msvc /Zs arena.cpp 2>&1) \
  > "$cases/real-clang-cl-builtin-clz-fallback.log"
rm -rf "$t"
