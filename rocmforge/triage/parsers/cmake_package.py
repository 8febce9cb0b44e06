"""CMake's package lookups that fail: find_package's missing configuration file, its
REQUIRED "Could NOT find", a version the caller rejects (also wrapped onto the next line),
pkg-config's missing .pc file, imported targets and NOTFOUND variables, install-layout hints
and missing package components. The subject is the ROCm component that was not found.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage import owners
from rocmforge.triage.parsers.cmake_find import is_outside, outside_hint, outside_reading
from rocmforge.triage.parsers.cmake_torch import torch_reading
from rocmforge.triage.rule import NOT_SHELL_TRACE, LineView, Reading, Rule, rx

_CMAKE_SOURCE = ("Kitware/CMake: Modules/FindPackageHandleStandardArgs.cmake, "
                 "cmFindPackageCommand.cxx")


# CMake packages of ROCm's build helpers, not components: the package that installs them.
# ROCm/rocm-cmake@11bcc88221a938e8755b8cbfc3f53a3be8744d7f:share/rocm/cmake/ROCMConfig.cmake
# (what find_package(ROCM) finds).
_HELPER_PACKAGE = {"rocm": "rocm-cmake (ROCMConfig.cmake; apt/dnf: rocm-cmake)"}
_HELPER_NAME = {"rocm": "rocm-cmake"}


# CMake packages outside ROCm that ROCm libraries' own builds ask for: the project that
# provides each, and where a distribution packages it.
_THIRD_PARTY = {
    # ROCm/Tensile@a164ed70df55ceb076f4a1f2fa2ea11f0f1384cc:Tensile/Source/lib/CMakeLists.txt:93
    # (find_package(msgpack REQUIRED NAMES msgpack msgpack-cxx msgpack-c), for Tensile's
    # msgpack kernel catalogue); Debian 12's package list here (apt-cache: libmsgpack-cxx-dev).
    "msgpack": ("msgpack-cxx", "the C++ MessagePack headers that Tensile's host library (in "
                "rocBLAS, hipBLASLt, hipSPARSELt) reads its kernel catalogue with",
                "Debian/Ubuntu: libmsgpack-cxx-dev"),
}


def _third_party(name: str, how: str, config: bool) -> Reading | None:
    known = _THIRD_PARTY.get(name.lower())
    if known is None:
        return None
    project, what, hint = known
    files = f" (it looked for {name}Config.cmake / {name.lower()}-config.cmake)" if config else ""
    return Reading(
        subject=name.lower(),
        cause=f"CMake could not find {name} ({how}){files}: {name} is {project}, {what}; it is "
              "not part of ROCm, and no install of it was in the prefixes CMake searched",
        fix=f"install {project} ({hint}; in a package recipe such as an EasyBuild easyconfig, "
            "Spack or Nix package, add it as a build dependency) or point CMake at it "
            f"(CMAKE_PREFIX_PATH=<its prefix>, {name}_DIR=<the folder with its config file>)")


def _package_reading(name: str, how: str, *, config: bool = False) -> Reading:
    if config and name == "Torch":
        return torch_reading(name)
    row = owners.component(name)
    outside = None if row else _third_party(name, how, config)
    if outside is not None:
        return outside
    label = row.name if row else name.lower()
    if row is None and label not in _HELPER_PACKAGE and is_outside(label):
        return outside_reading(name, how, config=config)
    hint = _HELPER_PACKAGE.get(label) or owners.install_hint(row, label)
    where = f", or {name}_DIR=<the folder with its {name}Config.cmake>" if config else ""
    fix = (f"install {label}'s development package ({hint}) into the "
           "ROCm install the build uses, or point CMake at it (`invoke build --rocm-path "
           f"/opt/rocm-X.Y` or CMAKE_PREFIX_PATH=<prefix>{where}); `invoke doctor` lists every "
           "component the tree's LoadHIP.cmake requires and which are missing")
    what = (f"the {label} package config (installed by {_HELPER_NAME[label]})"
            if label in _HELPER_NAME
            else f"the ROCm component {label}")
    return Reading(subject=label, cause=f"CMake could not find {name} ({how}): {what} is not "
                   "installed in the ROCm prefix CMake searched, or that prefix is the wrong "
                   "ROCm install", fix=fix)


def _config_file(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block == "warning" and not _loadhip_hip(match.group("name"), view):
        return None  # an optional package: the build goes on without it
    return _package_reading(match.group("name"), "no package configuration file",
                            config=True)


_PYTHON = re.compile(r"^Python[23]?$")
_WANT = re.compile(r'required (?:range )?is (?:at least |exact version )?"')


def _could_not_find(match: re.Match[str], view: LineView) -> Reading | None:
    # FindPackageHandleStandardArgs: fatal only inside a CMake Error block (REQUIRED); the same
    # words after "-- " are a status line for an optional package.
    if view.cmake_block != "error" or view.text.startswith("--"):
        return None
    if match.group("name") == "NCCL":
        return None  # CUDA's; a ROCm build asks for RCCL (parsers/rocm_disabled.py: cuda-nccl)
    if _PYTHON.match(match.group("name")) or match.group("name").startswith("OpenMP_"):
        return None  # FindPython's components, FindOpenMP's languages: cmake_find.py
    return _package_reading(match.group("name"), "missing: " + match.group("missing").strip())


def _incompatible_version(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block == "warning":
        return None
    name = match.group("name")
    row = owners.component(name)
    label = row.name if row else name.lower()
    return Reading(
        subject=label,
        cause=f"CMake found {name}, but not in a version the caller accepts (requested "
              f"{match.group('want')}): the version file of the ROCm install found "
              "does not match what the tree asks for (a ROCm install of another release, or two "
              "ROCm installs mixed)",
        fix=f"build against one ROCm install whose {label} matches the tree (`invoke build "
            "--rocm-path /opt/rocm-X.Y`; `invoke doctor` shows each install and the version of "
            "each component), or use a PyTorch release that supports that ROCm")


_UNSUITABLE = re.compile(r'Found unsuitable version "(?P<have>[^"]+)"(?:, (?:but required is '
                         r'(?:at least |exact version )?|required range is )"(?P<want>[^"]+)")?')


def _unsuitable_version(name: str, view: LineView) -> Reading | None:
    """FindPackageHandleStandardArgs found the package in a version the caller refuses."""
    found = _UNSUITABLE.search(view.text)
    if not found:
        return None
    row = owners.component(name)
    label = row.name if row else name.lower()
    want = found.group("want")
    return Reading(
        subject=label,
        cause=f"CMake found {name} {found.group('have')}, a version the caller refuses"
              + (f" (it requires {want})" if want else "") + ": the install CMake found is "
              "another release than the tree needs" + (
                  " (an older ROCm, or two ROCm installs mixed)" if row else ""),
        fix=(f"build against an install whose {label} is a release the tree accepts (`invoke "
             "build --rocm-path /opt/rocm-X.Y`; `invoke doctor` shows each install and its "
             "components' versions), or use a release of the tree that accepts this one")
        if row else (f"install a {name} release the tree accepts and point CMake at it "
                     f"({name}_ROOT or CMAKE_PREFIX_PATH), or use a release of the tree that "
                     "accepts this one"))


def _pkgconfig_missing(match: re.Match[str], view: LineView) -> Reading | None:
    return _package_reading(match.group("name"), "pkg-config found no .pc file")


_TARGET_LINE = re.compile(r"^\s*(?P<ns>[A-Za-z][\w-]*)::(?P<name>[\w-]+)\s*$")


def _package(name: str, cause: str, *, config: bool = False) -> Reading:
    if config and name == "Torch":
        return torch_reading(name)
    row = owners.component(name)
    label = row.name if row else name.lower()
    # CMake's own advice for a package config it did not find (cmFindPackageCommand.cxx:
    # 'set "<name>_DIR" to a directory containing one of the above files'): only where the
    # name is the package find_package asked for, not an imported target's namespace.
    where = (f" (or set {name}_DIR to the folder that holds its {name}Config.cmake)"
             if config else "")
    return Reading(
        subject=label,
        cause=cause.format(label=label),
        fix=f"install {label}'s development package ({outside_hint(label)}) and put its "
            f"prefix on CMAKE_PREFIX_PATH{where}" if row is None and is_outside(label) else
        f"install {label}'s development package ({owners.install_hint(row, label)}) and "
            "put the ROCm prefix that holds its CMake config on CMAKE_PREFIX_PATH (`invoke "
            f"build --rocm-path …`){where}; `invoke doctor` lists the components the tree "
            "requires")


def _imported_target(match: re.Match[str], view: LineView) -> Reading | None:
    for line in reversed(view.previous):
        found = _TARGET_LINE.match(line)
        if found:
            target = f"{found.group('ns')}::{found.group('name')}"
            return _package(found.group("ns"), f"a CMake package links the imported target "
                            f"{target}, but no find_package call of this configure defined it: "
                            "the {label} package config was not found on CMake's search path")
    return None


def _config_hint(match: re.Match[str], view: LineView) -> Reading | None:
    # Only in an error block; a block whose header the log cut off counts when no warning
    # header is in sight (the rule also needs the configure to have failed).
    if view.cmake_block == "warning" or any(line.startswith("CMake Warning")
                                            for line in view.previous):
        return None
    return _package(match.group("name"), "CMake found no package configuration file for "
                    f"{match.group('name')}: the {{label}} component is not installed in the "
                    "prefixes CMake searched", config=True)


_NOTFOUND_VAR = re.compile(r"^\W*(?P<var>[A-Z][A-Z0-9_]*?)_(?:LIB|LIBRARY|LIBRARIES)\W*$")


def _notfound_library(match: re.Match[str], view: LineView) -> Reading | None:
    if not any("set to NOTFOUND" in line for line in view.previous[-3:]):
        return None
    var = match.group("var")
    name = var.removeprefix("ROCM_").removeprefix("HIP_").lower()
    row = owners.library_owner(name) or owners.component(name)
    label = row.name if row else name
    return Reading(
        subject=label,
        cause=f"CMake left {var}_LIB… NOTFOUND and a target links it: the {label} library "
              "is not installed in the ROCm install the configure used",
        fix=f"install the ROCm development package that provides lib{name} "
            f"({owners.install_hint(row, label)}), then configure again from a clean build "
            "folder")


def _ck_config_component(match: re.Match[str], view: LineView) -> Reading | None:
    package, part = match.group("pkg"), match.group("part")
    if package == "composable_kernel":
        return Reading(
            subject="composable_kernel", klass="composable-kernel",
            cause=f"the installed composable_kernel's CMake config lists the component {part}, "
                  "but its targets file was not installed: CK was built for targets that do "
                  f"not produce {part} (its GPU_TARGETS)",
            fix="rebuild composable_kernel for the targets that need it (GPU_TARGETS), or "
                "without that component, then configure the dependent project again")
    return _package(package, f"the installed {package} CMake config lists the component "
                    f"{part}, but its targets file is not installed: {{label}} is installed "
                    "partly or for other targets")


def _config_name_wrapped(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block == "warning" or not view.previous or \
            not view.previous[-1].endswith("package configuration file provided by"):
        return None
    name = match.group("name")
    return _package(name, f"CMake found no package configuration file for {name}: the "
                    "{label} component is not installed in the prefixes CMake searched "
                    "(CMAKE_PREFIX_PATH)", config=True)


_WRAPPED_PACKAGE = re.compile(r"configuration file for package \"(?P<name>[^\"]+)\" that is\s*$")


def _incompatible_wrapped(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block != "error" or not view.previous:
        return None
    head = _WRAPPED_PACKAGE.search(view.previous[-1])
    if head is None:
        return None
    name = head.group("name")
    label = name.lower()
    return Reading(
        subject=label,
        cause=f"CMake found {name}, but not in a version the caller accepts (requested "
              f"{match.group('want')}): the ROCm install found is another release than the "
              "one the tree asks for, or two ROCm installs are mixed",
        fix=f"build against one ROCm install whose {label} matches the tree (`invoke build "
            "--rocm-path /opt/rocm-X.Y`; `invoke doctor` shows each install and its "
            "components' versions), or use a release of the tree that supports that ROCm")


_REFUSED_HEAD = re.compile(r'configuration file for package "(?P<name>[^"]+)"')
_REFUSED_WANT = re.compile(r'requested version\s+"(?P<want>[^"]+)"')
_LOADHIP = re.compile(r"^CMake Warning at \S*LoadHIP\.cmake:\d+")


def _loadhip_hip(name: str, view: LineView) -> bool:
    """PyTorch's LoadHIP.cmake looks HIP up without REQUIRED (a CMake Warning) and builds
    without ROCm when it is not found: that warning is the ROCm build's failure."""
    return name.lower() == "hip" and any(_LOADHIP.match(line) for line in view.previous)


