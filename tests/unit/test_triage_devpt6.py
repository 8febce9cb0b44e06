"""What torch itself prints when the installed build lacks a part a ROCm user expects (issue
40, devpt6): torch._C without its _cuda_* or _nccl_* functions, torch.cuda.Stream and the
dummy classes of a build without a GPU backend, NCCL (RCCL) not built in, and hipify given a
project folder that does not exist. Each text is what torch 2.13.0+cpu printed here
(tests/failures/make/devpt6.sh); beside them the look-alikes that must claim nothing:
warnings, the same words echoed in a traceback's source line, other backends' dummies, a
CUDA torch's NCCL message."""

from __future__ import annotations

import pytest

from rocmforge.triage import explain_text

_TB = "Traceback (most recent call last):\n  File \"/home/user/proj/train.py\", line 2\n"

_SET_DEVICE = _TB + ("    torch.cuda.set_device(0)\n"
                     "AttributeError: module 'torch._C' has no attribute '_cuda_setDevice'\n")
_NO_NCCL = _TB + ("    raise RuntimeError(\"Distributed package doesn't have NCCL built in\")\n"
                  "RuntimeError: Distributed package doesn't have NCCL built in\n")
_NCCL_VERSION = _TB + ("    ver = torch._C._nccl_version()\n"
                       "AttributeError: module 'torch._C' has no attribute '_nccl_version'\n")
_STREAM = _TB + ("    side = torch.cuda.Stream()\n"
                 "RuntimeError: torch.cuda.Stream requires CUDA support\n")
_EVENT = _TB + ("    start = torch.cuda.Event(enable_timing=True)\n"
                "RuntimeError: Tried to instantiate dummy base class Event\n")
_GRAPH = _TB + ("    g = torch.cuda.CUDAGraph()\n"
                "RuntimeError: Tried to instantiate dummy base class CUDAGraph\n")
_HIPIFY = "The project folder specified does not exist.\n"
_NOT_WRITTEN = ("\x1b[93mFailed to save /home/user/ext/csrc/k.hip with \"Permission denied\", "
                "leaving /home/user/ext/csrc/k.cu unchanged.\x1b[0m\n"
                "\x1b[92mSuccessfully preprocessed all matching files.\x1b[0m\n")
_ROCM_PATH_WIN = """CMake Error at cmake/public/LoadHIP.cmake:11 (message):
  ROCM_PATH environment variable is set to C:/Program Files/AMD/ROCm/6.2 but
  does not exist.

  Set a valid ROCM_PATH or unset ROCM_PATH environment variable to fix.
Call Stack (most recent call first):
"""
_VERSION_HEADER = """CMake Error at cmake/public/LoadHIP.cmake:140 (message):
  Could not find hip/hip_version.h or rocm-core/rocm_version.h in
  /opt/rocm-7.0.0/include
Call Stack (most recent call first):
"""
_SUBMODULE_FILES = ("Could not find any of CMakeLists.txt, Makefile, setup.py, LICENSE, "
                    "LICENSE.md, LICENSE.txt in /home/user/pytorch/third_party/kineto\n"
                    "Did you run 'git submodule update --init --recursive --jobs 0'?\n")
_SUBMODULE_INIT = ("fatal: not a git repository (or any of the parent directories): .git\n"
                   " --- Submodule initalization failed\n"
                   "Please run:\n\tgit submodule update --init --recursive\n")
_CUBLASLT = _TB + ("RuntimeError: Cannot set preferred backend to cuBLASLt if PyTorch has "
                    "not been compiled with cuBLASLt.\n")
_HIPBLASLT = _TB + ("    torch.backends.cuda.preferred_blas_library(\"hipblaslt\")\n" +
                    _CUBLASLT.removeprefix(_TB))
_MAGMA = _TB + ("RuntimeError: Cannot set preferred backend to MAGMA if PyTorch has not been "
                "compiled with MAGMA.\n")
