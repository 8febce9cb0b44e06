"""CMake itself: missing, too old or too new for the tree (removed policies, unknown
commands), a build folder whose cache belongs to another source tree, and CMake code or an
exported package config CMake rejects (set() arguments, backslash escapes, an imported
target's missing include folder, MSVC flags handed to a GNU-style clang).

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


def _deprecation_error(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="cmake",
        cause="CMake stopped at a deprecation it was told to treat as an error (-Werror="
              "deprecated or -Werror=dev, CMAKE_ERROR_DEPRECATED): the cmake_minimum_required "
              f"in {match.group('file')} asks for compatibility with a CMake older than this "
              "CMake still supports; the CMake is newer than the project was written for",
        fix="raise the VERSION in that cmake_minimum_required (or give it a ...<max> suffix), "
            "or configure without -Werror=deprecated / -Werror=dev, or with the older CMake "
            "the project's release was tested with")


def _policy_unknown(match: re.Match[str], view: LineView) -> Reading | None:
    policy = match.group("policy")
    return Reading(
        subject="cmake",
        cause=f"the CMake running this project does not know policy {policy}, which a CMake "
              "file of the project sets with cmake_policy: each policy comes with a CMake "
              "release, so this CMake is older than the project needs",
        fix="install a newer CMake in the build environment (`python -m pip install cmake`, "
            "or the version the project's cmake_minimum_required names) ahead of the system's "
            f"on PATH, or guard the call in the project (if(POLICY {policy})), then configure "
            "again")


# TheRock prefixes each sub-project's output with "[<project> <phase>]" (its blank lines too).
_SUBPROJECT = r"(?:\[[\w.+-]+ [\w-]+\]\s*)?"
_IMPORTED_TARGET = re.compile(_SUBPROJECT + r'Imported target "(?P<target>[^"]+)" includes '
                              r"non-existent path$")
_BARE_PREFIX = re.compile(r"^\[[\w.+-]+ [\w-]+\]$")


def _imported_target_path(match: re.Match[str], view: LineView) -> Reading | None:
    # CMake prints the target, then the path quoted on a line of its own (blank lines between
    # are not in `previous`): the path line is read so both are in the answer.
    if view.cmake_block == "warning":
        return None
    before = [line for line in view.previous[-3:] if not _BARE_PREFIX.match(line)]
    header = _IMPORTED_TARGET.match(before[-1]) if before else None
    if header is None:
        return None
    target, path = header.group("target"), match.group("path")
    return Reading(
        subject="cmake",
        cause=f"CMake stopped at generate: the imported target {target} lists the include "
              f"folder {path} (INTERFACE_INCLUDE_DIRECTORIES), which does not exist: the "
              "package's exported CMake config names a folder its install does not have (the "
              "config was written for another prefix or build option, or the install is "
              "partial)",
        fix=f"reinstall or rebuild the package that exports {target} so that its CMake config "
            "and its files agree (the same prefix, options and CMake release), or create or "
            "restore that folder; then configure again from a clean build folder")


def _set_invalid(match: re.Match[str], view: LineView) -> Reading | None:
    where = next((line.split(" at ", 1)[1].rsplit(" (", 1)[0] for line in
                  reversed(view.previous) if line.startswith("CMake Error at ")
                  and line.endswith("(set):")), "")
    return Reading(
        subject="cmake",
        cause="a set() call in the project's CMake code"
              + (f" ({where})" if where else "") + " gives FORCE without CACHE, or CACHE "
              "without its type and docstring, and CMake rejects it (newer CMake releases "
              "check these arguments); a bug in the tree's CMake code, often a variable "
              "that expanded to nothing, not a missing package",
        fix="use a revision of the tree whose CMake code has the call fixed, or correct it "
            "(set(<var> <value> CACHE <type> <doc> FORCE), with the value quoted so an empty "
            "one stays one argument); then configure again")


def _invalid_escape(match: re.Match[str], view: LineView) -> Reading | None:
    escape = match.group("esc")
    parsed = ""
    for line in reversed(view.previous):
        if line == "when parsing string":
            break
        parsed = line
    windows = re.search(r"(?:^|[;\s\"])[A-Za-z]:\\", parsed) is not None
    why = ("a Windows path written with backslashes (from an environment variable or a -D "
           "value such as a ROCm, HIP or Python prefix) was put into CMake code as it is"
           if windows else "a string in CMake code holds a backslash that is not a CMake "
           "escape")
    return Reading(
        subject="cmake",
        cause=f"CMake read the backslash in '\\{escape}' as a character escape and rejects it "
              f"(Invalid character escape): {why}",
        fix="write the path with forward slashes (C:/…), or convert it in CMake code with "
            "file(TO_CMAKE_PATH …) / cmake_path(CONVERT …) before it is used; then configure "
            "again from a clean build folder")


def _msvc_flags(match: re.Match[str], view: LineView) -> Reading | None:
    flag = match.group("flag")
    return Reading(
        subject="cmake",
        cause=f"clang++ was given the MSVC option {flag} and took it for an input file: the "
              "compile flags CMake passed to a GNU-style clang driver hold MSVC defaults "
              "(/DWIN32 /D_WINDOWS /O2 /Ob2, CMake's MSVC platform flags), e.g. "
              "CMAKE_HIP_FLAGS or CMAKE_CXX_FLAGS initialised for MSVC",
        fix="remove the MSVC options from CMAKE_HIP_FLAGS and CMAKE_HIP_FLAGS_<CONFIG> (or the "
            "CXX ones) for the clang compile, or use a revision of the tree that strips them "
            "after enable_language(HIP); or compile with clang-cl, which takes MSVC options; "
            "then configure again from a clean build folder")


_CMAKE_ERROR_AT = re.compile(r"^CMake Error at (?P<file>.+?):\d+ \(include\):$")


def _include_invalid(match: re.Match[str], view: LineView) -> Reading | None:
    where = next((m.group("file") for m in map(_CMAKE_ERROR_AT.match, view.previous[-2:])
                  if m), "")
    if not where:
        return None  # the line without its header: whose include() it was is not known
    return Reading(
        subject="cmake",
        cause=f"include() in {where} was given more than one file: its argument expands an "
              "unquoted variable that holds a list (several entries, as CMAKE_MODULE_PATH "
              "has when a parent project added its own), so CMake split it into several "
              "arguments and refused the extra one",
        fix=f"use a release of the project that owns {where} whose include() names one "
            "path (its own module folder, not ${CMAKE_MODULE_PATH}/...), or patch that "
            "include() to do so; for a submodule, check out the commit the parent tree pins "
            "to a commit of that project with the fix")

# PyTorch's setup.py check_submodules, as the same function in pytorch/ao's setup.py (the
# stored pytorch/pytorch setup.py is years old; forks' copies print the same lines).
_SETUP = ("pytorch/ao@36027d82d1ad9949597ea16002ff4940374b1b94:setup.py (check_submodules: "
          "\"Could not find any of {} in {}\", \" --- Submodule initalization failed\"); "
          "reproduced by make/devpt6.sh running that setup.py")


def _submodule_files_missing(match: re.Match[str], view: LineView) -> Reading | None:
    folder = match.group("folder")
    return Reading(
        subject="cmake",
        cause=f"the project's setup.py found {folder} (a git submodule's folder) without any "
              "file a checked-out submodule has (CMakeLists.txt, Makefile, setup.py, LICENSE): "
              "the submodules are not checked out, or only partly",
        fix="run `git submodule update --init --recursive` in the source tree (`git submodule "
            "status` marks a missing one with '-'), then build again; a tree copied without "
            "its submodules needs a fresh `git clone --recursive`")


def _submodule_init_failed(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="cmake",
        cause="the project's setup.py found every submodule folder empty and its own `git "
              "submodule update --init --recursive` failed (the git error is above it; "
              "'not a git repository' means the tree is a source archive, not a clone)",
        fix="build from a git clone (`git clone --recursive <repo>`, or in an existing clone "
            "`git submodule update --init --recursive` where git and the network work); an "
            "archive without .git cannot fetch its submodules")


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
    Rule(id="cmake-deprecation-error", klass="cmake",
         triggers=("CMake Deprecation Error at",),
         pattern=rx(r"CMake Deprecation Error at (?P<file>\S+?):\d+ \(cmake_minimum_required\)"),
         read=_deprecation_error, source="Kitware/CMake Source/cmPolicies.cxx ('Compatibility "
         "with CMake < N will be removed from a future version of CMake. Update the VERSION "
         "argument <min> value or use a ...<max> suffix', a DEPRECATION_ERROR under "
         "-Werror=deprecated; text seen in a compiled copy in the code index, commit not "
         "established); reproduced with cmake 3.25.1 (make/cmake_messages.sh); "
         "ROCm/rocm-cmake#238"),
    Rule(id="cmake-policy-unknown", klass="cmake",
         triggers=("is not known to this version of CMake",),
         pattern=rx(r"^Policy \"(?P<policy>CMP\d{4})\" is not known to this version of CMake"),
         read=_policy_unknown, source="Kitware/CMake Source/cmCMakePolicyCommand.cxx "
         "(cmake_policy: 'Policy \"<id>\" is not known to this version of CMake.'; the GET "
         "form read in the code index); reproduced with cmake 3.25.1 and CMP0144 "
         "(make/cmake_messages.sh); microsoft/onnxruntime#21084"),
    Rule(id="cmake-imported-target-missing-include", klass="cmake",
         triggers=('"',),
         pattern=rx(_SUBPROJECT.replace("(?:", "^(?:", 1) + r'"(?P<path>[^"]+)"$'),
         read=_imported_target_path, source="Kitware/CMake Source/cmGeneratorTarget.cxx "
         "(checkInterfaceDirs: 'Imported target \"<name>\" includes non-existent path', "
         "the path quoted on its own line, then 'in its INTERFACE_INCLUDE_DIRECTORIES'; "
         "file not read at a commit); reproduced with cmake 3.25.1 (make/devbt3.sh); "
         "NixOS/nixpkgs#305641, ROCm/TheRock#198"),
    Rule(id="cmake-set-invalid-arguments", klass="cmake",
         triggers=("set given invalid arguments",),
         pattern=rx(r"^set given invalid arguments(?:: FORCE specified without CACHE| for "
                    r"CACHE mode)"),
         read=_set_invalid, source="Kitware/CMake Source/cmSetCommand.cxx "
         "(@05b03eae8560bd14631b8c5c64c387999fffb12b: 'given invalid arguments for CACHE "
         "mode.'; newer releases: 'given invalid arguments: FORCE specified without CACHE', "
         "text seen in a compiled copy in the code index, commit not established; CMake "
         "prefixes the command name); ROCm/TheRock#5177"),
    Rule(id="cmake-invalid-escape", klass="cmake",
         triggers=("Invalid character escape",),
         pattern=rx(r"^Invalid character escape '\\(?P<esc>\S?)'"),
         read=_invalid_escape, source="Kitware/CMake Source/cmMakefile.cxx "
         "(ExpandVariablesInString: 'Syntax error in cmake code at … when parsing string … "
         "Invalid character escape '\\<c>'.' for a backslash before a letter or digit; "
         "stored copy, commit not established); reproduced with cmake 3.25.1 "
         "(make/devbt3.sh); pytorch/audio#3991"),
    Rule(id="clang-given-msvc-flags", klass="cmake",
         triggers=("no such file or directory: '/",),
         pattern=rx(r"^\S*clang(?:\+\+)?(?:-\d+)?(?:\.exe)?: error: no such file or "
                    r"directory: '(?P<flag>/(?:D\w+|O[12bdsxi]\d?|EH\w+|M[DT]d?|W[0-4]|GR-?|"
                    r"Zi|RTC1))'$"),
         requires=rx(r"no such file or directory: '/D(?:WIN32|_WINDOWS)'"),
         read=_msvc_flags, source="Kitware/CMake Modules/Platform/Windows-MSVC.cmake (the "
         "MSVC flags CMake initialises, set(_PLATFORM_DEFINES \"/DWIN32\"), /RTC1, /GR /EHsc; "
         "stored copy, commit not established); clang's driver 'no such file or "
         "directory' for each, reproduced with clang++-22 /DWIN32 /O2 (make/devbt3.sh); "
         "ROCm/TheRock#5175"),
    Rule(id="cmake-include-list-argument", klass="cmake",
         triggers=("include called with invalid argument",),
         pattern=rx(r"^include called with invalid argument:"),
         read=_include_invalid, source="Kitware/CMake Source/cmIncludeCommand.cxx "
         "(\"called with invalid argument: \" for a third argument that is not OPTIONAL, "
         "RESULT_VARIABLE or NO_POLICY_SCOPE; file not read here): reproduced with cmake "
         "3.25.1, include(${CMAKE_MODULE_PATH}/Utilities.cmake) with three entries "
         "(make/devbt5.sh); pytorch/FBGEMM#4538"),
    Rule(id="setup-submodule-files-missing", klass="cmake",
         triggers=("Could not find any of CMakeLists.txt",),
         pattern=rx(r"^Could not find any of CMakeLists\.txt, Makefile, setup\.py, LICENSE"
                    r"(?:, LICENSE\.\w+)* in (?P<folder>\S+)$"),
         requires=rx(r"^Did you run 'git submodule update \S+ --recursive"),
         read=_submodule_files_missing, source=_SETUP),
    Rule(id="setup-submodule-init-failed", klass="cmake",
         triggers=("Submodule initalization failed", "Submodule initialization failed"),
         pattern=rx(r"^--- Submodule initi?alization failed$"),
         read=_submodule_init_failed, source=_SETUP),
)
