"""CMake's own lookups and project structure that stop a configure: find_program,
find_library, find_path and find_file given REQUIRED and finding nothing, FindPython's
REQUIRED components (an interpreter too old or missing, NumPy), add_subdirectory of a
folder that is not there, a command no loaded module defines, and enable_language(HIP)
finding no GPU target. Also what triage says of a find_package'd package that is not a ROCm
component (fmt, Eigen3, GTest), for cmake_package.py's readings.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Must not: read files, run programs or pick between findings
(the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

_CMAKE = "Kitware/CMake@03676b051d5a1302c8b17bb6b3325ee38acab914"
_FIND_HEAD = re.compile(r"^CMake Error at .+ \((?P<command>find_(?:program|library|path|file))"
                        r"\):$")


def _find_required(match: re.Match[str], view: LineView) -> Reading | None:
    """cmFindBase: "Could not find <VAR> using the following names|files: a, b" (REQUIRED)."""
    if view.cmake_block != "error":
        return None
    head = next((h for h in map(_FIND_HEAD.match, reversed(view.previous[-2:])) if h), None)
    kind = match.group("kind")
    command = "find_path or find_file" if kind == "files" else "find_program or find_library"
    var, listed_names = match.group("var"), match.group("names")
    if not listed_names:  # "…names:" ended the line: the names are on the next one
        return None
    return _find_reading(view, head.group("command") if head else command, var, kind,
                         listed_names)


_WRAPPED_HEAD = re.compile(r"^Could not find (?P<var>\S+) using the following "
                           r"(?P<kind>names|files):$")


def _find_required_wrapped(match: re.Match[str], view: LineView) -> Reading | None:
    """The names CMake's formatter moved onto the line after "…using the following names:"."""
    if view.cmake_block != "error" or not view.previous:
        return None
    head = _WRAPPED_HEAD.match(view.previous[-1])
    if head is None:
        return None
    command = next((h.group("command") for h in map(_FIND_HEAD.match, view.previous[-3:-1])
                    if h), "find_path or find_file" if head.group("kind") == "files"
                   else "find_program or find_library")
    return _find_reading(view, command, head.group("var"), head.group("kind"),
                         match.group("names"))


def _find_reading(view: LineView, command: str, var: str, kind: str,
                  listed_names: str) -> Reading | None:
    names = [n.strip() for n in listed_names.split(",") if n.strip()]
    if not names:
        return None
    first = names[0]
    listed = ", ".join(names)
    if command == "find_library":
        subject = first if first.startswith("lib") else f"lib{first}"
        what = f"library named {listed} (lib<name>.so or .a)"
        fix = (f"install the development package that ships {subject} (for example "
               f"`apt-file search {subject}.so` or `dnf provides '*/{subject}.so'` names it), "
               f"or give its path with -D{var}=<path to the library> or its prefix on "
               "CMAKE_PREFIX_PATH; then configure again")
    elif command == "find_program":
        subject = first
        what = f"program named {listed} on PATH or in the prefixes it searched"
        fix = (f"install {first} (the distribution's package that ships it, or `python -m pip "
               f"install {first}` where it is a Python tool) so that it is on PATH, or give "
               f"its path with -D{var}=<path to the program>; then configure again")
    else:
        subject = first
        what = f"file named {listed} in the include and prefix folders it searched"
        fix = (f"install the development package that ships {first} (for example `apt-file "
               f"search {first}` names it), or give its folder with -D{var}=<folder> or its "
               "prefix on CMAKE_PREFIX_PATH; then configure again")
    return Reading(
        subject=subject,
        cause=f"{command}(… REQUIRED) found no {what} and stopped the configure ({var} is "
              f"NOTFOUND): {first} is not installed, or not where CMake looks",
        fix=fix)


_PY_HEAD = re.compile(r"Could NOT find (?P<name>Python[23]?)(?: \(missing:|: Found unsuitable "
                      r"version)")
_PY_UNSUITABLE = re.compile(r'Found unsuitable version "(?P<have>[^"]+)", but required is '
                            r'(?:at least |exact version )?"(?P<want>[^"]+)"')
_PY_COMPONENTS = ("NumPy", "Development.Module", "Development.Embed", "Development.SABIModule",
                  "Development", "Interpreter", "Compiler")


