"""Value reading of the run-time shapes added for r10's misses (devrt3): rocBLAS' warning that
its glob found no code objects for the GPU's target, ROCr's LoadLib debug line (no failure),
a CUDA torch on an AMD host (python-packaging), the target a hipSPARSELt/rocBLAS lazy library
file names, ollama's rejected GPU target with the family's override, and Tensile's failed
manifest check. Each asserts the exact values read and the look-alikes declined."""

from __future__ import annotations

from rocmforge.triage import explain_text

_NO_PATHS = ("rocBLAS warning: No paths matched /opt/rocm-6.0.0/lib/rocblas/library/*gfx1031*co."
             " Make sure that ROCBLAS_TENSILE_LIBPATH is set correctly.\n")


def test_rocblas_glob_with_no_match_names_the_target_and_the_folder() -> None:
    d = explain_text("Segmentation fault (core dumped)\n" + _NO_PATHS)
    assert (d.klass, d.subject, d.rule) == ("math-library", "rocblas", "tensile-no-code-objects")
    assert "target gfx1031 in /opt/rocm-6.0.0/lib/rocblas/library " in d.cause
    assert "holds gfx1031 kernels" in d.fix
    assert "ROCBLAS_TENSILE_LIBPATH" in d.fix


def test_the_old_glob_without_a_target_proves_nothing() -> None:
    d = explain_text("rocBLAS warning: No paths matched /opt/rocm/lib/rocblas/library/*co. Make "
                     "sure ROCBLAS_TENSILE_LIBPATH is set correctly.\n")
    assert d.klass is None


def test_rocr_loadlib_debug_line_is_not_an_import_failure() -> None:
    line = ("LoadLib(libhsa-amd-aqlprofile64.so) failed: libhsa-amd-aqlprofile64.so: cannot "
            "open shared object file: No such file or directory\n")
    assert explain_text(line).klass is None
    # with the rocBLAS warning after it, the warning is the answer
    assert explain_text(line + _NO_PATHS).rule == "tensile-no-code-objects"


def test_a_real_loader_failure_is_still_read_next_to_the_guard() -> None:
    d = explain_text("ImportError: libamdhip64.so.6: cannot open shared object file: No such "
                     "file or directory\n")
    assert (d.klass, d.rule) == ("import", "cannot-open-so")


def test_a_cuda_torch_on_an_amd_host_is_a_package_from_the_wrong_index() -> None:
    d = explain_text("RuntimeError: Found no NVIDIA driver on your system. Please check that you "
                     "have an NVIDIA GPU and installed a driver from http://www.nvidia.com/\n")
    assert (d.klass, d.subject, d.rule) == ("python-packaging", "torch", "cuda-torch-no-driver")
    assert "CUDA wheel was installed instead of a ROCm one" in d.cause
    assert "download.pytorch.org/whl/rocm" in d.fix


def test_a_torch_without_gpu_support_stays_rocm_disabled() -> None:
    d = explain_text('    raise AssertionError("Torch not compiled with CUDA enabled")\n'
                     "AssertionError: Torch not compiled with CUDA enabled\n")
    assert d.klass == "rocm-disabled"


def test_the_lazy_library_file_names_the_target() -> None:
    d = explain_text("hipsparselt_error: Cannot read /opt/rocm/lib/hipsparselt/library/"
                     "TensileLibrary_lazy_gfx1200.dat: No such file or directory\n")
    assert (d.klass, d.subject, d.rule) == ("math-library", "hipsparselt", "tensile-library")
    assert "the GPU's target gfx1200" in d.cause
    assert "library/*gfx1200*" in d.fix


def test_the_gpu_arch_tail_still_wins_over_the_generic_file() -> None:
    d = explain_text("rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat:"
                     " Illegal seek for GPU arch : gfx1010\n")
    assert d.subject == "rocblas"
    assert "the GPU's target gfx1010" in d.cause


_OLLAMA = ('time=2025-02-02T19:28:37.628+08:00 level=WARN source={src}:378 msg="amdgpu is not '
           'supported (supported types:[{listed}])" gpu_type={arch} gpu=0 '
           'library=/usr/local/lib/ollama\n')


def test_ollama_rejected_target_gets_its_family_override() -> None:
    d = explain_text(_OLLAMA.format(src="amd_linux.go", listed="gfx1030 gfx1100 gfx900",
                                    arch="gfx1031"))
    assert (d.klass, d.subject, d.rule) == ("gpu-target", "gfx1031", "ollama-gpu-not-supported")
    assert "(gfx1030 gfx1100 gfx900)" in d.cause
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0 " in d.fix
    rdna3 = explain_text(_OLLAMA.format(src="amd_linux.go", listed="gfx1030 gfx1100",
                                        arch="gfx1103"))
    assert "HSA_OVERRIDE_GFX_VERSION=11.0.0 " in rdna3.fix
    # RDNA1 is not RDNA2's family, RDNA3.5 not RDNA3's: no override offered
    rdna1 = explain_text(_OLLAMA.format(src="amd_linux.go", listed="gfx1030", arch="gfx1010"))
    assert "cannot help" in rdna1.fix


