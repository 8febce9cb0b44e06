"""An extension package's operator that torch's dispatcher has no kernel for on the GPU: the
package registered the operator's schema (its Python side loaded) but its native library holds
no CUDA/HIP kernel for it, because that build of the package left its GPU kernels out or was
made for another torch.

Owns: the reading of torch's dispatcher error for operators of other namespaces than torch's
own. Must not: explain torch's own operators (aten::, prims::, …: a missing kernel there is
torch's limitation, not a packaging fault) or an operator that is not registered at all.
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

# torch's own namespaces: an operator of these with no GPU kernel is not a package's build.
_TORCH_OWN = frozenset({
    "aten", "prims", "rngprims", "debugprims", "quantized", "_quantized", "sparse", "c10d",
    "_c10d_functional", "_c10d_functional_autograd", "_dtensor", "profiler", "inductor",
    "mkldnn", "onednn", "higher_order", "symm_mem", "_test", "_prims"})


def _op_without_gpu_kernel(match: re.Match[str], view: LineView) -> Reading | None:
    namespace, op = match.group("ns"), match.group("op")
    if namespace in _TORCH_OWN:
        return None
    backend = match.group("backend")
    return Reading(
        subject=namespace,
        cause=f"torch found the operator {namespace}::{op} but no kernel of it for the "
              f"'{backend}' backend (a ROCm torch runs HIP under the 'CUDA' name): the "
              f"installed {namespace} package registered the operator while its native "
              "library has no GPU kernel for it, so that build of it left its GPU kernels "
              "out (a CPU-only or generic build) or was made for another torch",
        fix=f"install the {namespace} build made for the installed torch and its GPU stack "
            f"(for ROCm: the wheel from the same ROCm index as torch, or build {namespace} "
            "from source in this environment with `--no-build-isolation` so it compiles its "
            f"HIP kernels against this torch); `pip show {namespace} torch` shows both")


RULES: tuple[Rule, ...] = (
    Rule(id="extension-op-no-gpu-kernel", klass="python-packaging",
         triggers=("with arguments from the '",),
         pattern=rx(r"Could not run '(?P<ns>\w+)::(?P<op>\w+)(?:\.\w+)?' with arguments from "
                    r"the '(?P<backend>CUDA|HIP)' backend"),
         read=_op_without_gpu_kernel,
         source="pytorch/pytorch@cf30153c4c131c8164ee7798e5022d810682e2cb (torch 2.13.0+cpu "
         "as installed here): the dispatcher's 'Could not run '<ns>::<op>' with arguments "
         "from the '<backend>' backend. This could be because the operator doesn't exist for "
         "this backend…' (reproduced here with an operator of a library registered for Meta "
         "only and called on CPU); ROCm/xformers#57"),
)
