"""The shapes found by scoring held-out rounds (rocmforge/triage/parsers/ and the rules it
widened), each on the lines of the real thread it came from, plus `alternatives` when two
classes fit and the symbol parser for MSVC/lld names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocmforge.triage import explain_text
from rocmforge.triage.symbols import symbol_name

REPO_ROOT = Path(__file__).resolve().parents[2]
R1 = REPO_ROOT / "tests" / "failures" / "rounds" / "r1" / "cases"


@pytest.mark.parametrize(("raw", "name"), [
    ("__declspec(dllimport) class std::tuple<class at::Tensor, class at::Tensor> __cdecl "
     "at::native::transform_bias_rescale_qkv_cuda(class at::Tensor const &, __int64)",
     "at::native::transform_bias_rescale_qkv_cuda"),
    ("void __cdecl at::hip::detail::group_gemm_ck(class at::Tensor const &)",
     "at::hip::detail::group_gemm_ck"),
    ("_Z39ncclNvmlDeviceGetCurrPcieLinkGenerationP13nvmlDevice_stPj",
     "ncclNvmlDeviceGetCurrPcieLinkGeneration"),
    ("hipMalloc", "hipMalloc"),
])
def test_symbol_name_is_the_qualified_name_without_decoration(raw: str, name: str) -> None:
    assert symbol_name(raw) == name


@pytest.mark.parametrize(("text", "klass", "subject", "rule"), [
    ("lld-link: error: undefined symbol: void __cdecl at::f(class at::Tensor const &)",
     "link", "at::f", "linker-undefined-symbol"),
    ("/usr/bin/ld: não foi possível localizar -lrccl\ncollect2: error: ld returned 1 exit status",
     "link", "librccl", "ld-localized-cannot-find"),
    ("cc1plus: killed by the kernel", "out-of-memory", "cc1plus", "compiler-killed"),
    ("##[warning]Available diskspace is less than 10% of total on /",
     "disk-full", "disk", "disk-full"),
    ("clang: error: cannot find ROCm device library; provide its path via '--rocm-path'",
     "rocm-install", "rocm-device-libs", "rocm-device-library"),
    ("ERROR Missing dependencies:\n\tcmake<4.0,>=3.20", "cmake", "cmake",
     "build-missing-dependency"),
    ("hipErrorFileNotFound at rocblas/library/src/tensile_host.cpp", "math-library",
     "rocblas", "tensile-host-error"),
])
def test_a_shape_is_read_from_its_line(text: str, klass: str, subject: str, rule: str) -> None:
    found = explain_text(text)
    assert (found.klass, found.subject, found.rule) == (klass, subject, rule)


def test_ld_in_another_language_without_the_link_failure_claims_nothing() -> None:
    assert explain_text("/usr/bin/ld: não foi possível localizar -lrccl").klass is None


def test_an_imported_target_names_its_package() -> None:
    text = ('CMake Error at Caffe2Targets.cmake:110 (set_target_properties):\n'
            '  The link interface of target "torch_hip_library" contains:\n\n'
            '    hiprtc::hiprtc\n\n  but the target was not found.  Possible reasons include:\n')
    found = explain_text(text)
    assert (found.klass, found.subject) == ("missing-component", "hiprtc")
    assert "hiprtc::hiprtc" in found.cause


def test_a_package_hint_inside_a_warning_block_claims_nothing() -> None:
    text = ('CMake Warning at x.cmake:1 (find_package):\n'
            '  "foo" provides a separate development package or SDK, be sure it has\n'
            '  been installed.\n')
    assert explain_text(text).klass is None


def test_a_loader_symbol_cut_short_names_the_library() -> None:
    found = explain_text("ImportError: /opt/rocm/lib/libMIOpen.so.1: undefined symbol: "
                         "_ZN2ck16tensor_operation6device8instance59add_device_conv")
    assert (found.klass, found.subject) == ("import", "libMIOpen.so.1")


def test_hip_header_missing_under_an_installed_torch_is_the_install_layout() -> None:
    text = ("                 from /venv/lib/python3.12/site-packages/torch/include/torch/csrc/"
            "inductor/aoti_include/cuda.h:3,\n"
            "/x/device_utils.h:14:10: fatal error: hip/hip_runtime.h: No such file or "
            "directory\n")
    found = explain_text(text)
    assert (found.klass, found.subject) == ("rocm-install", "hip/hip_runtime.h")
    assert "ROCM_HOME" in found.fix
    # The same header missing from a plain compile is the include path too (r5's
    # agrocylo/bitsandbytes-rocm#1: a Makefile taking it from ROCM_HOME), named by it.
    plain = explain_text(text.splitlines()[1])
    assert (plain.klass, plain.subject) == ("rocm-install", "ROCM_HOME")


def test_invalid_isa_alone_proves_no_target() -> None:
    text = ("Callback: Queue 0x7d aborting with error : HSA_STATUS_ERROR_INVALID_ISA: The "
            "instruction set architecture is invalid. code: 0x100f")
    assert explain_text(text).klass is None


def test_two_classes_fitting_give_the_stronger_and_list_the_other() -> None:
    found = explain_text((R1 / "math-library-hipblaslt-no-co-gfx1100-pytorch127169.log")
                         .read_text())
    assert (found.klass, found.subject) == ("math-library", "hipblaslt")
    assert [(a.klass, a.subject, a.rule) for a in found.alternatives] == [
        ("gpu-target", "gfx1100", "no-binary-for-gpu")]
    assert "Cannot find CO in the bundle" in found.alternatives[0].evidence.text
    done = subprocess.run(
        [sys.executable, "-m", "invoke", "triage", "-", "--json"], cwd=REPO_ROOT,
        input=(R1 / "math-library-hipblaslt-no-co-gfx1100-pytorch127169.log").read_text(),
        capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["alternatives"][0]["class"] == "gpu-target"
    assert doc["alternatives"][0]["evidence"]["line"] == 1


def test_one_class_gives_no_alternatives() -> None:
    found = explain_text("c++: fatal error: Killed signal terminated program cc1plus")
    assert found.klass == "out-of-memory" and found.alternatives == ()
    assert found.to_json()["alternatives"] == []


@pytest.mark.parametrize(("text", "klass", "subject", "rule"), [
    ("clang++: error: no such file or directory: '[WARNING] offload-arch failed with return "
     "code 1[stderr] -D__HIP_PLATFORM_AMD__=1'", "gpu-target", "PYTORCH_ROCM_ARCH",
     "offload-arch-failed"),
    ('  HIP_ARCHITECTURES is empty for target "cmTC_60590".', "gpu-target",
     "PYTORCH_ROCM_ARCH", "hip-architectures-empty"),
    ("KeyError: 'gfx1151'", "gpu-target", "gfx1151", "unknown-gfx-key"),
    ("error: externally-managed-environment", "python-packaging", "pip", "pep668"),
    ("ModuleNotFoundError: No module named 'triton.ops'", "triton", "triton",
     "triton-module-removed"),
    ("gmake[3]: *** No rule to make target '/opt/rocm/lib/libamdhip64.so', needed by "
     "'_core_C.abi3.so'.  Stop.", "rocm-install", "/opt/rocm", "fixed-rocm-path"),
    ("bitsandbytes library load error: Configured ROCm binary not found at /x/bitsandbytes/"
     "libbitsandbytes_rocm84.so", "import", "libbitsandbytes_rocm84.so",
     "bitsandbytes-library"),
    ("/apex/csrc/mlp_hip.hip:65:53: error: unknown type name 'hipblasOperation_t'; did you "
     "mean 'hipsparseOperation_t'?", "hipify", "mlp_hip.hip", "hipified-unknown-type"),
])
def test_a_round_two_shape_is_read_from_its_line(text: str, klass: str, subject: str,
                                                  rule: str) -> None:
    found = explain_text(text)
    assert (found.klass, found.subject, found.rule) == (klass, subject, rule)


def test_a_companion_for_rocm_beside_a_cuda_torch_is_the_packaging_not_the_loader() -> None:
    text = ("ImportError: libtorch_hip.so: cannot open shared object file: No such file or "
            "directory\n[pip3] torch==1.9.0+cu111\n"
            "[pip3] torchaudio==0.10.0.dev20210902+rocm4.1\n")
    found = explain_text(text)
    assert (found.klass, found.subject) == ("python-packaging", "torchaudio")
    assert [a.klass for a in found.alternatives] == ["import"]
    # Without the CUDA torch in the log the loader error stands.
    assert explain_text(text.splitlines()[0]).klass == "import"


def test_pip_pulling_pypi_torch_for_a_companion() -> None:
    text = ("Collecting torch==2.4.0 (from torchaudio)\n"
            "  Downloading torch-2.4.0-cp310-cp310-manylinux1_x86_64.whl.metadata (26 kB)\n")
    found = explain_text(text)
    assert (found.klass, found.subject) == ("python-packaging", "torch")
    assert "--no-deps torchaudio" in found.fix
    rocm = text.replace("torch-2.4.0-", "torch-2.4.0+rocm6.1-")
    assert explain_text(rocm).klass is None


def test_the_sdk_core_root_without_hip_lang_names_the_core_package() -> None:
    text = ("CMake Error at CMakeDetermineHIPCompiler.cmake:240 (message):\n"
            "  The ROCm root directory:\n\n"
            "   /venv/lib/python3.12/site-packages/_rocm_sdk_core\n\n"
            "  does not contain the HIP runtime CMake package, expected at one of:\n")
    found = explain_text(text)
    assert (found.klass, found.subject) == ("rocm-install", "_rocm_sdk_core")
    assert "rocm-sdk path --root" in found.fix


@pytest.mark.parametrize(("text", "klass", "subject", "rule"), [
    ('CMake Error at v2src/CMakeLists.txt:6 (cmake_path):\n  Unknown CMake command '
     '"cmake_path".', "cmake", "cmake", "unknown-cmake-command"),
    ("CMake Error at FindPackageHandleStandardArgs.cmake:233 (message):\n  Could NOT find "
     "NCCL (missing: NCCL_INCLUDE_DIRS NCCL_LIBRARIES)\nCall Stack (most recent call first):\n"
     "  cmake/External/nccl.cmake:6 (find_package)", "rocm-disabled", "USE_ROCM", "cuda-nccl"),
    ("λ .\\build\\hipcc --version\n'C:\\Program' is not recognized as an internal or external "
     "command,", "rocm-install", "HIP_PATH", "windows-unquoted-hip-path"),
    ("ImportError: /tmp/torchinductor_root/triton/0/ebfa/hip_utils.so: undefined symbol: "
     "hipGetDevicePropertiesR0600", "triton", "triton", "undefined-symbol"),
    ("Stack dump:\n0.\tProgram arguments: /opt/rocm/hcc/bin/llc -O2 -mcpu=gfx900 x.bc",
     "compiler-crash", "llc", "llvm-stack-dump"),
])
def test_a_round_three_shape_is_read_from_its_line(text: str, klass: str, subject: str,
                                                    rule: str) -> None:
    found = explain_text(text)
    assert (found.klass, found.subject, found.rule) == (klass, subject, rule)


@pytest.mark.parametrize("text", [
    "MIOpen(HIP): Warning [SQLiteBase] Missing system database file: gfx1030_18.kdb "
    "Performance may degrade.",
    "UserWarning: Attempting to use hipBLASLt on an unsupported architecture! Overriding blas "
    "backend to hipblas",
    # NCCL missing without the CUDA path in sight proves nothing about ROCm.
    "CMake Error at x.cmake:1 (message):\n  Could NOT find NCCL (missing: NCCL_LIBRARIES)",
])
def test_a_warning_or_a_fallback_claims_nothing(text: str) -> None:
    assert explain_text(text).klass is None


@pytest.mark.parametrize(("text", "klass", "subject", "rule"), [
    ("327.4  #9 0x00005ddc0509e1bd clang::Parser::ParseExternalDeclaration(clang::"
     "ParsedAttributes&) (/opt/rocm-7.2.1/lib/llvm/bin/clang-22+0x4a941bd)",
     "compiler-crash", "clang", "llvm-stack-frame"),
    ("hipModuleLoad failed: C:\\venv\\Lib\\site-packages\\_rocm_sdk_libraries_gfx110X_all\\bin"
     "\\hipblaslt\\library/Kernels.so-000-gfx1102-xnack-.hsaco", "math-library", "hipblaslt",
     "math-library-module-load"),
    ("[hipSPARSELt configure] CMake Error at cmake/hipsparselt_supported_architectures.cmake:42"
     " (message):\n[hipSPARSELt configure]   Unsupported GPU target: gfx1201", "math-library",
     "hipsparselt", "library-unsupported-target"),
    ("  ╰─▶ Because filelock was not found in the package registry and torch==2.9.0+rocm7.10 "
     "depends on filelock, we can conclude", "python-packaging", "filelock",
     "uv-not-in-registry"),
    ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
     "    PyTorch 2.10.0+cu128 with CUDA 1208 (you have 2.11.0+rocm7.13.0)",
     "python-packaging", "xformers", "extension-built-for-cuda-torch"),
    ("ERROR: No matching distribution found for pytorch-triton-rocm==2.2.0 (from torch)",
     "triton", "triton", "no-distribution"),
    ("OSError: [WinError 126] The specified module could not be found. Error loading "
     "\"C:\\venv\\Lib\\site-packages\\torch\\lib\\torch_hip.dll\" or one of its dependencies.",
     "import", "torch_hip.dll", "windows-torch-dll"),
    ("/x/fused_dense_hip.hip:63:7: error: use of undeclared identifier 'CUBLAS_COMPUTE_64F'",
     "hipify", "fused_dense_hip.hip", "hipified-unknown-type"),
])
def test_a_round_four_shape_is_read_from_its_line(text: str, klass: str, subject: str,
                                                   rule: str) -> None:
    found = explain_text(text)
    assert (found.klass, found.subject, found.rule) == (klass, subject, rule)


def test_an_unsupported_target_without_a_library_in_sight_claims_nothing() -> None:
    assert explain_text("Unsupported GPU target: gfx1201").klass is None


def test_a_loader_error_from_one_of_two_rocm_installs_is_the_install() -> None:
    lines = ['  File "/opt/rocm-7.1.1/libexec/amdsmi_cli/amdsmi_init.py", line 38',
             "AttributeError: /opt/rocm-7.0.1/lib/libamd_smi.so: undefined symbol: "
             "amdsmi_get_gpu_partition_metrics_info"]
    found = explain_text("\n".join(lines))
    assert (found.klass, found.subject, found.rule) == ("rocm-install", "libamd_smi",
                                                        "mixed-rocm-installs")
    assert "/opt/rocm-7.0.1" in found.cause and "/opt/rocm-7.1.1" in found.cause
    assert [a.klass for a in found.alternatives] == ["import"]
    # One install named: the loader error stands.
    assert explain_text(lines[1]).klass == "import"


def test_miopen_build_errors_need_an_assembler_error_to_blame_the_target() -> None:
    error = "MIOpen(HIP): Error [BuildOcl] comgr status = ERROR (1)"
    assert explain_text(error).klass is None
    found = explain_text(":14:20: error: not a valid operand.\n" + error)
    assert (found.klass, found.subject) == ("math-library", "miopen")


@pytest.mark.parametrize(("text", "klass", "subject", "rule"), [
    ("CMake Error at CMakeLists.txt:66 (find_package):\n"
     '  By not providing "Findhsa-runtime64.cmake" in CMAKE_MODULE_PATH this\n'
     "  project has asked CMake to find a package configuration file provided by\n"
     '  "hsa-runtime64", but CMake did not find one.', "missing-component", "hsa-runtime64",
     "cmake-config-name-wrapped"),
    ("WARNING: rocm 7.14.0a20260519 does not provide the extra 'device-gfx950'",
     "python-packaging", "rocm", "rocm-missing-extra"),
    ("RuntimeError: operator torchvision::nms does not exist", "python-packaging",
     "torchvision", "torchvision-ops-missing"),
    ("Fatal error in launcher: Unable to create process using '\"D:\\old\\python_env\\python.exe"
     "\"  \"D:\\new\\python_env\\Scripts\\rocm-sdk.exe\" path --root': The system cannot find "
     "the file specified.", "rocm-install", "rocm-sdk", "stale-launcher"),
    ("UserWarning: Flash attention on Current AMD GPU is still experimental. Enable it with "
     "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1.", "aotriton", "aotriton",
     "aotriton-experimental"),
    ("In file included from /x/main_hip.cpp:5:\n/v/site-packages/torch/include/ATen/hip/"
     "Exceptions.h:4:10: fatal error: 'hipblas/hipblas.h' file not found", "rocm-install",
     "hipblas", "missing-header"),
])
def test_a_late_round_four_shape_is_read_from_its_line(text: str, klass: str, subject: str,
                                                        rule: str) -> None:
    found = explain_text(text)
    assert (found.klass, found.subject, found.rule) == (klass, subject, rule)


def test_a_library_header_missing_from_a_plain_compile_stays_a_missing_component() -> None:
    found = explain_text("/src/x.cpp:4:10: fatal error: 'hipblas/hipblas.h' file not found")
    assert (found.klass, found.subject) == ("missing-component", "hipblas")


def test_a_kernels_device_stub_missing_from_its_own_library_is_that_build() -> None:
    """r6: the host stub of a kernel only the library's own sources define (demangled, so an
    integration test: the demangler asks the system's libstdc++)."""
    found = explain_text(
        "Could not load bitsandbytes native library: /v/bitsandbytes/libbitsandbytes_rocm62.so: "
        "undefined symbol: _Z36__device_stub__kOptimizer32bit1StateI12hip_bfloat16Li2EEvPT_S2_"
        "PfS3_ffffffiffbi")
    assert (found.klass, found.rule) == ("import", "undefined-symbol")
    assert found.subject.startswith("void __device_stub__kOptimizer32bit1State<hip_bfloat16, 2>")
    for word in ("libbitsandbytes_rocm62.so", "kOptimizer32bit1State<hip_bfloat16, 2>", "wheel"):
        assert word in found.cause + " " + found.fix, word


def test_torchs_own_library_missing_a_torch_symbol_claims_nothing() -> None:
    """r6's negative TheRock#3466: libtorch_hip needs an at:: symbol libtorch_cpu does not
    export; the line does not show which of two builds (or the compiler) is wrong."""
    found = explain_text("ImportError: /v/torch/lib/libtorch_hip.so: undefined symbol: "
                         "_ZNK2at10TensorBase14const_data_ptrIN3c104HalfELi0EEEPKT_v")
    assert found.klass is None
