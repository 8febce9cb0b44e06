"""A build against TheRock's pip ROCm SDK: what the plan installs, exports and writes.

Owns: `SdkPlan` (the route: today's multi-arch index with a device-<target> extra per target, or
an older release's per-family index with the family filled in; the pinned version, the pip line
that installs it into the build venv, the requirement the torch wheel gets, the device packages
the install must hold, whether the venv already has the SDK and where), `sdk_plan()` from the
settings, `check_index_url()` (a malformed URL is bad input), `other_route()` (the sentence that
names the other kind of index), `sdk_env()` (the variables the SDK adds to the build
environment: the wheel's `+rocm<version>` local version and its runtime requirement), and
`init_module_text()`, the torch/_rocm_init.py that makes the wheel load the SDK's libraries
before torch's own (torch/__init__.py imports `_rocm_init` when it exists and calls
`initialize()`). Must not: run pip or the SDK (rocmforge.steps.rocm_sdk does).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from packaging.version import InvalidVersion, Version

from rocmforge.errors import UsageError

if TYPE_CHECKING:
    from rocmforge.knowledge.rocm_sdk import PreloadLibrary, SdkTable
    from rocmforge.probes.rocm import RocmInstall
    from rocmforge.settings import Settings

INIT_MODULE = "torch/_rocm_init.py"
# In the module's first line: how a later build knows the file is the kit's (and may remove it).
INIT_MARKER = "(written by rocmforge)"


SdkRouteName = Literal["multi-arch", "per-family"]
MULTI_ARCH: SdkRouteName = "multi-arch"
PER_FAMILY: SdkRouteName = "per-family"


@dataclass(frozen=True, kw_only=True)
class SdkPlan:
    route: SdkRouteName
    """MULTI_ARCH (one index, a device-<target> extra per target) or PER_FAMILY."""
    index: str
    family: str
    """The per-family route's family ("" on the multi-arch route)."""
    version: str
    requirement: str
    wheel_requires: str
    device_packages: tuple[str, ...]
    """rocm-sdk-device-<target> of every requested target (multi-arch route; () per family)."""
    preload: tuple[PreloadLibrary, ...]
    installed_root: str
    """The SDK root in the build venv (`rocm-sdk path --root`), "" before the rocm-sdk step."""
    route_note: str = ""
    """Why this route, when the settings did not name it (an older release's per-family index)."""

    @property
    def local_version(self) -> str:
        """The wheel's local version label: "rocm7.14.1"."""
        return f"rocm{self.version}"

    @property
    def pip_args(self) -> tuple[str, ...]:
        """What follows `python -m pip` in the rocm-sdk step (the exact line the plan shows)."""
        return ("install", "--index-url", self.index, self.requirement)

    def as_dict(self) -> dict[str, object]:
        return {"route": self.route, "index": self.index, "family": self.family,
                "version": self.version, "requirement": self.requirement,
                "wheel_requires": self.wheel_requires,
                "device_packages": list(self.device_packages), "root": self.installed_root}


# What SdkPlan.as_dict()'s empty values mean, in `invoke plan`'s settings row (the JSON keeps "").
EMPTY_MEANS = {
    "family": "none (the multi-arch index serves every family)",
    "device_packages": "none (the family's rocm-sdk-libraries package holds its targets' code)",
    "root": "from the rocm-sdk step (not installed yet)",
}


def shown(doc: Mapping[str, object]) -> str:
    """SdkPlan.as_dict() as `invoke plan` shows it: key=value, a list comma-joined, an empty
    value said in words (EMPTY_MEANS) rather than left blank."""
    parts = []
    for key, value in doc.items():
        text = ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
        parts.append(f"{key}={text or EMPTY_MEANS.get(key, '(none)')}")
    return "; ".join(parts)


