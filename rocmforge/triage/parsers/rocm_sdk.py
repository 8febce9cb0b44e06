"""TheRock's pip ROCm SDK: what its `rocm_sdk` package and `rocm-sdk` command say when the
installed `rocm` packages do not fit the GPU or the request.

Owns: the rules whose answer needs a value read and reshaped from the line (the target family
asked for). Must not: hold fixed-text messages (config/diagnostics.toml, "Extension builds and
TheRock's pip SDK") or the loader's view of the same packages (loader.py).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

ROCM_SDK = ("ROCm/TheRock@89553ce3746eda74ade42557470d25e37c91b6f0:build_tools/packaging/python/"
            "templates/rocm/src/rocm_sdk")
_GFX = re.compile(r"gfx[0-9a-fA-FxX]{2,4}")


def _target_family(match: re.Match[str], view: LineView) -> Reading | None:
    family = match.group("family")
    gfx = _GFX.match(family)
    if gfx is None:
        return None
    available = match.group("available").strip()
    return Reading(
        subject=gfx.group(0),
        cause=f"ROCM_SDK_TARGET_FAMILY asks rocm_sdk for the target family {family}, and the "
              f"installed rocm packages were built for other families only ({available}); "
              "rocm_sdk looks up the target-specific libraries by that family",
        fix=f"unset ROCM_SDK_TARGET_FAMILY (rocm_sdk then asks offload-arch for the GPU) or set "
            f"it to one of {available}; a GPU none of them covers needs the rocm packages "
            "from the index of its own family (TheRock's RELEASES.md lists them)")


RULES: tuple[Rule, ...] = (
    Rule(id="rocm-sdk-target-family", klass="gpu-target",
         triggers=("ROCM_SDK_TARGET_FAMILY=",),
         pattern=rx(r"Requested ROCM_SDK_TARGET_FAMILY=(?P<family>\S+) is not available in the "
                     r"distribution \(available: (?P<available>[^)]*)\)"),
         read=_target_family,
         source=f"{ROCM_SDK}/_dist_info.py (determine_target_family)"),
)
