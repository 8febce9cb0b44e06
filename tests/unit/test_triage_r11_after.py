"""Value reading of the shapes added for r11's misses: the HIP runtime's "No compatible code
objects found for:" line, hipconfig/hipcc looking for clang under another ROCm root, CMake's
ROCm root on the label's line, an undefined HIP runtime entry point (the library is not linked),
a ROCm library lld cannot find, an integrated GPU asked for Tensile kernels, CK's generated
ck/config.h. Each asserts the exact values read and the look-alikes declined."""

from __future__ import annotations

from rocmforge.triage import explain_text

_FATBIN = (":1:hip_fatbin.cpp           :687 : 114369963532 us:  No compatible code objects "
           "found for: gfx1152, value of HIP_FORCE_SPIRV_CODEOBJECT: 0\n")


def test_hip_runtime_without_a_code_object_names_the_device() -> None:
    d = explain_text(_FATBIN + "Segmentation fault (core dumped)\n")
    assert (d.klass, d.subject, d.rule) == ("gpu-target", "gfx1152", "no-binary-for-gpu")
    assert "invoke build --arch gfx1152" in d.fix


def test_the_device_line_outweighs_a_compile_target_named_elsewhere() -> None:
    d = explain_text("compiling for gfx1100\n" + _FATBIN)
    assert d.subject == "gfx1152"


def test_a_doc_sentence_without_the_target_claims_nothing() -> None:
    assert explain_text("No compatible code objects found for: the device\n").klass is None


_HIPCONFIG = ('Can\'t exec "/opt/rocm/llvm/bin/clang++": No such file or directory at '
              '/opt/rocm-3.8.0/bin/hipconfig line 141.\n')


def test_hipconfig_of_a_versioned_install_looking_under_opt_rocm() -> None:
    d = explain_text(_HIPCONFIG)
    assert (d.klass, d.subject, d.rule) == ("rocm-install", "/opt/rocm", "hipcc-no-clang")
    assert "hipconfig from the ROCm install /opt/rocm-3.8.0 looks for clang under /opt/rocm" \
        in d.cause
    assert "export ROCM_PATH=/opt/rocm-3.8.0" in d.fix


def test_same_root_or_a_distribution_layout_stays_hipccs_environment() -> None:
    same = explain_text('Can\'t exec "/opt/rocm/llvm/bin/clang": No such file or directory at '
                        '/opt/rocm/bin/hipcc line 192.\n')
    assert (same.subject, same.rule) == ("hipcc", "hipcc-no-clang")
    distro = explain_text('Can\'t exec "/usr/llvm/bin/clang": No such file or directory at '
                          '/usr/lib/hip/bin/hipcc line 192.\n')
    assert (distro.subject, distro.rule) == ("hipcc", "hipcc-no-clang")


def test_a_perl_script_that_is_not_a_hip_one_claims_nothing() -> None:
    d = explain_text('Can\'t exec "/opt/rocm/llvm/bin/clang++": No such file or directory at '
                     '/opt/rocm-6.0.0/bin/mytool line 3.\n')
    assert d.klass is None


def test_cmake_rocm_root_on_the_label_line() -> None:
    d = explain_text("CMake Error at CMakeDetermineHIPCompiler.cmake:217 (message):\n"
                     "  The ROCm root directory: /usr\n"
                     "  does not contain the HIP runtime CMake package, expected at one of:\n"
                     "   /usr/lib/cmake/hip-lang/hip-lang-config.cmake\n"
                     "   /usr/lib64/cmake/hip-lang/hip-lang-config.cmake\n")
    assert (d.klass, d.subject, d.rule) == ("rocm-install", "/usr", "hip-lang-missing")
    assert "distribution's ROCm under the system prefix" in d.cause
    assert "ROCM_PATH" in d.fix


def test_cmake_rocm_root_on_its_own_line_is_still_read() -> None:
    d = explain_text("  The ROCm root directory:\n   /opt/rocm-7.0.0\n"
                     "  does not contain the HIP runtime CMake package, expected at:\n")
    assert (d.subject, d.rule) == ("/opt/rocm-7.0.0", "hip-lang-missing")
    assert "runtime-only part of the install" in d.cause


def test_an_always_exported_hip_call_undefined_names_the_library() -> None:
    d = explain_text("ld.lld: error: undefined symbol: hipSetDevice\n"
                     "ld.lld: error: undefined symbol: hipMalloc\n")
    assert (d.klass, d.subject, d.rule) == ("link", "libamdhip64", "undefined-reference")
    assert "no -lamdhip64" in d.cause
    assert "-lamdhip64 with -L<rocm>/lib" in d.fix


