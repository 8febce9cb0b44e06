"""Extension builds' own checks and TheRock's pip SDK (issue 40, devext): the value each rule
reads from the line (the refused target, the package, the family), and look-alikes (a list the
check accepts, an echoed command, an absolute hipcc, an UnboundLocalError elsewhere) that must
not be read as these families."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

SDK = "/home/u/venv/lib/python3.12/site-packages/rocm_sdk"


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words"), [
    # flash-attention's validate_and_update_archs: the first target not in its list
    ("AssertionError: Invalid archs: ['gfx942', 'gfx1030']. Allowed: ['native', 'gfx90a', "
     "'gfx942']", "gpu-target", "gfx1030", "flash-attention-invalid-archs",
     ("gfx1030", "GPU_ARCHS", "FLASH_ATTENTION_TRITON_AMD_ENABLE")),
    ("      AssertionError: Invalid archs: ['gfx908']. Allowed: ['native', 'gfx942']",
     "gpu-target", "gfx908", "flash-attention-invalid-archs", ("gfx908",)),
    ("RuntimeError: GPU_ARCHS not set and no GPU detected. Please set GPU_ARCHS (e.g. "
     "GPU_ARCHS='gfx942') to cross-compile.", "gpu-target", "PYTORCH_ROCM_ARCH",
     "flash-attention-gpu-archs-unset", ("GPU_ARCHS=gfx1100",)),
    # torch.utils.cpp_extension's empty ROCm root: the relative command, as dash, bash and a
    # localized bash print it
    ("/bin/sh: 1: bin/hipcc: not found", "rocm-install", "hipcc",
     "hipcc-relative-rocm-home", ("ROCM_HOME",)),
    ("/bin/sh: line 1: bin/hipcc: No such file or directory", "rocm-install", "hipcc",
     "hipcc-relative-rocm-home", ("ROCM_HOME",)),
    ("/bin/sh: строка 1: bin/hipcc: Нет такого файла или каталога", "rocm-install", "hipcc",
     "hipcc-relative-rocm-home", ("ROCM_HOME",)),
    ("OSError: ROCM_HOME environment variable is not set. Please set it to your ROCm install "
     "root.", "rocm-install", "ROCM_HOME", "cpp-extension-rocm-home-unset",
     ("ROCM_HOME", "rocm-sdk path --root")),
    # rocm_sdk: `rocm-sdk init` and `rocm-sdk path` without rocm[devel]
    ("ERROR running init: rocm_sdk_devel module for the ROCm SDK development package is not "
     "installed. This can typically be obtained by installing `rocm[devel]` from your package "
     "manager", "rocm-install", "rocm[devel]", "rocm-sdk-devel-missing", ("rocm-sdk init",)),
    ("ERROR: Could not load the `rocm[devel]` package, which is required to access runtime "
     "tools and development files. Please install it with your package manager (pip, uv, etc)",
     "rocm-install", "rocm[devel]", "rocm-sdk-devel-missing", ("rocm[libraries,devel]",)),
    # rocm_sdk's target family: the gfx part of the family asked for
    ("ValueError: Requested ROCM_SDK_TARGET_FAMILY=gfx110X-dgpu is not available in the "
     "distribution (available: gfx110X-all, gfx1151)", "gpu-target", "gfx110X",
     "rocm-sdk-target-family", ("gfx110X-all, gfx1151", "ROCM_SDK_TARGET_FAMILY")),
    # find_libraries' own message names the extras to install
    ("ModuleNotFoundError: Missing required rocm libraries. Please refer to Python setup "
     "instructions, reinstall your virtual environment, or attempt to install manually via "
     "`pip install rocm[libraries]`", "rocm-install", "rocm[libraries]",
     "rocm-sdk-libraries-missing", ("pip install \"rocm[libraries]\"",)),
    # …and what it raises instead at TheRock's snapshot, in Python 3.11's and 3.10's words
    (f'  File "{SDK}/__init__.py", line 55, in find_libraries\n'
     "UnboundLocalError: cannot access local variable 'py_module' where it is not associated "
     "with a value", "rocm-install", "rocm[libraries]", "rocm-sdk-libraries-missing",
     ("Missing required rocm libraries",)),
    (f'  File "{SDK}/__init__.py", line 55, in find_libraries\n'
     "UnboundLocalError: local variable 'py_module' referenced before assignment",
     "rocm-install", "rocm[libraries]", "rocm-sdk-libraries-missing", ()),
    # a build script reading the installed ROCm's version file where there is none
    ("FileNotFoundError: [Errno 2] No such file or directory: '/opt/rocm-6.2.0/.info/version'",
     "rocm-install", "/opt/rocm-6.2.0", "rocm-version-file-missing", ("ROCM_HOME", "rocm-core")),
    # xformers built for another torch, when an operator it should provide is then missing (a
    # CUDA build over a ROCm torch is extension_abi's; this is a ROCm build for another release)
    ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
     "    PyTorch 2.4.1+rocm6.1 with CUDA None (you have 2.5.1+rocm6.2)\n"
     "    Python  3.10.14 (you have 3.10.14)\n"
     "NotImplementedError: No operator found for `memory_efficient_attention_forward` with "
     "inputs:", "python-packaging", "xformers", "xformers-built-for-other-torch",
     ("2.4.1+rocm6.1", "2.5.1+rocm6.2", "rocmX.Y")),
])
def test_reads_the_value_from_the_line(text: str, klass: str, subject: str, rule: str,
                                       words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words)


@pytest.mark.parametrize("text", [
    # every target asked for is in the list: flash-attention's assert did not fire on a target
    "AssertionError: Invalid archs: ['gfx942']. Allowed: ['native', 'gfx942']",
    # ninja echoing the command is no failure
    "[2/32] bin/hipcc  -DWITH_HIP -I/usr/include/python3.10 -c vision.cpp -o vision.o",
    # the same variable unset in another program's function
    '  File "/home/u/app/loader.py", line 9, in find_libraries\n'
    "UnboundLocalError: cannot access local variable 'py_module' where it is not associated "
    "with a value",
    # flash-attention's warnings.warn when hipcc is missing (it may use a prebuilt wheel)
    "UserWarning: flash_attn was requested, but hipcc was not found.",
    # a listing of the folder is no build reading it
    "ls: cannot access '/opt/rocm/.info/version': No such file or directory",
    # xformers' warning alone: nothing failed (yet)
    "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
    "    PyTorch 2.4.1+rocm6.1 with CUDA None (you have 2.5.1+rocm6.2)",
    # built for this very torch: the mismatch is elsewhere (r2's rocmxformers60)
    "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
    "    PyTorch 2.5.1+rocm6.2 with CUDA None (you have 2.5.1+rocm6.2)\n"
    "NotImplementedError: No operator found for `memory_efficient_attention_forward` with "
    "inputs:",
    # a family name that names no target
    "ValueError: Requested ROCM_SDK_TARGET_FAMILY=default is not available in the distribution "
    "(available: gfx110X-all)",
])
def test_a_look_alike_claims_nothing(text: str) -> None:
    assert explain_text(text).klass is None


def test_an_absolute_hipcc_is_not_an_empty_rocm_root() -> None:
    found = explain_text("/bin/sh: 1: /opt/rocm/bin/hipcc: not found")
    assert found.rule != "hipcc-relative-rocm-home"
