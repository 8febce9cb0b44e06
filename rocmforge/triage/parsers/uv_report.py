"""uv's own words for the packaging failures pip reports otherwise: a hash mismatch, an
index it cannot reach, a package its locations do not hold, a Requires-Python that excludes
every release, a pin that a dependency's pin contradicts, a wheel for another platform.

uv prints an error and then its causes, one a line, after a prefix that changed between
releases ("Caused by: ", "cause: ", "╰─▶ "), and wraps them at the terminal's width; the rules
here read the message wherever it starts on the line and join a wrapped sentence with the
line before it.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Must not: read files, run programs or pick between findings
(the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

UV = "astral-sh/uv@26a9dd4b2125bc271b47855e1fa0c49af3365db5"
_NAME = r"[A-Za-z0-9](?:[\w.-]*[A-Za-z0-9])?"
# pytorch-triton-rocm missing is the triton class's answer (parsers/pip_install.py): not here.
_TRITON = ("pytorch-triton-rocm", "pytorch-triton", "triton-rocm")


def _hash_mismatch(match: re.Match[str], view: LineView) -> Reading | None:
    pkg, ver = match.group("pkg").lower(), match.group("ver")
    return Reading(
        subject=pkg,
        cause=f"the file uv got for {pkg} {ver} does not have the hash the requirements "
              "(--require-hashes, a --hash pin, or uv.lock) pin: the index now serves another "
              "file under that version (a rebuilt wheel, another platform's), the download was "
              "cut or altered (a proxy), or the pin is stale",
        fix=f"download {pkg} {ver} again with the cache bypassed (`uv pip install "
            f"--no-cache {pkg}=={ver}`) and compare its sha256 with the pin; if the file is the "
            "one you want, update the --hash (or `uv lock --upgrade-package` it), else fix "
            "the index")


_FETCH = re.compile(r"Failed to fetch:? `?(?P<url>[a-z+]+://[^\s`]+)`?")
_PAGE = re.compile(r"/(?P<pkg>" + _NAME + r")/?$")
_FILE = re.compile(r"/(?P<pkg>" + _NAME + r")-\d[^/]*\.(?:whl|tar\.gz|zip)$")


def _index_unreachable(match: re.Match[str], view: LineView) -> Reading | None:
    fetched = next((m for m in map(_FETCH.search, reversed(view.previous)) if m), None)
    if fetched is None:
        return None
    url = fetched.group("url")
    named = _FILE.search(url) or _PAGE.search(url)
    if named is None or named.group("pkg").lower() in ("simple", "whl"):
        return None  # an index root or a URL that names no package: nothing to answer
    pkg = named.group("pkg").lower().replace("_", "-")
    host = url.split("://", 1)[1].split("/", 1)[0]
    return Reading(
        subject=pkg,
        cause=f"uv could not reach its package index at {host} ({match.group(0).strip()}) "
              f"while fetching {pkg}, so it saw no release of it: the index URL (--index-url, "
              "UV_INDEX_URL, [[tool.uv.index]]) is wrong or the server is down, or a proxy or "
              "firewall stands between",
        fix="check the index URL uv printed and the network from this machine, set the proxy "
            "(HTTPS_PROXY) or fix the URL, then rerun (uv's --offline works only from its "
            "cache)")


def _file_404(match: re.Match[str], view: LineView) -> Reading | None:
    fetched = next((m for m in map(_FETCH.search, reversed(view.previous)) if m), None)
    named = _FILE.search(fetched.group("url")) if fetched else None
    if fetched is None or named is None or "/whl/nightly/" in fetched.group("url"):
        return None  # a page, not a file; PyTorch's stale nightlies are pip_download's answer
    url = fetched.group("url")
    pkg = named.group("pkg").lower().replace("_", "-")
    return Reading(
        subject=pkg,
        cause=f"the index links {url.rsplit('/', 1)[-1]}, but the server answers 404 for that "
              f"link ({url}): the index is broken or stale (a link to a file it does not "
              "serve), not the request",
        fix=f"retry once the index is fixed, or pin a {pkg} version whose file the index does "
            "serve, or use another index that carries it; report the broken link to the "
            "index's owners")


_ABSENT = re.compile(r"Because (?P<pkg>" + _NAME + r") was not found in the (?P<where>provided "
                     r"package locations|package registry) and (?:you require(?: (?P=pkg)\b|$)|"
                     r"(?P<who>" + _NAME + r")(?:[<>=!~]=?[^\s,]+)? depends? on (?P=pkg)\b)")


def _joined(view: LineView, before: int) -> str:
    """The line with the `before` lines above it, as one sentence: uv wraps its report at the
    terminal's width, anywhere between two words."""
    return " ".join(" ".join((*view.previous[-before:], view.text)).split())


