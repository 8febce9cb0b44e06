"""The vLLM FP8 note (issue 40 item 3): upstream builds both FP8 kernel sets on ROCm and picks
one per process (plan/fp8_mix_rows.py cites the lines), so a mixed target list is a note, and
only when vLLM is built and the list really mixes FNUZ (gfx94x) with OCP (gfx950, gfx12xx)."""

from __future__ import annotations

import pytest

from rocmforge.plan.fp8_mix_rows import fp8_format, vllm_fp8_rows


@pytest.mark.parametrize(("target", "expected"), [
    ("gfx942", "fnuz"), ("gfx942:sramecc+:xnack-", "fnuz"), ("gfx950", "ocp"),
    ("gfx1200", "ocp"), ("gfx1201", "ocp"), ("gfx90a", ""), ("gfx1100", ""),
])
def test_each_target_has_its_encoding(target: str, expected: str) -> None:
    assert fp8_format(target) == expected


def test_a_mixed_list_with_vllm_is_a_note() -> None:
    (row,) = vllm_fp8_rows(("torchvision", "vllm@v0.11.0"), ["gfx942", "gfx950", "gfx1201"])
    assert (row.check, row.status, row.fix) == ("vLLM fp8 formats", "OK", "")
    assert row.detail.startswith("gfx942 (FNUZ fp8) with gfx950, gfx1201 (OCP fp8) in one "
                                 "vLLM build: vLLM compiles its fp8 kernels for both types")


@pytest.mark.parametrize(("companions", "targets"), [
    (("vllm",), ["gfx942", "gfx90a"]),       # one encoding only
    (("vllm",), ["gfx950", "gfx1200"]),      # OCP only
    (("flash-attention",), ["gfx942", "gfx950"]),  # no vLLM
    ((), ["gfx942", "gfx950"]),
])
def test_no_row_without_vllm_or_without_a_mix(companions: tuple[str, ...],
                                              targets: list[str]) -> None:
    assert vllm_fp8_rows(companions, targets) == []
