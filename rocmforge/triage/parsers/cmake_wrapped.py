"""find_package's "Could not find a package configuration file provided by" broken one word
earlier than CMake breaks it, as a console or CI re-wraps a log: the line ends at "package
configuration file" and the next starts 'provided by "<name>" with any'. The whole-line and
CMake's own wrapped forms are cmake_package.py's.

Owns: the rule that joins the two lines and reads the package name. Must not: read files, run
programs or pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.parsers.cmake_package import loadhip_hip, package_reading
from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _config_provided_wrapped(match: re.Match[str], view: LineView) -> Reading | None:
    """The same message wrapped one word earlier (a log re-wrapped by a console or CI): "…
    package configuration file" ends the line and 'provided by "<name>" with any' starts the
    next."""
    if view.cmake_block == "warning" or not view.previous or not view.previous[-1].endswith(
            "Could not find a package configuration file"):
        return None
    name = match.group("name")
    if loadhip_hip(name, view):
        return None  # the optional HIP lookup: cmake-config-file's reading of a whole line
    return package_reading(name, "no package configuration file", config=True)


RULES: tuple[Rule, ...] = (
    Rule(id="cmake-config-provided-wrapped", klass="missing-component",
         triggers=("provided by \"",),
         pattern=rx(r'^provided by "(?P<name>[\w.+-]+)" with any'),
         read=_config_provided_wrapped, source="Kitware/CMake cmFindPackageCommand.cxx ('Could "
         "not find a package configuration file provided by \"<name>\" with any of the "
         "following names:'), the line broken before 'provided by'; ROCm/TheRock#340"),
)
