"""pip's own refusals that are not about choosing a release: an index it could not reach or
ignored (plain http), every release skipped for Requires-Python, a download that stalled or
whose hash is not the pinned one, a requirement or a wheel file name it cannot parse, an
installed package it cannot uninstall, a site-packages it may not write, a Python without pip,
and an import of a name the installed package lacks.

Owns: this family's parsers, rules that read values out of a line (or the lines just before
it) or decline where the lines do not prove the cause. Its exact messages with a fixed answer
are signatures in config/diagnostics.toml, under the pip install heading. Must not: read files,
run programs or pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

PIP = "pypa/pip@6d309205789d368b2749d93fd6193d584811efd5"

_BROKEN = re.compile(r"after connection broken by '(?P<why>\w+)\(")
_HOST = re.compile(r"host='(?P<host>[^']+)'")
_ERRNO = re.compile(r"\[Errno -?\d+\] (?P<err>[^\"')\\]+)")


def _index_unreachable(match: re.Match[str], view: LineView) -> Reading | None:
    broken = next((line for line in reversed(view.previous) if _BROKEN.search(line)), None)
    if broken is None:
        return None
    name = re.split(r"[<>=!~;\[ (]", match.group("pkg"), maxsplit=1)[0].lower()
    why = _BROKEN.search(broken)
    err, host = _ERRNO.search(broken), _HOST.search(broken)
    said = (err.group("err").strip() if err else "") or (why.group("why") if why else "")
    where = f" at {host.group('host')}" if host else ""
    return Reading(
        subject=name,
        cause=f"pip could not reach its package index{where} ({said}), so it saw no release "
              f"of {name} at all: the index URL (--index-url, PIP_INDEX_URL, pip.conf) is "
              "wrong or the server is down, or a proxy or firewall stands between",
        fix="check the index URL pip printed ('Looking in indexes') and the network from this "
            "machine, set the proxy (HTTPS_PROXY, or pip's --proxy) or fix the URL, then rerun")


_SKIPPED = re.compile(r"Ignored the following versions that require a different python "
                      r"version: (?P<list>.+)$")
_ONE_SKIPPED = re.compile(r"(?P<ver>\S+) Requires-Python (?P<spec>[^;]+)")


def _python_excluded(match: re.Match[str], view: LineView) -> Reading | None:
    if not any("(from versions: none)" in line for line in view.previous[-2:]):
        return None  # other releases were there: Requires-Python is not shown to be why
    skipped = next((m for m in map(_SKIPPED.search, reversed(view.previous)) if m), None)
    if skipped is None:
        return None
    pairs = _ONE_SKIPPED.findall(skipped.group("list"))
    if not pairs:
        return None
    name = re.split(r"[<>=!~;\[ (]", match.group("pkg"), maxsplit=1)[0].lower()
    ver, spec = pairs[-1][0], pairs[-1][1].strip()
    return Reading(
        subject=name,
        cause=f"every release of {name} the index offered was skipped for its Requires-Python "
              f"({ver} requires Python {spec}; {len(pairs)} release(s) skipped): the "
              "Python running pip is outside the range those releases support",
        fix=f"run pip with a Python that {name} {ver} supports ({spec}: create the venv with "
            f"that Python), or ask for an older {name} release made for this Python")


def _renamed_wheel(match: re.Match[str], view: LineView) -> Reading | None:
    wheel = match.group("wheel").replace("\\", "/").rsplit("/", 1)[-1]
    proper = wheel.replace(match.group("copy"), "")
    return Reading(
        subject=re.split(r"-\d", proper, maxsplit=1)[0].lower().replace("_", "-"),
        cause=f"pip reads a wheel's Python and platform tags from its file name, and {wheel} "
              f"carries \"{match.group('copy').strip()}\" (a second download of the same "
              "file renamed it), so its platform tag matches no platform",
        fix=f"rename the file back to {proper} (or download it again into an empty folder) "
            "and install that")


def _no_pip(match: re.Match[str], view: LineView) -> Reading | None:
    python = match.group("python")
    return Reading(
        subject="pip",
        cause=f"{python} has no pip module: its environment was made without pip (`python -m "
              "venv --without-pip`, or a tool that makes venvs without it) or pip was removed, "
              "so `python -m pip` cannot run in it",
        fix=f"put pip into it (`{python} -m ensurepip --upgrade`), or recreate the venv with "
            "pip (`python -m venv <dir>`), then rerun")


def _permission_denied(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path")
    return Reading(
        subject="pip",
        cause=f"pip could not write {path}: the environment it installs into belongs to "
              "another user than the one running pip (root's system Python, a venv made with "
              "sudo, a container image's site-packages), so the install stopped part-way",
        fix="install into an environment this user owns (`python -m venv ~/venvs/rocm` and "
            "its python), or give the venv back to this user (`sudo chown -R $USER <venv>`); "
            "do not mix sudo and plain pip runs on one environment")


_UNTRUSTED = re.compile(r"The repository located at (?P<host>\S+) is not a trusted or secure "
                        r"host and is being ignored")


def _untrusted_index(match: re.Match[str], view: LineView) -> Reading | None:
    ignored = next((m for m in map(_UNTRUSTED.search, reversed(view.previous)) if m), None)
    if ignored is None:
        return None
    host = ignored.group("host")
    name = re.split(r"[<>=!~;\[ (]", match.group("pkg"), maxsplit=1)[0].lower()
    return Reading(
        subject=name,
        cause=f"pip ignored the index at {host}: it is served over plain http and is not "
              f"named with --trusted-host, so pip read nothing from it and found no release "
              f"of {name}",
        fix=f"use the index's https URL, or, for a mirror you trust on a private network, add "
            f"`--trusted-host {host}` (or `trusted-host = {host}` in pip.conf), then rerun")


_DOWNLOADING = re.compile(r"Downloading (?P<file>\S+)")


def _incomplete_download(match: re.Match[str], view: LineView) -> Reading | None:
    got = match.groupdict().get("got")
    file = next((m.group("file") for m in map(_DOWNLOADING.search, reversed(view.previous))
                 if m), "")
    name = file.rsplit("/", 1)[-1]
    subject = re.split(r"-\d", name, maxsplit=1)[0].lower().replace("_", "-") if name else "pip"
    what = f"the download of {name}" if name else "a download"
    how = (f"stopped after {got} of {match.group('total')}"
           if got else f"timed out reading from {match.group('host')}")
    return Reading(
        subject=subject,
        cause=f"{what} {how}: the connection stalled or was cut (a slow or unstable network, "
              "a proxy or firewall ending long transfers), "
              "so pip installed nothing",
        fix="retry with a longer timeout and more resume attempts (`python -m pip install "
            "--timeout 120 --resume-retries 10 ...`), or fetch the wheel separately "
            "(`python -m pip download --no-deps`, or a download tool that resumes) and install "
            "that file; a nearer mirror also helps")


def _invalid_wheel_name(match: re.Match[str], view: LineView) -> Reading | None:
    stem = match.group("name").replace("\\", "/").rsplit("/", 1)[-1]
    name = re.split(r"[-_.]", stem, maxsplit=1)[0].lower() or "pip"
    return Reading(
        subject=name,
        cause=f"pip reads a wheel's name, version and tags from its file name, and "
              f"'{stem}' is not a wheel's name ({match.group('why')}): the file was renamed "
              "after it was built or downloaded, or the tool that made it named it wrongly",
        fix="give the file back the name it was published with "
            "(<name>-<version>-<python tag>-<abi tag>-<platform tag>.whl, as the index lists "
            "it), or download it again, then install that file")


def _no_attribute(match: re.Match[str], view: LineView) -> Reading | None:
    name, module = match.group("name"), match.group("mod")
    if name.startswith("__") or module == "__main__":
        return None  # a dunder probe or the script's own module: no version question
    if "(consider renaming '" in match.string:
        return None  # CPython 3.13 names a file hiding the module: py_shadow reads it
    top = module.split(".")[0]
    return Reading(
        subject=top,
        cause=f"the installed {module} has no attribute '{name}': the code that uses it was "
              f"written for another {top} version than the one installed (one that added it, "
              "or one that still had it), unless the code misspells the name",
        fix=f"install the {top} version the code requires (its requirements or pyproject pin "
            f"it; `python -m pip show {top}` shows the installed one), or a release of the code "
            f"made for this {top}")


_HASH_OF = re.compile(r"^(?P<pkg>[A-Za-z0-9][\w.-]*)==(?P<ver>\S+) from (?P<url>\S+)")


def _hash_mismatch(match: re.Match[str], view: LineView) -> Reading | None:
    if not any("DO NOT MATCH THE HASHES" in line for line in view.previous):
        return None
    what = next((m for m in map(_HASH_OF.search, reversed(view.previous)) if m), None)
    if what is None:
        return None
    pkg, ver = what.group("pkg").lower(), what.group("ver")
    return Reading(
        subject=pkg,
        cause=f"the file pip got for {pkg} {ver} ({what.group('url').rsplit('/', 1)[-1]}) does "
              "not have the sha256 the requirements file pins: the index now serves another "
              "file under that version (a rebuilt wheel, another platform's wheel), the download "
              "was cut or altered (a proxy, a full disk), or the pin is stale",
        fix=f"download {pkg} {ver} again (`python -m pip download --no-deps --no-cache-dir "
            f"{pkg}=={ver}`) and compare `python -m pip hash` with the pin; if the file is "
            "the one you want, update the --hash in the requirements file, else fix the index")


_INVALID = re.compile(r"Invalid requirement: '(?P<req>[^']+)'")


def _invalid_requirement(match: re.Match[str], view: LineView) -> Reading | None:
    requirement = match.group("req")
    name = re.split(r"[<>=!~;\[ (@]", requirement, maxsplit=1)[0].lower()
    if not name:
        return None
    hint = ""
    if re.search(r"[^<>=!~]=[^=]", requirement):
        hint = " (a single `=`: pip's operator is `==`)"
    return Reading(
        subject=name,
        cause=f"pip could not parse the requirement '{requirement}'{hint}: it is not a "
              "name with a version specifier as PEP 508 writes them, so pip installed nothing",
        fix=f"write it as pip reads it: `{name}==<version>` (or >=, ~=; extras in [] after the "
            "name; a URL as `name @ url`), in the command or the requirements file, then rerun")


_UNINSTALL = re.compile(r"Cannot uninstall '?(?P<pkg>[A-Za-z0-9][\w.-]*)'?(?: (?P<ver>[\w.+!-]+))?")


def _no_record(match: re.Match[str], view: LineView) -> Reading | None:
    said = _UNINSTALL.search(view.text)
    if said is None:  # pip 25+: the reason is the line after "× Cannot uninstall X V"
        said = next((m for m in map(_UNINSTALL.search, reversed(view.previous[-2:])) if m),
                    None)
    if said is None:
        return None
    pkg, ver = said.group("pkg").lower(), (said.group("ver") or "").rstrip(",.")
    how = ("installed by distutils (a bare .egg-info: a distro package, or `setup.py "
           "install`)") if "distutils" in view.text else (
        "installed without a RECORD of its files (a distro package manager, or a tool other "
        "than pip)")
    return Reading(
        subject=pkg,
        cause=f"pip must replace the installed {pkg}{' ' + ver if ver else ''} but cannot "
              f"uninstall it: it was {how}, so pip cannot tell which files are its",
        fix=f"install into a venv (`python -m venv` without --system-site-packages), where "
            f"no system {pkg} is in the way; or let pip install over it without uninstalling "
            f"(`python -m pip install --ignore-installed {pkg}`); or remove it with the tool "
            "that installed it (apt, dnf) first")


_CANNOT_IMPORT = re.compile(r"ImportError: cannot import name '(?P<name>\w+)' from "
                            r"'(?P<mod>[\w.]+)'(?: \((?P<path>[^)]+)\))?")


def _cannot_import(match: re.Match[str], view: LineView) -> Reading | None:
    if "circular import" in view.text or "unknown location" in view.text:
        return None  # a module half-initialised, or a namespace package: another cause
    path = match.group("path") or ""
    if path and not re.search(r"[\\/](?:site|dist)-packages[\\/]", path):
        return None  # a source tree's own module (an editable or in-tree import): not a pin
    name, module = match.group("name"), match.group("mod")
    top = module.split(".")[0]
    where = f" (from {match.group('path')})" if match.group("path") else ""
    return Reading(
        subject=top,
        cause=f"the installed {module}{where} has no '{name}': the code that imports it was "
              f"written for another {top} version than the one installed",
        fix=f"install the {top} version the importing package requires (its requirements or "
            f"pyproject pin it; `python -m pip show {top}` shows the installed one), or a "
            f"release of the importing package made for this {top}")


# CPython's import_from names no file when the module has none: a namespace package, which
# Python makes of a folder without __init__.py only where no regular package of that name is
# on sys.path (python 3.11 here: make/devbt9.sh, a venv without setuptools and an empty
# setuptools folder in its site-packages or in the working folder).
def _namespace_stub(match: re.Match[str], view: LineView) -> Reading | None:
    name, module = match.group("name"), match.group("mod")
    top = module.split(".")[0]
    return Reading(
        subject=top,
        cause=f"'{top}' was imported as an empty namespace package (unknown location: a "
              f"bare folder named {top} without __init__.py), so it has no '{name}': no "
              f"regular {top} package came first on sys.path (not installed in the Python "
              "that ran, or only as an editable install), and the bare folder (a partly "
              "removed or stub install in site-packages, or a source checkout's folder of "
              "that name in the working folder or on PYTHONPATH) stood in for it",
        fix=f"run from a folder that holds no {top} folder, or remove the stray one; and "
            f"install {top} in that Python (`python -m pip install --force-reinstall {top}`; "
            "in a venv made with --system-site-packages, upgrade it inside the venv)")


RULES: tuple[Rule, ...] = (
    Rule(id="pip-index-unreachable", klass="python-packaging",
         triggers=("No matching distribution found for",),
         pattern=rx(r"No matching distribution found for (?P<pkg>\S+)"),
         read=_index_unreachable,
         source=f"{PIP}:src/pip/_vendor/urllib3/connectionpool.py (\"Retrying (%r) after "
         "connection broken by '%r'\") and src/pip/_internal/resolution/resolvelib/factory.py "
         "(\"No matching distribution found for\"); reproduced: make/devpy.sh"),
    Rule(id="pip-requires-python-excluded", klass="python-packaging",
         triggers=("No matching distribution found for",),
         pattern=rx(r"No matching distribution found for (?P<pkg>\S+)"),
         read=_python_excluded,
         source=f"{PIP}:src/pip/_internal/resolution/resolvelib/factory.py (\"Ignored the "
         "following versions that require a different python version: %s\", joined by '; ', "
         "from package_finder.py's \"{version} Requires-Python {spec}\"); make/devpy.sh"),
    Rule(id="pip-wheel-renamed-copy", klass="python-packaging",
         triggers=("is not a supported wheel on this platform",),
         pattern=rx(r"^(?:ERROR: )?(?P<wheel>.+?(?P<copy> \(\d+\))\.whl) is not a supported "
                    r"wheel on this platform"),
         read=_renamed_wheel,
         source=f"{PIP}:src/pip/_internal/resolution/resolvelib/factory.py (\"{{link.filename}} "
         "is not a supported wheel on this platform.\") and src/pip/_internal/models/wheel.py "
         "(tags from the file name, packaging's parse_wheel_filename); make/devpy.sh"),
    Rule(id="python-no-pip-module", klass="python-packaging",
         triggers=("No module named pip",),
         pattern=rx(r"^(?P<python>\S*python[\w.]*(?:\.exe)?): No module named pip\s*$"),
         read=_no_pip,
         source="CPython's runpy (Lib/runpy.py: _get_module_details raises \"No module named "
         "%s\", _run_module_as_main exits with \"%s: %s\" % (sys.executable, exc)), 3.11 as "
         "installed here; make/devpy.sh"),
    Rule(id="pip-install-permission-denied", klass="python-packaging",
         triggers=("Could not install packages due to an OSError",),
         pattern=rx(r"Could not install packages due to an OSError: \[Errno 13\] Permission "
                    r"denied: '(?P<path>[^']+)'"),
         read=_permission_denied,
         source=f"{PIP}:src/pip/_internal/commands/install.py (create_os_error_message: "
         "\"Could not install packages due to an OSError\", EACCES adds 'Check the "
         "permissions'); make/devpy.sh"),
    Rule(id="pip-index-untrusted-host", klass="python-packaging",
         triggers=("No matching distribution found for",),
         pattern=rx(r"No matching distribution found for (?P<pkg>\S+)"),
         read=_untrusted_index,
         source=f"{PIP}:src/pip/_internal/network/session.py (is_secure_origin: \"The "
         "repository located at %s is not a trusted or secure host and is being ignored\"); "
         "make/devpy.sh"),
    Rule(id="pip-download-incomplete", klass="python-packaging",
         triggers=("not enough bytes were received", "Read timed out"),
         pattern=rx(r"^(?:× )?Download failed (?:after \d+ attempts )?because not enough bytes "
                    r"were received \((?P<got>[^/]+)/(?P<total>[^)]+)\)|^(?:[\w.]+\.)?"
                    r"ReadTimeoutError: HTTPS?ConnectionPool\(host='(?P<host>[^']+)'.*Read "
                    r"timed out"),
         read=_incomplete_download,
         source=f"{PIP}:src/pip/_internal/exceptions/network.py (IncompleteDownloadError, "
         "error incomplete-download, with --resume-retries in src/pip/_internal/cli/"
         "cmdoptions.py); older pip ends on urllib3's ReadTimeoutError; make/devpy.sh"),
    Rule(id="pip-invalid-wheel-filename", klass="python-packaging",
         triggers=("Invalid wheel filename",),
         pattern=rx(r"^(?:ERROR: )?Invalid wheel filename \((?P<why>wrong number of parts|"
                    r"invalid version|extension must be '\.whl')\): '(?P<name>[^']+)'"),
         read=_invalid_wheel_name,
         source=f"{PIP}:src/pip/_vendor/packaging/utils.py (parse_wheel_filename: \"Invalid "
         "wheel filename (wrong number of parts)\" and its siblings); make/devpy.sh"),
    Rule(id="pip-hash-mismatch", klass="python-packaging",
         triggers=("Expected sha256",),
         pattern=rx(r"^Expected sha256 [0-9a-f]+"),
         read=_hash_mismatch,
         source=f"{PIP}:src/pip/_internal/exceptions/hashes.py (HashMismatch: \"THESE PACKAGES "
         "DO NOT MATCH THE HASHES\", then each \"Expected sha256\" / \"Got\"); make/devpy.sh"),
    Rule(id="pip-invalid-requirement", klass="python-packaging",
         triggers=("Invalid requirement: '",),
         pattern=rx(r"^(?:ERROR: )?Invalid requirement: '(?P<req>[^']+)'"),
         read=_invalid_requirement,
         source=f"{PIP}:src/pip/_internal/req/constructors.py (InstallationError \"Invalid "
         "requirement: {name!r}: {exc}\"); make/devpy.sh"),
    Rule(id="pip-uninstall-unrecorded", klass="python-packaging",
         triggers=("RECORD file", "distutils installed project"),
         pattern=rx(r"^(?:ERROR: )?Cannot uninstall .*(?:RECORD file not found|It is a "
                    r"distutils installed project)|^(?:╰─> )?(?:The package's contents are "
                    r"unknown: no RECORD file was found|It is a distutils installed project)"),
         read=_no_record,
         source=f"{PIP}:src/pip/_internal/exceptions/uninstall.py (UninstallMissingRecord, "
         "LegacyDistutilsInstall); pip 26.3 as installed here prints them on one line; "
         "make/devpy.sh"),
    Rule(id="import-from-namespace-stub", klass="python-packaging",
         triggers=("(unknown location)",),
         pattern=rx(r"ImportError: cannot import name '(?P<name>\w+)' from '(?P<mod>[\w.]+)' "
                    r"\(unknown location\)"),
         read=_namespace_stub,
         source="CPython's ImportError for `from M import N` where M has no __file__ "
         "(Python/ceval.c import_from, 3.11 as installed here: \"(unknown location)\"); "
         "reproduced: make/devbt9.sh; ROCm/TheRock#3513"),
    Rule(id="import-name-missing", klass="python-packaging", tier=2,
         triggers=("cannot import name",),
         pattern=_CANNOT_IMPORT,
         read=_cannot_import,
         source="CPython's ImportError for `from M import N` where M has no N (Python/ceval.c "
         "import_from, 3.11 as installed here); make/devpy.sh"),
    Rule(id="module-attribute-missing", klass="python-packaging", tier=2,
         triggers=("has no attribute",),
         pattern=rx(r"^AttributeError: module '(?P<mod>[\w.]+)' has no attribute "
                    r"'(?P<name>\w+)'"),
         read=_no_attribute,
         source="CPython's AttributeError for a module (Objects/moduleobject.c) and torch's "
         "own module __getattr__ (torch/__init__.py, the same words; torch 2.13.0 installed "
         "here); make/devpy.sh"),
)
