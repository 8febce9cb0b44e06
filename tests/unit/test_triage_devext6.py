"""Extension builds' own preconditions (issue 40, devext6): the lines flash-attention's,
xformers' and DeepSpeed's setup.py and torch.utils.cpp_extension raise (as
tests/failures/make/devext6.sh made them), with the value each reading takes out of them, and
the look-alikes beside them that must claim nothing."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words"), [
    # xformers: the submodule's name and the folder it looked in
    ("RuntimeError: CUTLASS submodule not found at /src/xformers/third_party/cutlass/include. "
     "Did you forget to run `git submodule update --init --recursive` ?",
     "missing-component", "cutlass", "extension-submodule-missing",
     ("CUTLASS", "/src/xformers/third_party/cutlass/include", "git submodule update")),
    # xformers' other check names no folder
    ("RuntimeError: flashattention submodule not found. Did you forget to run `git submodule "
     "update --init --recursive` ?", "missing-component", "flashattention",
     "extension-submodule-missing", ("flashattention", "--recursive")),
    # flash-attention's ROCm branch in a tree without .git: the folder's last part is the name
    ("AssertionError: csrc/composable_kernel is missing, please use source distribution or git "
     "clone", "missing-component", "composable_kernel", "extension-submodule-missing",
     ("csrc/composable_kernel", "sdist")),
    # pip's indented copy of the same line
    ("      AssertionError: third_party/aiter is missing, please use source distribution or git "
     "clone", "missing-component", "aiter", "extension-submodule-missing", ("third_party/aiter",)),
    # DeepSpeed's pre-compile asserts, all ops or one
    ("AssertionError: Unable to pre-compile ops without torch installed. Please install torch "
     "before attempting to pre-compile ops.", "python-packaging", "torch",
     "deepspeed-precompile-without-torch", ("DS_BUILD_OPS", "--no-build-isolation")),
    ("AssertionError: Unable to pre-compile fused_adam, please first install torch",
     "python-packaging", "torch", "deepspeed-precompile-without-torch", ("the fused_adam op",)),
])
def test_extension_precondition_reads_its_value(text: str, klass: str, subject: str, rule: str,
                                                words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words, step="build")


@pytest.mark.parametrize("text", [
    # BuildExtension's fallback warning: it builds on without ninja
    "UserWarning: Attempted to use ninja as the BuildExtension backend but we could not find "
    "ninja.. Falling back to using the slow distutils backend.",
    # the assert's source line that a traceback quotes
    '    assert torch_available, "Unable to pre-compile ops without torch installed."',
    # DeepSpeed's warning when torch does not import and nothing is pre-compiled
    " [WARNING]  unable to import torch, please install it if you want to pre-compile any "
    "deepspeed ops.",
    # a build script's own echo of the advice, no exception
    "echo 'CUTLASS submodule not found? run git submodule update --init --recursive'",
    # the submodule words in a message that is not raised
    "note: csrc/cutlass is missing, please use source distribution or git clone",
])
def test_extension_look_alike_claims_nothing(text: str) -> None:
    assert explain_text(text, step="build").klass is None


_APEX = """torch.__version__  = {version}
Traceback (most recent call last):
  File "/src/apex/setup.py", line 171, in <module>
    _, bare_metal_version = get_cuda_bare_metal_version(CUDA_HOME)
  File "/src/apex/setup.py", line 66, in get_cuda_bare_metal_version
    raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)
                                          ~~~~~~~~~^~~~~~~~~~~~~
TypeError: unsupported operand type(s) for +: 'NoneType' and 'str'
"""

_VLLM = """-- Found Torch: /venv/lib/python3.12/site-packages/torch/lib/libtorch.so
CMake {kind} at CMakeLists.txt:130 (message):
  Can't find CUDA or HIP installation.
