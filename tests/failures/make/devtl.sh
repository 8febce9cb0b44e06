#!/usr/bin/env bash
# Build tools, compilers and linkers failing the way they fail in a ROCm/PyTorch source build
# (issue 40, devtl), each made with the real program on Debian 12:
#  - a program a recipe runs is not installed: dash via make (bison), make's own exec (flex),
#    bash (gperf), dash under a ninja edge (patchelf) (missing-component: recipe-program-missing)
#  - meson 1.12 (pip's; .ci/run installs it): a required dependency() and find_program() not
#    found (missing-component: meson-dependency-missing, meson-program-missing)
#  - a system library's header missing: Python.h (g++-12), numa.h and omp.h (clang-22),
#    libelf.h (gcc-12) (missing-component: system-header-missing)
#  - a flag the compiler does not know: g++-12, clang++-15 (unknown option), g++-11
#    -march=znver5, clang++-15 -mllvm (host-compiler: compiler-option-unknown, ...)
#  - clang++-22 -Werror, a #error asking for C++17 (g++-12) and libstdc++'s C++11 #error
#    and std::optional under -std=c++14 (host-compiler: clang-warning-as-error,
#    cxx-standard-required, std-name-needs-newer-cxx)
#  - clang-22 given -std=c++17 for a C source (host-compiler: std-flag-wrong-language)
#  - a header's #error refusing the GCC / clang release (host-compiler: compiler-version-refused)
#  - GNU ld's "DSO missing from command line"; gcc -fuse-ld=lld without ld.lld and clang
#    -fuse-ld=mold; make and ninja given a library file that does not exist
#  - automake without libtool (LIBTOOL undefined) and a configure made without pkg.m4
#    (missing-component: automake-macro-undefined, configure-macro-unexpanded)
#  - GNU ld linking against a library that needs a newer libstdc++ symbol version (a stand-in
#    libstdc++ with GLIBCXX_3.4.99) (link: undefined-reference); gcc-12 with no `as` on PATH
#    (missing-component: compiler-driver-program-missing)
#  - GNU ld: a library's DT_NEEDED dependency in a folder the link does not search
#    (link: link-needed-library-not-found)
# Look-alikes that must claim nothing: make ignoring a missing program's 127 (`-cmd`),
# meson's optional dependency and program, clang warnings without -Werror, gcc's warning for
# -std=c++17 on a C source.
# Writes rounds/d9/cases/real-*.log and neg-*.log (the .toml answers are committed beside
# them). Needs: make, ninja, gcc-11/12, clang-15/22, binutils, autoconf, automake, and meson
# on PATH or in $MESON (a venv's bin/meson).
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d9/cases
mkdir -p "$cases"
meson=${MESON:-meson}
for tool in "$meson" autoconf automake make ninja; do
  command -v "$tool" >/dev/null || { echo "devtl.sh: $tool is not installed (see .ci/run); no case written" >&2; exit 2; }
done
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
export LC_ALL=C.UTF-8
bare=/usr/bin:/bin  # a PATH without /usr/local (no bison, flex, gperf, patchelf, ld.lld here)
nomake() { env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS "$@"; }
san() { sed -e "s#$t#/home/user/build#g" -e 's#/tmp/cc[A-Za-z0-9]*\.o#/tmp/ccXXXXXX.o#g'; }
# one ninja edge running "$2" in folder $1 (ninja prints FAILED, the command, its output)
edge() {
  local dir=$1 out=$2; shift 2
  printf 'rule run\n  command = %s\nbuild %s: run\n' "$*" "$out" > "$dir/build.ninja"
  (cd "$dir" && PATH=$bare ninja 2>&1) | san
}
case_log() { cat > "$cases/$1.log"; }

