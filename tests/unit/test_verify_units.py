"""Pure parts of the verify suite: target coverage, pin parsing, sizes, bandwidth formulas,
worker environment, and the report's exit-code rule. No processes, no torch needed."""

from __future__ import annotations

import pytest

from rocmforge.verify.checks.arch import TargetId, covers, cuda_covers, rebuild_advice
from rocmforge.verify.checks.build import build_kind, config_value
from rocmforge.verify.checks.comm import MULTICAST_OFF, bus_factor, summarize, worker_env
from rocmforge.verify.checks.triton import compare_pin, pin_from_requirements, verdict
from rocmforge.verify.model import CheckResult, Status, VerifyOptions, human_bytes, parse_size
from rocmforge.verify.report import exit_code, plain_table


@pytest.mark.parametrize(
    ("entry", "device", "expected"),
    [
        ("gfx1100", "gfx1100", True),
        ("gfx1100", "gfx1101", False),
        ("gfx942", "gfx942:sramecc+:xnack-", True),          # any-setting code runs everywhere
        ("gfx90a:xnack+", "gfx90a:sramecc+:xnack-", False),  # pinned xnack+ needs xnack on
        ("gfx90a:xnack-", "gfx90a:sramecc+:xnack-", True),
        ("gfx11-generic", "gfx1151", True),
        ("gfx11-generic", "gfx1200", False),
    ],
)
def test_covers(entry: str, device: str, expected: bool) -> None:
    assert covers(TargetId.parse(entry), TargetId.parse(device)) is expected


def test_target_id_parse_and_str() -> None:
    target = TargetId.parse("gfx942:xnack-:sramecc+")
    assert target.base == "gfx942"
    assert target.features == (("sramecc", "+"), ("xnack", "-"))
    assert str(target) == "gfx942:sramecc+:xnack-"


def test_cuda_covers() -> None:
    listed = ["sm_80", "sm_86", "sm_90", "compute_90"]
    assert cuda_covers(listed, "sm_90") == "sass"
    assert cuda_covers(["sm_90a"], "sm_90") == "sass"
    assert cuda_covers(["sm_80", "compute_80"], "sm_90") == "ptx"
    assert cuda_covers(["sm_80"], "sm_90") == ""


def test_rebuild_advice_names_the_arch_list() -> None:
    advice = rebuild_advice(["gfx1101"], ["gfx1100", "gfx942"])
    assert 'PYTORCH_ROCM_ARCH="gfx1100;gfx1101;gfx942"' in advice
    assert "clean configure" in advice


def test_build_kind_and_config_value() -> None:
    assert build_kind("7.2.53211", None) == "ROCm (HIP 7.2.53211)"
    # From ROCm 10 HIP is numbered apart: torch.version.hip 7.15 is ROCm 10.0's, not ROCm 7.15.
    assert build_kind("7.15.26333", None, "10.0.0") == "ROCm 10.0.0 (HIP 7.15.26333)"
    assert build_kind(None, "12.8") == "CUDA 12.8 build"
    assert build_kind(None, None) == "CPU-only build"
    text = "  - HIP Runtime 7.2.53211\n  - MIOpen 3.5.1\n"
    assert config_value(text, "HIP Runtime") == "7.2.53211"
    assert config_value(text, "MIOpen") == "3.5.1"
    assert config_value(text, "NCCL") == ""


def test_pin_from_torch_requirements() -> None:
    cuda = ['filelock', 'triton==3.6.0; platform_system == "Linux"', "sympy>=1.13.3"]
    assert pin_from_requirements(cuda) == ("triton", "3.6.0")
    rocm = ["pytorch-triton-rocm==3.5.0+gitb2fd6fd1; platform_system == 'Linux'"]
    assert pin_from_requirements(rocm) == ("pytorch-triton-rocm", "3.5.0+gitb2fd6fd1")
    # Drift bug: verify's own list lacked triton-rocm (the ROCm wheel's name from 2.10).
    newer = ["triton-rocm==3.6.0+git5f1ad2d8; platform_system == 'Linux'"]
    assert pin_from_requirements(newer) == ("triton-rocm", "3.6.0+git5f1ad2d8")
    assert pin_from_requirements(["filelock", "triton>=3"]) is None
    assert pin_from_requirements(None) is None


def test_compare_pin() -> None:
    status, text = compare_pin(("triton", "3.6.0"), {"triton": "3.6.0"}, "torch's Requires-Dist")
    assert status is Status.PASS and text == "triton 3.6.0 as pinned (torch's Requires-Dist)"
    status, text = compare_pin(("pytorch-triton-rocm", "3.5.0"), {"triton": "3.6.0"}, "x")
    assert status is Status.FAIL
    assert "torch expects pytorch-triton-rocm==3.5.0 (x) but triton 3.6.0 is installed" in text
    status, text = compare_pin(("triton-rocm", "3.6.0"), {"triton-rocm": "3.6.0"}, "x")
    assert status is Status.PASS and text == "triton-rocm 3.6.0 as pinned (x)"