def _not_found(line: re.Match[str], view: LineView) -> Reading | None:
    match = _ABSENT.search(_joined(view, 1))
    if match is None:
        return None
    pkg = match.group("pkg").lower()
    if pkg in _TRITON:
        return None
    where = ("the folders and indexes it was given (--find-links, --no-index)"
             if match.group("where").startswith("provided") else "the index it was given")
    return Reading(
        subject=pkg,
        cause=f"uv's resolver found no usable {pkg} in {where}: no file of that name there, "
              "or none that fits this Python and platform",
        fix=f"point uv at a folder or index that holds {pkg} for this Python and platform "
            "(--find-links <folder>, --index-url <url>), or drop --no-index/--offline so it "
            "may use the default index")


_PYTHON = re.compile(r"the (?P<which>current|requested) Python version \((?P<have>[^)]+)\) "
                     r"does not satisfy Python(?P<spec>[<>=!~][^\s,]*) and (?:all versions of "
                     r"|all of )?(?P<pkg>" + _NAME + r")(?:[<>=!~]=?[^\s,]+)? depends? on "
                     r"Python(?P=spec)")


def _python_excluded(match: re.Match[str], view: LineView) -> Reading | None:
    said = _PYTHON.search(_joined(view, 2))
    if said is None:
        return None
    pkg, spec, have = said.group("pkg").lower(), said.group("spec"), said.group("have")
    if said.group("which") == "current":
        cause = (f"every {pkg} release uv saw needs Python {spec}, and this environment's "
                 f"Python is {have}")
        fix = (f"create the environment with a Python that fits {spec} (`uv venv --python "
               f"X.Y`), or pin an older {pkg} release made for Python {have}")
    else:
        cause = (f"the project's requires-python ({have}) allows Pythons that {pkg} does not "
                 f"support ({pkg} needs Python {spec}), so uv cannot lock it for every Python "
                 "the project allows")
        fix = (f"narrow requires-python in pyproject.toml to fit {spec}, or pin a {pkg} "
               f"release that supports the whole range")
    return Reading(subject=pkg, cause=cause, fix=fix)


_REQUIRE = re.compile(r"And because you require (?P<dep>" + _NAME + r")(?P<spec>(?:==|>=|<=|~=|"
                      r"!=|<|>)[^\s,]+)")


def _pin_conflict(match: re.Match[str], view: LineView) -> Reading | None:
    dep, spec = match.group("dep"), match.group("spec")
    before = " ".join(view.previous[-6:])
    needs = re.search(r"\b(?:all versions of )?(?P<who>" + _NAME + r")(?:[<>=!~]=?[^\s,]+)? "
                      r"depends? on " + re.escape(dep) + r"(?P<spec>(?:==|>=|<=|~=|!=|<|>)"
                      r"[^\s,]+)", before)
    if needs is None or needs.group("spec") == spec:
        return None
    pkg, who = dep.lower(), needs.group("who").lower()
    return Reading(
        subject=pkg,
        cause=f"uv could not resolve the requirements: you ask for {pkg}{spec}, while {who} "
              f"depends on {pkg}{needs.group('spec')}, and no {pkg} satisfies both",
        fix=f"keep one requirement on {pkg}: drop or widen your {pkg} pin (or a constraint's), "
            f"or install a {who} release made for {pkg}{spec}")


_WHEEL = re.compile(r"\((?P<wheel>(?P<pkg>" + _NAME + r")-\d[^\s()]*-(?P<plat>[\w.]+)\.whl)\) "
                    r"dependency is incompatible with the current")


