"""Downloading ROCm's installer or packages with wget or curl: the server answered 404 for a
URL of AMD's repository (an amdgpu-install package, a ROCm repository file).

Owns: wget's and curl's HTTP-error lines, read only where the URL (on the line that starts
the transfer or on the command line above) is AMD's repository; the same error for any other
URL claims nothing (no class fits a download in general). Must not: read files, run programs
or pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

# AMD's repositories: repo.radeon.com, or a mirror that keeps its layout (/amdgpu-install/,
# /rocm/apt/<ver>, /amdgpu/<ver>/ubuntu).
_AMD_URL = re.compile(r"(?i)\bhttps?://\S*(?:repo\.radeon\.com\S*|/amdgpu-install/\S*|"
                      r"/rocm/(?:apt|zyp|rhel|el|sles)/\S*|/amdgpu/\S*)")
# wget starts a transfer with "--<date> <time>--  <url>".
_WGET_START = re.compile(r"^--\d{4}-\d\d-\d\d \d\d:\d\d:\d\d--\s+(?P<url>\S+)")


def _reading(url: str, status: str, tool: str) -> Reading:
    url = url.rstrip("'\"")
    folder, _, name = url.rpartition("/")
    return Reading(
        subject=name or url,
        cause=f"{tool} got HTTP {status} for {url}: AMD's server has no such file; the "
              "release, the distribution codename or the file name in the URL does not exist "
              "there (AMD's package names carry the full build number, such as "
              "amdgpu-install_6.2.60200-1_all.deb, and each release has its own list of "
              "supported distribution releases)",
        fix=f"open {folder.rpartition('/')[0]}/ in a browser (or look at AMD's install "
            "guide for this ROCm release and distribution), take the file name that is "
            "there for this distribution's codename, download it again and install that "
            "file")


def _wget_http_error(match: re.Match[str], view: LineView) -> Reading | None:
    start = next((s for s in map(_WGET_START.match, reversed(view.previous)) if s), None)
    if start is None or not _AMD_URL.match(start.group("url")):
        return None  # another server, or no transfer line to say which URL failed
    return _reading(start.group("url"), match.group("status"), "wget")


def _curl_http_error(match: re.Match[str], view: LineView) -> Reading | None:
    for line in reversed(view.previous):
        if re.search(r"(?:^|[\s;&|$(])curl\s", line):
            url = _AMD_URL.search(line)
            return _reading(url.group(0), match.group("status"), "curl") if url else None
    return None  # the command line is not in the log: which URL failed is not shown


RULES: tuple[Rule, ...] = (
    Rule(id="wget-amd-download-not-found", klass="rocm-install",
         triggers=("ERROR 404",),
         pattern=rx(r"ERROR (?P<status>404): "),
         read=_wget_http_error,
         source="mirror/wget@8775506f632f14404e4755dbae679dea07abf12a:src/http.c ('%s ERROR "
         "%d: %s.' after the '--%s--  %s' line of the transfer); GNU Wget 1.21.3 here "
         "(make/devsys6.sh)"),
    Rule(id="curl-amd-download-not-found", klass="rocm-install",
         triggers=("The requested URL returned error",),
         pattern=rx(r"^curl: \(22\) The requested URL returned error: (?P<status>404)\b"),
         read=_curl_http_error,
         source="curl/curl@5c61e168698a72b87437d58ed728bcdea6d5db42:lib/http.c ('The "
         "requested URL returned error: %d', curl's exit 22 on an HTTP error), "
         "src/tool_operate.c; curl 7.88.1 here (make/devsys6.sh)"),
)
