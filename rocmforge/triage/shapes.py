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


# --- found by scoring round r2 ----------------------------------------------------------------

def _bnb_binary(match: re.Match[str], view: LineView) -> Reading | None:
    library = match.group("lib")
    return Reading(
        subject=library,
        cause=f"bitsandbytes looked for {library}: it names its native library after the "
              "ROCm (or CUDA) version of the installed torch, and no library for that version "
              "was built or installed (it was built against another ROCm, e.g. the system's)",
        fix="build bitsandbytes against the ROCm of the installed torch (torch.version.hip), "
            "or tell bitsandbytes which library it has: BNB_ROCM_VERSION=<the version it was "
            "built with> (e.g. 63 for libbitsandbytes_rocm63.so)")


def _offload_arch_failed(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="PYTORCH_ROCM_ARCH",
        cause="the build asked offload-arch for this machine's GPU (no target was named), "
              "offload-arch failed (no GPU visible: a container or build host without /dev/kfd) "
              "and its warning ended up on the compiler's command line",
        fix="name the targets instead of detecting them: PYTORCH_ROCM_ARCH=<gfx…> (and the "
            "project's own variable, e.g. GPU_TARGETS / GPU_ARCHS), e.g. `invoke build --arch "
            "gfx1100`")


def _hip_architectures_empty(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="PYTORCH_ROCM_ARCH",
        cause="CMake's HIP compiler check ran with an empty target list (HIP_ARCHITECTURES is "
              "empty): every requested target was filtered out (the project supports none of "
              "them) or none was given",
        fix="give the project targets it supports (GPU_TARGETS / CMAKE_HIP_ARCHITECTURES, "
            "PYTORCH_ROCM_ARCH for torch), or leave that project out for these targets")


def _unknown_gfx_key(match: re.Match[str], view: LineView) -> Reading | None:
    arch = match.group("arch")
    return Reading(
        subject=arch,
        cause=f"the package looked {arch} up in its own table of GPU targets and did not find "
              f"it: it has no support (no kernels, no configuration) for {arch}",
        fix=f"use it on a target it supports, or a release that adds {arch}; for a build, "
            f"leave {arch} out of the target list (GPU_ARCHS / PYTORCH_ROCM_ARCH)")


def _math_build_target(match: re.Match[str], view: LineView) -> Reading | None:
    arch = match.group("arch")
    library = match.group("lib").lower()
    return Reading(
        subject=library, cause=f"{library}'s build produced no kernels for {arch} (the "
        f"generated object for {arch} does not exist): this {library} release does not support "
        f"{arch}",
        fix=f"build {library} without {arch} (its GPU_TARGETS), or use a {library} release that "
            f"supports {arch}; the torch build can go on without {library} for that target")


def _pep668(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="pip", cause="pip refused to install into the system Python "
        "(externally-managed-environment, PEP 668): the build ran pip outside a virtual "
        "environment", fix="run the build inside a venv (`python -m venv .venv` and its "
        "python), as the kit's own venv step does; do not override pip's refusal")


_PYPI_TORCH = re.compile(r"Downloading \S*?\btorch-(?P<ver>\d[\w.]*)-cp\d+-cp\d+\w*-"
                         r"(?:manylinux|linux)\S*\.whl")


def _torch_from_dependency(match: re.Match[str], view: LineView) -> Reading | None:
    if "+rocm" in view.text:
        return None
    for line in reversed(view.previous):
        wanted = re.search(r"Collecting torch\S* \(from (?P<pkg>[\w-]+)", line)
        if wanted:
            pkg = wanted.group("pkg")
            return Reading(
                subject="torch", cause=f"pip resolved {pkg}'s requirement on torch from PyPI "
                f"and downloaded torch {match.group('ver')} (PyPI's build, not a ROCm one), "
                f"which replaces the installed ROCm torch",
                fix=f"install a {pkg} built for the installed ROCm torch (from the same ROCm "
                    f"index, or built from source against it) and keep pip from replacing "
                    f"torch (`pip install --no-deps {pkg}`, or a constraints file pinning the "
                    "installed torch)")
    return None


def _cuda_torch_under_rocm(match: re.Match[str], view: LineView) -> Reading | None:
    pkg = match.group("pkg")
    return Reading(
        subject=pkg, cause=f"{pkg} {match.group('ver')} is a ROCm build (it loads "
        "libtorch_hip.so) but the torch installed is a CUDA build (+cu…): the two came from "
        "different indexes", fix=f"install {pkg} built for the installed torch (the same "
        f"index and variant as torch), or torch and {pkg} both from one ROCm index or one "
        "source build")


