"""Doctor row for the LLVM that Triton's setup.py downloads when the kit builds Triton from
source (issue 40 item 3): reachable, gone, not checkable offline, or not downloaded at all.

Upstream (triton-lang/triton@178906842f1bbc25afe90661fe3729253cad625a:setup.py,
get_llvm_package_info and get_thirdparty_packages; the same scheme in the newer
python/build_helpers.py): the archive is
`https://oaitriton.blob.core.windows.net/public/llvm-builds/llvm-<rev>-<system>.tar.gz`, `<rev>`
the first 8 characters of the Triton tree's `cmake/llvm-hash.txt`, `<system>` from the host
(ubuntu-x64 for glibc > 2.28, almalinux-x64 above 2.17, else centos-x64; almalinux-arm64 or
ubuntu-arm64; TRITON_LLVM_SYSTEM_SUFFIX overrides it in newer trees). Nothing is downloaded
when LLVM_SYSPATH is set, or when `<home>/.triton/llvm/<name>/version.txt` already holds that
URL; TRITON_OFFLINE_BUILD without LLVM_SYSPATH stops setup.py ("Requested an offline build but
LLVM_SYSPATH is not set"). The download failed for real: the archive of a pinned hash was never
published ("HTTP Error 404: The specified blob does not exist" for llvm-ce80c80d-centos-x64,
triton-lang/triton#4550), the old host began answering HTTP 409 (triton-lang/triton#4527), and
offline builds stop at "downloading and extracting ... llvm" (triton-lang/triton#1154;
tests/fixtures/logs/triton_llvm_download_offline.log).

Owns: the archive's URL for a hash and a host, which case applies (wheel, override, cache,
offline flag, download) and the verdict. Must not: print, or download an archive.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from rocmforge.plan.doctor_row import DoctorRow, Status
from rocmforge.probes.reachable import URL_TIMEOUT_S, UrlReach

if TYPE_CHECKING:
    from rocmforge.knowledge.triton import TritonMode
    from rocmforge.probes.triton_llvm import HostSystem
    from rocmforge.settings import Settings

CHECK = "Triton LLVM download"
LLVM_BUILDS = "https://oaitriton.blob.core.windows.net/public/llvm-builds/"
HASH_FILE = "cmake/llvm-hash.txt"
RAW_GITHUB = "https://raw.githubusercontent.com/{owner}/{repo}/{commit}/{path}"
_TRUE = ("ON", "1", "YES", "TRUE", "Y")  # Triton's check_env_flag
_HASH = re.compile(r"^[0-9a-fA-F]{8,40}$")
_GITHUB = re.compile(r"^(?:https://github\.com/|git@github\.com:)([\w.-]+)/([\w.-]+?)(?:\.git)?/?$")
_FIX_LOCAL = ("unpack llvm-<rev>-<system>.tar.gz where the network reaches it and set "
              "LLVM_SYSPATH to it in build_env, or --triton wheel")


@dataclass(frozen=True, kw_only=True)
class LlvmArchive:
    name: str  # llvm-<rev>-<system>
    url: str


def llvm_system_suffix(host: HostSystem, override: str = "") -> str:
    """Triton's name for this host's prebuilt LLVM; "" where it publishes none."""
    if override:
        return override
    arch = {"x86_64": "x64", "arm64": "arm64", "aarch64": "arm64"}.get(host.machine,
                                                                       host.machine)
    if host.system == "Darwin":
        return f"macos-{arch}"
    if host.system != "Linux":
        return ""
    if arch == "arm64":
        return "almalinux-arm64" if host.almalinux else "ubuntu-arm64"
    if arch != "x64" or not re.match(r"^\d+\.\d+", host.glibc):
        return ""
    major, minor = (int(p) for p in host.glibc.split(".")[:2])
    glibc = major * 100 + minor
    return "ubuntu-x64" if glibc > 228 else "almalinux-x64" if glibc > 217 else "centos-x64"


def llvm_archive(llvm_hash: str, system: str, base: str = LLVM_BUILDS) -> LlvmArchive:
    name = f"llvm-{llvm_hash.strip()[:8]}-{system}"
    return LlvmArchive(name=name, url=f"{base}{name}.tar.gz")


def raw_hash_url(repo: str, commit: str, template: str = RAW_GITHUB) -> str:
    """Where a GitHub repository serves the Triton commit's llvm-hash.txt ("" elsewhere)."""
    match = _GITHUB.match(repo.strip())
    if match is None:
        return ""
    return template.format(owner=match[1], repo=match[2], commit=commit, path=HASH_FILE)


