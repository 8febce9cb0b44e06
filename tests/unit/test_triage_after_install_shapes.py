"""Value reading of the after-install shapes added for dev pool d2: the version a pin names,
uv's range operators, hipBLASLt's target and its guards, the allocator's numbers, the module
vLLM's probe lacks, amdsmi's library, the library `rocm-sdk test` could not load, and the ROCm
root whose own header is missing. Each asserts the exact values read and the look-alikes
declined."""

from __future__ import annotations

from rocmforge.triage import explain_text


def test_a_pinned_version_pip_cannot_find_is_named_in_cause_and_fix() -> None:
    log = ("ERROR: Could not find a version that satisfies the requirement "
           "rocm-sdk-core==7.13.0a20260422 (from rocm)\n"
           "ERROR: No matching distribution found for rocm-sdk-core==7.13.0a20260422\n")
    d = explain_text(log)
    assert (d.klass, d.subject, d.rule) == ("python-packaging", "rocm-sdk-core", "no-distribution")
    assert "rocm-sdk-core 7.13.0a20260422" in d.cause
    assert "instead of 7.13.0a20260422" in d.fix


def test_an_unpinned_requirement_keeps_the_python_version_advice() -> None:
    d = explain_text("ERROR: No matching distribution found for torch\n")
    assert d.subject == "torch"
    assert "python --version" in d.fix
    assert "instead of" not in d.fix


def test_uv_platform_tag_message_is_read_for_a_range_as_for_a_pin() -> None:
    ranged = explain_text(
        "      And because torch>=2.13.0a0+rocm7.13.0a20260514 has no wheels with a matching "
        "platform tag (e.g., `manylinux_2_39_x86_64`) and you require torch, we can conclude "
        "that your requirements are unsatisfiable.\n")
    assert (ranged.klass, ranged.subject) == ("python-packaging", "torch")
    assert "the torch releases >=2.13.0a0+rocm7.13.0a20260514" in ranged.cause
    pinned = explain_text("error: mlx==0.29.0 has no wheels with a matching platform tag "
                          "(macosx_26_0_x86_64)\n")
    assert pinned.subject == "mlx"
    assert "the index has mlx 0.29.0," in pinned.cause


_HIPBLASLT = ('rocblaslt error: Cannot read "C:\\\\ROCm\\\\6.2\\\\bin\\\\hipblaslt\\\\library\\\\'
              'TensileLibrary_lazy_gfx1030.dat": No error\n')
_STATUS = ("RuntimeError: CUDA error: HIPBLAS_STATUS_INVALID_VALUE when calling "
           "`hipblasLtMatmulAlgoGetHeuristic( ltHandle, ...)`\n")


def test_hipblaslt_missing_target_file_names_the_target_read_from_the_file_name() -> None:
    d = explain_text(_HIPBLASLT + _STATUS)
    assert (d.klass, d.subject, d.rule) == ("math-library", "hipblaslt", "hipblaslt-lazy-library")
    assert "target gfx1030" in d.cause
    assert "TORCH_BLAS_PREFER_HIPBLASLT=0" in d.fix


def test_hipblaslt_lines_claim_nothing_without_a_status_error_or_with_the_fallback() -> None:
    assert explain_text(_HIPBLASLT).klass is None
    fallback = "rocBLAS warning: hipBlasLT failed, falling back to tensile. \n"
    assert explain_text(_HIPBLASLT + _STATUS + fallback).klass is None


def test_hipblaslt_bare_file_name_is_no_proof_of_missing_kernels() -> None:
    bare = ('rocblaslt error: Cannot read "TensileLibrary_lazy_gfx1101.dat": No error\n'
            'rocblaslt error: Could not load "TensileLibrary_lazy_gfx1101.dat"\n')
    assert explain_text(bare + _STATUS).klass is None
    journal = ("Sep 13 23:11:36 host server[4914]: ERROR:    rocblaslt error: Cannot read "
               '"TensileLibrary_lazy_gfx1151.dat": No such file or directory\n')
    assert explain_text(journal).klass is None


_OOM = ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate {size}. GPU 0 has a total "
        "capacity of {total} of which {free} is free. Of the allocated memory 57.70 GiB is "
        "allocated by PyTorch, and 75.82 MiB is reserved by PyTorch but unallocated. If reserved "
        "but unallocated memory is large try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:"
        "True to avoid fragmentation.\n")