def _cuda_path_with_rocm_torch(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="USE_ROCM", cause="the package's setup took its CUDA path (it looked for nvcc "
        "/ CUDA_HOME) although the torch installed is a ROCm build: this release of the package "
        "has no ROCm build, or its ROCm path was not selected",
        fix="use a release (or fork) of the package with ROCm support and build it against the "
            "ROCm torch without build isolation (`pip install --no-build-isolation .`), with "
            "ROCM_HOME (or ROCM_PATH) set and hipcc on PATH so torch's cpp_extension finds "
            "ROCm; for flash-attention its ROCm backend (CK or Triton)")


def _hip_lang_missing(match: re.Match[str], view: LineView) -> Reading | None:
    root = ""
    for line in reversed(view.previous):
        if line.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", line):
            root = line.strip()
            break
    if not root:
        return None
    name = root.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1]
    subject = name if name.startswith("_rocm_sdk") else root
    return Reading(
        subject=subject, cause=f"CMake's HIP language setup was given the ROCm root {root}, "
        "which holds no hip-lang CMake package: it is a runtime-only part of the install "
        "(TheRock's _rocm_sdk_core) or not a ROCm root at all",
        fix="point ROCM_PATH / HIP_PATH / CMAKE_HIP_COMPILER_ROCM_ROOT at the development root "
            "(TheRock wheels: the devel package, `rocm-sdk path --root`, after `pip install "
            "rocm[devel]`), or install ROCm's HIP development files there")


def _fixed_rocm_path(match: re.Match[str], view: LineView) -> Reading | None:
    prefix = match.group("prefix")
    return Reading(
        subject=prefix, cause=f"the build needs {match.group('path')}, a path some CMake "
        f"config (often torch's own, from its wheel) names literally, and ROCm is not at "
        f"{prefix} on this machine",
        fix=f"make {prefix} resolve to the ROCm install (a symlink, or install ROCm there), or "
            "use a torch whose CMake config takes the ROCm path from ROCM_PATH (a newer "
            "release), then configure again")


def _triton_module_gone(match: re.Match[str], view: LineView) -> Reading | None:
    module = match.group("mod")
    user = ""
    for line in reversed(view.previous):
        found = re.search(r"(?:site|dist)-packages/(?P<pkg>[\w-]+)/", line)
        if found and found.group("pkg") != "triton":
            user = found.group("pkg")
            break
    who = user or "the package that imports it"
    return Reading(
        subject="triton", cause=f"{who} imports {module}, which the installed Triton no longer "
        "has (Triton 3.2 removed triton.ops): the package is older than the Triton that "
        "torch brings", fix=f"upgrade {who} to a release that works with the installed Triton "
        "(or pin the Triton that torch's release names)")


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


def _hipified_unknown_type(match: re.Match[str], view: LineView) -> Reading | None:
    source = match.group("file").rsplit("/", 1)[-1]
    name = match.group("type")
    how = ("hipify left this CUDA name as it was (this torch's hipify has no mapping for it)"
           if name.lower().startswith("cu") else "the HIP headers do not declare it")
    return Reading(
        subject=source, cause=f"the hipified source {source} uses {name}: {how}; torch's "
        "hipify maps CUDA names differently in this release (PyTorch 2.1 moved cuBLAS from "
        "rocBLAS to hipBLAS names) than the sources were written for",
        fix="build the extension release (or branch) written for this PyTorch's hipify "
            "mapping (e.g. ROCm/apex's branch for torch >= 2.1), or a PyTorch the sources "
            "match")


def _windows_crash(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="clang", cause="clang crashed (Windows access violation 0xC0000005 inside "
        "clang++.exe): a compiler bug hit by this source, not an error in it",
        fix="build the source at the commit known to compile (pin the library that exposed "
            "the crash), or use another clang release; report the crash upstream with its "
            "preprocessed source")


# --- found by scoring round r3 ----------------------------------------------------------------

