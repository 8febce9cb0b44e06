"""Source-build message families read by shape (issue 40, dev pool d1): each rule reads its
value (header, library, package, member, platform) out of the line, and declines on the
look-alikes that prove another cause or none."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words"), [
    # GCC names the header in a note, in both of its wordings and either quote style
    ("x.h:62:15: error: \u2018uint64_t\u2019 does not name a type\n"
     "x.h:50:1: note: \u2018uint64_t\u2019 is defined in header \u2018<cstdint>\u2019; this "
     "is probably fixable by adding \u2018#include <cstdint>\u2019",
     "host-compiler", "libstdc++", "std-name-needs-header", ("uint64_t", "<cstdint>")),
    ("utils.h:6:1: note: 'numeric_limits' is defined in header '<limits>'; did you forget to "
     "'#include <limits>'?", "host-compiler", "libstdc++", "std-name-needs-header",
     ("numeric_limits", "<limits>")),
    # clang does not name the header: the <cstdint> types only, TheRock's prefix kept
    ("[rocprofiler-sdk] /s/elfio/elf_types.hpp:30:20: error: unknown type name 'uint16_t'",
     "host-compiler", "libstdc++", "cstdint-type-unknown", ("uint16_t", "<cstdint>")),
    ("/s/emitterutils.cpp:221:11: error: use of undeclared identifier 'uint16_t'",
     "host-compiler", "libstdc++", "cstdint-type-unknown", ("uint16_t",)),
    # the same error inside another install's clang wrapper header: that install is the cause
    ("[rocBLAS] /opt/rocm/llvm/lib/clang/20/include/__clang_hip_math.h:115:1: error: unknown "
     "type name 'uint64_t'", "rocm-install", "/opt/rocm", "clang-resource-header-types",
     ("/opt/rocm",)),
    ("ld.lld: error: unable to find library -lstdc++", "host-compiler", "libstdc++",
     "libstdcxx-not-linked", ("libstdc++-N-dev",)),
    ("/usr/bin/ld: cannot find -lstdc++: No such file or directory", "host-compiler",
     "libstdc++", "libstdcxx-not-linked", ("libstdc++",)),
    ("ld.lld: error: unable to find library -lamdhip64", "link", "libamdhip64",
     "lld-no-library", ("libamdhip64",)),
    ("d:\\x\\mxnet_op.h(941): fatal error C1002: compiler is out of heap space in pass 2",
     "out-of-memory", "memory", "compiler-heap-exhausted", ("C1002", "heap", "x64")),
    ("1>C:\\x\\stack_push.hpp(1211,1): fatal error C1060: compiler is out of heap space",
     "out-of-memory", "memory", "compiler-heap-exhausted", ("C1060", "heap")),
    # MSVC translates the text with the UI language, not the code: the code is what is read
    ("x.cpp(3): fatal error C1060: <the message in another language>", "out-of-memory",
     "memory", "compiler-heap-exhausted", ("C1060", "heap")),
    ("LINK : fatal error LNK1102: out of memory", "out-of-memory", "memory",
     "compiler-heap-exhausted", ("LNK1102", "link.exe")),
    ("C:/w/jit_type.h(2016): catastrophic error: out of memory", "out-of-memory", "memory",
     "compiler-heap-exhausted", ("front end",)),
    ("/p/torch/csrc/jit/ir/ir.cpp:1182:16: error: \u2018_set_device\u2019 is not a member of "
     "\u2018torch::jit::cuda\u2019; did you mean \u2018c10::cuda::_set_device\u2019?",
     "rocm-disabled", "USE_ROCM", "hipified-tree-without-use-rocm",
     ("cuda::_set_device", "USE_ROCM")),
    ("CMake Error at /opt/rocm/lib/cmake/hip/hip-config.cmake:157 (message):\n"
     "  Unexpected HIP_PLATFORM:", "rocm-install", "HIP_PLATFORM", "hip-platform-unexpected",
     ("empty", "HIP_PLATFORM=amd")),
    ("CMake Error at /x/hip-config.cmake:144 (message):\n  Unexpected HIP_PLATFORM: nvcc",
     "rocm-install", "HIP_PLATFORM", "hip-platform-unexpected", ("'nvcc'",)),
    ("LINK : fatal error LNK1181: cannot open input file 'C:\\x\\foo.lib'", "link", "foo",
     "msvc-cannot-open-input", ("foo.lib",)),
    ("  LINK : fatal error LNK1181: \u65e0\u6cd5\u6253\u5f00\u8f93\u5165\u6587\u4ef6"
     "\u201cC:\\VS\\DIA SDK\\lib\\amd\n64\\diaguids.lib\u201d [C:\\b\\x.vcxproj]", "link",
     "diaguids", "msvc-cannot-open-input-wrapped", ("diaguids.lib",)),
    ("CMake Error at cmake/therock_compiler_config.cmake:11 (message):\n  Bootstrap compiler "
     "was expected to be MSVC (cl.exe).  Instead found:", "host-compiler", "msvc",
     "therock-msvc-check", ("vcvars64",)),
    ("CMake Error at cmake/therock_compiler_config.cmake:27 (message):\n  Detected "
     "MSVC_VERSION is too old and may encounter OpenMP linker errors.", "host-compiler",
     "msvc", "therock-msvc-check", ("17.12",)),
    ("CMake Error at CMakeLists.txt:8 (enable_language):\n  No CMAKE_Fortran_COMPILER could "
     "be found.", "host-compiler", "fortran", "cmake-no-compiler", ("gfortran",)),
    ("-- The Fortran compiler identification is unknown\nCMake Error: Error required internal "
     "CMake variable not set, cmake may not be built correctly.\nMissing variable is:\n"
     "CMAKE_Fortran_PREPROCESS_SOURCE", "host-compiler", "fortran",
     "cmake-fortran-internal-variable", ("CMAKE_Fortran_COMPILER",)),
    ("configure: error: C compiler cannot create executables", "host-compiler", "gcc",
     "autoconf-no-working-compiler", ("config.log",)),
    ("CMake Error at /opt/rocm/hip/lib/cmake/hip/hip-config.cmake:214 (\n   include could not "
     "find requested file:\n\n     /opt/rocm/hip/lib/cmake/hip/hip-targets.cmake",
     "missing-component", "hip", "cmake-config-targets-file",
     ("/opt/rocm/hip/lib/cmake/hip", "CMAKE_PREFIX_PATH")),
    ("/b/caffe2/utils/hip/math_gpu.hip:878:9: error: use of undeclared identifier "
     "'CUBLAS_GEMM_DEFAULT_TENSOR_OP'", "hipify", "math_gpu.hip", "hipified-unknown-type",
     ("CUBLAS_GEMM_DEFAULT_TENSOR_OP", "hipify")),
    # a Composable Kernel backend function (`_ck`) undefined: CK is not built there
    ("lld-link: error: undefined symbol: void __cdecl at::hip::detail::group_gemm_ck(class "
     "at::Tensor const &)", "link", "at::hip::detail::group_gemm_ck", "linker-undefined-symbol",
     ("Composable Kernel", "USE_ROCM_CK_GEMM")),
])
def test_a_family_reads_its_value_from_the_line(text: str, klass: str, subject: str,
                                                rule: str, words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words)


@pytest.mark.parametrize("text", [
    # ROCm 7's hiprtc namespace at run time, not a missing include in a component's source
    "/tmp/comgr-c3/input/CompileSource:34:8: error: unknown type name 'uint64_t'; did you "
    "mean '__hip_internal::uint64_t'?",
    "/tmp/comgr-9750-4-0e8288/input/futhark-hip:38:9: error: unknown type name 'uint32_t'",
    # GCC's note for a C header: GCC 14's C rules, not libstdc++
    "x.c:3:1: note: 'malloc' is defined in header '<stdlib.h>'; this is probably fixable by "
    "adding '#include <stdlib.h>'",
    # a project identifier missing from a hipified file is a source bug, not hipify
    "/p/aten/src/ATen/native/hip/TensorTopK.hip:285:7: error: use of undeclared identifier "
    "'warp_bases'",
    # hip-config.cmake's message outside a CMake error block (a doc quoting it)
    "Unexpected HIP_PLATFORM:",
    # the internal-variable report for a language that was only not enabled
    "CMake Error: Error required internal CMake variable not set, cmake may not be built "
    "correctly.\nMissing variable is:\nCMAKE_C_COMPILE_OBJECT",
    # a .lib on its own line without an open LNK1181 quote before it
    "foo.lib' was written",
])
def test_a_look_alike_claims_nothing(text: str) -> None:
    assert explain_text(text).klass is None


def test_a_symbol_that_only_contains_ck_letters_is_no_ck_function() -> None:
    found = explain_text("lld-link: error: undefined symbol: void __cdecl "
                         "at::native::check_ok(int)")
    assert (found.klass, found.subject) == ("link", "at::native::check_ok")
    assert "Composable Kernel" not in found.cause + found.fix
