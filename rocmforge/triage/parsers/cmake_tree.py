"""CMake's checks of the source tree and its targets: a source folder without CMakeLists.txt
(or none at all), a source file a target lists that is not there, a target with no sources, a
target name defined twice, an include folder variable left NOTFOUND, and include() of a file
or module that is not there. Most of these are a checkout with a submodule missing.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Must not: read files, run programs or pick between findings
(the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

_CMAKE = "Kitware/CMake@03676b051d5a1302c8b17bb6b3325ee38acab914"
_VENDORED = re.compile(r"(?:^|/)(?:third_party|third-party|thirdparty|external|extern|deps|"
                       r"submodules?)/")
_SUBMODULES = ("fetch the tree's submodules (`git submodule sync && git submodule update "
               "--init --recursive` in the source tree; a source archive from GitHub's "
               "'Download ZIP' has none: clone instead)")


def _where(path: str) -> str:
    return (": it sits in a vendored dependency's folder, a git submodule that was not checked "
            "out" if _VENDORED.search(path) else ": the checkout is incomplete (a submodule "
            "not checked out, or a source archive without it) or the file was renamed")


def _source_dir(match: re.Match[str], view: LineView) -> Reading | None:
    folder, why = match.group("dir"), match.group("why")
    missing = why.startswith("does not exist")
    return Reading(
        subject="cmake",
        cause=f"cmake was pointed at the source folder {folder}, which "
              + ("does not exist" if missing else "holds no CMakeLists.txt")
              + ": the command ran from the wrong folder (or with the wrong -S), or the "
              "project is a git submodule that was not checked out (an empty folder)",
        fix=f"run cmake with -S naming the project's top folder (the one with CMakeLists.txt); "
            f"for a submodule, {_SUBMODULES}; then configure again")


def _missing_source(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block != "error" or not view.previous or \
            view.previous[-1] != "Cannot find source file:":
        return None
    path = match.group("path")
    return Reading(
        subject="cmake",
        cause=f"a target of the project lists the source file {path}, which is not in the "
              f"tree{_where(path)}",
        fix=f"{_SUBMODULES}, or use a revision of the tree whose CMake lists match its "
            "files; then configure again from a clean build folder")


def _no_sources(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block != "error":
        return None
    target = match.group("target")
    return Reading(
        subject="cmake",
        cause=f"the target {target} was defined with no source files at all: the list that "
              "should hold them was empty when CMake generated (a file(GLOB) that matched "
              "nothing, as in a submodule folder that was not checked out, or sources added "
              "only under an option that is off)",
        fix=f"check that the folder {target}'s sources come from is checked out ({_SUBMODULES})"
            " and that the options the project documents for it are set; then configure "
            "again from a clean build folder")


def _duplicate_target(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block != "error":
        return None
    command, target = match.group("cmd"), match.group("target")
    return Reading(
        subject="cmake",
        cause=f"{command} could not create the target {target}: another part of the configure "
              f"already defined a target named {target} (two copies of one dependency, such "
              "as a vendored submodule and a second add_subdirectory or FetchContent of it, or "
              "two projects that each bundle it)",
        fix=f"let only one copy define {target}: use the project's option to take the system "
            "or already-built copy (often USE_SYSTEM_<NAME> / <NAME>_USE_EXTERNAL), or drop the "
            f"second add_subdirectory; a project's own code can guard it with if(NOT TARGET "
            f"{target}); then configure again from a clean build folder")


_VAR_LINE = re.compile(r"^(?:\S*/)?(?P<var>[A-Za-z_][\w]*)(?: \(ADVANCED\))?$")


def _notfound_include(match: re.Match[str], view: LineView) -> Reading | None:
    if not any("are set to NOTFOUND" in line for line in view.previous[-4:]):
        return None
    found = _VAR_LINE.match(view.previous[-1]) if view.previous else None
    if found is None:
        return None
    var = found.group("var")
    stem = re.sub(r"_(?:INCLUDE_DIRS?|INCLUDES|INC|HEADERS?)$", "", var)
    if stem == var or not stem:
        return None
    name = stem.lower()
    return Reading(
        subject=name,
        cause=f"{var} is NOTFOUND and a target uses it as an include directory: the "
              f"find_path (or Find module) that sets it found no {name} header, and nothing "
              "stopped the configure then; the headers of that dependency are not installed, "
              "or not where CMake looks",
        fix=f"install the development package with {name}'s headers, or set -D{var}=<the "
            "folder that holds them> (or its prefix on CMAKE_PREFIX_PATH); then configure "
            "again from a clean build folder")


def _include_missing(match: re.Match[str], view: LineView) -> Reading | None:
    """cmIncludeCommand: 'include could not find requested file:' then the name or path."""
    if view.cmake_block != "error" or not view.previous or \
            view.previous[-1] != "include could not find requested file:":
        return None
    name = match.group("file")
    if re.search(r"/cmake/[\w-]+/[\w-]+(?:Targets|-targets)\.cmake$", name):
        return None  # a package config's own targets file: cmake_package.py's readings
    if "/" not in name and not name.endswith(".cmake"):
        if name.startswith("ROCM"):
            return Reading(
                subject="rocm",
                klass="missing-component",
                cause=f"include({name}) found no such module: the ROCM* CMake modules come "
                      "with rocm-cmake, which is not installed, or its share/rocm/cmake folder "
                      "is not on CMAKE_MODULE_PATH (find_package(ROCM) puts it there)",
                fix="install rocm-cmake (apt/dnf: rocm-cmake) in the ROCm install the build "
                    "uses and put that prefix on CMAKE_PREFIX_PATH (the project's "
                    "find_package(ROCM) then finds it); then configure again from a clean "
                    "build folder")
        return Reading(
            subject="cmake",
            cause=f"include({name}) found no module {name}.cmake on CMAKE_MODULE_PATH nor "
                  "among CMake's own modules: the package or submodule that ships it is not "
                  "installed or checked out, or its folder is not on CMAKE_MODULE_PATH",
            fix=f"install or check out what provides {name}.cmake ({_SUBMODULES} where it is "
                "the tree's own) and make sure its folder is on CMAKE_MODULE_PATH before that "
                "include(); then configure again from a clean build folder")
    return Reading(
        subject="cmake",
        cause=f"include() was given the file {name}, which does not exist{_where(name)}",
        fix=f"{_SUBMODULES}, or use a revision of the tree whose CMake code names files it "
            "has; then configure again from a clean build folder")

RULES: tuple[Rule, ...] = (
    Rule(id="cmake-source-dir-missing", klass="cmake",
         triggers=("The source directory",),
         pattern=rx(r"^(?:CMake Error: )?The source directory \"(?P<dir>[^\"]+)\" (?P<why>does "
                    r"not (?:appear to contain CMakeLists\.txt|exist))\.$"),
         read=_source_dir, source=f"{_CMAKE}:Source/cmake.cxx ('The source directory \"<dir>\" "
         "does not appear to contain CMakeLists.txt.' / 'does not exist.'); reproduced with "
         "cmake 3.25.1 (make/devcm.sh)"),
    Rule(id="cmake-source-file-missing", klass="cmake",
         triggers=(),
         pattern=rx(r"^(?P<path>[^\s:]+\.(?:c|cc|cpp|cxx|cu|hip|h|hpp|cuh|in|S|s|f90))$"),
         read=_missing_source, source=f"{_CMAKE}:Source/cmSourceFile.cxx ('Cannot find source "
         "file:' with the path on its own line); reproduced with cmake 3.25.1 "
         "(make/devcm.sh)"),
    Rule(id="cmake-no-sources", klass="cmake", tier=2,
         triggers=("No SOURCES given to target",),
         pattern=rx(r"^No SOURCES given to target: (?P<target>\S+)$"),
         read=_no_sources, source=f"{_CMAKE}:Source/cmGlobalGenerator.cxx ('No SOURCES given "
         "to target: <name>' at generate); reproduced with cmake 3.25.1, a file(GLOB) of an "
         "empty folder (make/devcm.sh)"),
    Rule(id="cmake-duplicate-target", klass="cmake",
         triggers=("because another target with the same",),
         pattern=rx(r"^(?P<cmd>add_\w+) cannot create target \"(?P<target>[^\"]+)\" because "
                    r"another target with the same"),
         read=_duplicate_target, source=f"{_CMAKE}:Source/cmAddLibraryCommand.cxx, "
         "cmAddExecutableCommand.cxx, cmMakefile.cxx ('cannot create target \"<name>\" because "
         "another target with the same name already exists.'); reproduced with cmake 3.25.1 "
         "(make/devcm.sh)"),
    Rule(id="cmake-include-file-missing", klass="cmake",
         triggers=(),
         pattern=rx(r"^(?P<file>[^\s:\"']+)$"),
         read=_include_missing, source=f"{_CMAKE}:Source/cmIncludeCommand.cxx ('could not "
         "find requested file:' then the name, prefixed with the command name); reproduced "
         "with cmake 3.25.1 (make/devcm.sh); rocm-cmake's share/rocm/cmake/ROCM*.cmake "
         "(Debian 12's rocm-cmake here, `dpkg -S`)"),
    Rule(id="cmake-notfound-include-dir", klass="missing-component",
         triggers=("used as include directory in directory",),
         pattern=rx(r"^used as include directory in directory "),
         read=_notfound_include, source=f"{_CMAKE}:Source/cmGlobalGenerator.cxx ('The following "
         "variables are used in this project, but they are set to NOTFOUND.', each variable "
         "then '   used as include directory in directory <dir>'); reproduced with cmake "
         "3.25.1 (make/devcm.sh)"),
)
