"""A module missing when installed code runs (the verify step): a run-time dependency that
the package importing it never declared, or that is not installed in this Python.

Owns: this family's parser. Must not: read files, run programs or pick between findings
(the engine does). The same message at build time belongs to extension_abi's `no-module`.
"""

from __future__ import annotations

import re

from rocmforge.triage.parsers.extension_abi import DIST_NAME
from rocmforge.triage.rule import LineView, Reading, Rule, rx

# Modules other rules speak for (torch, triton), or whose absence is not a missing install
# (distutils left CPython 3.12; pkg_resources left setuptools).
_OTHERS = frozenset({"torch", "triton", "distutils", "pkg_resources"})
_FILE_FRAME = re.compile(r"^File \"[^\"<]+\", line \d+")
_PACKAGE_FRAME = re.compile(r"^File \"[^\"]*[/\\](?:site|dist)-packages[/\\](?P<pkg>\w+)[/\\]")


def _runtime_missing(match: re.Match[str], view: LineView) -> Reading | None:
    module = match.group("mod")
    if module in _OTHERS or module.startswith("_"):
        return None
    files = [line for line in view.previous if _FILE_FRAME.match(line)]
    if files and not _PACKAGE_FRAME.match(files[-1]):
        # The import sits in a script or an app's own file, not an installed package: that
        # file may run under another interpreter than the environment that has the module
        # (extension_abi reads the one-frame script shape); the line alone does not say.
        return None
    frames = [found.group("pkg") for line in files if (found := _PACKAGE_FRAME.match(line))]
    if frames and module.startswith(frames[-1]):
        # flash_attn importing flash_attn_2_cuda: the package's own compiled part is
        # missing (a failed or partial build), not a dependency to install.
        return None
    package = DIST_NAME.get(module, module)
    who = f"{frames[-1]} imports it" if frames else "the code imports it"
    return Reading(
        subject=module,
        cause=f"{who} at run time and the Python that runs it has no module {module}: "
              f"{package} is not installed in this environment (a dependency the importing "
              "package does not declare for run time, e.g. only as a build requirement)",
        fix=f"install {package} into this Python (`python -m pip install {package}`); the "
            "package that imports it should list it in its install requirements")


RULES: tuple[Rule, ...] = (
    Rule(id="runtime-module-missing", klass="python-packaging", steps=("verify",),
         triggers=("No module named",),
         pattern=rx(r"\b(?:ModuleNotFoundError|ImportError): No module named '(?P<mod>\w+)'"
                    r"\s*$"),
         read=_runtime_missing, source="CPython Lib/importlib/_bootstrap.py (_find_and_load_"
         "unlocked: ModuleNotFoundError \"No module named {name!r}\"); ROCm/aiter#1845"),
)