def test_ollama_gcn_targets_get_no_computed_override() -> None:
    gcn = explain_text(_OLLAMA.format(src="amd_linux.go", listed="gfx906 gfx90a", arch="gfx90c"))
    assert gcn.subject == "gfx90c"
    assert "HSA_OVERRIDE_GFX_VERSION=" not in gcn.fix
    assert "same GCN generation" in gcn.fix


def test_ollama_without_a_sibling_or_on_windows_promises_no_override() -> None:
    lonely = explain_text(_OLLAMA.format(src="amd_linux.go", listed="gfx1030 gfx1100",
                                         arch="gfx1201"))
    assert "HSA_OVERRIDE_GFX_VERSION cannot help" in lonely.fix
    windows = explain_text(_OLLAMA.format(src="amd_windows.go", listed="gfx1030 gfx1100",
                                          arch="gfx1031"))
    assert windows.subject == "gfx1031"
    assert "does not honour HSA_OVERRIDE_GFX_VERSION" in windows.fix
    assert "=10.3.0" not in windows.fix


def test_ollama_listing_the_target_itself_claims_nothing() -> None:
    d = explain_text(_OLLAMA.format(src="amd_linux.go", listed="gfx1030 gfx1100",
                                    arch="gfx1030"))
    assert d.klass is None


_VERIFY = ("[rocBLAS] [23/640] Verifying files in /b/rocBLAS/build/Tensile/library/"
           "TensileManifest.txt were generated\n")
_FAILED = ("[rocBLAS] FAILED: library/src/CMakeFiles/TENSILE_LIBRARY_TARGET /b/rocBLAS/build/"
           "library/src/CMakeFiles/TENSILE_LIBRARY_TARGET\n")


def test_a_failed_tensile_manifest_check_is_an_incomplete_kernel_library() -> None:
    d = explain_text(_VERIFY + _FAILED)
    assert (d.klass, d.subject, d.rule) == ("math-library", "rocblas",
                                            "tensile-manifest-incomplete")
    assert "TensileManifest.txt" in d.cause
    assert "GPU_TARGETS" in d.fix


def test_the_library_target_failing_without_the_manifest_check_is_not_read() -> None:
    d = explain_text(_FAILED)
    assert d.rule != "tensile-manifest-incomplete"


_TRITON_PKG = ("      Package(package='llvm', name='llvm-4713bd4c-ubuntu-x64', url='https://oaitriton."
               "blob.core.windows.net/public/llvm-builds/llvm-4713bd4c-ubuntu-x64.tar.gz', "
               "include_flag='LLVM_INCLUDE_DIRS', lib_flag='LLVM_LIBRARY_DIR', "
               "syspath_var_name='LLVM_SYSPATH')\n")


def test_a_relative_llvm_syspath_is_named_with_its_folder() -> None:
    d = explain_text(_TRITON_PKG + "      error: [Errno 2] No such file or directory: "
                     "'../llvm-project/build/version.txt'\n")
    assert (d.klass, d.subject, d.rule) == ("triton", "triton", "triton-relative-syspath")
    assert "../llvm-project/build/version.txt, a relative folder given in LLVM_SYSPATH" in d.cause
    assert d.fix.startswith("give LLVM_SYSPATH as an absolute path (`realpath "
                            "../llvm-project/build` prints it)")


def test_absolute_or_cache_version_files_and_other_programs_claim_nothing() -> None:
    absolute = explain_text(_TRITON_PKG + "error: [Errno 2] No such file or directory: "
                            "'/home/u/.triton/llvm/llvm-4713bd4c/version.txt'\n")
    assert absolute.rule != "triton-relative-syspath"
    cache = explain_text(_TRITON_PKG + "error: [Errno 2] No such file or directory: "
                         "'home/.triton/llvm/llvm-4713bd4c/version.txt'\n")
    assert cache.rule != "triton-relative-syspath"
    other = explain_text("error: [Errno 2] No such file or directory: 'build/version.txt'\n")
    assert other.rule != "triton-relative-syspath"


def test_pynvml_next_to_a_rocm_torch_without_amdsmi() -> None:
    wrapped = explain_text("[Crystools ERROR] Could not pick default device.name 'amdsmi' is "
                           "not defined\n")
    assert (wrapped.klass, wrapped.subject, wrapped.rule) == ("python-packaging", "nvidia-ml-py",
                                                              "pynvml-on-rocm-torch")
    assert "pip uninstall nvidia-ml-py pynvml" in wrapped.fix
    plain = explain_text("    amdsmi.amdsmi_init()\nNameError: name 'amdsmi' is not defined\n")
    assert plain.rule == "pynvml-on-rocm-torch"
    other = explain_text("NameError: name 'amdsmi_init' is not defined\n")
    assert other.rule != "pynvml-on-rocm-torch"