"""


@pytest.mark.parametrize("version", ["2.13.0+cpu", "2.9.1+rocm6.4"])
def test_apex_nvcc_from_none_with_a_torch_without_cuda(version: str) -> None:
    found = explain_text(_APEX.format(version=version), step="build")
    assert (found.klass, found.subject, found.rule) == (
        "rocm-disabled", "USE_ROCM", "apex-nvcc-path-from-none")
    assert "ROCm/apex" in found.fix


def test_vllm_no_cuda_or_hip_names_the_torch_it_found() -> None:
    found = explain_text(_VLLM.format(kind="Error"), step="configure")
    assert (found.klass, found.subject, found.rule) == (
        "rocm-disabled", "USE_ROCM", "vllm-no-cuda-or-hip")
    assert "(/venv/lib/python3.12/site-packages/torch/lib/libtorch.so)" in found.cause


@pytest.mark.parametrize("text", [
    # a CUDA torch: the same TypeError is a CUDA toolkit missing, a CUDA build's own failure
    _APEX.format(version="2.5.1+cu121"),
    # no torch version shown: nothing says which torch it was
    _APEX.replace("torch.__version__  = {version}\n", ""),
    # the NoneType + str error of another frame (not a path to nvcc)
    "torch.__version__  = 2.13.0+cpu\n  File \"/src/x/setup.py\", line 3, in <module>\n"
    "    name = prefix + \"-ext\"\nTypeError: unsupported operand type(s) for +: 'NoneType' "
    "and 'str'",
    # the vLLM words in a CMake warning block, or in an echoed script line
    _VLLM.format(kind="Warning"),
    # a ROCm torch whose own HIP lookup failed above: why is not in the lines
    "-- Could NOT find HIP: Found unsuitable version \"0.0.0\", but required is at least "
    "\"1.0\" (found /opt/rocm)\nHIP VERSION: 0.0.0\n" + _VLLM.format(kind="Error"),
    "echo \"Can't find CUDA or HIP installation.\"",
])
def test_torch_kind_look_alike_claims_nothing(text: str) -> None:
    assert explain_text(text, step="build").klass is None


_ARCH = """CMake Error at cmake/utils.cmake:410 (message):
  None of the detected ROCm architectures: {archs} is supported.  Supported
  ROCm architectures are:
  gfx906;gfx908;gfx90a;gfx942;gfx950;gfx1030;gfx1100;gfx1101;gfx1200;gfx1201.
"""


@pytest.mark.parametrize(("archs", "subject", "said"), [
    ("gfx1036", "gfx1036", "(gfx1036)"),
    # several targets: the first names the subject, the reading lists them all
    ("gfx1102;gfx1103", "gfx1102", "(gfx1102, gfx1103)"),
    # a target with its feature suffix
    ("gfx1151:xnack-", "gfx1151", "gfx1151:xnack-"),
    # nothing asked and nothing detected
    ("", "PYTORCH_ROCM_ARCH", "no target at all"),
])
def test_vllm_unsupported_arch_reads_the_targets(archs: str, subject: str, said: str) -> None:
    found = explain_text(_ARCH.format(archs=archs), step="configure")
    assert (found.klass, found.subject, found.rule) == (
        "gpu-target", subject, "vllm-rocm-arch-unsupported")
    assert said in found.cause


def test_vllm_arch_words_outside_an_error_block_claim_nothing() -> None:
    text = _ARCH.format(archs="gfx1036").replace("CMake Error", "CMake Warning")
    assert explain_text(text, step="configure").klass is None


def test_vllm_python_version_reads_the_version() -> None:
    text = ("CMake Error at cmake/utils.cmake:15 (message):\n"
            "  Python version (3.13) is not one of the supported versions:\n"
            "  3.9;3.10;3.11;3.12.\n")
    found = explain_text(text, step="configure")
    assert (found.klass, found.subject, found.rule) == (
        "python-packaging", "python", "vllm-python-version-unsupported")
    assert "is 3.13" in found.cause and "Python 3.13" in found.fix
    # the same words in a warning block claim nothing
    assert explain_text(text.replace("CMake Error", "CMake Warning"),
                        step="configure").klass is None