def _foreign_wheel(line: re.Match[str], view: LineView) -> Reading | None:
    # a long wheel name wraps the sentence after ".whl)" or "dependency is": join the line before
    match = _WHEEL.search(_joined(view, 1))
    if match is None:
        return None
    pkg = match.group("pkg").lower().replace("_", "-")
    return Reading(
        subject=pkg,
        cause=f"uv refused {match.group('wheel')}: its platform tag ({match.group('plat')}) "
              "is not one this system accepts (a wheel built for another OS, CPU or Python)",
        fix=f"install the {pkg} wheel built for this Python and platform (uv's hint names "
            "the platform you are on), or build it here from its source")


RULES: tuple[Rule, ...] = (
    Rule(id="uv-hash-mismatch", klass="python-packaging",
         triggers=("Hash mismatch for `",),
         pattern=rx(r"Hash mismatch for `(?P<pkg>" + _NAME + r")==(?P<ver>[^`\s]+)`"),
         read=_hash_mismatch,
         source=f"{UV}:crates/uv-distribution/src/error.rs (\"Hash mismatch for "
         "`{distribution}`\" then Expected:/Computed:); reproduced: make/devuv8.sh"),
    Rule(id="uv-index-unreachable", klass="python-packaging",
         triggers=("dns error", "Connection refused", "No route to host",
                   "Network is unreachable", "operation timed out"),
         pattern=rx(r"dns error(?:: .*)?|Connection refused(?: \(os error \d+\))?|No route to "
                    r"host|Network is unreachable|operation timed out"),
         requires=rx(r"Request failed after \d+ retr|error sending request for url"),
         read=_index_unreachable,
         source=f"{UV}:crates/uv-client/src/error.rs (\"Failed to fetch: `{{0}}`\", \"Request "
         "failed after {retries} {subject} in …\", then reqwest's and the OS's causes, one a "
         "line); reproduced: make/devuv8.sh (uv 0.13.9 prints no backticks there)"),
    Rule(id="uv-http-404", klass="python-packaging",
         triggers=("HTTP status client error (404",),
         pattern=rx(r"HTTP status client error \(404\b"), read=_file_404,
         source=f"{UV}:crates/uv-client/src/error.rs (\"Failed to fetch: `{{0}}`\") with "
         "seanmonstar/reqwest@065a5ae5209d27d4f4e3c4409725672c49a8aa39:src/error.rs (\"HTTP "
         "status client error\" … \" for url ({url})\"); reproduced here: uv 0.13.9 on a "
         "local index page linking a file its server does not have"),
    Rule(id="uv-not-found", klass="python-packaging",
         triggers=("package locations and", "package registry and", "locations and you",
                   "registry and you"),
         pattern=rx(r"(?:package )?(?:locations|registry) and"), read=_not_found,
         source=f"{UV}:crates/uv-resolver/src/resolver/availability.rs (\"not found in the "
         "provided package locations\" with --no-index, \"not found in the package "
         "registry\"); crates/uv-resolver/src/pubgrub/report.rs; reproduced: make/devuv8.sh"),
    Rule(id="uv-requires-python", klass="python-packaging",
         triggers=("on Python", "Python>", "Python<", "Python=", "Python~", "Python!"),
         pattern=rx(r"\bon Python[<>=!~]|^Python[<>=!~]"), read=_python_excluded,
         source=f"{UV}:crates/uv-resolver/src/pubgrub/report.rs (\"Because {{}}we can conclude "
         "that {}\"; the current/requested Python version as a package); reproduced: "
         "make/devuv8.sh"),
    Rule(id="uv-pin-conflict", klass="python-packaging",
         triggers=("And because you require ",),
         pattern=_REQUIRE, read=_pin_conflict,
         source=f"{UV}:crates/uv-resolver/src/pubgrub/report.rs (\"And because {{}}we can "
         "conclude that {}\") and src/error.rs (\"{package}{version} depends on "
         "{dependency}{dependency_version}\"); reproduced: make/devuv8.sh"),
    Rule(id="uv-incompatible-wheel", klass="python-packaging",
         triggers=("incompatible with the current",),
         pattern=rx(r"incompatible with the current"), read=_foreign_wheel,
         source=f"{UV}:crates/uv-installer/src/plan.rs (IncompatibleWheelError: \"A {{}} "
         "dependency is incompatible with the current platform\", then the hint \"The wheel "
         "is compatible with …, but you're on …\"); reproduced: make/devuv8.sh"),
)
