"""Build-time families of r10's misses, read from the programs' own wordings (issue 40,
devbt3): CMake's generate and parse errors, clang's driver and warning diagnostics, lld's
undefined and duplicate symbols, CMake's CUDA toolkit lookup. Each line is what the program
prints, with the values the reading must take out of it, and the look-alikes beside them
that must claim nothing (or not this)."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

_IMPORTED = """CMake Error in src/CMakeLists.txt:
  Imported target "roc::hipblas" includes non-existent path

    "/opt/rocm-6.2.0/include/hipblas"

  in its INTERFACE_INCLUDE_DIRECTORIES.  Possible reasons include:
"""

_THEROCK = """[rocBLAS configure] CMake Error in library/CMakeLists.txt:
[rocBLAS configure]   Imported target "hip::host" includes non-existent path
[rocBLAS configure]
[rocBLAS configure]     "/build/dist/rocm/lib/llvm/include"
[rocBLAS configure]
"""

_ESCAPE = """CMake Error at CMakeLists.txt:3 (set):
  Syntax error in cmake code at

    /src/CMakeLists.txt:3

  when parsing string

    C:\\Program Files\\AMD\\ROCm\\6.2\\lib\\cmake

  Invalid character escape '\\P'.
"""

_NVCC = "CMake Error at /usr/share/cmake/Modules/Internal/CMakeCUDAFindToolkit.cmake:104 " \
    """(message):
  Failed to find nvcc.

  Compiler requires the CUDA toolkit.  Please set the CUDAToolkit_ROOT
  variable.
Call Stack (most recent call first):
  CMakeLists.txt:3 (project)
