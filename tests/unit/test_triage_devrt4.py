"""Value reading of the shapes added for r12's misses (devrt4): the backend's refusal of a
generic target below code object v6, rocBLAS' report of a HIP error inside it, a Tensile
library folder that does not exist, MIOpen's no-solver message only with its workspace
warning, and torch's bare 'no kernel image' wording, which proves no missing target. Each
asserts the exact values read and the look-alikes declined."""

from __future__ import annotations

from rocmforge.triage import explain_text

_COV6 = ("fatal error: error in backend: gfx11-generic is only available on code object "
         "version 6 or better\n")


def test_a_generic_target_below_code_object_v6_is_a_target_choice_not_a_crash() -> None:
    d = explain_text(_COV6)
    assert (d.klass, d.subject, d.rule) == ("gpu-target", "gfx11-generic",
                                            "generic-target-code-object")
    assert "code object version 6 or later" in d.cause
    assert "-mcode-object-version=6" in d.fix
    # the members come from config/arches.toml's generic row
    assert "gfx1100" in d.fix and "gfx1103" in d.fix


def test_another_backend_error_stays_a_compiler_crash() -> None:
    d = explain_text("fatal error: error in backend: Cannot select: intrinsic %llvm.amdgcn.x\n")
    assert d.klass == "compiler-crash"


def test_rocblas_invalid_device_function_is_rocblas_not_the_application() -> None:
    d = explain_text("rocBLAS error from hip error code: 'hipErrorInvalidDeviceFunction':98\n"
                     "[ERROR] ggml_extend.hpp:72 - ROCm error: CUBLAS_STATUS_INTERNAL_ERROR\n")
    assert (d.klass, d.subject, d.rule) == ("math-library", "rocBLAS", "rocblas-hip-error")
    assert "failed with hipErrorInvalidDeviceFunction" in d.cause


def test_rocblas_out_of_memory_is_not_read_as_a_missing_kernel() -> None:
    d = explain_text("rocBLAS error from hip error code: 'hipErrorOutOfMemory':2\n")
    assert d.rule != "rocblas-hip-error"
    assert d.klass != "math-library"


_SDK = ('"rocBLAS error: Cannot read C:\\v\\Lib\\site-packages\\_rocm_sdk_devel\\bin\\rocblas'
        '\\library/TensileLibrary.dat: No such file or directory for GPU arch : gfx1200\n'
        " List of available TensileLibrary Files :\n\n"
        "rocBLAS error: Could not initialize Tensile host:\n"
        'directory_iterator::directory_iterator: Das System kann den angegebenen Pfad nicht '
        'finden.: "C:\\v\\Lib\\site-packages\\_rocm_sdk_devel\\bin\\rocblas\\library"\n')


def test_a_missing_tensile_folder_of_the_pip_sdk_names_the_package() -> None:
    d = explain_text(_SDK)
    assert (d.klass, d.subject, d.rule) == ("rocm-install", "_rocm_sdk_devel",
                                            "tensile-folder-missing")
    assert "_rocm_sdk_libraries_<family>" in d.cause
    assert "ROCBLAS_TENSILE_LIBPATH" in d.fix


def test_libstdcxx_text_of_the_same_missing_folder() -> None:
    # the text captured here from g++-12's std::filesystem (directory_iterator, missing folder)
    d = explain_text("rocBLAS error: Could not initialize Tensile host:\n"
                     "filesystem error: directory iterator cannot open directory: No such file "
                     "or directory [/opt/rocm-7.0.0/lib/rocblas/library]\n")
    assert (d.klass, d.subject, d.rule) == ("rocm-install", "/opt/rocm-7.0.0/lib/rocblas/library",
                                            "tensile-folder-missing")


def test_a_directory_walk_outside_rocblas_claims_nothing() -> None:
    d = explain_text("filesystem error: directory iterator cannot open directory: No such file "
                     "or directory [/home/u/models]\n")
    assert d.rule != "tensile-folder-missing"


def test_miopen_no_solver_alone_proves_nothing() -> None:
    d = explain_text("MIOpen Error: D:/r/MIOpen/src/ocl/convolutionocl.cpp:275: No suitable "
                     "algorithm was found to execute the required convolution\n"
                     "!!! Exception during processing !!! miopenStatusUnknownError\n")
    assert d.klass is None


def test_miopen_no_solver_after_a_starved_solver_names_it() -> None:
    d = explain_text("MIOpen(HIP): Warning [IsEnoughWorkspace] [EvaluateInvokers] Solver "
                     "<GemmFwdRest>, workspace required: 296353792, provided ptr: 0 size: 0\n"
                     "MIOpen Error: D:/r/MIOpen/src/ocl/convolutionocl.cpp:275: No suitable "
                     "algorithm was found to execute the required convolution\n")
    assert (d.klass, d.subject, d.rule) == ("math-library", "miopen", "miopen-no-solver")
    assert "(GemmFwdRest) needs a 296353792-byte workspace" in d.cause


