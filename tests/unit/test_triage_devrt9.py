"""Value reading of the shapes added for r17's run-time misses (devrt9). Each test asserts
the exact class, subject, rule and words read, and the look-alikes that must claim nothing
(or another reading)."""

from __future__ import annotations

from rocmforge.triage import explain_text

# Triton's OutOfResources text is one line (errors.py); a pasted log wraps it.
_OOR = ("triton.runtime.errors.OutOfResources: out of resource: shared memory,\n"
        "Required: 165888, Hardware limit: 163840.\n"
        "Reducing block sizes or `num_stages` may help.\n")


def test_triton_out_of_resources_wrapped_after_shared_memory_is_read() -> None:
    d = explain_text(_OOR)
    assert (d.klass, d.subject, d.rule) == ("triton", "triton", "triton-out-of-resources")
    assert "165888" in d.cause and "163840" in d.cause
    assert "Triton kernel" in d.fix


def test_triton_out_of_resources_on_one_line_keeps_its_reading() -> None:
    d = explain_text(_OOR.replace(",\nRequired", ", Required"))
    assert (d.rule, d.subject) == ("triton-out-of-resources", "triton")
    assert "165888" in d.cause


def test_a_required_and_limit_line_without_triton_s_head_claims_nothing() -> None:
    assert explain_text("error: build failed\nRequired: 165888, Hardware limit: 163840.\n"
                        ).rule != "triton-out-of-resources"


_HEAD = ("    result = torch.nn.functional.scaled_dot_product_attention(q, k, v)\n"
         "RuntimeError: FlashAttention forward only supports head dimension at most 256\n")


def test_flash_attention_head_dim_in_a_log_naming_aotriton_is_aotriton() -> None:
    d = explain_text(_HEAD + "> readelf -p .comment torch/lib/libaotriton_v2.so\n"
                     "[    2f]  AOTriton 0.9.2\n")
    assert (d.klass, d.subject, d.rule) == ("aotriton", "aotriton", "aotriton-head-dim-limit")
    assert "head dimension above 256" in d.cause and "forward" in d.cause
    assert "SDPBackend.MATH" in d.fix


def test_flash_attention_head_dim_without_aotriton_claims_nothing() -> None:
    # the flash_attn package prints the same words on NVIDIA and with its CK backend
    assert explain_text(_HEAD).rule == ""
    assert explain_text(_HEAD.replace("RuntimeError: FlashAttention", "RuntimeError: CK")
                        + "AOTriton 0.9.2\n").rule == ""


def test_flash_attn_package_frames_are_not_aotriton() -> None:
    log = ("  File \"/venv/lib/python3.12/site-packages/flash_attn/flash_attn_interface.py\"\n"
           + _HEAD + "AOTriton 0.9.2\n")
    assert explain_text(log).rule == ""


_TRACER = "**roctracer: Loading 'libkfdwrapper64.so' failed, (null)**\nAborted (core dumped)\n"


def test_roctracer_failing_to_load_a_library_names_it_and_the_loader_path() -> None:
    d = explain_text(_TRACER)
    assert (d.klass, d.subject, d.rule) == ("import", "libkfdwrapper64.so",
                                            "roctracer-load-failed")
    assert "LD_LIBRARY_PATH" in d.fix and "/opt/rocm/roctracer/lib" in d.fix


def test_roctracer_with_an_undefined_symbol_is_not_a_search_path_problem() -> None:
    log = ("roctracer: Loading 'libamdhip64.so' failed, /opt/rocm/lib/libamdhip64.so: "
           "undefined symbol: hsa_foo\n")
    assert explain_text(log).rule != "roctracer-load-failed"


_SYMBOL = (":0:/src/clr/hipamd/src/hip_global.cpp:114 : 113508223548 us: [pid:7768  "
           "tid:0x7f19583a7040] Cannot find Symbol with name: Cijk_Alik_Bljk_SB_MT32x32x16_"
           "SE_APM1_GSU1_ISA{isa}_IU1_K1\n")


def test_a_missing_tensile_kernel_symbol_reads_the_target_from_its_isa() -> None:
    d = explain_text(_SYMBOL.format(isa="906"))
    assert (d.klass, d.subject, d.rule) == ("math-library", "rocblas",
                                            "tensile-kernel-symbol-missing")
    assert "gfx906" in d.cause
    assert "gfx90a" in explain_text(_SYMBOL.format(isa="90a")).cause
    assert "gfx1100" in explain_text(_SYMBOL.format(isa="1100")).cause


def test_a_missing_symbol_of_a_user_kernel_is_not_tensile() -> None:
    log = _SYMBOL.format(isa="906").replace("Cijk_Alik_Bljk_SB", "_Z10my_kernelPf")
    assert explain_text(log).rule != "tensile-kernel-symbol-missing"


_GGML = ("ggml_rocm_init: found 1 ROCm devices (Total VRAM: 32624 MiB):\n"
         "  Device 0: AMD Radeon Graphics, gfx1201 (0x1201), VMM: no, Wave Size: 32, "
         "VRAM: 32624 MiB\n"
         "Built for {built}:\n"
         "  build-rdna4/bin/llama-cli\n"
         "Loading model... Segmentation fault (core dumped)\n")


def test_a_ggml_device_outside_the_build_s_targets_is_the_device_s_target() -> None:
    d = explain_text(_GGML.format(built="gfx1200"))
    assert (d.klass, d.subject, d.rule) == ("gpu-target", "gfx1201", "device-target-not-built")
    assert "gfx1200 only" in d.cause
    assert "-DAMDGPU_TARGETS=gfx1201" in d.fix


def test_a_device_the_build_covers_claims_nothing() -> None:
    assert explain_text(_GGML.format(built="gfx1200;gfx1201")).rule == ""
    assert explain_text(_GGML.format(built="gfx12-generic")).rule == ""


def test_a_segfault_with_no_build_targets_in_view_claims_nothing() -> None:
    log = _GGML.format(built="gfx1200").replace("Built for gfx1200:\n", "")
    assert explain_text(log).rule == ""
