"""ROCm and PyTorch release facts: config/rocm.toml and config/pytorch.toml as frozen records.

Owns: `RocmRelease`, `PytorchRelease`, their loaders, and the lookups `rocm_release_for()` (a
ROCm version string -> its major.minor row, or the nearest lower one, flagged) and
`pytorch_release_for()` (a tag, branch, version or commit, and the tree's version.txt when a
checkout exists -> its release row, and the PyTorch version the ref really is, "" when only the
checkout can tell). Must not: probe the machine, run git, read a checkout (the caller passes
version.txt's text), or judge compilers (that is `compiler_policy`).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from rocmforge.errors import ConfigError, UsageError
from rocmforge.knowledge.toml_files import check_keys, config_dir, expect_type, read_toml

ROCM_FILE = "rocm.toml"
PYTORCH_FILE = "pytorch.toml"
BUILD_STYLES = ("setup.py", "build")

_VERSION_RE = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?")
_MINOR_KEY_RE = re.compile(r"^\d+\.\d+$")
_TORCH_REF_RE = re.compile(
    r"^(?:refs/(?:tags|heads)/)?(?:v|release/|orig/release/)?(\d+)\.(\d+)(?:[.\-+].*)?$"
)
# A release tag (or a bare version) names the PyTorch version itself: v2.9.1, 2.9.1, v2.13.0-rc2.
_TORCH_TAG_RE = re.compile(r"^(?:refs/tags/)?v?(\d+\.\d+(?:\.\d+)?)(?:-rc\d+)?$")


@dataclass(frozen=True, kw_only=True)
class RocmRelease:
    """One ROCm major.minor line and the host compilers the kit recommends with it."""

    version: str
    """major.minor, e.g. "7.0"."""
    llvm_major: int
    """Major of the bundled LLVM (decides which gfx names clang accepts); 0 = not in the cited
    sources (the install's own clang is probed instead)."""
    released: str
    """Date of the x.y.0 release, "" when not in the cited sources."""
    gcc_recommended: tuple[int, ...]
    clang_recommended: tuple[int, ...]
    gcc_warn_from: int
    """GCC majors from this one up are flagged WARN with this ROCm."""
    llvm_version: str = ""
    note: str = ""
    hip: str = ""
    """HIP's major.minor in this release ("7.15" for ROCm 10.0): the row's own major.minor up
    to 7.x, the `hip` key from 10.0 on; "" = not in the cited sources."""
    hip_source: str = ""
    """"table" when the row states it, "same as ROCm" when it follows the row's version."""
    approximate: bool = False
    """True when the requested version was not in the table and this is the nearest lower row."""
    requested: str = ""
    """The version string that was looked up (set by rocm_release_for)."""

    @property
    def key(self) -> tuple[int, int]:
        return _minor_key(self.version)


@dataclass(frozen=True, kw_only=True)
class PytorchRelease:
    """One PyTorch major.minor line: what building it from source needs."""

    version: str
    """major.minor, e.g. "2.9"."""
    python: str
    """Supported interpreters as a PEP 440 specifier set (">=3.10,<3.15")."""
    cxx_std: int
    rocm: tuple[str, ...]
    """ROCm versions with official wheel indexes, oldest first."""
    build_style: str
    """"setup.py" or "build" (python -m build --wheel --no-isolation)."""
    scikit_build_core: bool
    triton_pin_files: tuple[str, ...]
    """Pin files relative to the checkout, in preference order."""
    triton_version_file: str
    triton_repo: str
    triton_wheel: str
    """Distribution name of the ROCm Triton wheel ("pytorch-triton-rocm" or "triton-rocm")."""
    gcc_min: str
    clang_min: int
    """0 = the release has no configure-time Clang check."""
    cmake_min: str
    rocm_stable: str = ""
    triton_version: str = ""
    """Expected Triton version (a hint; the checkout's triton_version.txt decides)."""
    released: str = ""
    tracks_main: bool = False
    """True when a ref like main/nightly/a commit/an unknown newer version was mapped here."""
    requested: str = ""
    ref_version: str = ""
    """The PyTorch version the ref is: its version.txt when given, else the version a release
    tag names ("v2.9.1" -> "2.9.1"); "" for a branch or commit before its checkout exists."""
    rocm_min: str = ""
    """The oldest ROCm the checkout's LoadHIP.cmake accepts (a FATAL_ERROR below it), "" when
    it has none or before a checkout: only the tree says it (plan.pytorch_facts)."""
    rocm_min_source: str = ""
    """Where rocm_min was read ("tree: cmake/public/LoadHIP.cmake:212")."""
    cmake_min_source: str = ""
    """Where cmake_min was read when not from the table or the kit's own checkout: a tree
    placed in the checkout folder by hand ("src/pytorch/CMakeLists.txt:1, a tree no lock file
    names"); "" otherwise."""

    @property
    def label(self) -> str:
        """How messages name this PyTorch: its own version, never a branch name as a version."""
        if self.ref_version and self.tracks_main:
            return (f"PyTorch {self.ref_version} (newer than the kit's table; its newest row, "
                    f"{self.version}, fills what the tree does not say)")
        if self.ref_version:
            return f"PyTorch {self.ref_version}"
        if self.tracks_main:
            return (f"PyTorch at {self.requested!r} (its version.txt decides once checked out; "
                    f"until then the newest table row, {self.version}, is an estimate)")
        return f"PyTorch {self.version}"

    @property
    def key(self) -> tuple[int, int]:
        return _minor_key(self.version)

    @property
    def python_specifier(self) -> SpecifierSet:
        return SpecifierSet(self.python)


# ------------------------------------------------------------------------------------ loaders


def load_rocm_releases(directory: str | Path | None = None) -> Mapping[str, RocmRelease]:
    """rocm.toml by major.minor, oldest first (cached per resolved directory)."""
    return _load_rocm(config_dir(directory).resolve())


def load_pytorch_releases(directory: str | Path | None = None) -> Mapping[str, PytorchRelease]:
    """pytorch.toml by major.minor, oldest first (cached per resolved directory)."""
    return _load_pytorch(config_dir(directory).resolve())


def _release_tables(path: Path) -> Iterator[tuple[str, dict[str, Any], str]]:
    """(major.minor, its table, where) for each [release."X.Y"] of a release file, checked."""
    doc = read_toml(path)
    check_keys(doc, where=str(path), required=("release",))
    table = expect_type(doc["release"], dict, where=f"{path}: [release]")
    for version, raw in table.items():
        where = f'{path}: [release."{version}"]'
        _check_minor_key(version, where=where)
        yield version, expect_type(raw, dict, where=where), where


@functools.lru_cache(maxsize=16)
def _load_rocm(directory: Path) -> Mapping[str, RocmRelease]:
    path = directory / ROCM_FILE
    rows: list[RocmRelease] = []
    for version, raw, where in _release_tables(path):
        check_keys(
            raw,
            where=where,
            required=("llvm_major", "released", "gcc_recommended", "clang_recommended",
                      "gcc_warn_from"),
            optional=("llvm_version", "note", "hip"),
        )
        hip = expect_type(raw.get("hip", ""), str, where=f"{where}.hip")
        if hip and not _MINOR_KEY_RE.match(hip):
            raise ConfigError(f'{where}.hip = "{hip}" is not a major.minor version',
                              "it names the HIP release this ROCm ships, like \"7.15\"",
                              "write it as major.minor, or remove it when unknown")
        # Up to ROCm 7.x HIP carried ROCm's own major.minor; from 10.0 only a stated value counts.
        same = not hip and _minor_key(version)[0] < 10
        rows.append(
            RocmRelease(
                version=version,
                llvm_major=_nonnegative_int(raw["llvm_major"], where=f"{where}.llvm_major"),
                released=_date(raw["released"], where=f"{where}.released"),
                gcc_recommended=_int_tuple(raw["gcc_recommended"],
                                           where=f"{where}.gcc_recommended"),
                clang_recommended=_int_tuple(raw["clang_recommended"],
                                             where=f"{where}.clang_recommended"),
                gcc_warn_from=_positive_int(raw["gcc_warn_from"], where=f"{where}.gcc_warn_from"),
                llvm_version=expect_type(raw.get("llvm_version", ""), str,
                                         where=f"{where}.llvm_version"),
                note=expect_type(raw.get("note", ""), str, where=f"{where}.note"),
                hip=version if same else hip,
                hip_source="same as ROCm" if same else ("table" if hip else ""),
            )
        )
    if not rows:
        raise ConfigError(f"{path} lists no releases", "the kit needs at least one",
                          "restore the file from git")
    rows.sort(key=lambda row: row.key)
    return MappingProxyType({row.version: row for row in rows})


_TORCH_REQUIRED = (
    "python", "cxx_std", "rocm", "build_style", "scikit_build_core", "triton_pin_files",
    "triton_version_file", "triton_repo", "triton_wheel", "gcc_min", "clang_min", "cmake_min",
)
_TORCH_OPTIONAL = ("rocm_stable", "triton_version", "released")


@functools.lru_cache(maxsize=16)
def _load_pytorch(directory: Path) -> Mapping[str, PytorchRelease]:
    path = directory / PYTORCH_FILE
    rows: list[PytorchRelease] = []
    for version, raw, where in _release_tables(path):
        check_keys(raw, where=where, required=_TORCH_REQUIRED, optional=_TORCH_OPTIONAL)
        python = expect_type(raw["python"], str, where=f"{where}.python")
        try:
            SpecifierSet(python)
        except InvalidSpecifier:
            raise ConfigError(
                f"{where}.python is {python!r}, not a PEP 440 specifier set",
                "the kit checks the build interpreter against it",
                'write it like ">=3.10,<3.15"',
            ) from None
        cxx_std = expect_type(raw["cxx_std"], int, where=f"{where}.cxx_std")
        if cxx_std not in (17, 20, 23):
            raise ConfigError(f"{where}.cxx_std is {cxx_std}", "PyTorch uses C++17 or C++20",
                              "write 17 or 20")
        build_style = expect_type(raw["build_style"], str, where=f"{where}.build_style")
        if build_style not in BUILD_STYLES:
            raise ConfigError(
                f'{where}.build_style is "{build_style}"',
                "the kit knows two ways to build a wheel",
                f"use one of: {', '.join(BUILD_STYLES)}",
            )
        rows.append(
            PytorchRelease(
                version=version,
                python=python,
                cxx_std=cxx_std,
                rocm=_version_tuple(raw["rocm"], where=f"{where}.rocm"),
                build_style=build_style,
                scikit_build_core=expect_type(raw["scikit_build_core"], bool,
                                              where=f"{where}.scikit_build_core"),
                triton_pin_files=_str_tuple(raw["triton_pin_files"],
                                            where=f"{where}.triton_pin_files", nonempty=True),
                triton_version_file=expect_type(raw["triton_version_file"], str,
                                                where=f"{where}.triton_version_file"),
                triton_repo=expect_type(raw["triton_repo"], str, where=f"{where}.triton_repo"),
                triton_wheel=expect_type(raw["triton_wheel"], str,
                                         where=f"{where}.triton_wheel"),
                gcc_min=_version_str(raw["gcc_min"], where=f"{where}.gcc_min"),
                clang_min=expect_type(raw["clang_min"], int, where=f"{where}.clang_min"),
                cmake_min=_version_str(raw["cmake_min"], where=f"{where}.cmake_min"),
                rocm_stable=expect_type(raw.get("rocm_stable", ""), str,
                                        where=f"{where}.rocm_stable"),
                triton_version=expect_type(raw.get("triton_version", ""), str,
                                           where=f"{where}.triton_version"),
                released=_date(raw.get("released", ""), where=f"{where}.released"),
            )
        )
    if not rows:
        raise ConfigError(f"{path} lists no releases", "the kit needs at least one",
                          "restore the file from git")
    rows.sort(key=lambda row: row.key)
    return MappingProxyType({row.version: row for row in rows})


# ------------------------------------------------------------------------------------ lookups


def rocm_release_for(version: str, directory: str | Path | None = None) -> RocmRelease:
    """The row for a ROCm version ("7.0.2", "6.4.43483-a187df25", "7.2"); nearest lower if unknown.

    A version between or above known rows maps to the nearest lower row with `approximate=True`;
    one older than every row is refused (UsageError).
    """
    releases = load_rocm_releases(directory)
    match = _VERSION_RE.match(version.strip())
    if not match:
        raise UsageError(
            f'"{version}" is not a ROCm version',
            "ROCm versions look like 6.4 or 7.0.2",
            "pass the version printed in <rocm>/.info/version, or check --rocm-path",
        )
    key = (int(match.group(1)), int(match.group(2)))
    exact = releases.get(f"{key[0]}.{key[1]}")
    if exact is not None:
        return dataclasses.replace(exact, requested=version.strip())
    lower = [row for row in releases.values() if row.key < key]
    if not lower:
        oldest = next(iter(releases.values()))
        raise UsageError(
            f"ROCm {version.strip()} is older than any release the kit knows ({oldest.version})",
            "the kit has no compiler or target facts for it, and PyTorch releases it can build "
            "need a newer ROCm",
            f"install ROCm {oldest.version} or newer and point --rocm-path at it",
        )
    return dataclasses.replace(lower[-1], approximate=True, requested=version.strip())


def pytorch_release_for(
    ref_or_version: str,
    directory: str | Path | None = None,
    *,
    tree_version: str = "",
) -> PytorchRelease:
    """The row for a PyTorch ref: "v2.9.1", "2.9.1", "release/2.9" -> 2.9.

    `tree_version` is the checkout's version.txt ("2.9.1", "2.10.0a0"); when given it decides
    the row and `ref_version`, whatever the ref is called (a branch "oom" holding 2.9.1 is 2.9).
    Without it, a release tag names its version; "main", "nightly", a commit hash or any other
    branch map to the newest row with tracks_main=True and ref_version "" (the version is not
    known until the checkout exists), without error. A version newer than the table maps to the
    newest row (tracks_main=True); one older than the table is refused (UsageError).
    """
    releases = load_pytorch_releases(directory)
    newest = list(releases.values())[-1]
    text = ref_or_version.strip()
    if tree_version.strip():
        stated = tree_version.strip()
        match = _VERSION_RE.match(stated)
        if not match:
            raise UsageError(
                f"version.txt says {stated!r}, which is not a PyTorch version",
                "a checkout's version.txt decides which release's facts apply",
                "check the checkout (git -C <src> status) or pass a release tag with --ref",
            )
        return _row_for(releases, (int(match.group(1)), int(match.group(2))), text,
                        shown=f"version.txt {stated}", ref_version=stated)
    match = _TORCH_REF_RE.match(text.lower())
    if match:
        tag = _TORCH_TAG_RE.match(text.lower())
        return _row_for(releases, (int(match.group(1)), int(match.group(2))), text,
                        shown=repr(text), ref_version=tag.group(1) if tag else "")
    # main, nightly, a commit, or any other branch: the newest row (no error by design).
    return dataclasses.replace(newest, tracks_main=True, requested=text)


def _row_for(
    releases: Mapping[str, PytorchRelease],
    key: tuple[int, int],
    requested: str,
    *,
    shown: str,
    ref_version: str,
) -> PytorchRelease:
    newest = list(releases.values())[-1]
    row = releases.get(f"{key[0]}.{key[1]}")
    if row is not None:
        return dataclasses.replace(row, requested=requested, ref_version=ref_version)
    if key > newest.key:
        return dataclasses.replace(newest, tracks_main=True, requested=requested,
                                   ref_version=ref_version)
    oldest = next(iter(releases.values()))
    raise UsageError(
        f"PyTorch {key[0]}.{key[1]} (from {shown}) is older than the kit supports",
        f"the kit has build facts for PyTorch {oldest.version} .. {newest.version}",
        f"build a newer release, e.g. --ref v{newest.version}.0",
    )


# ------------------------------------------------------------------------------------ helpers


def _minor_key(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def _check_minor_key(version: str, *, where: str) -> None:
    if not _MINOR_KEY_RE.match(version):
        raise ConfigError(
            f"{where}: {version!r} is not a major.minor version",
            "release rows are keyed by major.minor; patch releases share their row",
            'write the key like "7.0"',
        )


def _positive_int(value: Any, *, where: str) -> int:
    number = expect_type(value, int, where=where)
    if number <= 0:
        raise ConfigError(f"{where} is {number}", "it must be a positive number",
                          "fix the value")
    return int(number)


def _nonnegative_int(value: Any, *, where: str) -> int:
    number = expect_type(value, int, where=where)
    if number < 0:
        raise ConfigError(f"{where} is {number}", "it must be 0 (unknown) or a positive number",
                          "fix the value")
    return int(number)


def _int_tuple(value: Any, *, where: str) -> tuple[int, ...]:
    items = expect_type(value, list, where=where)
    for index, item in enumerate(items):
        _positive_int(item, where=f"{where}[{index}]")
    return tuple(items)


def _str_tuple(value: Any, *, where: str, nonempty: bool = False) -> tuple[str, ...]:
    items = expect_type(value, list, where=where)
    for index, item in enumerate(items):
        expect_type(item, str, where=f"{where}[{index}]")
    if nonempty and not items:
        raise ConfigError(f"{where} is empty", "the kit needs at least one entry",
                          "list at least one")
    return tuple(items)


def _version_str(value: Any, *, where: str) -> str:
    text = expect_type(value, str, where=where)
    if not re.fullmatch(r"\d+(\.\d+){0,2}", text):
        raise ConfigError(f"{where} is {text!r}", "it must be a dotted version",
                          'write it like "3.18" or "9.3"')
    return text


def _version_tuple(value: Any, *, where: str) -> tuple[str, ...]:
    items = _str_tuple(value, where=where)
    for index, item in enumerate(items):
        _version_str(item, where=f"{where}[{index}]")
    return items


def _date(value: Any, *, where: str) -> str:
    text = expect_type(value, str, where=where)
    if text and not re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", text):
        raise ConfigError(f"{where} is {text!r}", "dates are written YYYY-MM-DD (or YYYY-MM)",
                          'write it like "2025-09-16", or "" when unknown')
    return text
