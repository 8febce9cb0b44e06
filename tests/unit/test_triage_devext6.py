"""Extension builds' own preconditions (issue 40, devext6): the lines flash-attention's,
xformers' and DeepSpeed's setup.py and torch.utils.cpp_extension raise (as
tests/failures/make/devext6.sh made them), with the value each reading takes out of them, and
the look-alikes beside them that must claim nothing."""

from __future__ import annotations

import pytest

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
    # the JIT loader, and DeepSpeed's wrapper naming its op
    ("RuntimeError: Ninja is required to load C++ extensions (pip install ninja to get it)",
     "python-packaging", "ninja", "extension-jit-ninja-missing", ("pip install ninja", "PATH")),
    ("RuntimeError: Unable to JIT load the cpu_adam op due to ninja not being installed.",
     "python-packaging", "ninja", "extension-jit-ninja-missing", ("cpu_adam", "DeepSpeed")),
    # DeepSpeed's pre-compile asserts, all ops or one
    ("AssertionError: Unable to pre-compile ops without torch installed. Please install torch "
     "before attempting to pre-compile ops.", "python-packaging", "torch",
     "deepspeed-precompile-without-torch", ("DS_BUILD_OPS", "--no-build-isolation")),
    ("AssertionError: Unable to pre-compile fused_adam, please first install torch",
     "python-packaging", "torch", "deepspeed-precompile-without-torch", ("the fused_adam op",)),
])
def test_extension_precondition_reads_its_value(text: str, klass: str, subject: str, rule: str,
                                                words: tuple[str, ...]) -> None:
    found = explain_text(text, step="build")
    assert (found.klass, found.subject, found.rule) == (klass, subject, rule)
    said = f"{found.cause} {found.fix}"
    for word in words:
        assert word in said


@pytest.mark.parametrize("text", [
    # BuildExtension's fallback warning: it builds on without ninja
    "UserWarning: Attempted to use ninja as the BuildExtension backend but we could not find "
    "ninja.. Falling back to using the slow distutils backend.",
    # the raise line of the traceback's source echo, not the exception
    '    raise RuntimeError("Ninja is required to load C++ extensions (pip install ninja to '
    'get it)")',
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
