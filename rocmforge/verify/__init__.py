"""Verification of an installed PyTorch: does it work on the GPU it was built for.

Owns: the checks (`rocmforge.verify.checks.<name>`), their result model and the report. Runs in
any environment that has torch: it imports only the standard library, torch and (where present)
triton, plus guarded kit helpers (the product peak table for `perf`; in subprocesses, the
offload-bundle reader for `static` and the Triton target probe for `triton_targets`). torch is
imported lazily so a broken install is reported, not raised. Entry points:
`python -m rocmforge.verify`, `invoke verify`, `nox -s "verify(gfx…)"`.
Must not: import the kit's heavy dependencies (invoke, rich, pyelftools) at module level.
"""

from __future__ import annotations

from rocmforge.verify.model import CHECK_NAMES, CheckResult, Status, VerifyOptions

__all__ = ["CHECK_NAMES", "CheckResult", "Status", "VerifyOptions"]
