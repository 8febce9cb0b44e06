"""Value reading of the shapes changed or added for r16's run-time misses (devrt8). Each test
asserts the exact class, subject, rule and words read, and the look-alikes that must claim
nothing (or another reading)."""

from __future__ import annotations

from rocmforge.triage import explain_text

# rocBLAS's last try (the generic TensileLibrary.dat) in a Windows folder, then its list of
# available files: empty there whatever the folder holds (a regex made of the backslash path).
_WIN = ("rocBLAS error: Cannot read C:\\Users\\u\\AppData\\Local\\Programs\\App\\rocm\\/rocblas/"
        "library/TensileLibrary.dat: No such file or directory for GPU arch : gfx1010\n"
        " List of available TensileLibrary Files : \n")


def test_an_empty_tensile_list_on_windows_is_no_proof_of_an_empty_folder() -> None:
    d = explain_text(_WIN)
    assert (d.klass, d.subject, d.rule) == ("math-library", "rocblas", "tensile-library")
    assert "gfx1010" in d.cause
    assert "always empty" in d.cause
    assert "C:\\Users\\u\\AppData\\Local\\Programs\\App\\rocm\\/rocblas/library" in d.fix
    assert "ROCBLAS_TENSILE_LIBPATH" in d.fix


def test_an_empty_tensile_list_of_a_posix_folder_still_reads_as_a_missing_folder() -> None:
    d = explain_text(_WIN.replace(
        "C:\\Users\\u\\AppData\\Local\\Programs\\App\\rocm\\/rocblas/library",
        "/opt/rocm/lib/rocblas/library"))
    assert (d.klass, d.subject, d.rule) == ("missing-component", "rocblas",
                                            "tensile-folder-empty")
    assert "/opt/rocm/lib/rocblas/library" in d.cause


_LT = ("rocblaslt warning: No paths matched /opt/x/build/library/../Tensile/library/*gfx906*co. "
       "Make sure that HIPBLASLT_TENSILE_LIBPATH is set correctly.\n")


def test_hipblaslt_s_warning_alone_claims_nothing() -> None:
    # torch uses rocBLAS on a target hipBLASLt lacks: the warning alone is no failure
    assert explain_text(_LT).rule == ""


def test_hipblaslt_finding_no_code_objects_for_the_target_is_its_missing_kernels() -> None:
    d = explain_text("# ./clients/staging/hipblaslt-bench -m 2048 -n 2048 -k 2048\n" + _LT)
    assert (d.klass, d.subject, d.rule) == ("math-library", "hipblaslt",
                                            "hipblaslt-no-code-objects")
    assert "gfx906" in d.cause and "/opt/x/build/library/../Tensile/library" in d.cause
    assert "TORCH_BLAS_PREFER_HIPBLASLT=0" in d.fix


def test_rocblas_finding_no_code_objects_keeps_its_own_reading() -> None:
    d = explain_text("rocBLAS warning: No paths matched /opt/rocm/lib/rocblas/library/*gfx1031*co"
                     ". Make sure that ROCBLAS_TENSILE_LIBPATH is set correctly.\n")
    assert (d.klass, d.subject, d.rule) == ("math-library", "rocblas",
                                            "tensile-no-code-objects")
    assert "HIPBLASLT" not in d.fix


def test_a_request_bigger_than_the_whole_gpu_points_at_the_vram_gtt_split() -> None:
    d = explain_text("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 16.00 GiB. "
                     "GPU 0 has a total capacity of 15.24 GiB of which 15.09 GiB is free. Of "
                     "the allocated memory 0 bytes is allocated by PyTorch\n")
    assert (d.klass, d.subject, d.rule) == ("out-of-memory", "memory", "gpu-out-of-memory")
    assert "VRAM/GTT split" in d.fix and "amdgpu.gttsize" in d.fix
    assert "16.00 GiB" in d.fix and "15.24 GiB" in d.fix


def test_a_request_within_the_gpu_keeps_the_workload_fix() -> None:
    d = explain_text("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. "
                     "GPU 0 has a total capacity of 23.98 GiB of which 1.05 GiB is free.\n")
    assert d.rule == "gpu-out-of-memory"
    assert "GTT" not in d.fix and "smaller batch" in d.fix


def test_triton_asking_the_hip_runtime_for_a_function_it_lacks_is_a_triton_mismatch() -> None:
    d = explain_text("RuntimeError: cannot get address for 'hipDrvLaunchKernelEx' from "
                     "libamdhip64.so\n")
    assert (d.klass, d.subject, d.rule) == ("triton", "triton", "triton-hip-symbol-missing")
    assert "hipDrvLaunchKernelEx" in d.cause
    assert "pytorch-triton-rocm" in d.fix and "TRITON_LIBHIP_PATH" in d.fix


def test_the_older_dlsym_wording_names_the_function_too() -> None:
    d = explain_text("RuntimeError: cannot query 'hipGetProcAddress' from libamdhip64.so\n")
    assert (d.rule, d.subject) == ("triton-hip-symbol-missing", "triton")
    assert "hipGetProcAddress" in d.cause


def test_a_node_addon_windows_cannot_load_is_an_import_failure_of_that_file() -> None:
    d = explain_text("Error: The specified module could not be found.\n"
                     "\\\\?\\C:\\Users\\u\\app\\engine-1.2\\engine_rocm.node\n")
    assert (d.klass, d.subject, d.rule) == ("import", "engine_rocm.node",
                                            "node-addon-not-found")
    assert "C:\\Users\\u\\app\\engine-1.2 there" in d.fix
    assert "dumpbin /dependents engine_rocm.node" in d.fix


def test_a_node_addon_path_after_another_error_text_claims_nothing() -> None:
    d = explain_text("Error: Access is denied.\n\\\\?\\C:\\Users\\u\\app\\engine_rocm.node\n")
    assert d.rule != "node-addon-not-found"


def test_the_rocshmem_libnuma_line_alone_claims_nothing() -> None:
    d = explain_text("E-001h rocSHMEM Could not open libnuma. Returning\t"
                     "NUMAWrapper@src/gda/numa_wrapper.cpp:48\n")
    assert (d.klass, d.rule) == (None, "")
