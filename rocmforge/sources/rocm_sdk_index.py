"""Asking a pip ROCm SDK index, before any step, whether it holds what the build will install.

Owns: `check_sdk_index()`: one simple-index page (PEP 691 JSON or PEP 503 HTML; a file: index
is read from disk) for `rocm` and one for each device package the plan names, each checked for
the pinned version; the failures as one-paragraph errors: bad input (exit 2) when the index
answers without the project, the version or a target's device package, the environment (exit 3)
when it cannot be read. Must not: choose the route, the requirement or the packages
(rocmforge.plan.rocm_sdk does), or install anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

from rocmforge.errors import EnvironmentFailed, UsageError

SDK_PROJECT = "rocm"
# How long one page may take; the pages are small (a project's file list).
TIMEOUT_S = 10.0


class SdkIndexUnreachable(EnvironmentFailed):
    """The SDK index could not be read (no answer, a refused connection, a server error, a
    page of the wrong shape): exit 3, nothing was made."""


class SdkIndexLacks(UsageError):
    """The SDK index answered, but it lacks the SDK, the version or a target's device package:
    exit 2 (the settings ask for what is not there), nothing was made."""


def versions_on_page(filenames: Sequence[str], project: str) -> tuple[Version, ...]:
    """The versions of `project` among a project page's files (wheels and sdists), newest
    first; files of other projects and names that do not parse are left out."""
    found: set[Version] = set()
    want = canonicalize_name(project)
    for name in filenames:
        try:
            if name.endswith(".whl"):
                dist, version, _build, _tags = parse_wheel_filename(name)
            else:
                dist, version = parse_sdist_filename(name)
        except (InvalidWheelFilename, InvalidSdistFilename):
            continue
        if dist == want:
            found.add(version)
    return tuple(sorted(found, reverse=True))


def _unreachable(index: str, what: str, why: str) -> SdkIndexUnreachable:
    return SdkIndexUnreachable(
        what, why,
        f"check the network (or proxy) and that {index} is the index you meant, then run the "
        "same command again; nothing was made (no venv, no checkout)")


def _page_files(index: str, project: str, timeout_s: float) -> tuple[str, ...] | None:
    """The file names on `project`'s page; None when the index has no such project."""
    if index.startswith("file:"):
        return _local_page_files(index, project)
    from rocmforge.sources.triton_wheel import IndexClient, IndexUnavailable, NoMatchingWheel

    try:
        files = IndexClient(index_url=index, timeout_s=timeout_s, retries=1).files(project)
    except NoMatchingWheel:
        return None
    except IndexUnavailable as exc:  # its own fix names Triton's settings: say the SDK's
        raise _unreachable(index, exc.what.replace("The package index",
                                                   "The pip ROCm SDK index"), exc.why) from None
    return tuple(f.filename for f in files if not f.yanked)


def _local_page_files(index: str, project: str) -> tuple[str, ...] | None:
    from urllib.parse import unquote, urlsplit

    from rocmforge.sources.triton_wheel import parse_pep503

    folder = Path(unquote(urlsplit(index).path)) / canonicalize_name(project)
    page = folder / "index.html"
    if not folder.is_dir():
        if not folder.parent.is_dir():
            raise _unreachable(index, f"The pip ROCm SDK index {index} is not a folder here",
                               f"{folder.parent} does not exist")
        return None
    try:
        text = page.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _unreachable(index, f"The pip ROCm SDK index page {page} cannot be read",
                           str(exc)) from None
    return tuple(f.filename for f in parse_pep503(text, base_url=page.as_uri()) if not f.yanked)


def _newest(versions: Sequence[Version]) -> str:
    shown = ", ".join(str(v) for v in versions[:3])
    return f"newest: {shown}" if shown else "none"


def _no_sdk_fix(index: str, version: Version) -> str:
    """Where the release is, when `index` has no rocm project: TheRock's multi-arch index from
    its first release on; before it, only the per-family index of the targets' family (TheRock
    makes no new per-family releases and may delete old ones: ROCm/TheRock@89553ce3:
    docs/packaging/legacy_per_family_releases.md), so dropping --rocm-sdk gives that one."""
    from rocmforge.knowledge.rocm_sdk import FAMILY_FIELD, family_in, load_sdk_table

    table = load_sdk_table()
    first = table.first_multi_arch
    mirror = "or pass your mirror's index URL (the folder whose rocm/ page lists the rocm files)"
    if version >= Version(first):
        return (f"drop --rocm-sdk to use TheRock's multi-arch index ({table.multi_arch.index}), "
                + mirror)
    family = family_in(index, table)
    theirs = table.per_family.index.replace(FAMILY_FIELD, family) if family else ""
    if family and index == theirs:
        return (f"TheRock's per-family index of {family} does not have it (no new per-family "
                "releases are made, and old ones may be deleted: TheRock's docs/packaging/"
                "legacy_per_family_releases.md): pass --rocm-sdk-version with a release from "
                f"{first} on (the multi-arch index has those), or pass a mirror's per-family "
                "index with --rocm-sdk (a URL with {family})")
    where = theirs or f"{table.per_family.index}, with your targets' family"
    whose = family or "the targets' family"
    return (f"ROCm SDK {version} predates the multi-arch index (its first release is {first}), "
            f"so only the per-family index of {whose} has it: drop "
            f"--rocm-sdk to use TheRock's ({where}), or pass your mirror's per-family index URL "
            "with {family} where the family goes")


def check_sdk_index(index: str, version: str, device_packages: Sequence[str], *,
                    other_route: str = "", timeout_s: float = TIMEOUT_S) -> None:
    """Raise unless `index` lists `rocm` at `version` and every device package at it.
    `other_route` is the sentence that names the other kind of index (added to a missing
    version's fix)."""
    pinned = Version(version)
    files = _page_files(index, SDK_PROJECT, timeout_s)
    if files is None:
        raise SdkIndexLacks(
            f"The index {index} has no rocm project, so it is no pip ROCm SDK index",
            "the build installs the SDK's `rocm` package from it (its page answered 404)",
            _no_sdk_fix(index, pinned),
        )
    versions = versions_on_page(files, SDK_PROJECT)
    if pinned not in versions:
        fix = f"pass --rocm-sdk-version with a release it has ({_newest(versions)})"
        raise SdkIndexLacks(
            f"The index {index} has no rocm {version}",
            f"its rocm page lists {len(versions)} release(s) and not this one",
            fix + (f"; {other_route}" if other_route else ""),
        )
    for package in device_packages:
        target = package.rsplit("-", 1)[-1]
        files = _page_files(index, package, timeout_s)
        if files is None:
            raise SdkIndexLacks(
                f"The index {index} has no {package}: it publishes no device code for {target}",
                f"on the multi-arch index a target's kernels come only from its device package "
                f"(the rocm extra device-{target}); pip would just warn about the extra and "
                f"build a torch with no {target} kernels in its libraries",
                f"drop {target} from --arch, or check its name (RELEASES.md in ROCm/TheRock "
                "lists the device extras)",
            )
        device_versions = versions_on_page(files, package)
        if pinned not in device_versions:
            raise SdkIndexLacks(
                f"The index {index} has {package} but not at {version}",
                f"ROCm SDK {version} (the rocm package) installs {package}=={version}, and the "
                f"index lists {len(device_versions)} other release(s) of it",
                f"pass --rocm-sdk-version with a release that has {target} "
                f"({_newest(device_versions)}), or drop {target} from --arch",
            )
