"""Build-time families of r14's misses (issue 40, devbt6), read from the programs' own wordings:
find_package(Torch) with no prefix leading to torch's TorchConfig.cmake, hip-config.cmake's
'clangrt builtins lib not found', FindHIP.cmake's hip_* commands unknown, TheRock's undeclared
super-project package (also as a person quotes it), pthread_* undefined at link, clang's
device-library and HIP-runtime errors (old and new wording), a clang that rejects
--offload-arch, a ROCm header that includes another library's header by its bare name, and
find_package's message broken before 'provided by'. Each line is what the program prints, with
the values the reading must take out of it, and the look-alikes beside them that must claim
nothing (or not this)."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

_TORCH = """CMake Error at CMakeLists.txt:91 (find_package):
  By not providing "FindTorch.cmake" in CMAKE_MODULE_PATH this project has
  asked CMake to find a package configuration file provided by "Torch", but
  CMake did not find one.

  Could not find a package configuration file provided by "Torch" with any of
  the following names:

    TorchConfig.cmake
    torch-config.cmake
"""

_CLANGRT = """CMake Error at /opt/rocm-5.2.0/lib/cmake/hip/hip-config.cmake:293 (message):
  clangrt builtins lib not found
Call Stack (most recent call first):
  CMakeLists.txt:12 (find_package)
"""

_CLANGRT_SPACK = """  >> 23    CMake Error at /sp/hip/lib/cmake/hip/hip-config.cmake:331 (message):
     24      clangrt builtins lib not found
"""

_HIP_ADD_LIBRARY = """CMake Error at hip/CMakeLists.txt:246 (hip_add_library):
  Unknown CMake command "hip_add_library".
"""

_HIP_ADD_LIBRARY_FLAT = """CMake Error at hip/CMakeLists.txt:246 (hip_add_library):
Unknown CMake command "hip_add_library".
"""

_UNDECLARED_QUOTED = """CMake Error at cmake/therock_subproject_dep_provider.cmake:68 (message):
    Project contains find_package(MPI) for a package available in the
    super-project but not declared: Add a BUILD_DEPS or RUNTIME_DEPS
    appropriately
"""

_PTHREAD = """ld.lld: error: undefined symbol: pthread_key_create
>>> referenced by gtest-port.h:1774
clang++: error: linker command failed with exit code 1 (use -v to see invocation)
"""

_ROCRAND = """In file included from /opt/rocm/include/hiprand/hiprand.h:56:0,
/opt/rocm/include/hiprand/hiprand_hcc.h:24:10: fatal error: rocrand.h: No such file or directory
"""

_ROCFFT_WRAPPED = """CMake Error at D:/TheRock/cmake/therock_subproject_dep_provider.cmake:51
(find_package):
Could not find a package configuration file
provided by "rocfft" with any
  of the following names:
