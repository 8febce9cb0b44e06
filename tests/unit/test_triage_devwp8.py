"""The same failure at another ROCm root (issue 40, devwp8): the rules a Windows path broke
read it as a value (a drive letter, backslashes, the space of C:\\Program Files), and keep
their declines; tests/integration/test_failure_variants.py moves whole corpus logs."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text
from rocmforge.triage.parsers.rocm_install import RULES as INSTALL_RULES
from rocmforge.triage.rule import Rule

WIN = "C:\\Program Files\\AMD\\ROCm\\6.2"

_ROCWMMA = (
    "C:\\src\\llama.cpp\\ggml\\src\\ggml-cuda\\fattn-wmma-f16.cu:193:21: error: no matching "
    "function for call to 'mma_sync'\n"
    f"{WIN}\\lib\\llvm\\bin\\..\\..\\..\\include\\rocwmma\\rocwmma_impl.hpp:331:9: note: "
    "candidate template ignored: substitution failure [with BlockM = 16, BlockN = 16, "
    "BlockK = 16, InputT = __half, ComputeT = __half, LayoutA = rocwmma::row_major]")


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words"), [
    # rocBLAS on Windows: the folder of rocblas.dll (GetModuleFileNameA, its trailing
    # backslash kept) + "/rocblas/library/TensileLibrary.dat" (ROCm/rocBLAS@b520bc83:
    # library/src/tensile_host.cpp), so the separators are mixed
    (f"rocBLAS error: Cannot read {WIN}\\bin\\/rocblas/library/TensileLibrary.dat: No such "
     "file or directory for GPU arch : gfx1103", "math-library", "rocblas", "tensile-library",
     ("gfx1103",)),
    # rocBLAS' generic TensileLibrary.dat under C:\Program Files (the errno after it is stale)
    (f"rocBLAS error: Cannot read {WIN}\\bin\\rocblas\\library\\TensileLibrary.dat: "
     "Illegal seek", "math-library", "rocblas", "tensile-library", ("rocblas",)),
    # the same message wrapped before "for GPU arch", at a Windows root
    (f"rocBLAS error: Cannot read {WIN}\\bin\\rocblas\\library\\TensileLibrary.dat: \n"
     "Illegal seek for GPU arch: gfx1103", "math-library", "rocblas", "tensile-arch-wrapped",
     ("gfx1103",)),
    # rocWMMA's mma_sync note with the header under C:\Program Files
    (_ROCWMMA, "math-library", "rocwmma", "rocwmma-fragment-substitution", ()),
])
def test_a_windows_rocm_root_reads_as_the_linux_one(text: str, klass: str, subject: str,
                                                     rule: str, words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words)


def _install_rule(rule_id: str) -> Rule:
    return next(r for r in INSTALL_RULES if r.id == rule_id)


@pytest.mark.parametrize(("line", "root"), [
    (f"[rocBLAS] {WIN}\\llvm\\lib\\clang\\20\\include\\__clang_hip_math.h:115:1: error: "
     "unknown type name 'uint64_t'", WIN),
    ("C:/Program Files/AMD/ROCm/6.2/lib/llvm/lib/clang/20/include/__clang_hip_math.h:115:1: "
     "error: unknown type name 'uint64_t'", "C:/Program Files/AMD/ROCm/6.2"),
    ("[rocBLAS] /usr/lib64/rocm/llvm/lib/clang/20/include/__clang_hip_math.h:115:1: error: "
     "unknown type name 'uint64_t'", "/usr/lib64/rocm"),
])
def test_clang_wrapper_header_root_is_read_at_any_root(line: str, root: str) -> None:
    # The engine gives this line to compiler_headers.py's cstdint-type-unknown at a Windows
    # root (its decline of clang's resource headers reads "/" only: devq8's, reported), so
    # the pattern itself is what is tested here.
    match = _install_rule("clang-resource-header-types").pattern.search(line)
    assert match is not None
    assert match.group("root") == root


@pytest.mark.parametrize("text", [
    # a Linux line with two paths: the root is not stretched across the space
    "cc /src/a.c /opt/rocm/llvm/lib/clang/20/include/__clang_hip_math.h:1:1: error: "
    "unknown type name 'uint64_t'",
])
def test_a_posix_root_still_stops_at_a_space(text: str) -> None:
    match = _install_rule("clang-resource-header-types").pattern.search(text)
    assert match is not None and match.group("root") == "/opt/rocm"


@pytest.mark.parametrize("text", [
    # "Cannot read" of a file that is not TensileLibrary: not rocBLAS' kernels
    f"rocBLAS error: Cannot read {WIN}\\bin\\rocblas\\library\\Kernels.so-000-gfx1103.hsaco: "
    "Illegal seek",
    # a rocWMMA note with another block size: the application's choice, no claim
    _ROCWMMA.replace("BlockM = 16", "BlockM = 32"),
])
def test_the_look_alikes_still_claim_nothing(text: str) -> None:
    assert explain_text(text).klass is None