def test_gpu_oom_reads_the_allocators_numbers_and_its_own_setting() -> None:
    d = explain_text(_OOM.format(size="3.31 GiB", total="128.00 GiB", free="780.24 MiB"))
    assert (d.klass, d.subject, d.rule) == ("out-of-memory", "memory", "gpu-out-of-memory")
    assert "asked for 3.31 GiB on GPU 0, with 780.24 MiB free of 128.00 GiB" in d.cause
    assert "PyTorch holds 57.70 GiB" in d.cause
    assert "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True" in d.fix


def test_gpu_oom_larger_than_the_whole_gpu_says_so() -> None:
    d = explain_text(_OOM.format(size="16.00 GiB", total="15.24 GiB", free="15.09 GiB"))
    assert "more than the 15.24 GiB the HIP runtime reports for the whole GPU" in d.cause


def test_gpu_oom_under_a_memory_fraction_is_left_to_the_fraction_rule() -> None:
    line = ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 MiB. GPU 0 has a "
            "total capacity of 287.98 GiB of which 275.86 GiB is free. 1.05 GiB allowed; Of the "
            "allocated memory 1017.01 MiB is allocated by PyTorch\n")
    assert explain_text(line).rule == "gpu-memory-fraction"


def test_vllm_rocm_probe_names_the_missing_module_and_ignores_other_platforms() -> None:
    probe = ("DEBUG 09-10 18:43:10 [__init__.py:52] TPU platform is not available because: No "
             "module named 'libtpu'\n")
    assert explain_text(probe).klass is None
    d = explain_text(probe + "DEBUG 09-10 18:43:10 [__init__.py:120] ROCm platform is not "
                     "available because: No module named 'amdsmi'\n")
    assert (d.klass, d.subject, d.rule) == ("python-packaging", "amdsmi",
                                            "vllm-rocm-probe-import")
    no_gpu = "DEBUG ROCm platform is not available because: no GPU is found\n"
    assert explain_text(no_gpu).klass is None


def test_amdsmi_lookup_names_the_library_file_in_both_spellings() -> None:
    new = explain_text("/w/libamd_smi.so: cannot open shared object file: No such file or "
                       "directory\nUnable to find libamd_smi.so library try installing "
                       "amd-smi-lib from your package manager\n")
    assert (new.klass, new.subject, new.rule) == ("import", "libamd_smi.so", "amdsmi-library")
    old = explain_text("Unable to find amdsmi library try installing amd-smi-lib from your "
                       "package manager\n")
    assert old.subject == "libamd_smi.so"


def test_rocm_sdk_test_library_load_reads_library_and_wheel() -> None:
    line = ("ERROR: testSharedLibrariesLoad (rocm_sdk.tests.libraries_test.ROCmLibrariesTest."
            "testSharedLibrariesLoad) [Check shared library loads] (so_path=WindowsPath('D:/v/"
            "Lib/site-packages/_rocm_sdk_libraries_gfx1151/bin/MIOpen.dll'))\n")
    d = explain_text(line)
    assert (d.klass, d.subject, d.rule) == ("import", "MIOpen.dll",
                                            "rocm-sdk-test-library-load")
    assert "MIOpen.dll of _rocm_sdk_libraries_gfx1151" in d.cause
    # On Linux RPATH finds the sibling wheels: the line alone proves no cause there (the
    # traceback's OSError names it; ROCm/TheRock#1418 showed only this line)
    assert explain_text(line.replace("WindowsPath('D:/v/Lib", "PosixPath('/v/lib")).klass is None


def test_a_rocm_headers_own_include_missing_names_that_rocm_root() -> None:
    own = explain_text("/opt/rocm-5.6.0/include/hip/hip_bf16.h:30:10: fatal error: "
                       "'hip/amd_detail/amd_hip_bf16.h' file not found\n")
    assert (own.klass, own.subject) == ("rocm-install", "/opt/rocm-5.6.0")
    assert "hip/hip_bf16.h" in own.cause
    project = explain_text("csrc/ops.hip:3:10: fatal error: 'hip/hip_runtime.h' file not found\n")
    assert (project.klass, project.subject) == ("rocm-install", "ROCM_HOME")


def test_pip_404_on_an_index_link_names_the_project_of_the_index_page() -> None:
    d = explain_text("  ERROR: HTTP error 404 while getting https://idx.example/v2/g/rocm/v2/g/"
                     "rocm-7.10.0.tar.gz (from https://idx.example/v2/g/rocm/)\n")
    assert (d.klass, d.subject, d.rule) == ("python-packaging", "rocm", "pip-http-404")
    assert "links rocm-7.10.0.tar.gz" in d.cause
    assert "index" in d.fix
