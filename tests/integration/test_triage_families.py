"""The generic message families (rocmforge/triage/parsers/): each reads its value (library,
package, program, version) out of the message a tool prints for any of them, and declines
where the line alone proves no cause."""

from __future__ import annotations

import pytest

from rocmforge.triage import explain_text


@pytest.mark.parametrize(("text", "klass", "subject", "rule"), [
    ("ImportError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.32' not found "
     "(required by /x/torch/lib/libtorch_cpu.so)", "import", "libtorch_cpu.so", "glibc-version"),
    ("version `GLIBCXX_3.4.32' not found (required by /opt/rocm/lib/libamdhip64.so)",
     "import", "GLIBCXX_3.4.32", "libstdcxx-version-unnamed"),
    ("ld.lld: error: unable to find library -lrocblas", "link", "librocblas",
     "lld-no-library"),
    ("/bin/sh: line 1: 12345 Killed                  /usr/bin/c++ -o foo.o -c foo.cpp",
     "out-of-memory", "c++", "shell-killed"),
    ("c++: internal compiler error: Killed (program cc1plus)", "out-of-memory", "cc1plus",
     "compiler-killed"),
    ("CMake Error at CMakeLists.txt:5 (project):\n  No CMAKE_HIP_COMPILER could be found.",
     "rocm-install", "hipcc", "cmake-no-compiler"),
    ("CMake Error at CMakeLists.txt:5 (project):\n  No CMAKE_CXX_COMPILER could be found.",
     "host-compiler", "g++", "cmake-no-compiler"),
    ("ERROR: torch-2.5.0+rocm6.2-cp310-cp310-linux_x86_64.whl is not a supported wheel on "
     "this platform.", "python-packaging", "torch", "pip-unsupported-wheel"),
    ("ERROR: Cannot install torch==2.4.0 and torchvision==0.20.0 because these package "
     "versions have conflicting dependencies.", "python-packaging", "torch",
     "pip-resolver-conflict"),
    ("/bin/sh: 1: /opt/rocm/bin/hipconfig: not found", "rocm-install", "hipconfig",
     "rocm-tool-missing"),
    ("FileNotFoundError: [Errno 2] No such file or directory: '/opt/rocm-6.2.0/bin/rocminfo'",
     "rocm-install", "rocminfo", "rocm-tool-missing"),
    ('#error "You\'re trying to build PyTorch with a too old version of GCC. We need GCC 9 or '
     'later."', "host-compiler", "gcc", "gcc-too-old"),
    ('OSError: [WinError 126] The specified module could not be found. Error loading '
     '"C:\\venv\\lib\\site-packages\\torch\\lib\\c10.dll" or one of its dependencies.',
     "import", "c10.dll", "windows-dll-load"),
    ("ImportError: DLL load failed while importing _C: The specified module could not be "
     "found.", "import", "_C", "dll-load-failed"),
    ("clang++: error: cannot find HIP runtime; provide its path via '--rocm-path', or pass "
     "'-nogpuinc' to build without HIP runtime", "rocm-install", "hip", "hip-runtime-missing"),
    ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an "
     "NVIDIA GPU and installed a driver", "python-packaging", "torch", "cuda-torch-no-driver"),
    ("RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA "
     "major versions. PyTorch has CUDA Version=6.2 and torchvision has CUDA Version=5.7. "
     "Please reinstall", "python-packaging", "torchvision", "companion-cuda-versions"),
    ("AttributeError: module 'pkgutil' has no attribute 'ImpImporter'. Did you mean: "
     "'zipimporter'?", "python-packaging", "setuptools", "setuptools-impimporter"),
    ("error: invalid command 'bdist_wheel'", "python-packaging", "wheel", "no-bdist-wheel"),
    ("A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.0 as it may "
     "crash.", "python-packaging", "numpy", "numpy-abi"),
    ('CMake Error at /opt/rocm/lib/cmake/hip/hip-config.cmake:10 (find_package):\n'
     '  Could not find a configuration file for package "amd_comgr" that is\n'
     '  compatible with requested version "2.0".', "missing-component", "amd_comgr",
     "cmake-incompatible-wrapped"),
    ("'gfx1151' is not a recognized processor for this target (ignoring processor)",
     "gpu-target", "gfx1151", "llvm-unknown-target"),
    ("RuntimeError: Unsupported GPU architecture: gfx1030", "gpu-target", "gfx1030",
     "gpu-target-not-supported"),
    ("AssertionError: gfx1036 is not supported", "gpu-target", "gfx1036",
     "gpu-target-not-supported"),
    ("  ╰─▶ Because torch==2.7.0+rocm6.3 has no wheels with a matching platform tag and you "
     "require torch==2.7.0+rocm6.3, we can conclude", "python-packaging", "torch",
     "no-platform-wheel"),
    ("ERROR: Package 'vllm' requires a different Python: 3.8.10 not in '>=3.9'",
     "python-packaging", "vllm", "requires-python"),
    ("ImportError: cannot import name 'packaging' from 'pkg_resources'", "python-packaging",
     "pkg_resources", "pkg-resources-packaging"),
    ("TypeError: canonicalize_version() got an unexpected keyword argument "
     "'strip_trailing_zero'", "python-packaging", "packaging", "packaging-too-old"),
    ("/x/foo.hip:3:10: fatal error: 'cusolverDn.h' file not found", "hipify", "cusolverDn.h",
     "missing-header"),
    ("/x/foo.cpp:3:10: fatal error: nvToolsExt.h: No such file or directory", "hipify",
     "nvToolsExt.h", "missing-header"),
    ("FileNotFoundError: [Errno 2] No such file or directory: 'cmake'", "cmake", "cmake",
     "cmake-missing"),
    ("CMake Error at CMakeLists.txt:5 (project):\n  Generator\n\n    Ninja\n\n  does not "
     "match the generator used previously: Unix Makefiles", "cmake", "cmake",
     "cmake-stale-cache"),
    ("CMake Error in CMakeLists.txt:\n  The CMAKE_HIP_ARCHITECTURES:\n\n    gfx1151\n\n  do "
     "not all work with this compiler.", "gpu-target", "gfx1151",
     "hip-architectures-rejected"),
    ("torch._inductor.exc.TritonMissing: Cannot find a working triton installation. Either "
     "the package is not installed or it is too old.", "triton", "triton", "triton-missing"),
    ("AttributeError: module 'triton.language' has no attribute 'constexpr_function'",
     "triton", "triton", "triton-attribute"),
    ("/usr/bin/ld: cannot find -lamdhip64: No such file or directory\n"
     "subprocess.CalledProcessError: Command '['/usr/bin/gcc', '/tmp/x/main.c', '-O3', "
     "'-shared', '-fPIC', '-o', '/tmp/x/hip_utils.cpython-310-x86_64-linux-gnu.so', "
     "'-lamdhip64']' returned non-zero exit status 1.", "triton", "triton",
     "triton-launcher-build"),
    ("Installed torch 2.5.0+rocm6.2\nAssertionError: libcuda.so cannot found!", "triton",
     "triton", "triton-libcuda"),
    # r5's shapes, each on its thread's line (tests/failures/rounds/r5) or a variant of it
    (">>> RuntimeError: cannot initialize HIP without the ATen_hip library", "rocm-disabled",
     "USE_ROCM", "aten-hip-missing"),
    ("CMake Error at foo.cmake:3 (cmake_policy):\n  Policy CMP0048 may not be set to OLD "
     "behavior because this version of CMake", "cmake", "cmake", "cmake-policy-removed"),
    ("RuntimeError: CUDA error: HIPBLAS_STATUS_NOT_SUPPORTED when calling `hipblasLtMatmul( "
     "ltHandle)`", "math-library", "hipblaslt", "blas-status-at-call"),
    ("make: /usr/bin/hipcc: No such file or directory", "rocm-install", "hipcc",
     "hipcc-path-missing"),
    ("D:\\rocm\\bin\\hipcc.exe -Og hello.cpp\n'D:\\rocm\\bin\\clang++' is not "
     "recognized as an internal or external command,", "rocm-install", "hipcc",
     "windows-hip-compiler-missing"),
    ("rocBLAS error: Could not load /opt/rocm-6.0.0/lib/rocblas/library/"
     "TensileLibrary_lazy_gfx1030.dat", "rocm-install", "/opt/rocm-6.0.0",
     "tensile-unloadable"),
    ("rocBLAS error: Cannot read /x/torch/lib/rocblas/library/TensileLibrary.dat:\n"
     "  Illegal seek for GPU arch : gfx906", "math-library", "rocblas", "tensile-arch-wrapped"),
    ("--   * gfx1100 : AMD RX 7900 XTX\nCMake Error at cmake/therock_subproject.cmake:1399 "
     "(message):\n  Subproject therock-boost requires dist AMDGPU targets but none were set.",
     "gpu-target", "gfx1100", "therock-no-targets"),
    ("/app/vllm/csrc/hip_view.hip:21:34: error: no member named 'layout' in "
     "'torch::stable::Tensor'\n/usr/local/lib/python3.12/dist-packages/torch/include/torch/"
     "csrc/stable/ops.h:470:13: note: passing argument", "python-packaging", "torch",
     "torch-api-mismatch"),
    ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total "
     "capacity of 287.98 GiB of which 275.86 GiB is free. 1.05 GiB allowed; Of the allocated",
     "out-of-memory", "set_per_process_memory_fraction", "gpu-memory-fraction"),
    ("rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such "
     "file or directory for GPU arch : gfx1100\n List of available TensileLibrary Files :",
     "missing-component", "rocblas", "tensile-folder-empty"),
    ("      20 errors generated when compiling for gfx1100.\n      failed to execute:clang++ "
     "-I/x/xformers/csrc/attention/hip_fmha", "gpu-target", "gfx1100",
     "ck-target-compile-errors"),
    ("x.c:15:10: fatal error: hip/hip_runtime_api.h: No such file or directory",
     "rocm-install", "ROCM_HOME", "missing-header"),
    ('OSError: libhiprtc.so: cannot open shared object file: No such file or directory',
     "import", "libhiprtc.so", "cannot-open-so"),
    ("RuntimeError: rocblas_status_internal_error when calling rocblas_gemm_ex",
     "math-library", "rocblas", "blas-status-at-call"),
    ("CMake Error at cmake/therock_amdgpu_targets.cmake:294 (message):\n  THEROCK_AMDGPU_FAMILIES "
     "value 'gfx1100' unknown. Available: gfx110X-all gfx120X-all", "gpu-target", "gfx1100",
     "therock-target-choice"),
    ("HSA_STATUS_ERROR: Unable to open /dev/kfd read-write: Permission denied",
     "rocm-install", "/dev/kfd", "kfd-permission"),
])
def test_a_family_reads_its_value(text: str, klass: str, subject: str, rule: str) -> None:
    found = explain_text(text)
    assert (found.klass, found.subject, found.rule) == (klass, subject, rule)