def test_a_removed_rocm_function_stays_the_symbol() -> None:
    d = explain_text("undefined reference to `rocblas_strmm_outofplace'\n")
    assert (d.klass, d.subject) == ("link", "rocblas_strmm_outofplace")
    assert "older release without it" in d.cause
    newer = explain_text("ld.lld: error: undefined symbol: hipGraphAddNode\n")
    assert newer.subject == "hipGraphAddNode"


def test_lld_missing_rocm_library_points_at_the_rocm_lib_folder() -> None:
    d = explain_text("ld.lld: error: unable to find library -lhiprand\n")
    assert (d.klass, d.subject, d.rule) == ("link", "libhiprand", "lld-no-library")
    assert "(it belongs to ROCm's hiprand)" in d.cause
    assert "-L/opt/rocm/lib" in d.fix
    other = explain_text("ld.lld: error: unable to find library -lmpi_gtl_hsa\n")
    assert other.subject == "libmpi_gtl_hsa"
    assert "-L/opt/rocm/lib" not in other.fix


def test_tensile_kernels_for_an_integrated_gpu_suggest_hiding_it() -> None:
    d = explain_text("rocBLAS error: Cannot read C:\\Program Files\\AMD\\ROCm\\6.1\\bin\\/rocblas/"
                     "library/TensileLibrary.dat: No such file or directory for GPU arch : "
                     "gfx1036\n")
    assert (d.klass, d.subject, d.rule) == ("math-library", "rocblas", "tensile-library")
    assert "gfx1036 is a CPU's integrated GPU" in d.fix
    assert "HIP_VISIBLE_DEVICES" in d.fix
    assert "TensileLibrary_lazy_gfx1036.dat" in d.fix


def test_tensile_kernels_for_a_discrete_card_say_nothing_of_an_igpu() -> None:
    d = explain_text("rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat:"
                     " Illegal seek for GPU arch : gfx1010\n")
    assert d.subject == "rocblas"
    assert "integrated" not in d.fix
    assert "`ls $ROCM_PATH/lib/rocblas/library/*gfx1010*`" in d.fix


def test_generated_ck_config_header_missing() -> None:
    d = explain_text("/src/third_party/composable_kernel/include/ck/ck.hpp:6:10: fatal error: "
                     "'ck/config.h' file not found\n")
    assert (d.klass, d.subject, d.rule) == ("composable-kernel", "composable_kernel",
                                            "missing-header")
    assert "include/ck/config.h.in" in d.cause
    assert "USE_ROCM_CK_GEMM=0" in d.fix


def test_another_missing_ck_header_keeps_the_target_reading() -> None:
    d = explain_text("fatal error: 'ck/ck.hpp' file not found\n")
    assert d.klass == "composable-kernel"
    assert "config.h.in" not in d.cause


def test_windows_dll_126_names_the_hip_sdk_bin_folder() -> None:
    d = explain_text('OSError: [WinError 126] The specified module could not be found. Error '
                     'loading "C:\\venv\\lib\\site-packages\\torch\\lib\\caffe2_nvrtc.dll" or one '
                     'of its dependencies.\n')
    assert (d.klass, d.subject) == ("import", "caffe2_nvrtc.dll")
    assert "ROCm\\<version>\\bin on PATH" in d.fix


def test_a_target_list_passed_as_one_offload_arch() -> None:
    d = explain_text("clang++-22: error: unsupported HIP gpu architecture: gfx1100;gfx90a\n")
    assert (d.klass, d.subject, d.rule) == ("gpu-target", "gfx1100", "unsupported-offload-arch")
    assert "as one offload target (gfx1100;gfx90a)" in d.cause
    assert "one --offload-arch=<gfx> per target" in d.fix
    spaced = explain_text("clang: error: unsupported HIP gpu architecture: gfx1030 gfx1100\n")
    assert "as one offload target (gfx1030 gfx1100)" in spaced.cause


def test_an_unknown_single_target_keeps_the_older_release_reading() -> None:
    d = explain_text("clang++-22: error: unsupported HIP gpu architecture: gfx9999\n")
    assert (d.subject, d.rule) == ("gfx9999", "unsupported-offload-arch")
    assert "older than the target" in d.cause


_TARGET_ID = ("clang++-22: error: invalid target ID '{}'; format is a processor name followed by "
              "an optional colon-delimited list of features followed by an enable/disable sign "
              "(e.g., 'gfx908:sramecc+:xnack-')\n")


