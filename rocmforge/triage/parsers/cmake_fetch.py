"""Downloads a CMake configure or build makes that fail: ExternalProject's and FetchContent's
URL download ("error: downloading '<url>' failed" with curl's status). AOTriton's own
download has its signature (config/diagnostics.toml, aotriton); a git clone that fails and a
file(DOWNLOAD) hash mismatch are signatures of the cmake tool's family.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Must not: read files, run programs or pick between findings
(the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

_FAILED = re.compile(r"^error: downloading '(?P<url>[^']+)' failed$")
_CODE = re.compile(r"^status_code: (?P<code>\d+)$")


def _download_failed(match: re.Match[str], view: LineView) -> Reading | None:
    if len(view.previous) < 2:
        return None
    head, code = _FAILED.match(view.previous[-2]), _CODE.match(view.previous[-1])
    if head is None or code is None:
        return None
    url, status, text = head.group("url"), int(code.group("code")), match.group("msg")
    if "aotriton" in url.lower():
        return None  # the aotriton-download signature's
    why = (": the server answered with an HTTP error (the log's 'The requested URL returned "
           "error' line names it; 404: no file at that URL, a release renamed or removed)"
           if status == 22 else "")
    return Reading(
        subject="cmake",
        cause=f"ExternalProject / FetchContent could not download {url} (curl status {status}: "
              f"{text}){why}, so the dependency it fetches at configure or build time is "
              "missing",
        fix="fetch the file where that URL is reachable (or give curl the proxy: https_proxy) "
            "and hand the build a local copy (FetchContent: -DFETCHCONTENT_SOURCE_DIR_<NAME>="
            "<unpacked folder>; ExternalProject: a file:// URL or the project's option for a "
            "local copy), or use a release of the project whose URL is live; then configure "
            "again")


RULES: tuple[Rule, ...] = (
    Rule(id="cmake-download-failed", klass="cmake",
         triggers=("status_string:",),
         pattern=rx(r"^status_string: \"(?P<msg>[^\"]*)\"$"),
         read=_download_failed, source="Kitware/CMake@03676b051d5a1302c8b17bb6b3325ee38acab914:"
         "Modules/ExternalProject/download.cmake.in ('error: downloading '<url>' failed', "
         "then 'status_code: <n>' and 'status_string: \"<curl's text>\"', after 'Each "
         "download failed!'); reproduced with cmake 3.25.1, FetchContent of a URL a local "
         "HTTP server answers with 404 (make/devcm.sh)"),
)
