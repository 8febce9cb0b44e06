#!/usr/bin/env bash
# Look-alikes of rules widened or added in issue 40's d10 and r16/r17 work (rv10's review),
# made with the real programs; each is a d11 negative case (class ""), whose lines prove
# nothing about the cause the rule names:
#  - cmake 3.25 with g++-12: check_cxx_compiler_flag(--offload-arch=gfx1100) and
#    (-munsafe-fp-atomics) fail on purpose; CMakeError.log keeps g++'s "unrecognized
#    command-line option" lines (hip-flag-to-gcc read them as HIP sources given to GCC);
#    and its right twin: CXXFLAGS=--offload-arch=gfx1100 with g++-12 fails project()'s
#    compiler check, the same GCC line on testCXXCompiler.cxx (hip-flag-to-gcc still reads it)
#  - cmake 3.25 with gcc-12: check_library_exists(pthreads pthread_create) links
#    CheckFunctionExists.c.o with -lpthreads, which fails on purpose ("cannot find
#    -lpthreads" in CMakeError.log; cannot-find-lib read it as a missing library); and its
#    right twin: LDFLAGS=-lrocblas fails project()'s compiler check on testCCompiler.c
#  - g++-12 linking against a library in a conda environment's lib folder whose template
#    call (fmt's versioned namespace fmt::v9) no library defines: "ld: <conda>/lib/
#    libspdlog.so.1.11: undefined reference to `... fmt::v9::...<char>(...)'"
#    (shared-library-template-instance read it as the build's own missing instance file)
#  - the same call from a library the build made (build/lib/libapp.so): a versioned
#    namespace is another library's ABI version, not this build's instance file
#  - ldd -r on a CPython extension that imports fine: it lists the Python C-API names as
#    "undefined symbol: PyLong_FromLong<TAB>(./ext….so)", which the interpreter resolves at
#    import (undefined-symbol read it as the loader's failure)
#  - a link with -Wl,--warn-unresolved-symbols that succeeds: GNU ld (g++-12) prints
#    "warning: undefined reference to `foo()'" and lld (clang++-22) "ld.lld: warning:
#    undefined symbol: foo()"; undefined-reference and the loader's undefined-symbol read them
#    as failures
#  - two different hipified-looking sources (a_hip.cpp, b_hip.cpp) both defining foo(), linked
#    by GNU ld and by ld.lld: a duplicate, but neither is the other's hipified twin
#    (hipified-duplicate named a_hip.cpp "the hipified copy of a")
#  - GNU make running a recipe's hipcc that exists but whose #! interpreter does not (a
#    stand-in script starting #!/usr/bin/perl-missing; ROCm 5's hipcc is a perl script):
#    make prints "make: hipcc: No such file or directory" as for a missing hipcc
# Needs cmake, gcc-12, g++-12, clang++-22 (with ld.lld), make, python3 (with its headers), ldd. Writes rounds/d11/cases/real-*.log (the .toml answers are committed
# beside them). A few seconds.
set -u
for tool in cmake gcc-12 g++-12 clang++-22 make python3 ldd; do
  command -v "$tool" > /dev/null || { echo "rv10.sh: $tool is not installed here" >&2; exit 2; }
done
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d11/cases
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
scrub() { sed -e "s#$t#/home/user#g" -e 's#TryCompile-[A-Za-z0-9]*#TryCompile-x#g' \
  -e 's#cmTC_[0-9a-f]*#cmTC_0#g'; }

mkdir -p "$t/proj"
cat > "$t/proj/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.10)
project(x CXX)
include(CheckCXXCompilerFlag)
check_cxx_compiler_flag(--offload-arch=gfx1100 HAS_OFFLOAD_ARCH)
check_cxx_compiler_flag(-munsafe-fp-atomics HAS_UNSAFE_FP_ATOMICS)
CM
(cd "$t/proj" && CXX=g++-12 cmake -S . -B build > /dev/null 2>&1) || exit 1
scrub < "$t/proj/build/CMakeFiles/CMakeError.log" > "$cases/real-cmake-flag-probe-hip-flags-gcc.log"
mkdir -p "$t/sane"
printf 'cmake_minimum_required(VERSION 3.10)\nproject(x CXX)\n' > "$t/sane/CMakeLists.txt"
(cd "$t/sane" && CXX=g++-12 CXXFLAGS=--offload-arch=gfx1100 cmake -S . -B build 2>&1) \
  | sed -e "s#$t/sane#/home/user/proj#g" | scrub > "$cases/real-cmake-compiler-check-offload-arch-gcc.log"

mkdir -p "$t/lib" "$t/sanelib"
cat > "$t/lib/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.10)
project(x C)
include(CheckLibraryExists)
check_library_exists(pthreads pthread_create "" HAVE_LIBPTHREADS)
CM
(cd "$t/lib" && CC=gcc-12 cmake -S . -B build > /dev/null 2>&1) || exit 1
sed -e "s#$t/lib#/home/user/proj#g" "$t/lib/build/CMakeFiles/CMakeError.log" | scrub \
  > "$cases/real-cmake-library-probe-pthreads-cannot-find.log"