def test_a_target_id_with_a_feature_the_processor_lacks() -> None:
    d = explain_text(_TARGET_ID.format("gfx1100:xnack+"))
    assert (d.klass, d.subject) == ("gpu-target", "gfx1100")
    assert d.cause.startswith("gfx1100:xnack+ is not a valid target ID")
    assert "use the plain processor name (gfx1100)" in d.fix


def test_an_old_clang_rejecting_a_bare_processor_is_the_release() -> None:
    d = explain_text(_TARGET_ID.format("gfx1100").replace("clang++-22", "clang-14"))
    assert d.subject == "gfx1100"
    assert "older than the target" in d.cause


def test_cf_protection_on_the_device_side() -> None:
    d = explain_text("error: option 'cf-protection=return' cannot be specified on this target\n"
                     "error: option 'cf-protection=branch' cannot be specified on this target\n"
                     "2 errors generated when compiling for gfx1100.\n")
    assert (d.klass, d.subject, d.rule) == ("host-compiler", "clang", "host-flag-on-device")
    assert "(-fcf-protection=return) reached the HIP device compile" in d.cause
    assert "-Xarch_host -fcf-protection=return" in d.fix
    assert "-fcf-protection=none" in d.fix


def test_an_option_refused_for_amdgcn_names_the_flag() -> None:
    d = explain_text("clang++-22: error: unsupported option '-fzero-call-used-regs=used-gpr' for "
                     "target 'amdgcn-amd-amdhsa'\n")
    assert (d.subject, d.rule) == ("clang", "host-flag-on-device")
    assert "take -fzero-call-used-regs out of the flags" in d.fix
    assert "cf-protection=none" not in d.fix


def test_the_same_refusal_outside_a_hip_compile_claims_nothing() -> None:
    d = explain_text("error: option 'cf-protection=return' cannot be specified on this target\n")
    assert d.klass is None
    other = explain_text("clang: error: unsupported option '-mbranch-protection=' for target "
                         "'x86_64-pc-linux-gnu'\n")
    assert other.klass is None


def test_pip_conflict_with_a_local_version_label() -> None:
    d = explain_text("ERROR: Cannot install torch==2.5.1+rocm6.2 and torchvision==0.20.1 because "
                     "these package versions have conflicting dependencies.\n")
    assert (d.klass, d.subject, d.rule) == ("python-packaging", "torch", "pip-resolver-conflict")


def test_a_device_the_log_does_not_name_is_said_once() -> None:
    d = explain_text("RuntimeError: HIP error: invalid device function\n")
    assert d.cause.startswith("the GPU's target (the log does not name it) has no code object")
    assert d.cause.count("the GPU's target") == 1
    named = explain_text("MIOpen(HIP): Error [BuildHip] 'x' \nerror: instruction not supported on "
                         "this GPU\nGPU arch : gfx1010\n")
    assert "for gfx1010 at run time" in named.cause


def test_gpu_oom_with_zero_bytes_free() -> None:
    d = explain_text("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 "
                     "has a total capacity of 15.98 GiB of which 0 bytes is free. Of the allocated "
                     "memory 14.10 GiB is allocated by PyTorch\n")
    assert (d.klass, d.subject, d.rule) == ("out-of-memory", "memory", "gpu-out-of-memory")
    assert "asked for 2.00 GiB on GPU 0, with 0 bytes free of 15.98 GiB" in d.cause
    assert "PyTorch holds 14.10 GiB" in d.cause


def test_gpu_oom_in_the_older_torch_form() -> None:
    d = explain_text("torch.cuda.OutOfMemoryError: HIP out of memory. Tried to allocate 20.00 MiB "
                     "(GPU 0; 7.98 GiB total capacity; 7.80 GiB already allocated; 0 bytes free; "
                     "7.90 GiB reserved in total by PyTorch)\n")
    assert (d.subject, d.rule) == ("memory", "gpu-out-of-memory")
    assert "asked for 20.00 MiB on GPU 0, with 0 bytes free of 7.98 GiB" in d.cause


def test_windows_commit_limit_is_memory_not_a_missing_dll() -> None:
    d = explain_text('OSError: [WinError 1455] The paging file is too small for this operation to '
                     'complete. Error loading "C:\\ai\\venv\\lib\\site-packages\\torch\\lib\\'
                     'torch_hip.dll" or one of its dependencies.\n')
    assert (d.klass, d.subject, d.rule) == ("out-of-memory", "memory", "windows-dll-load")
    assert "while loading torch_hip.dll (WinError 1455" in d.cause
    assert "page file" in d.fix
