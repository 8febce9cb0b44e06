"""pip's download errors: a file an index links that its server will not hand out (404 for a
link the index keeps to a file it no longer serves; 403 for a dated PyTorch nightly).

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Must not: read files, run programs or pick between findings
(the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

# PyTorch's own nightly indexes, one per variant (https://download.pytorch.org/whl/nightly/
# rocm7.1/torch/): the variant, not the package, is what went stale.
_PYTORCH_NIGHTLY = re.compile(r"https?://download(?:-r2)?\.pytorch\.org/whl/nightly/"
                              r"(?P<variant>rocm[\d.]+)/")


def _http_404(match: re.Match[str], view: LineView) -> Reading | None:
    url, page = match.group("url"), match.group("page")
    project = page.rstrip("/").rsplit("/", 1)[-1].lower()
    if not project:
        return None
    nightly = _PYTORCH_NIGHTLY.match(page)
    if nightly is not None:
        variant = nightly.group("variant")
        return Reading(
            subject=f"nightly/{variant}",
            cause=f"PyTorch's nightly index for {variant} ({page}) links "
                  f"{url.rsplit('/', 1)[-1]}, but the file is gone (404): the nightly index "
                  f"of {variant} is stale; PyTorch keeps building nightlies only for the "
                  "ROCm releases it is moving to, and an older variant's page keeps links to "
                  "files it no longer serves",
            fix=f"install from the stable index of the same ROCm, `--index-url https://"
                f"download.pytorch.org/whl/{variant}` (without --pre), or from the nightly "
                "index of a ROCm release PyTorch builds nightlies for now (the install "
                "selector on pytorch.org names it)")
    return Reading(
        subject=project,
        cause=f"the index page {page} links {url.rsplit('/', 1)[-1]}, but the server answers "
              f"404 for that link ({url}): the index is broken or stale (a link to a file it "
              "does not serve), not the request",
        fix=f"retry once the index is fixed, or pin a {project} version whose file the index "
            "does serve (`pip download --no-deps` shows which), or use another index that "
            "carries it; report the broken link to the index's owners")



# A dated nightly wheel's file name (torch-2.2.0.dev20231010%2Brocm5.7-cp310-…whl).
_NIGHTLY_WHEEL = re.compile(r"/(?P<project>[A-Za-z][\w.]*?)-(?P<ver>\d+(?:\.\d+)*\.dev(?P<date>"
                            r"\d{8})[^-/]*)-[^/]*\.whl$")


def _http_403_nightly(match: re.Match[str], view: LineView) -> Reading | None:
    # A 403 is the server refusing; on a private index it means credentials. Only a dated
    # nightly wheel that PyTorch's own nightly index linked is read: that file is a build the
    # index no longer serves. Any other 403 proves nothing here.
    url, page = match.group("url"), match.group("page")
    nightly = _PYTORCH_NIGHTLY.match(page)
    wheel = _NIGHTLY_WHEEL.search(url)
    if nightly is None or wheel is None:
        return None
    project = wheel.group("project").lower().replace("_", "-")
    version = wheel.group("ver").replace("%2B", "+").replace("%2b", "+")
    variant = nightly.group("variant")
    return Reading(
        subject=project,
        cause=f"pip chose the nightly {project} {version} (built {wheel.group('date')}) from "
              f"PyTorch's nightly index for {variant}, and the server refuses that file (HTTP "
              "403): the dated nightly build is no longer served, though the index still "
              "names it",
        fix=f"install a released {project} from the stable index, `--index-url https://"
            f"download.pytorch.org/whl/{variant}` without --pre (or a newer ROCm variant), "
            f"instead of pinning the {variant} nightly index")


RULES: tuple[Rule, ...] = (
    Rule(id="pip-http-404", klass="python-packaging",
         triggers=("HTTP error 404 while getting",),
         pattern=rx(r"HTTP error 404 while getting (?P<url>\S+) \(from (?P<page>\S+?)\)"),
         read=_http_404, source="pypa/pip's download error ('HTTP error <code> while getting "
         "<url> (from <index page>)'; commit not read); ROCm/TheRock#1741; a stale nightly "
         "variant of download.pytorch.org: Comfy-Org/ComfyUI#12427 (fixed by #12526: the "
         "nightly index of a ROCm release is not maintained once it goes stable)"),
    Rule(id="pip-http-403-stale-nightly", klass="python-packaging",
         triggers=("HTTP error 403 while getting",),
         pattern=rx(r"HTTP error 403 while getting (?P<url>\S+) \(from (?P<page>\S+?)\)"),
         read=_http_403_nightly, source="pypa/pip@6d309205789d368b2749d93fd6193d584811efd5:"
         "src/pip/_internal/network/download.py (_http_get: logger.critical(\"HTTP error %s "
         "while getting %s\", status, link), a link printing as \"<url> (from <page>)\"); "
         "AUTOMATIC1111/stable-diffusion-webui#16768 (403 for a 2023 rocm5.7 nightly torch; "
         "why the server answers 403 rather than 404: unverified)"),
)
