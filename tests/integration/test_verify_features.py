"""The per-feature verify checks, run for real on this machine's CPU torch."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from rocmforge.verify.checks import CheckContext  # noqa: E402
from rocmforge.verify.checks.features import check_features  # noqa: E402
from rocmforge.verify.model import Status, VerifyOptions  # noqa: E402


def _ctx() -> CheckContext:
    return CheckContext(torch=torch, options=VerifyOptions(device="cpu"))


def test_left_out_features_skip_with_the_manifest_reason() -> None:
    [res] = check_features(_ctx(), {"ck": {"built": False, "why": "off by default"}})
    assert (res.name, res.status, res.reason) == (
        "feature:ck", Status.SKIP, "left out of this build: off by default")


@pytest.mark.parametrize(("feature", "backend"), [("mem_efficient_attention",
                                                   "EFFICIENT_ATTENTION"),
                                                  ("flash_attention", "FLASH_ATTENTION")])
def test_attention_kernels_are_not_judged_on_the_cpu(feature: str, backend: str) -> None:
    # A CPU torch has its own flash kernel (it would "pass") and no memory-efficient one (it
    # would "fail"): neither says anything about the GPU kernels a ROCm build compiled.
    [res] = check_features(_ctx(), {feature: {"built": True, "why": ""}})
    assert (res.status, res.reason) == (
        Status.SKIP, f"{backend} is a GPU kernel of this build; not run: --device cpu: this "
        "check needs a GPU")


def test_rccl_built_on_cpu_torch_fails_because_nccl_is_unavailable() -> None:
    [res] = check_features(_ctx(), {"rccl": {"built": True, "why": ""}})
    assert torch.distributed.is_nccl_available() is False
    assert res.status == Status.FAIL
    assert "is_nccl_available() is False" in res.reason


def test_hipblaslt_is_not_passed_without_a_gpu() -> None:
    [res] = check_features(_ctx(), {"hipblaslt": {"built": True, "why": ""}})
    assert res.status in (Status.SKIP, Status.FAIL)
    assert res.status != Status.PASS


@pytest.mark.needs_import("torch")
def test_verify_reads_the_manifests_features_and_reports_each(tmp_path) -> None:
    """The verify command line with --manifest (what `nox -s verify` and `invoke verify` pass):
    a row per optional part; a left-out part SKIPs with the build's reason; MAGMA built into a
    torch that has none FAILs; Kineto is proven by torch itself."""
    import json as jsonlib
    import subprocess
    import sys
    from pathlib import Path

    manifest = tmp_path / "manifest.json"
    manifest.write_text(jsonlib.dumps({"features": {
        "rccl": {"built": False, "why": "rccl is not in /usr"},
        "kineto": {"built": True, "why": "default"},
        "magma": {"built": True, "why": "default"}}}))
    report = tmp_path / "report.json"
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "rocmforge.verify", "--device", "cpu",
                           "--only", "build", "--manifest", str(manifest), "--json",
                           str(report)], cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1  # the CPU torch is no ROCm build, and MAGMA is missing
    checks = {c["name"]: c for c in jsonlib.loads(report.read_text())["checks"]}
    assert checks["feature:rccl"]["status"] == "SKIP"
    assert checks["feature:rccl"]["reason"] == "left out of this build: rccl is not in /usr"
    assert checks["feature:kineto"]["status"] == "PASS"
    assert checks["feature:magma"]["status"] == "FAIL"
    assert checks["feature:magma"]["reason"] == ("built with MAGMA but torch.cuda.has_magma is "
                                                 "False")
