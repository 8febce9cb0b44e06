"""The recurring shapes of PyTorch ROCm build failures, as parsers (not one regex per thread).

Owns: one `Rule` per shape: CMake package lookups, linker and loader errors, killed compilers,
full disks, HIP run-time target errors, the math libraries' missing kernels, Python packaging,
Triton, AOTriton, hipify, Composable Kernel and compiler crashes. Each reader names the subject
(the component, library, symbol, target or program), the cause and the fix, or declines when the
line alone does not prove the cause. Must not: read files, run programs or pick between findings
(the engine does).
"""

from __future__ import annotations

import re
from typing import Protocol

from rocmforge.triage import owners
from rocmforge.triage.demangle import demangle
from rocmforge.triage.rule import LineView, Reading, Rule

_CMAKE_SOURCE = ("Kitware/CMake: Modules/FindPackageHandleStandardArgs.cmake, "
                 "cmFindPackageCommand.cxx")


# --- missing components -----------------------------------------------------------------------

# CMake packages of ROCm's build helpers, not components: the package that installs them.
# ROCm/rocm-cmake@11bcc88221a938e8755b8cbfc3f53a3be8744d7f:share/rocm/cmake/ROCMConfig.cmake
# (what find_package(ROCM) finds).
_HELPER_PACKAGE = {"rocm": "rocm-cmake (ROCMConfig.cmake; apt/dnf: rocm-cmake)"}


def _package_reading(name: str, how: str) -> Reading:
    row = owners.component(name)
    label = row.name if row else name.lower()
    hint = _HELPER_PACKAGE.get(label) or owners.install_hint(row, label)
    fix = (f"install {label}'s development package ({hint}) into the "
           "ROCm install the build uses, or point CMake at it (`invoke build --rocm-path "
           f"/opt/rocm-X.Y` or CMAKE_PREFIX_PATH=<prefix>); `invoke doctor` lists every "
           "component the tree's LoadHIP.cmake requires and which are missing")
    return Reading(subject=label, cause=f"CMake could not find {name} ({how}): the ROCm component "
                   f"{label} is not installed in the ROCm prefix CMake searched, or that prefix "
                   "is the wrong ROCm install", fix=fix)


