"""ggml's HIP backend built the ways users do (issue 40, devgg10): ggml's own ROCm version
check, its vendors/hip.h naming hip/hip_bf16.h that an older ROCm lacks, CMake's HIP
language refusing the hipcc wrapper (CMAKE_HIP_COMPILER or HIPCXX) or taking CUDA's nvcc,
and hipcc (as CXX) linking with -lcuda on the nvidia platform. Each text is what the programs
printed here (cmake 3.25.1 and 4.4, Debian's ROCm 5.2 hipcc, ggml-org/ggml@d99724f2:
make/devgg10.sh), with the values each reading must take out of it, and the look-alikes that
must claim nothing (or not this)."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

_TOO_OLD = ("CMake Error at src/ggml-hip/CMakeLists.txt:55 (message):\n"
            "  At least ROCM/HIP V6.1 is required\n\n\n"
            "-- Configuring incomplete, errors occurred!\n")
_BF16 = ("In file included from arange.cu:1:\n"
         "In file included from ./arange.cuh:1:\n"
         "In file included from ./common.cuh:36:\n"
         "./vendors/hip.h:7:10: fatal error: 'hip/hip_bf16.h' file not found\n"
         "#include <hip/hip_bf16.h>\n"
         "1 error generated when compiling for gfx1030.\n")
_CMAKE = "/opt/rf-cmake4/share/cmake-4.4/Modules/CMakeDetermineHIPCompiler.cmake"
_WRAPPER = (f"CMake Error at {_CMAKE}:75 (message):\n"
            "  CMAKE_HIP_COMPILER is set to the hipcc wrapper:\n\n"
            "   hipcc\n\n"
            "  This is not supported.  Use Clang directly, or let CMake pick a default.\n"
            "Call Stack (most recent call first):\n"
            "  src/ggml-hip/CMakeLists.txt:43 (enable_language)\n")
_HIPCXX = (f"CMake Error at {_CMAKE}:40 (message):\n"
           "  The HIPCXX environment variable is set to the hipcc wrapper:\n\n"
           "   hipcc\n\n"
           "  This is not supported.  Use Clang directly, or let CMake pick a default.\n"
           "Call Stack (most recent call first):\n"
           "  src/ggml-hip/CMakeLists.txt:43 (enable_language)\n\n\n"
           "CMake Error: CMAKE_HIP_COMPILER not set, after EnableLanguage\n")
_NVIDIA = ("-- The HIP compiler identification is NVIDIA 13.0.88 with host compiler GNU 12.2.0\n"
           "-- Detecting HIP compiler ABI info\n"
           "-- Detecting HIP compiler ABI info - failed\n"
           "-- Check for working HIP compiler: /usr/local/bin/nvcc\n"
           "-- Check for working HIP compiler: /usr/local/bin/nvcc - broken\n"
           "CMake Error at /opt/cmake/Modules/CMakeTestHIPCompiler.cmake:71 (message):\n"
           "  The HIP compiler\n")
_LCUDA = ("    [2/2] Linking CXX executable cmTC_8a58a\n"
          "    FAILED: cmTC_8a58a \n"
          "    : && /usr/bin/hipcc   CMakeFiles/cmTC_8a58a.dir/testCXXCompiler.cxx.o -o "
          "cmTC_8a58a   && :\n"
          "    /usr/bin/ld: cannot find -lcuda: No such file or directory\n"
          "    collect2: error: ld returned 1 exit status\n")


@pytest.mark.parametrize(("text", "step", "klass", "subject", "rule", "words"), [
    (_TOO_OLD, "configure", "rocm-install", "hip", "ggml-hip-rocm-too-old",
     ("older than 6.1", "hip_VERSION", "install ROCm 6.1 or newer", "hip_DIR")),
    (_TOO_OLD.replace("V6.1", "V5.5"), "configure", "rocm-install", "hip",
     "ggml-hip-rocm-too-old", ("older than 5.5", "install ROCm 5.5 or newer")),
    (_BF16, "build", "rocm-install", "hip_bf16.h", "ggml-hip-header-newer-than-rocm",
     ("./vendors/hip.h", "hip/hip_bf16.h", "since ROCm 5.6", "set ROCM_PATH")),
    (_WRAPPER, "configure", "cmake", "cmake", "cmake-hip-compiler-hipcc",
     ("CMAKE_HIP_COMPILER names the hipcc wrapper",
      "-DCMAKE_HIP_COMPILER=/opt/rocm/llvm/bin/clang++")),
    (_HIPCXX, "configure", "cmake", "cmake", "cmake-hip-compiler-hipcc",
     ("HIPCXX names the hipcc wrapper", "set HIPCXX to ROCm's clang++")),
    (_NVIDIA, "configure", "rocm-install", "HIP_PLATFORM", "cmake-hip-compiler-nvidia",
     ("CUDA's nvcc", "-DCMAKE_HIP_PLATFORM=amd")),
    (_LCUDA, "configure", "rocm-install", "HIP_PLATFORM", "hipcc-links-cuda",
     ("hipcc linked with -lcuda", "export HIP_PLATFORM=amd", "do not install libcuda")),
])
def test_family_reads_its_values(text: str, step: str, klass: str, subject: str, rule: str,
                                 words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words, step=step)


@pytest.mark.parametrize(("text", "step"), [
    # ggml's check quoted by a grep of its CMakeLists: no CMake Error block around it
    ('src/ggml-hip/CMakeLists.txt:55:    message(FATAL_ERROR "At least ROCM/HIP V6.1 is '
     'required")\n', "configure"),
    # ggml's legacy-hipcc warning and rocm_agent_enumerator's traceback (no /dev/kfd):
    # the configure goes on
    ("CMake Warning at src/ggml-hip/CMakeLists.txt:31 (message):\n"
     "  Setting hipcc as the C++ compiler is legacy behavior.  Prefer setting the\n"
     "  HIP compiler directly.  See README for details.\n\n\n"
     "Traceback (most recent call last):\n"
     '  File "/usr/bin/rocm_agent_enumerator", line 193, in readFromKFD\n'
     "FileNotFoundError: [Errno 2] No such file or directory: "
     "'/sys/class/kfd/kfd/topology/nodes/'\n"
     "-- hip::amdhip64 is SHARED_LIBRARY\n", "configure"),
    # a CUDA HIP build on purpose whose compiler test passed
    (_NVIDIA.replace("nvcc - broken", "nvcc - skipped").split("CMake Error")[0], "configure"),
    # the wrapper words in a CMake warning block (a project's own note), not CMake's refusal
    ("CMake Warning at CMakeLists.txt:9 (message):\n"
     "  CMAKE_HIP_COMPILER is set to the hipcc wrapper:\n", "configure"),
])
def test_look_alikes_claim_nothing(text: str, step: str) -> None:
    assert explain_text(text, step=step).klass is None


def test_a_cuda_link_without_hipcc_keeps_the_link_reading() -> None:
    # g++ linking a CUDA program: libcuda may really be missing; not hipcc's platform
    text = ("    : && /usr/bin/c++ main.o -o app -lcuda && :\n"
            "    /usr/bin/ld: cannot find -lcuda: No such file or directory\n")
    found = explain_text(text, step="build")
    assert (found.klass, found.subject, found.rule) == ("link", "libcuda", "cannot-find-lib")


def test_another_hip_header_keeps_the_missing_header_reading() -> None:
    # hip_runtime.h missing from ggml's header: the include path, not the ROCm's age
    text = _BF16.replace("hip/hip_bf16.h", "hip/hip_runtime.h").replace(":7:10", ":4:10")
    found = explain_text(text, step="build")
    assert found.rule != "ggml-hip-header-newer-than-rocm"
    assert (found.klass, found.subject) == ("rocm-install", "ROCM_HOME")


def test_hip_bf16_outside_ggml_is_not_this_reading() -> None:
    # the same header missing from a user's own file: no proof its sibling headers were found
    text = "src/kern.hip:3:10: fatal error: 'hip/hip_bf16.h' file not found\n"
    assert explain_text(text, step="build").rule != "ggml-hip-header-newer-than-rocm"


@pytest.mark.parametrize("line", [
    # clang on ggml's common.cuh with a hipblas.h that lacks the name (make/devgg10.sh)
    "./common.cuh:147:18: error: use of undeclared identifier 'HIPBLAS_STATUS_ALLOC_FAILED'; "
    "did you mean 'GGML_STATUS_ALLOC_FAILED'?",
    # its source echo: the #define it expands from, and a switch's case
    "#define CUBLAS_STATUS_ALLOC_FAILED HIPBLAS_STATUS_ALLOC_FAILED",
    '            case HIPBLAS_STATUS_ALLOC_FAILED: return "HIPBLAS_STATUS_ALLOC_FAILED";',
])
def test_the_status_name_in_a_compile_is_no_out_of_memory(line: str) -> None:
    assert explain_text(line + "\n", step="build").klass is None


def test_the_status_reported_at_run_time_still_reads_out_of_memory() -> None:
    text = ("RuntimeError: CUDA error: HIPBLAS_STATUS_ALLOC_FAILED when calling "
            "`hipblasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`\n")
    found = explain_text(text, step="verify")
    assert (found.klass, found.rule) == ("out-of-memory", "hip-out-of-memory")
