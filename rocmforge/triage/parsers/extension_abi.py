"""An extension or companion against the installed torch: built for a CUDA torch or
another torch version, NumPy's ABI, a torch C++ API it expects, a module that is missing.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx, step_names

# The steps whose Python runs the build's scripts, those that install the built wheels, and the
# one that imports them afterwards.
_BUILD_SIDE = step_names("build-requirements", "build", "venv", "triton", "hipify", "configure")
_INSTALLING = step_names("install", "companions-install")
_AFTER_INSTALL = step_names("verify")


def _no_module(match: re.Match[str], view: LineView) -> Reading | None:
    module = match.group("mod")
    top = module.split(".")[0]
    isolated = any(w in " ".join(view.previous) for w in
                   ("Getting requirements to build", "get_requires_for_build", "Preparing metadata",
                    "pip-build-env", "build isolation", "Installing build dependencies"))
    if module.startswith("torch.utils.hipify"):
        return None  # the hipify rule speaks for it
    if module == "torch._C" and any(_TORCH_INIT.search(line) for line in view.previous[-3:]):
        # torch's own __init__ imports its compiled core: the torch folder is found, its
        # _C.<tag>.so is not, for this interpreter (make/pyver11.sh: a _C built with 3.11's
        # headers, named _C.cpython-311-x86_64-linux-gnu.so, imported by 3.12 and 3.13).
        return Reading(
            subject="torch", cause="torch's package was found but its compiled core torch._C "
            "was not, for this Python: the _C file there was built for another Python version "
            "(its name carries that version's tag, _C.cpython-3XY-...so) or the build that "
            "makes it did not finish (or Python runs inside the source checkout)",
            fix="use the Python version torch was built with (`ls <torch dir>/_C*.so` names "
                "it), or build and install torch again with this Python; run it from outside "
                "the source checkout")
    removed = _REMOVED_STDLIB.get(top)
    if removed and "." not in module:
        # A module CPython took out of its standard library: under the version that removed
        # it, nothing installs it (the import names the module, not the package that used it).
        return Reading(
            subject=top, cause=f"the code imports {top}, which Python {removed} removed from "
            "the standard library, and this Python is that version or newer: the code (or "
            "the old package that has it) was written for an older Python",
            fix=f"upgrade the package that imports {top} to a release that supports this "
                f"Python, or run it with a Python below {removed} (a venv made with "
                "`python3.11 -m venv`)")
    if top == "torch" and (view.step in _AFTER_INSTALL or (not isolated and
                                                          view.step in _INSTALLING)):
        return Reading(subject="torch", cause="torch is not installed in the Python that ran "
                       "this: the venv (or interpreter: python3 may be another Python than "
                       "the one torch went into) is not the one the build's wheels went into",
                       fix="install the build's torch wheels into it (`invoke install --python "
                       "<this venv>/bin/python`), or let `nox -s verify` make a venv with them; "
                       "or run the Python that has torch (`<python> -c 'import torch'`)")
    if top == "torch" and not isolated and any(_SETUP_FRAME.search(line)
                                               for line in view.previous) \
            and not any(_PEP517_FRAME.search(line) for line in view.previous):
        # The package's own setup.py, run by a build script (not pip): no isolation involved.
        return Reading(subject="torch", cause="the package's setup.py imports torch, and torch "
                       "is not installed in the Python that ran it: PyTorch was not built or "
                       "installed into this Python first (or its build failed earlier)",
                       fix="build and install PyTorch into this Python first (check that its "
                       "build step finished: `python -c 'import torch'`), then build the "
                       "package again with the same Python")
    if top == "torch":
        return Reading(subject="torch", cause="the extension's build could not import torch: pip "
                       "built it in an isolated environment without your torch (build isolation), "
                       "or torch is not installed in this Python",
                       fix="install your torch first, then build with `pip install "
                       "--no-build-isolation <extension>` so it compiles against that torch "
                       "(never let pip pull another torch from PyPI)")
    if top == "triton":
        return None  # the triton rule speaks for triton
    if top in ("pkg_resources",):
        return None
    if top == "distutils":
        # CPython 3.12 dropped distutils (PEP 632); setuptools' _distutils_hack puts its own
        # copy in its place, so the import fails only where no setuptools is installed.
        return Reading(
            subject="distutils", cause="the code imports distutils, which this Python does not "
            "have (Python 3.12 removed it from the standard library; Debian and Ubuntu ship it "
            "for older Pythons as the separate package python3-distutils), and no setuptools "
            "is installed in this environment to provide its copy",
            fix="install setuptools into the Python that runs it (`python -m pip install "
                "setuptools`; under build isolation, list setuptools in the build requirements; "
                "for a distro Python below 3.12 `sudo apt install python3-distutils` also "
                "works), or change the code to import setuptools instead")
    if "." in module and any(f"/{top}/" in line for line in view.previous[-4:]):
        # The import that failed runs from inside the package's own folder: the package is
        # installed, but a part of it is missing (a partial or mixed install). Installing it
        # is not the fix, and the line alone does not say what broke it.
        return None
    package = DIST_NAME.get(top, top)
    named = f" (pip installs the module {top} as {package})" if package != top else ""
    script = _main_script(view.previous)
    if script and "." not in module:
        # The traceback has one frame: the script run as the program, at its own top-level
        # import. The interpreter that ran it lacks the module, at whatever step it ran.
        return Reading(
            subject=top,
            cause=f"the script {script} imports {top} at its top, and the Python that ran it "
                  f"has no {top}: the script was started by another interpreter than the "
                  "environment that has it (a shebang, a file association or `python` on PATH "
                  f"picking the system Python), or {package} is not installed",
            fix=f"run the script with the environment's own interpreter (`<venv>/bin/python "
                f"{script}`, or sys.executable from a calling program), or install {package}"
                f"{named} into the Python that runs it (`<that python> -m pip install "
                f"{package}`)")
    if not isolated and view.step and view.step not in _BUILD_SIDE:
        return None
    return Reading(subject=top, cause=f"a build script imports {top}, which is not installed "
                   "in the Python that runs it (a build requirement missing from the venv, or "
                   "pip's isolated build environment)",
                   fix=f"install {package}{named} into the Python the build runs (`python -m "
                   f"pip install {package}`; for PyTorch `python -m pip install -r "
                   "requirements.txt` lists its build requirements), and build with "
                   "--no-build-isolation")


# Standard-library modules CPython removed, with the version that removed them; each checked
# here by importing it under 3.11.7, 3.12.1 and 3.13.0 (make/pyver11.sh): present in 3.11,
# "No module named" from the version named. distutils has its own reading above (setuptools
# provides a copy); msilib (Windows only) is left out.
_REMOVED_STDLIB = {
    **dict.fromkeys(("imp", "asynchat", "asyncore", "smtpd"), "3.12"),
    **dict.fromkeys(("aifc", "audioop", "cgi", "cgitb", "chunk", "crypt", "imghdr", "mailcap",
                     "nis", "nntplib", "ossaudiodev", "pipes", "sndhdr", "spwd", "sunau",
                     "telnetlib", "uu", "xdrlib", "lib2to3"), "3.13"),
}
# The frame of torch's own package __init__ (an installed torch or a source checkout's).
_TORCH_INIT = re.compile(r"^File \"[^\"]*[/\\]torch[/\\]__init__\.py\", line \d+, in <module>$")

# CPython's traceback of an exception in the main script's own top-level code: the header,
# then one frame "in <module>", then its source line (an import).
_TOP_FRAME = re.compile(r"^File \"(?P<path>[^\"]+?\.py)\", line \d+, in <module>$")
_IMPORT_LINE = re.compile(r"^(?:import \w|from [\w.]+ import )")


def _main_script(previous: tuple[str, ...]) -> str:
    """The script's file name when the lines before the error are a one-frame traceback
    of its top-level import, else ''."""
    if len(previous) < 3 or previous[-3] != "Traceback (most recent call last):":
        return ""
    frame = _TOP_FRAME.match(previous[-2])
    if frame is None or not _IMPORT_LINE.match(previous[-1]):
        return ""
    return re.split(r"[/\\]", frame.group("path"))[-1]


_SETUP_FRAME = re.compile(r"File \"\S*[/\\]setup\.py\", line \d+, in <module>")
# pip's PEP 517 frames (setuptools' build_meta, pip's temporary folders): an isolated build.
_PEP517_FRAME = re.compile(r"build_meta|[/\\]pip-(?:install|req-build|build-env)-")


# Modules whose package on PyPI has another name (pip cannot install `yaml`).
DIST_NAME = {"yaml": "pyyaml", "cv2": "opencv-python", "PIL": "pillow",
              "sklearn": "scikit-learn", "skimage": "scikit-image", "attr": "attrs",
              "dateutil": "python-dateutil", "Crypto": "pycryptodome", "git": "GitPython",
              "zmq": "pyzmq"}


def _cuda_torch_under_rocm(match: re.Match[str], view: LineView) -> Reading | None:
    pkg = match.group("pkg")
    return Reading(
        subject=pkg, cause=f"{pkg} {match.group('ver')} is a ROCm build (it loads "
        "libtorch_hip.so) but the torch installed is a CUDA build (+cu…): the two came from "
        "different indexes", fix=f"install {pkg} built for the installed torch (the same "
        f"index and variant as torch), or torch and {pkg} both from one ROCm index or one "
        "source build")


def _built_for_other_torch(match: re.Match[str], view: LineView) -> Reading | None:
    package = ""
    for line in reversed(view.previous[-3:]):
        named = re.search(r"(?P<pkg>[\w-]+) was built for:", line)
        if named:
            package = named.group("pkg").lower()
            break
    if not package:
        return None
    return Reading(
        subject=package, cause=f"the installed {package} is a CUDA build (for torch "
        f"{match.group('built')}) but torch is {match.group('have')}: its compiled extensions "
        "cannot load", fix=f"remove that {package} wheel and install a ROCm build of {package} "
        f"for this torch (or build it from source against it); keep pip from pulling "
        f"PyPI's CUDA {package}")


def _torchvision_ops(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="torchvision", cause=f"torchvision's compiled operators are not registered "
        f"({match.group('op')} " + ("does not exist" if "does not exist" in view.text else
                                    "fails to register its fake kernel at import") +
        "): the installed torchvision was not built "
        "against this torch (another release or variant, e.g. PyPI's beside a ROCm torch)",
        fix="install the torchvision built for this torch (the same ROCm index and nightly, "
            "or `invoke build` with the companion), with `pip install --no-deps` so torch "
            "stays")


def _companion_cuda_versions(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="torchvision",
        cause=f"torch ({match.group('torch')}) and torchvision ({match.group('vision')}) were "
              "built for different GPU toolkit versions: they come from different indexes or "
              "releases",
        fix="install torch and torchvision of one release from one index (the ROCm index of "
            "that torch), e.g. reinstall both in one pip command")


def _torch_api_mismatch(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="torch",
        cause=f"the extension's sources use {match.group('member')} of {match.group('cls')}, "
              "which the installed torch's headers do not have: the torch installed is "
              "another (older or newer) release than the one the sources were written for",
        fix="install the torch release the package pins for this version (its requirements "
            "or setup.py name it; for ROCm from the matching ROCm index), or build a release "
            "of the package written for the installed torch")


RULES: tuple[Rule, ...] = (
    Rule(id="no-module", klass="python-packaging",
         triggers=("No module named",),
         pattern=rx(r"(?:ModuleNotFoundError|ImportError): No module named '(?P<mod>[\w.]+)'"),
         read=_no_module, source="CPython import errors under pip build isolation; removed "
         "standard-library modules and torch._C under 3.12.1/3.13.0: make/pyver11.sh"),
    Rule(id="cuda-torch-under-rocm-package", klass="python-packaging", tier=0,
         triggers=("+rocm",),
         pattern=rx(r"\b(?P<pkg>torch(?:audio|vision|text|data))(?:==|\s+)"
                     r"(?P<ver>\d[\w.]*\+rocm[\d.]+)"),
         requires=rx(r"\btorch(?:==|\s+)\d[\w.]*\+cu\d+"),
         read=_cuda_torch_under_rocm, source="pytorch/audio#1749"),
    Rule(id="extension-built-for-cuda-torch", klass="python-packaging",
         triggers=("you have",),
         pattern=rx(r"PyTorch (?P<built>\S+\+cu\d+)\b.*\(you have (?P<have>\S+\+rocm[\w.]*)\)"),
         read=_built_for_other_torch, source="xformers' build-info check; unslothai/unsloth#11639"),
    Rule(id="torchvision-ops-missing", klass="python-packaging",
         triggers=("does not exist",),
         pattern=rx(r"operator (?P<op>torchvision::\w+) does not exist"),
         read=_torchvision_ops, source="torch.library's error when torchvision's C++ ops did "
         "not load; ROCm/pytorch#3109"),
    Rule(id="torchvision-fake-registration", klass="python-packaging",
         triggers=("register_fake(",),
         pattern=rx(r"^@torch\.library\.register_fake\(\"(?P<op>torchvision::\w+)\"\)"),
         requires=rx(r"torch[/\\]library\.py\", line \d+, in (?:register|_register_fake)$"),
         read=_torchvision_ops, source="pytorch/vision torchvision/_meta_registrations.py (the "
         "stored file: `@torch.library.register_fake(\"torchvision::nms\")` at import, which "
         "raises inside torch/library.py when torchvision's C++ ops were built for another "
         "torch; commit not read); ROCm/TheRock#1261"),
    Rule(id="companion-cuda-versions", klass="python-packaging",
         triggers=("were compiled with different CUDA major versions",),
         pattern=rx(r"PyTorch and torchvision were compiled with different CUDA major "
                     r"versions\. PyTorch has CUDA Version=(?P<torch>\S+?)\.? and torchvision "
                     r"has CUDA Version=(?P<vision>\S+?)\.?(?:\s|$)"),
         read=_companion_cuda_versions, source="pytorch/vision torchvision/extension.py "
         "_check_cuda_version (commit not read)"),
    Rule(id="torch-api-mismatch", klass="python-packaging",
         triggers=("no member named",),
         pattern=rx(r"error: no member named '(?P<member>\w+)' in (?:namespace )?"
                     r"'(?P<cls>(?:torch|at|c10)::[\w:]+)'"),
         requires=rx(r"(?:site|dist)-packages/torch/include/"),
         read=_torch_api_mismatch, source="clang's err_no_member on a torch API, in a build "
         "whose torch headers come from an installed torch; vllm-project/vllm#44641"),
)
