"""Probe: do the CMake package configs on CMAKE_PREFIX_PATH configure?

PyTorch's LoadHIP.cmake calls find_package(<component> CONFIG) for each ROCm component; a config
whose targets file names a file the install lacks stops configure ("The imported target
"hip::hipfft" references the file ... but this file does not exist":
rocm-arch/python-pytorch-rocm#35; "roc::hipblaslt-bench": ROCm/TheRock#558). Owns: finding,
in each CMAKE_PREFIX_PATH entry, the configs of the packages asked about (lib/cmake,
lib/<multiarch>/cmake, lib64/cmake, share/cmake), and configuring a tiny C/C++ project with the
real cmake that loads each of them from that entry (find_package(... CONFIG PATHS entry
NO_DEFAULT_PATH; with the version the checkout's LoadHIP.cmake asks for, where it names one, so
a config whose version file refuses it fails here as in the build: Fedora's hip 6.0.0 against
`find_package(HIP 1.0)`, "requested 1.0, found 6.0.0", ROCm/hip#3520; its dependencies resolve
as in a build), all within a time bound. Must not:
judge (plan/hazard_rows.py does) or write outside its own temporary folder.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

PREFIX_TIMEOUT_S = 5.0
_CONFIG_DIRS = ("lib/cmake", "lib/x86_64-linux-gnu/cmake", "lib/aarch64-linux-gnu/cmake",
                "lib64/cmake", "share/cmake")
_PROJECT = """cmake_minimum_required(VERSION 3.16)
project(rocmforge_prefix_probe C CXX)
find_package(${PROBE_PACKAGE} ${PROBE_VERSION} CONFIG REQUIRED
             PATHS "${PROBE_ENTRY}" NO_DEFAULT_PATH)
message(STATUS "rocmforge-found ${PROBE_PACKAGE} ${${PROBE_PACKAGE}_DIR}")
"""


@dataclass(frozen=True, kw_only=True)
class PackageConfig:
    entry: str
    """The CMAKE_PREFIX_PATH entry."""
    package: str
    config: str
    """The config file found."""
    configures: bool | None
    """None: not tried within the time bound."""
    error: str = ""
    """The first lines of CMake's error when it does not configure."""
    version: str = ""
    """The version find_package asked for ("" when none: any version the config accepts)."""
    asked_by: str = ""
    """Where that version comes from ("cmake/public/LoadHIP.cmake:36")."""


def package_configs(entry: Path, packages: Sequence[str]) -> list[tuple[str, Path]]:
    """(package, config file) for each of `packages` with a config under `entry`."""
    found: list[tuple[str, Path]] = []
    for package in packages:
        for folder in _CONFIG_DIRS:
            base = entry / folder / package
            names = (f"{package}-config.cmake", f"{package}Config.cmake")
            config = next((base / n for n in names if (base / n).is_file()), None)
            if config is not None:
                found.append((package, config))
                break
    return found


def _error(output: str) -> str:
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("CMake Error")), None)
    if start is None:
        return output.strip().splitlines()[-1] if output.strip() else "cmake failed"
    text = " ".join(line.strip() for line in lines[start:start + 8] if line.strip())
    return text[:400]


def probe_prefix_path(environ: Mapping[str, str], packages: Sequence[str], *, cmake: str,
                      timeout: float = PREFIX_TIMEOUT_S,
                      versions: Mapping[str, tuple[str, str]] | None = None,
                      ) -> tuple[PackageConfig, ...]:
    """Configure each package config found on CMAKE_PREFIX_PATH, one cmake run each in one
    build folder (the compilers are found once), until `timeout` seconds have passed.
    `versions`: package -> (version, where the tree asks for it), passed to find_package."""
    asked = dict(versions or {})
    entries = [e for e in environ.get("CMAKE_PREFIX_PATH", "").split(":") if e]
    todo = [(entry, package, config) for entry in entries
            for package, config in package_configs(Path(entry), packages)]
    if not todo:
        return ()
    began = time.monotonic()
    out: list[PackageConfig] = []
    with tempfile.TemporaryDirectory(prefix="rocmforge-prefix-") as tmp:
        source = Path(tmp) / "src"
        source.mkdir()
        (source / "CMakeLists.txt").write_text(_PROJECT)
        build = Path(tmp) / "build"
        for entry, package, config in todo:
            version, asked_by = asked.get(package, ("", ""))
            left = timeout - (time.monotonic() - began)
            if left <= 0.1:
                out.append(PackageConfig(entry=entry, package=package, config=str(config),
                                         configures=None, version=version, asked_by=asked_by))
                continue
            argv = [cmake, "-S", str(source), "-B", str(build), f"-DPROBE_PACKAGE={package}",
                    f"-DPROBE_ENTRY={entry}", f"-DPROBE_VERSION={version}", f"-U{package}_DIR"]
            try:
                done = subprocess.run(argv, env=dict(environ), capture_output=True, text=True,
                                      timeout=left, check=False)
            except subprocess.TimeoutExpired:
                out.append(PackageConfig(entry=entry, package=package, config=str(config),
                                         configures=None, version=version, asked_by=asked_by))
                continue
            except OSError as exc:
                out.append(PackageConfig(entry=entry, package=package, config=str(config),
                                         configures=None, error=str(exc)))
                continue
            ok = done.returncode == 0
            out.append(PackageConfig(entry=entry, package=package, config=str(config),
                                     configures=ok,
                                     error="" if ok else _error(done.stderr + done.stdout),
                                     version=version, asked_by=asked_by))
    return tuple(out)
