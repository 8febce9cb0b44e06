"""Target refusals in the wordings that held-out rounds showed the narrower rules missed:
ggml's names for the runtime's "invalid device function", and a package refusing one target
of a list. Each claim is checked with its subject; a warning or a math library's own refusal
is not claimed here."""

from __future__ import annotations

import pytest

from rocmforge.triage import explain_text


@pytest.mark.parametrize("line", [
    "RuntimeError: HIP error: invalid device function",
    "ROCm error: invalid device function",                    # containers/ramalama#732
    "CUDA error: invalid device function",                    # mozilla-ai/llamafile#403
    "CUDA error 98 at /source/llama.cpp/ggml-cuda.cu:7788: invalid device function",
])
def test_invalid_device_function_in_each_wording(line: str) -> None:
    found = explain_text(f"ggml_cuda_compute_forward: RMS_NORM failed\n{line}\n")
    assert (found.klass, found.subject, found.rule) == (
        "gpu-target", "PYTORCH_ROCM_ARCH", "no-binary-for-gpu")
    assert "invalid device function" in found.cause
    assert "<gfx>" in found.fix


def test_invalid_device_function_takes_the_target_the_log_names() -> None:
    found = explain_text("Name:                    gfx1103\n"
                         "ROCm error: invalid device function\n")
    assert (found.klass, found.subject) == ("gpu-target", "gfx1103")
    assert "--arch gfx1103" in found.fix


def test_an_unrelated_invalid_function_is_not_claimed() -> None:
    assert explain_text("error: invalid device function pointer cast\n").klass is None


@pytest.mark.parametrize(("line", "subject", "rule"), [
    ("AssertionError: One of GPU archs of ['gfx1151'] is invalid or not supported",
     "gfx1151", "aiter-arch-not-allowed"),
    ("ValueError: target list [gfx1036] is not supported by this build",
     "gfx1036", "gpu-target-list-refused"),
    ("RuntimeError: unknown device gfx1036", "gfx1036", "gpu-target-not-supported"),
    ("Error: unsupported device gfx950", "gfx950", "gpu-target-not-supported"),
])
def test_a_refused_target_is_the_subject(line: str, subject: str, rule: str) -> None:
    found = explain_text(line + "\n")
    assert (found.klass, found.subject, found.rule) == ("gpu-target", subject, rule)
    assert subject in found.cause


@pytest.mark.parametrize("line", [
    "WARNING: target gfx1036 is not supported, skipping",     # the build goes on
    "rocBLAS: arch gfx1036 is not supported",                 # a math library's own list
    "Composable Kernel: targets ['gfx1036'] are not supported",
])
def test_a_warning_or_a_library_list_is_not_a_target_claim(line: str) -> None:
    found = explain_text(line + "\n")
    assert found.klass != "gpu-target"



@pytest.mark.parametrize(("line", "klass", "rule"), [
    # GNU ld and GCC in a UTF-8 locale quote with ‘…’; the same rules read them
    ("foo.cpp:(.text+0x1a): undefined reference to ‘hipMalloc’", "link", "undefined-reference"),
    ("x.cpp:3:5: error: unknown type name ‘uint64_t’", "host-compiler", "cstdint-type-unknown"),
])
def test_typographic_quotes_read_as_ascii_and_shown_as_written(
        line: str, klass: str, rule: str | None) -> None:
    found = explain_text(line + "\n")
    assert found.klass == klass
    if rule is not None:
        assert found.rule == rule
    assert [e.text for e in found.evidence] == [line]


@pytest.mark.parametrize(("text", "klass", "subject", "rule"), [
    # NumPy 1.x's import_array() under NumPy 2 (cv2 4.8.1 printed it here)
    ("AttributeError: _ARRAY_API not found", "python-packaging", "numpy", "numpy-abi"),
    ("RuntimeError: Numpy is not available", "python-packaging", "numpy",
     "torch-numpy-unavailable"),
    # GNU make runs a recipe's program itself; setuptools' spawn words
    ("make: hipcc: No such file or directory\nmake: *** [Makefile:2: all] Error 127",
     "rocm-install", "hipcc", "hip-compiler-not-found"),
    ("error: command '/opt/rocm/bin/hipcc' failed: No such file or directory",
     "rocm-install", "hipcc", "hip-compiler-not-found"),
])
def test_numpy_and_hipcc_wordings(text: str, klass: str, subject: str, rule: str) -> None:
    found = explain_text(text + "\n")
    assert (found.klass, found.subject, found.rule) == (klass, subject, rule)


@pytest.mark.parametrize("line", [
    # torch's own warning: torch goes on, and nothing has failed yet
    "/x/torch/_subclasses/functional_tensor.py:368: UserWarning: Failed to initialize NumPy: "
    "_ARRAY_API not found (Triggered internally at ../torch/csrc/utils/tensor_numpy.cpp:84.)",
    # another program make could not run is not the HIP compiler
    "make: hipcc-wrapper: No such file or directory",
])
def test_numpy_and_hipcc_look_alikes_claim_nothing(line: str) -> None:
    assert explain_text(line + "\n").klass is None


def test_an_amd_target_on_cpp_extensions_cuda_path_means_no_rocm_torch() -> None:
    found = explain_text("ValueError: Unknown CUDA arch (gfx942) or GPU not supported\n")
    assert (found.klass, found.subject, found.rule) == (
        "rocm-disabled", "USE_ROCM", "cpp-extension-cuda-arch-gfx")
    assert "gfx942" in found.cause and "PYTORCH_ROCM_ARCH=gfx942" in found.fix


@pytest.mark.parametrize("line", [
    "ValueError: Unknown CUDA arch (8.7+PTX) or GPU not supported",  # an NVIDIA build's own
    '    raise ValueError(f"Unknown CUDA arch ({arch}) or GPU not supported")',  # the source
])
def test_cuda_arch_look_alikes_claim_nothing(line: str) -> None:
    assert explain_text(line + "\n").klass is None


@pytest.mark.parametrize("line", [
    # a CI script's bash -x trace or a prompt echoing a grep names the message, it is not it
    "+ grep 'libamdhip64.so.6: cannot open shared object file' build.log",
    "$ grep 'No matching distribution found for torch' pip.log",
])
def test_a_shell_trace_of_a_grep_claims_nothing(line: str) -> None:
    assert explain_text(line + "\n").klass is None
