"""The verify suite run for real with the CPU build of PyTorch (`pip install torch==2.13.0`).

`python -m rocmforge.verify --device cpu` runs in a subprocess, as a user would: CPU-capable
checks pass, `build` fails naming the CPU-only build, device-only checks skip with reasons, and
`comm` runs two real processes over gloo. The only fake is the "broken torch" package (a torch
that raises on import, as a half-installed wheel does), named as such.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

torch_missing = pytest.mark.needs_import("torch")


def run_verify(*args: str, env: dict[str, str] | None = None,
               timeout: float = 120) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "rocmforge.verify", *args], cwd=ROOT,
                          env=full_env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str],
                                                               dict[str, Any]]:
    report = tmp_path_factory.mktemp("verify") / "report.json"
    done = run_verify("--device", "cpu", "--json", str(report), "--comm-sizes", "1KiB,64KiB")
    return done, json.loads(report.read_text())


def by_name(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {check["name"]: check for check in document["checks"]}


@pytest.mark.slow
@torch_missing
def test_cpu_suite_exit_code_and_schema(cpu_run: Any) -> None:
    done, document = cpu_run
    assert done.returncode == 1, done.stderr  # build FAILs on a CPU-only torch
    assert document["schema"] == "rocmforge.verify/1"
    assert document["exit_code"] == 1
    assert document["versions"]["torch"].startswith("2.13.0")
    assert document["versions"]["torch_hip"] is None
    assert document["options"]["device"] == "cpu"
    assert [c["name"] for c in document["checks"]] == [
        "build", "arch", "static", "triton_targets", "ops", "blas", "attention", "triton",
        "memory", "perf", "comm", "companions", "extensions"]
    assert document["summary"] == {"PASS": 3, "WARN": 0, "FAIL": 1, "SKIP": 9}
    assert document["wall_s"] > 0
    assert "Traceback" not in done.stderr


@pytest.mark.slow
@torch_missing
def test_cpu_suite_verdicts(cpu_run: Any) -> None:
    _, document = cpu_run
    checks = by_name(document)
    assert checks["build"]["status"] == "FAIL"
    assert checks["build"]["reason"] == "not a ROCm build (CPU-only build)"
    assert checks["ops"]["status"] == "PASS"
    assert checks["attention"]["status"] == "PASS"
    assert checks["comm"]["status"] == "PASS"
    for name, fragment in (("arch", "CPU-only build"), ("static", "no HIP fat binaries"),
                           ("triton_targets", "no GPU targets to probe: pass --expect"),
                           ("triton", "need a GPU"), ("memory", "need a GPU"),
                           ("blas", "--device cpu: this check needs a GPU"),
                           ("extensions", "no --manifest given"),
                           ("perf", "needs a GPU"),
                           ("companions", "no companion installed (torchvision, torchaudio)")):
        assert checks[name]["status"] == "SKIP", name
        assert fragment in checks[name]["reason"], name


@pytest.mark.slow
@torch_missing
def test_cpu_ops_figures_within_stated_tolerances(cpu_run: Any) -> None:
    _, document = cpu_run
    figures = by_name(document)["ops"]["figures"]
    assert set(figures["relative_error"]) == {
        "matmul_fp32", "matmul_fp16", "matmul_bf16", "conv2d_fp32", "softmax_fp32",
        "layer_norm_fp32", "sum_fp32", "indexing_int64"}
    assert figures["relative_error"]["indexing_int64"] == 0.0
    assert figures["relative_error"]["matmul_fp32"] <= 1e-4
    # bf16 rounding really shows: the check compares against float64, not against itself.
    assert figures["relative_error"]["matmul_bf16"] > 1e-4


@pytest.mark.slow
@torch_missing
def test_cpu_attention_has_math_and_agreeing_backends(cpu_run: Any) -> None:
    _, document = cpu_run
    figures = by_name(document)["attention"]["figures"]
    assert "MATH" in figures["available"]
    assert figures["math_vs_float64"] <= 1e-5
    assert set(figures["available"]) | set(figures["unavailable"]) == {
        "MATH", "EFFICIENT_ATTENTION", "FLASH_ATTENTION", "CUDNN_ATTENTION"}


@pytest.mark.slow
@torch_missing
def test_cpu_comm_runs_gloo_with_two_processes_and_reports_bandwidth(cpu_run: Any) -> None:
    done, document = cpu_run
    comm = by_name(document)["comm"]
    figures = comm["figures"]
    assert figures["backend"] == "gloo"
    assert figures["world_size"] == 2
    assert figures["sizes"] == ["1 KiB", "64 KiB"]
    assert figures["mismatches"] == []
    # 4 ops x 2 sizes x 3 dtypes x 2 ranks
    assert figures["checked"] == 48
    assert figures["worker_env"] == {"NCCL_NVLS_ENABLE": "0",
                                     "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                                     "NVSHMEM_DISABLE_NVLS": "1"}
    assert set(figures["bandwidth"]) == {"all_reduce", "all_gather", "broadcast", "send_recv"}
    for rows in figures["bandwidth"].values():
        assert [r["bytes"] for r in rows] == [1024, 65536]
        assert all(r["time_us"] > 0 and r["algbw_gbs"] >= r["busbw_gbs"] * 0.99 for r in rows)
    # all_reduce on 2 ranks: busbw = algbw * 2(n-1)/n = algbw
    reduce_rows = figures["bandwidth"]["all_reduce"]
    assert reduce_rows[1]["busbw_gbs"] == pytest.approx(reduce_rows[1]["algbw_gbs"], abs=1e-3)
    assert any(line.split()[:2] == ["comm", "PASS"] for line in done.stdout.splitlines())


@pytest.mark.slow
@torch_missing
def test_cpu_table_is_printed(cpu_run: Any) -> None:
    done, _ = cpu_run
    lines = done.stdout.splitlines()
    assert lines[0].startswith("rocmforge verify: torch 2.13.0")
    assert lines[1].split() == ["CHECK", "STATUS", "TIME", "REASON"]
    assert any(line.startswith("build") and "FAIL" in line and "CPU-only build" in line
               for line in lines)
    assert "3 passed, 0 warned, 1 failed, 9 skipped" in done.stdout


def test_unknown_check_is_exit_2_with_suggestion() -> None:
    done = run_verify("--only", "ops,attn")
    assert done.returncode == 2
    assert "unknown check 'attn'" in done.stderr
    assert "did you mean 'attention'?" in done.stderr
    assert "Traceback" not in done.stderr


def test_bad_comm_size_is_exit_2() -> None:
    done = run_verify("--comm-sizes", "1KiB,lots")
    assert done.returncode == 2
    assert "--comm-sizes: not a size: 'lots'" in done.stderr


def test_broken_torch_is_exit_2_with_the_import_error(tmp_path: Path) -> None:
    # A fake, broken torch package (what a half-installed wheel looks like): importing it fails.
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        "raise ImportError('libtorch_cpu.so: cannot open shared object file')\n")
    done = run_verify("--device", "cpu", "--only", "ops",
                      env={"PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])})
    assert done.returncode == 2
    assert ("torch does not import (ImportError: libtorch_cpu.so: cannot open shared object "
            "file)") in done.stderr
    assert "reinstall the torch wheel" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


@torch_missing
def test_when_device_skips_runtime_checks_without_that_gpu(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    done = run_verify("--only", "build,arch,ops,comm", "--expect", "gfx1100",
                      "--when-device", "gfx1100", "--json", str(report))
    document = json.loads(report.read_text())
    checks = by_name(document)
    why = "no gfx1100 device visible here (visible: none); runtime checks skipped"
    assert checks["ops"] == {"name": "ops", "status": "SKIP", "reason": why, "seconds": 0.0,
                             "figures": {}}
    assert checks["comm"]["reason"] == why
    # The build's target list is still checked without a GPU: a CPU build has none.
    assert checks["arch"]["status"] == "FAIL"
    assert checks["arch"]["reason"] == "CPU-only build: no GPU targets compiled, expected gfx1100"
    assert done.returncode == 1
    assert document["notes"][-1] == why


def test_unwritable_report_path_is_exit_2_before_any_check(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "r.json"
    done = run_verify("--device", "cpu", "--only", "build", "--json", str(missing))
    assert done.returncode == 2
    assert (f"--json {missing}: the folder {missing.parent} does not exist, so the report could "
            "not be written. Nothing was checked.") in done.stderr
    assert done.stdout == ""  # refused before the table: no check ran
    assert not (tmp_path / "no").exists()
    done = run_verify("--device", "cpu", "--only", "build", "--json", str(tmp_path))
    assert done.returncode == 2
    assert f"--json {tmp_path} is a directory" in done.stderr


def test_bad_argument_is_one_paragraph_without_usage_block() -> None:
    done = run_verify("--device", "tpu")
    assert done.returncode == 2
    assert done.stderr == (
        "rocmforge verify: argument --device: invalid choice: 'tpu' (choose from 'auto', "
        "'cuda', 'cpu'). Nothing was checked. Fix: see `python -m rocmforge.verify --help` for "
        "the accepted values.\n"
    )


def run_invoke_verify(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "HIP_PLATFORM": "amd"}
    env.pop("ROCMFORGE_ARCH", None)
    return subprocess.run([sys.executable, "-m", "invoke", "verify", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--expect", "gfx9999"), '"gfx9999" is not a GPU target the kit knows. Did you mean '
                                  '"gfx909"?'),
        (("--comm-timeout", "abc"), "argument --comm-timeout: invalid float value: 'abc'"),
        (("--comm-timeout", "-5"), "--comm-world-size and --comm-timeout must not be negative"),
    ],
    ids=["unknown-target", "timeout-not-a-number", "negative-timeout"],
)
def test_invoke_verify_bad_input_is_exit_2(args: tuple[str, ...], fragment: str) -> None:
    done = run_invoke_verify("--only", "build", *args)
    assert done.returncode == 2, done.stderr
    assert fragment in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_invoke_verify_expands_aliases_for_the_suite() -> None:
    from rocmforge.tasks.verify import expected_targets

    assert expected_targets("mi300;gfx1100") == "gfx942;gfx1100"
    assert expected_targets("gfx90a:xnack-, sm_90") == "gfx90a:xnack-;sm_90"
    assert expected_targets("") == ""
