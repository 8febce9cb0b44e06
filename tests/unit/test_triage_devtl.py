"""Build tools, compilers and linkers, family by family (issue 40, devtl): a program a recipe
runs that is not installed (dash, bash, make's own exec, under make or ninja), Meson's required
dependency and program, automake's undefined LIBTOOL and a configure with an unexpanded
PKG_ macro, a system library's header, a compiler option or CPU name the compiler does not
know, an -mllvm option, clang's -Werror suffix, a #error asking for a newer C++, GNU ld's
"DSO missing from command line", a linker -fuse-ld names that is not there, and a library
file a build links by path that does not exist. The lines are the programs' own (made here
by tests/failures/make/devtl.sh), with the values each reading must take out of them, and the
look-alikes that must claim nothing."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

_DASH = """cd . && bison -d -o gram.c gram.y
/bin/sh: 1: bison: not found
make: *** [Makefile:2: gram.c] Error 127
"""

_MAKE_EXEC = """makeinfo --no-split -o bfd.info bfd.texi
make[2]: makeinfo: No such file or directory
make[2]: *** [Makefile:350: bfd.info] Error 127
"""

_BASH = """gperf keywords.gperf > keywords.c
/bin/bash: line 1: gperf: command not found
make: *** [Makefile:3: keywords.c] Error 127
"""

# a CMake Makefile build does not echo the custom command: its progress line stands for it
_CMAKE_MAKE = """[ 50%] Generating gram.c
/bin/sh: 1: bison: not found
make[2]: *** [CMakeFiles/gram.dir/build.make:74: gram.c] Error 127
"""

_NINJA = """[1/1] cd . && patchelf --set-rpath lib x.so
FAILED: x.stamp
cd . && patchelf --set-rpath lib x.so
/bin/sh: 1: patchelf: not found
ninja: build stopped: subcommand failed.
"""

_AUTOMAKE = """Makefile.am:1: error: Libtool library used but 'LIBTOOL' is undefined
Makefile.am:1:   The usual way to define 'LIBTOOL' is to add 'LT_INIT'
Makefile.am:1:   to 'configure.ac' and run 'aclocal' and 'autoconf' again.
autoreconf: error: automake failed with exit status: 1
"""

_UNEXPANDED = """./configure: line 3084: syntax error near unexpected token `DRM,'
./configure: line 3084: `PKG_CHECK_MODULES(DRM, libdrm_amdgpu >= 2.4)'
"""

_DSO = """/usr/bin/ld: /tmp/ccX.o: undefined reference to symbol 'sin@@GLIBC_2.2.5'
/usr/bin/ld: /lib/x86_64-linux-gnu/libm.so.6: error adding symbols: DSO missing from command line
collect2: error: ld returned 1 exit status
"""

_FUSE_LD = """FAILED: app
g++-12 -fuse-ld=lld main.cpp -o app
collect2: fatal error: cannot find \u2018ld\u2019
compilation terminated.
"""

_CLANG_STD = """v.cpp:2:2: error: C++17 or later compatible compiler is required by this library.
    2 | #error C++17 or later compatible compiler is required by this library.
      |  ^