def parse_llvm_hash(text: str) -> str:
    """The hash in llvm-hash.txt ("" when the text is not one)."""
    first = text.strip().split("\n", 1)[0].strip()
    return first if _HASH.match(first) else ""


def _flag(environ: Mapping[str, str], name: str) -> bool:
    return environ.get(name, "").upper() in _TRUE


def no_download_row(mode: TritonMode, environ: Mapping[str, str],
                    system: str) -> DoctorRow | None:
    """The row when no LLVM download can happen or it is already decided; None when the
    download must be asked about. `environ`: what the Triton build runs with."""
    if mode == "wheel":
        return DoctorRow(check=CHECK, status="OK",
                         detail="not downloaded: Triton comes from a prebuilt wheel "
                         "(--triton wheel); no source build runs")
    syspath = environ.get("LLVM_SYSPATH", "")
    if syspath:
        if Path(syspath).is_dir():
            return DoctorRow(check=CHECK, status="OK",
                             detail=f"not downloaded: LLVM_SYSPATH={syspath} (Triton's "
                             "setup.py then uses that LLVM)")
        return DoctorRow(check=CHECK, status="WARN",
                         detail=f"LLVM_SYSPATH={syspath} is not a directory: Triton's "
                         "setup.py downloads nothing and builds against it",
                         fix="point LLVM_SYSPATH (build_env) at an unpacked LLVM of "
                         "Triton's pinned cmake/llvm-hash.txt")
    if _flag(environ, "TRITON_OFFLINE_BUILD"):
        return DoctorRow(check=CHECK, status="FAIL",
                         detail="TRITON_OFFLINE_BUILD is set without LLVM_SYSPATH: Triton's "
                         "setup.py stops with 'Requested an offline build but LLVM_SYSPATH "
                         "is not set'",
                         fix="set LLVM_SYSPATH in build_env to an unpacked LLVM of Triton's "
                         "pinned hash, or unset TRITON_OFFLINE_BUILD")
    if not system:
        return DoctorRow(check=CHECK, status="WARN",
                         detail="Triton publishes no prebuilt LLVM for this host: its "
                         "setup.py then expects an LLVM you built",
                         fix="build LLVM at Triton's cmake/llvm-hash.txt and set "
                         "LLVM_SYSPATH in build_env")
    return None


def _grade(mode: TritonMode) -> Status:
    """A download that would fail stops a source build (FAIL); in auto mode the source build
    runs only when no prebuilt wheel matches the pin, so it is a WARN there."""
    return "FAIL" if mode == "source" else "WARN"


def _when(mode: TritonMode) -> str:
    return "" if mode == "source" else " (auto: only when no prebuilt wheel matches the pin)"


def unknown_hash_row(mode: TritonMode, where: str, reach: UrlReach | None) -> DoctorRow:
    """The hash could not be read, so the URL is not known: never OK."""
    if reach is not None and reach.answer == "offline":
        return DoctorRow(check=CHECK, status="WARN",
                         detail=f"cannot check offline: {HASH_FILE} of the pinned Triton "
                         f"({where}): {reach.reason}; setup.py downloads LLVM{_when(mode)}",
                         fix=_FIX_LOCAL)
    said = ""
    if reach is not None:
        said = (f": HTTP {reach.status}" if reach.answer == "http"
                else f": {reach.reason or reach.answer}")
    return DoctorRow(check=CHECK, status="WARN",
                     detail=f"cannot check: no {HASH_FILE} read for the pinned Triton "
                     f"({where}{said}); setup.py downloads LLVM{_when(mode)}",
                     fix=_FIX_LOCAL)


def cached_row(archive: LlvmArchive, cache_home: Path) -> DoctorRow:
    return DoctorRow(check=CHECK, status="OK",
                     detail=f"not downloaded: {archive.name} is already unpacked in "
                     f"{cache_home / 'llvm'} (its version.txt names {archive.url})")