_TUNABLE = _TB + ("AttributeError: module 'torch._C' has no attribute "
                  "'_cuda_tunableop_enable'\n")


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words"), [
    (_SET_DEVICE, "rocm-disabled", "USE_ROCM", "torch-c-no-cuda-functions",
     ("_cuda_*", "CPU-only", "torch.version.hip")),
    (_NO_NCCL, "rocm-disabled", "USE_NCCL", "torch-distributed-no-nccl",
     ("RCCL", "USE_NCCL", "gloo", "is_nccl_available")),
    (_NCCL_VERSION, "rocm-disabled", "USE_NCCL", "torch-distributed-no-nccl", ("RCCL",)),
    (_STREAM, "rocm-disabled", "USE_ROCM", "torch-cuda-stream-no-gpu-backend",
     ("is_built()", "CPU-only")),
    (_EVENT, "rocm-disabled", "USE_ROCM", "torch-cuda-dummy-class", ("placeholder",)),
    (_GRAPH, "rocm-disabled", "USE_ROCM", "torch-cuda-dummy-class", ("CPU-only",)),
    (_HIPIFY, "hipify", "hipify_python.py", "hipify-project-folder-missing",
     ("project_directory", "submodule")),
    (_NOT_WRITTEN, "hipify", "k.cu", "hipify-output-not-written",
     ("/home/user/ext/csrc/k.hip (Permission denied)", "CUDA source", "writable")),
    (_ROCM_PATH_WIN, "rocm-install", "C:/Program Files/AMD/ROCm/6.2",
     "loadhip-rocm-path-missing", ("ROCM_PATH is set to C:/Program Files/AMD/ROCm/6.2",
                                   "unset ROCM_PATH")),
    (_VERSION_HEADER, "rocm-install", "hip_version.h", "loadhip-version-header-missing",
     ("ROCM_INCLUDE_DIRS", "hip-dev")),
    (_SUBMODULE_FILES, "cmake", "cmake", "setup-submodule-files-missing",
     ("/home/user/pytorch/third_party/kineto", "git submodule update --init --recursive")),
    (_SUBMODULE_INIT, "cmake", "cmake", "setup-submodule-init-failed",
     ("not a git repository", "git clone --recursive")),
    (_HIPBLASLT, "missing-component", "hipblaslt", "torch-preferred-library-not-compiled",
     ("without hipBLASLt", "preferred_blas_library")),
    (_CUBLASLT, "missing-component", "cublaslt", "torch-preferred-library-not-compiled",
     ("without cuBLASLt",)),
    (_MAGMA, "missing-component", "magma", "torch-preferred-library-not-compiled",
     ("without MAGMA", "preferred_linalg_library", "MAGMA_HOME")),
    (_TUNABLE, "rocm-disabled", "USE_ROCM", "torch-c-no-cuda-functions", ("CPU-only",)),
])
def test_family_reads_its_values(text: str, klass: str, subject: str, rule: str,
                                 words: tuple[str, ...]) -> None:
    d = explain_text(text, step="verify")
    assert (d.klass, d.subject, d.rule) == (klass, subject, rule)
    for word in words:
        assert word in d.cause + " " + d.fix, word


@pytest.mark.parametrize("text", [
    # the warning torch prints before the error, alone: nothing failed yet
    "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py:1849: UserWarning: "
    "Attempted to get default timeout for nccl backend, but NCCL support is not compiled\n"
    "  timeout = _get_default_timeout(backend)\n",
    # autocast on a CPU torch only warns
    "/home/user/proj/train.py:2: UserWarning: CUDA is not available or torch_xla is imported."
    " Disabling autocast.\n  with torch.autocast(\"cuda\"):\nloss 4.0\n",
    # the message's words in an echoed source line, not raised
    "    raise RuntimeError(\"Distributed package doesn't have NCCL built in\")\n",
    "    raise RuntimeError(\"torch.cuda.Stream requires CUDA support\")\n",
    # a CUDA torch without NCCL (Windows): not a ROCm question
    "torch 2.5.1+cu121\n" + _NO_NCCL,
    # another backend's dummy class (torch.xpu), with no torch.cuda in the log
    "Traceback (most recent call last):\n  File \"/x/torch/xpu/streams.py\", line 9\n"
    "RuntimeError: Tried to instantiate dummy base class Event\n",
    # hipify's own source line echoed in a traceback, and its success line alone
    "    print(f'{bcolors.WARNING}Failed to save {fout_path} with \"{e.strerror}\", leaving "
    "{fin_path} unchanged.{bcolors.ENDC}',\n",
    "\x1b[92mSuccessfully preprocessed all matching files.\x1b[0m\n",
    # LoadHIP's own lines echoed (a diff, a grep of the file), and the fixed last line alone
    '      "Set a valid ROCM_PATH or unset ROCM_PATH environment variable to fix.")\n',
    "CMake Error at cmake/public/LoadHIP.cmake:11 (message):\n"
    "  Set a valid ROCM_PATH or unset ROCM_PATH environment variable to fix.\n",
    # setup.py's check as source, and its first line without the submodule hint under it
    '            print("Could not find any of {} in {}".format(", ".join(files), folder))\n',
    "Could not find any of CMakeLists.txt, Makefile, setup.py, LICENSE in /x/third_party/a\n",
    # the experimental-feature warning torch prints when the preference is set
    "UserWarning: torch.backends.cuda.preferred_linalg_library is an experimental feature.\n",
    # the hipify text quoted inside a longer line
    "grep: 'The project folder specified does not exist.' in hipify_python.py\n",
])
def test_look_alikes_claim_nothing(text: str) -> None:
    assert explain_text(text, step="verify").klass is None


def test_a_cuda_function_not_every_build_has_is_not_called_a_cpu_torch() -> None:
    # A _cuda_ function newer than an installed GPU torch: pip_usage.py's generic reading of a
    # missing module attribute may answer it, never this family's "no GPU backend".
    d = explain_text("AttributeError: module 'torch._C' has no attribute "
                     "'_cuda_getMemoryFraction'\n", step="verify")
    assert d.rule != "torch-c-no-cuda-functions" and d.klass != "rocm-disabled"