printf 'cmake_minimum_required(VERSION 3.10)\nproject(x C)\n' > "$t/sanelib/CMakeLists.txt"
(cd "$t/sanelib" && CC=gcc-12 LDFLAGS=-lrocblas cmake -S . -B build 2>&1) \
  | sed -e "s#$t/sanelib#/home/user/proj#g" | scrub > "$cases/real-cmake-compiler-check-rocblas-cannot-find.log"

# fmt's versioned inline namespace, declared by a header the library was built against;
# no fmt library on the link line defines this instance.
cat > "$t/fmt.h" <<'H'
namespace fmt { inline namespace v9 { namespace detail {
template <typename Char> struct buffer { Char* p; };
template <typename Char> void vformat_to(buffer<Char>& out, const Char* fmt);
} } }
H
printf '#include "fmt.h"\nvoid log_line(const char* s) { fmt::detail::buffer<char> b{nullptr}; fmt::detail::vformat_to<char>(b, s); }\n' \
  > "$t/spd.cpp"
printf 'void log_line(const char*);\nint main() { log_line("x"); return 0; }\n' > "$t/main.cpp"
conda=$t/miniconda3/envs/rocm/lib
mkdir -p "$conda" "$t/proj/build/lib"
(cd "$t" && g++-12 -shared -fPIC -o "$conda/libspdlog.so.1.11" spd.cpp) || exit 1
(cd "$t/proj" && g++-12 -o app ../main.cpp "$conda/libspdlog.so.1.11" 2>&1) | scrub \
  > "$cases/real-ld-conda-library-versioned-template-undefined.log"
(cd "$t" && g++-12 -shared -fPIC -o proj/build/lib/libapp.so spd.cpp) || exit 1
(cd "$t/proj" && g++-12 -o app ../main.cpp build/lib/libapp.so 2>&1) | scrub \
  > "$cases/real-ld-own-library-versioned-namespace-undefined.log"

inc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
[ -f "$inc/Python.h" ] || { echo "rv10.sh: Python.h is not installed here" >&2; exit 2; }
mkdir -p "$t/ext"
cat > "$t/ext/ext.cpp" <<'C'
#include <Python.h>
static PyObject* one(PyObject*, PyObject*) { return PyLong_FromLong(1); }
static PyMethodDef methods[] = {{"one", one, METH_NOARGS, nullptr}, {nullptr, nullptr, 0, nullptr}};
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "ext", nullptr, -1, methods};
PyMODINIT_FUNC PyInit_ext(void) { return PyModule_Create(&def); }
C
so=ext$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
(cd "$t/ext" && g++-12 -shared -fPIC -I"$inc" -o "$so" ext.cpp) || exit 1
(cd "$t/ext" && python3 -c 'import ext; assert ext.one() == 1') || exit 1  # it imports
(cd "$t/ext" && echo "\$ ldd -r ./$so" && ldd -r "./$so" 2>&1) | scrub \
  > "$cases/real-ldd-r-python-extension-c-api-names.log"

mkdir -p "$t/warn"
printf 'void foo();\nint main() { foo(); return 0; }\n' > "$t/warn/main.cpp"
(cd "$t/warn" && g++-12 -Wl,--warn-unresolved-symbols -o app main.cpp 2>&1 && echo "exit 0") \
  | sed -e 's#/tmp/cc[A-Za-z0-9]*\.o#/tmp/cc0.o#g' | scrub > "$cases/real-ld-warn-unresolved-symbols-links.log"
(cd "$t/warn" && clang++-22 -fuse-ld=lld -Wl,--warn-unresolved-symbols -o app main.cpp 2>&1 \
  && echo "exit 0") | sed -e 's#/tmp/main-[0-9a-f]*\.o#/tmp/main-0.o#g' | scrub \
  > "$cases/real-lld-warn-unresolved-symbols-links.log"

mkdir -p "$t/dup"
printf 'int foo() { return 1; }\n' > "$t/dup/a_hip.cpp"
printf 'int foo() { return 2; }\nint main() { return foo(); }\n' > "$t/dup/b_hip.cpp"
(cd "$t/dup" && g++-12 -c a_hip.cpp b_hip.cpp) || exit 1
(cd "$t/dup" && g++-12 -o app a_hip.o b_hip.o 2>&1) | scrub > "$cases/real-ld-two-hip-sources-duplicate.log"
(cd "$t/dup" && clang++-22 -fuse-ld=lld -o app a_hip.o b_hip.o 2>&1) | scrub \
  > "$cases/real-lld-two-hip-sources-duplicate.log"

mkdir -p "$t/perl/bin"
printf '#!/usr/bin/perl-missing -w\nprint "hipcc\\n";\n' > "$t/perl/bin/hipcc"
chmod +x "$t/perl/bin/hipcc"
printf 'all:\n\thipcc -c kernel.cpp\n' > "$t/perl/Makefile"
(cd "$t/perl" && PATH="$t/perl/bin:$PATH" make 2>&1) | scrub > "$cases/real-make-hipcc-interpreter-missing.log"
