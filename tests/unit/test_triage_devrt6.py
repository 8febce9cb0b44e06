"""Value reading of the GPU run-time families of devrt6 (issue 40): the HIP runtime's
out-of-memory and invalid-ordinal codes in both spellings (ROCm 5's name, later ROCm's text),
rocminfo's and rocm-smi's amdgpu driver check, Triton's shared-memory launch check, MIOpen's
SQLite databases and RCCL's /dev/shm segment. Each test asserts the values read; the
look-alikes (the same words in a warning, a code that proves nothing alone, a line the tool
prints and goes on from, amd-smi's differently caused line) claim nothing."""

from __future__ import annotations

from rocmforge.triage import explain_text
from tests.triagehelpers import assert_reads

_ASYNC = ("HIP kernel errors might be asynchronously reported at some other API call, so the "
          "stacktrace below might be incorrect.\n")


def test_hip_out_of_memory_is_read_in_both_spellings() -> None:
    for text in ("out of memory", "hipErrorOutOfMemory"):
        assert_reads(f"RuntimeError: HIP error: {text}\n" + _ASYNC, "out-of-memory", "memory",
                     "hip-out-of-memory", ("hipErrorOutOfMemory", "to the program",
                                           "PYTORCH_HIP_ALLOC_CONF"))


def test_rocblas_reporting_the_out_of_memory_code_names_rocblas() -> None:
    assert_reads("rocBLAS error from hip error code: 'hipErrorOutOfMemory':2\n",
                 "out-of-memory", "memory", "hip-out-of-memory", ("to rocBLAS",))


def test_torchs_allocator_report_stays_memorys_own_rule() -> None:
    d = explain_text("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. "
                     "GPU 0 has a total capacity of 23.98 GiB of which 1.20 GiB is free.\n")
    assert d.rule == "gpu-out-of-memory"


def test_another_hip_error_code_claims_nothing() -> None:
    for text in ("hipErrorIllegalAddress", "an illegal memory access was encountered",
                 "no ROCm-capable device is detected", "shared object initialization failed"):
        assert explain_text(f"RuntimeError: HIP error: {text}\n" + _ASYNC).klass is None, text


def test_invalid_ordinal_reads_the_visible_devices_setting_before_it() -> None:
    for var in ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"):
        assert_reads(f"+ export {var}=\"2\"\n$ python3 train.py\n"
                     "RuntimeError: HIP error: invalid device ordinal\n" + _ASYNC,
                     "gpu-target", var, "visible-devices-invalid-ordinal",
                     (f"this log sets {var}=2", "device 0"))


def test_invalid_ordinal_with_the_setting_far_above_names_the_family() -> None:
    filler = "".join(f"step {n}\n" for n in range(40))
    assert_reads("HIP_VISIBLE_DEVICES=0,1 torchrun --nproc-per-node 4 train.py\n" + filler
                 + "RuntimeError: HIP error: hipErrorInvalidDevice\n", "gpu-target",
                 "HIP_VISIBLE_DEVICES", "visible-devices-invalid-ordinal",
                 ("a *_VISIBLE_DEVICES (or GPU_DEVICE_ORDINAL) setting",))


def test_invalid_ordinal_without_a_visible_devices_setting_claims_nothing() -> None:
    for text in ("RuntimeError: HIP error: invalid device ordinal\n" + _ASYNC,
                 "HIP_VISIBLE_DEVICES is not set\nRuntimeError: HIP error: invalid device "
                 "ordinal\n", "export HIP_VISIBLE_DEVICES=\nRuntimeError: HIP error: "
                 "invalid device ordinal\n"):
        assert explain_text(text).klass is None, text


def test_rocminfo_without_the_amdgpu_module() -> None:
    assert_reads("\x1b[31mROCk module is NOT loaded, possibly no GPU devices\x1b[0m\n",
                 "rocm-install", "amdgpu", "amdgpu-driver-not-loaded",
                 ("rocminfo checked", "no /sys/module/amdgpu", "modprobe amdgpu"))
    assert_reads("ROCk module is NOT live, possibly no GPU devices\n", "rocm-install",
                 "amdgpu", "amdgpu-driver-not-loaded", ("does not say 'live'",))


def test_rocm_smi_without_the_amdgpu_module() -> None:
    assert_reads("ERROR:root:Driver not initialized (amdgpu not found in modules)\n",
                 "rocm-install", "amdgpu", "amdgpu-driver-not-loaded", ("rocm-smi checked",))


def test_rocminfo_that_could_not_read_the_module_list_blames_proc_not_the_driver() -> None:
    assert_reads("libkmod: ERROR ../libkmod/libkmod-module.c:1725 kmod_module_new_from_loaded: "
                 "could not open /proc/modules: No such file or directory\n"
                 "Error: could not get list of modules: No such file or directory\n"
                 "ROCk module is NOT loaded, possibly no GPU devices\n", "rocm-install",
                 "/proc/modules", "amdgpu-driver-not-loaded",
                 ("whether amdgpu is loaded on the host is not shown",))