def _refused_config(match: re.Match[str], view: LineView) -> Reading | None:
    """find_package's list of configs it "considered but not accepted", each with the
    version its version file reported: the package was found in a version it refused."""
    recent = view.previous[-6:]
    if not any(line.startswith("The following configuration files were considered but not")
               for line in recent):
        return None
    head = next((h for h in map(_REFUSED_HEAD.search, reversed(recent)) if h), None)
    want = next((w for w in map(_REFUSED_WANT.search, reversed(recent)) if w), None)
    if head is None or want is None:
        return None
    name = head.group("name")
    if view.cmake_block == "warning":
        # Optional: the configure goes on. Only PyTorch's own HIP lookup, whose failure turns
        # the ROCm build off, proves the failure; any other optional package claims nothing.
        if not _loadhip_hip(name, view):
            return None
    elif view.cmake_block != "error":
        return None
    row = owners.component(name)
    label = row.name if row else name.lower()
    have, path, asked = match.group("have"), match.group("path"), want.group("want")
    return Reading(
        subject=label,
        cause=f"CMake found {name} {have} ({path}), but that config's version file does not "
              f"accept the requested version {asked}, so CMake treats {name} as not found"
              + (": PyTorch's LoadHIP.cmake then builds without ROCm or stops"
                 if label == "hip" else ""),
        fix=(f"point CMake at an install of {name} whose config accepts {asked} ({name}_DIR="
             "<the folder with its config> or CMAKE_PREFIX_PATH), or use a release of the "
             f"project that accepts {name} {have}") if row is None and is_outside(label) else
        (f"point CMake at an install whose {label} config accepts {asked} (a full ROCm "
            f"release: `invoke build --rocm-path /opt/rocm-X.Y`, or {name}_DIR=<its lib/cmake/"
            f"{label}>), not a copy whose version file refuses it (a distribution's split "
            "package); `invoke doctor` shows each install and its components' versions"))