def sdk_plan(settings: Settings, targets: Sequence[str], table: SdkTable,
             installed: RocmInstall | None) -> SdkPlan | None:
    """The SDK part of the plan (None when neither rocm_sdk nor rocm_sdk_version is set).
    rocm_sdk_version alone: the multi-arch index of today (an older release: its per-family
    index); rocm_sdk names another index: with {family} a per-family one, else a multi-arch one.
    `installed` is the install the probes selected; it is the SDK when it is a pip SDK (the
    venv's, on a later run)."""
    from rocmforge.knowledge.rocm_sdk import FAMILY_FIELD, family_for, processor_of

    if not settings.rocm_sdk and not settings.rocm_sdk_version:
        return None
    version = settings.rocm_sdk_version.strip()
    try:
        Version(version)
    except InvalidVersion:
        raise UsageError(
            f"rocm_sdk_version is {version!r}, not a version" if version else
            "rocm_sdk is set without rocm_sdk_version",
            "the build pins the SDK it installs (rocm[...]==<version>): the wheel's "
            "+rocm<version> suffix and its runtime requirement name it",
            "pass --rocm-sdk-version with the SDK release to build against, e.g. "
            "10.1.0a20260811 (`pip index versions rocm --pre --index-url "
            f"{table.multi_arch.index}` lists them)",
        ) from None
    url = settings.rocm_sdk.strip()
    note = ""
    if url:
        check_index_url(url)
    elif Version(version) < Version(table.first_multi_arch):
        url = table.per_family.index
        note = (f"ROCm SDK {version} predates the multi-arch index (its first release is "
                f"{table.first_multi_arch}): it comes from its family's per-family index")
    else:
        url = table.multi_arch.index
    processors = list(dict.fromkeys(processor_of(t) for t in targets))
    devices: tuple[str, ...] = ()
    if FAMILY_FIELD in url:
        family = family_for(processors, table)
        route, index = PER_FAMILY, url.replace(FAMILY_FIELD, family)
        requirement = table.per_family.requirement
        wheel_requires = table.per_family.wheel_requires
    else:
        family, route, index = "", MULTI_ARCH, url
        devices = tuple(table.package_of(p) for p in processors)
        extras = ",".join(table.extra_of(p) for p in processors)
        requirement = table.multi_arch.requirement.replace("{devices}", extras)
        wheel_requires = table.multi_arch.wheel_requires.replace("{devices}", extras)
    root = ""
    if installed is not None and installed.layout == "pip SDK" \
            and same_release(installed.version, version):
        root = str(installed.root)  # another version there: the rocm-sdk step replaces it
    return SdkPlan(route=route, index=index, family=family, version=version,
                   requirement=requirement.replace("{version}", version),
                   wheel_requires=wheel_requires.replace("{version}", version),
                   device_packages=devices, preload=table.preload, installed_root=root,
                   route_note=note)


def other_route(sdk: SdkPlan, table: SdkTable) -> str:
    """The sentence that sends a release the chosen index lacks to the other kind of index."""
    if sdk.route == MULTI_ARCH:
        return (f"a release before {table.first_multi_arch} is only on the per-family index of "
                f"its GPU family: --rocm-sdk {table.per_family.index}")
    if sdk.route_note:  # no --rocm-sdk: the version alone chose the family's index
        return (f"a release from {table.first_multi_arch} on is on the multi-arch index, which "
                "the build takes for such a --rocm-sdk-version")
    return (f"a release from {table.first_multi_arch} on is on the multi-arch index: drop "
            "--rocm-sdk (or pass the multi-arch index, without {family})")


