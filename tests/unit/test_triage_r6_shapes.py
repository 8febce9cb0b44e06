"""Message families read by shape for held-out round r6 (issue 40): each rule reads its value
(target, library, check file, version, path, program) out of the line, and declines on the
look-alikes that prove another cause or none."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

_HIP_LANG = ("CMake Error at /usr/share/cmake/Modules/CMakeDetermineHIPCompiler.cmake:140 "
             "(message):\nThe ROCm root directory:\n{root}\ndoes not contain the HIP runtime "
             "CMake package, expected at one of:\n{root}/lib/cmake/hip-lang/hip-lang-config.cmake"
             "\n{more}Call Stack (most recent call first):\n")


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words"), [
    # a math library's own target check: the library from the prefix, the check file read
    ("[rocBLAS configure] CMake Error at /v/Tensile/Source/cmake/TensileSupportedArchitectures"
     ".cmake:92 (message):\n[rocBLAS configure]   Unsupported GPU target: gfx1036",
     "math-library", "rocblas", "library-unsupported-target",
     ("gfx1036", "TensileSupportedArchitectures.cmake", "exclude")),
    # with MIOpen's warning that the fitting solver got no workspace (the bare message: r12)
    ("MIOpen(HIP): Warning [IsEnoughWorkspace] [EvaluateInvokers] Solver <GemmFwdRest>, "
     "workspace required: 296353792, provided ptr: 0000000000000000 size: 0\n"
     "MIOpen Error: D:/r/MIOpen/src/ocl/convolutionocl.cpp:275: No suitable algorithm was found "
     "to execute the required convolution", "math-library", "miopen", "miopen-no-solver",
     ("MIOPEN_DEBUG_CONV_DIRECT_NAIVE_CONV_FWD",)),
    # collect2 names the killed linker
    ("collect2: fatal error: ld terminated with signal 9 [Killed]", "out-of-memory", "ld",
     "compiler-killed", ("linker", "lld", "memory")),
    ("g++: fatal error: cc1plus terminated with signal 9 [Killed]", "out-of-memory", "cc1plus",
     "compiler-killed", ("compiler",)),
    # CMake listing only <root>/lib/cmake for a /usr ROCm: the CMake release, not ROCm
    (_HIP_LANG.format(root="/usr", more=""), "cmake", "cmake", "hip-lang-lib-only",
     ("/usr/lib64/cmake", "lib64")),
    # hipcc's clang path: absolute (its environment settings) or relative (ROCM_PATH unset)
    ("Can't exec \"/usr/llvm/bin/clang\": No such file or directory at /usr/lib/hip/bin/hipcc "
     "line 192.", "rocm-install", "hipcc", "hipcc-no-clang", ("/usr/llvm/bin/clang",
                                                              "HIP_CLANG_PATH", "environment")),
    ("failed to execute:llvm/bin/clang++ --driver-mode=g++ -O3 --version", "rocm-install",
     "hipcc", "hipcc-no-clang", ("llvm/bin/clang++", "ROCM_PATH")),
    # torch's ROCm release read from its version, with the runtime's code object error
    ("RuntimeError: HIP Function Failed (k.hpp,51) shared object initialization failed\n"
     "torch                    2.4.1+rocm6.0", "rocm-install", "torch",
     "torch-runtime-rejects-code", ("ROCm 6.0", "2.4.1+rocm6.0")),
    # a Tensile kernel rejected by the assembler in a distribution's package build
    ("/builddir/build/BUILD/x/build_tmp/TENSILE/assembly/Cijk_A.s:18:26: error: not a valid "
     "operand.", "host-compiler", "clang", "tensile-asm-distro-clang",
     ("builddir/build/BUILD", "not a valid operand")),
    # the language mode a header needs, the compiler from the include chain
    ("In file included from /opt/rocm-7.0.0/lib/llvm/bin/../../../include/hipcub/config.hpp:78:"
     "\n/opt/rocm-7.0.0/include/rocprim/config.hpp:69:6: error: \"rocPRIM requires at least "
     "C++17\"", "host-compiler", "clang", "cxx-standard-too-old", ("C++17", "-std=c++17")),
    ("In file included from /usr/lib/gcc/x86_64-linux-gnu/8/include/x.h:1:\n/s/a.hpp:3:2: "
     "error: \"hipCUB requires at least C++14\"", "host-compiler", "gcc",
     "cxx-standard-too-old", ("C++14",)),
    # a HIP header a later release added: the release, not the include path
    ("/h/DataTypes.hpp:40:10: fatal error: 'hip/hip_fp8.h' file not found", "rocm-install",
     "rocm", "missing-header", ("hip/hip_fp8.h", "6.2")),
    # amdsmi: torch's init warning followed by its lazy init failing
    ("torch/cuda/__init__.py:703: UserWarning: Can't initialize amdsmi - Error code: 34\n"
     "  File \"/v/torch/cuda/__init__.py\", line 332, in _lazy_init\n"
     "IndexError: list index out of range", "python-packaging", "amdsmi", "amdsmi-init",
     ("error code 34", "pip uninstall amdsmi")),
    # ROCm's amd-smi CLI importing a venv's amdsmi: the release read from the CLI's path
    ("Traceback (most recent call last):\n"
     "  File \"/opt/rocm-6.4.3/libexec/amdsmi_cli/amdsmi_init.py\", line 35, in <module>\n"
     "    from amdsmi import amdsmi_interface\n"
     "  File \"/home/u/venv/lib/python3.12/site-packages/amdsmi/__init__.py\", line 26, in "
     "<module>", "python-packaging", "amdsmi", "amdsmi-cli-venv-package",
     ("ROCm 6.4.3", "/home/u/venv/lib/python3.12/site-packages", "amdsmi==6.4.3")),
    # bitsandbytes taking torch's ROCm version for a CUDA version
    ("Requested CUDA version:          6.3\nDetected PyTorch CUDA version:   6.3",
     "python-packaging", "bitsandbytes", "bitsandbytes-rocm-as-cuda", ("6.3", "ROCm build")),
    # a setup.py a build script runs, without pip: torch is not installed in that Python
    ("Traceback (most recent call last):\n  File \"/s/vllm/setup.py\", line 12, in <module>\n"
     "    import torch\nModuleNotFoundError: No module named 'torch'", "python-packaging",
     "torch", "no-module", ("PyTorch", "this Python")),
    # torch's Windows DLL error with its "[WinError 126]" prefix cut off
    ("The specified module could not be found. Error loading \"C:\\v\\torch\\lib\\fbgemm.dll\" "
     "or one of its dependencies.", "import", "fbgemm.dll", "windows-dll-load",
     ("MSVC", "libomp140")),
])
def test_an_r6_family_reads_its_value_from_the_line(text: str, klass: str, subject: str,
                                                    rule: str, words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words)


@pytest.mark.parametrize("text", [
    # MIOpen's Warning about an optional per-target library: it goes on with other solvers
    "MIOpen(HIP): Warning [OpenRuntimeLibraryForDevice] CK grouped conv library not found for "
    "device gfx1201: libMIOpenCKGroupedConv_gfx1201.so: cannot open shared object file: No "
    "such file or directory",
    # a real CUDA version in bitsandbytes' banner
    "Detected PyTorch CUDA version:   12.4",
    # amdsmi's warning alone: torch went on
    "torch/cuda/__init__.py:703: UserWarning: Can't initialize amdsmi - Error code: 34",
    # the ROCm install's own amdsmi in a system Python
    "Traceback (most recent call last):\n"
    "  File \"/opt/rocm-6.4.3/libexec/amdsmi_cli/amdsmi_init.py\", line 35, in <module>\n"
    "  File \"/usr/lib/python3/site-packages/amdsmi/__init__.py\", line 26, in <module>",
    # a +rocm torch listed without a code object failure
    "torch                    2.4.1+rocm6.0",
    # Tensile's assembly rejected outside a distribution build: another cause
    "/home/u/hipBLASLt/build_tmp/TENSILE/assembly/Cijk_A.s:18:26: error: not a valid operand.",
])
def test_an_r6_look_alike_claims_nothing(text: str) -> None:
    assert explain_text(text).klass is None


def test_a_cmake_that_lists_lib64_leaves_the_hip_lang_reading_to_the_install() -> None:
    found = explain_text(_HIP_LANG.format(
        root="/usr", more="/usr/lib64/cmake/hip-lang/hip-lang-config.cmake\n"))
    assert (found.klass, found.rule) == ("rocm-install", "hip-lang-missing")


def test_hipconfig_looking_for_nvcc_is_not_the_clang_path() -> None:
    found = explain_text("Can't exec \"nvcc\": No such file or directory at ./hipconfig line 143.")
    assert found.rule != "hipcc-no-clang"