def test_driver_lines_that_prove_nothing_claim_nothing() -> None:
    for text in (
            # amd-smi: the driver's initstate is live, its library's init failed
            "ERROR:root:Driver not loaded (amdgpu not found in modules)\n",
            "ROCk module version 6.8.5 is loaded\n",
            # a build script printing rocminfo's view and going on to its own failure
            "ROCk module is NOT loaded, possibly no GPU devices\n"
            "/src/a.cpp:3:10: fatal error: b.h: No such file or directory\n"):
        assert explain_text(text).rule != "amdgpu-driver-not-loaded", text


def test_triton_shared_memory_values_are_read() -> None:
    assert_reads("triton.runtime.errors.OutOfResources: out of resource: shared memory, "
                 "Required: 131072, Hardware limit: 65536. Reducing block sizes or "
                 "`num_stages` may help.\n", "triton", "triton", "triton-out-of-resources",
                 ("needs 131072 bytes", "offers 65536", "num_stages"))


def test_triton_values_that_fit_claim_nothing() -> None:
    d = explain_text("OutOfResources: out of resource: shared memory, Required: 1024, "
                     "Hardware limit: 65536.\n")
    assert d.klass is None


def test_miopen_sqlite_errors_each_read() -> None:
    pre = ("MIOpen Error: /r/MIOpen/src/include/miopen/kern_db.hpp:111: Internal error while "
           "accessing SQLite database: ")
    assert_reads(pre + "attempt to write a readonly database\n", "math-library", "miopen",
                 "miopen-sqlite-not-writable", ("read-only for this user",
                                                "MIOPEN_CUSTOM_CACHE_DIR"))
    assert_reads(pre + "unable to open database file\n", "math-library", "miopen",
                 "miopen-sqlite-not-writable", ("could not open or create",))
    assert_reads(pre + "database or disk is full\n", "disk-full", "disk",
                 "miopen-sqlite-not-writable", ("no space left",))


def test_miopen_locked_or_corrupt_database_claims_nothing() -> None:
    for err in ("database is locked", "database disk image is malformed"):
        d = explain_text("MIOpen(HIP): Error [Do] Internal error while accessing SQLite "
                         f"database: {err}\n")
        assert d.klass is None, err


def test_rccl_shm_segment_that_cannot_grow() -> None:
    assert_reads("node:1:2 [0] misc/shmutils.cc:72 NCCL WARN Error: failed to extend "
                 "/dev/shm/nccl-a1B2c3 to 9637892 bytes\n"
                 "node:1:2 [0] misc/shmutils.cc:113 NCCL WARN Error while creating shared "
                 "memory segment /dev/shm/nccl-a1B2c3 (size 9637888)\n", "disk-full", "disk",
                 "rccl-shm-extend-failed", ("9637892 bytes (9.2 MiB)", "--shm-size"))


def test_rccl_warnings_that_it_goes_on_from_claim_nothing() -> None:
    for text in ('node:1:2 [0] init.cc:163 NCCL WARN Missing "iommu=pt" from kernel command '
                 "line which can lead to system instablity or hang!\n",
                 "node:1:2 [0] NCCL WARN Error while attaching to shared memory segment "
                 "/dev/shm/nccl-x (size 4096)\n"):
        assert explain_text(text).klass is None, text


def test_hsa_out_of_resources_proves_nothing() -> None:
    d = explain_text("HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the "
                     "necessary resources.\n")
    assert d.klass is None


def test_a_malformed_gfx_override_before_no_gpu_is_read_and_converted() -> None:
    for value, right in (("gfx1030", "=10.3.0"), ("1100", "=11.0.0"), ("gfx90a", "=9.0.10"),
                         ("\"10.3\"", "=10.3.0")):
        assert_reads(f"export HSA_OVERRIDE_GFX_VERSION={value}\n$ python3 -c 'import torch'\n"
                     "RuntimeError: No HIP GPUs are available\n", "gpu-target",
                     "HSA_OVERRIDE_GFX_VERSION", "gfx-override-malformed",
                     (f"HSA_OVERRIDE_GFX_VERSION{right}", "major.minor.stepping"))


def test_the_thunks_own_line_reads_its_value() -> None:
    assert_reads("HSA_OVERRIDE_GFX_VERSION gfx1101 is invalid\n", "gpu-target",
                 "HSA_OVERRIDE_GFX_VERSION", "gfx-override-malformed",
                 ("'gfx1101'", "HSA_OVERRIDE_GFX_VERSION=11.0.1"))


def test_no_gpu_with_a_well_formed_or_unseen_override_claims_nothing() -> None:
    for text in ("export HSA_OVERRIDE_GFX_VERSION=10.3.0\nRuntimeError: No HIP GPUs are "
                 "available\n", "RuntimeError: No HIP GPUs are available\n",
                 "HSA_OVERRIDE_GFX_VERSION=${GFX}\nRuntimeError: No HIP GPUs are available\n",
                 "HSA_OVERRIDE_GFX_VERSION=gfx1030\nModel loaded on the GPU\n"):
        assert explain_text(text).klass is None, text