def test_an_unchecked_triton_pin_is_never_a_pass() -> None:
    # Without --triton-pin and without a requirement in torch, nothing was compared: the old
    # check said "pin not discoverable" and passed.
    status, text = compare_pin(None, {"triton": "3.6.0"}, "x")
    assert status is Status.SKIP
    assert text.startswith("Triton installed: triton 3.6.0; the pin was not checked: no "
                           "--triton-pin given")
    status, reason = verdict(status, text, [])
    assert status is Status.SKIP and reason.startswith(text)
    assert reason.endswith("@triton.jit vector add exact; torch.compile matches eager")
    status, reason = verdict(Status.SKIP, text, ["torch.compile failed: X"])
    assert (status, reason) == (Status.FAIL, "torch.compile failed: X")
    assert verdict(Status.PASS, "triton 3.6.0 as pinned (x)", [])[0] is Status.PASS


def test_sizes() -> None:
    assert parse_size("1KiB") == 1024
    assert parse_size("64 MiB") == 64 << 20
    assert parse_size("1G") == 1 << 30
    assert parse_size("4096") == 4096
    with pytest.raises(ValueError, match="not a size"):
        parse_size("1.5GiB")
    assert human_bytes(1 << 30) == "1 GiB"
    assert human_bytes(1536) == "1536 B"


def test_comm_defaults_follow_the_device() -> None:
    assert VerifyOptions(device="cpu").sizes_for_comm() == (1024, 64 << 10, 1 << 20)
    gpu = VerifyOptions(device="cuda").sizes_for_comm()
    assert gpu[0] == 1024 and gpu[-1] == 1 << 30
    assert VerifyOptions(device="cuda", comm_timeout_s=7).timeout_for_comm() == 7


def test_bus_factors_follow_nccl_tests() -> None:
    assert bus_factor("all_reduce", 2) == 1.0
    assert bus_factor("all_reduce", 8) == 1.75
    assert bus_factor("all_gather", 4) == 0.75
    assert bus_factor("broadcast", 8) == 1.0
    assert bus_factor("send_recv", 8) == 1.0


def test_worker_env_forces_multicast_off_and_rank() -> None:
    caller = {"NCCL_NVLS_ENABLE": "1", "PYTHONPATH": "/x", "HOME": "/root"}
    env = worker_env(caller, rank=1, world=2, port=29555, package_root="/kit")
    assert {k: env[k] for k in MULTICAST_OFF} == {
        "NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
        "NVSHMEM_DISABLE_NVLS": "1"}
    assert (env["RANK"], env["LOCAL_RANK"], env["WORLD_SIZE"]) == ("1", "1", "2")
    assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("127.0.0.1", "29555")
    assert env["PYTHONPATH"] == "/kit" + ":" + "/x"
    assert env["HOME"] == "/root"
    assert caller["NCCL_NVLS_ENABLE"] == "1"  # the caller's mapping is not changed


def test_summarize_takes_the_slowest_rank_and_lists_mismatches() -> None:
    reports = (
        {"rank": 0, "records": [
            {"op": "all_reduce", "dtype": "float32", "bytes": 1 << 20, "exact": True,
             "seconds": 0.001},
            {"op": "all_reduce", "dtype": "int32", "bytes": 1 << 20, "exact": True}]},
        {"rank": 1, "records": [
            {"op": "all_reduce", "dtype": "float32", "bytes": 1 << 20, "exact": True,
             "seconds": 0.002},
            {"op": "all_reduce", "dtype": "int32", "bytes": 1 << 20, "exact": False}]},
    )
    summary = summarize(reports, world=4)
    assert summary["checked"] == 4
    assert summary["mismatches"] == ["rank 1 all_reduce int32 1 MiB"]
    row = summary["bandwidth"]["all_reduce"][0]
    assert row["time_us"] == 2000.0
    assert row["algbw_gbs"] == pytest.approx((1 << 20) / 0.002 / 1e9, abs=1e-3)
    assert row["busbw_gbs"] == pytest.approx(row["algbw_gbs"] * 1.5, abs=1e-3)


def test_exit_code_and_plain_table() -> None:
    results = [CheckResult(name="ops", status=Status.PASS, reason="fine"),
               CheckResult(name="perf", status=Status.WARN, reason="slow")]
    assert exit_code(results) == 0
    assert exit_code([*results, CheckResult(name="x", status=Status.FAIL, reason="")]) == 1
    table = plain_table(results).splitlines()
    assert table[0] == "CHECK  STATUS  TIME  REASON"
    assert table[2] == "ops    PASS    0.0s  fine"


def test_perf_judge_fractions_and_threshold() -> None:
    from rocmforge.knowledge.products import find_product
    from rocmforge.verify.checks.perf import judge

    h200 = find_product("NVIDIA H200", arch="sm_90")
    measured = {"gemm_bf16_tflops": 770.0, "gemm_fp16_tflops": 760.0, "copy_gbs": 4300.0}
    verdict = judge(dict(measured), h200, "NVIDIA H200")
    assert verdict.status is Status.PASS
    assert verdict.figures["fraction_of_peak"] == {
        "gemm_bf16": round(770 / 989.5, 3), "gemm_fp16": round(760 / 989.5, 3),
        "copy": round(4300 / 4800, 3)}
    slow = judge({**measured, "gemm_bf16_tflops": 400.0}, h200, "NVIDIA H200")
    assert slow.status is Status.WARN
    assert "bf16 GEMM at 40% of the 989.5 TFLOP/s peak" in slow.reason
    unknown = judge(dict(measured), None, "Mystery GPU")
    assert unknown.status is Status.PASS
    assert "no peak known for 'Mystery GPU'" in unknown.reason
