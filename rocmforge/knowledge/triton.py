"""Triton facts that several layers use, each defined once.

Owns: the distributions that install the `triton` import package (the providers), the PEP 503
name rule used to compare them, a wheel file's provider, the Triton modes of a build, and the
package index a build's Triton wheel comes from.
Must not: import anything outside the standard library: rocmforge.verify imports this module
inside a bare target venv (stdlib + torch + triton), and the nox sessions before any install.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

# How `invoke build` gets Triton: a prebuilt wheel for the pin, else a source build (auto); only
# the wheel; only the source build; or no Triton at all (torch.compile will not work).
TritonMode = Literal["auto", "wheel", "source", "skip"]
TRITON_MODES: tuple[TritonMode, ...] = get_args(TritonMode)

# Distributions that install the `triton` import package, so any two of them overwrite each
# other's files. `triton`: PyPI (CUDA) and triton-lang's own wheels; `pytorch-triton`: PyTorch's
# CUDA wheel; `pytorch-triton-rocm`: PyTorch's ROCm wheel, named by TRITON_WHEEL_NAME in
# pytorch/pytorch .github/scripts/build_triton_wheel.py; `triton-rocm`: that wheel's name from
# release/2.10 on (ROCm/pytorch#2914; config/pytorch.toml `triton_wheel`).
TRITON_PROVIDERS: tuple[str, ...] = ("triton", "pytorch-triton", "pytorch-triton-rocm",
                                     "triton-rocm")

_SEPARATORS = re.compile(r"[-_.]+")


def index_url(template: str, rocm_version: str) -> str:
    """settings.triton_index with {rocm} = ROCm major.minor (download.pytorch.org/whl/rocm6.4)."""
    return template.replace("{rocm}", ".".join(rocm_version.split(".")[:2]))


def canonical_name(name: str) -> str:
    """A distribution name as PEP 503 compares it: lower case, runs of -_. as one '-'."""
    return _SEPARATORS.sub("-", name).lower()


def is_triton_provider(name: str) -> bool:
    """True for any spelling of a provider ("pytorch_triton_rocm", "Triton-ROCm")."""
    return canonical_name(name) in TRITON_PROVIDERS


def wheel_provider(filename: str) -> str | None:
    """The provider a wheel file installs ("triton-rocm" for triton_rocm-3.6.0-…whl), or None
    when the file is not a wheel of a provider. PEP 427: the name is the part before the first
    '-', with '_' for the separators."""
    if not filename.endswith(".whl") or "-" not in filename:
        return None
    name = canonical_name(filename.split("-", 1)[0])
    return name if name in TRITON_PROVIDERS else None