def test_rocminfo_with_the_module_but_no_kfd_node() -> None:
    assert_reads("ROCk module version 6.10.5 is loaded\n"
                 "Unable to open /dev/kfd read-write: No such file or directory\n"
                 "root is member of video group\n", "rocm-install", "/dev/kfd",
                 "kfd-device-missing", ("no kfd device node", "--device=/dev/kfd",
                                        "CONFIG_HSA_AMD"))


def test_rocminfo_kfd_open_with_another_errno_claims_nothing() -> None:
    # EINVAL proves no cause (the corpus' r12 negative); EACCES is the permission signature
    assert explain_text("Unable to open /dev/kfd read-write: Invalid argument\n").klass is None
    assert explain_text("Unable to open /dev/kfd read-write: Permission denied\n").rule == (
        "kfd-permission")


def test_triton_hip_runtime_lookup_reads_the_path_given() -> None:
    assert_reads("RuntimeError: TRITON_LIBHIP_PATH '/opt/rocm/lib/libamdhip64.so.6' does not "
                 "point to a valid libamdhip64.so\n", "triton", "triton",
                 "triton-hip-runtime-not-found", ("/opt/rocm/lib/libamdhip64.so.6",
                                                  "does not end in libamdhip64.so"))
    assert_reads("RuntimeError: TRITON_LIBHIP_PATH '/x/libamdhip64.so' does not point to a "
                 "valid libamdhip64.so\n", "triton", "triton", "triton-hip-runtime-not-found",
                 ("/x/libamdhip64.so, which does not exist",))


def test_triton_hip_runtime_not_found_anywhere() -> None:
    assert_reads("RuntimeError: cannot locate libamdhip64.so after attempted paths "
                 "['/v/lib/python3.12/site-packages/torch/lib/libamdhip64.so', "
                 "'/opt/rocm/lib/libamdhip64.so']\n", "triton", "triton",
                 "triton-hip-runtime-not-found", ("found it in none", "TRITON_LIBHIP_PATH"))


def test_the_raise_line_of_the_traceback_alone_claims_nothing() -> None:
    d = explain_text('    raise RuntimeError(f"cannot locate {lib_name} after attempted paths '
                     '{paths}")\n')
    assert d.klass is None


def test_hipblas_allocation_failure_is_memory_but_cublas_is_not_read() -> None:
    assert_reads("RuntimeError: CUDA error: HIPBLAS_STATUS_ALLOC_FAILED when calling "
                 "`hipblasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, "
                 "ldc)`\n", "out-of-memory", "memory", "hip-out-of-memory",
                 ("HIPBLAS_STATUS_ALLOC_FAILED", "device workspace"))
    # at handle creation the status reports the library's start-up failing: no claim
    assert explain_text("RuntimeError: CUDA error: HIPBLAS_STATUS_ALLOC_FAILED when calling "
                        "`hipblasCreate(handle)`\n").klass is None
    # a CUDA build's log: not this kit's runtime
    assert explain_text("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling "
                        "`cublasCreate(handle)`\n").rule != "hip-out-of-memory"
    # NOT_INITIALIZED proves no single cause (INTERNAL_ERROR and NOT_SUPPORTED at a call are
    # math_library.py's own reading)
    assert explain_text("RuntimeError: CUDA error: HIPBLAS_STATUS_NOT_INITIALIZED when calling "
                        "`hipblasCreate(handle)`\n").klass is None


def test_rocblas_memory_error_status_is_memory() -> None:
    assert_reads("RuntimeError: CUDA error: rocblas_status_memory_error when calling "
                 "`rocblas_sgemm(handle)`\n", "out-of-memory", "memory", "hip-out-of-memory",
                 ("rocblas_status_memory_error",))


def test_run_time_lines_the_corpus_keeps_unexplained_claim_nothing() -> None:
    for text in (
            "Memory access fault by GPU node-1 (Agent handle: 0x55d0) on address 0x7f00. "
            "Reason: Page not present or supervisor privilege.\nAborted (core dumped)\n",
            "UserWarning: Attempting to use hipBLASLt on an unsupported architecture! "
            "Overriding blas backend to hipblas\n",
            "/opt/amdgpu/share/libdrm/amdgpu.ids: No such file or directory\n",
            "MIOpen(HIP): Warning [SQLiteBase] Missing system database file: gfx1030_30.kdb "
            "Performance may degrade.\n",
            "RuntimeError: HIP error: hipErrorNoDevice\n",
            "rocBLAS error: Could not initialize Tensile host: No devices found\n"):
        assert explain_text(text).klass is None, text


def test_triton_out_of_resources_in_a_cuda_log_claims_nothing() -> None:
    d = explain_text("GPU: NVIDIA GeForce RTX 3090 (sm_86)\n"
                     "triton.runtime.errors.OutOfResources: out of resource: shared memory, "
                     "Required: 131072, Hardware limit: 101376.\n")
    assert d.klass is None
