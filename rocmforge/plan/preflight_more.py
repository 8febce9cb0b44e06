"""The preflight rows of issue 40 item 3 that doctor and the build's preflight both add, in one
list, so each caller registers them with one call: Triton's LLVM download
(plan/triton_llvm_rows.py), vLLM's FP8 formats (plan/fp8_mix_rows.py) and the memory of the
extensions' compile jobs as their trees state it (plan/job_memory_rows.py).

Owns: which of those rows run and in what order. Must not: judge (the row modules do) or print.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rocmforge.plan.doctor_row import DoctorRow

if TYPE_CHECKING:
    from rocmforge.probes.facts import Facts
    from rocmforge.settings import Settings


def more_preflight_rows(settings: Settings, facts: Facts, targets: Sequence[str],
                        environ: Mapping[str, str]) -> list[DoctorRow]:
    """`environ`: what the build's steps run with (this process's environment with the build
    environment over it)."""
    from rocmforge.plan.fp8_mix_rows import vllm_fp8_rows
    from rocmforge.plan.job_memory_rows import job_memory_doctor
    from rocmforge.plan.triton_llvm_rows import triton_llvm_doctor

    system = facts.system
    return [*triton_llvm_doctor(settings, environ),
            *vllm_fp8_rows(settings.companions, targets),
            *job_memory_doctor(settings, environ, cores=int(system.cores or 1),
                               mem_total_gib=float(system.mem_total_gib or 0.0))]
