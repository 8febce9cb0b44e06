"""The preflight rows of issue 40 item 3 that doctor and the build's preflight both add, in one
list, so each caller registers them with one call: Triton's LLVM download
(plan/triton_llvm_rows.py) and vLLM's FP8 formats (plan/fp8_mix_rows.py).

Owns: which of those rows run and in what order. Must not: judge (the row modules do) or print.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rocmforge.plan.doctor_row import DoctorRow

if TYPE_CHECKING:
    from rocmforge.settings import Settings


def more_preflight_rows(settings: Settings, targets: Sequence[str],
                        environ: Mapping[str, str]) -> list[DoctorRow]:
    """`environ`: what the build's steps run with (this process's environment with the build
    environment over it)."""
    from rocmforge.plan.fp8_mix_rows import vllm_fp8_rows
    from rocmforge.plan.triton_llvm_rows import triton_llvm_doctor

    return [*triton_llvm_doctor(settings, environ), *vllm_fp8_rows(settings.companions, targets)]