"""


@pytest.mark.parametrize(("text", "step", "klass", "subject", "rule", "words"), [
    (_TORCH, "vllm-build", "cmake", "torch", "cmake-config-file",
     ("TorchConfig.cmake", "torch.utils.cmake_prefix_path", "Torch_DIR",
      "--no-build-isolation")),
    (_CLANGRT, "configure", "cmake", "clangrt", "hip-config-clangrt-builtins-missing",
     ("libclang_rt.builtins", "compiler-rt", "HIP_CLANG_ROOT")),
    (_CLANGRT_SPACK, "configure", "cmake", "clangrt", "hip-config-clangrt-builtins-missing",
     ("clangrt builtins lib not found",)),
    (_HIP_ADD_LIBRARY, "configure", "cmake", "hip_add_library", "cmake-unknown-command",
     ("FindHIP.cmake", "CMAKE_MODULE_PATH", "enable_language(HIP)")),
    (_HIP_ADD_LIBRARY_FLAT, "configure", "cmake", "hip_add_library", "cmake-unknown-command",
     ("FindHIP.cmake",)),
    (_UNDECLARED_QUOTED, "configure", "missing-component", "mpi",
     "therock-subproject-dep-undeclared", ("find_package(MPI)", "BUILD_DEPS")),
    (_PTHREAD, "build", "link", "pthread_key_create", "undefined-reference",
     ("libpthread", "glibc 2.34", "Threads::Threads", "-pthread")),
    ("clang-13: error: cannot find ROCm device library. Provide its path via --rocm-path or "
     "--rocm-device-lib-path, or pass -nogpulib to build without ROCm device library.\n",
     "build", "rocm-install", "rocm-device-libs", "rocm-device-library",
     ("HIP_DEVICE_LIB_PATH",)),
    # clang 12's wording and clang 22's (make/devbt6.sh runs clang++-22)
    ("clang-12: error: cannot find HIP runtime. Provide its path via --rocm-path, or pass "
     "-nogpuinc to build without HIP runtime.\n", "build", "rocm-install", "hip",
     "hip-runtime-missing", ("--rocm-path",)),
    ("clang++-22: error: cannot find HIP runtime; provide its path via '--rocm-path', or pass "
     "'-nogpuinc' to build without HIP runtime\n", "build", "rocm-install", "hip",
     "hip-runtime-missing", ("ROCM_PATH",)),
    ("clang-10: error: unsupported option '--offload-arch=gfx900'\n", "compilers",
     "rocm-install", "hipcc", "clang-offload-arch-unknown",
     ("clang-10", "--offload-arch=gfx900", "--amdgpu-target=gfx900")),
    (_ROCRAND, "build", "rocm-install", "rocrand", "rocm-sibling-header-folder",
     ("hiprand/hiprand_hcc.h", "-I/opt/rocm/include/rocrand")),
    (_ROCFFT_WRAPPED, "configure", "missing-component", "rocfft",
     "cmake-config-provided-wrapped", ("rocfft_DIR",)),
])
def test_family_reads_its_values(text: str, step: str, klass: str, subject: str, rule: str,
                                 words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words, step=step)


@pytest.mark.parametrize(("text", "step"), [
    # Torch's config not found in a warning block: an optional lookup, the configure goes on
    ("CMake Warning at CMakeLists.txt:9 (find_package):\n  Could not find a package "
     "configuration file provided by \"Torch\" with any of\n", "configure"),
    # since ROCm/clr@c8500cd72 the clangrt message is a status line or an author warning
    ("-- clangrt builtins lib not found: 1\n", "configure"),
    ("CMake Warning (dev) at /opt/rocm/lib/cmake/hip/hip-config-amd.cmake:205 (message):\n"
     "  clangrt builtins lib not found: 1\n", "configure"),
    # an unknown hip_* command line with no CMake error header naming it
    ("Unknown CMake command \"hip_add_library\".\n", "configure"),
    # a pthread symbol named in a compiler's warning, not the linker's error
    ("a.c:3:5: warning: implicit declaration of function 'pthread_key_create'\n", "build"),
    # --offload-arch on a command line that worked, and an unknown CUDA arch value
    ("/opt/rocm/bin/hipcc -fPIC --offload-arch=gfx900 -c a.cpp -o a.o\n", "build"),
    ("clang-10: error: unsupported option '--offload-arch=sm_80'\n", "build"),
    # a library's header including its own sibling, and a header no ROCm library owns
    ("/opt/rocm/include/rocrand/rocrand_kernel.h:3:10: fatal error: rocrand.h: No such file "
     "or directory\n", "build"),
    ("/opt/rocm/include/hiprand/hiprand.h:3:10: fatal error: mylocal.h: No such file or "
     "directory\n", "build"),
    # the wrapped 'provided by' line without the line that starts the message
    ("provided by \"rocfft\" with any\n", "configure"),
])
def test_look_alikes_claim_nothing(text: str, step: str) -> None:
    assert explain_text(text, step=step).klass is None


def test_a_runtime_compile_missing_std_header_stays_the_host_reading() -> None:
    # comgr's run-time compile (MIOpen through hipRTC) without <type_traits>: four threads
    # found the host's libstdc++ headers missing, one (ROCm/TheRock#3588) ROCm's own LLVM C++
    # headers; the lines do not tell them apart, so this family keeps its existing reading.
    text = ("/tmp/comgr-209-20-187dbd/include/miopen_type_traits.hpp:151:10: fatal error: "
            "'type_traits' file not found\n")
    assert explain_text(text, step="verify").rule == "std-header-missing"


def test_a_system_header_from_a_rocm_header_is_not_a_sibling_folder() -> None:
    # zlib is no ROCm library: the system-header reading answers, not this family
    text = ("/opt/rocm/include/hiprand/hiprand.h:3:10: fatal error: zlib.h: No such file or "
            "directory\n")
    found = explain_text(text, step="build")
    assert (found.rule, found.subject) != ("rocm-sibling-header-folder", "zlib")
    assert found.klass == "missing-component"