def test_torch_no_kernel_image_and_its_hint_prove_no_missing_target() -> None:
    d = explain_text("torch.AcceleratorError: HIP error: no kernel image is available for "
                     "execution on the device\nSearch for `hipErrorNoBinaryForGpu' in "
                     "https://docs.nvidia.com/cuda/cuda-runtime-api/group__HIPRT__TYPES.html "
                     "for more information.\n")
    assert d.klass is None


def test_the_runtime_own_no_binary_line_is_still_read() -> None:
    d = explain_text('"hipErrorNoBinaryForGpu: Unable to find code object for all current '
                     'devices!"\n')
    assert (d.klass, d.rule) == ("gpu-target", "no-binary-for-gpu")


def test_a_bare_unknown_target_id_says_invalid_target_id() -> None:
    d = explain_text("clang-16: error: invalid target ID 'gfx941'; format is a processor name "
                     "followed by an optional colon-delimited list of features followed by an "
                     "enable/disable sign (e.g., 'gfx908:sramecc+:xnack-')\n")
    assert (d.klass, d.subject, d.rule) == ("gpu-target", "gfx941", "unsupported-offload-arch")
    assert "does not know the offload target gfx941 (invalid target ID)" in d.cause


def test_rocwmma_built_for_a_target_it_lacks_is_rocwmma() -> None:
    d = explain_text("[rocWMMA] /src/rocm-libraries/projects/rocwmma/library/include/rocwmma/"
                     "internal/config.hpp:79:15: error: static assertion failed: Unsupported "
                     "architecture\n[rocWMMA] 1 error generated when compiling for gfx906.\n")
    assert (d.klass, d.subject, d.rule) == ("math-library", "rocwmma", "rocwmma-unsupported-arch")
    assert "rocWMMA does not support gfx906" in d.cause


def test_an_installed_rocwmma_header_names_the_application_target() -> None:
    d = explain_text("build path still fails on `gfx1151` with rocWMMA static assertion:\n"
                     "/usr/include/rocwmma/internal/config.hpp:76:15: error: static assertion "
                     "failed: Unsupported architecture\n")
    assert (d.klass, d.subject, d.rule) == ("gpu-target", "gfx1151", "rocwmma-unsupported-arch")
    assert "installed rocWMMA (/usr/include/rocwmma) does not support gfx1151" in d.cause
    assert "GGML_HIP_ROCWMMA_FATTN=OFF" in d.fix


def test_another_static_assertion_is_not_rocwmma() -> None:
    d = explain_text("/src/ck/include/ck/config.hpp:76:15: error: static assertion failed: "
                     "Unsupported architecture\n")
    assert d.rule != "rocwmma-unsupported-arch"


_ASM = ("<inline asm>:14:20: error: not a valid operand.\n"
        "v_add_f32 v4 v4 v4 row_bcast:15 row_mask:0xa\n")


def test_inline_asm_after_miopen_logging_is_miopen_for_the_named_device() -> None:
    d = explain_text("MIOpen(HIP): Info [get_device_name] Raw device name: gfx1031\n"
                     "MIOpen(HIP): Info [PrintVersionImpl] COMgr v.2.4.0, USE_HIP_PCH: 1\n"
                     + _ASM)
    assert (d.klass, d.subject, d.rule) == ("math-library", "miopen", "miopen-inline-asm")
    assert "kernels for gfx1031 at run time" in d.cause
    assert "(not a valid operand)" in d.cause


def test_inline_asm_without_miopen_lines_is_not_miopen() -> None:
    assert explain_text(_ASM).rule != "miopen-inline-asm"


def test_miopen_sqlite_missing_column_names_the_column() -> None:
    d = explain_text("MIOpen Error: localhost:/build/source/src/sqlite_db.cpp:302: SQLite "
                     "prepare error: Internal error while accessing SQLite database: no such "
                     "column: mode\n")
    assert (d.klass, d.subject, d.rule) == ("math-library", "MIOpen", "miopen-sqlite-column")
    assert "no column 'mode'" in d.cause
    assert "-DMIOPEN_USE_SQLITE_PERFDB=OFF" in d.fix


def test_another_sqlite_missing_column_is_not_miopen() -> None:
    d = explain_text("sqlite3.OperationalError: no such column: mode\n")
    assert d.rule != "miopen-sqlite-column"


def test_lemonade_refusing_a_gpu_family_names_the_target_and_backend() -> None:
    d = explain_text("Error: Cannot install llamacpp:rocm on this system: Unsupported GPU: "
                     "gfx950\n")
    assert (d.klass, d.subject, d.rule) == ("gpu-target", "gfx950", "lemonade-gpu-unsupported")
    assert "refused the backend llamacpp:rocm" in d.cause


def test_lemonade_refusing_an_nvidia_gpu_is_not_an_amd_target() -> None:
    d = explain_text("Error: Cannot install llamacpp:cuda on this system: Unsupported GPU: "
                     "sm_61 (compute capability 6.1)\n")
    assert d.rule != "lemonade-gpu-unsupported"
