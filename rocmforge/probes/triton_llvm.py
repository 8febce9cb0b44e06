"""Probe: what Triton's setup.py looks at before it downloads its prebuilt LLVM.

Owns: this host's system as Triton names it (OS, machine, glibc, AlmaLinux or not), the
`version.txt` of an LLVM already unpacked in Triton's cache (`<home>/.triton/llvm/<name>/`:
setup.py skips the download when it holds the same URL), and reading a short text file over
HTTP (a raw `cmake/llvm-hash.txt`), bounded in size and time. Must not: judge (plan/
triton_llvm_rows.py does), download an archive, or write anything.
"""

from __future__ import annotations

import platform
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from rocmforge.probes.reachable import URL_TIMEOUT_S, UrlReach, unreached

TEXT_LIMIT = 4096  # llvm-hash.txt is one 40-hex line; a bigger answer is not that file


@dataclass(frozen=True, kw_only=True)
class HostSystem:
    system: str  # platform.system(): "Linux", "Darwin", ...
    machine: str  # platform.machine(): "x86_64", "aarch64", ...
    glibc: str  # platform.libc_ver()[1]: "2.35"; "" when not glibc
    almalinux: bool  # /etc/os-release says ID="almalinux"


def host_system(os_release: Path = Path("/etc/os-release")) -> HostSystem:
    try:
        release = os_release.read_text(encoding="utf-8", errors="replace")
    except OSError:
        release = ""
    return HostSystem(system=platform.system(), machine=platform.machine(),
                      glibc=platform.libc_ver()[1], almalinux='ID="almalinux"' in release)


def cached_llvm_url(cache_home: Path, name: str) -> str:
    """The URL an unpacked LLVM in Triton's cache came from ("" when none is there)."""
    try:
        return (cache_home / "llvm" / name / "version.txt").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


@dataclass(frozen=True, kw_only=True)
class UrlText:
    text: str  # the body when the server answered 200 and it was small; else ""
    reach: UrlReach  # how the server answered (answer, status, reason)


def read_url_text(url: str, *, timeout: float = URL_TIMEOUT_S) -> UrlText:
    """A small text file's body (at most TEXT_LIMIT bytes are read)."""
    request = urllib.request.Request(url, headers={"User-Agent": "rocmforge-doctor"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            body = response.read(TEXT_LIMIT + 1)
            reach = UrlReach(url=url, answer="http", status=int(response.status))
    except urllib.error.HTTPError as exc:
        return UrlText(text="", reach=UrlReach(url=url, answer="http", status=int(exc.code),
                                               reason=str(exc.reason)))
    except urllib.error.URLError as exc:
        return UrlText(text="", reach=unreached(url, exc.reason))
    except TimeoutError:
        return UrlText(text="", reach=UrlReach(url=url, answer="timeout", reason="timed out"))
    except OSError as exc:
        return UrlText(text="", reach=unreached(url, exc))
    if reach.status != 200 or len(body) > TEXT_LIMIT:
        return UrlText(text="", reach=reach)
    return UrlText(text=body.decode("utf-8", errors="replace"), reach=reach)
