"""Build-time families of r13's misses, read from the programs' own wordings (issue 40,
devbt5): automake's `missing` wrapper, a C++11 std name used without its header (clang and
GCC), GCC's [-Werror=<w>] suffix and GCC 15's C23 empty parameter list, MSVC cl given a GCC
warning flag, CMake's include() given a split list, CPack's RPM generator without rpmbuild,
expat's configure refusing an SGML docbook2man, lld-link's /failifmismatch. Each line is what
the program prints, with the values the reading must take out of it, and the look-alikes
beside them that must claim nothing (or not this)."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

_MISSING_BISON = """/bin/sh ./missing bison -d defparse.y -o defparse.c
./missing: 85: bison: not found
WARNING: 'bison' is missing on your system.
         You should only need it if you modified a '.y' file.
make[2]: *** [Makefile:1244: defparse.c] Error 127
"""

_MISSING_MAKEINFO_OLD = """WARNING: `makeinfo' is missing on your system.
make[3]: *** [Makefile:350: bfd.info] Error 127
"""

_INCLUDE_LIST = """CMake Error at third_party/fbgemm/CMakeLists.txt:20 (include):
  include called with invalid argument:
  /src/third_party/fbgemm/cmake/modules/Utilities.cmake
"""

_FAILIFMISMATCH = """lld-link: error: /failifmismatch: mismatch detected for \
'_ITERATOR_DEBUG_LEVEL':
>>> test/a.cpp.obj has value 0
>>> gtestd.lib(gtest-all.cc.obj) has value 2
"""

_CPACK = """CMake Error at /usr/share/cmake-3.25/Modules/Internal/CPack/CPackRPM.cmake:822 \
(message):
  RPM package requires rpmbuild executable
"""


@pytest.mark.parametrize(("text", "step", "klass", "subject", "rule", "words"), [
    (_MISSING_BISON, "build", "missing-component", "bison", "automake-tool-missing",
     ("automake's `missing`", "apt install bison", "exit 127")),
    # the old quoting (`tool'), and the package name that differs from the tool's
    (_MISSING_MAKEINFO_OLD, "build", "missing-component", "makeinfo", "automake-tool-missing",
     ("apt install texinfo",)),
    ("src/Python.cpp:92:8: error: no member named 'reverse' in namespace 'std'\n", "build",
     "host-compiler", "libstdc++", "std-member-missing", ("std::reverse", "<algorithm>")),
    ("a.cpp:2:39: error: \u2018ostringstream\u2019 is not a member of \u2018std\u2019\n",
     "build", "host-compiler", "libstdc++", "std-member-missing",
     ("std::ostringstream", "<sstream>")),
    # libc++'s headers in the line name the library
    ("/usr/include/c++/v1/x.h:3:1: error: no member named 'sort' in namespace 'std'\n",
     "build", "host-compiler", "libc++", "std-member-missing", ("LLVM libc++", "<algorithm>")),
    ("/usr/include/c++/14.2.1/array:219:24: error: array subscript 18446744073709551615 is "
     "above array bounds of \u2018const int [1]\u2019 [-Werror=array-bounds=]\n", "build",
     "host-compiler", "gcc", "gcc-warning-as-error", ("-Warray-bounds", "-Wno-error=array-bounds")),
    ("/w/OpenBLAS/lapack-netlib/SRC/sgees.c:720:27: error: too many arguments to function "
     "\u2018select\u2019; expected 0, have 2\n", "build", "host-compiler", "gcc",
     "gcc15-c23-empty-parens", ("C23", "-std=gnu17", "/w/OpenBLAS/lapack-netlib/SRC/sgees.c")),
    ("cl : Command line error D8021 : invalid numeric argument '/Wno-shift-count-negative'\n",
     "build", "host-compiler", "cl", "msvc-cl-gnu-warning-flag",
     ("-Wno-shift-count-negative", "cl.exe", "-DCMAKE_CXX_COMPILER=clang-cl")),
    (_INCLUDE_LIST, "configure", "cmake", "cmake", "cmake-include-list-argument",
     ("third_party/fbgemm/CMakeLists.txt", "list")),
    (_CPACK, "build", "cmake", "cmake", "cpack-rpmbuild-missing",
     ("rpmbuild", "CPACK_GENERATOR")),
    ("[therock-expat] configure: error: Your local docbook2man was found to work with SGML\n",
     "build", "missing-component", "docbook2x", "expat-docbook2man-sgml",
     ("docbook2man", "--without-docbook")),
    ("a.h(14,21): error: functions that differ only in their return type cannot be overloaded\n"
     "ia32intrin.h(60,15): note: '__builtin_clz' is a builtin with type 'int (unsigned int)'\n",
     "build", "host-compiler", "clang", "clang-builtin-redeclared",
     ("__builtin_clz", "!defined(__clang__)")),
    (_FAILIFMISMATCH, "build", "link", "gtestd.lib", "lld-link-failifmismatch",
     ("_ITERATOR_DEBUG_LEVEL", "test/a.cpp.obj: 0", "gtestd.lib(gtest-all.cc.obj): 2")),
])
def test_family_reads_its_values(text: str, step: str, klass: str, subject: str, rule: str,
                                 words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words, step=step)


@pytest.mark.parametrize("text", [
    # `missing` warns but make did not stop on it (no Error 127 in the log)
    "WARNING: 'makeinfo' is missing on your system.\n[100%] Built target bfd\n",
    # a std name this table does not hold (C++17 and later, or a real typo): no claim
    "a.cpp:1:1: error: no member named 'bit_cast' in namespace 'std'\n",
    "a.cpp:1:1: error: \u2018abs\u2019 has not been declared in \u2018::\u2019\n",
    # a GCC warning that stays a warning
    "a.c:2:18: warning: array subscript 2 is above array bounds of \u2018int[1]\u2019 "
    "[-Warray-bounds]\n",
    # the -Werror flag on a compiler command line is no diagnostic
    "gcc -O2 -Werror=array-bounds -c a.c\n",
    # too many arguments in C++, or to a function that takes one
    "a.cpp:3:5: error: too many arguments to function \u2018select\u2019; expected 0, have 2\n",
    "a.c:3:5: error: too many arguments to function \u2018f\u2019; expected 1, have 2\n",
    # the include() error line without its CMake header: whose include is not known
    "  include called with invalid argument:\n",
    # clang's builtin note without the error about the source's own declaration
    "x.h:60:15: note: '__builtin_clz' is a builtin with type 'int (unsigned int)'\n",
    # lld-link's second line alone, or a value line after another message
    ">>> test/a.cpp.obj has value 0\n",
    "note: x\n>>> a.obj has value 0\n>>> b.lib(c.obj) has value 2\n",
])
def test_look_alikes_claim_nothing(text: str) -> None:
    assert explain_text(text, step="build").klass is None


@pytest.mark.parametrize(("text", "not_rule", "instead"), [
    # clang's -Werror spelling belongs to clang, not this GCC reading
    ("a.cpp:1:1: error: zero size arrays are an extension [-Werror,-Wzero-length-array]\n",
     "gcc-warning-as-error", "clang-warning-as-error"),
    # cl's valid warning levels never reach D8021; another numeric option is not a -W flag
    ("cl : Command line error D8021 : invalid numeric argument '/Ob9x'\n",
     "msvc-cl-gnu-warning-flag", None),
])
def test_near_misses_are_not_this_family(text: str, not_rule: str, instead: str | None) -> None:
    d = explain_text(text, step="build")
    assert d.rule != not_rule
    assert d.rule == instead if instead else d.klass is None
