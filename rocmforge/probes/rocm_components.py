"""Probe: which ROCm components a ROCm install has, and their versions, from their own CMake
config files.

Owns: finding `<name>-config-version.cmake` (or `<Name>ConfigVersion.cmake`) where CMake's
find_package would, under the install's prefix (`lib/cmake`, `lib64/cmake`, the Debian multiarch
`lib/<triplet>/cmake`, `share/<name>/cmake`), and reading `PACKAGE_VERSION` from it. Must not:
run cmake or anything else, or judge (doctor does).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_VERSION = re.compile(r'^\s*set\s*\(\s*PACKAGE_VERSION\s+"([^"$]+)"', re.MULTILINE | re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class ComponentFound:
    """What the install says about one component: its config file and version, or nothing."""

    name: str
    config: Path | None
    version: str = ""

    @property
    def found(self) -> bool:
        return self.config is not None


def _lib_dirs(prefix: Path) -> list[Path]:
    dirs = [prefix / "lib", prefix / "lib64"]
    # Debian's multiarch folders: lib/x86_64-linux-gnu, lib/aarch64-linux-gnu. Only names ending
    # in -linux-gnu are stat'ed (/usr/lib holds hundreds of entries).
    try:
        with os.scandir(prefix / "lib") as entries:
            dirs += sorted(Path(e.path) for e in entries
                           if e.name.endswith("-linux-gnu") and e.is_dir())
    except OSError:
        pass
    return dirs


def _candidates(lib_dirs: Sequence[Path], prefix: Path, name: str) -> list[Path]:
    files = (f"{name}-config-version.cmake", f"{name}ConfigVersion.cmake",
             f"{name.lower()}-config-version.cmake")
    folders = [d / "cmake" / name for d in lib_dirs]
    folders += [prefix / "share" / name / "cmake", prefix / "share" / name]
    return [folder / file for folder in folders for file in files]


def find_components(prefix: Path, names: Sequence[str]) -> tuple[ComponentFound, ...]:
    """Each of `names` under the ROCm install at `prefix` (e.g. /opt/rocm-6.4.1, or /usr for
    Debian's packages)."""
    results = []
    lib_dirs = _lib_dirs(prefix)  # once per install, not once per component
    for name in names:
        config = next((p for p in _candidates(lib_dirs, prefix, name) if p.is_file()), None)
        version = ""
        if config is not None:
            try:
                match = _VERSION.search(config.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                match = None
            version = match.group(1) if match else ""
        results.append(ComponentFound(name=name, config=config, version=version))
    return tuple(results)
