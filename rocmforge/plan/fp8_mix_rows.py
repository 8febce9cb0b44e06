"""Doctor row for a vLLM build whose target list mixes the two FP8 encodings (issue 40 item 3).

What upstream does with such a list, read at its source:
- ROCm's hip/amd_detail/amd_hip_fp8.h (ROCm/clr@23b03d982c5806e05ac110c8ff9d570ce7dd28f4:
  hipamd/include/hip/amd_detail/amd_hip_fp8.h) sets HIP_FP8_TYPE_FNUZ for a gfx942 device
  compile and HIP_FP8_TYPE_OCP for gfx950, gfx1200 and gfx1201: each offload target's device
  code is compiled with its own encoding.
- vLLM instantiates its FP8 kernels for both types on ROCm: VLLM_DISPATCH_CASE_FP8_TYPES has
  Float8_e4m3fn and Float8_e4m3fnuz under USE_ROCM ("ROCm devices might use either fn or fnuz,
  so set up dispatch table for both"; vllm-project/vllm@045d7575500e01e0f4a7ff84e039a9f7f7dc3bd0:
  csrc/dispatch_utils.h), and picks the type at run time: RocmPlatform.is_fp8_fnuz() is
  `"gfx94" in _GCN_ARCH`, the arch of device 0 ("assumes MI300 platforms are homogeneous";
  vllm-project/vllm@001eda31e3d032e9dc864e97f3630358b2ff8b5a:vllm/platforms/rocm.py).
So one wheel for gfx942 and gfx950/gfx12xx builds both kernel sets and each GPU gets its own:
no failing log of a mixed build was found, and the row is a note (OK), not a stop. What the
code does not cover is one process whose GPUs mix the two: it uses device 0's type for all.

Owns: which processors use which encoding here, and the note. Must not: print, or refuse.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from rocmforge.plan.doctor_row import DoctorRow

CHECK = "vLLM fp8 formats"
Fp8Format = Literal["fnuz", "ocp", ""]


def fp8_format(processor: str) -> Fp8Format:
    """The FP8 encoding a target's device code gets: FNUZ on gfx94x (vLLM's test), OCP on
    gfx950 and gfx12xx (amd_hip_fp8.h's list, gfx12 as a family), "" for targets without
    FP8."""
    name = processor.split(":", 1)[0]
    if name.startswith("gfx94"):
        return "fnuz"
    if name.startswith(("gfx95", "gfx12")):
        return "ocp"
    return ""


def _named(word: str) -> str:
    """A companions word's name: `vllm@v0.11.0` -> `vllm`."""
    return word.split("@", 1)[0].strip().lower()


def vllm_fp8_rows(companions: Sequence[str], targets: Sequence[str]) -> list[DoctorRow]:
    """One note row when vLLM is built and the targets mix FNUZ and OCP FP8; [] otherwise."""
    if "vllm" not in {_named(w) for w in companions}:
        return []
    fnuz = [t for t in targets if fp8_format(t) == "fnuz"]
    ocp = [t for t in targets if fp8_format(t) == "ocp"]
    if not fnuz or not ocp:
        return []
    return [DoctorRow(
        check=CHECK, status="OK",
        detail=f"{', '.join(fnuz)} (FNUZ fp8) with {', '.join(ocp)} (OCP fp8) in one vLLM "
        "build: vLLM compiles its fp8 kernels for both types and each process uses the "
        "type of its GPU 0, so one process must not mix the two kinds of GPU")]
