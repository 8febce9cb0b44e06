"""Run-time families read by shape (issue 40, the d3 pool): the values each rule reads out of a
line (the library the loader names, the DLL and LoadLibrary's code, the architecture Tensile was
given, the package that imports a removed Triton module), and the look-alikes each must leave
alone. Lines are as the programs print them (sources in the rules and tests/failures/rounds/d3)."""

from __future__ import annotations

from rocmforge.triage import explain_text

# A C name: the mangled one (demangled through libstdc++, a process this unit test may not
# start) is the corpus' (rounds/r7 arch4edu203, rounds/d3 d3-real-rocsolver-needs-newer-rocblas).
ROCSOLVER = "OSError: /opt/rocm/lib/librocsolver.so.0: undefined symbol: rocblas_get_stream"


def test_a_rocm_library_needing_another_components_symbol_names_the_library() -> None:
    found = explain_text(ROCSOLVER, step="verify")
    assert (found.klass, found.subject, found.rule) == ("import", "librocsolver.so.0",
                                                        "undefined-symbol")
    assert "rocblas_get_stream from ROCm's rocblas (librocblas)" in found.cause
    assert "`ldd -r /opt/rocm/lib/librocsolver.so.0`" in found.fix


def test_a_rocm_library_needing_its_own_components_symbol_keeps_the_symbol() -> None:
    # librocblas needing a rocblas_ symbol is not two components out of step: the old reading
    found = explain_text("OSError: /opt/rocm/lib/librocblas.so.4: undefined symbol: "
                         "rocblas_sgemm_kernel_name", step="verify")
    assert found.subject == "rocblas_sgemm_kernel_name"


def test_an_extension_needing_a_rocm_symbol_keeps_the_symbol() -> None:
    # not a ROCm library: the extension was not linked against the component
    found = explain_text("ImportError: /v/site-packages/exllamav2_ext.so: undefined symbol: "
                         "hipblasHgemm", step="verify")
    assert (found.klass, found.subject) == ("import", "hipblasHgemm")


def test_llvms_windows_cannot_open_is_read_by_its_code() -> None:
    found = explain_text("Failed to load amdhip64.dll: amdhip64.dll: Can't open: The specified "
                         "module could not be found.  (0x7E)", step="verify")
    assert (found.klass, found.subject, found.rule) == ("import", "amdhip64.dll",
                                                        "windows-dll-cannot-open")
    assert "WinError 126" in found.cause
    # 0x7F is 127 whatever language the text is in
    other = explain_text("hiprtc0602.dll: Can't open: La procédure spécifiée est introuvable. "
                         "(0x7F)", step="verify")
    assert (other.subject, other.rule) == ("hiprtc0602.dll", "windows-dll-cannot-open")
    assert "WinError 127" in other.cause


def test_llvms_windows_cannot_open_with_another_code_claims_nothing() -> None:
    # 0x5 access denied: not one of the loader codes the rule knows
    assert explain_text("amdhip64.dll: Can't open: Access is denied. (0x5)").klass is None


TENSILE = """\
# Architecture      from TensileCreateLibrary: gfx1012
# LibraryLogicFiles:
Traceback (most recent call last):
  File "/b/hipblaslt/venv/sp/Tensile/bin/TensileCreateLibrary", line 43, in <module>
    TensileCreateLibrary()
  File "/b/hipblaslt/venv/sp/Tensile/TensileCreateLibrary.py", line 1471, in TensileCreateLibrary
    theMasterLibrary = list(masterLibraries.values())[0]
"""


def test_tensile_with_no_master_library_names_the_library_and_the_target() -> None:
    found = explain_text(TENSILE, step="build")
    assert (found.klass, found.subject, found.rule) == ("math-library", "hipblaslt",
                                                        "tensile-no-master-library")
    assert "gfx1012" in found.cause and "drop gfx1012" in found.fix


def test_tensile_of_rocblas_names_rocblas() -> None:
    found = explain_text(TENSILE.replace("hipblaslt", "rocBLAS"), step="build")
    assert found.subject == "rocblas"


def test_tensile_whose_library_the_log_does_not_name_claims_nothing() -> None:
    assert explain_text(TENSILE.replace("/b/hipblaslt/venv", "/b/venv"), step="build").klass \
        is None


def test_the_master_library_line_outside_a_tensile_frame_claims_nothing() -> None:
    assert explain_text("theMasterLibrary = list(masterLibraries.values())[0]").klass is None


FAKE = """\
Traceback (most recent call last):
  File "/v/site-packages/torchvision/_meta_registrations.py", line 163, in <module>
    @torch.library.register_fake("torchvision::roi_align")
     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/v/site-packages/torch/library.py", line 1062, in register
    use_lib._register_fake(
"""