def _python_components(match: re.Match[str], view: LineView) -> Reading | None:
    """FindPython's REQUIRED failure: FindPackageHandleStandardArgs' "Could NOT find Python
    (missing: <variables> <components>) (found version "X")", wrapped over a few lines; read
    on its closing line, from its head."""
    if view.cmake_block != "error":
        return None
    lines = [*view.previous, view.text]
    start = next((i for i in range(len(lines) - 1, -1, -1) if _PY_HEAD.search(lines[i])), None)
    if start is None or any(line.startswith(("Call Stack", "CMake ")) for line in
                            lines[start + 1:]):
        return None
    text = " ".join(lines[start:])
    head = _PY_HEAD.search(text)
    if head is None:
        return None
    name = head.group("name")
    unsuitable = _PY_UNSUITABLE.search(text)
    if unsuitable:
        have, want = unsuitable.group("have"), unsuitable.group("want")
        return Reading(
            subject=name.lower(),
            cause=f"find_package({name} {want} … REQUIRED) found Python {have}, older or "
                  f"other than the {want} the project requires, and stopped the configure",
            fix=f"install a Python the project accepts ({want}) and point CMake at it "
                f"(-D{name}_EXECUTABLE=<path>, or activate its venv first), or use a release "
                "of the project that supports this Python; then configure again from a clean "
                "build folder")
    listed = re.search(r"\(missing:(?P<missing>[^)]*)\)", text)
    if listed is None:
        return None
    missing = listed.group("missing").split()
    parts = [c for c in _PY_COMPONENTS if c in missing]
    found = re.search(r"\(found (?:suitable )?version \"(?P<v>[^\"]+)\"\)", text)
    required = re.search(r"\(Required is (?:at least|exact) version \"(?P<v>[^\"]+)\"\)", text)
    interp = f"the Python {found.group('v')} that CMake found" if found else "the interpreter"
    if "NumPy" in parts:
        return Reading(
            subject="numpy",
            cause=f"find_package({name} … NumPy REQUIRED) stopped the configure: NumPy's C "
                  f"headers ({name}_NumPy_INCLUDE_DIRS) were not found for {interp}: NumPy is "
                  "not installed in that Python",
            fix=f"install NumPy into the Python the build uses (`python -m pip install "
                f"numpy`), or point CMake at a Python that has it (-D{name}_EXECUTABLE="
                "<venv>/bin/python); then configure again from a clean build folder")
    # Development (Python.h, libpython) missing is not read: no reproduction here (this
    # machine's Pythons all ship their headers), so its message is not known to be whole.
    if "Interpreter" in parts and required:
        return Reading(
            subject=name.lower(),
            cause=f"find_package({name} {required.group('v')} … REQUIRED) found no Python "
                  f"interpreter of version {required.group('v')} or newer: the Python on "
                  "PATH (or the one named) is older than the project requires",
            fix=f"install a Python {required.group('v')} or newer and point CMake at it "
                f"(-D{name}_EXECUTABLE=<path>, or activate its venv first); then configure "
                "again from a clean build folder")
    if parts == ["Interpreter"] and not found:
        return Reading(
            subject=name.lower(),
            cause=f"find_package({name} … Interpreter REQUIRED) found no Python interpreter "
                  "on PATH or in the prefixes it searched",
            fix=f"install Python 3 or activate the venv that has it, or point CMake at it "
                f"(-D{name}_EXECUTABLE=<path>); then configure again")
    return None