@pytest.mark.parametrize("text", [
    # a SIGKILLed job that is no compiler or linker: memory is not proven
    "/bin/sh: line 1: 12345 Killed                  python train.py",
    # the linker's glibc check at build time is no loader error
    "/usr/bin/ld: /usr/lib/libfoo.so: version `GLIBC_2.34' not found",
    # hipcc under the old <rocm>/hip layout is the stale-HIP_PATH signature's, not a tool gap
    "sh: 1: /opt/rocm-7.2.3/hip/bin/hipconfig: not found",
    # a program under /opt/rocm that is no ROCm tool
    "/bin/sh: 1: /opt/rocm/bin/my_script: not found",
    # the wrapped version line outside a CMake error block
    '  Could not find a configuration file for package "amd_comgr" that is\n'
    '  compatible with requested version "2.0".',
    # torchvision's own warning that its optional image extension did not load
    "/x/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: "
    "'libc10_hip.so: cannot open shared object file: No such file or directory'If you don't "
    "plan on using image functionality from `torchvision.io`, you can ignore this warning.",
    "/x/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: "
    "'/x/torchvision/image.so: undefined symbol: _ZN3c1017RegisterOperatorsD1Ev'",
    # a target left out with a warning: the build goes on
    "warning: unsupported GPU architecture 'gfx1151', skipping",
    # a math library's own target list is the math-library shape's, with its context
    "rocBLAS: Unsupported GPU architecture: gfx1036 is not supported by this rocblas",
    # an optional import the program carries on without
    "Warning: No module named 'triton'",
    # Triton's CUDA backend on a log that shows no ROCm: a real CUDA failure, not ours
    "AssertionError: libcuda.so cannot found!",
    # a BLAS allocation failure is memory, not missing kernels
    "RuntimeError: CUDA error: HIPBLAS_STATUS_ALLOC_FAILED when calling `hipblasCreate(handle)`",
    # a missing cmd.exe program on a log without hipcc
    "'C:\\x\\bin\\clang++' is not recognized as an internal or external command,",
    # a torch API error in torch's own build (no installed torch's headers): no claim
    "/x/ext/foo.cpp:10:5: error: no member named 'getCurrentCUDAStream' in namespace 'at::cuda'",
    # the wrapped arch line without rocBLAS' "Cannot read" before it
    "  Illegal seek for GPU arch : gfx906",
    # errors for an MI target are the sources' own, not an unsupported target
    "      3 errors generated when compiling for gfx942.\n      -I/x/csrc/attention/hip_fmha",
    # a library's own target check (rocWMMA): not claimed as a plain target problem
    "error: target 'gfx1036' is not supported by rocWMMA",
    # plug-in loaders trying optional plug-ins (RDMA drivers in containers, ALSA modules)
    "libibverbs: Warning: couldn't load driver 'libbnxt_re-rdmav34.so': libbnxt_re-rdmav34.so: "
    "cannot open shared object file: No such file or directory",
    "ALSA lib dlmisc.c:337:(snd1_dlobj_cache_get0) Cannot open shared library "
    "libasound_module_pcm_pulse.so (libasound_module_pcm_pulse.so: cannot open shared object "
    "file: No such file or directory)",
    # pip's post-install notice is no failure
    "torchvision 0.20.0+rocm6.2 requires torch==2.5.0, but you have torch 2.6.0 which is "
    "incompatible.",
])
def test_a_family_claims_nothing_without_proof(text: str) -> None:
    found = explain_text(text)
    assert found.klass is None, (found.rule, found.subject)