def test_torchvisions_fake_registration_failing_in_torch_library_is_a_mismatch() -> None:
    found = explain_text(FAKE, step="verify")
    assert (found.klass, found.subject, found.rule) == ("python-packaging", "torchvision",
                                                        "torchvision-fake-registration")
    assert "torchvision::roi_align fails to register" in found.cause


def test_register_fake_that_never_reached_torch_library_claims_nothing() -> None:
    # an older torch without register_fake fails on the decorator itself (AttributeError), with
    # no frame in torch/library.py: not this rule's proof
    log = FAKE.split("  File \"/v/site-packages/torch/")[0] + (
        "AttributeError: module 'torch.library' has no attribute 'register_fake'\n")
    assert explain_text(log, step="verify").rule != "torchvision-fake-registration"


OPS = """\
Traceback (most recent call last):
  File "/v/site-packages/bitsandbytes/triton/int8_matmul_mixed_dequantize.py", line 12, in <module>
    from triton.ops.matmul_perf_model import early_config_prune, estimate_matmul_time
"""


def test_a_frame_importing_triton_ops_names_the_importing_package() -> None:
    found = explain_text(OPS, step="verify")
    assert (found.klass, found.subject, found.rule) == ("triton", "triton",
                                                        "triton-ops-import-frame")
    assert "bitsandbytes imports triton.ops" in found.cause
    assert "upgrade bitsandbytes" in found.fix


def test_a_triton_ops_frame_followed_by_tritons_own_frames_claims_nothing() -> None:
    # a later frame inside triton (its ops/, its __init__) shows the import reached Triton's
    # own code: the failure is there, not a missing module
    log = OPS + ("  File \"/v/site-packages/triton/ops/matmul_perf_model.py\", line 5, in "
                 "<module>\n    import torch\n")
    assert explain_text(log, step="verify").klass is None


def test_triton_ops_in_code_that_is_not_a_traceback_claims_nothing() -> None:
    assert explain_text("from triton.ops.matmul_perf_model import early_config_prune").klass \
        is None


def test_a_rocm_symbol_version_missing_names_the_library_and_the_release() -> None:
    found = explain_text("OSError: /opt/rocm/lib/libamdhip64.so.6: version `hip_6.2' not found "
                         "(required by /v/site-packages/torch/lib/libtorch_hip.so)",
                         step="verify")
    assert (found.klass, found.subject, found.rule) == ("import", "libamdhip64.so.6",
                                                        "rocm-symbol-version")
    assert "libtorch_hip.so was built against HIP 6.2 or newer (ROCm 6.2+)" in found.cause
    assert "`ldd /v/site-packages/torch/lib/libtorch_hip.so`" in found.fix


def test_a_rocr_symbol_version_names_the_hsa_runtime() -> None:
    found = explain_text("/opt/rocm/lib/libhsa-runtime64.so.1: version `ROCR_1' not found "
                         "(required by /opt/rocm/lib/libamdhip64.so.6)")
    assert (found.subject, found.rule) == ("libhsa-runtime64.so.1", "rocm-symbol-version")
    assert "symbol version ROCR_1" in found.cause


def test_a_libstdcxx_version_is_not_a_rocm_symbol_version() -> None:
    found = explain_text("ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version "
                         "`GLIBCXX_3.4.32' not found (required by /v/torch/lib/libtorch_python.so)")
    assert (found.subject, found.rule) == ("GLIBCXX_3.4.32", "glibcxx-version")


def test_a_triton_ops_frame_that_fails_inside_tritons_init_claims_nothing() -> None:
    log = OPS + ("  File \"/v/site-packages/triton/__init__.py\", line 8, in <module>\n"
                 "    from .runtime import Config\n")
    assert explain_text(log, step="verify").rule != "triton-ops-import-frame"



def test_llvms_cannot_open_without_its_code_is_read_by_its_english_text() -> None:
    found = explain_text("Failed to load amdhip64.dll: Can't open: The specified module could "
                         "not be found")
    assert (found.subject, found.rule) == ("amdhip64.dll", "windows-dll-cannot-open")
    assert "WinError 126" in found.cause


def test_ctypes_module_not_found_names_the_dll_of_a_full_path() -> None:
    found = explain_text("FileNotFoundError: Could not find module 'C:\\v\\Lib\\site-packages\\"
                         "_rocm_sdk_core\\bin\\amdhip64_7.dll' (or one of its dependencies). Try "
                         "using the full path with constructor syntax.", step="verify")
    assert (found.klass, found.subject, found.rule) == ("import", "amdhip64_7.dll",
                                                        "ctypes-dll-not-found")
    assert "WinError 126" in found.cause


def test_ctypes_module_not_found_without_a_dll_name_claims_nothing() -> None:
    # PyOpenGL's lookup of 'EGL' by its bare name: which file was meant is not in the line
    assert explain_text("ImportError: ('Unable to load EGL library', \"Could not find module "
                        "'EGL' (or one of its dependencies). Try using the full path with "
                        "constructor syntax.\", 'EGL', None)").klass is None