mkdir -p "$t/m1" "$t/m2" "$t/m3" "$t/m4" "$t/n1"
printf 'gram.c: gram.y\n\tcd . && bison -d -o $@ gram.y\n' > "$t/m1/Makefile"
touch "$t/m1/gram.y"
(cd "$t/m1" && PATH=$bare nomake make --no-print-directory 2>&1) | san | case_log real-sh-bison-not-found
printf 'scan.c: scan.l\n\tflex -o $@ scan.l\n' > "$t/m2/Makefile"
touch "$t/m2/scan.l"
(cd "$t/m2" && PATH=$bare nomake make --no-print-directory 2>&1) | san | case_log real-make-flex-no-such-file
printf 'SHELL = /bin/bash\nkeywords.c: keywords.gperf\n\tgperf keywords.gperf > $@\n' > "$t/m3/Makefile"
touch "$t/m3/keywords.gperf"
(cd "$t/m3" && PATH=$bare nomake make --no-print-directory 2>&1) | san | case_log real-bash-gperf-not-found
edge "$t/n1" _rocm_sdk_core.stamp 'cd . && patchelf --set-rpath \$$ORIGIN lib/libfoo.so && touch _rocm_sdk_core.stamp' \
  | case_log real-ninja-patchelf-not-found
# make runs `-doxygen --version` (docs are optional) and goes on: "Error 127 (ignored)" proves nothing
printf 'all:\n\t-doxygen --version\n\t@echo built\n' > "$t/m4/Makefile"
(cd "$t/m4" && PATH=$bare nomake make --no-print-directory 2>&1) | san | case_log neg-make-ignored-missing-program

# meson
mkdir -p "$t/ms1" "$t/ms2" "$t/ms3"
printf "project('amdgpu_probe', 'c')\ndrm = dependency('libdrm_amdgpu')\n" > "$t/ms1/meson.build"
printf "project('gram', 'c')\nbison = find_program('bison')\n" > "$t/ms2/meson.build"
printf "project('opt', 'c')\n%s\n%s\nmessage('optional parts off')\n" \
  "numa = dependency('numa', required: false)" "find_program('bison', required: false)" \
  > "$t/ms3/meson.build"
for d in ms1 ms2 ms3; do
  (cd "$t/$d" && PATH=$bare:$(dirname "$(command -v "$meson")") PKG_CONFIG_PATH= \
    "$meson" setup build 2>&1) | grep -v "^The Meson build system\|^Version:\|^Source dir\|^Build dir" \
    | sed -e 's#/usr/bin/ccache ##' | san > "$t/$d.log"
done
case_log real-meson-dependency-libdrm-amdgpu-missing < "$t/ms1.log"
case_log real-meson-program-bison-missing < "$t/ms2.log"
case_log neg-meson-optional-dependency-and-program < "$t/ms3.log"

# headers
mkdir -p "$t/h"
printf '#include <Python.h>\nstatic PyObject* probe(PyObject*, PyObject*) { Py_RETURN_NONE; }\n' \
  > "$t/h/module.cpp"
edge "$t/h" module.o g++-12 -I/usr/include/python3.12 -fPIC -c module.cpp -o module.o \
  | case_log real-gcc-python-h-missing
printf '#include <numa.h>\nint nodes(void) { return numa_max_node(); }\n' > "$t/h/topo.c"
edge "$t/h" topo.o clang-22 -c topo.c -o topo.o | case_log real-clang-numa-h-missing
printf '#include <omp.h>\nint threads(void) { return omp_get_max_threads(); }\n' > "$t/h/par.c"
edge "$t/h" par.o clang-22 -fopenmp -c par.c -o par.o | case_log real-clang-omp-h-missing
printf '#include <libelf.h>\nint probe(void) { return elf_version(EV_CURRENT) != EV_NONE; }\n' \
  > "$t/h/elfprobe.c"
edge "$t/h" elfprobe.o gcc-12 -c elfprobe.c -o elfprobe.o | case_log real-gcc-libelf-h-missing

# flags
echo 'int main() { return 0; }' > "$t/h/main.cpp"
edge "$t/h" main.o g++-12 -O2 -mavx10.2 -c main.cpp -o main.o | case_log real-gcc-unrecognized-option
edge "$t/h" main.o clang++-15 -O2 -fzero-init-padding-bits=all -c main.cpp -o main.o \
  | case_log real-clang-unknown-argument
edge "$t/h" main.o g++-11 -O2 -march=znver5 -c main.cpp -o main.o | case_log real-gcc-march-unknown-cpu
edge "$t/h" main.o clang++-15 -O2 -mllvm -amdgpu-enable-foo=true -c main.cpp -o main.o \
  | case_log real-clang-mllvm-option-unknown
