"""Build-time families of r12's misses, read from the programs' own wordings (issue 40,
devbt4): ld's relocation overflow with the CMake target it names, the AMDGPU assembler's DPP8
rejection, CMake's imported-target file check and its config-file search for Tensile's
msgpack, Docker's layer unpacking, hipify leftovers (a CUDA call clang suggests the hip name
for, CUDA's mma.h, nvcc's flags), Python's ENOMEM, a glibc symbol version, HIP's __noinline__
macro. Each line is what the program prints, with the values the reading must take out of
it, and the look-alikes beside them that must claim nothing (or not this)."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

_CK_DPP8 = """/src/include/ck/utility/inner_product_dpp8.hpp:4:21: error: not a valid operand.
    4 |     asm volatile("\\n v_dot2c_f32_f16_dpp %0, %1, %2 dpp8:[1, 1, 1, 1, 1, 1, 1, 1]"
      |                     ^
<inline asm>:2:33: note: instantiated into assembly here
1 error generated when compiling for gfx908.
"""

_CK_IMPORTED = """CMake Error at /opt/rocm/lib/cmake/composable_kernel/x.cmake:76 (message):
  The imported target "composable_kernel::device_gemm_operations" references
  the file

     "/opt/rocm/lib/libdevice_gemm_operations.a"

  but this file does not exist.  Possible reasons include:
"""

_MSGPACK = """CMake Error at Tensile/Source/lib/CMakeLists.txt:93 (find_package):
  Could not find a package configuration file provided by "msgpack" with any
  of the following names:

    msgpackConfig.cmake
"""

_NOINLINE = """In file included from /usr/include/c++/12/memory:77:
/usr/include/c++/12/bits/shared_ptr_base.h:196:22: error: use of undeclared identifier \
'noinline'; did you mean 'inline'?
      __attribute__((__noinline__))
                     ^
/opt/rocm-5.1.0/hip/include/hip/amd_detail/host_defines.h:50:37: note: expanded from macro \
'__noinline__'
"""


@pytest.mark.parametrize(("text", "step", "klass", "subject", "rule", "words"), [
    # the CMake object folder of the next line names the target that overflowed
    ("ld.lld: error: CMakeFiles/ckProfiler.dir/profile_gemm.cpp.o:(.rodata+0x0): \n"
     "relocation R_X86_64_PC32 out of range: 2829150605 is not in [-2147483648, "
     "2147483647]; references section '.text'\n", "build", "link", "ckProfiler",
     "relocation-overflow", ("the target ckProfiler", "build ckProfiler alone", "Release")),
    # a ck:: symbol names Composable Kernel, before the instance library's folder
    ("ld.lld: error: lib/CMakeFiles/device_conv_instance.dir/x.o:(.text+0x10): relocation "
     "R_X86_64_REX_GOTPCRELX out of range: -3824024220 is not in [-2147483648, 2147483647]; "
     "references 'typeinfo for ck::tensor_operation::device::BaseArgument'\n", "build",
     "link", "composable_kernel", "relocation-overflow", ("device_conv_instance",)),
    (_CK_DPP8, "build", "composable-kernel", "composable_kernel", "ck-dpp8-not-on-target",
     ("inner_product_dpp8.hpp", "gfx908", "DPP8", "-O3")),
    (_CK_IMPORTED, "configure", "composable-kernel", "composable_kernel",
     "ck-imported-library-missing",
     ("composable_kernel::device_gemm_operations", "libdevice_gemm_operations.a")),
    (_MSGPACK, "configure", "missing-component", "msgpack", "cmake-config-file",
     ("msgpack-cxx", "libmsgpack-cxx-dev", "not part of ROCm", "msgpack_DIR")),
    ("failed to register layer: ApplyLayer exit status 1 stdout:  stderr: write "
     "/opt/rocm-6.0.0/lib/libMIOpen.so: no space left on device\n", "preflight",
     "disk-full", "disk", "docker-layer-no-space", ("data-root", "df -i", "daemon.json")),
    ("src/misc/strongstream.cpp:261:15: error: use of undeclared identifier "
     "'cudaLaunchHostFunc'; did you mean 'hipLaunchHostFunc'?\n", "build", "hipify",
     "strongstream.cpp", "hipify-cuda-call-left", ("cudaLaunchHostFunc", "hipLaunchHostFunc")),
    # the file on the line before (two messages interleaved), the identifier alone after it
    ("rccl/build/src/include/alloc.h:196:1314:  errors generatederror:  when compiling\n"
     "use of undeclared identifier 'cudaThreadExchangeStreamCaptureMode'; did you mean "
     "'hipThreadExchangeStreamCaptureMode'?\n", "build", "hipify", "alloc.h",
     "hipify-cuda-call-left", ("rccl/build/src/include/alloc.h",)),
    ("ops/blas_utils_hip.h:18:10: fatal error: mma.h: No such file or directory\n", "build",
     "hipify", "mma.h", "missing-header", ("blas_utils_hip.h", "WMMA")),
    ("hipcc -c k.cpp\nclang: error: unsupported option '--use_fast_math'\n", "build",
     "hipify", "--use_fast_math", "nvcc-flag-to-hipcc", ("nvcc", "torch.version.hip")),
    # clang 22 words it "unknown argument"; the value keeps its '='
    ("/opt/rocm/bin/hipcc -c k.cpp\nclang++: error: unknown argument: "
     "'--ptxas-options=-v'\n", "build", "hipify", "--ptxas-options", "nvcc-flag-to-hipcc",
     ("--ptxas-options=-v",)),
    ("  File \"Tensile/TensileCreateLibrary.py\", line 1, in ParallelMap\n"
     "OSError: [Errno 12] Cannot allocate memory\n", "build", "out-of-memory", "memory",
     "python-enomem", ("Tensile", "fewer GPU targets", "Errno 12")),
    ("/usr/bin/ld: lib/libtorch_cpu.so: undefined reference to `hypotf@GLIBC_2.35'\n",
     "build", "link", "hypotf", "undefined-reference",
     ("libtorch_cpu.so", "GLIBC_2.35", "glibc 2.35 or newer")),
    # a generic target below code object version 6: a pairing, not a compiler crash
    ("fatal error: error in backend: gfx9-generic is only available on code object version 6 "
     "or better\n", "build", "gpu-target", "gfx9-generic", "generic-target-code-object",
     ("-mcode-object-version=6", "generic target")),
    (_NOINLINE, "build", "host-compiler", "libstdc++", "hip-noinline-macro-libstdcxx",
     ("libstdc++ 12", "__noinline__", "--gcc 11")),
])
def test_family_reads_its_values(text: str, step: str, klass: str, subject: str, rule: str,
                                 words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words, step=step)


@pytest.mark.parametrize("text", [
    # a dpp8 operand echoed with no assembler error before it
    "    4 |     asm volatile(\"v_mov_b32_dpp v0, v1 dpp8:[7,6,5,4,3,2,1,0]\");\n",
    # nvcc's flags in a CUDA build's clang, with no sign of ROCm in the log
    "clang: error: unsupported option '--expt-relaxed-constexpr'\n",
    # hipcc only warns for -lineinfo and -Xptxas
    "hipcc -c k.cpp\nclang: warning: argument unused during compilation: '-Xptxas' "
    "[-Wunused-command-line-argument]\n",
    # ENOMEM at run time (verify step: a GPU or fork failure, not the build's memory)
    "OSError: [Errno 12] Cannot allocate memory\n",
    # a warning about not-compiled SDPA kernels, with no error
    "UserWarning: Flash attention was not compiled for current AMD GPU architecture. "
    "Attempting to run on architecture gfx1103\n",
])
def test_look_alikes_claim_nothing(text: str) -> None:
    step = "verify" if "Errno 12" in text else "build"
    assert explain_text(text, step=step).klass is None


@pytest.mark.parametrize(("text", "not_rule", "instead"), [
    # a suggestion that is not the hip spelling of the CUDA name
    ("a.cpp:1:1: error: use of undeclared identifier 'cudaFoo'; did you mean 'hipBar'?\n",
     "hipify-cuda-call-left", None),
    # mma.h missing from a file hipify did not write
    ("src/gemm.cu:3:10: fatal error: mma.h: No such file or directory\n", "missing-header",
     None),
    # the __noinline__ note without libstdc++'s error before it
    ("/opt/rocm/include/hip/amd_detail/host_defines.h:50:37: note: expanded from macro "
     "'__noinline__'\n", "hip-noinline-macro-libstdcxx", None),
    # an ENOSPC outside Docker's storage is the build's own disk
    ("write /home/u/build/x.o: no space left on device\n", "docker-layer-no-space",
     "disk-full"),
])
def test_near_misses_are_not_this_family(text: str, not_rule: str, instead: str | None) -> None:
    d = explain_text(text, step="build")
    assert d.rule != not_rule
    assert d.rule == instead if instead else d.klass is None
