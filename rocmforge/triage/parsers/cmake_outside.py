"""CMake packages a failed configure names that are not ROCm components: what triage says of
a package the components table does not know (fmt, Eigen3, GTest), so that it is not called
a ROCm component. Used by cmake_package.py's readings.

Owns: that wording, and the few ROCm CMake package names the components table does not list.
Must not: read files, run programs or pick between findings (the engine does).
"""

from __future__ import annotations

from rocmforge.triage.rule import Reading

# CMake packages that ROCm ships without a row of their own in the components table: the HIP
# runtime's CMake package for enable_language(HIP) (Debian 12's libamdhip64-dev ships
# /usr/lib/x86_64-linux-gnu/cmake/hip-lang/, `dpkg -S hip-lang` here).
ROCM_PACKAGES = frozenset({"hip-lang"})


def is_outside(label: str) -> bool:
    """A package name (lower-case) that is neither a component nor a ROCm CMake package."""
    return label not in ROCM_PACKAGES


def outside_reading(name: str, how: str, *, config: bool) -> Reading:
    files = (f" (it looked for {name}Config.cmake / {name.lower()}-config.cmake)" if config
             else "")
    where = f", or {name}_DIR=<the folder with its {name}Config.cmake>" if config else ""
    return Reading(
        subject=name.lower(),
        cause=f"CMake could not find {name} ({how}){files}: no install of {name} was in the "
              "prefixes CMake searched (it is not installed, or installed elsewhere)",
        fix=f"install {name}'s development package (the distribution's -dev / -devel package, "
            f"or build and install it) or point CMake at its install (CMAKE_PREFIX_PATH="
            f"<its prefix>{where}); then configure again from a clean build folder")


def outside_hint(label: str) -> str:
    """How to install a package outside ROCm, for a fix's parentheses."""
    return f"the distribution's {label} -dev / -devel package, or {label} built and installed"