def _unknown_cmake_command(match: re.Match[str], view: LineView) -> Reading | None:
    command = match.group("cmd")
    return Reading(
        subject="cmake", cause=f"the CMake running this project does not know the command "
        f"{command}: it is older than the project needs (cmake_path came with CMake 3.20, "
        "cmake_language with 3.18)", fix="install a newer CMake into the build environment "
        "(`python -m pip install 'cmake>=3.20'`, or the version the project's "
        "cmake_minimum_required names), then configure again")


def _cuda_nccl(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="USE_ROCM", cause="PyTorch's configure took the CUDA path (a CUDA toolkit on "
        "the machine turned USE_CUDA on) and looked for NCCL, CUDA's collective library: a "
        "ROCm build asks for RCCL instead (cmake/External/rccl.cmake)",
        fix="turn CUDA off for the ROCm build (USE_CUDA=0, as the kit does) and configure "
            "again from a clean build folder")


def _windows_space_path(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="HIP_PATH", cause="hipcc ran a tool from a path with a space that was not "
        "quoted (C:\\Program Files\\AMD\\ROCm\\…): HIP_PATH, set by AMD's HIP SDK "
        "installer, points hipcc at that other install instead of its own",
        fix="unset HIP_PATH (or point it at the ROCm the build uses) in the shell that builds, "
            "or uninstall the HIP SDK; `invoke doctor` shows what HIP_PATH points at")


# --- found by scoring round r4 ----------------------------------------------------------------

def _llvm_frame(match: re.Match[str], view: LineView) -> Reading | None:
    program = match.group("prog")
    subject = "clang" if program.startswith("clang") else program
    return Reading(
        subject=subject, cause=f"{program} crashed (the log shows its stack frames): a bug of "
        "the compiler hit by this source, not an error in the source",
        fix=f"use another release of {subject} (a newer ROCm, or the ROCm the project "
            "names), or build that source at a commit known to compile; report the crash "
            "upstream with the preprocessed source")


def _sdk_preload_key(match: re.Match[str], view: LineView) -> Reading | None:
    name = match.group("name")
    return Reading(
        subject=name, cause=f"torch asked the installed rocm-sdk packages (rocm_sdk) to preload "
        f"{name} at import, and they do not have it: the torch wheel and the rocm-sdk packages "
        f"come from different builds or target families ({name} is not built for every target)",
        fix=f"install torch and the rocm[libraries] packages from the same index and nightly "
            f"(the one for your GPU family), so torch preloads only what they ship (a torch "
            f"that preloads {name} needs rocm-sdk packages that have it); `rocm-sdk test` "
            f"lists what is there")


def _windows_torch_dll(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject=match.group("dll"), cause=f"Windows could not load {match.group('dll')} or a "
        "DLL it needs (the HIP runtime amdhip64_N.dll of the rocm_sdk packages): another "
        "amdhip64 (the display driver's, in System32) was loaded first, or the rocm_sdk "
        "packages that match torch are not installed",
        fix="import torch before any package that loads HIP itself (triton, for one): torch "
            "sets up the rocm_sdk DLL folders on import; and install the rocm[libraries] "
            "packages torch was built with")


def _math_module_load(match: re.Match[str], view: LineView) -> Reading | None:
    library, arch = match.group("lib").lower(), match.group("arch")
    return Reading(
        subject=library, cause=f"{library} could not load its kernels for {arch} ({library}'s "
        f"code object files for {arch} are not in the install or wheel)",
        fix=f"install a {library} whose library folder holds {arch}'s kernels (the ROCm packages "
            f"or wheels for your GPU family, at a nightly that ships them); until then keep "
            f"torch off {library} for this GPU"
            + (" (TORCH_BLAS_PREFER_HIPBLASLT=0)" if library == "hipblaslt" else ""))


_MATH_NAMES = ("hipsparselt", "hipblaslt", "rocblas", "miopen", "rocsparse", "rocfft",
               "composable_kernel")


def _unsupported_target(match: re.Match[str], view: LineView) -> Reading | None:
    arch = match.group("arch")
    context = " ".join((*view.previous[-4:], view.text)).lower()
    library = next((name for name in _MATH_NAMES if name in context), "")
    if not library:
        return None
    return Reading(
        subject=library, cause=f"{library} does not support {arch}: its configure checks the "
        f"target list against the targets it has kernels for",
        fix=f"leave {library} out for {arch} (build it only for the targets it lists), or "
            f"configure it without device kernels where it offers that; torch builds without "
            f"{library} for that target")


