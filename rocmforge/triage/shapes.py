"""More recurring failure shapes, found by scoring held-out rounds (tests/failures/ROUNDS.md).

Owns: rules for message shapes the first rules missed: Windows and lld linker symbols (the
symbol parsed out of its MSVC decoration), ld in another language, CMake's imported targets and
NOTFOUND variables, the install-layout hint of find_package, pypa build's missing build
dependencies, a math library's missing code objects and Tensile files, a header missing from a
compile that an installed torch drives, and a loader symbol wrapped onto the next line. Each
reader declines when the line does not prove the cause. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage import owners
from rocmforge.triage.demangle import demangle
from rocmforge.triage.rule import LineView, Reading, Rule

# --- linker symbols ---------------------------------------------------------------------------

# MSVC's readable form of a symbol: `__declspec(dllimport) class std::tuple<…> __cdecl
# at::native::f(class at::Tensor const &, __int64)`. What a person looks up is the qualified
# name before the parameter list.
_DECORATION = re.compile(r"__declspec\([^)]*\)\s*|\b(?:class|struct|enum|union)\s+|"
                         r"\b__(?:cdecl|stdcall|fastcall|thiscall|vectorcall|ptr64)\b\s*")


def symbol_name(text: str) -> str:
    """The qualified name of a linker or loader symbol: demangled (Itanium), stripped of MSVC
    decoration, return type and parameter list. `void __cdecl at::f(int)` -> `at::f`."""
    text = demangle(text.strip().strip("'\"`"))
    text = _DECORATION.sub("", text).strip()
    depth = 0
    for index, char in enumerate(text):  # cut at the parameter list's '(' (depth 0 of <>)
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
        elif char == "(" and depth == 0 and index > 0 and \
                not text.startswith("operator", index - 8):
            text = text[:index]
            break
    # The last space outside <> separates the return type from the name.
    depth, cut = 0, -1
    for index, char in enumerate(text):
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
        elif char == " " and depth == 0:
            cut = index
    return text[cut + 1:].strip() if cut >= 0 else text.strip()


def _link_symbol(match: re.Match[str], view: LineView) -> Reading | None:
    raw = match.group("sym").strip()
    name = symbol_name(raw)
    if not name or name.startswith("("):
        return None
    row = owners.symbol_owner(name)
    owner = (f"; it is exported by ROCm's {row.name}, so that library is missing from the link "
             "or is a release without it" if row else
             ": the object or library that defines it is not on the link line (its sources "
             "were left out of this target or this platform's build), or it comes from another "
             "release than the headers")
    return Reading(
        subject=name,
        cause=f"the linker ({match.group('linker')}) found no definition of {name}{owner}",
        fix=(f"link {row.name} from the same ROCm install as the headers ({row.install_hint()})"
             if row else
             "find which source defines it (`git grep` the name in the tree): if that source "
             "is not built for this platform or configuration, the tree needs the upstream fix "
             "that builds it or guards the call (build a newer commit), else rebuild from a "
             "clean build directory (`invoke clean`) so every object comes from one tree"))


def _ld_localized(match: re.Match[str], view: LineView) -> Reading | None:
    library = "lib" + match.group("lib")
    row = owners.library_owner(library)
    return Reading(
        subject=library,
        cause=f"the linker could not find {library}"
              f"{f' (ROCm component {row.name})' if row else ''} (its message is in the "
              "system's language): it is not installed or not in any folder on the link path",
        fix=(f"install {row.name}'s development package ({row.install_hint()}) in the ROCm "
             "install the build uses" if row else
             f"install the package that provides {library}.so, or add its folder to the link "
             "path (LIBRARY_PATH); `LANG=C` makes the linker print English messages"))


# --- CMake ------------------------------------------------------------------------------------

_TARGET_LINE = re.compile(r"^\s*(?P<ns>[A-Za-z][\w-]*)::(?P<name>[\w-]+)\s*$")


def _package(name: str, cause: str) -> Reading:
    row = owners.component(name)
    label = row.name if row else name.lower()
    return Reading(
        subject=label,
        cause=cause.format(label=label),
        fix=f"install {label}'s development package ({owners.install_hint(row, label)}) and "
            "put the ROCm prefix that holds its CMake config on CMAKE_PREFIX_PATH (`invoke "
            "build --rocm-path …`); `invoke doctor` lists the components the tree requires")


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
                    "prefixes CMake searched")


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


# --- Python build front-ends ----------------------------------------------------------------

_REQUIREMENT = re.compile(r"^\s*(?P<pkg>[A-Za-z][\w.-]*)\s*(?P<spec>[<>=!~][^;\s]*)?\s*$")


def _missing_build_dependency(match: re.Match[str], view: LineView) -> Reading | None:
    if not any("Missing dependencies" in line for line in view.previous[-4:]):
        return None
    pkg, spec = match.group("pkg"), match.group("spec") or ""
    if pkg.lower() == "cmake":
        return Reading(subject="cmake", klass="cmake",
                       cause=f"the package's build requires CMake {spec or '(any)'}, and the "
                             "CMake in the build environment is outside that range (pypa build "
                             "checks it with --no-isolation)",
                       fix=f"install a CMake in range into the build venv (`python -m pip "
                           f"install 'cmake{spec}'`), or build a commit of the package whose "
                           "requirements accept the installed CMake")
    return Reading(subject=pkg.lower(), cause=f"the build requirement {pkg}{spec} is missing "
                   "from the build environment (pypa build --no-isolation checks them)",
                   fix=f"install it into the build venv (`python -m pip install '{pkg}{spec}'`), "
                   "or build with isolation")


# --- math libraries ---------------------------------------------------------------------------

_MATH = r"(?:hipblaslt|rocblas|MIOpen|rocsparse|hipsparselt|rocfft|rocsolver|hipblas|rocrand)"


def _math_bundle(match: re.Match[str], view: LineView) -> Reading | None:
    library = match.group("lib")
    name = library.removeprefix("lib").split(".")[0].lower()
    arch = match.group("arch")
    return Reading(
        subject=name,
        cause=f"the HIP runtime found no code object for {arch} in {library}: that {name} was "
              f"built without kernels for {arch} (a wheel's or install's {name} covers only "
              "some targets)",
        fix=f"use a {name} built for {arch} (a ROCm install or wheel whose {name} lists it, "
            f"or build it with {arch}); or keep torch off {name} on this GPU"
            + (" (TORCH_BLAS_PREFER_HIPBLASLT=0 uses rocBLAS)" if name == "hipblaslt" else ""))


def _tensile_host(match: re.Match[str], view: LineView) -> Reading | None:
    library = match.group("lib").lower()
    return Reading(
        subject=library,
        cause=f"{library}'s Tensile kernel loader failed ({match.group('err')}): the kernel "
              f"files of {library} for this GPU (TensileLibrary / .hsaco / .co) are missing "
              "from the install or wheel",
        fix=f"install a {library} (ROCm release or device wheel) that ships the kernel files "
            f"for this GPU's target; check {library}'s library folder for the target's files")


# --- loader -----------------------------------------------------------------------------------

_WRAPPED_FROM = re.compile(r"(?P<where>[\w./+-]+\.so[\w.]*): undefined symbol:\s*$")


def _wrapped_symbol(match: re.Match[str], view: LineView) -> Reading | None:
    if not view.previous:
        return None
    head = _WRAPPED_FROM.search(view.previous[-1])
    if head is None:
        return None
    where = head.group("where")
    name = symbol_name(match.group("sym"))
    library = where.rsplit("/", 1)[-1]
    row = owners.library_owner(library)
    label = row.name if row else library.split(".so")[0].removeprefix("lib")
    return Reading(
        subject=name,
        cause=f"{where} needs {name}, which no loaded library defines: that {library} was "
              "built from sources that declare it without a definition, or against another "
              "release than the one loaded",
        fix=f"install or rebuild a {label} whose {library} resolves it (a fixed release of "
            f"{label}); check with `ldd -r {where}`")


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


SHAPES: tuple[Rule, ...] = (
    Rule(id="linker-undefined-symbol", klass="link",
         triggers=("undefined symbol: ", "unresolved external symbol"),
         pattern=_rx(r"(?P<linker>lld-link|ld\.lld|ld64\.lld|link\.exe|LINK)\s*: error"
                     r"(?: LNK\d+)?: (?:undefined symbol|unresolved external symbol):?\s*"
                     r"(?P<sym>.+?)(?:\s+referenced in function.*)?$"),
         read=_link_symbol, source="LLVM lld COFF/ELF 'undefined symbol:' and MSVC LNK2019/"
         "LNK2001; ROCm/TheRock#1256, #2064"),
    Rule(id="ld-localized-cannot-find", klass="link",
         triggers=(" -l",),
         pattern=_rx(r"\bld(?:\.\w+)?: (?!.*\bundefined\b)[^:]*\s-l(?P<lib>[\w.+-]+)\s*$"),
         requires=_rx(r"ld returned \d+ exit status"),
         read=_ld_localized, source="GNU ld 'cannot find -l' in a translated locale; "
         "pytorch/pytorch#100123"),
    Rule(id="cmake-imported-target", klass="missing-component",
         triggers=("but the target was not found",),
         pattern=_rx(r"but the target was not found"),
         read=_imported_target, source="CMake's check of INTERFACE_LINK_LIBRARIES "
         "(cmTargetPropCommandBase); ROCm/aotriton#206"),
    Rule(id="cmake-package-hint", klass="missing-component",
         triggers=("provides a separate development package",),
         pattern=_rx(r"\"(?P<name>[\w.+-]+)\" provides a separate development package"),
         requires=_rx(r"Configuring incomplete, errors occurred"),
         read=_config_hint,
         source="Kitware/CMake: cmFindPackageCommand.cxx (the hint after 'Could not find a "
         "package configuration file'); ROCm/pytorch#1802"),
    Rule(id="cmake-notfound-library", klass="missing-component",
         triggers=("_LIB",),
         pattern=_NOTFOUND_VAR,
         read=_notfound_library, source="CMake's 'set to NOTFOUND' report "
         "(cmGlobalGenerator::CheckTargetProperties); pytorch/pytorch#31049"),
    Rule(id="build-missing-dependency", klass="python-packaging",
         triggers=("<", ">", "=", "~"),
         pattern=_REQUIREMENT,
         read=_missing_build_dependency, source="pypa/build: 'Missing dependencies:' under "
         "--no-isolation; ROCm/pytorch#3098"),
    Rule(id="math-library-no-code-object", klass="math-library",
         triggers=("Cannot find CO in the bundle",),
         pattern=_rx(r"Cannot find CO in the bundle \S*?(?P<lib>lib" + _MATH +
                     r"[\w.]*\.so[\w.]*) for ISA: amdgcn-amd-amdhsa--(?P<arch>gfx[0-9a-f]+)"),
         read=_math_bundle, source="HIP runtime hip_fatbin.cpp 'Cannot find CO in the bundle'; "
         "pytorch/pytorch#127169"),
    Rule(id="tensile-host-error", klass="math-library",
         triggers=("tensile_host",),
         pattern=_rx(r"(?P<err>hipError\w+|rocblas_status_\w+)\s+at\s+(?P<lib>rocblas|hipblaslt)"
                     r"/\S*tensile_host"),
         read=_tensile_host, source="rocBLAS library/src/tensile_host.cpp; ROCm/TheRock#5976"),
    Rule(id="loader-symbol-wrapped", klass="import",
         triggers=("_Z",),
         pattern=_rx(r"^(?P<sym>_Z\w+)$"),
         read=_wrapped_symbol, source="glibc dlerror() wrapped by a log formatter; "
         "ROCm/rocm-systems#8514"),
)