def _config_file(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block == "warning":
        return None  # an optional package: the build goes on without it
    return _package_reading(match.group("name"), "no package configuration file")


def _could_not_find(match: re.Match[str], view: LineView) -> Reading | None:
    # FindPackageHandleStandardArgs: fatal only inside a CMake Error block (REQUIRED); the same
    # words after "-- " are a status line for an optional package.
    if view.cmake_block != "error" or view.text.startswith("--"):
        return None
    if match.group("name") == "NCCL":
        return None  # CUDA's; a ROCm build asks for RCCL (rocmforge.triage.shapes: cuda-nccl)
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


def _pkgconfig_missing(match: re.Match[str], view: LineView) -> Reading | None:
    return _package_reading(match.group("name"), "pkg-config found no .pc file")


_CUDA_HEADER_TREE = re.compile(
    r"(?P<path>\S*(?:/usr/include|cuda\S*/include)/(?:thrust|cub)/\S+?):\d+")


_TORCH_INCLUDE = re.compile(r"site-packages/torch/include/|/torch/include/torch/")


def _missing_header(match: re.Match[str], view: LineView) -> Reading | None:
    header = match.group("header")
    inside = _CUDA_HEADER_TREE.search(view.text)
    if inside:  # a CUDA thrust/cub header (not rocThrust's) was included and wants CUDA
        return _thrust_reading(inside.group("path"))
    if header.startswith(("thrust/", "cub/")):
        return Reading(subject="thrust", klass="rocm-install",
                       cause=f"the header {header} was not found: rocThrust/hipCUB (ROCm's "
                             "thrust and cub) are not installed in the ROCm include folder the "
                             "compile uses, or that folder is not on the include path",
                       fix="install rocThrust and hipCUB for the ROCm the build uses ("
                           + "; ".join(f"{n}: {owners.install_hint(owners.component(n), n)}"
                                       for n in ("rocthrust", "hipcub"))
                           + ") and point the build at that ROCm (`invoke build "
                           "--rocm-path`); `invoke doctor` checks both")
    if header.startswith(("cuda", "cuda_runtime", "cublas", "cudnn", "curand", "cusparse",
                          "nvrtc", "nccl.h", "cufft", "cusolver", "cupti", "cuComplex.h",
                          "nvToolsExt", "nvtx3/", "nvml.h", "cooperative_groups.h")):
        return Reading(
            subject=header, klass="hipify",
            cause=f"a HIP compile includes the CUDA header {header}: the source was not "
                  "hipified, or hipify left this file out (an extension or a file added after "
                  "hipify ran)",
            fix="run hipify on the sources before the HIP build (PyTorch: `python "
                "tools/amd_build/build_amd.py`; an extension: build it with "
                "torch.utils.cpp_extension under a ROCm torch, which hipifies it); the kit's "
                "hipify step does this for PyTorch")
    if header.startswith(("ck/", "ck_tile/")):
        return _ck_reading(header)
    torch_driven = any(_TORCH_INCLUDE.search(p) for p in (*view.previous, view.text))
    row = owners.header_owner(header)
    if torch_driven and row is not None and not header.startswith("hip/"):
        # A ROCm library's header missing from a compile an installed torch drives: the
        # include root torch passes is a part of the install without it (TheRock's
        # _rocm_sdk_core holds the runtime, _rocm_sdk_devel the libraries' headers).
        return Reading(
            subject=row.name, klass="rocm-install",
            cause=f"a compile driven by the installed torch (its torch/include headers) did not "
                  f"find {header} ({row.name}'s header): the ROCm include root torch passes "
                  "comes from ROCM_HOME / ROCM_PATH or torch's own guess, and it is a part of "
                  f"the install without {row.name}'s headers (TheRock's runtime-only "
                  "_rocm_sdk_core, or another ROCm)",
            fix="export ROCM_HOME and ROCM_PATH to the ROCm root that holds the libraries' "
                "headers (TheRock wheels: `rocm-sdk path --root`, the devel package), or "
                f"install {row.name}'s development files ({row.install_hint()}), then run again")
    if header.startswith("hip/") and torch_driven:
        # A compile that an installed torch drives (cpp_extension, Inductor's AOTI) takes its
        # ROCm include folder from ROCM_HOME/ROCM_PATH or its own guess; HIP's headers exist
        # wherever ROCm does, so the folder it took is the wrong one.
        return Reading(
            subject=header, klass="rocm-install",
            cause=f"a compile driven by the installed torch (its torch/include headers) did not "
                  f"find {header}: the ROCm include folder torch passes comes from ROCM_HOME / "
                  "ROCM_PATH or torch's own guess, and it is not the ROCm install that holds "
                  "HIP's headers (unset, or a layout torch does not know, such as TheRock's "
                  "wheels)",
            fix="export ROCM_HOME and ROCM_PATH to the root of the ROCm install whose include/ "
                "holds hip/hip_runtime.h (TheRock wheels: `rocm-sdk path --root`), then run "
                "again")
    if header.startswith("hip/"):
        # HIP's headers come with every ROCm install (<rocm>/include/hip): the include path
        # the build passed does not point at one (an extension's Makefile or setup.py takes it
        # from ROCM_HOME / ROCM_PATH; a host compile lacks hipcc's include flags).
        return Reading(
            subject="ROCM_HOME", klass="rocm-install",
            cause=f"the compile did not find {header}, which every ROCm install has under "
                  "<rocm>/include: the include path the build passed does not point at the "
                  "ROCm install (it takes the root from ROCM_HOME / ROCM_PATH / HIP_PATH, unset "
                  "or stale, or a host compile ran without hipcc's include flags)",
            fix="export ROCM_HOME (and ROCM_PATH) to the ROCm root whose include/hip holds the "
                "header (e.g. /opt/rocm) and build again; if no ROCm install has it, install "
                "ROCm's HIP development package")
    if row is None:
        return None
    return Reading(
        subject=row.name,
        cause=f"the header {header} was not found: {row.name}'s development files are not "
              "installed in the ROCm include folder the compile uses",
        fix=f"install {row.name}'s development package ({row.install_hint()}) in the ROCm "
            "install the build uses; `invoke doctor` checks every component")


# --- linker ---------------------------------------------------------------------------------

def _owner_note(row: object) -> str:
    return f" (it belongs to ROCm's {row.name})" if row is not None else ""  # type: ignore[attr-defined]


def _cannot_find_lib(match: re.Match[str], view: LineView) -> Reading | None:
    name = match.group("lib").rstrip(":")
    if "::" in name:
        # A CMake imported target (roc::rocblas) passed through as -l: the package that
        # defines it was not found at configure; the link error is only its symptom.
        return None
    if "aotriton" in name:
        return _aotriton_library(name)
    row = owners.library_owner(name)
    library = "lib" + name
    if name.startswith(":"):
        library = name[1:]
    fix = (f"install {row.name}'s development package ({row.install_hint()}) in the ROCm "
           "install the build uses" if row else
           f"install the development package that provides {library}.so (or .a), or add the "
           "folder that holds it to the link path (LIBRARY_PATH, or CMAKE_PREFIX_PATH for a "
           "CMake package); a ROCm install may keep it in lib64 rather than lib "
           f"(`ls /opt/rocm*/lib*/{library}.*`)")
    return Reading(subject=library, cause=f"the linker could not find {library}"
                   f"{_owner_note(row)}: it is not installed, or not in any folder on the link "
                   "path", fix=fix)


_FROM_SHARED = re.compile(r"^(?:\S*ld\S*: )?\S+\.so(?:\.[\w.-]+)?: undefined reference to ")


def _undefined_reference(match: Groups, view: LineView) -> Reading | None:
    if _FROM_SHARED.match(view.text):
        # A shared library being linked against needs a symbol its own dependency does not
        # provide here: which copy of that dependency ld found is not in the lines (a second,
        # older runtime? ld's stricter check?), so nothing is claimed.
        return None
    symbol = demangle(match.group("sym"))
    if "std::__cxx11::" in symbol or "B5cxx11" in match.group("sym"):
        return Reading(
            subject=symbol,
            cause=f"undefined reference to {symbol}: objects built with different C++ ABIs "
                  "(_GLIBCXX_USE_CXX11_ABI 0 and 1) or different compilers were linked together",
            fix="build everything with one compiler and one ABI: `invoke clean`, leave "
                "_GLIBCXX_USE_CXX11_ABI unset (PyTorch >= 2.7 uses the new ABI) and rebuild")
    row = owners.symbol_owner(symbol)
    where = (f"; it is exported by ROCm's {row.name} ({row.install_hint()}), so that library "
             "is missing from the link or is an older release without it" if row else
             ": the library that defines it is missing from the link line, or it was built "
             "from other sources or another release than the headers used")
    return Reading(
        subject=symbol,
        cause=f"the linker found no definition of {symbol}{where}",
        fix=("use one ROCm install for headers and libraries (`invoke build --rocm-path`), "
             f"with {row.name} installed at the version the headers expect" if row else
             "rebuild from a clean build directory (`invoke clean`) so every object comes from "
             "one tree and one toolchain; if the symbol belongs to a system library, install "
             "the release the headers came from"))


def _relocation_overflow(match: re.Match[str], view: LineView) -> Reading | None:
    named = match.group("what") or ""
    owner = _RELOC_OWNER.search(view.text)
    return Reading(
        subject=named.split(".so")[0] or (owner.group(1).lower() if owner else "libtorch_hip"),
        cause="a relocation overflowed while linking (R_X86_64 offsets are limited to ±2 GiB): "
              "the library being linked, usually libtorch_hip.so with device code for many "
              "targets, grew past 2 GiB",
        fix="build for fewer GPU targets, each arch adds its device code (`invoke build --arch "
            "<your gfx>`, PYTORCH_ROCM_ARCH; "
            "a project's own list, e.g. AOTriton's target list), or link with "
            "-mcmodel=medium / compressed offload bundles (--offload-compress) where the "
            "release supports them")


# A relocation error names the function whose code overflowed (`aotriton::v2::flash::…`,
# `composable_kernel`'s `ck::…`): the project it belongs to is the subject.
_RELOC_OWNER = re.compile(r"\b(aotriton|ck_tile|ck|flash|fbgemm|hipblaslt|rocblas)::")


# --- loader (import after install) -----------------------------------------------------------

# Libraries of a ROCm install the component table does not name (its bundled system libraries,
# runtimes, tools): never "a system library" to apt-get.
_ROCM_ISH = re.compile(r"^lib(?:rocm|hip|hsa|amd|roc|miopen|rccl|rocprofiler|roctx|roctracer)",
                       re.IGNORECASE)
_TORCH_OWN = re.compile(r"^lib(?:torch|c10|shm|caffe2_nvrtc|aoti)[\w.+-]*\.so")


# A loader error a program reports as a warning it carries on past (torchvision's optional
# image extension, a tool's "(ignored)" plug-in): the failure, if any, is elsewhere.
# A warning alone is not enough: vLLM reports its own extension's loader error as a WARNING.
# Plug-in loaders that try every optional plug-in (libibverbs' RDMA drivers, ALSA's modules)
# report each missing one the same way: not the failure either.
_WARNED_ONLY = re.compile(r"\(ignored\)|you can ignore|Failed to load image Python extension"
                          r"|couldn't load (?:driver|plugin)|^ALSA lib ")


def _cannot_open_so(match: re.Match[str], view: LineView) -> Reading | None:
    library = match.group("lib")
    if _WARNED_ONLY.search(view.text):
        return None
    if _TORCH_OWN.match(library):
        return Reading(
            subject=library,
            cause=f"torch's own library {library} is missing from the installed torch: the "
                  "install is broken or incomplete (a half-finished pip install, files removed, "
                  "or a wheel for another Python or platform)",
            fix="reinstall the torch wheel into this environment (`python -m pip install "
                "--force-reinstall dist/torch-*.whl`, or `invoke install`) and import again")
    row = owners.library_owner(library)
    version = re.search(r"\.so\.(\d+)", library)
    which = f"{row.name}'s library" if row else "a library it needs"
    hint = (f" (soname version {version.group(1)}: the ROCm release the binary was built "
            "against)" if version and row else "")
    if row is None and not _ROCM_ISH.match(library):
        stem = library.split(".so")[0]
        package = f"{stem}{version.group(1)}" if version else stem
        return Reading(
            subject=library,
            cause=f"the loader could not find {library}, a system library the binary was "
                  "linked against: this distribution does not install it (or another release "
                  "of it)",
            fix=f"install the package that provides {library} (Debian/Ubuntu name it "
                f"{package}: `sudo apt-get install {package}`; elsewhere the compat package of "
                f"{stem}), or rebuild the binary against the release the system has; `ldd` "
                "shows every library it still misses")
    if library.endswith(".so") and _ROCM_ISH.match(library):
        # An unversioned name is the development symlink (code that dlopens libX.so itself):
        # runtime-only installs and TheRock's Python wheels ship only libX.so.N.
        return Reading(
            subject=library,
            cause=f"the program loads {library} by its unversioned name, which only a ROCm "
                  "development install provides (a symlink to the versioned soname): this "
                  "install has only the versioned library (a runtime-only install, or TheRock's "
                  "wheels, which keep it inside the _rocm_sdk_core package off the loader path)",
            fix=f"with TheRock's wheels, resolve it through rocm_sdk (rocm_sdk.find_libraries, "
                f"or LD_LIBRARY_PATH=$(rocm-sdk path --root)/lib), or install the ROCm "
                f"development package that provides {library}; code that loads it should ask "
                "for the versioned name")
    return Reading(
        subject=library,
        cause=f"the loader could not find {library}{hint}: {which} is not installed, not on the "
              "loader path, or the installed ROCm is another release than the one this binary "
              "was built against",
        fix=(f"install the ROCm release the binary was built for (it provides {library}) or "
             "rebuild against the installed one; add its lib folder to the loader path "
             "(`echo /opt/rocm/lib | sudo tee /etc/ld.so.conf.d/rocm.conf && sudo ldconfig`, or "
             "LD_LIBRARY_PATH) and check with `ldd`"))


_LINKER_SAYS = re.compile(r"(?:lld-link|ld\.lld|ld64\.lld|\bld|link\.exe|LINK)\s*: error")


def _undefined_symbol(match: re.Match[str], view: LineView) -> Reading | None:
    if _LINKER_SAYS.search(view.text):
        return None  # a linker's undefined symbol (rocmforge.triage.shapes), not the loader's
    if _WARNED_ONLY.search(view.text):
        return None
    raw = match.group("sym")
    symbol = demangle(raw)
    where = match.group("where") or ""
    if "/triton/" in where:
        return Reading(
            subject="triton", klass="triton",
            cause=f"Triton's HIP driver module ({where.rsplit('/', 1)[-1]}, compiled by Triton "
                  f"at run time) needs {symbol}, which the loaded HIP runtime does not export: "
                  "the Triton build was made for another ROCm than torch's libamdhip64",
            fix="install the Triton built for torch's ROCm (the pytorch-triton-rocm that torch's "
                "release pins, from the same index), remove other triton packages, and clear "
                "Triton's cache (~/.triton, /tmp/torchinductor_*)")
    if "cxx11" in raw:
        return Reading(
            subject=symbol,
            cause=f"undefined symbol {symbol} at load time: a library built with the other C++ "
                  "ABI (_GLIBCXX_USE_CXX11_ABI) or against another torch",
            fix="rebuild the extension against the installed torch with the same compiler and "
                "ABI (`--no-build-isolation`, torch from the same build)")
    if where and symbol.startswith("_Z") and symbol == raw:
        # A C++ name the log cut short (it does not demangle): the library that needs it is
        # what the log proves.
        library = where.rsplit("/", 1)[-1]
        return Reading(
            subject=library,
            cause=f"{where} needs a C++ symbol ({raw[:60]}…) that the libraries loaded with it "
                  f"do not export: {library} was built against other releases of its "
                  "dependencies than the ones loaded (a self-built or mixed install)",
            fix=f"use {library} and the libraries it was built with from one install or one "
                f"build (`ldd -r {where}` lists what it cannot resolve); or rebuild "
                f"{library.split('.so')[0]} against the libraries that are installed")
    row = owners.symbol_owner(symbol)
    owner = (f"ROCm's {row.name}" if row else
             "torch" if symbol.startswith(("at::", "c10::", "torch::", "caffe2::")) else "")
    cause = (f"{where or 'a library'} needs the symbol {symbol}, which the loaded "
             f"{owner or 'libraries'} do not export: it was built against another release than "
             "the one loaded at run time (a second copy earlier on the loader path shadows the "
             "right one, or a mixed ROCm install)")
    if row is not None:
        library = row.libraries[0] if row.libraries else row.name
        cause = (f"{where or 'a library'} needs {symbol} from ROCm's {row.name} ({library}), "
                 "and the loaded libraries do not provide it: the library was not linked "
                 f"against {library}, or the {row.name} loaded at run time is another release")
        fix = (f"check `ldd {where or '<library>'} | grep {library.removeprefix('lib')}`: if "
               f"{library} is not listed, the build did not link it (rebuild from a tree whose "
               f"LoadHIP.cmake finds {row.name}, with {row.name} installed: {row.install_hint()}); "
               "if it is listed, remove the stale copy from the loader path or install the "
               "release the build used")
    elif owner == "torch":
        fix = ("rebuild the extension against the torch that is installed, without build "
               "isolation (`pip install --no-build-isolation .`), or reinstall the torch it was "
               "built for")
    else:
        fix = ("find which copy is loaded (`ldd` on the library, or LD_DEBUG=libs) and remove "
               "the stale one from the loader path (LD_LIBRARY_PATH, /etc/ld.so.conf.d), or "
               "rebuild against the installed release")
        library = where.rsplit("/", 1)[-1]
        if where and not _ROCM_ISH.match(library) and not _TORCH_OWN.match(library):
            fix += ("; if no library defines it (`nm -D` of the extension's own files), the "
                    f"extension {library} declares an op whose source its ROCm build does not "
                    "compile (a CUDA-only kernel): build a release of it that leaves the op "
                    "out on ROCm")
    return Reading(subject=symbol, cause=cause, fix=fix)


def _glibcxx(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject=match.group("ver"),
        cause=f"the loaded {match.group('lib')} is older than the one the binary was built "
              f"against (it needs {match.group('ver')}): the build's compiler had a newer "
              "libstdc++ than the one found at run time (often a conda env's or an old system "
              "copy)",
        fix="run with the libstdc++ of the compiler that built it (install the newer "
            "libstdc++6, or put its folder first on LD_LIBRARY_PATH; in conda: `conda install "
            "-c conda-forge libstdcxx-ng`), or rebuild with the system GCC (--gcc N)")


# --- resources --------------------------------------------------------------------------------

_JOBS_FIX = ("{jobs_advice}; a PyTorch ROCm build needs about 4-5 GB of RAM per compile job, "
             "and the rerun resumes where it stopped")


def _killed(match: Groups, view: LineView) -> Reading | None:
    prog = match.groupdict().get("prog") or "the compiler"
    prog = prog.rsplit("/", 1)[-1]
    role = "the linker" if prog.startswith(("ld", "lld", "collect2")) else "the compiler"
    who = role if prog == "the compiler" else f"{role} ({prog})"
    return Reading(subject=prog, cause=f"{who} was killed by the kernel (SIGKILL), almost "
                   "always the out-of-memory killer: too many parallel jobs for this machine's "
                   "memory", fix=_JOBS_FIX)


def _out_of_memory(match: re.Match[str], view: LineView) -> Reading | None:
    prog = (match.groupdict().get("prog") or "").rsplit("/", 1)[-1] or "memory"
    return Reading(subject=prog, cause=f"{'the compiler' if prog == 'memory' else prog} ran "
                   "out of memory (an allocation failed): too many parallel jobs for the memory, "
                   "or a memory limit (ulimit -v, a container limit)",
                   fix=_JOBS_FIX + "; raise the limit if one is set (`ulimit -v`, docker --memory)")


def _exit_137(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="memory", cause="a build process ended with status 137 (128 + "
                   "SIGKILL 9): the out-of-memory killer, or a container's memory limit",
                   fix=_JOBS_FIX)


def _disk_full(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="disk", cause="no space left: a disk (a file system the build "
                   "writes to) is full (ENOSPC) or "
                   "over its quota: the work dir, the temp dir ($TMPDIR, /tmp), pip's cache or "
                   "the compile cache", fix="free space there (`df -h . $TMPDIR` shows which one "
                   "is full; a PyTorch ROCm build needs about 40 GB free for one target; pip's "
                   "cache keeps every wheel it downloaded: `pip cache purge`, or PIP_NO_CACHE_DIR="
                   "1), or move the work dir (--work-dir) or TMPDIR to a larger disk, then rerun")


# --- GPU targets ----------------------------------------------------------------------------

def _unsupported_arch(match: re.Match[str], view: LineView) -> Reading | None:
    arch = match.group("arch")
    return Reading(subject=arch.split(":")[0], cause=f"the compiler does not know the offload "
                   f"target {arch}: the ROCm/LLVM release is older than the target, or the name "
                   "(or its :xnack/:sramecc feature) is wrong",
                   fix=f"drop {arch} from --arch or use a newer ROCm/LLVM that supports it; "
                   "`invoke "
                   f"doctor --arch {arch.split(':')[0]}` compiles a kernel for it and says which "
                   "targets this toolchain accepts")






# --- math libraries without kernels for the target -----------------------------------------

def _tensile(match: Groups, view: LineView) -> Reading | None:
    # Proof that the target has no kernels: the library says which GPU arch it looked for, or
    # the target's own file is not there. "Cannot read …: No error" (a file that is there but
    # unreadable, another format) proves nothing about the kernels: no claim.
    if "GPU arch" not in view.text and "No such file" not in view.text:
        return None
    lower = view.text.lower()
    lib = next((name for name in ("hipsparselt", "hipblaslt") if name in lower), "rocblas")
    arch = match.groupdict().get("arch") or "{device}"
    return Reading(subject=lib, cause=f"{lib} has no kernels (Tensile library files) for the "
                   f"GPU's target {arch}: the installed {lib} was built without it",
                   fix=f"install a ROCm whose {lib} ships kernels for {arch} (check "
                   f"`ls $ROCM_PATH/lib/{lib}/library/*{arch if arch != '{device}' else ''}*`), "
                   f"or build {lib} for it; presenting the GPU as a supported target with "
                   "HSA_OVERRIDE_GFX_VERSION works only within one family (e.g. 10.3.0 for "
                   "RDNA2, 11.0.0 for RDNA3)")


def _blaslt_arch(match: re.Match[str], view: LineView) -> Reading | None:
    if "Overriding blas backend" in view.text:
        return None  # torch's notice that it fell back to hipBLAS: a warning, nothing failed
    return Reading(subject="hipblaslt", cause="hipBLASLt does not support the GPU's target "
                   "({device}): it has no kernels for it, so the matmuls that use it fail",
                   fix="use rocBLAS for this GPU (`export TORCH_BLAS_PREFER_HIPBLASLT=0`), or "
                   "install a ROCm whose hipBLASLt supports the target")


# --- Python packaging ---------------------------------------------------------------------------

def _pkg_resources(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="pkg_resources", cause="the code imports pkg_resources, which "
                   "setuptools 82 removed (and a venv may have no setuptools at all)",
                   fix="pin setuptools below 82 in the build venv (`python -m pip install "
                   "'setuptools<82'`; with build isolation: PIP_CONSTRAINT with setuptools<82), "
                   "or use a release whose code no longer imports pkg_resources")


def _no_module(match: re.Match[str], view: LineView) -> Reading | None:
    module = match.group("mod")
    top = module.split(".")[0]
    isolated = any(w in " ".join(view.previous) for w in
                   ("Getting requirements to build", "get_requires_for_build", "Preparing metadata",
                    "pip-build-env", "build isolation", "Installing build dependencies"))
    if module.startswith("torch.utils.hipify"):
        return None  # the hipify rule speaks for it
    if top == "torch" and (view.step == "verify" or (not isolated and view.step in (
            "install", "companions-install"))):
        return Reading(subject="torch", cause="torch is not installed in the Python that ran "
                       "this: the venv is not the one the build's wheels went into",
                       fix="install the build's wheels into it (`invoke install --python "
                       "<this venv>/bin/python`), or let `nox -s verify` make a venv with them")
    if top == "torch":
        return Reading(subject="torch", cause="the extension's build could not import torch: pip "
                       "built it in an isolated environment without your torch (build isolation), "
                       "or torch is not installed in this Python",
                       fix="install your torch first, then build with `pip install "
                       "--no-build-isolation <extension>` so it compiles against that torch "
                       "(never let pip pull another torch from PyPI)")
    if top == "triton":
        return None  # the triton rule speaks for triton
    if top in ("pkg_resources",):
        return None
    if not isolated and view.step not in ("build-requirements", "build", "venv", "triton",
                                          "hipify", "configure", ""):
        return None
    package = _DIST_NAME.get(top, top)
    named = f" (pip installs the module {top} as {package})" if package != top else ""
    return Reading(subject=top, cause=f"a build script imports {top}, which is not installed "
                   "in the Python that runs it (a build requirement missing from the venv, or "
                   "pip's isolated build environment)",
                   fix=f"install {package}{named} into the Python the build runs (`python -m "
                   f"pip install {package}`; for PyTorch `python -m pip install -r "
                   "requirements.txt` lists its build requirements), and build with "
                   "--no-build-isolation")


# Modules whose package on PyPI has another name (pip cannot install `yaml`).
_DIST_NAME = {"yaml": "pyyaml", "cv2": "opencv-python", "PIL": "pillow",
              "sklearn": "scikit-learn", "skimage": "scikit-image", "attr": "attrs",
              "dateutil": "python-dateutil", "Crypto": "pycryptodome", "git": "GitPython",
              "zmq": "pyzmq"}


def _no_distribution(match: re.Match[str], view: LineView) -> Reading | None:
    name = match.group("pkg").split("[")[0].strip()
    name = re.split(r"[<>=!~; ]", name)[0].lower()
    if not name:
        return None
    if name in ("pytorch-triton-rocm", "pytorch-triton", "triton-rocm"):
        return Reading(subject="triton", klass="triton",
                       cause=f"pip found no {name} release that torch pins: PyTorch publishes "
                             "its ROCm Triton (pytorch-triton-rocm) on its own wheel index, not "
                             "on PyPI, so a torch wheel installed from a file or another index "
                             "cannot get its Triton",
                       fix="install with the PyTorch ROCm index that torch came from (`pip "
                           "install --index-url https://download.pytorch.org/whl/rocmX.Y "
                           "...`), or install the pinned pytorch-triton-rocm wheel first")
    return Reading(subject=name, cause=f"pip found no release of {name} that fits: the index "
                   "(PIP_INDEX_URL, a mirror, --index-url) does not carry it for this Python "
                   "version and platform, or no network", fix=f"use an index that carries {name} "
                   "for this Python (a new Python often has no wheels yet: compare `python "
                   "--version` with the cpXY tags the index lists, and create the venv with a "
                   "Python it has, e.g. 3.12), add --extra-index-url https://pypi.org/simple or "
                   "fix the mirror, or install it from a local wheel first")


# --- CMake ----------------------------------------------------------------------------------

def _cmake4(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="cmake", cause="CMake 4 removed support for projects that declare "
                   "cmake_minimum_required below 3.5; a submodule or dependency of the tree "
                   "still does", fix="configure with CMAKE_POLICY_VERSION_MINIMUM=3.5 in the "
                   "environment (the kit sets it when it finds CMake >= 4; turn off with "
                   "cmake_policy_minimum = \"\"), or use CMake 3.x in the build venv "
                   "(`python -m pip install 'cmake<4'`)")




# --- host compiler ------------------------------------------------------------------------------

def _std_header(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="libstdc++", cause=f"the C++ standard header '{match.group('header')}' "
                   "was not found: clang picked the newest GCC installation it found, whose "
                   "libstdc++ headers (libstdc++-N-dev) are not installed",
                   fix="install the headers of the newest installed GCC (`sudo apt-get install "
                   "libstdc++-N-dev` for N = the newest /usr/lib/gcc/x86_64-linux-gnu/N: "
                   "libstdc++-12-dev on Ubuntu 22.04, libstdc++-14-dev on 24.04), or "
                   "choose a GCC that has them (`invoke build --gcc 12`, which passes "
                   "--gcc-install-dir; clang's --gcc-toolchain=<prefix> or a clang++.cfg next "
                   "to ROCm's clang does the same)")


def _host_in_device(match: Groups, view: LineView) -> Reading | None:
    func = match.group("func")
    if "glibcxx" in func or "replacement_assert" in func or "__assert" in func:
        return Reading(subject="libstdc++", cause=f"device code calls the host-only function "
                       f"{func}: the host libstdc++ (GCC 15, or any with _GLIBCXX_ASSERTIONS "
                       "defined) puts assertion calls into templates HIP device code uses",
                       fix="drop -D_GLIBCXX_ASSERTIONS from CXXFLAGS, CPPFLAGS and HIPFLAGS "
                       "(distributions' default flags add it); with GCC 15's libstdc++, which "
                       "asserts without it, build with an older GCC (`invoke build --gcc 13`) or "
                       "a ROCm whose HIP headers declare the assertion for device code")
    return None


def _unsupported_gcc(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="gcc", cause="the host GCC is outside the range this toolchain "
                   "supports", fix="choose a supported GCC for the build (`invoke build --gcc "
                   "N`; `invoke toolchain` lists the installed ones against the table)")


# --- Triton, AOTriton, hipify, CK, crashes -----------------------------------------------------

def _triton_drivers(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="triton", cause="Triton found no usable GPU driver backend: a CUDA "
                   "`triton` from PyPI shadows the ROCm one (pytorch-triton-rocm), or no GPU is "
                   "visible", fix="remove the CUDA one and install the Triton your torch pins "
                   "(`pip uninstall -y triton` then `invoke install`, or `pip install "
                   "pytorch-triton-rocm==<pin>` from the ROCm index); `invoke doctor` warns "
                   "about a shadowing triton")


def _triton_import(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="triton", cause=f"torch imports {match.group('name')} from Triton, "
                   "which this Triton does not have: the installed Triton is not the one this "
                   "PyTorch commit pins", fix="install the Triton the PyTorch checkout pins "
                   "(`invoke triton.pin` names it; the build installs it; `pip install "
                   "pytorch-triton-rocm==<version>` from the ROCm index), never a PyPI `triton`")


def _aotriton_library(name: str) -> Reading:
    return Reading(subject="aotriton", cause=f"the AOTriton library ({name}) was not there to "
                   "link: its ExternalProject download or build failed earlier, or "
                   "AOTRITON_INSTALLED_PREFIX points at an incomplete prefix",
                   fix="run `invoke fetch` to download and check AOTriton for your ROCm and "
                   "targets (the build then uses AOTRITON_INSTALLED_PREFIX), or leave the "
                   "attention kernels out (features flash_attention=off, "
                   "mem_efficient_attention=off)")


def _aotriton_error(match: re.Match[str], view: LineView) -> Reading | None:
    return _aotriton_library("aotriton")


def _ck_reading(where: str, why: str = "") -> Reading:
    return Reading(subject="composable_kernel", klass="composable-kernel",
                   cause="a Composable Kernel (CK, composable_kernel) source failed to "
                   f"compile for {{device}} ({where}){why}: CK's kernels are written for the "
                   "targets and ROCm release CK supports (its MFMA/WMMA paths: CDNA gfx90a, "
                   "gfx942, gfx950), and other targets or a CK submodule at another commit "
                   "fail like this",
                   fix="leave Composable Kernel out for {gfx} (`USE_ROCM_CK_GEMM=0 "
                   "USE_ROCM_CK_SDPA=0`, features ck=off), or build only for targets "
                   "composable_kernel supports with the ROCm release the PyTorch release "
                   "names; the CK submodule must be at the commit the tree pins (`git "
                   "submodule update --init --recursive`)")


def _ck_error(match: re.Match[str], view: LineView) -> Reading | None:
    why = ""
    if "needs target feature" in view.text:
        why = "; it uses instructions (" + view.text.rsplit("needs target feature", 1)[1].strip() \
            + ") this target does not have"
    reading = _ck_reading(match.group("file").rsplit("/", 1)[-1], why)
    if "flash_attn" in match.group("file") or "flash-attention" in match.group("file"):
        # flash-attention's own CK backend: on other targets its Triton backend builds.
        return Reading(subject=reading.subject, klass=reading.klass, cause=reading.cause,
                       fix="build flash-attention with its Triton backend on this target "
                           "(FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE): its CK backend builds "
                           "only for the CDNA targets CK supports (GPU_ARCHS=gfx90a;gfx942)")
    return reading


_LLVM_PROGRAM = re.compile(r"(?:^|[/\\\s])(?P<prog>llc|opt|llvm-link|ld\.lld|lld|clang[\w.+-]*)"
                           r"(?:\.exe)?(?:\(|\s+-)")


def _compiler_crash(match: re.Match[str], view: LineView) -> Reading | None:
    prog = "gcc" if "internal compiler error" in view.text else "clang"
    if prog == "clang":
        # The LLVM program that crashed, when its path or stack frames are in sight (hcc's
        # llc, llvm-link); clang under any version suffix is clang.
        for line in (view.text, *reversed(view.previous)):
            named = _LLVM_PROGRAM.search(line)
            if named:
                found = named.group("prog")
                prog = "clang" if found.startswith("clang") else found
                break
    return Reading(subject=prog, cause=f"the compiler ({prog}) crashed (an internal compiler "
                   "error, not a problem in the source it was given)", fix="rerun the step "
                   "once (a crash under memory pressure is not repeatable); if it repeats, use "
                   "another release of the compiler (a newer ROCm, or --gcc/--clang N) and "
                   "report it upstream with the preprocessed source the crash message names")


def _stack_dump(match: re.Match[str], view: LineView) -> Reading | None:
    # LLVM prints "Stack dump:" and then "0. Program arguments: <program> …" on the next line,
    # which names the program that crashed: that line gives the finding.
    if view.text.startswith("Stack dump:"):
        return None
    return _compiler_crash(match, view)


def _hipify_fail(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject=match.group("file"), cause="hipify could not rewrite a CUDA source "
                   "for HIP", fix="run hipify on a clean checkout (`invoke checkout` restores "
                   "it; sources hipified by another PyTorch release confuse it), then rerun")


def _not_compiled(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="USE_ROCM", cause="this torch was built without GPU support (the "
                   "configure ran with USE_ROCM off, or a CPU wheel from PyPI is installed)",
                   fix="rebuild with ROCm found (`invoke build --arch <gfx>`; its configure "
                   "check stops a CPU-only build), and install the wheel from the kit's dist/ "
                   "(`invoke install`)")






# --- more shapes seen in real threads -------------------------------------------------------

def _thrust_reading(path: str) -> Reading:
    return Reading(subject="thrust", klass="rocm-install",
                   cause=f"a HIP compile picked up CUDA's thrust/cub headers ({path}) instead of "
                   "rocThrust's: a CUDA include folder is on the include path (CPATH, "
                   "CPLUS_INCLUDE_PATH, or /usr/include/thrust from the distro's CUDA thrust "
                   "package)", fix="remove the CUDA include folder from the include path (unset "
                   "CPATH/CPLUS_INCLUDE_PATH) or uninstall the distro's CUDA thrust headers "
                   "(Debian/Ubuntu: libthrust-dev), and make sure rocThrust ("
                   + owners.install_hint(owners.component("rocthrust"), "rocthrust")
                   + ") is installed in the ROCm the build uses")


def _cuda_thrust(match: re.Match[str], view: LineView) -> Reading | None:
    return _thrust_reading(match.group("path"))


def _triton_cuda_lib(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="triton", cause="Triton compiled its launcher for the CUDA backend "
                   "(it links -lcuda, from triton/third_party/cuda or backends/nvidia): the "
                   "`triton` installed is PyPI's CUDA build, which shadows the ROCm Triton "
                   "(pytorch-triton-rocm) torch needs", fix="remove the CUDA one and install the "
                   "Triton your torch pins (`pip uninstall -y triton` then `invoke install`, or "
                   "`pip install pytorch-triton-rocm==<pin>` from the ROCm index); `invoke "
                   "doctor` warns about a shadowing triton")


def _aotriton_arch(match: re.Match[str], view: LineView) -> Reading | None:
    arch = match.group("arch")
    return Reading(subject="aotriton", cause=f"AOTriton has no kernels for {arch}: the "
                   "AOTriton release this tree pins supports only the targets "
                   "cmake/External/aotriton.cmake lists, so configuring flash and "
                   f"memory-efficient attention for {arch} stops", fix=f"drop {arch} from "
                   "--arch (`invoke plan --arch ...` shows which targets AOTriton supports per "
                   "release), use a PyTorch whose AOTriton supports it, or leave the attention "
                   "kernels out (features flash_attention=off, mem_efficient_attention=off, "
                   "USE_FLASH_ATTENTION=0 USE_MEM_EFF_ATTENTION=0)")


def _aotriton_no_target(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="aotriton", cause="AOTriton was asked to build for {device} and "
                   "found no target it supports there (EFFECTIVE_TARGET_GPUS is empty), so its "
                   "generator got no --target_gpus and the AOTriton runtime's configure stopped",
                   fix="build for a target AOTriton supports, or leave AOTriton's kernels out "
                   "for {gfx} (features flash_attention=off, mem_efficient_attention=off; "
                   "USE_FLASH_ATTENTION=0 USE_MEM_EFF_ATTENTION=0)")


def _aotriton_no_runtime(match: re.Match[str], view: LineView) -> Reading | None:
    rocm = match.group("rocm")
    return Reading(subject="aotriton", cause=f"the tree's cmake/External/aotriton.cmake has no "
                   f"prebuilt AOTriton runtime for ROCm {rocm}: this PyTorch release does not "
                   "support that ROCm with AOTriton", fix="build against a ROCm this PyTorch "
                   "release names (`invoke doctor` shows the supported range), use a newer "
                   "PyTorch whose AOTriton has a runtime for it, or leave the attention "
                   "kernels out (features flash_attention=off, "
                   "mem_efficient_attention=off)")


def _flash_attention_arch(match: re.Match[str], view: LineView) -> Reading | None:
    archs = re.findall(r"gfx[0-9a-f]{3,4}", match.group("archs"))
    first = archs[0] if archs else "PYTORCH_ROCM_ARCH"
    return Reading(subject=first, cause=f"flash-attention's setup.py refused the target "
                   f"{', '.join(archs) or '(none named)'}: its ROCm (Composable Kernel) backend "
                   "builds only for the targets it lists (gfx90a, gfx942, gfx950 in recent "
                   "releases)", fix=f"build flash-attention only for a target it supports "
                   f"(GPU_ARCHS), or on {first} use its Triton backend "
                   "(FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE) or PyTorch's own SDPA")


def _oom_kernel(match: Groups, view: LineView) -> Reading | None:
    task = match.groupdict().get("task") or ""
    return Reading(subject="memory", cause="the kernel's out-of-memory killer ended a process "
                   f"{'(' + task + ') ' if task else ''}of the build: its memory (or the "
                   "container's or job's memory limit) ran out", fix="{jobs_advice}; a "
                   "PyTorch ROCm build needs about 4-5 GB of RAM per compile job, and a job "
                   "scheduler's memory limit (slurm, docker --memory) counts all of them")


def _cuda_path(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="USE_ROCM", cause="the configure took the CUDA path (it looked for "
                   "the CUDA toolkit or nvcc) instead of ROCm: HIP_PLATFORM is nvidia/nvcc, or "
                   "ROCm was not found so the project fell back to CUDA",
                   fix="set HIP_PLATFORM=amd (and for PyTorch USE_ROCM=1 USE_CUDA=0), point "
                   "ROCM_PATH and HIP_PATH at the ROCm install and CXX at its hipcc or clang++, "
                   "then configure from a clean build folder")


def _hip_platform_nvcc(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="USE_ROCM", cause="HIP is set up for the NVIDIA platform "
                   "(HIP_PLATFORM nvcc/nvidia): hipcc and hipconfig look for nvcc and CUDA, not "
                   "the ROCm compiler", fix="export HIP_PLATFORM=amd (the kit sets it for its "
                   "steps), install ROCm's HIP SDK for AMD GPUs, and check with `hipconfig "
                   "--platform` (it must say amd)")


def _mixed_hcc(match: re.Match[str], view: LineView) -> Reading | None:
    used = match.group("used")
    root = re.match(r"/opt/rocm[^/]*", used)
    return Reading(subject=root.group(0) if root else used, cause=f"two ROCm installs are "
                   f"mixed: HIP from {match.group('hip')} was built with another hcc than the "
                   f"one in use ({used})", fix="use one ROCm install for everything: set "
                   "ROCM_PATH, HIP_PATH and HCC_HOME (old releases) to the same /opt/rocm-X.Y, "
                   "remove the other from PATH, and rebuild from a clean build folder")


def _setup_cmake(match: re.Match[str], view: LineView) -> Reading | None:
    need, found = match.group("need"), match.group("found")
    return Reading(subject="cmake", cause=f"PyTorch's setup.py needs CMake {need} or newer and "
                   f"found only {found}", fix=f"install a newer CMake in the build venv "
                   f"(`python -m pip install 'cmake>={need}'`) ahead of the system's on PATH, "
                   "then rerun")


def _hipify_module(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="torch.utils.hipify", cause="the installed torch has no "
                   "torch.utils.hipify (it predates it, or is not a full torch): the "
                   "extension's setup.py cannot hipify its CUDA sources for ROCm",
                   fix="install a ROCm torch that ships torch.utils.hipify (any 2.x release; "
                   "the kit's `invoke install`), then build the extension against it with "
                   "--no-build-isolation")


def _hipify_recursion(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="hipify_python.py", cause="hipify (torch/utils/hipify/"
                   "hipify_python.py) hit Python's recursion limit following headers that "
                   "include each other", fix="use a PyTorch whose hipify walks includes "
                   "without recursion (pytorch/pytorch#104085, in 2.1 and later) to hipify "
                   "the sources, or raise the limit for an old one "
                   "(sys.setrecursionlimit in the build script)")


def _lld_missing(match: re.Match[str], view: LineView) -> Reading | None:
    where = match.group("path")
    return Reading(subject="triton", cause=f"Triton's AMD backend links its kernels with ROCm's "
                   f"ld.lld and did not find it at {where}: ROCm is not under /opt/rocm here (a "
                   "pip or TheRock SDK, a distro install), so the path it assumes is empty",
                   fix="export TRITON_HIP_LLD_PATH=<the ld.lld of your ROCm's LLVM> (for example "
                   "$(rocm-sdk path --root)/lib/llvm/bin/ld.lld, or a distro's "
                   "/usr/lib/llvm-N/bin/ld.lld), then run again")


def _isolated_torch(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="torch", cause="pip's build isolation installed another torch (the "
                   "one PyPI serves, a CUDA build) into its temporary build environment "
                   f"({match.group('env')}), so the extension was configured against it, not "
                   "against your ROCm torch", fix="install your ROCm torch first, then build the "
                   "extension with `pip install --no-build-isolation .` (and its build "
                   "requirements installed by hand), so it compiles against that torch")


def _hip_duplicate(match: re.Match[str], view: LineView) -> Reading | None:
    objects = re.findall(r"[\w+-]+\.o\b", view.text)
    here = objects[0] if objects else match.group("file")
    there = " ".join(view.previous[-1:]) + " " + view.text
    twin = re.search(r"(\w+)_hip\.(?:cpp|cc|cu|o)\b", view.text + " " + there)
    if twin is None:
        return None
    return Reading(subject=demangle(match.group("sym")), cause=f"{twin.group(0)}, the hipified "
                   f"copy of {twin.group(1)}, was compiled beside it, so both define "
                   f"{demangle(match.group('sym'))}: the extension's setup chose its CPU and GPU "
                   "sources at once (it saw no GPU, so it did not take the ROCm path alone)",
                   fix="force the GPU build where no GPU is visible (torchvision, torchaudio: "
                   "FORCE_CUDA=1 with PYTORCH_ROCM_ARCH set; the kit sets both for its "
                   f"companions) and rebuild from a clean build folder; {here} is the other copy")


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


RULES: tuple[Rule, ...] = (
    Rule(id="disk-full", klass="disk-full", tier=0,
         triggers=("No space left", "no space left", "Disk quota exceeded", "ENOSPC", "Errno 28",
                   "diskspace", "disk space", "Errno 27", "File size limit exceeded"),
         pattern=_rx(r"(?i)no space left on device|disk quota exceeded|\bENOSPC\b|\[Errno 2[78]\]"
                     r"|file size limit exceeded"
                     r"|Available diskspace is less than|running out of disk space"),
         read=_disk_full, source="glibc strerror(ENOSPC, EDQUOT); EFBIG ([Errno 27] File too "
         "large) and SIGXFSZ (`clang++: error: unable to execute command: File size limit "
         "exceeded`) from the fixture build under a file-size limit, here "
         "(tests/test_download_codes.py); real output in tests/failures; a CI runner's low-disk "
         "warning (issue 40's example shape)"),
    Rule(id="compiler-killed", klass="out-of-memory", tier=0,
         triggers=("Killed", "killed"),
         pattern=_rx(r"Killed signal terminated program (?P<prog>\S+)"
                     r"|internal compiler error: Killed \(program (?P<prog4>\S+)\)"
                     r"|(?P<prog2>clang\S*|ld\S*|\S*hipcc): error: unable to execute command: "
                     r"Killed"
                     r"|terminated by signal 9 \(Killed\)|^Killed\s*$|: Killed$"
                     r"|(?:\bprocess|\bjob)\S* (?:was )?killed by (?:the )?(?:OOM|oom)"
                     r"|(?:(?P<prog3>cc1plus|cc1|clang[\w.+-]*|ld(?:\.\w+)?|lld|hipcc|[gc]\+\+)"
                     r"\S*:? (?:was |got )?|\b(?:was|got) )killed by the kernel"),
         read=lambda m, v: _killed(_Alias(m, prog="prog2") if m.group("prog2") else
                                   _Alias(m, prog="prog4") if m.group("prog4") else
                                   _Alias(m, prog="prog3"), v),
         source="gcc/clang driver text for a SIGKILLed child; pytorch/pytorch#124018"),
    Rule(id="out-of-memory", klass="out-of-memory", tier=0,
         triggers=("memory exhausted", "out of memory", "Out of memory", "bad_alloc",
                   "Cannot allocate memory"),
         pattern=_rx(r"(?P<prog>cc1plus|cc1|ld|clang\S*)?:? ?(?:virtual memory exhausted"
                     r"|out of memory allocating|fatal error: out of memory)"
                     r"|LLVM ERROR: out of memory|std::bad_alloc.*(?:clang|cc1plus|ld)"
                     r"|virtual memory exhausted: Cannot allocate memory"),
         read=_out_of_memory, source="gcc's xmalloc_failed text, LLVM's report_bad_alloc_error"),
    Rule(id="exit-137", klass="out-of-memory", tier=0,
         triggers=("137",),
         pattern=_rx(r"exit (?:code|status):? 137\b|exit status 137\b|returned non-zero exit "
                     r"status 137|Error 137\b|exited with code 137|code=137\b"),
         read=_exit_137, source="128 + SIGKILL; docker/kubernetes OOMKilled"),
    Rule(id="cmake-config-file", klass="missing-component",
         triggers=("package configuration file provided by",),
         pattern=_rx(r'(?:Could not find a|find a) package configuration file provided by\s+'
                     r'"(?P<name>[^"]+)"'),
         read=_config_file, source=_CMAKE_SOURCE),
    Rule(id="cmake-could-not-find", klass="missing-component",
         triggers=("Could NOT find",),
         pattern=_rx(r"Could NOT find (?P<name>[\w.+-]+)(?: \(missing:(?P<missing>[^)]*)\))?"),
         read=lambda m, v: _could_not_find(m, v) if m.group("missing") is not None else (
             None if v.cmake_block != "error" or v.text.startswith("--") else
             _package_reading(m.group("name"), "not found")),
         source=_CMAKE_SOURCE),
    Rule(id="cmake-incompatible-version", klass="missing-component",
         triggers=("compatible with requested version",),
         pattern=_rx(r'configuration file for package "(?P<name>[^"]+)" that is compatible '
                     r'with requested version\s+"?(?P<want>[^".]*(?:\.[^".]*)*)"?'),
         read=_incompatible_version, source=_CMAKE_SOURCE),
    Rule(id="pkg-config-missing", klass="missing-component",
         triggers=("No package '",),
         pattern=_rx(r"No package '(?P<name>[\w.+-]+)' found"),
         read=_pkgconfig_missing, source="pkg-config's error text"),
    Rule(id="missing-header", klass="missing-component",
         triggers=("file not found", "No such file or directory"),
         pattern=_rx(r"fatal error: '?(?P<header>[\w./+-]+\.(?:h|hpp|cuh|inc))'?"
                     r"(?::)? (?:file not found|No such file or directory)"),
         read=_missing_header, source="gcc/clang 'fatal error: … file not found'"),
    Rule(id="std-header-missing", klass="host-compiler",
         triggers=("file not found",),
         pattern=_rx(r"fatal error: '(?P<header>cmath|cstdlib|cstddef|cstdint|cstring|type_traits"
                     r"|limits|algorithm|string|vector|memory|utility|new|cassert|climits|"
                     r"cstdio|iostream|array|tuple|functional|initializer_list)' file not found"),
         read=_std_header, source="ROCm/legacy-rocm-build#4612; clang's GCC detection"),
    Rule(id="host-function-in-device", klass="host-compiler",
         triggers=("__host__ function", "host function"),
         pattern=_rx(r"reference to __host__ function '(?P<func>[^']+)' in __host__ __device__"
                     r"|reference to __host__ function '(?P<func2>[^']+)' in __device__"),
         read=lambda m, v: _host_in_device(_Alias(m, func="func2"), v),
         source="clang's err_ref_bad_target; GCC 15 libstdc++ __glibcxx_assert_fail"),
    Rule(id="unsupported-gcc", klass="host-compiler",
         triggers=("unsupported GNU version",),
         pattern=_rx(r"unsupported GNU version"), read=_unsupported_gcc, source="host_config.h"),
    Rule(id="triton-cuda-backend", klass="triton",
         triggers=("cannot find -lcuda",),
         pattern=_rx(r"cannot find -lcuda\b(?!\w)"),
         requires=_rx(r"triton/(?:third_party/cuda|backends/nvidia)"),
         read=_triton_cuda_lib, source="ROCm/pytorch#1251"),
    Rule(id="cannot-find-lib", klass="link",
         triggers=("cannot find -l",),
         pattern=_rx(r"cannot find -l(?P<lib>[\w.:+-]+)"),
         unless=_rx(r"cannot find -l\S*::"),
         read=_cannot_find_lib, source="GNU ld / lld 'cannot find -l'; pytorch/pytorch#181939 "
         "(imported targets passed as -l: a configure failure, not a missing library)"),
    Rule(id="undefined-reference", klass="link",
         triggers=("undefined reference to", "undefined symbol: "),
         pattern=_rx(r"undefined reference to [`'](?P<sym>[^'`]+)'"
                     r"|(?:ld\.lld|lld|ld): error: undefined (?:hidden )?symbol: (?P<sym2>.+)$"),
         read=lambda m, v: _undefined_reference(_Alias(m, sym="sym2"), v),
         source="GNU ld / lld undefined symbol errors"),
    Rule(id="relocation-overflow", klass="link",
         triggers=("relocation",),
         pattern=_rx(r"(?:relocation (?:truncated to fit|R_X86_64_\w+ out of range|overflow)"
                     r"|failed to convert GOTPCREL relocation|relocation overflows omitted)"
                     r"(?:.*?(?P<what>lib\w+\.so))?"),
         read=_relocation_overflow, source="GNU ld / lld relocation range errors"),
    Rule(id="cannot-open-so", klass="import",
         triggers=("cannot open shared object file",),
         pattern=_rx(r"(?P<lib>[\w.+-]+\.so[\w.]*): cannot open shared object file"),
         read=_cannot_open_so, source="glibc dlerror()"),
    Rule(id="undefined-symbol", klass="import",
         triggers=("undefined symbol: ",),
         pattern=_rx(r"(?:(?P<where>[\w./+-]+\.so[\w.]*): )?undefined symbol: (?P<sym>[\w$.@]+)"),
         read=_undefined_symbol, source="glibc dlerror()"),
    Rule(id="glibcxx-version", klass="import",
         triggers=("not found (required by", "' not found"),
         pattern=_rx(r"(?P<lib>lib(?:stdc\+\+|gcc_s)\S*?)(?:\.\d+)*: version [`']"
                     r"(?P<ver>(?:GLIBCXX|CXXABI|GCC)_[\d.]+)' not found"),
         read=_glibcxx, source="glibc's version-check error"),
    Rule(id="unsupported-offload-arch", klass="gpu-target",
         triggers=("gpu architecture", "invalid target ID"),
         pattern=_rx(r"(?:unsupported (?:HIP|CUDA|AMDGPU|\w+) gpu architecture: |invalid target ID "
                     r"')(?P<arch>gfx[\w:+-]+)"),
         read=_unsupported_arch, source="clang DiagnosticDriverKinds.td"),
    Rule(id="tensile-library", klass="math-library",
         triggers=("TensileLibrary", "Tensile"),
         pattern=_rx(r"Cannot read .*?TensileLibrary\S*(?:.*?GPU arch\s*:\s*(?P<arch>gfx\w+))?"
                     r"|TensileLibrary\S*?_(?P<arch2>gfx\w+?)\S*\.(?:dat|co|yaml)\S*: No such file"
                     r"|Could not (?:initialize|load) Tensile"),
         read=lambda m, v: _tensile(_Alias(m, arch="arch2"), v),
         source="ROCm/rocBLAS#1339; pytorch/pytorch#179865"),
    Rule(id="hipblaslt-arch", klass="math-library",
         triggers=("hipBLASLt", "hipblaslt", "HIPBLASLT"),
         pattern=_rx(r"(?i)hipblaslt.*(?:unsupported (?:gpu )?arch|not supported on this arch"
                     r"|does not support)"),
         read=_blaslt_arch, source="pytorch/pytorch#179865"),
    Rule(id="pkg-resources", klass="python-packaging",
         triggers=("pkg_resources",),
         pattern=_rx(r"No module named '?pkg_resources'?"),
         read=_pkg_resources, source="setuptools 82 changelog (pkg_resources removed)"),
    Rule(id="no-module", klass="python-packaging",
         triggers=("No module named",),
         pattern=_rx(r"(?:ModuleNotFoundError|ImportError): No module named '(?P<mod>[\w.]+)'"),
         read=_no_module, source="CPython import errors under pip build isolation"),
    Rule(id="no-distribution", klass="python-packaging",
         triggers=("No matching distribution found for",),
         pattern=_rx(r"No matching distribution found for (?P<pkg>\S+)"),
         read=_no_distribution, source="pip's resolver"),
    Rule(id="cmake-4-policy", klass="cmake",
         triggers=("Compatibility with CMake < ",),
         pattern=_rx(r"Compatibility with CMake < 3\.\d+ has been removed from CMake"),
         read=_cmake4, source="CMake 4.0 release notes (policies before 3.5 removed)"),
    Rule(id="triton-no-driver", klass="triton",
         triggers=("active drivers",),
         pattern=_rx(r"\d+ active drivers \(\[.*\]\)\. There should only be one"),
         read=_triton_drivers, source="triton-lang/triton runtime/driver.py"),
    Rule(id="triton-import", klass="triton",
         triggers=("from 'triton",),
         pattern=_rx(r"cannot import name '(?P<name>\w+)' from 'triton[\w.]*'"),
         read=_triton_import, source="PyTorch's Triton pin"),
    Rule(id="aotriton-error", klass="aotriton",
         triggers=("aotriton", "AOTriton"),
         # A file of AOTriton's that is not there (its library, its prefix): not any line that
         # names AOTriton and fails, which is also what a failed configure without output is.
         pattern=_rx(r"(?i)(?:no such file|not found|cannot find|missing and no known rule)"
                     r".*aotriton|aotriton\S*\.(?:a|so)\S*.*(?:missing|not found|no such file)"),
         read=_aotriton_error, tier=2, source="pytorch/pytorch cmake/External/aotriton.cmake"),
    Rule(id="ck-error", klass="composable-kernel",
         triggers=("composable_kernel", "/ck/", "/ck_tile/"),
         pattern=_rx(r"(?P<file>\S*(?:composable_kernel|/ck/|/ck_tile/)\S*?):\d+(?::\d+)?: "
                     r"(?:fatal )?error:"),
         read=_ck_error, source="pytorch/pytorch third_party/composable_kernel"),
    Rule(id="compiler-crash", klass="compiler-crash", tier=2,
         triggers=("PLEASE submit a bug report", "internal compiler error",
                   "frontend command failed due to signal", "Segmentation fault"),
         pattern=_rx(r"PLEASE submit a bug report|internal compiler error"
                     r"|clang\S*: error: (?:clang frontend command failed due to signal"
                     r"|unable to execute command: Segmentation fault)"),
         read=_compiler_crash, source="LLVM PrettyStackTrace; GCC ICE text"),
    Rule(id="hipify-failed", klass="hipify",
         triggers=("hipify",),
         pattern=_rx(r"(?i)hipify\S*: (?:error|fatal)[^:]*: "
                     r".*?(?P<file>[\w./-]+\.(?:cu|cuh|h|cpp))"),
         read=_hipify_fail, source="hipify-perl / hipify-clang"),
    Rule(id="not-compiled-with-gpu", klass="rocm-disabled",
         triggers=("not compiled with",),
         pattern=_rx(r"Torch not compiled with (?:CUDA|ROCm|HIP) enabled"),
         read=_not_compiled, steps=("verify", "install", "build", "collect"),
         source="torch/cuda/__init__.py _lazy_init"),
    Rule(id="cuda-thrust", klass="rocm-install",
         triggers=("thrust/", "cub/"),
         pattern=_rx(r"(?P<path>\S*cuda\S*/include/(?:thrust|cub)/\S+?|/usr/include/(?:thrust|cub)/\S+?)"
                     r":\d+(?::\d+)?: (?:fatal )?error"),
         read=_cuda_thrust, source="rocThrust vs CUDA thrust include order"),
    Rule(id="oom-killer", klass="out-of-memory", tier=0,
         triggers=("oom-kill", "Out of memory: Killed process", "invoked oom-killer"),
         pattern=_rx(r"oom-kill:constraint=\S*?(?:task=(?P<task>[\w.+-]+))?"
                     r"|Out of memory: Killed process \d+ \((?P<task2>[^)]+)\)|invoked oom-killer"),
         read=lambda m, v: _oom_kernel(_Alias(m, task="task2"), v),
         source="Linux mm/oom_kill.c messages (dmesg); pytorch/pytorch#124018"),
    Rule(id="aotriton-arch", klass="aotriton",
         triggers=("AOTriton: unsupported arch",),
         pattern=_rx(r"AOTriton: unsupported arch '(?P<arch>[\w:+-]+)'"),
         read=_aotriton_arch,
         source="pytorch/pytorch cmake/External/aotriton.cmake; ROCm/TheRock#1254"),
    Rule(id="aotriton-no-target", klass="aotriton",
         triggers=("--target_gpus",),
         pattern=_rx(r"argument --target_gpus: expected at least one argument"),
         requires=_rx(r"AOTRITON|aotriton"),
         read=_aotriton_no_target, source="ROCm/aotriton generate.py; ROCm/aotriton#169"),
    Rule(id="aotriton-no-runtime", klass="aotriton",
         triggers=("Cannot find AOTriton runtime",),
         pattern=_rx(r"Cannot find AOTriton runtime for ROCM (?P<rocm>[\d.]+)"),
         read=_aotriton_no_runtime, source="pytorch/pytorch cmake/External/aotriton.cmake"),
    Rule(id="flash-attention-arch", klass="gpu-target",
         triggers=("not supported by Flash-Attention",),
         pattern=_rx(r"GPU archs of (?P<archs>\[[^\]]*\]) is invalid or not supported by "
                     r"Flash-Attention"),
         read=_flash_attention_arch,
         source="Dao-AILab/flash-attention setup.py; ROCm/flash-attention#37"),
    Rule(id="cuda-toolkit-path", klass="rocm-disabled",
         triggers=("CUDA_TOOLKIT_ROOT_DIR", "No CMAKE_CUDA_COMPILER could be found"),
         pattern=_rx(r"^Specify CUDA_TOOLKIT_ROOT_DIR|No CMAKE_CUDA_COMPILER could be found"),
         read=_cuda_path,
         source="CMake FindCUDA / enable_language(CUDA); ROCm/rocRAND#5, ROCm/hipCUB#128"),
    Rule(id="hip-platform-nvcc", klass="rocm-disabled",
         triggers=("HIP_PLATFORM", "nvcc"),
         pattern=_rx(r"^HIP_PLATFORM\s*:\s*(?:nvcc|nvidia)\b|Can't exec \"nvcc\""),
         read=_hip_platform_nvcc, source="hipconfig output; ROCm/HIP#338"),
    Rule(id="mixed-hcc", klass="rocm-install",
         triggers=("was built using hcc",),
         pattern=_rx(r"HIP \((?P<hip>[^)]+)\) was built using hcc .*?but you are using "
                     r"(?P<used>\S+)"),
         read=_mixed_hcc, source="hipcc's HCC version check; ROCm/pytorch#581"),
    Rule(id="setup-cmake-version", klass="cmake",
         triggers=("no cmake or cmake3 with version",),
         pattern=_rx(r"no cmake or cmake3 with version >= (?P<need>[\d.]+), found: (?P<found>.+)$"),
         read=_setup_cmake,
         source="pytorch/pytorch tools/setup_helpers/cmake.py; ROCm/TheRock#1470"),
    Rule(id="hipify-module-missing", klass="hipify",
         triggers=("torch.utils.hipify",),
         pattern=_rx(r"No module named '?torch\.utils\.hipify"),
         read=_hipify_module, source="deepspeedai/DeepSpeed#323"),
    Rule(id="hipify-recursion", klass="hipify",
         triggers=("RecursionError",),
         pattern=_rx(r"^RecursionError: maximum recursion depth exceeded"),
         requires=_rx(r"hipify/hipify_python\.py"),
         read=_hipify_recursion, source="pytorch/pytorch#93827, fixed by #104085"),
    Rule(id="triton-lld-missing", klass="triton",
         triggers=("TRITON_HIP_LLD_PATH",),
         pattern=_rx(r"ROCm linker (?P<path>\S+) not found\. Set 'TRITON_HIP_LLD_PATH'"),
         read=_lld_missing, source="triton-lang/triton third_party/amd/backend/compiler.py "
         "(path_to_rocm_lld); ROCm/TheRock#2006"),
    Rule(id="isolated-torch", klass="python-packaging",
         triggers=("pip-build-env",),
         pattern=_rx(r"(?P<env>/tmp/pip-build-env-[\w-]+)/overlay/\S*site-packages/torch/"),
         read=_isolated_torch, source="pip's PEP 517 build isolation; vllm-project/vllm#17445"),
    Rule(id="hipified-duplicate", klass="link",
         triggers=("multiple definition of",),
         pattern=_rx(r"(?P<file>[\w.+-]+\.(?:cpp|cc|cu|o|h|hpp)):\S*: multiple definition of\s+"
                     r"[`'‘](?P<sym>[^'`’]+)['’]"),
         read=_hip_duplicate, source="pytorch/vision#9298 (vision.cpp and vision_hip.cpp both "
         "compiled)"),
    Rule(id="llvm-stack-dump", klass="compiler-crash", tier=2,
         triggers=("RunSignalHandlers", "Stack dump:", "Running pass '", "Program arguments:"),
         pattern=_rx(r"llvm\S*RunSignalHandlers|_ZN4llvm3sys17RunSignalHandlersEv|^Stack dump:"
                     r"|^\d+\.\s+Running pass '[^']+' on (?:module|function)"
                     r"|^0\.\s+Program arguments: "),
         read=_stack_dump, source="LLVM's PrettyStackTrace and signal handler output"),
)


class Groups(Protocol):
    """What a reader takes of a match: its named groups (re.Match, or an _Alias of one)."""

    def group(self, name: str, /) -> str: ...

    def groupdict(self) -> dict[str, str | None]: ...


class _Alias:
    """A match whose alternative group (`name2`) stands in for `name` when `name` is empty,
    so one reader serves both spellings of a message."""

    def __init__(self, match: re.Match[str], **alias: str) -> None:
        self._match = match
        self._alias = alias

    def group(self, name: str) -> str:  # noqa: D102 - re.Match's own
        value = self._match.groupdict().get(name)
        if value is None and name in self._alias:
            value = self._match.groupdict().get(self._alias[name])
        return value or ""

    def groupdict(self) -> dict[str, str | None]:
        found = dict(self._match.groupdict())
        for name, other in self._alias.items():
            if not found.get(name):
                found[name] = found.get(other)
        return found
