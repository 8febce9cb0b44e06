"""Value reading of the shape added for r13's misses (devrt5): clang setting aside rocWMMA's
own API template (a substitution failure) for the basic 16x16x16 block of a 16-bit input,
which shows the installed rocWMMA has no path for the target being compiled. Each test asserts
the exact values read; the look-alikes (another block or type, an input fragment without a
layout, the same note without rocWMMA's call error, a header outside rocWMMA) claim nothing."""

from __future__ import annotations

from rocmforge.triage import explain_text

_CALL = ("/src/app/kernels/attn.cu:193:21: error: no matching function for call to "
         "'mma_sync'\n")


def _note(block: str = "16, BlockN = 16, BlockK = 16", data: str = "__half",
          acc: str = "__half",
          layouts: str = "LayoutA = rocwmma::row_major, LayoutB = rocwmma::col_major",
          path: str = "/opt/rocm-6.4.1/lib/llvm/bin/../../../include/rocwmma/"
                      "rocwmma_impl.hpp") -> str:
    return (f"{path}:331:9: note: candidate template ignored: substitution failure "
            f"[with BlockM = {block}, InputT = {data}, ComputeT = {acc}, {layouts}, "
            "LayoutC = void, LayoutD = void]\n")


def test_rocwmma_without_the_compile_target_is_read_with_its_root_and_target() -> None:
    d = explain_text("1 warning generated when compiling for gfx1201.\n" + _CALL + _note())
    assert (d.klass, d.subject, d.rule) == ("math-library", "rocwmma",
                                            "rocwmma-fragment-substitution")
    assert d.cause.startswith("the installed rocWMMA (/opt/rocm-6.4.1/include/rocwmma) "
                              "does not provide mma_sync")
    assert "mma_sync for the basic 16x16x16 __half -> __half block on gfx1201" in d.cause
    assert "GGML_HIP_ROCWMMA_FATTN=OFF" in d.fix
    assert "GGML_HIP_ROCWMMA_FATTN=OFF) for gfx1201, or use a rocWMMA release" in d.fix


def test_a_windows_path_and_a_log_without_a_target_still_read_the_root() -> None:
    d = explain_text(_CALL.replace("'mma_sync'", "'rocwmma::mma_sync'")
                     + _note(path="C:\\ROCm\\6.4\\include\\rocwmma\\rocwmma_impl.hpp",
                             data="rocwmma::bfloat16_t", acc="float"))
    assert (d.subject, d.rule) == ("rocwmma", "rocwmma-fragment-substitution")
    assert "(C:/ROCm/6.4/include/rocwmma)" in d.cause
    assert "the log does not name it" in d.cause


def test_another_block_size_is_the_applications_choice_not_the_target() -> None:
    d = explain_text(_CALL + _note(block="32, BlockN = 32, BlockK = 8"))
    assert d.rule != "rocwmma-fragment-substitution"
    assert d.subject != "rocwmma"


def test_another_input_type_is_not_proof_of_a_missing_target() -> None:
    d = explain_text(_CALL + _note(data="int8_t"))
    assert d.rule != "rocwmma-fragment-substitution"


def test_an_integer_accumulator_is_not_proof_of_a_missing_target() -> None:
    d = explain_text(_CALL + _note(acc="int32_t"))
    assert d.rule != "rocwmma-fragment-substitution"


def test_an_input_fragment_without_a_layout_is_the_applications_mistake() -> None:
    d = explain_text(_CALL + _note(layouts="LayoutA = void, LayoutB = rocwmma::col_major"))
    assert d.rule != "rocwmma-fragment-substitution"


def test_the_note_without_rocwmmas_call_error_claims_nothing() -> None:
    d = explain_text(_note())
    assert d.rule != "rocwmma-fragment-substitution"
    assert d.klass is None


def test_another_librarys_substitution_failure_is_not_rocwmma() -> None:
    d = explain_text(_CALL + _note(path="/opt/rocm/include/rocwmmx/impl.hpp"))
    assert d.rule != "rocwmma-fragment-substitution"
