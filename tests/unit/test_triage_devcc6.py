"""Compiler and device-code families of r14's misses read from the programs' own wordings
(issue 40, devcc6): clang's diagnostics (clang++-22 here), hipcc's verbose command line, AITER's
JIT checks, torch.utils.hipify's lookup, Composable Kernel's per-target macro and hipBLASLt's
removed attributes, with the value each reading takes out of the line, and the look-alikes
that must claim nothing (a flag probe, a message only echoed, a warning)."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

_HIPIFY_KEYERROR = """Traceback (most recent call last):
  File "setup.py", line 471, in <module>
  File "/opt/conda/lib/torch/utils/hipify/hipify_python.py", line 785, in repl
    value = HIPIFY_FINAL_RESULT[header_filepath]["hipified_path"]
KeyError: '/usr/include/libjpeg/jpeglib.h'"""

_HIPBLASLT = """GemmHipblaslt.h:495:31: error: expected expression
  495 |           matmul.setAttribute(HIPBLASLT_MATMUL_DESC_B_SCALE_POINTER_VEC_EXT, p);
/opt/rocm-7.1.0/include/hipblaslt/hipblaslt.h:80:5: note: expanded from macro 'HIPBLASLT_MATMUL_DESC_B_SCALE_POINTER_VEC_EXT'
   80 |     static_assert(false, "HIPBLASLT_MATMUL_DESC_B_SCALE_POINTER_VEC_EXT is deprecated and not supported. Please set HIPBLASLT_MATMUL_DESC_B_SCALE_MODE as HIPBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F instead.")"""  # noqa: E501

_CK_UNDECLARED = """/src/third_party/composable_kernel/include/ck/utility/amd_buffer_addressing.hpp:30:48: error: use of undeclared identifier 'CK_BUFFER_RESOURCE_3RD_DWORD'
2 errors generated when compiling for gfx1036."""  # noqa: E501


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words"), [
    # AITER's target check, with two targets named: the first is the subject
    ("AssertionError: One of GPU archs of ['gfx1201', 'gfx1103'] is invalid or not supported",
     "gpu-target", "gfx1201", "aiter-arch-not-allowed", ("gfx1201, gfx1103",)),
    # hipify's unguarded lookup of a system header it never hipified
    (_HIPIFY_KEYERROR, "hipify", "hipify_python.py", "hipify-result-keyerror",
     ("/usr/include/libjpeg/jpeglib.h", "HIPIFY_FINAL_RESULT")),
    # clang's attribute-on-type, on one line and wrapped after "error:"
    ("x.cuh:488:16: error: 'alignas' attribute cannot be applied to types",
     "host-compiler", "clang", "attribute-on-type", ("alignas",)),
    ("  gemm.cuh:48:16: error:\n  'alignas' attribute cannot be applied to types",
     "host-compiler", "clang", "attribute-on-type", ("alignas", "__attribute__((aligned")),
    # a C++17 name clang does not find: both causes named, the header in the fix
    ("a.cpp:5:6: error: no template named 'variant' in namespace 'std'",
     "host-compiler", "libstdc++", "std17-name-missing", ("#include <variant>", "C++17")),
    ("/usr/include/c++/v1/x.h:3:3: error: no type named 'string_view' in namespace 'std'",
     "host-compiler", "libc++", "std17-name-missing", ("<string_view>",)),
    # MSVC options clang++ takes for files (Windows clang++.exe and a Linux clang++-22)
    ("  0.1\tclang++.exe: error: no such file or directory: '/permissive-'",
     "host-compiler", "clang", "msvc-option-to-clang", ("/permissive-", "clang-cl")),
    ("clang++-22: error: no such file or directory: '/Zc:preprocessor'",
     "host-compiler", "clang", "msvc-option-to-clang", ("/Zc:preprocessor",)),
    # -Wsign-compare made an error: the two types in the fix
    ("t.h:53:20: error: comparison of integers of different signs: 'int' and 'size_t' (aka "
     "'unsigned long') [-Werror,-Wsign-compare]", "host-compiler", "clang",
     "clang-warning-as-error", ("-Wno-error=sign-compare", "'int' operand as 'size_t'")),
    # the compiled source at the head of clang's include chain, named in the hipify fix
    ("In file included from /src/ggml/ggml-cuda/argsort.cu:2:\n"
     "/src/ggml/ggml-cuda/vendors/cuda.h:3:10: fatal error: 'cuda_runtime.h' file not found",
     "hipify", "cuda_runtime.h", "missing-header", ("argsort.cu",)),
    # hipBLASLt's removed attribute: the old and the new name
    (_HIPBLASLT, "math-library", "hipblaslt", "hipblaslt-attribute-removed",
     ("HIPBLASLT_MATMUL_DESC_B_SCALE_POINTER_VEC_EXT", "HIPBLASLT_MATMUL_DESC_B_SCALE_MODE")),
    # CK's per-target macro left undeclared: CK's failure, the target named
    (_CK_UNDECLARED, "composable-kernel", "composable_kernel", "ck-error",
     ("compile for gfx1036", "CK_BUFFER_RESOURCE_3RD_DWORD", "not one of them")),
    # an -mllvm option a real compile (not a probe) is given still reads as before
    ("hipcc-cmd: /opt/rocm/llvm/bin/clang++ -mllvm -foo=1 -x hip -c kern.hip -o kern.o\n"
     "clang (LLVM option parsing): Unknown command line argument '-foo=1'.",
     "host-compiler", "clang", "llvm-option-unknown", ("-mllvm -foo=1",)),
])
def test_compiler_family_reads_its_value(text: str, klass: str, subject: str, rule: str,
                                         words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words, step="build")


@pytest.mark.parametrize("text", [
    # AITER's flag probe of /dev/null: hipcc's command line, and AITER's own verdict line
    ("hipcc-cmd: /usr/bin/clang++-15 -mllvm -amdgpu-x=1 -x hip -c /dev/null -o \"/dev/null\"\n"
     "clang (LLVM option parsing): Unknown command line argument '-amdgpu-x=1'."),
    ("clang (LLVM option parsing): Unknown command line argument '-amdgpu-x=1'.\n"
     "[aiter] -mllvm -amdgpu-x=1 is not supported by hipcc."),
    # AITER's check with no target in its list
    "AssertionError: One of GPU archs of ['native'] is invalid or not supported",
    # a KeyError that is not hipify's lookup
    "Traceback (most recent call last):\n  File \"a.py\", line 3, in f\n"
    "    x = table[key]\nKeyError: '/usr/include/png.h'",
    # the alignas message without its error (a wrapped line above that is not "error:")
    "  note: see the declaration here\n  'alignas' attribute cannot be applied to types",
    # a std name of C++11 or older is the other rule's; an unknown name is no one's
    "a.cpp:1:6: error: no template named 'flat_map_of_mine' in namespace 'std'",
    # a missing file clang was given, not an MSVC option
    "clang++: error: no such file or directory: '/src/kernels/gemm.hip'",
    # the hipBLASLt text quoted outside a compile (a header listing)
    ('80:     static_assert(false, "HIPBLASLT_MATMUL_DESC_A_SCALE_POINTER_VEC_EXT is '
     'deprecated and not supported. Please set HIPBLASLT_MATMUL_DESC_A_SCALE_MODE as X")'),
    # a sign-compare warning that is not an error
    "t.h:5:20: warning: comparison of integers of different signs: 'int' and 'size_t' "
    "[-Wsign-compare]",
])
def test_compiler_family_look_alike_claims_nothing(text: str) -> None:
    found = explain_text(text, step="build")
    assert found.klass is None, (found.klass, found.rule)