def _openmp(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block != "error" or view.text.startswith("--"):
        return None
    lang = match.group("lang")
    return Reading(
        subject="openmp",
        cause=f"find_package(OpenMP REQUIRED) found no working OpenMP for the {lang} compiler "
              f"(OpenMP_{lang}_FLAGS: its test compile with OpenMP flags failed): GCC ships "
              "its libgomp, but a clang needs LLVM's OpenMP runtime (omp.h, libomp), which is "
              "not installed for this clang",
        fix="install the OpenMP runtime of the compiler the build uses (Debian/Ubuntu: "
            "libomp-<N>-dev for clang-<N>, e.g. `apt install libomp-22-dev`), or configure "
            "with a compiler that has it (CC/CXX); then configure again from a clean build "
            "folder")

def _add_subdirectory(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block != "error":
        return None
    folder = match.group("dir")
    third = re.search(r"(?:^|/)(?:third_party|third-party|thirdparty|external|extern|deps|"
                      r"submodules?)/", folder) is not None
    return Reading(
        subject="cmake",
        cause=f"add_subdirectory() was given {folder}, which does not exist in the source "
              "tree" + (": that folder is a git submodule (a vendored dependency) that was "
                        "not checked out" if third else
                        ": the checkout is incomplete (a submodule not checked out, or a "
                        "source archive without it)"),
        fix="fetch the tree's submodules (`git submodule sync && git submodule update --init "
            "--recursive` in the source tree; a source archive from GitHub's 'Download ZIP' "
            "has none: clone instead), then configure again")


# A vendored dependency's folder: where projects keep their git submodules.
_VENDORED = re.compile(r"(?:^|/)(?:third_party|third-party|thirdparty|external|extern|deps|"
                       r"submodules?)/[^/]+/?$")


def _subdirectory_without_lists(match: re.Match[str], view: LineView) -> Reading | None:
    lines = [line for line in view.previous if line.strip()]
    if len(lines) < 2 or lines[-2].strip() != "The source directory":
        return None
    folder = lines[-1].strip().replace("\\", "/")
    if _VENDORED.search(folder) is None:
        return None  # a project's own folder without CMakeLists.txt: a wrong path or an
        # incomplete archive, which the line alone does not tell apart
    return Reading(
        subject="cmake",
        cause=f"add_subdirectory() went into {folder}, which has no CMakeLists.txt: that "
              "folder is a vendored dependency (a git submodule under third_party or the "
              "like) whose folder exists but was never checked out",
        fix="fetch the tree's submodules (`git submodule sync && git submodule update --init "
            "--recursive` in the source tree; a source archive from GitHub's 'Download ZIP' "
            "has none: clone with --recursive instead), then configure again from a clean "
            "build folder")


def _unknown_command(match: re.Match[str], view: LineView) -> Reading | None:
    command = match.group("cmd")
    # The message sits in an error block; a log that lost the block's indent still shows the
    # header naming the same command right above it.
    header = f"({command}):"
    if view.cmake_block != "error" and not (
            view.previous and view.previous[-1].startswith("CMake Error at")
            and view.previous[-1].endswith(header)):
        return None
    if command.lower().startswith("cmake_"):
        return None  # CMake's own commands: cmake_tool.py's unknown-cmake-command
    if command.lower().startswith("hip_"):
        return _hip_module_command(command)
    rocm = command.lower().startswith("rocm_")
    return Reading(
        subject="cmake",
        cause=f"CMake does not know the command {command} where the project calls it: no "
              "CMake module or package loaded before that line defines it"
              + (" (rocm_* commands come from rocm-cmake's ROCM package: find_package(ROCM) "
                 "or include(ROCM…) did not load it)" if rocm else
                 " (the include() or find_package() that provides it did not run, found "
                 "another release, or the command's name is misspelled)"),
        fix=("install rocm-cmake (apt/dnf: rocm-cmake) in the ROCm install the build uses and "
             "put its prefix on CMAKE_PREFIX_PATH" if rocm else
             f"find which module or package defines {command} (the project's docs or `grep "
             f"-rn 'function({command}\\|macro({command}' cmake/`), install it or check out "
             "the submodule that ships it, and make sure it is included before that line")
        + "; then configure again from a clean build folder")


# FindHIP.cmake, HIP's CMake module (not a package config), defines hip_add_library,
# hip_add_executable and the other hip_* commands:
# ROCm/HIP@c5e11fcac8249ce4f7e70157588ff9661a870b59:cmake/FindHIP.cmake
# (macro(HIP_ADD_LIBRARY …)); a ROCm install puts it in lib/cmake/hip.
def _hip_module_command(command: str) -> Reading:
    return Reading(
        subject=command,
        cause=f"CMake does not know the command {command}: it is defined by FindHIP.cmake, "
              "HIP's CMake module, and that module was not loaded (find_package(HIP) found "
              "hip-config.cmake, which does not define it, or the ROCm install's "
              "lib/cmake/hip is not on CMAKE_MODULE_PATH, or the install has no FindHIP.cmake)",
        fix="put the ROCm install's lib/cmake/hip (the folder with FindHIP.cmake) on "
            "CMAKE_MODULE_PATH before find_package(HIP MODULE), or use a release of the project "
            "that builds HIP code with CMake's HIP language (enable_language(HIP)); then "
            "configure again from a clean build folder")


def _hip_architecture(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="PYTORCH_ROCM_ARCH",
        cause="enable_language(HIP) (or project(… HIP)) was given no CMAKE_HIP_ARCHITECTURES "
              "and found no GPU target to default to: rocm_agent_enumerator reported no AMD "
              "GPU (a build machine or container without one, or no /dev/kfd access) and the "
              "HIP compiler named no default target",
        fix="name the GPU targets to build for: -DCMAKE_HIP_ARCHITECTURES=gfx1100 (a ;-list "
            "for several; for PyTorch PYTORCH_ROCM_ARCH, `invoke build --arch gfx1100`), then "
            "configure again from a clean build folder")


# ROCm's libraries and runtimes are named with these prefixes (rocsparse, hipcub, rocprim,
# hsa-runtime64, amd_comgr, miopen, rccl, …; Debian 12's /usr/lib/x86_64-linux-gnu/cmake
# here: amd_comgr, hip, hip-lang, hipsparse, hsa-runtime64, rocrand, rocsparse): a name with
# one keeps the ROCm answer even where the components table has no row for it (hip-lang, the
# HIP runtime's package for enable_language(HIP), has none).
_ROCM_NAME = re.compile(r"^(?:roc|hip|rccl|miopen|migraphx|hsa|amd|composable|aotriton|"
                        r"tensile)", re.IGNORECASE)


def is_outside(label: str) -> bool:
    """A package name the components table does not know that is not named as ROCm's are."""
    return _ROCM_NAME.match(label) is None


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

_FINDHIP_AT = re.compile(r"CMake Error at (?P<module>.*FindHIP\.cmake):\d+")


def _findhip_root(match: re.Match[str], view: LineView) -> Reading | None:
    """HIP's legacy FindHIP.cmake: find_path(HIP_ROOT_DIR NAMES bin/hipconfig) over
    $ROCM_PATH, $ROCM_PATH/hip, $HIP_PATH and the prefix the module sits in found nothing."""
    found = [m for m in map(_FINDHIP_AT.search, view.previous) if m]
    if view.cmake_block != "error" or not found:
        return None
    module = found[-1].group("module")
    windows = re.match(r"^[A-Za-z]:[/\\]", module) is not None
    why = (" (on Windows the file is bin/hipconfig.exe, which that name does not match: "
           "set HIP_ROOT_DIR to the ROCm folder)") if windows else ""
    return Reading(
        subject="hip",
        cause=f"HIP's legacy FindHIP.cmake ({module}) found no HIP: it looks for "
              "bin/hipconfig under $ROCM_PATH, $ROCM_PATH/hip, $HIP_PATH and its own install "
              f"prefix, left HIP_ROOT_DIR unset and stopped{why}",
        fix="point it at the ROCm install that has bin/hipconfig: -DHIP_ROOT_DIR=<rocm> "
            "(or ROCM_PATH / HIP_PATH in the environment), or use HIP's CMake config "
            "package (find_package(hip CONFIG) with CMAKE_PREFIX_PATH=<rocm>); a clean build "
            "folder drops the cached HIP_ROOT_DIR-NOTFOUND")


RULES: tuple[Rule, ...] = (
    Rule(id="findhip-root-dir", klass="missing-component",
         triggers=("Specify HIP_ROOT_DIR",),
         pattern=rx(r"^Specify HIP_ROOT_DIR$"),
         read=_findhip_root,
         source="ROCm/HIP@c5e11fcac8249ce4f7e70157588ff9661a870b59:cmake/FindHIP.cmake "
         "(find_path(HIP_ROOT_DIR NAMES bin/hipconfig PATHS $ENV{ROCM_PATH} "
         "$ENV{ROCM_PATH}/hip ENV HIP_PATH ${_IMPORT_PREFIX} NO_DEFAULT_PATH), then "
         "message(FATAL_ERROR \"Specify HIP_ROOT_DIR\") when HIP_FIND_REQUIRED; "
         "ROCm/TheRock#526"),
    Rule(id="cmake-find-required", klass="missing-component",
         triggers=(" using the following ",),
         pattern=rx(r"^Could not find (?P<var>\S+) using the following (?P<kind>names|files):"
                    r"\s*(?P<names>.*)$"),
         read=_find_required, source=f"{_CMAKE}:Source/cmFindBase.cxx (REQUIRED: 'Could not "
         "find <VAR> using the following names|files: <a, b>', files for find_path and "
         "find_file; the command name in the 'CMake Error at … (find_library):' header); "
         "reproduced with cmake 3.25.1 (make/devcm.sh)"),
    Rule(id="cmake-find-required-wrapped", klass="missing-component",
         triggers=(),
         pattern=rx(r"^(?P<names>[\w.+-]+(?:, [\w.+-]+)*)$"),
         read=_find_required_wrapped, source=f"{_CMAKE}:Source/cmFindBase.cxx (the same "
         "message, its names wrapped onto the next line by CMake's formatter); reproduced "
         "with cmake 3.25.1 (make/devcm.sh)"),
    Rule(id="cmake-python-components", klass="missing-component",
         triggers=(")",),
         pattern=rx(r"\)\s*$"),
         read=_python_components, source=f"{_CMAKE}:Modules/FindPackageHandleStandardArgs"
         ".cmake ('Could NOT find <name> (missing: <vars> <components>) (found version …)', "
         "'(Required is at least version …)'); Modules/FindPython/Support.cmake (the "
         "Interpreter, Development[.Module|.Embed] and NumPy components, <name>_NumPy_INCLUDE_"
         "DIRS); reproduced with cmake 3.25.1 and 4.4.5 (make/devcm.sh)"),
    Rule(id="cmake-openmp-not-found", klass="missing-component",
         triggers=("Could NOT find OpenMP_",),
         pattern=rx(r"Could NOT find OpenMP_(?P<lang>C|CXX|Fortran|CUDA|HIP) \(missing:"),
         read=_openmp, source=f"{_CMAKE}:Modules/FindOpenMP.cmake (find_package_handle_"
         "standard_args(OpenMP_${LANG} REQUIRED_VARS OpenMP_${LANG}_FLAGS …)); reproduced "
         "with cmake 3.25.1 and clang-22 without libomp-22-dev (make/devcm.sh); Debian 12's "
         "libomp-22-dev (apt-cache: 'LLVM OpenMP runtime - dev package')"),
    Rule(id="cmake-add-subdirectory-missing", klass="cmake",
         triggers=("add_subdirectory given source",),
         pattern=rx(r"add_subdirectory given source \"(?P<dir>[^\"]+)\" which is not an "
                    r"existing"),
         read=_add_subdirectory, source=f"{_CMAKE}:Source/cmAddSubDirectoryCommand.cxx "
         "('given source \"<dir>\" which is not an existing directory.', prefixed with the "
         "command name); reproduced with cmake 3.25.1 (make/devcm.sh)"),
    Rule(id="cmake-subdirectory-without-lists", klass="cmake",
         triggers=("does not contain a CMakeLists.txt file",),
         pattern=rx(r"^does not contain a CMakeLists\.txt file\.?$"),
         read=_subdirectory_without_lists,
         source=f"{_CMAKE}:Source/cmMakefile.cxx (ConfigureSubDirectory: 'The source "
         "directory\\n  <dir>\\ndoes not contain a CMakeLists.txt file.'); reproduced with "
         "cmake 3.25.1 (make/devbt9.sh); pytorch/pytorch#25002"),
    Rule(id="cmake-unknown-command", klass="cmake",
         triggers=("Unknown CMake command",),
         pattern=rx(r"^Unknown CMake command \"(?P<cmd>\w+)\"\.?$"),
         read=_unknown_command, source=f"{_CMAKE}:Source/cmMakefile.cxx ('Unknown CMake "
         "command \"<name>\".'); reproduced with cmake 3.25.1, rocm_install without "
         "rocm-cmake (make/devcm.sh)"),
    Rule(id="cmake-hip-no-default-architecture", klass="gpu-target",
         triggers=("Failed to find a default HIP architecture",),
         pattern=rx(r"^Failed to find a default HIP architecture\.?$"),
         read=_hip_architecture, source=f"{_CMAKE}:Modules/CMakeDetermineHIPCompiler.cmake "
         "(no CMAKE_HIP_ARCHITECTURES: rocm_agent_enumerator -t GPU, else the compiler's "
         "-target-cpu, else FATAL_ERROR 'Failed to find a default HIP architecture.'); "
         "reproduced with cmake 4.4.5 (make/devcm.sh)"),
)