def _config_targets_file(match: re.Match[str], view: LineView) -> Reading | None:
    package, folder = match.group("pkg"), match.group("folder")
    return _package(package, f"CMake loaded the {package} config in {folder}, but its "
                    f"{package}-targets.cmake is not there: that copy is a partial or legacy "
                    "install (an old layout's symlinked folder), so {label} is not usable from "
                    "it; CMAKE_PREFIX_PATH should lead to the complete install's lib/cmake")


RULES: tuple[Rule, ...] = (
    Rule(id="cmake-config-file", klass="missing-component",
         triggers=("package configuration file provided by",),
         pattern=rx(NOT_SHELL_TRACE + r'(?:Could not find a|find a) package configuration file '
                     r'provided by\s+"(?P<name>[^"]+)"'),
         read=_config_file, source=_CMAKE_SOURCE),
    Rule(id="cmake-could-not-find", klass="missing-component",
         triggers=("Could NOT find",),
         pattern=rx(r"Could NOT find (?P<name>[\w.+-]+)(?: \(missing:(?P<missing>[^)]*)\))?"),
         read=lambda m, v: _could_not_find(m, v) if m.group("missing") is not None else (
             None if v.cmake_block != "error" or v.text.startswith("--")
             or (_PYTHON.match(m.group("name")) and ("(missing:" in v.text or (
                 "Found unsuitable version" in v.text and not _WANT.search(v.text)))) else
             _unsuitable_version(m.group("name"), v) or
             _package_reading(m.group("name"), "not found")),
         source=_CMAKE_SOURCE + "; FindPackageHandleStandardArgs.cmake's 'Could NOT find <name>: "
         "Found unsuitable version \"X\", but required is at least|exact version \"Y\"' "
         "(and 'required range is' for a version range)"),
    Rule(id="cmake-incompatible-version", klass="missing-component",
         triggers=("compatible with requested version",),
         pattern=rx(r'configuration file for package "(?P<name>[^"]+)" that is compatible '
                     r'with requested version\s+"?(?P<want>[^".]*(?:\.[^".]*)*)"?'),
         read=_incompatible_version, source=_CMAKE_SOURCE),
    Rule(id="pkg-config-missing", klass="missing-component",
         triggers=("No package '",),
         pattern=rx(r"No package '(?P<name>[\w.+-]+)' found"),
         read=_pkgconfig_missing, source="pkg-config's error text"),
    Rule(id="cmake-imported-target", klass="missing-component",
         triggers=("but the target was not found",),
         pattern=rx(r"but the target was not found"),
         read=_imported_target, source="CMake's check of INTERFACE_LINK_LIBRARIES "
         "(cmTargetPropCommandBase); ROCm/aotriton#206"),
    Rule(id="cmake-package-hint", klass="missing-component",
         triggers=("provides a separate development package",),
         pattern=rx(r"\"(?P<name>[\w.+-]+)\" provides a separate development package"),
         requires=rx(r"Configuring incomplete, errors occurred"),
         read=_config_hint,
         source="Kitware/CMake: cmFindPackageCommand.cxx (the hint after 'Could not find a "
         "package configuration file'); ROCm/pytorch#1802"),
    Rule(id="cmake-notfound-library", klass="missing-component",
         triggers=("_LIB",),
         pattern=_NOTFOUND_VAR,
         read=_notfound_library, source="CMake's 'set to NOTFOUND' report "
         "(cmGlobalGenerator::CheckTargetProperties); pytorch/pytorch#31049"),
    Rule(id="cmake-config-component", klass="missing-component",
         triggers=("Targets.cmake",),
         pattern=rx(r"/cmake/(?P<pkg>[\w-]+)/(?P=pkg)(?P<part>\w+)Targets\.cmake\s*$"),
         requires=rx(r"include could not find requested file"),
         read=_ck_config_component, source="CMake include() of a package config's component "
         "file; ROCm/composable_kernel#1646"),
    Rule(id="cmake-config-name-wrapped", klass="missing-component",
         triggers=("but CMake did not find one",),
         pattern=rx(r"^\"(?P<name>[\w.+-]+)\", but CMake did not find one"),
         read=_config_name_wrapped, source="Kitware/CMake cmFindPackageCommand.cxx (the "
         "package name wrapped onto its own line); ROCm/TheRock#1555"),
    Rule(id="cmake-incompatible-wrapped", klass="missing-component",
         triggers=("compatible with requested version",),
         pattern=rx(r'^compatible with requested version\s+"?(?P<want>[^"]+?)"?\.?\s*$'),
         read=_incompatible_wrapped, source="Kitware/CMake cmFindPackageCommand.cxx (the "
         "message wrapped by CMake's formatter)"),
    Rule(id="cmake-config-refused", klass="missing-component",
         triggers=(".cmake, version: ",),
         pattern=rx(r"^(?P<path>\S+\.cmake), version: (?P<have>\S+)\s*$"),
         read=_refused_config, source="Kitware/CMake: Source/cmFindPackageCommand.cxx ("
         "'Could not find a configuration file for package \"X\" that is compatible with "
         "requested version \"V\".' then 'The following configuration files were considered "
         "but not accepted:' and '<file>, version: <v>'; printed here by cmake 3.25.1 and 4.x, "
         "make/cmake_refused_version.sh); ROCm/hip#3520 (Fedora's hip-config.cmake 6.0.0 for "
         "LoadHIP.cmake's find_package(HIP 1.0))"),
    Rule(id="cmake-config-targets-file", klass="missing-component",
         triggers=("-targets.cmake",),
         pattern=rx(r"(?P<folder>\S*/cmake/(?P<pkg>[\w-]+))/(?P=pkg)-targets\.cmake\s*$"),
         requires=rx(r"include could not find requested file"),
         read=_config_targets_file, source="CMake include() of a package config's targets "
         "file; rocm-arch/rocm-arch#892 (the legacy /opt/rocm/hip/lib/cmake/hip copy)"),
)


# What cmake_wrapped.py reads with: the same readings for the same message broken elsewhere.
package_reading = _package_reading
loadhip_hip = _loadhip_hip