printf 'int scale(int x) {\n  int unused = 2;\n  return x * 3;\n}\n' > "$t/h/scale.cpp"
edge "$t/h" scale.o clang++-22 -Wall -Werror -c scale.cpp -o scale.o \
  | case_log real-clang-werror-unused-variable
edge "$t/h" scale.o clang++-22 -Wall -c scale.cpp -o scale.o | case_log neg-clang-warning-without-werror
printf '#if __cplusplus < 201703L\n#error "this library needs a C++17 (or newer) compiler mode"\n#endif\n' \
  > "$t/h/lib_config.h"
printf '#include "lib_config.h"\nint probe() { return 1; }\n' > "$t/h/probe.cpp"
edge "$t/h" probe.o g++-12 -std=c++14 -c probe.cpp -o probe.o | case_log real-gcc-error-directive-cxx17
printf '#include <thread>\nunsigned cores() { return std::thread::hardware_concurrency(); }\n' \
  > "$t/h/cores.cpp"
edge "$t/h" cores.o g++-12 -std=c++98 -c cores.cpp -o cores.o | case_log real-gcc-libstdcxx-needs-cxx11

# linkers
printf '#include <math.h>\ndouble wave(double x) { return cos(x); }\n' > "$t/h/wave.c"
printf 'double wave(double);\n#include <math.h>\n%s\n' \
  'int main(void) { return (int)(wave(1.0) + sin(2.0)); }' > "$t/h/app.c"
gcc-12 -fPIC -shared "$t/h/wave.c" -lm -o "$t/h/libwave.so"
edge "$t/h" app gcc-12 -fno-builtin app.c -o app -L. -lwave | case_log real-ld-dso-missing-libm
edge "$t/h" app g++-12 -fuse-ld=lld main.cpp -o app | case_log real-gcc-fuse-ld-lld-missing
edge "$t/h" app clang++-15 -fuse-ld=mold main.cpp -o app | case_log real-clang-fuse-ld-mold-invalid
mkdir -p "$t/l1" "$t/l2"
printf 'rule link\n  command = g++-12 $in -o $out\nbuild bin/topo: link main.o /usr/local/lib/libnuma_rf.so\nbuild main.o: phony\n' \
  > "$t/l1/build.ninja"
(cd "$t/l1" && ninja 2>&1) | san | case_log real-ninja-library-file-missing
printf 'bin/topo: main.o /usr/local/lib/libnuma_rf.so\n\tg++-12 $^ -o $@\nmain.o:\n\ttouch $@\n' \
  > "$t/l2/Makefile"
(cd "$t/l2" && nomake make --no-print-directory 2>&1) | san | case_log real-make-library-file-missing

# autotools (autoconf 2.71, automake 1.16.5; no libtool installed)
mkdir -p "$t/at1" "$t/at2"
printf 'AC_INIT([probe], [1.0])\nAM_INIT_AUTOMAKE([foreign])\nAC_PROG_CC\nLT_INIT\n%s\n' \
  'AC_CONFIG_FILES([Makefile])' > "$t/at1/configure.ac"
printf 'AC_OUTPUT\n' >> "$t/at1/configure.ac"
printf 'lib_LTLIBRARIES = libprobe.la\nlibprobe_la_SOURCES = probe.c\n' > "$t/at1/Makefile.am"
echo 'int probe(void) { return 0; }' > "$t/at1/probe.c"
(cd "$t/at1" && autoreconf -fi 2>&1) | san | case_log real-automake-libtool-undefined
# configure generated by autoconf alone (aclocal never ran, so pkg.m4 was not pulled in)
printf 'AC_INIT([probe], [1.0])\nAC_PROG_CC\nPKG_CHECK_MODULES([DRM], [libdrm_amdgpu >= 2.4])\n%s\n' \
  'AC_OUTPUT' > "$t/at2/configure.ac"
(cd "$t/at2" && autoconf && ./configure 2>&1) | san | case_log real-configure-pkg-check-modules-unexpanded

# a shared library that needs a libstdc++ symbol version the linking GCC's libstdc++ lacks
# (GLIBCXX_3.4.99, given to it by a stand-in libstdc++.so.6 built with that version node)
mkdir -p "$t/gx/fake" "$t/gx/lib"
printf 'namespace std { void __throw_bad_array_new_length() { } }\n' > "$t/gx/fake/s.cpp"
printf 'GLIBCXX_3.4.99 { global: _ZSt28__throw_bad_array_new_lengthv; };\n' > "$t/gx/fake/v.map"
printf '%s\n' 'namespace std { void __throw_bad_array_new_length(); }' \
  'void grow() { std::__throw_bad_array_new_length(); }' > "$t/gx/grow.cpp"