"""


@pytest.mark.parametrize(("text", "step", "klass", "subject", "rule", "words"), [
    (_DASH, "build", "missing-component", "bison", "recipe-program-missing",
     ("bison", "apt install bison")),
    # make's own exec, make[N], and the package whose name differs from the program's
    (_MAKE_EXEC, "build", "missing-component", "makeinfo", "recipe-program-missing",
     ("apt install texinfo",)),
    (_BASH, "build", "missing-component", "gperf", "recipe-program-missing",
     ("apt install gperf",)),
    (_CMAKE_MAKE, "build", "missing-component", "bison", "recipe-program-missing", ("bison",)),
    (_NINJA, "build", "missing-component", "patchelf", "ninja-recipe-program-missing",
     ("apt install patchelf",)),
    ("meson.build:2:6: ERROR: Dependency \"libdrm_amdgpu\" not found (tried pkg-config and "
     "cmake)\n", "configure", "missing-component", "libdrm_amdgpu", "meson-dependency-missing",
     ("pkg-config and cmake", "libdrm_amdgpu.pc", "PKG_CONFIG_PATH", "--wipe")),
    ("meson.build:2:8: ERROR: Program 'ninja' not found or not executable\n", "configure",
     "missing-component", "ninja", "meson-program-missing", ("Meson", "apt install ninja-build")),
    (_AUTOMAKE, "configure", "missing-component", "libtool", "automake-macro-undefined",
     ("LIBTOOL", "LT_INIT", "apt install libtool", "autoreconf -fi")),
    (_UNEXPANDED, "configure", "missing-component", "pkg-config", "configure-macro-unexpanded",
     ("PKG_CHECK_MODULES", "apt install pkgconf")),
    ("m.c:1:10: fatal error: Python.h: No such file or directory\n", "build",
     "missing-component", "python3-dev", "system-header-missing",
     ("Python.h", "apt install python3-dev", "python3.N-dev")),
    ("m.c:1:10: fatal error: 'numa.h' file not found\n", "build", "missing-component",
     "libnuma-dev", "system-header-missing", ("numa.h", "apt install libnuma-dev")),
    ("x.c:3:10: fatal error: openssl/evp.h: No such file or directory\n", "build",
     "missing-component", "libssl-dev", "system-header-missing", ("openssl/evp.h",)),
    # omp.h: clang's comes from LLVM's libomp, GCC's with GCC's own files
    ("par.c:1:10: fatal error: 'omp.h' file not found\n", "build", "missing-component",
     "libomp-dev", "system-header-missing", ("libomp-N-dev",)),
    ("par.c:1:10: fatal error: omp.h: No such file or directory\n", "build",
     "missing-component", "libgcc-dev", "system-header-missing", ("libgcc-N-dev",)),
    ("g++-12: error: unrecognized command-line option \u2018-mavx10.2\u2019; did you mean "
     "\u2018-mavx2\u2019?\n", "build", "host-compiler", "gcc", "compiler-option-unknown",
     ("-mavx10.2",)),
    ("clang: error: unknown argument: '-fzero-init-padding-bits=all'\n", "build",
     "host-compiler", "clang", "compiler-option-unknown", ("-fzero-init-padding-bits=all",)),
    # GCC 11 writes the value in parentheses, GCC 12 does not; clang's own wording
    ("cc1plus: error: bad value (\u2018znver5\u2019) for \u2018-march=\u2019 switch\n", "build",
     "host-compiler", "gcc", "compiler-cpu-unknown", ("znver5", "-march=native")),
    ("cc1plus: error: bad value \u2018foo\u2019 for \u2018-mtune=\u2019 switch\n", "build",
     "host-compiler", "gcc", "compiler-cpu-unknown", ("-mtune=foo",)),
    ("error: unknown target CPU 'znver9'\n", "build", "host-compiler", "clang",
     "compiler-cpu-unknown", ("znver9",)),
    ("clang (LLVM option parsing): Unknown command line argument '-amdgpu-foo=true'.  Try: "
     "'clang (LLVM option parsing) --help'\n", "build", "host-compiler", "clang",
     "llvm-option-unknown", ("-mllvm -amdgpu-foo=true",)),
    ("s.cpp:2:7: error: unused variable 'unused' [-Werror,-Wunused-variable]\n", "build",
     "host-compiler", "clang", "clang-warning-as-error", ("-Wno-error=unused-variable",)),
    ("lib.h:2:2: error: #error \"this library needs a C++17 (or newer) compiler mode\"\n",
     "build", "host-compiler", "gcc", "cxx-standard-required",
     ("C++17", "-std=c++17", "CMAKE_CXX_STANDARD=17")),
    ("/usr/include/c++/12/bits/c++0x_warning.h:32:2: error: #error This file requires compiler "
     "and library support for the ISO C++ 2011 standard.\n", "build", "host-compiler", "gcc",
     "cxx-standard-required", ("C++11", "-std=c++11")),
    ("a.cpp:3:1: note: \u2018std::span\u2019 is only available from C++20 onwards\n", "build",
     "host-compiler", "gcc", "std-name-needs-newer-cxx", ("std::span", "-std=c++20")),
    ("error: invalid argument '-std=c11' not allowed with 'C++'\n", "build", "host-compiler",
     "clang", "std-flag-wrong-language", ("-std=c11", "C++ source", "CFLAGS / CMAKE_C_FLAGS")),
    ("x.h:4:2: error: #error \"this code needs GCC 40 or newer\"\n", "build", "host-compiler",
     "gcc", "compiler-version-refused", ("GCC 40 or newer", "--gcc N")),
    ("./x.h:2:2: error: \"this library needs clang 30 or newer\"\n"
     "    2 | #error \"this library needs clang 30 or newer\"\n", "build", "host-compiler",
     "clang", "compiler-version-refused-clang", ("clang 30 or newer",)),
    (_CLANG_STD, "build", "host-compiler", "clang", "cxx-standard-required-clang",
     ("-std=c++17",)),
    (_DSO, "build", "link", "libm", "link-dso-missing",
     ("(sin)", "libm.so.6", "-lm", "target_link_libraries(<target> ... m)")),
    ("/usr/bin/ld: warning: libamdhip64.so.6, needed by lib/libtorch_hip.so, not found (try "
     "using -rpath or -rpath-link)\n/usr/bin/ld: lib/libtorch_hip.so: undefined reference to "
     "`hipMalloc'\n", "build", "link", "libamdhip64", "link-needed-library-not-found",
     ("libamdhip64.so.6", "lib/libtorch_hip.so needs", "-Wl,-rpath-link,<dir>")),
    (_FUSE_LD, "build", "missing-component", "lld", "linker-program-missing",
     ("ld.lld", "-fuse-ld=lld")),
    ("clang: error: invalid linker name in argument '-fuse-ld=mold'\n", "build",
     "missing-component", "mold", "linker-program-missing", ("mold",)),
    ("ninja: error: '/usr/lib/x86_64-linux-gnu/libnuma.so', needed by 'lib/libtorch_cpu.so', "
     "missing and no known rule to make it\n", "build", "link", "libnuma",
     "library-file-missing", ("lib/libtorch_cpu.so", "CMakeCache.txt")),
    ("make[2]: *** No rule to make target '/usr/local/lib/libz.a', needed by 'bin/app'.  "
     "Stop.\n", "build", "link", "libz", "library-file-missing", ("/usr/local/lib/libz.a",)),
    ("/usr/bin/ld: lib/libtorch_cpu.so: undefined reference to `std::__throw_bad_array_new_"
     "length()@GLIBCXX_3.4.99'\n", "build", "link", "libstdc++", "undefined-reference",
     ("libtorch_cpu.so needs", "GLIBCXX_3.4.99", "grep GLIBCXX_")),
    ("/usr/bin/ld: libx.so: undefined reference to `__cxa_init_primary_exception@CXXABI_1.3.15'"
     "\n", "build", "link", "libstdc++", "undefined-reference", ("CXXABI_1.3.15", "grep CXXABI_")),
    ("gcc-12: fatal error: cannot execute \u2018as\u2019: execvp: No such file or directory\n",
     "build", "missing-component", "binutils", "compiler-driver-program-missing",
     ("gcc-12", "apt install binutils")),
    ("g++: fatal error: cannot execute 'cc1plus': execvp: No such file or directory\n", "build",
     "missing-component", "g++", "compiler-driver-program-missing", ("apt install g++",)),
])
def test_family_reads_its_values(text: str, step: str, klass: str, subject: str, rule: str,
                                 words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words, step=step)


@pytest.mark.parametrize("text", [
    # a program not found that make ignores (`-cmd`), or a probe with no make stopping on it
    "make: doxygen: No such file or directory\nmake: [Makefile:2: all] Error 127 (ignored)\n"
    "built\n",
    "sh: 1: ccache: not found\n-- Configuring done\n",
    # a shell's not-found outside a ninja FAILED block (a configure's probe) proves nothing
    "/bin/sh: 1: sccache: not found\n[12/400] Building CXX object a.o\n"
    "ninja: build stopped: subcommand failed.\n",
    # a probe's "not found" far from the recipe that failed with 127 (another program)
    "-- Detecting the distribution\nsh: 1: lsb_release: not found\n-- Configuring done\n"
    "./gen.sh\nmake: *** [Makefile:2: x] Error 127\n",
    # a script's own probe inside a ninja FAILED block, after its first line of output
    "FAILED: x.stamp\npython3 gen.py\nwriting x\nsh: 1: lsb_release: not found\n"
    "ninja: build stopped: subcommand failed.\n",
    # a compiler or ROCm tool not found: other modules' families, not a package to install
    "/bin/sh: 1: cc: not found\nmake: *** [Makefile:2: a.o] Error 127\n",
    # Meson's optional dependency and program: 'found: NO' and the configure goes on
    "Run-time dependency numa found: NO  (tried pkg-config and cmake)\nProgram bison found: NO\n"
    "Message: optional parts off\n",
    # LT_INIT left as a command: configure goes on (it proves nothing by itself)
    "./configure: line 3101: LT_INIT: command not found\nchecking for gcc... gcc\n",
    # the unexpanded-macro line without bash's syntax error before it
    "./configure: line 3084: `PKG_CHECK_MODULES(DRM, libdrm_amdgpu >= 2.4)'\n",
    # a header whose owner the table does not hold
    "a.c:1:10: fatal error: projectconfig.h: No such file or directory\n",
    # a compiler check's own failure (CMake try_compile, autoconf's conftest)
    "Building C object CMakeFiles/cmTC_1a2b3.dir/src.c.o\n"
    "src.c:1:10: fatal error: numa.h: No such file or directory\n",
    "configure:4242: gcc -march=znver5 conftest.c\n"
    "cc1: error: bad value (\u2018znver5\u2019) for \u2018-march=\u2019 switch\n",
    # warnings, and the flag on a command line
    "s.cpp:2:7: warning: unused variable 'unused' [-Wunused-variable]\n",
    "clang++ -Wall -Werror -Wunused-variable -c s.cpp\n",
    "warning: unknown warning option '-Wfoo' [-Wunknown-warning-option]\n",
    # a #error naming a compiler without a version demand, or a platform
    "a.h:2:2: error: #error \"this file is for the clang-cl build only\"\n",
    # a #error that names no C++ standard; clang's directive line without its error line
    "a.h:2:2: error: #error \"unsupported platform\"\n",
    "2 | #error C++17 or later compatible compiler is required\n",
    # ld's needed-library warning in a link that went on (nothing left undefined)
    "/usr/bin/ld: warning: libfoo.so.1, needed by libbar.so, not found (try using -rpath or "
    "-rpath-link)\n[100%] Built target app\n",
    # a program the driver runs that this table does not know
    "gcc: fatal error: cannot execute 'mywrapper': execvp: No such file or directory\n",
    # a file that is no library (generated, or a source not checked out): what made it is not
    # known from the line
    "ninja: error: 'gen/foo.c', needed by 'foo.o', missing and no known rule to make it\n",
])
def test_look_alikes_claim_nothing(text: str) -> None:
    d = explain_text(text, step="build")
    assert d.klass is None, (d.klass, d.subject, d.rule)


def test_gpu_target_given_as_a_cpu_stays_with_gpu_target() -> None:
    d = explain_text("error: unknown target CPU 'gfx1100'\n", step="build")
    assert (d.klass, d.rule) == ("gpu-target", "llvm-unknown-target")


def test_rocm_library_file_is_not_read_as_a_plain_link() -> None:
    d = explain_text("ninja: error: '/opt/rocm-6.2.0/lib/libamdhip64.so', needed by "
                     "'lib/libc10_hip.so', missing and no known rule to make it\n", step="build")
    assert (d.klass, d.rule) == ("rocm-install", "fixed-rocm-path")


def test_gcc_hip_flag_and_std_stay_with_their_own_rules() -> None:
    hip = explain_text("g++: error: unrecognized command-line option '--offload-arch=gfx1100'\n",
                       step="build")
    std = explain_text("g++-11: error: unrecognized command-line option '-std=c++23'; did you "
                       "mean '-std=c++03'?\n", step="build")
    assert (hip.rule, std.rule) == ("hip-flag-to-gcc", "cxx-standard-unknown")


def test_a_glibcxx_version_is_read_as_libstdcxx_not_glibc() -> None:
    d = explain_text("/usr/bin/ld: libfoo.so: undefined reference to `std::foo@GLIBCXX_3.4.32'\n",
                     step="build")
    assert (d.klass, d.subject) == ("link", "libstdc++")
    assert "glibc " not in d.cause.lower() and "libstdc++ this link uses" in d.cause
