"""Probe: conditions that break a PyTorch ROCm build long after it starts, read before it does.

Each comes from failures users really hit (tests/failures): CUDA's thrust shadowing rocThrust
(ROCm/pytorch#361), a second HIP or HSA runtime on the loader or link path (mixed installs),
CMake 4 against submodules that still declare `cmake_minimum_required` below 3.5, setuptools
82 against setup.py files that import `pkg_resources` (pytorch/vision#9380), and a CUDA
`triton` or a non-ROCm torch already in the build venv. Owns: reading the folders, files and
variables that show them. Must not: run programs, write anything or judge (plan/hazard_rows.py
turns these facts into doctor rows).
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rocmforge.probes.pip_pin import PinReport

# The HIP runtime and the HSA runtime: one copy each, from the install the build uses.
RUNTIME_LIBRARIES = ("libamdhip64.so", "libhsa-runtime64.so")
# CMake 4 removed compatibility with projects that declare a minimum below this.
CMAKE4_FLOOR = (3, 5)
_MINIMUM = re.compile(r"cmake_minimum_required\s*\(\s*VERSION\s+(\d+(?:\.\d+)*)", re.IGNORECASE)
_PKG_RESOURCES = re.compile(r"^\s*(?:import pkg_resources|from pkg_resources import)", re.M)
_SKIP_DIRS = {".git", "build", "node_modules", "__pycache__", "test", "tests", "docs", "examples"}


@dataclass(frozen=True, kw_only=True)
class Found:
    """A file or folder that shows a hazard, and how it is reached (a variable, a config)."""

    path: Path
    via: str


@dataclass(frozen=True, kw_only=True)
class Hazards:
    cuda_thrust: tuple[Found, ...] = ()
    """Include folders with a thrust/ that is CUDA's (it has no system/hip)."""
    rocthrust: Path | None = None
    """The install's rocThrust (thrust/system/hip), or None."""
    runtime_copies: tuple[Found, ...] = ()
    """HIP/HSA runtime libraries on the loader or link path that are not the install's."""
    cmake_floors: tuple[tuple[str, str], ...] = ()
    """(CMakeLists.txt relative to the checkout, declared minimum) below 3.5."""
    tree_read: bool = False
    pkg_resources: tuple[str, ...] = ()
    """setup.py files (relative to the work dir's src/) that import pkg_resources."""
    venv_foreign: tuple[str, ...] = ()
    """'triton 3.4.0' / 'torch 2.9.0+cu128' in the build venv: not ROCm's."""
    venv_setuptools: str = ""
    """The build venv's setuptools version ('' when there is no venv or no setuptools)."""
    venv_torch: str = ""
    """The torch version installed in the build venv ('' when none)."""
    built_torch: str = ""
    """The torch version of the wheel dist/manifest.json names ('' without a finished build)."""
    pins: tuple[PinReport, ...] = ()
    """Each venv the kit pinned (the build venv, those `invoke install` filled) as it is now."""


def probe_hazards(*, rocm_root: Path | None, checkout: Path | None, sources: Path | None,
                  venv: Path | None, environ: Mapping[str, str], root: Path = Path("/"),
                  dist: Path | None = None, state: Path | None = None) -> Hazards:
    return Hazards(
        cuda_thrust=tuple(cuda_thrust_folders(environ, root)),
        rocthrust=rocthrust(rocm_root),
        runtime_copies=tuple(runtime_copies(rocm_root, environ, root)),
        cmake_floors=tuple(cmake_floors(checkout)) if checkout else (),
        tree_read=bool(checkout and checkout.is_dir()),
        pkg_resources=tuple(pkg_resources_users(sources)) if sources else (),
        venv_foreign=tuple(venv_foreign(venv)) if venv else (),
        venv_setuptools=dist_version(venv, "setuptools") if venv else "",
        venv_torch=dist_version(venv, "torch") if venv else "",
        built_torch=manifest_torch(dist) if dist else "",
        pins=probe_pins(venv, state, environ),
    )


def probe_pins(venv: Path | None, state: Path | None,
               environ: Mapping[str, str]) -> tuple[PinReport, ...]:
    """The pin of the build venv and of every venv the work dir's list names (pip_pin)."""
    from rocmforge.probes.pip_pin import pin_report, pinned_venvs

    venvs = [*([venv] if venv else []), *(pinned_venvs(state) if state else [])]
    reports = (pin_report(v, environ) for v in dict.fromkeys(venvs))
    return tuple(r for r in reports if r is not None)


def manifest_torch(dist: Path) -> str:
    """The version of the torch wheel dist/manifest.json names ('' when there is none)."""
    import json

    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    try:
        doc = json.loads((dist / "manifest.json").read_text(encoding="utf-8"))
        wheel = str(doc["wheels"]["torch"])
        return str(parse_wheel_filename(wheel)[1])
    except (OSError, ValueError, KeyError, TypeError, InvalidWheelFilename):
        return ""


# --- include path ---------------------------------------------------------------------------