printf 'void grow();\nint main() { grow(); return 0; }\n' > "$t/gx/main.cpp"
(cd "$t/gx" && g++-12 -shared -fPIC -nostdlib fake/s.cpp -Wl,--version-script=fake/v.map \
  -Wl,-soname,libstdc++.so.6 -o fake/libstdc++.so \
  && g++-12 -shared -fPIC -nostdlib grow.cpp -Lfake -lstdc++ -o lib/libtorch_cpu.so)
edge "$t/gx" bin/app g++-12 main.cpp -Llib -ltorch_cpu -o bin/app \
  | case_log real-ld-shared-lib-needs-newer-libstdcxx
# gcc with binutils off PATH: the driver cannot run the assembler
echo 'int probe(void) { return 0; }' > "$t/h/probe.c"
(cd "$t/h" && PATH=/nonexistent /usr/bin/gcc-12 -c probe.c -o probe.o 2>&1) \
  | case_log real-gcc-cannot-execute-as
# a C++17 library name under -std=c++14: GCC's "only available from C++17 onwards" note
printf '#include <optional>\nstd::optional<int> pick_device();\n' > "$t/h/pick.cpp"
edge "$t/h" pick.o g++-12 -std=c++14 -c pick.cpp -o pick.o | case_log real-gcc-std-optional-needs-cxx17
# a C++ standard in the flags of a C compile: clang stops (GCC only warns: the look-alike)
edge "$t/h" probe.o clang-22 -std=c++17 -c probe.c -o probe.o | case_log real-clang-std-cxx-for-c
edge "$t/h" probe.o gcc-12 -std=c++17 -c probe.c -o probe.o | case_log neg-gcc-std-cxx-for-c-warning
# PKG_CHECK_MODULES (pkgconf's pkg.m4, through autoreconf) for a module that is not installed:
# read already by pkgconf-package-missing (its own catalog's "required by 'virtual:world'")
mkdir -p "$t/at3"
printf 'AC_INIT([probe], [1.0])\nAC_PROG_CC\nPKG_CHECK_MODULES([DRM], [libdrm_amdgpu >= 2.4])\n%s\n' \
  'AC_OUTPUT' > "$t/at3/configure.ac"
(cd "$t/at3" && autoreconf -fi > /dev/null 2>&1 && ./configure 2>&1) | san \
  | case_log real-configure-pkg-requirements-not-met
# a library's own dependency (DT_NEEDED) in a folder the link does not search
mkdir -p "$t/rp/hip" "$t/rp/lib"
echo 'int hip_probe(void) { return 1; }' > "$t/rp/hip/probe.c"
echo 'int hip_probe(void); int use_probe(void) { return hip_probe(); }' > "$t/rp/use.c"
echo 'int use_probe(void); int main(void) { return use_probe(); }' > "$t/rp/main.c"
(cd "$t/rp" && gcc-12 -shared -fPIC hip/probe.c -o hip/libamdhip_rf.so \
  && gcc-12 -shared -fPIC use.c -Lhip -lamdhip_rf -o lib/libtorch_hip.so)
edge "$t/rp" bin/app gcc-12 main.c -Llib -ltorch_hip -o bin/app | case_log real-ld-needed-library-not-found
# a header's compiler-version check (#error) refusing an older GCC or clang
printf '%s\n' '#if defined(__clang__) && __clang_major__ < 30' \
  '#error "this library needs clang 30 or newer"' \
  '#elif !defined(__clang__) && defined(__GNUC__) && __GNUC__ < 40' \
  '#error "this library needs GCC 40 or newer"' \
  '#endif' > "$t/h/compiler_check.h"
printf '#include "compiler_check.h"\nint probe() { return 1; }\n' > "$t/h/checked.cpp"
edge "$t/h" checked.o g++-12 -c checked.cpp -o checked.o | case_log real-gcc-error-directive-gcc-too-old
edge "$t/h" checked.o clang++-22 -c checked.cpp -o checked.o \
  | case_log real-clang-error-directive-clang-too-old
