"""CMake itself: missing, too old or too new for the tree (removed policies, unknown
commands), and a build folder whose cache belongs to another source tree.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _setup_cmake(match: re.Match[str], view: LineView) -> Reading | None:
    need, found = match.group("need"), match.group("found")
    return Reading(subject="cmake", cause=f"PyTorch's setup.py needs CMake {need} or newer and "
                   f"found only {found}", fix=f"install a newer CMake in the build venv "
                   f"(`python -m pip install 'cmake>={need}'`) ahead of the system's on PATH, "
                   "then rerun")


def _unknown_cmake_command(match: re.Match[str], view: LineView) -> Reading | None:
    command = match.group("cmd")
    return Reading(
        subject="cmake", cause=f"the CMake running this project does not know the command "
        f"{command}: it is older than the project needs (cmake_path came with CMake 3.20, "
        "cmake_language with 3.18)", fix="install a newer CMake into the build environment "
        "(`python -m pip install 'cmake>=3.20'`, or the version the project's "
        "cmake_minimum_required names), then configure again")


def _policy_removed(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="cmake",
        cause=f"this CMake no longer supports the OLD behaviour of policy {match.group('policy')}"
              " that a CMake file of the project (or a dependency) still sets: the CMake is "
              "newer (CMake 4) than the project was written for",
        fix="configure with a CMake the project supports (`python -m pip install 'cmake<4'` in "
            "the build venv), or update the project to a release whose cmake_policy calls "
            "ask for the NEW behaviour")


RULES: tuple[Rule, ...] = (
    Rule(id="setup-cmake-version", klass="cmake",
         triggers=("no cmake or cmake3 with version",),
         pattern=rx(r"no cmake or cmake3 with version >= (?P<need>[\d.]+), found: (?P<found>.+)$"),
         read=_setup_cmake,
         source="pytorch/pytorch tools/setup_helpers/cmake.py; ROCm/TheRock#1470"),
    Rule(id="unknown-cmake-command", klass="cmake",
         triggers=("Unknown CMake command",),
         pattern=rx(r"Unknown CMake command \"(?P<cmd>cmake_\w+)\""),
         read=_unknown_cmake_command, source="CMake's error for a command it does not have "
         "(cmake_path: CMake 3.20); pytorch/pytorch#128420"),
    Rule(id="cmake-policy-removed", klass="cmake",
         triggers=("may not be set to OLD behavior",),
         pattern=rx(r"Policy (?P<policy>CMP\d+) may not be set to OLD behavior because this "
                     r"version of CMake"),
         read=_policy_removed, source="Kitware/CMake cmPolicies.cxx (a removed policy's OLD "
         "behaviour; CMake 4.0 removed those before 3.5); ROCm/TheRock#318"),
)