"""


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words"), [
    # the path is on its own line after the target: both are read
    (_IMPORTED, "cmake", "cmake", "cmake-imported-target-missing-include",
     ("roc::hipblas", "/opt/rocm-6.2.0/include/hipblas")),
    # the same under TheRock's "[<project> <phase>]" prefix, its blank lines kept
    (_THEROCK, "cmake", "cmake", "cmake-imported-target-missing-include",
     ("hip::host", "/build/dist/rocm/lib/llvm/include")),
    # set() with FORCE and no CACHE (newer CMake), the file from the header line
    ("CMake Error at cmake/Options.cmake:40 (set):\n"
     "  set given invalid arguments: FORCE specified without CACHE\n",
     "cmake", "cmake", "cmake-set-invalid-arguments", ("cmake/Options.cmake:40", "FORCE")),
    # older CMake's wording of the same check
    ("CMake Error at CMakeLists.txt:7 (set):\n  set given invalid arguments for CACHE mode.\n",
     "cmake", "cmake", "cmake-set-invalid-arguments", ("CACHE",)),
    # a Windows path in CMake code: the escape and the Windows reading
    (_ESCAPE, "cmake", "cmake", "cmake-invalid-escape", ("'\\P'", "Windows path")),
    # MSVC's defines and optimisation flags given to clang++'s GNU driver
    ("clang++.exe: error: no such file or directory: '/D_WINDOWS'\n"
     "clang++.exe: error: no such file or directory: '/DWIN32'\n",
     "cmake", "cmake", "clang-given-msvc-flags", ("/D_WINDOWS", "MSVC")),
    # clang under -Werror, a GCC-only warning in a #pragma, and on the command line
    ("a.cpp:3:32: error: unknown warning group '-Wmaybe-uninitialized', ignored "
     "[-Werror,-Wunknown-warning-option]\n",
     "host-compiler", "clang", "clang-unknown-warning-werror",
     ("-Wmaybe-uninitialized", "#pragma")),
    ("error: unknown warning option '-Wno-class-memaccess' [-Werror,-Wunknown-warning-option]\n",
     "host-compiler", "clang", "clang-unknown-warning-werror",
     ("-Wno-class-memaccess", "compile flags")),
    # lld's device link: a CK template left undefined, any of its types
    ("ld.lld: error: undefined hidden symbol: void ck_tile::atomic_max<float>(float*, "
     "float const&)\n", "composable-kernel", "composable_kernel", "ck-undefined-symbol",
     ("ck_tile::atomic_max<float>", "atomic_max")),
    # an AOTriton header missing, in GCC's and clang's wording
    ("src/attn.cpp:5:10: fatal error: aotriton/config.h: No such file or directory\n",
     "aotriton", "aotriton", "aotriton-header-missing", ("aotriton/config.h",)),
    ("src/attn.hip:5:10: fatal error: 'aotriton/runtime.h' file not found\n",
     "aotriton", "aotriton", "aotriton-header-missing", ("aotriton/runtime.h",)),
    # CMake's CUDA toolkit lookup for a project that enables CUDA
    (_NVCC, "rocm-disabled", "USE_ROCM", "cuda-toolkit-path", ("CUDA",)),
    # clang on Windows without the SDK's C runtime headers, wrapped and on one line
    ("C:\\ext\\include\\hip/hip_runtime.h(49,10): fatal error:\n\n"
     "      'stdio.h' file not found\n", "host-compiler", "msvc", "windows-crt-header-missing",
     ("stdio.h", "Visual Studio")),
    ("D:\\a\\launcher.c(2,10): fatal error: 'math.h' file not found\n",
     "host-compiler", "msvc", "windows-crt-header-missing", ("math.h", "Windows SDK")),
    # hipcc running the clang++ it built from ROCM_PATH, and the shell not finding it
    ("sh: 1: /opt/tarball/lib/llvm/bin/clang++: not found\n"
     "failed to execute:/opt/tarball/lib/llvm/bin/clang++  -O3 -x hip a.cpp\n",
     "rocm-install", "clang++", "hipcc-clang-missing", ("/opt/tarball is not", "ROCM_PATH")),
    # the Perl hipcc (hipcc.pl) failing to exec the clang it built from ROCM_PATH
    ('Can\'t exec "/opt/rocm-x/bin/clang-17": No such file or directory at '
     "/usr/bin//hipcc.pl line 164.\n", "rocm-install", "clang-17", "hipcc-clang-missing",
     ("/opt/rocm-x/bin/clang-17", "ROCM_PATH")),
    # HIP's bfloat16 helpers defined twice: an older HIP header copy
    ("ld.lld: error: duplicate symbol: __low2float(__hip_bfloat162)\n"
     ">>> defined at a.hip\n>>> defined at b.hip\n",
     "rocm-install", "hip_bf16.h", "hip-header-duplicate-symbol",
     ("__low2float(__hip_bfloat162)", "/usr/include/hip")),
])
def test_family_reads_its_values(text: str, klass: str, subject: str, rule: str,
                                 words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words)


def test_the_missing_package_fix_names_its_dir_variable() -> None:
    d = explain_text('CMake Error at cmake/public/LoadHIP.cmake:31 (find_package):\n'
                     '  Could not find a package configuration file provided by "rocprim"\n'
                     '  with any of the following names:\n')
    assert (d.klass, d.subject) == ("missing-component", "rocprim")
    assert "rocprim_DIR" in d.fix


@pytest.mark.parametrize("text", [
    # a quoted path alone, with no imported-target header before it
    'CMake Error in CMakeLists.txt:\n  Something else\n\n    "/opt/rocm/include"\n',
    # an unknown warning group that stays a warning (no -Werror)
    "a.cpp:3:32: warning: unknown warning group '-Wclass-memaccess', ignored "
    "[-Wunknown-warning-option]\n",
    # /O2 alone: a missing input named like an MSVC flag, without CMake's MSVC defines
    "clang++: error: no such file or directory: '/O2'\n",
    # a C header missing on Linux: not the Windows SDK
    "/src/a.c:3:10: fatal error: 'stdlib.h' file not found\n",
    # Perl failing to exec a clang from some other script
    'Can\'t exec "/opt/x/bin/clang": No such file or directory at build.pl line 9.\n',
    # a missing clang++ with no hipcc behind it (a plain shell script)
    "sh: 1: /opt/x/bin/clang++: not found\n",
    # hipcc's 'failed to execute' after an ordinary compile error: the compiler was there
    "a.cpp:3:1: error: unknown type name 'foo'\nfailed to execute:/opt/rocm/lib/llvm/bin/"
    "clang++ -x hip a.cpp\n",
    # the header named in a compile command, not missing
    "[3/90] g++ -I/opt/aotriton/include -c attn.cpp -include aotriton/flash.h\n",
])
def test_look_alikes_claim_nothing(text: str) -> None:
    assert not explain_text(text).explained


def test_a_plain_duplicate_symbol_stays_a_link_error() -> None:
    d = explain_text("ld.lld: error: duplicate symbol: helper(float)\n"
                     ">>> defined at a.cu\n>>> defined at b.cu\n")
    assert (d.klass, d.rule) == ("link", "link-duplicate-symbol")


def test_a_bf16_name_without_hip_types_is_not_claimed_as_hip_headers() -> None:
    # CUDA's cuda_bf16 has a __float2bfloat16 too: without HIP's types in the log, no claim
    d = explain_text("ld: a.o: multiple definition of `__float2bfloat16(float)'; "
                     "b.o: first defined here\n")
    assert d.rule != "hip-header-duplicate-symbol"


def test_an_undefined_symbol_outside_ck_stays_with_the_linker() -> None:
    d = explain_text("ld.lld: error: undefined symbol: rocblas_sgemm\n")
    assert d.rule != "ck-undefined-symbol"