def check_index_url(url: str) -> None:
    """UsageError unless `url` is a package index URL the kit can hand to pip: http(s) with a
    host, or file:, no spaces, and no {field} but {family}."""
    from urllib.parse import urlsplit

    from rocmforge.knowledge.rocm_sdk import FAMILY_FIELD

    problem = ""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        parts, problem = None, str(exc)
    if parts is None:
        pass
    elif parts.scheme not in ("http", "https", "file"):
        problem = "it does not start with http://, https:// or file:"
    elif parts.scheme != "file" and not parts.hostname:
        problem = "it names no host"
    elif any(c.isspace() for c in url):
        problem = "it holds a space"
    elif "{" in url.replace(FAMILY_FIELD, "") or "}" in url.replace(FAMILY_FIELD, ""):
        problem = "its only field may be {family}"
    if problem:
        raise UsageError(
            f"rocm_sdk is {url!r}, not a package index URL: {problem}",
            "pip installs the SDK from that index into the build venv; without --rocm-sdk the "
            "kit uses TheRock's multi-arch index",
            "drop --rocm-sdk (the default index), or pass the index URL of your mirror, e.g. "
            "https://rocm.nightlies.amd.com/whl-multi-arch/ (with {family} for a per-family "
            "index of an older release)",
        )


def same_release(found: str, pinned: str) -> bool:
    """Whether the SDK in the venv is the pinned release (PEP 440: 7.10.0a20251021 too)."""
    try:
        return Version(found) == Version(pinned)
    except InvalidVersion:
        return found == pinned


def sdk_env(sdk: SdkPlan, torch_version: str) -> list[tuple[str, str]]:
    """The build variables of an SDK build: the runtime requirement PyTorch's setup adds to the
    wheel, the local version (when the torch version is known), and the SDK's CMake packages."""
    items = [("PYTORCH_EXTRA_INSTALL_REQUIREMENTS", sdk.wheel_requires)]
    if torch_version:
        public = torch_version.split("+", 1)[0]
        items.append(("PYTORCH_BUILD_VERSION", f"{public}+{sdk.local_version}"))
        items.append(("PYTORCH_BUILD_NUMBER", "1"))
    if sdk.installed_root:
        items.append(("CMAKE_PREFIX_PATH", f"{sdk.installed_root}/lib/cmake"))
    return items


def init_module_text(sdk: SdkPlan) -> str:
    """torch/_rocm_init.py for a wheel built against this SDK (the kit's own loader)."""
    names = "".join(f"    ({lib.name!r}, {lib.folder!r}, {lib.file!r}),\n" for lib in sdk.preload)
    return f'''"""Load the pip ROCm SDK libraries torch was built against {INIT_MARKER}.

torch/__init__.py imports this module when it is there and calls initialize() before torch._C,
so the SDK's libraries are found whatever LD_LIBRARY_PATH says. A library the installed SDK
does not ship is skipped (an older release has no libhipfile); the HIP runtime is required.
"""

import ctypes
import glob
import os
import sys
import warnings

SDK_VERSION = {sdk.version!r}
SDK_INDEX = {sdk.index!r}
SDK_REQUIREMENT = {sdk.wheel_requires!r}
# (short name, folder inside a _rocm_sdk_* package, file glob), in load order.
LIBRARIES = (
{names})


def _sdk_packages():
    found = []
    for entry in sys.path:
        found += sorted(p for p in glob.glob(os.path.join(entry or ".", "_rocm_sdk_*"))
                        if os.path.isdir(p))
    return found


def _installed_version():
    try:
        from importlib import metadata

        return metadata.version("rocm")
    except Exception:
        return ""


def initialize():
    packages = _sdk_packages()
    loaded = []
    for name, folder, pattern in LIBRARIES:
        for package in packages:
            matches = sorted(glob.glob(os.path.join(package, folder, pattern)))
            if matches:
                ctypes.CDLL(matches[0], mode=ctypes.RTLD_GLOBAL)
                loaded.append(name)
                break
    if "amdhip64" not in loaded:
        raise ImportError(
            "torch was built against the pip ROCm SDK " + SDK_VERSION + ", whose HIP runtime "
            "(libamdhip64) is not installed here. Install it: pip install --index-url "
            + SDK_INDEX + " '" + SDK_REQUIREMENT + "'")
    installed = _installed_version()
    if installed and installed != SDK_VERSION:
        warnings.warn("torch was built against ROCm SDK " + SDK_VERSION + " but rocm "
                      + installed + " is installed", stacklevel=2)
'''
