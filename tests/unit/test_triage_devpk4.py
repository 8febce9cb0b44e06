"""ROCm-install and Python-side families of r12's misses, read by shape (issue 40, devpk4):
each line is what the program prints (ROCr's thunk loader, DKMS, rocprofiler-sdk's glog line,
CMake's generated targets check, pip, CPython's ctypes, TheRock's rocm_sdk), with the value the
reading must take out of it, and the look-alikes beside them that must claim nothing."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

_DKMS = ("Building module(s)......(bad exit status: 2)\n"
         "Error! Bad return status for module build on kernel: 6.14.0-generic (x86_64)\n"
         "Consult /var/lib/dkms/{mod}/6.10.5-2084815.24.04/build/make.log for more "
         "information.")

_TARGET = ("CMake Error at /opt/rocm/lib/cmake/hipblaslt/hipblaslt-targets.cmake:80 (message):\n"
           "  The imported target \"{target}\" references the file\n\n"
           "     \"/opt/rocm/lib/libhipblaslt.so.1\"\n\n"
           "  but this file does not exist.  Possible reasons include:")

_PIP = ("Looking in indexes: {indexes}\nCollecting torch\n"
        "  Downloading torch-2.7.1-cp313-cp313-manylinux_2_28_x86_64.whl.metadata (29 kB)")

_SDK_TEST = ("ERROR: testSharedLibrariesLoad (rocm_sdk.tests.libraries_test.ROCmLibrariesTest."
             "testSharedLibrariesLoad) [Check shared library loads] (so_path={kind}Path('"
             "{root}/_rocm_sdk_libraries_gfx110X_dgpu/{lib}'))")


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words"), [
    # ROCr's thunk loader on WSL: the newer library name and the older one
    ("Cannot load librocdxg.so, failed:librocdxg.so: cannot open shared object file: No such "
     "file or directory", "rocm-install", "librocdxg.so", "wsl-thunk-library-missing",
     ("ldconfig", "LD_LIBRARY_PATH")),
    ("Cannot load libdtif.so, failed:libdtif.so: cannot open shared object file: No such file "
     "or directory", "rocm-install", "libdtif.so", "wsl-thunk-library-missing", ("WSL",)),
    # DKMS failing the amdgpu module: the kernel from the line before, the module's make.log
    (_DKMS.format(mod="amdgpu"), "rocm-install", "amdgpu-dkms", "amdgpu-dkms-build",
     ("6.14.0-generic", "/var/lib/dkms/amdgpu/6.10.5-2084815.24.04/build/make.log",
      "--no-dkms")),
    # rocprofiler-sdk's CI build: glog's FATAL line, with a 4- or 8-digit date
    ("F20260326 08:25:46.129966 139771792310848 agent.cpp:638] sysfs nodes path "
     "'/sys/class/kfd/kfd/topology/nodes' does not exist", "rocm-install", "/sys/class/kfd",
     "rocprofiler-kfd-topology-fatal", ("ROCPROFILER_BUILD_CI", "/dev/kfd")),
    ("F0326 08:25:46.129966 1397 agent.cpp:608] sysfs nodes path "
     "'/sys/class/kfd/kfd/topology/nodes' does not exist", "rocm-install", "/sys/class/kfd",
     "rocprofiler-kfd-topology-fatal", ("amdgpu",)),
    # a ROCm package's imported target with its library missing; the targets file is named
    (_TARGET.format(target="roc::hipblaslt"), "rocm-install", "hipblaslt",
     "rocm-imported-target-file-missing", ("roc::hipblaslt", "hipblaslt-targets.cmake")),
    (_TARGET.format(target="hip-lang::amdhip64"), "rocm-install", "amdhip64",
     "rocm-imported-target-file-missing", ("find_package(hip)",)),
    # the WSL thunk's adapter query
    ("rocminfo: ./sources/wsl/libhsakmt/src/thunk_proxy/thunk_proxy.cpp:111: void thunk_proxy::"
     "QueryAdapterInfo(D3DKMT_HANDLE, ATIADAPTERINFO*): Assertion `ret == STATUS_SUCCESS' "
     "failed.", "rocm-install", "WSL", "wsl-thunk-adapter-query", ("NVIDIA", "Device Manager")),
    # offload-arch's output with a HIP runtime's stray line, passed to hipcc
    ("hipcc x.cpp '--offload-arch=HIP Library Path: C:\\WINDOWS\\system32\\amdhip64_6.dll' -o "
     "x.exe\nclang: error: no such file or directory: 'Library'\n"
     "clang: error: no such file or directory: 'Path:'", "rocm-install", "amdhip64_6.dll",
     "offload-arch-stray-hip-library-path", ("System32", "offload-arch")),
    # PyPI's torch taken over a ROCm index given as an extra index
    (_PIP.format(indexes="https://pypi.org/simple, https://download.pytorch.org/whl/rocm6.3"),
     "python-packaging", "torch", "pypi-cuda-torch-over-rocm-index", ("2.7.1", "--index-url")),
    # newer pip logs the whole URL of the file it downloads
    (_PIP.format(indexes="https://pypi.org/simple, https://download.pytorch.org/whl/rocm6.3")
     .replace("Downloading torch-", "Downloading https://files.pythonhosted.org/packages/ab/"
              "torch-"), "python-packaging", "torch", "pypi-cuda-torch-over-rocm-index",
     ("2.7.1",)),
    # a stale nightly variant of PyTorch's index: the variant and its stable index
    ("ERROR: HTTP error 404 while getting https://download-r2.pytorch.org/whl/nightly/rocm6.4/"
     "torch-2.9.0.dev20250801%2Brocm6.4-cp312-cp312-manylinux_2_28_x86_64.whl (from https://"
     "download.pytorch.org/whl/nightly/rocm6.4/torch/)", "python-packaging", "nightly/rocm6.4",
     "pip-http-404", ("https://download.pytorch.org/whl/rocm6.4",)),
    # ctypes on Windows: a hiprtc DLL of another HIP SDK release than the folder it looks in
    ("Failed to load ZLUDA: Could not find module 'C:\\Program Files\\AMD\\ROCm\\6.4\\bin\\"
     "hiprtc0602.dll' (or one of its dependencies). Try using the full path with constructor "
     "syntax.", "import", "hiprtc0602.dll", "ctypes-dll-not-found",
     ("HIP SDK 6.2", "HIP SDK 6.4", "ZLUDA")),
    # rocm_sdk's devel message before the wheel's rename
    ("ERROR: ROCm SDK development package is not installed. This can typically be obtained by "
     "installing `rocm-sdk[devel]` from your package manager", "rocm-install", "rocm[devel]",
     "rocm-sdk-devel-missing", ("rocm[libraries,devel]",)),
    # rocm-sdk test's load line on Windows keeps its reading
    (_SDK_TEST.format(kind="Windows", root="D:/venv/Lib/site-packages", lib="bin/hipfft.dll"),
     "import", "hipfft.dll", "rocm-sdk-test-library-load", ("preload",)),
    # WinError 1114 on a CPU DLL keeps the MSVC runtime reading
    ("OSError: [WinError 1114] A dynamic link library (DLL) initialization routine failed. "
     "Error loading \"C:\\venv\\Lib\\site-packages\\torch\\lib\\c10.dll\" or one of its "
     "dependencies.", "import", "c10.dll", "windows-dll-load", ("Visual C++",)),
])
def test_family_reads_its_value(text: str, klass: str, subject: str, rule: str,
                                words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words)


@pytest.mark.parametrize("text", [
    # rocm-sdk test's load line on Linux: RPATH finds the siblings; the OSError names the cause
    _SDK_TEST.format(kind="Posix", root="/venv/lib/python3.12/site-packages",
                     lib="lib/libhipsolver_fortran.so.1"),
    # WinError 1114 on a GPU backend DLL: its own start-up failed, the line names no cause
    ("OSError: [WinError 1114] A dynamic link library (DLL) initialization routine failed. "
     "Error loading \"D:\\venv\\Lib\\site-packages\\torch\\lib\\c10_hip.dll\" or one of its "
     "dependencies."),
    # another vendor's DKMS module, and a make.log named without DKMS's failure
    _DKMS.format(mod="nvidia"),
    "Consult /var/lib/dkms/amdgpu/6.10.5/build/make.log for more information.",
    # rocprofiler-sdk's release build only warns
    ("W20260326 08:25:46.129966 139771792310848 agent.cpp:608] sysfs nodes path "
     "'/sys/class/kfd/kfd/topology/nodes' does not exist"),
    # an imported target of a package that is not ROCm's
    _TARGET.format(target="fmt::fmt"),
    # pip with a ROCm index and PyPI taking the +rocm wheel (its URL quotes the +); PyPI
    # alone; a Windows wheel
    _PIP.format(indexes="https://pypi.org/simple, https://download.pytorch.org/whl/rocm6.3")
    .replace("torch-2.7.1-", "torch-2.7.1+rocm6.3-"),
    _PIP.format(indexes="https://pypi.org/simple, https://download.pytorch.org/whl/rocm6.3")
    .replace("Downloading torch-2.7.1-", "Downloading https://download.pytorch.org/whl/rocm6.3/"
             "torch-2.7.1%2Brocm6.3-"),
    _PIP.format(indexes="https://pypi.org/simple"),
    _PIP.format(indexes="https://pypi.org/simple, https://download.pytorch.org/whl/rocm6.3")
    .replace("manylinux_2_28_x86_64", "win_amd64"),
    # a command line with the stray value, and no compiler error after it
    "hipcc x.cpp '--offload-arch=HIP Library Path: C:\\WINDOWS\\system32\\amdhip64_6.dll'",
])
def test_look_alike_claims_nothing(text: str) -> None:
    assert explain_text(text).klass is None


def test_another_programs_cannot_load_line_is_the_loaders() -> None:
    found = explain_text("Cannot load libfoo.so, failed:libfoo.so: cannot open shared object "
                         "file: No such file or directory")
    assert (found.klass, found.rule) == ("import", "cannot-open-so")


def test_same_release_hiprtc_keeps_the_plain_reading() -> None:
    found = explain_text("Could not find module 'C:\\Program Files\\AMD\\ROCm\\5.7\\bin\\"
                         "hiprtc0507.dll' (or one of its dependencies). Try using the full path "
                         "with constructor syntax.")
    assert (found.subject, found.rule) == ("hiprtc0507.dll", "ctypes-dll-not-found")
    assert "WinError 126" in found.cause