def _miopen_build(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="miopen", cause="MIOpen could not compile one of its kernels for the GPU's "
        "target ({device}) at run time: that kernel's source (inline assembly) is not valid "
        "for this target in this MIOpen release",
        fix="use an MIOpen release that supports this target (a newer ROCm), or keep the "
            "failing op off MIOpen (torch.backends.cudnn.enabled = False)")


def _uv_not_in_registry(match: re.Match[str], view: LineView) -> Reading | None:
    package = match.group("pkg")
    return Reading(
        subject=package, cause=f"the resolver found no {package} on the only index it was "
        f"given, and {match.group('who')} depends on it: the index (a ROCm family index) "
        f"does not mirror {package}",
        fix=f"add an index that carries {package} (`--extra-index-url https://pypi.org/simple`"
            f", or uv's index strategy setting), or install {package} first")


def _built_for_other_torch(match: re.Match[str], view: LineView) -> Reading | None:
    package = ""
    for line in reversed(view.previous[-3:]):
        named = re.search(r"(?P<pkg>[\w-]+) was built for:", line)
        if named:
            package = named.group("pkg").lower()
            break
    if not package:
        return None
    return Reading(
        subject=package, cause=f"the installed {package} is a CUDA build (for torch "
        f"{match.group('built')}) but torch is {match.group('have')}: its compiled extensions "
        "cannot load", fix=f"remove that {package} wheel and install a ROCm build of {package} "
        f"for this torch (or build it from source against it); keep pip from pulling "
        f"PyPI's CUDA {package}")


def _mixed_roots(match: re.Match[str], view: LineView) -> Reading | None:
    version = match.group("ver")
    others = [v for v in view.rocm_roots if v != version]
    if not others:
        return None
    where, library = match.group("where"), match.group("lib")
    return Reading(
        subject=library, cause=f"two ROCm installs are mixed: {where} comes from "
        f"/opt/rocm-{version} while the same program also runs from /opt/rocm-{others[0]}, so "
        f"a component of one release loads the other release's {library}",
        fix=f"use one ROCm install: remove /opt/rocm-{version} (or /opt/rocm-{others[0]}) and "
            "whatever still points at it (a Python package left in site-packages, an "
            "ld.so.conf.d file, LD_LIBRARY_PATH); `invoke doctor` lists the installs it finds")


# --- found by scoring round r4's late cases ---------------------------------------------------

