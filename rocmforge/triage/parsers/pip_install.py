"""Installers choosing wheels: no matching distribution or platform wheel, an
unsupported wheel tag, a Python version outside Requires-Python, resolver conflicts, an
externally managed environment, a torch pulled from PyPI as a dependency, a missing extra.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import NOT_SHELL_TRACE, LineView, Reading, Rule, rx

_PIN = re.compile(r"==(?P<ver>[\w.!+-]+)$")


def _no_distribution(match: re.Match[str], view: LineView) -> Reading | None:
    return _no_release(match.group("pkg"), "pip")


def _uv_no_version(match: re.Match[str], view: LineView) -> Reading | None:
    # uv names the requirement with its markers between name and version:
    # "torch{platform_system != 'Darwin'}==2.5.1+cu124"
    return _no_release(match.group("pkg") + (match.group("spec") or ""), "uv's resolver")


def _no_release(requirement: str, tool: str) -> Reading | None:
    name = requirement.split("[")[0].strip()
    name = re.split(r"[<>=!~; ]", name)[0].lower()
    if not name:
        return None
    if name in ("pytorch-triton-rocm", "pytorch-triton", "triton-rocm"):
        return Reading(subject="triton", klass="triton",
                       cause=f"{tool} found no {name} release that torch pins: PyTorch publishes "
                             "its ROCm Triton (pytorch-triton-rocm) on its own wheel index, not "
                             "on PyPI, so a torch wheel installed from a file or another index "
                             "cannot get its Triton",
                       fix="install with the PyTorch ROCm index that torch came from (`pip "
                           "install --index-url https://download.pytorch.org/whl/rocmX.Y "
                           "...`), or install the pinned pytorch-triton-rocm wheel first"
                           + ("; with uv, an explicit index serves only the packages mapped "
                              "to it: map pytorch-triton-rocm to the same index as torch in "
                              "[tool.uv.sources]" if tool.startswith("uv") else ""))
    pinned = _PIN.search(requirement)
    if pinned:
        version = pinned.group("ver")
        return Reading(
            subject=name, cause=f"{tool} found no {name} {version} on the index it was given: "
            f"the requirement pins {name}=={version}, a release that index does not publish "
            "(never published there, or a nightly it has since dropped)",
            fix=f"pin a {name} version the index lists ("
                + ("pip's 'from versions:' list above names them" if tool == "pip" else
                   f"its page for {name} names them") + f") instead of {version}, or point "
                f"--index-url at the index that "
                f"publishes {name} {version} (a ROCm family index carries only the versions "
                "built for it)")
    return Reading(subject=name, cause=f"{tool} found no release of {name} that fits: the index "
                   "(PIP_INDEX_URL, a mirror, --index-url) does not carry it for this Python "
                   "version and platform, or no network", fix=f"use an index that carries {name} "
                   "for this Python (a new Python often has no wheels yet: compare `python "
                   "--version` with the cpXY tags the index lists, and create the venv with a "
                   "Python it has, e.g. 3.12), add --extra-index-url https://pypi.org/simple or "
                   "fix the mirror, or install it from a local wheel first")


_PYPI_TORCH = re.compile(r"Downloading \S*?\btorch-(?P<ver>\d[\w.]*)-cp\d+-cp\d+\w*-"
                         r"(?:manylinux|linux)\S*\.whl")


def _torch_from_dependency(match: re.Match[str], view: LineView) -> Reading | None:
    if "+rocm" in view.text:
        return None
    for line in reversed(view.previous):
        wanted = re.search(r"Collecting torch\S* \(from (?P<pkg>[\w-]+)", line)
        if wanted:
            pkg = wanted.group("pkg")
            return Reading(
                subject="torch", cause=f"pip resolved {pkg}'s requirement on torch from PyPI "
                f"and downloaded torch {match.group('ver')} (PyPI's build, not a ROCm one), "
                f"which replaces the installed ROCm torch",
                fix=f"install a {pkg} built for the installed ROCm torch (from the same ROCm "
                    f"index, or built from source against it) and keep pip from replacing "
                    f"torch (`pip install --no-deps {pkg}`, or a constraints file pinning the "
                    "installed torch)")
    return None


def _uv_not_in_registry(match: re.Match[str], view: LineView) -> Reading | None:
    package = match.group("pkg")
    return Reading(
        subject=package, cause=f"the resolver found no {package} on the only index it was "
        f"given, and {match.group('who')} depends on it: the index (a ROCm family index) "
        f"does not mirror {package}",
        fix=f"add an index that carries {package} (`--extra-index-url https://pypi.org/simple`"
            f", or uv's index strategy setting), or install {package} first")


def _missing_extra(match: re.Match[str], view: LineView) -> Reading | None:
    extra = match.group("extra")
    return Reading(
        subject="rocm", cause=f"pip resolved a rocm {match.group('ver')} that does not "
        f"provide the extra '{extra}', so the device package it names is not installed: the "
        "index served a rocm distribution (another platform's, or an sdist) without that "
        "target's extra", fix="install from the index for your GPU family, or name the "
        "device package itself (rocm-sdk-device-<gfx>) at the same version as rocm; check "
        "with `pip install --dry-run` that it is listed")


_WHEEL = re.compile(r"(?P<pkg>[A-Za-z0-9][\w.]*?)-(?P<ver>\d[\w.+!-]*?)-(?P<py>[\w.]+)-"
                    r"(?P<abi>[\w.]+)-(?P<plat>[\w.]+)\.whl")


def _unsupported_wheel(match: re.Match[str], view: LineView) -> Reading | None:
    wheel = _WHEEL.search(match.group("wheel"))
    if wheel is None:
        return None
    package = wheel.group("pkg").lower().replace("_", "-")
    if re.fullmatch(r"cp3\d+t", wheel.group("abi")):
        # The ABI tag of CPython's free-threaded build (python3.13t); the default build
        # refuses it even at the same version (make/pyver11.sh, pip 24.2 under 3.13.0).
        return Reading(
            subject=package, cause=f"pip refused {match.group('wheel').rsplit('/', 1)[-1]}: "
            f"its ABI tag {wheel.group('abi')} is CPython's free-threaded build (python3.XXt), "
            "and this interpreter is not that build (the default one, or another version)",
            fix=f"install the wheel whose ABI tag is {wheel.group('py')} (no t) for this "
                "Python, or make the venv with the free-threaded interpreter (python3.13t)")
    return Reading(
        subject=package,
        cause=f"pip refused {match.group('wheel').rsplit('/', 1)[-1]}: its tags (Python "
              f"{wheel.group('py')}, platform {wheel.group('plat')}) do not match this "
              "interpreter and system (another Python version, or another OS or CPU)",
        fix="install the wheel built for this Python and platform (`python -m pip debug "
            "--verbose` lists the tags it accepts; the index lists one wheel per cpXY), or use "
            "the Python version the wheel was built for")


_PROJECT = re.compile(r"^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$")


def _requirement_name(requirement: str) -> str:
    # "cmake<4", "torch==2.4.0+rocm6.1", "vllm[rocm]", "pkg (from x)" -> the project name
    return re.split(r"[<>=!~;\[ (]", requirement.strip(), maxsplit=1)[0].lower()


def _resolver_conflict(match: re.Match[str], view: LineView) -> Reading | None:
    # pip names the requirements that clash joined as "A, B and C" (factory.py text_join).
    if match.group("info") == "the requested packages":
        return None  # pip names no trigger: nothing to read
    # A trigger can also be where a requirement came from ("-r requirements.txt (line 3)"):
    # only the project names are read.
    listed = [r for r in re.split(r", | and ", match.group("info"))
              if _PROJECT.match(_requirement_name(r))]
    names = [_requirement_name(r) for r in listed]
    if not names:
        return None
    first = names[0]
    if len(listed) > 1 and all(n == first for n in names):
        asked = " and ".join(r.strip() for r in listed)
        return Reading(
            subject=first,
            cause=f"pip could not resolve the requirements: {asked} are two requirements on "
                  f"{first} that no version satisfies together (one pinned by a script or a "
                  f"constraint, the other by the project's requirements file)",
            fix=f"keep one requirement on {first}: drop or widen the pin that conflicts (the "
                f"script's or constraint's {first} pin, or the requirements file's), so the "
                "version the project asks for can be installed")
    return Reading(
        subject=first,
        cause="pip could not resolve the requirements: the versions asked for (a pinned "
              f"{first} and what the other packages require of it) exclude each other, or the "
              "index holds no build of one of them for this torch/ROCm",
        fix=f"pin versions that belong together (torch, torchvision and torchaudio of one "
            "release, from one index: the ROCm index of that torch), or drop the pin that "
            f"conflicts ({first}'s); pip's lines above say which package asked for what")


def _no_platform_wheel(match: re.Match[str], view: LineView) -> Reading | None:
    package = (match.group("pkg") or match.group("pkg2")).lower()
    version = match.group("ver") or match.group("ver2")
    op = match.groupdict().get("op") or "=="
    return _platform_reading(package, version, op, match.groupdict().get("tag") or "")


# uv wraps its report at the terminal's width: "… has no wheels with a matching platform"
# ends one line and "tag (e.g., `win_amd64`) and you require …" starts the next.
_WRAPPED_HEAD = re.compile(r"(?P<pkg>[A-Za-z][\w.-]*?)(?P<op>==|>=|<=|~=|>|<)(?P<ver>\S+) has no "
                           r"wheels with a matching platform$")


def _no_platform_wheel_wrapped(match: re.Match[str], view: LineView) -> Reading | None:
    head = _WRAPPED_HEAD.search(view.previous[-1]) if view.previous else None
    if head is None:
        return None
    return _platform_reading(head.group("pkg").lower(), head.group("ver"), head.group("op"),
                             match.group("tag"))


def _platform_reading(package: str, version: str, op: str, tag: str) -> Reading:
    which = f"{package} {version}" if op == "==" else f"the {package} releases {op}{version}"
    here = f" ({tag})" if tag else ""
    return Reading(
        subject=package,
        cause=f"the index has {which}, but no wheel of them for this Python and platform"
              f"{here} (another Python version, OS or CPU than the wheels were built for; "
              "uv's hint names the platforms it has)",
        fix=f"use a Python version and platform that {which} have wheels for (the index "
            "page lists one wheel per cpXY and platform; uv's hint names them), another "
            f"version of {package} that has one for this system, or the index built for it")


def _requires_python(match: re.Match[str], view: LineView) -> Reading | None:
    package = match.group("pkg").lower()
    return Reading(
        subject=package,
        cause=f"{package} requires Python {match.group('spec')}, and this environment runs "
              f"Python {match.group('have')}",
        fix=f"create the environment with a Python that {package} supports "
            f"({match.group('spec')}), or install a release of {package} that supports this "
            "Python")


def _pypi_torch_over_rocm(match: re.Match[str], view: LineView) -> Reading | None:
    version = match.group("ver")
    return Reading(
        subject="torch",
        cause=f"pip searched PyPI and a ROCm index together and took torch {version} without "
              "a +rocm local version, the PyPI wheel, which on Linux is built for CUDA: the "
              "ROCm index has no torch of that version for this Python, so the newer PyPI "
              "build won (an extra index is a second source, not a preference)",
        fix="install torch, torchvision and torchaudio from the ROCm index alone "
            "(`pip install torch torchvision torchaudio --index-url https://download."
            "pytorch.org/whl/rocmX.Y`, a ROCm version that has wheels for this Python), not "
            "with --extra-index-url next to PyPI; or use a Python the ROCm index has wheels "
            "for; `python -c 'import torch; print(torch.version.hip)'` must print a version")


def _pins_other_torch(match: re.Match[str], view: LineView) -> Reading | None:
    # pip's check after an install: "<pkg> <ver> requires <req>, but you have <dep> <ver>
    # which is incompatible." Only a torch built here or for ROCm (+rocm, +git) makes it this
    # kit's failure: the package's compiled code was built against the torch it pins.
    have = match.group("have")
    if "+rocm" not in have and "+git" not in have:
        return None
    pkg, dep, req = match.group("pkg"), match.group("dep"), match.group("req")
    return Reading(
        subject=dep,
        cause=f"{pkg} {match.group('ver')} requires {req}, but the installed {dep} is {have}: "
              f"the {pkg} installed was built against another {dep} (its wheel is made for that "
              f"release, not for this ROCm {dep}), so its compiled parts do not match",
        fix=f"build {pkg} from source against the installed {dep} (`pip install "
            f"--no-build-isolation` from its source checkout, with its ROCm build steps), or "
            f"install a {pkg} release built for this {dep}; do not let pip replace the ROCm "
            f"{dep} with the one {pkg} pins")


# An sdist built because no wheel fits: its setup.py's setup_requires lets setuptools fetch the
# newest setuptools_scm into <project>-<version>/.eggs/, and setuptools_scm 8 stops in
# read_pyproject when pyproject.toml has no [tool.setuptools_scm] section (KeyError, chained
# as LookupError "<path> does not contain a tool.setuptools_scm section").
_SDIST_DIR = re.compile(r"[/\\](?P<proj>[A-Za-z][\w.]*?(?:-[A-Za-z][\w.]*?)*)-"
                        r"(?P<ver>\d+(?:\.\d+)+\w*)[/\\](?:\.eggs[/\\]setuptools_scm-"
                        r"(?P<scm>[\d.]+)|pyproject\.toml does not contain)")


def _scm_section_missing(match: re.Match[str], view: LineView) -> Reading | None:
    where = None
    for line in (view.text, *reversed(view.previous)):
        where = _SDIST_DIR.search(line)
        if where:
            break
    if where is None:
        return None
    project, version = where.group("proj"), where.group("ver")
    scm = f" {where.group('scm')}" if where.group("scm") else ""
    return Reading(
        subject=project.lower(),
        cause=f"pip built {project} {version} from source (no wheel of it for this Python), "
              f"its setup fetched the newest setuptools_scm{scm}, and setuptools_scm 8 "
              f"requires a [tool.setuptools_scm] section in pyproject.toml, which {project} "
              f"{version} predates",
        fix=f"require a {project} release that has a wheel for this Python (loosen the "
            f"{project}=={version} pin to a newer release), or build it with setuptools_scm<8 "
            "installed first and `--no-build-isolation`")


RULES: tuple[Rule, ...] = (
    Rule(id="setuptools-scm-section-missing", klass="python-packaging",
         triggers=("setuptools_scm",),
         pattern=rx(r"KeyError: 'setuptools_scm'|does not contain a tool\.setuptools_scm "
                    r"section"),
         read=_scm_section_missing,
         source="setuptools_scm 8.3.1 (wheel from PyPI, read here): _integration/"
                "pyproject_reading.py read_pyproject (defn.get(\"tool\", {})[tool_name], "
                "re-raised as LookupError \"<path> does not contain a tool.setuptools_scm "
                "section\" when require_section); ROCm/apex#213"),
    Rule(id="no-distribution", klass="python-packaging",
         triggers=("No matching distribution found for",),
         pattern=rx(NOT_SHELL_TRACE + r"No matching distribution found for (?P<pkg>\S+)"),
         read=_no_distribution, source="pip's resolver"),
    Rule(id="uv-no-version", klass="python-packaging",
         triggers=("ecause there is no version of",),
         pattern=rx(r"[Bb]ecause there is no version of (?P<pkg>[A-Za-z][\w.-]*(?:\[[\w,-]+\])?)"
                     r"(?:\{[^}]*\}|\{[^}]*$)?(?P<spec>==[\w.!+-]+)?(?: and|,|$)"),
         read=_uv_no_version, source="uv's resolver report (\"Because there is no version of "
         "<name>[{markers}]==<version> and you require …\"); astral-sh/uv issues quoting it "
         "(torch==2.3.0.dev20240219+cu121, torch{platform_system != 'Darwin'}==2.5.1+cu124); "
         "the report wraps at the terminal's width, so long markers can leave the line open "
         "after '{' (astral-sh/uv#10712)"),
    Rule(id="torch-from-dependency", klass="python-packaging",
         triggers=("torch-",),
         pattern=_PYPI_TORCH,
         read=_torch_from_dependency, source="pip's resolver output; ROCm/pytorch#1533"),
    Rule(id="uv-not-in-registry", klass="python-packaging",
         triggers=("was not found in the package registry",),
         pattern=rx(r"Because (?P<pkg>[\w.-]+) was not found in the package registry and "
                     r"(?P<who>\S+) depends on"),
         read=_uv_not_in_registry, source="uv's resolver; ROCm/TheRock#2344"),
    Rule(id="rocm-missing-extra", klass="python-packaging",
         triggers=("does not provide the extra",),
         pattern=rx(r"\brocm (?P<ver>\S+) does not provide the extra '(?P<extra>[\w-]+)'"),
         read=_missing_extra, source="pip's warning; ROCm/TheRock#5347"),
    Rule(id="pip-unsupported-wheel", klass="python-packaging",
         triggers=("is not a supported wheel on this platform",),
         pattern=rx(r"(?P<wheel>\S+\.whl) is not a supported wheel on this platform"),
         read=_unsupported_wheel, source="pypa/pip src/pip/_internal/req/constructors.py "
         "(\"is not a supported wheel on this platform\"); cp313t: make/pyver11.sh"),
    Rule(id="pip-resolver-conflict", klass="python-packaging",
         triggers=("because these package versions have conflicting dependencies",),
         pattern=rx(r"Cannot install (?P<info>.+?) because these package versions have "
                     r"conflicting dependencies"),
         read=_resolver_conflict, source="pypa/pip src/pip/_internal/resolution/"
         "resolvelib/factory.py (ResolutionImpossible report; pip 26.3 as installed here: "
         "\"Cannot install {info} because ...\", info the triggers joined as \"A, B and "
         "C\"); ROCm/TheRock#1212"),
    Rule(id="no-platform-wheel", klass="python-packaging",
         triggers=("has no wheels with a matching platform tag",
                   "doesn't have a source distribution or wheel for the current platform"),
         pattern=rx(r"(?P<pkg>[A-Za-z][\w.-]*?)(?P<op>==|>=|<=|~=|>|<)(?P<ver>\S+) has no "
                     r"wheels with a matching platform tag(?: \(e\.g\., `(?P<tag>[^`]+)`\))?"
                     r"|Distribution `(?P<pkg2>[A-Za-z][\w.-]*)==(?P<ver2>[^\s`]+)[^`]*` can't be "
                     r"installed because it doesn't have a source distribution or wheel for the "
                     r"current platform"),
         read=_no_platform_wheel, source="astral-sh/uv resolver messages (no matching "
         "platform tag; no wheel for the current platform)"),
    Rule(id="no-platform-wheel-wrapped", klass="python-packaging",
         triggers=("tag (e.g., `",),
         pattern=rx(r"^tag \(e\.g\., `(?P<tag>[^`]+)`\)"),
         read=_no_platform_wheel_wrapped, source="astral-sh/uv's resolver report, wrapped at "
         "the terminal's width (the message as quoted in public READMEs and issues: \"<name>"
         "==<version> has no wheels with a matching platform tag (e.g., `<tag>`)\"; uv's "
         "source not read here; astral-sh/uv#1293 added the report); Nerogar/OneTrainer#1381"),
    Rule(id="requires-python", klass="python-packaging",
         triggers=("requires a different Python",),
         pattern=rx(r"Package '(?P<pkg>[\w.-]+)' requires a different Python: (?P<have>\S+) "
                     r"not in '(?P<spec>[^']+)'"),
         read=_requires_python, source="pypa/pip src/pip/_internal/resolution (Requires-Python "
         "check)"),
    Rule(id="pypi-cuda-torch-over-rocm-index", klass="python-packaging", tier=2,
         triggers=("torch-",),
         pattern=rx(r"^(?:Downloading|Using cached) (?:\S*/)?torch-(?P<ver>\d+(?:\.\d+)+)-cp\d+"
                     r"-cp\d+\w*-(?:manylinux\w*|linux)_x86_64\.whl"),
         requires=rx(r"^Looking in indexes: (?=.*pypi\.org/simple)(?=.*rocm)"),
         read=_pypi_torch_over_rocm, source="pip 26.3 as installed here: _internal/models/"
         "search_scope.py ('Looking in indexes: {}' joined by ', '), _internal/network/"
         "download.py ('Downloading %s' / 'Using cached %s', a URL or, in older pip, the "
         "file name); a local version (+rocmX.Y) sorts after "
         "its public version (PEP 440), so pip takes PyPI's wheel only where the ROCm index "
         "has no such torch; Comfy-Org/comfy-cli#379 (--index-url alone), "
         "ComfyWorkflows/ComfyUI-Installer#15"),
    Rule(id="pip-installed-pin-conflict", klass="python-packaging", tier=2,
         triggers=("which is incompatible",),
         pattern=rx(r"^(?P<pkg>[A-Za-z][\w.-]*) (?P<ver>\S+) requires "
                    r"(?P<req>(?P<dep>torch|torchvision|torchaudio)\s*(?:[=<>!~]=?|===)[^\s,;]+"
                    r"(?:,[=<>!~][^\s,;]+)*)(?:;[^,]*)?, but you(?:'ll)? have (?P=dep) "
                    r"(?P<have>\S+) which is incompatible\."),
         read=_pins_other_torch, source="pypa/pip src/pip/_internal/commands/install.py "
         "(_warn_about_conflicts: \"{name} {version} requires {requirement}, but {you} have "
         "{dep_name} {dep_version} which is incompatible.\"; stored file, commit not read); "
         "vllm-project/vllm#29053"),
)
