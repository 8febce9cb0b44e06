"""Stale CMake build detection: the targets a build dir was configured for vs. the ones asked for.

Owns: reading `PYTORCH_ROCM_ARCH` out of `build/CMakeCache.txt` and comparing it with the
requested target list. Why: setup.py re-runs CMake only on the first configure, and FindHIP caches
values (HIP_VERSION) across attempts, so a changed `PYTORCH_ROCM_ARCH` is silently ignored
unless the build dir is cleaned (reference pytorch-rocm-build.md §5.2: pytorch/pytorch#23512,
#181939). Must not: delete anything; the runner's `stale-check` action does that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# A CMakeCache entry: NAME:TYPE=VALUE (TYPE is STRING, UNINITIALIZED, INTERNAL, ...).
_ENTRY = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*):(?P<type>[A-Z]+)=(?P<value>.*)$")


@dataclass(frozen=True, kw_only=True)
class StaleVerdict:
    """Whether the CMake build dir must be cleaned before configure, and why in one sentence."""

    cache_file: str
    cached_targets: tuple[str, ...] | None
    requested_targets: tuple[str, ...]
    stale: bool
    reason: str


def read_cmake_cache(text: str) -> dict[str, str]:
    """Entries of a CMakeCache.txt (comments and blank lines skipped; later entries win)."""
    entries: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "//")):
            continue
        match = _ENTRY.match(line)
        if match:
            entries[match["name"]] = match["value"]
    return entries


def split_arch_list(value: str) -> tuple[str, ...]:
    """`gfx90a;gfx942` or `gfx90a gfx942` (LoadHIP turns spaces into `;`) -> a tuple."""
    return tuple(part for part in re.split(r"[;\s]+", value.strip()) if part)


def check_stale(build_dir: Path, requested: tuple[str, ...]) -> StaleVerdict:
    """Compare the cached PYTORCH_ROCM_ARCH with `requested` (order does not matter)."""
    cache = build_dir / "CMakeCache.txt"

    def verdict(cached: tuple[str, ...] | None, stale: bool, reason: str) -> StaleVerdict:
        return StaleVerdict(cache_file=str(cache), cached_targets=cached,
                            requested_targets=requested, stale=stale, reason=reason)

    try:
        text = cache.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return verdict(None, False,
                       f"no {cache} yet: the first configure will use {';'.join(requested)}")
    entries = read_cmake_cache(text)
    if "PYTORCH_ROCM_ARCH" not in entries:
        return verdict(None, True,
                       f"{cache} does not record PYTORCH_ROCM_ARCH, so its targets are unknown")
    cached = split_arch_list(entries["PYTORCH_ROCM_ARCH"])
    if sorted(set(cached)) == sorted(set(requested)):
        return verdict(cached, False,
                       f"{cache} was configured for the requested targets {';'.join(cached)}")
    return verdict(cached, True, f"{cache} was configured for {';'.join(cached) or '(none)'} "
                                 f"but {';'.join(requested)} was requested")
