"""Generic message families, read by their values rather than by one thread's wording.

Owns: rules for the messages a tool prints for any library, package, program or version (the
loader's version-check error for any versioned symbol set, lld's "unable to find library", a
shell reporting a SIGKILLed job, CMake's "No CMAKE_<LANG>_COMPILER", pip's unsupported-wheel and
resolver-conflict errors, a ROCm tool missing from its install, a too old GCC). Each reader
parses the value (library, package, program, version) out of the message and declines where the
message alone does not prove a cause. Must not: read files, run programs or pick between
findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule

_JOBS_FIX = ("{jobs_advice}; a PyTorch ROCm build needs about 4-5 GB of RAM per compile job, "
             "and the rerun resumes where it stopped")

# Programs of a build whose SIGKILL is the out-of-memory killer's in practice (compilers,
# linkers, the LLVM tools a HIP device link runs).
_BUILD_PROGRAM = re.compile(
    r"^(?:cc1plus|cc1|c\+\+|g\+\+(?:-\d+)?|gcc(?:-\d+)?|clang(?:\+\+)?(?:-\d+)?|amdclang\+\+|"
    r"hipcc(?:\.pl)?|nvcc|ld(?:\.\w+)?|lld|collect2|llvm-link|llc|opt|lto1|ninja)$")


def _glibc_version(match: re.Match[str], view: LineView) -> Reading | None:
    if re.match(r"^\S*\bld\S*: ", view.text):
        return None  # the linker's check at build time, not the loader's
    version = match.group("ver")
    needer = (match.group("by") or "").rsplit("/", 1)[-1]
    who = needer or "a binary"
    return Reading(
        subject=version,
        cause=f"{who} was built against glibc with {version}, newer than this system's "
              "C library: a wheel or binary built on a newer distribution than the one it "
              "runs on",
        fix="use a build made for this distribution's glibc (a manylinux wheel whose tag is "
            "not newer than `ldd --version` shows), or build it here from source, or run on a "
            "distribution with that glibc")


def _libstdcxx_unnamed(match: re.Match[str], view: LineView) -> Reading | None:
    version = match.group("ver")
    needer = match.group("by").rsplit("/", 1)[-1]
    return Reading(
        subject=version,
        cause=f"{needer} needs {version}, which the libstdc++ loaded at run time does not "
              "have: it was built with a newer GCC's libstdc++ than the one found first (often "
              "a conda env's or an old system copy)",
        fix="run with the libstdc++ of the compiler that built it (install the newer "
            "libstdc++6, or put its folder first on LD_LIBRARY_PATH; in conda: `conda install "
            "-c conda-forge libstdcxx-ng`), or rebuild with the system GCC (--gcc N)")


def _lld_no_library(match: re.Match[str], view: LineView) -> Reading | None:
    name = match.group("lib")
    if "::" in name:
        return None  # an unresolved CMake imported target passed through as -l
    library = "lib" + name
    return Reading(
        subject=library,
        cause=f"the linker (lld) could not find {library}: it is not installed, or not in any "
              "folder on the link path",
        fix=f"install the development package that provides {library}.so (or .a), or add the "
            "folder that holds it to the link path (-L, LIBRARY_PATH, or CMAKE_PREFIX_PATH for "
            f"a CMake package); a ROCm install may keep it in lib64 (`ls /opt/rocm*/lib*/"
            f"{library}.*`)")


def _shell_killed(match: re.Match[str], view: LineView) -> Reading | None:
    program = match.group("cmd").strip("'\"").rsplit("/", 1)[-1]
    if not _BUILD_PROGRAM.match(program):
        return None  # a job of unknown kind: SIGKILL alone does not prove memory ran out
    return Reading(
        subject=program,
        cause=f"the shell reports {program} was killed (SIGKILL), almost always the "
              "out-of-memory killer: too many parallel jobs for this machine's memory",
        fix=_JOBS_FIX)


def _cmake_no_compiler(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block != "error" and not view.text.startswith("CMake Error"):
        return None
    lang = match.group("lang") or match.group("lang2") or match.group("lang3")
    if lang == "HIP":
        return Reading(
            subject="hipcc", klass="rocm-install",
            cause="CMake found no HIP compiler: the ROCm install the build uses has no "
                  "llvm/bin/clang++ (rocm-llvm not installed), or ROCM_PATH / HIP_PATH / "
                  "CMAKE_HIP_COMPILER point at a folder without it",
            fix="install ROCm's compiler (rocm-llvm, hipcc) and point the build at that ROCm "
                "(`invoke build --rocm-path /opt/rocm-X.Y`, or CMAKE_HIP_COMPILER="
                "<rocm>/llvm/bin/clang++); `invoke doctor` shows the ROCm the kit found")
    name = "gcc" if lang == "C" else "g++"
    return Reading(
        subject=name,
        cause=f"CMake found no {lang} compiler: none is installed, or CC / CXX (or "
              f"CMAKE_{lang}_COMPILER) name a program that does not exist",
        fix=f"install the host compiler (e.g. `apt install {name}` or build-essential), or "
            "unset CC/CXX or point them at an installed compiler, then configure from a clean "
            "build folder")


_WHEEL = re.compile(r"(?P<pkg>[A-Za-z0-9][\w.]*?)-(?P<ver>\d[\w.+!-]*?)-(?P<py>[\w.]+)-"
                    r"(?P<abi>[\w.]+)-(?P<plat>[\w.]+)\.whl")


def _unsupported_wheel(match: re.Match[str], view: LineView) -> Reading | None:
    wheel = _WHEEL.search(match.group("wheel"))
    if wheel is None:
        return None
    package = wheel.group("pkg").lower().replace("_", "-")
    return Reading(
        subject=package,
        cause=f"pip refused {match.group('wheel').rsplit('/', 1)[-1]}: its tags (Python "
              f"{wheel.group('py')}, platform {wheel.group('plat')}) do not match this "
              "interpreter and system (another Python version, or another OS or CPU)",
        fix="install the wheel built for this Python and platform (`python -m pip debug "
            "--verbose` lists the tags it accepts; the index lists one wheel per cpXY), or use "
            "the Python version the wheel was built for")


def _resolver_conflict(match: re.Match[str], view: LineView) -> Reading | None:
    first = match.group("pkg").split("==")[0].split("[")[0].lower()
    return Reading(
        subject=first,
        cause="pip could not resolve the requirements: the versions asked for (a pinned "
              f"{first} and what the other packages require of it) exclude each other, or the "
              "index holds no build of one of them for this torch/ROCm",
        fix="pin versions that belong together (torch, torchvision and torchaudio of one "
            "release, from one index: the ROCm index of that torch), or drop the pin that "
            "conflicts; pip's lines above say which package asked for what")


_ROCM_TOOL = re.compile(r"^(?:hipconfig|rocminfo|rocm_agent_enumerator|rocm-smi|amd-smi|"
                        r"amdclang\+\+|amdclang|clang\+\+|clang|offload-arch|roc-obj-ls|"
                        r"hipify-perl|llvm-link|ld\.lld)$")


def _rocm_tool_missing(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path")
    tool = path.rsplit("/", 1)[-1]
    if not _ROCM_TOOL.match(tool) or "/hip/bin/" in path:
        return None  # hipcc, and the old <rocm>/hip layout, are the table's (a stale HIP_PATH)
    root = match.group("root")
    return Reading(
        subject=tool,
        cause=f"{path} does not exist: the ROCm install at {root} lacks {tool} (a partial "
              "install, a runtime-only package set, or a ROCm path that points at another "
              "layout than the one installed)",
        fix=f"install the ROCm package that provides {tool} in {root}, or point ROCM_PATH / "
            "HIP_PATH (`invoke build --rocm-path`) at the ROCm install that has it; `invoke "
            "doctor` shows each install and what it holds")


def _old_gcc(match: re.Match[str], view: LineView) -> Reading | None:
    need = match.group("need") or match.group("need2") or ""
    return Reading(
        subject="gcc",
        cause="the host GCC is older than the sources support" +
              (f" (they need GCC {need} or later)" if need else ""),
        fix="install a newer GCC and build with it (`invoke build --gcc N`, or CC/CXX="
            "gcc-N/g++-N), then configure from a clean build folder")


def _windows_dll(match: re.Match[str], view: LineView) -> Reading | None:
    dll = match.group("dll")
    if dll.lower() in ("torch_hip.dll", "c10_hip.dll"):
        return None  # windows-torch-dll (shapes.py) names the Triton/driver cause for these
    return Reading(
        subject=dll,
        cause=f"Windows could not load {dll} or a DLL it depends on (WinError 126): a "
              "dependency is missing from the DLL search path (the ROCm/HIP runtime DLLs, "
              "the MSVC runtime) or comes from another install than the one it was built with",
        fix="install the Visual C++ redistributable and the ROCm runtime the wheel was built "
            "for (TheRock's rocm wheels in the same venv), then import torch before other "
            "packages; `where amdhip64*.dll` shows which runtime Windows finds first")


def _dll_load_failed(match: re.Match[str], view: LineView) -> Reading | None:
    module = match.group("mod")
    return Reading(
        subject=module,
        cause=f"Windows could not load the extension module {module} or a DLL it depends on: "
              "a dependency (the ROCm/HIP runtime DLLs, the MSVC runtime, torch's own DLLs) "
              "is missing from the DLL search path or is another build's",
        fix="install the Visual C++ redistributable and the ROCm runtime the package was built "
            "for in the same environment, import torch first, and reinstall the package built "
            "for this torch")


def _hip_runtime_missing(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="hip",
        cause="clang compiled HIP code without finding the HIP runtime headers and library: "
              "neither --rocm-path nor ROCM_PATH / HIP_PATH points at a ROCm install that has "
              "include/hip (a stale HIP_PATH, an SDK laid out as wheels, or hip-devel not "
              "installed)",
        fix="point the compile at the ROCm install: set ROCM_PATH and HIP_PATH to its root (or "
            "pass --rocm-path=<rocm>), unset a stale HIP_PATH; install ROCm's HIP development "
            "package where it is split out; `invoke doctor` shows the ROCm the kit found")


def _no_nvidia_driver(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="USE_ROCM",
        cause="the imported torch is a CUDA build (it looks for an NVIDIA driver): a torch "
              "without ROCm support was installed, e.g. pulled from PyPI by another package's "
              "requirements",
        fix="install a ROCm build of torch (from PyTorch's ROCm index, --index-url "
            "https://download.pytorch.org/whl/rocmX.Y, or the kit's wheel) and check "
            "`python -c 'import torch; print(torch.version.hip)'` prints a version")


def _companion_cuda_versions(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="torchvision",
        cause=f"torch ({match.group('torch')}) and torchvision ({match.group('vision')}) were "
              "built for different GPU toolkit versions: they come from different indexes or "
              "releases",
        fix="install torch and torchvision of one release from one index (the ROCm index of "
            "that torch), e.g. reinstall both in one pip command")


def _impimporter(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="setuptools",
        cause="an old setuptools/pkg_resources (or pip) runs on Python 3.12+, which removed "
              "pkgutil.ImpImporter",
        fix="upgrade the packaging tools in the environment (`python -m pip install -U pip "
            "setuptools wheel`), or use a Python version the pinned tools support")


def _bdist_wheel(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="wheel",
        cause="setup.py was asked to build a wheel but the wheel package (bdist_wheel) is not "
              "installed in the environment that runs it",
        fix="install it first (`python -m pip install wheel`, or an up-to-date setuptools, "
            "which provides bdist_wheel itself), then rerun")


def _numpy_abi(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="numpy",
        cause="a compiled module was built against another NumPy major version than the one "
              "installed (NumPy 1.x binaries under NumPy 2, or the reverse)",
        fix="install the NumPy the module was built for (`pip install 'numpy<2'`), or a build "
            "of the module made for the installed NumPy")


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


def _llvm_unknown_target(match: re.Match[str], view: LineView) -> Reading | None:
    arch = match.group("arch") or match.group("arch2")
    return Reading(
        subject=arch.split(":")[0],
        cause=f"the compiler's LLVM does not know the target {arch}: the ROCm/LLVM release (or "
              "a bundled LLVM, e.g. Triton's) is older than the target, or the name is wrong",
        fix=f"use a ROCm/LLVM release that supports {arch} (a newer ROCm), or build for a "
            "target it knows (`invoke build --arch <gfx…>`); `invoke doctor --arch "
            f"{arch.split(':')[0]}` compiles a kernel for it and says which targets the "
            "toolchain accepts")


_MATH_OR_CK = ("hipsparselt", "hipblaslt", "rocblas", "miopen", "rocsparse", "rocfft",
               "composable_kernel", "ck_tile", "tensile", "aotriton", "rocwmma")


def _target_not_supported(match: re.Match[str], view: LineView) -> Reading | None:
    lower = view.text.lower()
    if "warning" in lower or "skipping" in lower or "ignoring" in lower:
        return None  # the target is left out and the build goes on
    if "Unsupported GPU target:" in view.text:
        return None  # a math library's configure check (shapes: math-library) when one is named
    context = " ".join((*view.previous[-4:], view.text)).lower()
    if any(name in context for name in _MATH_OR_CK):
        return None  # a math library's or CK's own target list (shapes: math-library)
    arch = match.group("arch") or match.group("arch2") or match.group("arch3")
    return Reading(
        subject=arch.split(":")[0],
        cause=f"the package (or the toolchain) does not support the target {arch}: its own "
              "list of targets leaves it out, or this release predates it",
        fix=f"build for a target the package supports (its GPU target list: GPU_TARGETS / "
            f"GPU_ARCHS / PYTORCH_ROCM_ARCH), use a release that adds {arch}, or leave the "
            "package out; HSA_OVERRIDE_GFX_VERSION presents the GPU as a supported target of "
            "the same family (e.g. 11.0.0 for RDNA3), at your own risk")


def _no_platform_wheel(match: re.Match[str], view: LineView) -> Reading | None:
    package = (match.group("pkg") or match.group("pkg2")).lower()
    version = match.group("ver") or match.group("ver2")
    return Reading(
        subject=package,
        cause=f"the index has {package} {version}, but no wheel of it for this Python and "
              "platform (another Python version, OS or CPU than the wheels were built for)",
        fix=f"use a Python version (and platform) {package} {version} has wheels for (the "
            "index page lists one wheel per cpXY and platform), or another version of it that "
            "has one for this Python")


def _requires_python(match: re.Match[str], view: LineView) -> Reading | None:
    package = match.group("pkg").lower()
    return Reading(
        subject=package,
        cause=f"{package} requires Python {match.group('spec')}, and this environment runs "
              f"Python {match.group('have')}",
        fix=f"create the environment with a Python that {package} supports "
            f"({match.group('spec')}), or install a release of {package} that supports this "
            "Python")


def _pkg_resources_packaging(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="setuptools",
        cause="the code imports `packaging` from pkg_resources, which newer setuptools no "
              "longer exposes (an older torch's cpp_extension does this)",
        fix="pin setuptools below 70 in the build environment (`python -m pip install "
            "'setuptools<70'`; with build isolation: PIP_CONSTRAINT), or use a torch whose "
            "cpp_extension imports packaging directly")


def _packaging_too_old(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="packaging",
        cause="setuptools calls packaging's canonicalize_version(strip_trailing_zero=...), "
              "which the installed packaging is too old to have: setuptools was upgraded and "
              "packaging was not",
        fix="upgrade packaging next to setuptools (`python -m pip install -U packaging "
            "setuptools`), or pin setuptools to a release that matches the installed "
            "packaging")


def _cmake_missing(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="cmake",
        cause="the build runs cmake, and no cmake program is on PATH in the environment that "
              "runs it (with pip's build isolation: not among the build requirements)",
        fix="install CMake into the build environment (`python -m pip install cmake`, or the "
            "distribution's cmake package), or with build isolation add it to the build "
            "requirements / use --no-build-isolation with cmake installed")


def _stale_cache(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="cmake",
        cause="the build folder holds a CMakeCache.txt from another configure (another "
              "generator, or another source or build folder): CMake refuses to reuse it",
        fix="remove the build folder (or its CMakeCache.txt and CMakeFiles/) and configure "
            "again; `invoke build` with a fresh --work-dir does this")


_GFX = re.compile(r"\b(gfx[0-9a-f]{3,4}[\w:+-]*)")


def _hip_architectures_rejected(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block != "error":
        return None
    named = [m.group(1) for line in view.previous for m in _GFX.finditer(line)]
    arch = named[0].split(":")[0] if len(set(named)) == 1 else "PYTORCH_ROCM_ARCH"
    return Reading(
        subject=arch,
        cause="CMake's HIP compiler rejected the target list (CMAKE_HIP_ARCHITECTURES): the "
              "ROCm/LLVM release does not know one of the targets, or its name is wrong",
        fix="build only for targets this ROCm's compiler supports (`invoke build --arch "
            "<gfx…>`; `invoke doctor --arch <gfx…>` compiles a kernel for one), or use a newer "
            "ROCm that supports the target")


_TRITON_FIX = ("install the Triton the installed torch pins (`pip install "
               "pytorch-triton-rocm==<pin>` from the torch's ROCm index; `invoke triton.pin` "
               "names the pin), never PyPI's CUDA `triton`; `pip list | grep -i triton` "
               "shows what is installed")


def _triton_missing(match: re.Match[str], view: LineView) -> Reading | None:
    if "warning" in view.text.lower():
        return None  # an optional import that the program carries on without
    return Reading(
        subject="triton",
        cause="torch's compiler (inductor, torch.compile) needs Triton and no working Triton "
              "is installed in this Python (not installed, or too old for this torch)",
        fix=_TRITON_FIX)


def _triton_attribute(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="triton",
        cause=f"code uses {match.group('mod')}.{match.group('name')}, which the installed "
              "Triton does not have: the Triton is another release than the one this torch "
              "(or package) was written for",
        fix=_TRITON_FIX)


def _triton_launcher(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="triton",
        cause="Triton compiles a small C launcher (main.c) with the system C compiler at run "
              "time, and that compile failed: Python's headers (python3-dev) or the HIP "
              "runtime's link library (libamdhip64.so) are not where it looks, or no C "
              "compiler is installed",
        fix="install the Python development headers (e.g. `apt install python3-dev`) and a C "
            "compiler, and make libamdhip64.so findable (the ROCm lib folder on LIBRARY_PATH and "
            "LD_LIBRARY_PATH; Triton's AMD driver also reads TRITON_LIBHIP_PATH); the lines "
            "above the command say which one failed")


def _triton_libcuda(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="triton",
        cause="Triton's CUDA backend looked for libcuda.so on a ROCm machine: the installed "
              "`triton` is PyPI's CUDA build (it shadows the ROCm Triton torch needs)",
        fix="remove it and install the ROCm one (`pip uninstall -y triton`, then "
            "`pip install pytorch-triton-rocm==<pin>` from the torch's ROCm index)")


def _aten_hip_missing(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="USE_ROCM",
        cause="the torch that ran was built without ROCm (no ATen_hip library): its configure "
              "did not find ROCm, or it was built for the CPU or for CUDA",
        fix="rebuild with ROCm found at configure (USE_ROCM=1, ROCM_PATH set; `invoke build "
            "--rocm-path /opt/rocm-X.Y`, whose verify step checks torch.version.hip), or "
            "install a ROCm build of torch")


def _policy_removed(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="cmake",
        cause=f"this CMake no longer supports the OLD behaviour of policy {match.group('policy')}"
              " that a CMake file of the project (or a dependency) still sets: the CMake is "
              "newer (CMake 4) than the project was written for",
        fix="configure with a CMake the project supports (`python -m pip install 'cmake<4'` in "
            "the build venv), or update the project to a release whose cmake_policy calls "
            "ask for the NEW behaviour")


def _blas_status(match: re.Match[str], view: LineView) -> Reading | None:
    call = match.group("call") or match.group("call2")
    status = match.group("status") or match.group("status2")
    library = "hipblaslt" if call.lower().startswith("hipblaslt") else "rocblas"
    return Reading(
        subject=library,
        cause=f"the GPU's first BLAS call ({call}) failed inside {library} "
              f"({status}): most often {library} has no kernels (Tensile "
              "library) for this GPU's target, so the call cannot run",
        fix=f"check that {library} ships kernels for the GPU's gfx target (`ls "
            f"$ROCM_PATH/lib/{library}/library/` lists one file set per gfx target); use a "
            "ROCm or torch build that has them, or present the GPU as a supported target of "
            "its family (HSA_OVERRIDE_GFX_VERSION=10.3.0 for RDNA2, 11.0.0 for RDNA3)")


def _hipcc_path_missing(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path")
    return Reading(
        subject="hipcc",
        cause=f"the build runs hipcc as {path}, which does not exist: the Makefile or script "
              "hard-codes a path of another ROCm layout (hipcc is <rocm>/bin/hipcc, e.g. "
              "/opt/rocm/bin/hipcc)",
        fix="point the build at the real hipcc (set HIPCC / ROCM_PATH, or edit the hard-coded "
            "path to $ROCM_PATH/bin/hipcc; unset a HIP_PATH left from the old <rocm>/hip "
            "layout), or put <rocm>/bin on PATH")


def _windows_compiler_missing(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path")
    program = re.split(r"[\\/]", path)[-1]
    return Reading(
        subject="hipcc",
        cause=f"hipcc ran {program} as {path}, which Windows cannot find: hipcc looks for the "
              "compiler next to itself, and this ROCm layout keeps it elsewhere (TheRock: "
              "lib\\llvm\\bin), or HIP_PATH / HIP_CLANG_PATH point at another install",
        fix="point hipcc at its clang++ (HIP_CLANG_PATH=<rocm>\\lib\\llvm\\bin, HIP_PATH="
            "<rocm>), or use a ROCm release whose hipcc knows the layout")


_ROOT_OF = re.compile(r"^(?P<root>.*?)[\\/]lib(?:64)?[\\/](?:rocblas|hipblaslt)[\\/]")


def _tensile_unloadable(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path")
    root = _ROOT_OF.match(path)
    where = root.group("root") if root else path.rsplit("/", 1)[0]
    return Reading(
        subject=where, klass="rocm-install",
        cause=f"rocBLAS found its kernel library {path.rsplit('/', 1)[-1]} but could not load "
              f"it: the file is another rocBLAS release's than the librocblas running (two ROCm "
              f"installs in one process, e.g. a torch wheel's bundled ROCm and the system "
              f"ROCm at {where})",
        fix="keep torch, its extensions and the system ROCm on one ROCm release (reinstall the "
            "extension built against the torch wheel's ROCm, or a torch for the system ROCm); "
            "unset LD_LIBRARY_PATH / ROCBLAS_TENSILE_LIBPATH entries that point at another "
            "ROCm; `ldd` on the extension shows which rocBLAS it loads")


def _tensile_arch_wrapped(match: re.Match[str], view: LineView) -> Reading | None:
    if not view.previous or not re.search(r"Cannot read \S*TensileLibrary", view.previous[-1]):
        return None
    arch = match.group("arch")
    lower = view.previous[-1].lower()
    library = next((n for n in ("hipsparselt", "hipblaslt") if n in lower), "rocblas")
    return Reading(
        subject=library,
        cause=f"{library} has no kernels (Tensile library files) for the GPU's target {arch}: "
              f"it looked for {arch}'s file and did not find it (the error after 'Cannot read' "
              "is a leftover errno), and the installed release was built without it",
        fix=f"use a ROCm (or torch wheel) whose {library} ships kernels for {arch} (`ls "
            f"$ROCM_PATH/lib/{library}/library/*{arch}*`), or build {library} for it; "
            "HSA_OVERRIDE_GFX_VERSION presents the GPU as a supported target of its family")


def _therock_no_targets(match: re.Match[str], view: LineView) -> Reading | None:
    named = [m.group(1) for line in view.previous for m in _GFX.finditer(line)]
    dist = match.group("dist")
    return Reading(
        subject=named[0].split(":")[0] if named else "{device}",
        cause=f"TheRock's subproject {match.group('sub')} needs the "
              f"{'dist ' if dist else ''}AMDGPU target list and it is empty: "
              + ("THEROCK_DIST_AMDGPU_FAMILIES and THEROCK_DIST_AMDGPU_TARGETS are unset and "
                 "the dist list defaults to THEROCK_AMDGPU_FAMILIES only, not to "
                 "THEROCK_AMDGPU_TARGETS" if dist else
                 "neither THEROCK_AMDGPU_FAMILIES nor THEROCK_AMDGPU_TARGETS selects a target "
                 "it supports"),
        fix="configure with the GPU's family or target in THEROCK_AMDGPU_FAMILIES (e.g. "
            "-DTHEROCK_AMDGPU_FAMILIES=gfx1100, which the dist list defaults to), or set "
            "THEROCK_DIST_AMDGPU_FAMILIES as well as THEROCK_AMDGPU_TARGETS")


def _torch_api_mismatch(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="torch",
        cause=f"the extension's sources use {match.group('member')} of {match.group('cls')}, "
              "which the installed torch's headers do not have: the torch installed is "
              "another (older or newer) release than the one the sources were written for",
        fix="install the torch release the package pins for this version (its requirements "
            "or setup.py name it; for ROCm from the matching ROCm index), or build a release "
            "of the package written for the installed torch")


def _memory_fraction(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="set_per_process_memory_fraction",
        cause=f"the GPU allocation failed against a per-process cap ({match.group('cap')} "
              "allowed), not against the GPU's free memory: torch prints 'allowed' only when "
              "a memory fraction is set (torch.cuda.set_per_process_memory_fraction), by the "
              "program or left set by earlier code in the same process",
        fix="raise or reset the cap (torch.cuda.set_per_process_memory_fraction(1.0) after the "
            "code that lowered it), or find what set the memory_fraction; in a test suite, "
            "the test that sets it must restore it")


def _tensile_folder_empty(match: re.Match[str], view: LineView) -> Reading | None:
    head = next((line for line in reversed(view.previous) if "Cannot read" in line), "")
    where = re.search(r"Cannot read (?P<path>\S+?)[\\/]?(?:TensileLibrary\S*?):", head)
    lower = head.lower()
    library = next((n for n in ("hipsparselt", "hipblaslt") if n in lower), "rocblas")
    folder = where.group("path") if where else f"{library}/library"
    return Reading(
        subject=library,
        cause=f"{library} found no TensileLibrary files at all in {folder} (its list of "
              "available files is empty): the kernel library folder is not installed where "
              f"the loaded {library} looks (next to the library: bin\\ on Windows, lib/ on "
              "Linux), not just one target's file",
        fix=f"install {library}'s kernel library folder ({library}/library, shipped with its "
            f"runtime package) where the loaded {library} looks, or point "
            f"{library.upper()}_TENSILE_LIBPATH at the folder that holds it")


_MI_TARGETS = ("gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950")


def _ck_target_errors(match: re.Match[str], view: LineView) -> Reading | None:
    arch = match.group("arch")
    if arch in _MI_TARGETS:
        return None  # a supported target: the errors are the sources' own
    return Reading(
        subject=arch,
        cause=f"the sources fail to compile for {arch}: the project's Composable Kernel "
              "attention kernels use MFMA instructions of the MI-series targets (gfx90a, "
              f"gfx942, gfx950) and do not support {arch}",
        fix="build for a target the project supports (gfx90a, gfx942 or gfx950: "
            "PYTORCH_ROCM_ARCH / GPU_ARCHS), or on this GPU use an attention path without "
            "these kernels (PyTorch's SDPA, flash-attention's Triton backend)")


def _therock_target_choice(match: re.Match[str], view: LineView) -> Reading | None:
    value = match.group("value") or match.group("target") or ""
    gfx = _GFX.search(value)
    what = (f"the {match.group('var')} value '{value}' is not a family TheRock knows"
            if match.group("var") else
            f"TheRock does not know the target '{value}'" if value else
            "no AMDGPU target was selected")
    return Reading(
        subject=gfx.group(1).split(":")[0] if gfx else "{device}",
        cause=f"TheRock's configure stopped: {what} (families are named like gfx110X-all, "
              "targets like gfx1100; the message lists the ones this checkout has)",
        fix="configure with a family from the list (-DTHEROCK_AMDGPU_FAMILIES=gfx110X-all) or "
            "a single target via -DTHEROCK_AMDGPU_TARGETS=gfx1100 (with "
            "THEROCK_DIST_AMDGPU_FAMILIES for dist projects); a target the list lacks needs a "
            "newer TheRock")


def _kfd_permission(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="/dev/kfd",
        cause="the process may not open the GPU's device files (/dev/kfd, /dev/dri/renderD*): "
              "the user is not in the groups that own them (render, video), or a container was "
              "started without them",
        fix="add the user to the render and video groups (`sudo usermod -aG render,video "
            "$USER`, then log in again); in docker pass --device=/dev/kfd --device=/dev/dri "
            "--group-add video (and render)")


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


FAMILIES: tuple[Rule, ...] = (
    Rule(id="glibc-version", klass="import",
         triggers=("GLIBC_",),
         pattern=_rx(r"version [`'](?P<ver>GLIBC_[\d.]+)' not found"
                     r"(?: \(required by (?P<by>[^)\s]+)\))?"),
         read=_glibc_version, source="glibc's dl-version.c version-check error "
         "(\"version `%s' not found (required by %s)\")"),
    Rule(id="libstdcxx-version-unnamed", klass="import",
         triggers=("GLIBCXX_", "CXXABI_"),
         pattern=_rx(r"^version [`'](?P<ver>(?:GLIBCXX|CXXABI)_[\d.]+)' not found "
                     r"\(required by (?P<by>[^)\s]+)\)"),
         read=_libstdcxx_unnamed, source="glibc's dl-version.c (the loaded library's name on "
         "the line before, cut by the log)"),
    Rule(id="lld-no-library", klass="link",
         triggers=("unable to find library -l",),
         pattern=_rx(r"\bld\.lld\S*: error: unable to find library -l(?P<lib>[\w.:+-]+)"),
         read=_lld_no_library, source="llvm/llvm-project lld/ELF/Driver.cpp "
         "(\"unable to find library -l\")"),
    Rule(id="shell-killed", klass="out-of-memory", tier=0,
         triggers=(" Killed ",),
         pattern=_rx(r"(?:^|: )(?:line \d+: )?\d+ Killed\s+(?:\S+=\S+\s+)*(?P<cmd>\S+)"),
         read=_shell_killed, source="bash/dash job report for a SIGKILLed command "
         "(\"<pid> Killed <command>\"); ROCm/AMDMIGraphX#419"),
    Rule(id="cmake-no-compiler", klass="host-compiler",
         triggers=("No CMAKE_", "_COMPILER not set", "is not a full path to an existing "
                   "compiler"),
         pattern=_rx(r"No CMAKE_(?P<lang>C|CXX|HIP)_COMPILER could be found"
                     r"|CMAKE_(?P<lang2>C|CXX|HIP)_COMPILER not set, after EnableLanguage"
                     r"|^The CMAKE_(?P<lang3>HIP)_COMPILER:\s*$"),
         read=_cmake_no_compiler, source="Kitware/CMake Modules/CMakeDetermine<LANG>Compiler"
         ".cmake and cmGlobalGenerator.cxx"),
    Rule(id="pip-unsupported-wheel", klass="python-packaging",
         triggers=("is not a supported wheel on this platform",),
         pattern=_rx(r"(?P<wheel>\S+\.whl) is not a supported wheel on this platform"),
         read=_unsupported_wheel, source="pypa/pip src/pip/_internal/req/constructors.py "
         "(\"is not a supported wheel on this platform\")"),
    Rule(id="pip-resolver-conflict", klass="python-packaging",
         triggers=("because these package versions have conflicting dependencies",),
         pattern=_rx(r"Cannot install (?P<pkg>[\w.\[\]=<>!~-]+)(?:,| and) .*because these "
                     r"package versions have conflicting dependencies"),
         read=_resolver_conflict, source="pypa/pip src/pip/_internal/resolution/"
         "resolvelib/factory.py (ResolutionImpossible report)"),
    Rule(id="rocm-tool-missing", klass="rocm-install",
         triggers=("/opt/rocm",),
         pattern=_rx(r"(?:No such file or directory: '|: )(?P<path>(?P<root>/opt/rocm[\w.-]*)"
                     r"/\S*?bin/[\w.+-]+)(?:'|: (?:command )?not found|: No such file or "
                     r"directory)"),
         read=_rocm_tool_missing, source="the shell's and Python's errors for a missing "
         "program under a ROCm root"),
    Rule(id="gcc-too-old", klass="host-compiler",
         triggers=("too old version of GCC", "or later is required", "or newer is required",
                   "or higher is required"),
         pattern=_rx(r"too old version of GCC\. We need GCC (?P<need>\d+)"
                     r"|\b(?:GCC|gcc|g\+\+) (?:version )?(?P<need2>\d+(?:\.\d+)*) or "
                     r"(?:later|newer|higher) is required"),
         read=_old_gcc, source="pytorch/pytorch c10/util/C++17.h (\"You're trying to build "
         "PyTorch with a too old version of GCC\")"),
    Rule(id="windows-dll-load", klass="import",
         triggers=("WinError 126",),
         pattern=_rx(r"WinError 126\].*Error loading \"[^\"]*?(?P<dll>[\w.+-]+\.dll)\""),
         read=_windows_dll, source="torch/__init__.py _load_dll_libraries (\"Error loading "
         "... or one of its dependencies\")"),
    Rule(id="dll-load-failed", klass="import",
         triggers=("DLL load failed while importing",),
         pattern=_rx(r"DLL load failed while importing (?P<mod>[\w.]+)"),
         read=_dll_load_failed, source="CPython's Windows extension loader "
         "(Python/dynload_win.c)"),
    Rule(id="hip-runtime-missing", klass="rocm-install",
         triggers=("cannot find HIP runtime",),
         pattern=_rx(r"cannot find HIP runtime; provide its path via"),
         read=_hip_runtime_missing, source="llvm-project clang/include/clang/Basic/"
         "DiagnosticDriverKinds.td err_drv_no_hip_runtime (commit not read); "
         "ROCm/legacy-rocm-build#6285"),
    Rule(id="cuda-torch-no-driver", klass="rocm-disabled",
         triggers=("Found no NVIDIA driver on your system",),
         pattern=_rx(r"Found no NVIDIA driver on your system"),
         read=_no_nvidia_driver, source="pytorch/pytorch c10/cuda/CUDAFunctions.cpp "
         "(TORCH_CHECK \"Found no NVIDIA driver on your system\"; commit not read)"),
    Rule(id="companion-cuda-versions", klass="python-packaging",
         triggers=("were compiled with different CUDA major versions",),
         pattern=_rx(r"PyTorch and torchvision were compiled with different CUDA major "
                     r"versions\. PyTorch has CUDA Version=(?P<torch>\S+?)\.? and torchvision "
                     r"has CUDA Version=(?P<vision>\S+?)\.?(?:\s|$)"),
         read=_companion_cuda_versions, source="pytorch/vision torchvision/extension.py "
         "_check_cuda_version (commit not read)"),
    Rule(id="setuptools-impimporter", klass="python-packaging",
         triggers=("ImpImporter",),
         pattern=_rx(r"module 'pkgutil' has no attribute 'ImpImporter'"),
         read=_impimporter, source="CPython 3.12 removed pkgutil.ImpImporter (What's New in "
         "3.12); old pkg_resources uses it"),
    Rule(id="no-bdist-wheel", klass="python-packaging", tier=2,
         triggers=("invalid command 'bdist_wheel'",),
         pattern=_rx(r"invalid command 'bdist_wheel'"),
         read=_bdist_wheel, source="distutils' command lookup when the wheel package is absent"),
    Rule(id="numpy-abi", klass="python-packaging", tier=2,
         triggers=("compiled using NumPy 1.x", "numpy.dtype size changed",
                   "multiarray failed to import"),
         pattern=_rx(r"A module that was compiled using NumPy 1\.x cannot be run in"
                     r"|numpy\.dtype size changed, may indicate binary incompatibility"
                     r"|numpy\.(?:_?core\.)?multiarray failed to import"),
         read=_numpy_abi, source="numpy/_core (the NumPy 2 ABI check); numpy's dtype size "
         "check"),
    Rule(id="cmake-incompatible-wrapped", klass="missing-component",
         triggers=("compatible with requested version",),
         pattern=_rx(r'^compatible with requested version\s+"?(?P<want>[^"]+?)"?\.?\s*$'),
         read=_incompatible_wrapped, source="Kitware/CMake cmFindPackageCommand.cxx (the "
         "message wrapped by CMake's formatter)"),
    Rule(id="llvm-unknown-target", klass="gpu-target", tier=2,
         triggers=("is not a recognized processor for this target", "unknown target CPU"),
         pattern=_rx(r"'(?P<arch>gfx[0-9a-f]{3,4}[\w:+-]*)' is not a recognized processor for "
                     r"this target|unknown target CPU '(?P<arch2>gfx[0-9a-f]{3,4}[\w:+-]*)'"),
         read=_llvm_unknown_target, source="LLVM MCSubtargetInfo (\"is not a recognized "
         "processor for this target\"), clang's err_target_unknown_cpu"),
    Rule(id="gpu-target-not-supported", klass="gpu-target",
         triggers=("gfx",),
         pattern=_rx(r"(?i)(?:unsupported|unknown) (?:gpu |amdgpu |hip )?(?:architecture|arch|"
                     r"target)s?:?\s*'?(?P<arch>gfx[0-9a-f]{3,4}[\w:+-]*)"
                     r"|(?:architecture|arch|target) '?(?P<arch2>gfx[0-9a-f]{3,4}[\w:+-]*)'? "
                     r"is not supported"
                     r"|^\W*(?:\w+Error: )?(?P<arch3>gfx[0-9a-f]{3,4}[\w:+-]*)'? is not supported"),
         read=_target_not_supported, source="the target checks packages run on their own "
         "target tables (flash-attention's setup.py, xformers, CMake GPU_TARGETS checks)"),
    Rule(id="no-platform-wheel", klass="python-packaging",
         triggers=("has no wheels with a matching platform tag",
                   "doesn't have a source distribution or wheel for the current platform"),
         pattern=_rx(r"(?P<pkg>[A-Za-z][\w.-]*)==(?P<ver>\S+) has no wheels with a matching "
                     r"platform tag"
                     r"|Distribution `(?P<pkg2>[A-Za-z][\w.-]*)==(?P<ver2>[^\s`]+)[^`]*` can't be "
                     r"installed because it doesn't have a source distribution or wheel for the "
                     r"current platform"),
         read=_no_platform_wheel, source="astral-sh/uv resolver messages (no matching "
         "platform tag; no wheel for the current platform)"),
    Rule(id="requires-python", klass="python-packaging",
         triggers=("requires a different Python",),
         pattern=_rx(r"Package '(?P<pkg>[\w.-]+)' requires a different Python: (?P<have>\S+) "
                     r"not in '(?P<spec>[^']+)'"),
         read=_requires_python, source="pypa/pip src/pip/_internal/resolution (Requires-Python "
         "check)"),
    Rule(id="pkg-resources-packaging", klass="python-packaging",
         triggers=("from 'pkg_resources'",),
         pattern=_rx(r"cannot import name 'packaging' from 'pkg_resources'"),
         read=_pkg_resources_packaging, source="pypa/setuptools#4385 (v70.0.0 removed "
         "pkg_resources.packaging; torch 2.1's cpp_extension imports it)"),
    Rule(id="packaging-too-old", klass="python-packaging",
         triggers=("strip_trailing_zero",),
         pattern=_rx(r"canonicalize_version\(\) got an unexpected keyword argument "
                     r"'strip_trailing_zero'"),
         read=_packaging_too_old, source="pypa/setuptools#4483 (setuptools >= 71 with an "
         "older packaging)"),
    Rule(id="cmake-missing", klass="cmake",
         triggers=("cmake", "CMake must be installed"),
         pattern=_rx(r"No such file or directory: '(?:\S*/)?cmake'|(?:^|: )cmake: (?:command )?"
                     r"not found|CMake must be installed to build"),
         read=_cmake_missing, source="the shell's and Python's errors for a missing program; "
         "setup.py build_ext helpers (\"CMake must be installed to build the following "
         "extensions\")"),
    Rule(id="cmake-stale-cache", klass="cmake",
         triggers=("does not match the generator used previously",
                   "is different than the directory"),
         pattern=_rx(r"does not match the generator used previously"
                     r"|CMakeCache\.txt directory \S+ is different than the directory"),
         read=_stale_cache, source="Kitware/CMake cmake.cxx / cmGlobalGenerator (generator and "
         "cache directory checks)"),
    Rule(id="hip-architectures-rejected", klass="gpu-target",
         triggers=("do not all work with this compiler",),
         pattern=_rx(r"do not all work with this compiler"),
         read=_hip_architectures_rejected, source="Kitware/CMake Modules/"
         "CMakeTestHIPCompiler / CMAKE_<LANG>_ARCHITECTURES check"),
    Rule(id="triton-missing", klass="triton",
         triggers=("No module named 'triton'", "Cannot find a working triton installation"),
         pattern=_rx(r"No module named 'triton'\s*$|Cannot find a working triton installation"),
         read=_triton_missing, source="torch._inductor.exc.TritonMissing (\"Cannot find a "
         "working triton installation\"); Python's import error"),
    Rule(id="triton-attribute", klass="triton",
         triggers=("module 'triton",),
         pattern=_rx(r"module '(?P<mod>triton(?:\.\w+)*)' has no attribute '(?P<name>\w+)'"),
         read=_triton_attribute, source="Python's AttributeError on a Triton module (a "
         "Triton/torch release mismatch)"),
    Rule(id="triton-launcher-build", klass="triton", tier=0,
         triggers=("CalledProcessError",),
         pattern=_rx(r"CalledProcessError: Command '\[.*main\.c'.*(?:hip_utils|cuda_utils|"
                     r"__triton_launcher)"),
         read=_triton_launcher, source="triton-lang/triton python/triton/runtime/build.py "
         "(_build: the launcher compiled with the system C compiler)"),
    Rule(id="triton-libcuda", klass="triton",
         triggers=("libcuda.so cannot found",),
         pattern=_rx(r"libcuda\.so cannot found"),
         requires=_rx(r"(?i)rocm|\bhip\b|gfx\d"),
         read=_triton_libcuda, source="triton-lang/triton backends/nvidia/driver.py "
         "(libcuda_dirs' assertion)"),
    Rule(id="aten-hip-missing", klass="rocm-disabled",
         triggers=("ATen_hip",),
         pattern=_rx(r"(?i)cannot initialize HIP without (?:the )?ATen_hip library"),
         read=_aten_hip_missing, source="pytorch/pytorch aten/src/ATen/detail/"
         "HIPHooksInterface.h (\"Cannot initialize HIP without ATen_hip library.\"; commit "
         "not read)"),
    Rule(id="cmake-policy-removed", klass="cmake",
         triggers=("may not be set to OLD behavior",),
         pattern=_rx(r"Policy (?P<policy>CMP\d+) may not be set to OLD behavior because this "
                     r"version of CMake"),
         read=_policy_removed, source="Kitware/CMake cmPolicies.cxx (a removed policy's OLD "
         "behaviour; CMake 4.0 removed those before 3.5); ROCm/TheRock#318"),
    Rule(id="blas-status-at-call", klass="math-library",
         triggers=("HIPBLAS_STATUS_", "rocblas_status_"),
         pattern=_rx(r"(?P<status>HIPBLAS_STATUS_(?:INTERNAL_ERROR|NOT_SUPPORTED|ARCH_MISMATCH|"
                     r"EXECUTION_FAILED)) when calling `(?P<call>hipblas\w+)"
                     r"|(?P<status2>rocblas_status_(?:internal_error|not_implemented|"
                     r"arch_mismatch)) when calling `?(?P<call2>rocblas_\w+)"),
         read=_blas_status, source="torch's TORCH_CUDABLAS_CHECK message (\"... when calling "
         "`hipblas...`\"); ROCm/rocm-libraries#8539"),
    Rule(id="hipcc-path-missing", klass="rocm-install",
         triggers=("hipcc",),
         pattern=_rx(r"^(?:make(?:\[\d+\])?|\S*sh): (?:\d+: )?(?P<path>/\S*/hipcc): "
                     r"(?:No such file or directory|not found)"),
         read=_hipcc_path_missing, source="make's and the shell's errors for a missing "
         "program; broncotc/bitsandbytes-rocm#5"),
    Rule(id="windows-hip-compiler-missing", klass="rocm-install",
         triggers=("is not recognized as an internal or external command",),
         pattern=_rx(r"^'(?P<path>[^']*[\\/](?:clang\+\+|clang|lld-link|ld\.lld)(?:\.exe)?)' "
                     r"is not recognized as an internal or external command"),
         requires=_rx(r"(?i)hipcc"),
         read=_windows_compiler_missing, source="cmd.exe's error for a missing program; "
         "ROCm/TheRock#410"),
    Rule(id="tensile-unloadable", klass="rocm-install",
         triggers=("Could not load",),
         pattern=_rx(r"rocBLAS error: Could not load (?P<path>\S*TensileLibrary\S*)"),
         read=_tensile_unloadable, source="ROCm/rocBLAS library/src/tensile_host.cpp ('Could "
         "not load' when the file exists but Tensile cannot read it; 'Cannot read' when it "
         "does not exist); ROCm/pytorch#1340"),
    Rule(id="tensile-arch-wrapped", klass="math-library",
         triggers=("for GPU arch",),
         pattern=_rx(r"^(?!.*Cannot read).*\bfor GPU arch\s*:\s*(?P<arch>gfx[0-9a-f]{3,4})"),
         read=_tensile_arch_wrapped, source="ROCm/rocBLAS library/src/tensile_host.cpp "
         "(\"Cannot read <path>: <errno> for GPU arch : <gfx>\" and the list of available "
         "files, the line wrapped); ROCm/legacy-rocm-build#6049"),
    Rule(id="therock-no-targets", klass="gpu-target",
         triggers=("AMDGPU targets but none were",),
         pattern=_rx(r"Subproject (?P<sub>\S+) requires (?P<dist>dist )?AMDGPU targets but none "
                     r"were (?:set|selected)"),
         read=_therock_no_targets, source="ROCm/TheRock@89553ce3746eda74ade42557470d25e37c91b6f0:"
         "cmake/therock_subproject.cmake (FATAL_ERROR), CMakeLists.txt (dist families default "
         "to THEROCK_AMDGPU_FAMILIES); ROCm/TheRock#3519"),
    Rule(id="torch-api-mismatch", klass="python-packaging",
         triggers=("no member named",),
         pattern=_rx(r"error: no member named '(?P<member>\w+)' in (?:namespace )?"
                     r"'(?P<cls>(?:torch|at|c10)::[\w:]+)'"),
         requires=_rx(r"(?:site|dist)-packages/torch/include/"),
         read=_torch_api_mismatch, source="clang's err_no_member on a torch API, in a build "
         "whose torch headers come from an installed torch; vllm-project/vllm#44641"),
    Rule(id="gpu-memory-fraction", klass="out-of-memory",
         triggers=(" allowed;",),
         pattern=_rx(r"out of memory\. Tried to allocate .*? (?P<cap>[\d.]+ [KMGT]?i?B) "
                     r"allowed;"),
         read=_memory_fraction, source="pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp (the "
         "OOM message adds '<size> allowed; ' only when set_fraction; commit not read); "
         "ROCm/TheRock#2118"),
    Rule(id="tensile-folder-empty", klass="missing-component", tier=0,
         triggers=("List of available TensileLibrary Files",),
         pattern=_rx(r"List of available TensileLibrary Files\s*:\s*$"),
         unless=_rx(r"TensileLibrary_\w+\.(?:dat|co)|^\W*(?:\.\.\.\s*)?gfx[0-9a-f]{3,4}"
                    r"(?:\s+gfx[0-9a-f]{3,4})+"),
         read=_tensile_folder_empty, source="ROCm/rocBLAS library/src/tensile_host.cpp (the "
         "list of available files after 'Cannot read ... for GPU arch'); ROCm/TheRock#571"),
    Rule(id="ck-target-compile-errors", klass="gpu-target", tier=2,
         triggers=("generated when compiling for",),
         pattern=_rx(r"\d+ errors? generated when compiling for (?P<arch>gfx[0-9a-f]{3,4})"),
         requires=_rx(r"hip_fmha|ck_tile|composable_kernel|csrc/attention/hip"),
         read=_ck_target_errors, source="clang's error count per offload target; "
         "facebookresearch/xformers#1222 (CK tiled FMHA on gfx1100)"),
    Rule(id="therock-target-choice", klass="gpu-target",
         triggers=("AMDGPU_FAMILIES value", "Unknown AMDGPU target", "No AMDGPU target selected"),
         pattern=_rx(r"(?P<var>THEROCK_(?:DIST_|TEST_)?AMDGPU_FAMILIES) value '(?P<value>[^']*)' "
                     r"unknown|Unknown AMDGPU target '(?P<target>[^']*)'"
                     r"|No AMDGPU target selected: make a selection via THEROCK_AMDGPU_FAMILIES"),
         read=_therock_target_choice, source="ROCm/TheRock@89553ce3746eda74ade42557470d25e37c91b6f0"
         ":cmake/therock_amdgpu_targets.cmake (FATAL_ERROR messages)"),
    Rule(id="kfd-permission", klass="rocm-install",
         triggers=("/dev/kfd",),
         pattern=_rx(r"Permission denied: '/dev/kfd'|Unable to open /dev/kfd read-write: "
                     r"Permission denied|/dev/kfd: Permission denied"),
         read=_kfd_permission, source="ROCm/ROCT-Thunk-Interface README (video group; /dev/kfd "
         "owned by render since Ubuntu 20.04); ROCm/ROCm-docker#116 (the message, and "
         "--device=/dev/kfd --device=/dev/dri --group-add video)"),
)
