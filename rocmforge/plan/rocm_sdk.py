"""A build against TheRock's pip ROCm SDK: what the plan installs, exports and writes.

Owns: `SdkPlan` (the index with the family filled in, the pinned version, the requirement pip
installs into the build venv, the requirement the torch wheel gets, whether the venv already has
the SDK and where), `sdk_plan()` from the settings, `sdk_env()` (the variables the SDK adds to
the build environment: the wheel's `+rocm<version>` local version and its runtime requirement),
and `init_module_text()`, the torch/_rocm_init.py that makes the wheel load the SDK's libraries
before torch's own (torch/__init__.py imports `_rocm_init` when it exists and calls
`initialize()`). Must not: run pip or the SDK (rocmforge.steps.rocm_sdk does).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from rocmforge.errors import UsageError

if TYPE_CHECKING:
    from rocmforge.knowledge.rocm_sdk import SdkTable
    from rocmforge.probes.rocm import RocmInstall
    from rocmforge.settings import Settings

INIT_MODULE = "torch/_rocm_init.py"
# In the module's first line: how a later build knows the file is the kit's (and may remove it).
INIT_MARKER = "(written by rocmforge)"


@dataclass(frozen=True, kw_only=True)
class SdkPlan:
    index: str
    family: str
    version: str
    requirement: str
    wheel_requires: str
    preload: tuple[str, ...]
    installed_root: str
    """The SDK root in the build venv (`rocm-sdk path --root`), "" before the rocm-sdk step."""

    @property
    def local_version(self) -> str:
        """The wheel's local version label: "rocm7.14.1"."""
        return f"rocm{self.version}"

    def as_dict(self) -> dict[str, object]:
        return {"index": self.index, "family": self.family, "version": self.version,
                "requirement": self.requirement, "wheel_requires": self.wheel_requires,
                "root": self.installed_root}


def sdk_plan(settings: Settings, targets: Sequence[str], table: SdkTable,
             installed: RocmInstall | None) -> SdkPlan | None:
    """The SDK part of the plan (None without the rocm_sdk setting). `installed` is the install
    the probes selected; it is the SDK when it is a pip SDK (the venv's, on a later run)."""
    from rocmforge.knowledge.rocm_sdk import sdk_index_for

    if not settings.rocm_sdk:
        if settings.rocm_sdk_version:
            raise UsageError(
                "rocm_sdk_version is set but rocm_sdk is not",
                "the version pins the pip ROCm SDK that rocm_sdk (an index URL) installs",
                "pass --rocm-sdk URL as well, or drop --rocm-sdk-version",
            )
        return None
    version = settings.rocm_sdk_version.strip()
    try:
        Version(version)
    except InvalidVersion:
        raise UsageError(
            f"rocm_sdk_version is {version!r}, not a version" if version else
            "rocm_sdk is set without rocm_sdk_version",
            "the build pins the SDK it installs (rocm[libraries,devel]==<version>): the wheel's "
            "+rocm<version> suffix and its runtime requirement name it",
            "pass --rocm-sdk-version with the SDK release to build against, e.g. 7.14.1",
        ) from None
    if not settings.rocm_sdk.startswith(("http://", "https://", "file:")):
        raise UsageError(
            f"rocm_sdk is {settings.rocm_sdk!r}, not a package index URL",
            "pip installs the SDK wheels from that index into the build venv",
            "pass --rocm-sdk https://rocm.nightlies.amd.com/v2/{family}/ (or your mirror)",
        )
    index, family = sdk_index_for(settings.rocm_sdk, targets, table)
    root = ""
    if installed is not None and installed.layout == "pip SDK" \
            and same_release(installed.version, version):
        root = str(installed.root)  # another version there: the rocm-sdk step replaces it
    return SdkPlan(index=index, family=family, version=version,
                   requirement=table.requirement_for(version),
                   wheel_requires=table.wheel_requirement_for(version),
                   preload=table.preload, installed_root=root)


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
    names = "".join(f"    {name!r},\n" for name in sdk.preload)
    return f'''"""Load the pip ROCm SDK libraries torch was built against {INIT_MARKER}.

torch/__init__.py imports this module when it is there and calls initialize() before torch._C,
so the SDK's libraries are found whatever LD_LIBRARY_PATH says.
"""

import ctypes
import glob
import os
import sys
import warnings

SDK_VERSION = {sdk.version!r}
SDK_INDEX = {sdk.index!r}
LIBRARIES = (
{names})


def _library_dirs():
    found = []
    for entry in sys.path:
        found += sorted(glob.glob(os.path.join(entry or ".", "_rocm_sdk_*", "lib")))
    return found


def _installed_version():
    try:
        from importlib import metadata

        return metadata.version("rocm")
    except Exception:
        return ""


def initialize():
    folders = _library_dirs()
    loaded = []
    for name in LIBRARIES:
        for folder in folders:
            matches = sorted(glob.glob(os.path.join(folder, "lib" + name + ".so*")))
            if matches:
                ctypes.CDLL(matches[0], mode=ctypes.RTLD_GLOBAL)
                loaded.append(name)
                break
    if "amdhip64" not in loaded:
        raise ImportError(
            "torch was built against the pip ROCm SDK " + SDK_VERSION + ", whose HIP runtime "
            "(libamdhip64) is not installed here. Install it: pip install --index-url "
            + SDK_INDEX + " 'rocm[libraries]==" + SDK_VERSION + "'")
    installed = _installed_version()
    if installed and installed != SDK_VERSION:
        warnings.warn("torch was built against ROCm SDK " + SDK_VERSION + " but rocm "
                      + installed + " is installed", stacklevel=2)
'''