def test_a_gpu_out_of_memory_without_a_cap_claims_no_cap() -> None:
    """torch's plain OOM (0 bytes free) is the GPU's memory, not the per-process cap rule."""
    found = explain_text("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. "
                         "GPU 0 has a total capacity of 15.98 GiB of which 0 bytes is free.")
    assert (found.klass, found.rule) == ("out-of-memory", "gpu-out-of-memory")
    assert "with 0 bytes free of 15.98 GiB" in found.cause
    assert "cap" not in found.cause


def test_a_loader_error_a_program_reports_as_its_warning_still_counts() -> None:
    """vLLM reports its own extension's loader error as a WARNING line: that is the failure."""
    found = explain_text("WARNING 05-22 08:41:53 [rocm.py:44] Failed to import from vllm._C "
                         "with ImportError('/x/vllm/_C.abi3.so: undefined symbol: "
                         "_ZN3c103hip19getCurrentHIPStreamEa')")
    assert (found.klass, found.rule) == ("import", "undefined-symbol")


def test_a_tensile_list_that_names_files_is_a_missing_target_not_a_missing_folder() -> None:
    found = explain_text(
        "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such "
        "file or directory for GPU arch : gfx906\n List of available TensileLibrary Files : \n"
        "\"/opt/rocm/lib/rocblas/library/TensileLibrary_lazy_gfx1100.dat\"")
    assert (found.klass, found.subject, found.rule) == ("math-library", "rocblas",
                                                        "tensile-library")


def test_an_unversioned_rocm_library_names_the_wheels_lookup() -> None:
    """r5's ROCm/pytorch#3334: only a development install has the unversioned symlink."""
    found = explain_text("OSError: libhiprtc.so: cannot open shared object file: No such file "
                         "or directory")
    assert "rocm_sdk.find_libraries" in found.fix and "unversioned" in found.cause


def test_a_notice_that_may_not_stop_the_run_yields_to_any_root_cause() -> None:
    """NumPy's 1.x/2.x banner, LLVM's 'ignoring processor' and pip's legacy bdist_wheel
    fallback are tier 2: a later root cause in the same log is the answer."""
    found = explain_text("A module that was compiled using NumPy 1.x cannot be run in\n"
                         "ld.lld: error: unable to find library -lrocblas")
    assert (found.klass, found.rule) == ("link", "lld-no-library")