def _config_name_wrapped(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block == "warning" or not view.previous or \
            not view.previous[-1].endswith("package configuration file provided by"):
        return None
    name = match.group("name")
    return _package(name, f"CMake found no package configuration file for {name}: the "
                    "{label} component is not installed in the prefixes CMake searched "
                    "(CMAKE_PREFIX_PATH)")


def _missing_extra(match: re.Match[str], view: LineView) -> Reading | None:
    extra = match.group("extra")
    return Reading(
        subject="rocm", cause=f"pip resolved a rocm {match.group('ver')} that does not "
        f"provide the extra '{extra}', so the device package it names is not installed: the "
        "index served a rocm distribution (another platform's, or an sdist) without that "
        "target's extra", fix="install from the index for your GPU family, or name the "
        "device package itself (rocm-sdk-device-<gfx>) at the same version as rocm; check "
        "with `pip install --dry-run` that it is listed")


def _torchvision_ops(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="torchvision", cause=f"torchvision's compiled operators are not registered "
        f"({match.group('op')} does not exist): the installed torchvision was not built "
        "against this torch (another release or variant, e.g. PyPI's beside a ROCm torch)",
        fix="install the torchvision built for this torch (the same ROCm index and nightly, "
            "or `invoke build` with the companion), with `pip install --no-deps` so torch "
            "stays")


def _stale_launcher(match: re.Match[str], view: LineView) -> Reading | None:
    python, script = match.group("python"), match.group("script")
    name = script.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".exe")
    return Reading(
        subject=name, klass="rocm-install" if name.startswith("rocm") else "",
        cause=f"the {name} launcher still points at {python}, a Python that is no longer "
        "there: the environment was moved or renamed after the package was installed",
        fix=f"reinstall the package that provides {name} in the environment where it is now "
            "(`pip install --force-reinstall --no-deps <package>`), or recreate the "
            "environment instead of renaming it")


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
    Rule(id="bitsandbytes-library", klass="import",
         triggers=("bitsandbytes", "binary not found"),
         pattern=_rx(r"(?:Could not find the bitsandbytes \w+ binary at|binary not found at)\W*"
                     r"(?:PosixPath\(')?\S*?(?P<lib>libbitsandbytes_\w+\.(?:so|dll|dylib))"),
         read=_bnb_binary, source="bitsandbytes-foundation/bitsandbytes@95f9af309d4d5793847169c"
         "39288dcd3fcbdf564:bitsandbytes/cextension.py (the library named by torch's ROCm "
         "version, BNB_ROCM_VERSION); bitsandbytes-foundation/bitsandbytes#2014"),
    Rule(id="offload-arch-failed", klass="gpu-target",
         triggers=("offload-arch failed",),
         pattern=_rx(r"offload-arch failed with return code"),
         read=_offload_arch_failed, source="torch.utils.cpp_extension's target detection; "
         "vllm-project/vllm#35642"),
    Rule(id="hip-architectures-empty", klass="gpu-target",
         triggers=("HIP_ARCHITECTURES is empty",),
         pattern=_rx(r"HIP_ARCHITECTURES is empty"),
         read=_hip_architectures_empty, source="CMake's HIP try_compile; ROCm/TheRock#4923"),
    Rule(id="unknown-gfx-key", klass="gpu-target",
         triggers=("KeyError",),
         pattern=_rx(r"KeyError: ['\"](?P<arch>gfx[0-9a-f]{3,4})['\"]"),
         read=_unknown_gfx_key, source="a package's own target table (aiter chip_info); "
         "ROCm/aiter#1552"),
    Rule(id="math-library-target-objects", klass="math-library",
         triggers=("no such file or directory",),
         pattern=_rx(r"no such file or directory: '\S*?/(?P<lib>hipBLASLt|rocBLAS|hipblaslt|"
                     r"rocblas)/\S*_(?P<arch>gfx[0-9a-f]{3,4})\.(?:o|co|hsaco)'"),
         read=_math_build_target, source="ROCm/TheRock#154 (hipBLASLt extops for gfx1151)"),
    Rule(id="pep668", klass="python-packaging",
         triggers=("externally-managed-environment",),
         pattern=_rx(r"error: externally-managed-environment"),
         read=_pep668, source="pip's PEP 668 error; Dao-AILab/flash-attention#2230"),
    Rule(id="torch-from-dependency", klass="python-packaging",
         triggers=("torch-",),
         pattern=_PYPI_TORCH,
         read=_torch_from_dependency, source="pip's resolver output; ROCm/pytorch#1533"),
    Rule(id="cuda-torch-under-rocm-package", klass="python-packaging", tier=0,
         triggers=("+rocm",),
         pattern=_rx(r"\b(?P<pkg>torch(?:audio|vision|text|data))(?:==|\s+)"
                     r"(?P<ver>\d[\w.]*\+rocm[\d.]+)"),
         requires=_rx(r"\btorch(?:==|\s+)\d[\w.]*\+cu\d+"),
         read=_cuda_torch_under_rocm, source="pytorch/audio#1749"),
    Rule(id="cuda-path-with-rocm-torch", klass="rocm-disabled",
         triggers=("nvcc was not found", "CUDA_HOME environment variable is not set"),
         pattern=_rx(r"nvcc was not found|CUDA_HOME environment variable is not set"),
         requires=_rx(r"\+rocm\d"),
         read=_cuda_path_with_rocm_torch, source="Dao-AILab/flash-attention#205; "
         "torch.utils.cpp_extension's CUDA_HOME check"),
    Rule(id="hip-lang-missing", klass="rocm-install",
         triggers=("does not contain the HIP runtime CMake package",),
         pattern=_rx(r"does not contain the HIP runtime CMake package"),
         read=_hip_lang_missing, source="Kitware/CMake Modules/CMakeDetermineHIPCompiler.cmake; "
         "ROCm/TheRock#1880"),
    Rule(id="fixed-rocm-path", klass="rocm-install",
         triggers=("No rule to make target", "missing and no known rule"),
         pattern=_rx(r"(?:No rule to make target|')\s*'?(?P<path>(?P<prefix>/opt/rocm[\w.-]*)/"
                     r"lib\w*/lib[\w.+-]+\.so[\w.]*)', needed by"),
         read=_fixed_rocm_path, source="make's / ninja's missing-input error; "
         "vllm-project/vllm#8042 (pytorch/pytorch#131701)"),
    Rule(id="triton-module-removed", klass="triton",
         triggers=("No module named 'triton.",),
         pattern=_rx(r"No module named '(?P<mod>triton\.[\w.]+)'"),
         read=_triton_module_gone, source="pytorch/pytorch#143718 (triton.ops removed in "
         "Triton 3.2)"),
    Rule(id="cmake-config-component", klass="missing-component",
         triggers=("Targets.cmake",),
         pattern=_rx(r"/cmake/(?P<pkg>[\w-]+)/(?P=pkg)(?P<part>\w+)Targets\.cmake\s*$"),
         requires=_rx(r"include could not find requested file"),
         read=_ck_config_component, source="CMake include() of a package config's component "
         "file; ROCm/composable_kernel#1646"),
    Rule(id="hipified-unknown-type", klass="hipify",
         triggers=("unknown type name '", "use of undeclared identifier '"),
         pattern=_rx(r"(?P<file>[\w./\\+-]+_hip\.(?:hip|cpp|cu|h))(?::\d+)+: error: "
                     r"(?:unknown type name|use of undeclared identifier) "
                     r"'(?P<type>(?:hip|cu|CU)\w+)'"),
         read=_hipified_unknown_type, source="ROCm/apex#115 (hipblasOperation_t after "
         "PyTorch 2.1's hipify change)"),
    Rule(id="windows-compiler-crash", klass="compiler-crash", tier=2,
         triggers=("0xC0000005",),
         pattern=_rx(r"Exception Code: 0xC0000005"),
         requires=_rx(r"clang\+*\S*\.exe"),
         read=_windows_crash, source="ROCm/rocm-libraries#2506 (clang++.exe access "
         "violation building Composable Kernel)"),
    Rule(id="unknown-cmake-command", klass="cmake",
         triggers=("Unknown CMake command",),
         pattern=_rx(r"Unknown CMake command \"(?P<cmd>cmake_\w+)\""),
         read=_unknown_cmake_command, source="CMake's error for a command it does not have "
         "(cmake_path: CMake 3.20); pytorch/pytorch#128420"),
    Rule(id="cuda-nccl", klass="rocm-disabled",
         triggers=("Could NOT find NCCL",),
         pattern=_rx(r"Could NOT find NCCL\b"),
         requires=_rx(r"External/nccl\.cmake"),
         read=_cuda_nccl, source="pytorch/pytorch:cmake/Dependencies.cmake (External/nccl.cmake "
         "only under USE_CUDA, rccl.cmake under USE_ROCM; stored copy, commit not pinned); "
         "ROCm/TheRock#1503"),
    Rule(id="windows-unquoted-hip-path", klass="rocm-install",
         triggers=("is not recognized as an internal or external command",),
         pattern=_rx(r"^'[A-Za-z]:\\Program' is not recognized as an internal or external "
                     r"command"),
         requires=_rx(r"hipcc|hipconfig"),
         read=_windows_space_path, source="cmd.exe's error; ROCm/TheRock#1200"),
    Rule(id="llvm-stack-frame", klass="compiler-crash", tier=2,
         triggers=("+0x",),
         pattern=_rx(r"#\d+ 0x[0-9a-f]{6,} .*\((?:\S*[/\\])?(?P<prog>clang[\w.+-]*?|llc|opt|"
                     r"lld|ld\.lld)(?:\.exe)?\+0x[0-9a-f]+\)"),
         read=_llvm_frame, source="LLVM's symbolized stack trace; ggml-org/llama.cpp#24964"),
    Rule(id="rocm-sdk-preload", klass="import",
         triggers=("KeyError",),
         pattern=_rx(r"KeyError: '(?P<name>(?!gfx)[a-z][\w-]*)'"),
         requires=_rx(r"rocm_sdk[/\\]__init__\.py\S*, line \d+, in (?:find_libraries|"
                      r"preload_libraries)"),
         read=_sdk_preload_key, source="ROCm/TheRock@89553ce3746eda74ade42557470d25e37c91b6f0:"
         "build_tools/packaging/python/"
         "templates/rocm/src/rocm_sdk (preload_libraries, `rocm-sdk test`); ROCm/TheRock#2345"),
    Rule(id="windows-torch-dll", klass="import",
         triggers=("WinError 126",),
         pattern=_rx(r"WinError 126\].*Error loading \"\S*?(?P<dll>torch_hip\.dll|c10_hip\.dll)"),
         read=_windows_torch_dll, source="torch/__init__.py _load_dll_libraries; "
         "triton-lang/triton-windows#35"),
    Rule(id="math-library-module-load", klass="math-library",
         triggers=("hipModuleLoad failed",),
         pattern=_rx(r"hipModuleLoad failed: \S*?[/\\](?P<lib>hipblaslt|rocblas|hipsparselt)"
                     r"[/\\]library[/\\]\S*?(?P<arch>gfx[0-9a-f]{3,4})"),
         read=_math_module_load, source="ROCm/TheRock#2847, #6641 (lazy Tensile kernels "
         "missing from a wheel or build)"),
    Rule(id="library-unsupported-target", klass="math-library",
         triggers=("Unsupported GPU target",),
         pattern=_rx(r"Unsupported GPU target: (?P<arch>gfx[0-9a-f]{3,4})"),
         read=_unsupported_target, source="hipSPARSELt's cmake/hipsparselt_supported_"
         "architectures.cmake; ROCm/TheRock#2042"),
    Rule(id="miopen-runtime-build", klass="math-library",
         triggers=("MIOpen",),
         pattern=_rx(r"MIOpen\(HIP\): Error \[(?:BuildOcl|BuildHip)\]"),
         requires=_rx(r"not a valid operand|cannot compile inline asm|instruction not supported "
                      r"on this GPU|invalid instruction"),
         read=_miopen_build, source="MIOpen's run-time kernel build; ROCm/MIOpen#3796"),
    Rule(id="uv-not-in-registry", klass="python-packaging",
         triggers=("was not found in the package registry",),
         pattern=_rx(r"Because (?P<pkg>[\w.-]+) was not found in the package registry and "
                     r"(?P<who>\S+) depends on"),
         read=_uv_not_in_registry, source="uv's resolver; ROCm/TheRock#2344"),
    Rule(id="extension-built-for-cuda-torch", klass="python-packaging",
         triggers=("you have",),
         pattern=_rx(r"PyTorch (?P<built>\S+\+cu\d+)\b.*\(you have (?P<have>\S+\+rocm[\w.]*)\)"),
         read=_built_for_other_torch, source="xformers' build-info check; unslothai/unsloth#11639"),
    Rule(id="mixed-rocm-installs", klass="rocm-install", tier=0,
         triggers=("/opt/rocm-",),
         pattern=_rx(r"(?P<where>/opt/rocm-(?P<ver>\d+\.\d+(?:\.\d+)?)/\S*?(?P<lib>lib[\w+-]+)"
                     r"\.so[\w.]*): (?:undefined symbol|cannot open shared object)"),
         read=_mixed_roots, source="ROCm/amdsmi#186 (the 7.1.1 CLI loading 7.0.1's "
         "libamd_smi.so)"),
    Rule(id="cmake-config-name-wrapped", klass="missing-component",
         triggers=("but CMake did not find one",),
         pattern=_rx(r"^\"(?P<name>[\w.+-]+)\", but CMake did not find one"),
         read=_config_name_wrapped, source="Kitware/CMake cmFindPackageCommand.cxx (the "
         "package name wrapped onto its own line); ROCm/TheRock#1555"),
    Rule(id="rocm-missing-extra", klass="python-packaging",
         triggers=("does not provide the extra",),
         pattern=_rx(r"\brocm (?P<ver>\S+) does not provide the extra '(?P<extra>[\w-]+)'"),
         read=_missing_extra, source="pip's warning; ROCm/TheRock#5347"),
    Rule(id="torchvision-ops-missing", klass="python-packaging",
         triggers=("does not exist",),
         pattern=_rx(r"operator (?P<op>torchvision::\w+) does not exist"),
         read=_torchvision_ops, source="torch.library's error when torchvision's C++ ops did "
         "not load; ROCm/pytorch#3109"),
    Rule(id="stale-launcher", klass="python-packaging",
         triggers=("Fatal error in launcher",),
         pattern=_rx(r"Fatal error in launcher: Unable to create process using "
                     r"'\"(?P<python>[^\"]+)\"\s+\"(?P<script>[^\"]+)\""),
         read=_stale_launcher, source="pip's Windows script launcher (distlib); "
         "patientx-cfz/comfyui-rocm#30"),
)