def reach_row(mode: TritonMode, archive: LlvmArchive, reach: UrlReach) -> DoctorRow:
    host = urlsplit(reach.url).hostname or reach.url
    if reach.answer == "http" and reach.status in (200, 206):
        size = f", {reach.size / 2**20:.0f} MiB" if reach.size >= 0 else ""
        return DoctorRow(check=CHECK, status="OK",
                         detail=f"{archive.name}.tar.gz answers ({host}{size}): the LLVM "
                         f"Triton's setup.py downloads{_when(mode)}")
    if reach.answer == "http":
        return DoctorRow(check=CHECK, status=_grade(mode),
                         detail=f"{reach.url} answers HTTP {reach.status}"
                         + (f" ({reach.reason})" if reach.reason else "")
                         + f": Triton's setup.py would stop there{_when(mode)}",
                         fix=_FIX_LOCAL)
    if reach.answer == "offline":
        return DoctorRow(check=CHECK, status="WARN",
                         detail=f"cannot check offline: {host} for {archive.name}.tar.gz: "
                         f"{reach.reason}; setup.py downloads it{_when(mode)}",
                         fix=_FIX_LOCAL)
    return DoctorRow(check=CHECK, status="WARN",
                     detail=f"{host} did not answer for {archive.name}.tar.gz: "
                     f"{reach.reason}; setup.py downloads it{_when(mode)}",
                     fix=_FIX_LOCAL)


def triton_cache_home(environ: Mapping[str, str]) -> Path | None:
    """Triton's cache folder: $TRITON_HOME/.triton, else $HOME/.triton (setup.py's
    get_triton_cache_path)."""
    home = environ.get("TRITON_HOME") or environ.get("HOME") or ""
    return Path(home) / ".triton" if home else None


def triton_llvm_doctor(settings: Settings, environ: Mapping[str, str], *,
                       raw_template: str = RAW_GITHUB, base: str = LLVM_BUILDS,
                       timeout: float = URL_TIMEOUT_S) -> list[DoctorRow]:
    """The probing half for doctor and the build's preflight: [] when Triton is skipped or
    no PyTorch checkout names a pin yet. `environ`: the environment the Triton step runs in
    (this process's, with the build environment over it)."""
    mode = settings.triton_mode
    if mode == "skip":
        return []
    from rocmforge.errors import RocmforgeError
    from rocmforge.probes.reachable import probe_url
    from rocmforge.probes.triton_llvm import cached_llvm_url, host_system, read_url_text
    from rocmforge.sources.git import run_git
    from rocmforge.sources.triton_pin import read_pin_from_tree
    from rocmforge.workdir import workdir_for

    work = workdir_for(settings.work_dir)
    system = llvm_system_suffix(host_system(), environ.get("TRITON_LLVM_SYSTEM_SUFFIX", ""))
    early = no_download_row(mode, environ, system)
    if early is not None:
        return [early]
    try:
        pin = read_pin_from_tree(work.pytorch)
    except (RocmforgeError, OSError):
        return []  # no checkout yet: the pin, and so the hash, is not known
    if mode == "auto" and not pin.version:
        mode = "source"  # no version file: auto builds from source (steps/triton.py)
    llvm_hash = ""
    repo = settings.triton_repo or pin.repo
    local = Path(repo.removeprefix("file://"))
    for tree in (work.triton, local):  # the clone, then a repository on this machine
        if not llvm_hash and tree.is_dir() and "://" not in str(tree):
            shown = run_git(["show", f"{pin.commit}:{HASH_FILE}"], cwd=tree, check=False)
            llvm_hash = parse_llvm_hash(shown.stdout) if shown.ok else ""
    if not llvm_hash:
        url = raw_hash_url(repo, pin.commit, raw_template)
        if not url:
            return [unknown_hash_row(mode, f"{repo} is neither cloned yet nor on GitHub", None)]
        answer = read_url_text(url, timeout=timeout)
        llvm_hash = parse_llvm_hash(answer.text)
        if not llvm_hash:
            return [unknown_hash_row(mode, url, answer.reach)]
    archive = llvm_archive(llvm_hash, system, base)
    cache = triton_cache_home(environ)
    if cache is not None and cached_llvm_url(cache, archive.name) == archive.url:
        return [cached_row(archive, cache)]
    return [reach_row(mode, archive, probe_url(archive.url, timeout=timeout))]
