"""Value reading of the families devrt7 added or changed after blind round r15 (issue 40):
AITER's unknown GPU_ARCHS build target, MIOpen's caught std::sto* conversion, the amdgpu
driver's "not supported in kfd", the glibc version check naming the library that needs it,
and the loader's undefined symbol. Each test asserts the values read; the look-alikes (the
same words in another message, a line that only quotes them) claim nothing."""

from __future__ import annotations

from rocmforge.triage import explain_text
from tests.triagehelpers import assert_reads


def test_aiter_unknown_build_target_reads_the_target() -> None:
    assert_reads("RuntimeError: Unknown gfx 'gfx1201' in GPU_ARCHS — add it to\n"
                 "GFX_CU_NUM_MAP in build_targets.py. Known targets: ['gfx942',\n",
                 "gpu-target", "gfx1201", "aiter-unknown-build-target",
                 ("GFX_CU_NUM_MAP", "gfx1201 has no entry", "GPU_ARCHS"))


def test_aiter_empty_gpu_archs_claims_no_target() -> None:
    d = explain_text("RuntimeError: GPU_ARCHS=' ; ' contains no valid architecture names "
                     "after splitting on ';'. Known targets: ['gfx942']\n")
    assert d.rule != "aiter-unknown-build-target"


def test_miopen_std_conversion_reads_the_function() -> None:
    for func in ("stoul", "stoi"):
        assert_reads(f"MIOpen(HIP): Info [SetStream] stream: 0, device_id: 0\n"
                     f"MIOpen Error: {func}\n", "math-library", "miopen",
                     "miopen-std-conversion", (f"std::{func} threw", "cudnn.enabled = False"))


def test_miopen_error_with_its_own_file_and_line_is_not_the_conversion() -> None:
    d = explain_text("MIOpen Error: /src/conv.cpp:12: stoul\n")
    assert d.rule != "miopen-std-conversion"
    d = explain_text("MIOpen Error: stoul failed somewhere\n")
    assert d.rule != "miopen-std-conversion"


def test_asic_not_supported_in_kfd_reads_the_asic() -> None:
    assert_reads("[    3.548555] kfd kfd: amdgpu: PITCAIRN  not supported in kfd\n",
                 "gpu-target", "pitcairn", "asic-not-supported-in-kfd",
                 ("(PITCAIRN) is not supported in KFD", "a GPU that ROCm supports"))
    assert_reads("[    2.1] kfd kfd: amdgpu: TAHITI VF not supported in kfd\n",
                 "gpu-target", "tahiti", "asic-not-supported-in-kfd")


def test_kfd_words_without_the_drivers_line_claim_nothing() -> None:
    assert explain_text("grep 'not supported in kfd' /var/log/kern.log\n").klass is None


def test_glibc_version_names_the_library_that_needs_it() -> None:
    assert_reads("ImportError: /lib64/libm.so.6: version `GLIBC_2.29' not found (required by "
                 "/opt/x/triton/lib/rocm/libhsa-runtime64.so.1)\n", "import",
                 "libhsa-runtime64.so.1", "glibc-version",
                 ("built against glibc with GLIBC_2.29", "a build of libhsa-runtime64.so.1"))


def test_glibc_version_without_the_needer_keeps_the_version() -> None:
    assert_reads("ImportError: /lib64/libc.so.6: version `GLIBC_2.34' not found\n",
                 "import", "GLIBC_2.34", "glibc-version")


def test_glibc_at_link_time_is_not_the_loaders() -> None:
    d = explain_text("/usr/bin/ld: version `GLIBC_2.34' not found (required by /x/liba.so)\n")
    assert d.rule != "glibc-version"


def test_undefined_symbol_says_so_in_its_cause() -> None:
    # A C name: a mangled one is demangled through a process this unit test may not start.
    found = explain_text("ImportError: /usr/lib/python3/dist-packages/_ext.cpython-310-x86_64-"
                         "linux-gnu.so: undefined symbol: ext_plugin_register\n", step="verify")
    assert (found.klass, found.subject, found.rule) == ("import", "ext_plugin_register",
                                                        "undefined-symbol")
    assert found.cause.startswith("undefined symbol: /usr/lib/python3/dist-packages/_ext.")


def test_ollamas_older_key_form_reads_the_target_and_the_list() -> None:
    assert_reads('time=x level=WARN source=amd_windows.go:97 msg="amdgpu is not supported" '
                 'gpu=0 gpu_type=gfx1031 library=C:\\O\\rocm supported_types=[gfx1103]\n',
                 "gpu-target", "gfx1031", "ollama-gpu-not-supported",
                 ("(gfx1103)", "does not honour HSA_OVERRIDE_GFX_VERSION"))


def test_ollamas_older_form_with_the_target_listed_claims_nothing() -> None:
    d = explain_text('level=WARN source=amd_linux.go:1 msg="amdgpu is not supported" gpu=0 '
                     'gpu_type=gfx1030 library=/x supported_types=[gfx1030]\n')
    assert d.klass is None