def include_folders(environ: Mapping[str, str], root: Path) -> list[Found]:
    """Where a compile looks for `<thrust/...>` besides its -I flags: CPATH, CPLUS_INCLUDE_PATH,
    C_INCLUDE_PATH, then the system folders."""
    out: list[Found] = []
    for name in ("CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH"):
        out += [Found(path=Path(p), via=name) for p in environ.get(name, "").split(":") if p]
    out += [Found(path=root / p, via="system include folder")
            for p in ("usr/local/include", "usr/include", "usr/local/cuda/include")]
    return out


def cuda_thrust_folders(environ: Mapping[str, str], root: Path) -> Iterable[Found]:
    seen: set[Path] = set()
    for folder in include_folders(environ, root):
        thrust = folder.path / "thrust"
        if not (thrust / "version.h").is_file() or (thrust / "system" / "hip").is_dir():
            continue
        real = thrust.resolve()
        if real not in seen:
            seen.add(real)
            yield Found(path=thrust, via=folder.via)


def rocthrust(rocm_root: Path | None) -> Path | None:
    if rocm_root is None:
        return None
    for include in (rocm_root / "include", rocm_root / "include" / "rocthrust"):
        if (include / "thrust" / "system" / "hip").is_dir():
            return include / "thrust"
    return None


# --- loader and link path -------------------------------------------------------------------

def loader_folders(environ: Mapping[str, str], root: Path) -> list[Found]:
    """LD_LIBRARY_PATH, LIBRARY_PATH (the link path), then /etc/ld.so.conf and its includes."""
    out: list[Found] = []
    for name in ("LD_LIBRARY_PATH", "LIBRARY_PATH"):
        out += [Found(path=Path(p), via=name) for p in environ.get(name, "").split(":") if p]
    out += [Found(path=Path(p), via=f"ld.so.conf ({source})")
            for p, source in _ld_so_conf(root / "etc" / "ld.so.conf", root, depth=0)]
    return out


def _ld_so_conf(path: Path, root: Path, depth: int) -> Iterable[tuple[str, str]]:
    if depth > 3:
        return
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("include "):
            pattern = line.split(None, 1)[1].strip()
            pattern = str(root / pattern.lstrip("/")) if pattern.startswith("/") else str(
                path.parent / pattern)
            for match in sorted(glob.glob(pattern)):
                yield from _ld_so_conf(Path(match), root, depth + 1)
        else:
            yield str(root / line.lstrip("/")), str(path.relative_to(root)) if path.is_relative_to(
                root) else str(path)


def runtime_copies(rocm_root: Path | None, environ: Mapping[str, str], root: Path
                   ) -> Iterable[Found]:
    """The HIP/HSA runtimes in the loader and link folders whose real file is not under the
    selected install (for a distro install at /usr: not under /usr)."""
    if rocm_root is None:
        return
    own = rocm_root.resolve()
    seen: set[Path] = set()
    for folder in loader_folders(environ, root):
        for name in RUNTIME_LIBRARIES:
            for match in sorted(folder.path.glob(name + "*")):
                real = match.resolve()
                if real in seen or not real.is_file():
                    continue
                seen.add(real)
                if not real.is_relative_to(own):
                    yield Found(path=match, via=folder.via)


# --- the checkout ---------------------------------------------------------------------------

def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def cmake_floors(checkout: Path, max_depth: int = 4) -> Iterable[tuple[str, str]]:
    """Every CMakeLists.txt of the checkout and its submodules (tests, docs and examples
    left out: a build does not configure them) declaring a minimum below 3.5."""
    if not checkout.is_dir():
        return
    base = len(checkout.parts)
    for folder, dirs, files in os.walk(checkout):
        depth = len(Path(folder).parts) - base
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and depth < max_depth)
        if "CMakeLists.txt" not in files:
            continue
        path = Path(folder) / "CMakeLists.txt"
        try:
            head = path.read_text(errors="replace")[:20000]
        except OSError:
            continue
        found = _MINIMUM.search(head)
        if found and version_tuple(found.group(1))[:2] < CMAKE4_FLOOR:
            yield str(path.relative_to(checkout)), found.group(1)


def pkg_resources_users(sources: Path) -> Iterable[str]:
    """The setup.py of each checkout under the work dir's src/ (PyTorch, the companions) that
    imports pkg_resources."""
    if not sources.is_dir():
        return
    for setup in sorted(sources.glob("*/setup.py")):
        try:
            if _PKG_RESOURCES.search(setup.read_text(errors="replace")):
                yield str(setup.relative_to(sources))
        except OSError:
            continue


# --- the build venv -------------------------------------------------------------------------

def venv_foreign(venv: Path) -> Iterable[str]:
    """A CUDA `triton` (PyPI's; ROCm's is pytorch-triton-rocm) or a torch whose local version
    is not +rocm in the build venv's site-packages."""
    for info in sorted(venv.glob("lib/python3*/site-packages/*.dist-info")):
        name, _, version = info.name.removesuffix(".dist-info").partition("-")
        if name == "triton":
            yield f"triton {version}"
        elif name == "torch" and "+rocm" not in version and "rocm" not in version:
            yield f"torch {version}"


def dist_version(venv: Path, name: str) -> str:
    for info in sorted(venv.glob(f"lib/python3*/site-packages/{name}-*.dist-info")):
        return info.name.removesuffix(".dist-info").partition("-")[2]
    return ""


def describe(found: Sequence[Found]) -> str:
    return "; ".join(f"{f.path} (via {f.via})" for f in found)
