"""Probe: does a URL a build will download from answer, without downloading it?

Owns: one ranged GET (`Range: bytes=0-0`: servers that honour it send one byte, HTTP 206; the
others start the file with 200 and the probe reads one byte and closes) with a short timeout,
redirects followed, and the answer as data: the HTTP status, the size the server states, or
why nothing answered (no such host / no route: offline; a refusal; a timeout). Must not: judge
(plan/download_rows.py does), read a whole file, or write anything.
"""

from __future__ import annotations

import socket
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Literal

URL_TIMEOUT_S = 5.0

Answer = Literal["http", "offline", "refused", "timeout", "error"]


@dataclass(frozen=True, kw_only=True)
class UrlReach:
    url: str
    answer: Answer
    """http: the server answered (see `status`); offline: no such host or no route; refused,
    timeout, error: a connection that did not give an HTTP answer (`reason`)."""
    status: int = 0
    size: int = -1
    """The file's size from Content-Range or Content-Length (-1 when not stated)."""
    reason: str = ""


def _size(headers: object) -> int:
    get = getattr(headers, "get", None)
    if get is None:
        return -1
    ranged = str(get("Content-Range") or "")
    if "/" in ranged and ranged.rsplit("/", 1)[1].isdigit():
        return int(ranged.rsplit("/", 1)[1])
    length = str(get("Content-Length") or "")
    return int(length) if length.isdigit() else -1


def probe_url(url: str, *, timeout: float = URL_TIMEOUT_S) -> UrlReach:
    request = urllib.request.Request(url, headers={"Range": "bytes=0-0",
                                                   "User-Agent": "rocmforge-doctor"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            response.read(1)
            return UrlReach(url=url, answer="http", status=int(response.status),
                            size=_size(response.headers))
    except urllib.error.HTTPError as exc:
        return UrlReach(url=url, answer="http", status=int(exc.code), reason=str(exc.reason))
    except urllib.error.URLError as exc:
        return _not_http(url, exc.reason)
    except TimeoutError as exc:
        return UrlReach(url=url, answer="timeout", reason=str(exc) or "timed out")
    except OSError as exc:
        return _not_http(url, exc)


def unreached(url: str, reason: object) -> UrlReach:
    """The answer for a connection that gave no HTTP status (`reason`: URLError.reason, an
    OSError), for other probes that make their own request (probes/triton_llvm.py)."""
    return _not_http(url, reason)


def _not_http(url: str, reason: object) -> UrlReach:
    if isinstance(reason, socket.gaierror):
        return UrlReach(url=url, answer="offline", reason=f"no such host ({reason.strerror})")
    if isinstance(reason, ConnectionRefusedError):
        return UrlReach(url=url, answer="refused", reason="connection refused")
    if isinstance(reason, TimeoutError):
        return UrlReach(url=url, answer="timeout", reason="timed out")
    if isinstance(reason, OSError) and reason.errno in (101, 113):  # ENETUNREACH, EHOSTUNREACH
        return UrlReach(url=url, answer="offline", reason=reason.strerror or str(reason))
    return UrlReach(url=url, answer="error", reason=str(reason))
