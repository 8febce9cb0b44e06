"""The dynamic loader at run time: a shared object it cannot open, an undefined symbol
(also wrapped onto the next line), Windows DLLs that fail to load, and the ROCm SDK's preload
list.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage import owners
from rocmforge.triage.demangle import demangle
from rocmforge.triage.parsers.library_file import own_namespace
from rocmforge.triage.rule import NOT_SHELL_TRACE, LineView, Reading, Rule, rx
from rocmforge.triage.symbols import symbol_name

# Libraries of a ROCm install the component table does not name (its bundled system libraries,
# runtimes, tools): never "a system library" to apt-get.
_ROCM_ISH = re.compile(r"^lib(?:rocm|hip|hsa|amd|roc|miopen|rccl|rocprofiler|roctx|roctracer)",
                       re.IGNORECASE)


_TORCH_OWN = re.compile(r"^lib(?:torch|c10|shm|caffe2_nvrtc|aoti)[\w.+-]*\.so")
_TORCH_NAMESPACES = ("at::", "c10::", "torch::", "caffe2::")


# A loader error a program reports as a warning it carries on past (torchvision's optional
# image extension, a tool's "(ignored)" plug-in): the failure, if any, is elsewhere.
# A warning alone is not enough: vLLM reports its own extension's loader error as a WARNING.
# Plug-in loaders that try every optional plug-in (libibverbs' RDMA drivers, ALSA's modules)
# report each missing one the same way: not the failure either.
# MIOpen logs an optional per-target library it could not open at its Warning level
# ("MIOpen(HIP): Warning [OpenRuntimeLibraryForDevice] …") and uses its other solvers; its
# Info, Info2 and Trace levels are not failures either. Its prefix can carry the host name and
# process/thread ids before it (MIOPEN_ENABLE_LOGGING_MPMT), the elapsed time and a date after
# (MIOPEN_ENABLE_LOGGING_ELAPSED_TIME, _DATE_TIME): ROCm/MIOpen src/logger.cpp LoggingPrefix,
# LoggingLevelToCString.
# torch's own TORCH_WARN line, "[W<date time> <tid> <file>:<line>] Warning: …" (c10's
# MessageLogger prefix; older torch "[W <file>:<line>] Warning: …"): torch goes on
# after it (nvfuser's optional library, DeepSpeed#3715); an import error that follows is
# its own line and its own finding. `ldd -r`'s CPython names (rv10.sh): resolved at import.
_WARNED_ONLY = re.compile(r"\(ignored\)|you can ignore|Failed to load image Python extension"
                          r"|couldn't load (?:driver|plugin)|^ALSA lib "
                          r"|(?:^|\s)\w+\((?:HIP|OpenCL)\)(?:\s*[\d.]+)?(?: \([^)]*\))?: "
                          r"(?:Warning|Info2?|Trace) \["
                          r"|^\[W[\d :.]*[^\]]*\] Warning: "
                          # ROCr's debug print for an optional library it goes on without
                          # (ROCm/ROCR-Runtime@2e315c274af41e9367ec403601ead08c7ff693a1:runtime/
                          # hsa-runtime/core/util/lnx/os_linux.cpp, LoadLib)
                          r"|^LoadLib\([^)]*\) failed: |^undefined symbol: _?Py\w+\t\(\S+\)$")


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
    if _STARTING_PROGRAM in view.text or (view.previous
                                          and view.previous[-1].endswith(_STARTING_PROGRAM + ":")):
        # ld.so starting an executable (not a dlopen from Python): the program's own RUNPATH
        # is the first place it looks, and a program linked without one finds a ROCm outside
        # the default folders only through LD_LIBRARY_PATH or ld.so.conf.
        return Reading(
            subject=library,
            cause=f"the program could not start: the loader found no {library}{hint} in the "
                  "program's RUNPATH, LD_LIBRARY_PATH or the ld.so.conf folders: it was linked "
                  "without an rpath to the folder that holds it (a compiler driver such as the "
                  "ROCm pip SDK's hipcc adds none), and that folder is not on the loader path, "
                  f"or {which} is not installed (or is another ROCm release)",
            fix=f"relink the program with an rpath to the folder that holds {library} "
                "(`-Wl,-rpath,<rocm>/lib` in its link flags; `readelf -d <program>` shows "
                "RUNPATH), or add that folder to LD_LIBRARY_PATH or /etc/ld.so.conf.d and run "
                "`sudo ldconfig`; check with `ldd <program>`")
    return Reading(
        subject=library,
        cause=f"the loader could not find {library}{hint}: {which} is not installed, not on the "
              "loader path, or the installed ROCm is another release than the one this binary "
              "was built against",
        fix=(f"install the ROCm release the binary was built for (it provides {library}) or "
             "rebuild against the installed one; add its lib folder to the loader path "
             "(`echo /opt/rocm/lib | sudo tee /etc/ld.so.conf.d/rocm.conf && sudo ldconfig`, or "
             "LD_LIBRARY_PATH) and check with `ldd`"))


# glibc's ld.so when it cannot start a program ("<program>: error while loading shared
# libraries: <lib>: cannot open shared object file: No such file or directory"; reproduced
# here with gcc 11 and glibc 2.35, make/devpk5.sh); a log formatter may wrap it after the colon.
_STARTING_PROGRAM = "error while loading shared libraries"


_LINKER_SAYS = re.compile(r"(?:lld-link|ld\.lld|ld64\.lld|\bld|link\.exe|LINK)\s*: (?:error|warn)")


def _undefined_symbol(match: re.Match[str], view: LineView) -> Reading | None:
    if _LINKER_SAYS.search(view.text):
        return None  # a linker's undefined symbol (parsers/link.py), not the loader's
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
    library = where.rsplit("/", 1)[-1]
    if _TORCH_OWN.match(library) and symbol.startswith(_TORCH_NAMESPACES):
        # One of torch's own libraries needs a torch symbol its sibling does not export: the
        # libraries come from two builds, or the build itself dropped the symbol (visibility,
        # a compiler bug). The line does not show which; no extension is involved.
        return None
    if "__device_stub__" in symbol:
        # The host-side launch stub of a kernel of the library itself: only that library's own
        # HIP sources define it, so its build left the kernel out (nothing else can supply it).
        kernel = symbol.split("__device_stub__", 1)[1].split("(", 1)[0]
        site = re.search(r"(?:site|dist)-packages[/\\](?P<pkg>[A-Za-z][\w.-]*)[/\\]", where)
        package = site.group("pkg") if site else "the package"
        return Reading(
            subject=symbol,
            cause=f"{where or 'a library'} launches the GPU kernel {kernel} but its own build "
                  "does not define the kernel's host stub: the package's ROCm sources declare "
                  "the kernel without compiling that instantiation, so the native library is "
                  "broken as built (no other library can supply it)",
            fix=f"install another build of {package} whose ROCm native library has the "
                f"kernel (a wheel or branch that instantiates it), or build {package} from "
                f"sources that instantiate {kernel} for ROCm")
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
    paired = own_namespace(library, symbol) or _rocm_pair(where, raw)
    if paired is not None:  # the library's own gap (library_file.py), or a ROCm pair's skew
        return paired
    row = owners.symbol_owner(symbol)
    owner = (f"ROCm's {row.name}" if row else
             "torch" if symbol.startswith(("at::", "c10::", "torch::", "caffe2::")) else "")
    cause = (f"undefined symbol: {where or 'a library'} needs {symbol}, which the loaded "
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


def _rocm_pair(where: str, symbol: str) -> Reading | None:
    """One ROCm library (librocsolver.so.0) needs a symbol of another ROCm component (a
    rocBLAS internal template): the two come from different releases or builds. The subject
    is the library the loader names, the one out of step with its dependency."""
    library = where.rsplit("/", 1)[-1]
    if not where or not _ROCM_ISH.match(library):
        return None
    row = owners.symbol_owner(symbol_name(symbol).split("<", 1)[0])
    mine = owners.library_owner(library)
    if row is None or (mine is not None and mine.name == row.name):
        return None
    dependency = row.libraries[0] if row.libraries else row.name
    return Reading(
        subject=library,
        cause=f"{where} needs {symbol_name(symbol)} from ROCm's {row.name} ({dependency}), and "
              f"the {row.name} that is loaded does not export it: {library} and {row.name} "
              "come from different ROCm releases or builds (one was updated or rebuilt "
              "without the other)",
        fix=f"install {library.split('.so')[0]} and {row.name} from one ROCm release (update "
            f"or rebuild both together); `ldd -r {where}` shows which {dependency} it loads "
            "and what stays unresolved")


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


def _static_tls(match: re.Match[str], view: LineView) -> Reading | None:
    library = (match.group("lib") or "").rsplit("/", 1)[-1]
    which = library or "a library"
    return Reading(
        subject=library or "static TLS",
        cause=f"the dynamic loader could not load {which}: it uses initial-exec thread-local "
              "storage, and the static TLS space glibc reserves was used up by the libraries "
              "loaded before it (OpenMP's libgomp is the usual one; older glibc and aarch64 "
              "reserve little)",
        fix=f"load it first: import torch (or the package that brings {which}) before the "
            "others, or start Python with LD_PRELOAD=<its full path>; with glibc 2.32 or "
            "newer, GLIBC_TUNABLES=glibc.rtld.optional_static_tls=<bytes, e.g. 2048000> "
            "reserves more")


def _exec_stack(match: re.Match[str], view: LineView) -> Reading | None:
    library = match.group("lib").rsplit("/", 1)[-1]
    return Reading(
        subject=library,
        cause=f"glibc (2.41 or newer) refuses to dlopen {library}: the library is marked as "
              "needing an executable stack (an object in it, often assembly, lacks the "
              ".note.GNU-stack note), and glibc no longer makes the stack executable for it",
        fix=f"use a release of {library}'s package linked with -Wl,-z,noexecstack, or rebuild "
            f"it so; meanwhile clear the flag on the file (`patchelf --clear-execstack "
            f"<path>/{library}` or `execstack -c`), or run this one process with "
            "GLIBC_TUNABLES=glibc.rtld.execstack=2")


def _rocm_symbol_version(match: re.Match[str], view: LineView) -> Reading | None:
    library, version, by = match.group("lib"), match.group("ver"), match.group("by")
    if not _ROCM_ISH.match(library):
        return None  # libstdc++, glibc and others: libstdcxx.py reads those
    needer = by.rsplit("/", 1)[-1]
    release = re.fullmatch(r"hip_(\d+\.\d+)", version)
    newer = (f"HIP {release.group(1)} or newer (ROCm {release.group(1)}+)" if release else
             f"a {library} that has the symbol version {version}")
    return Reading(
        subject=library,
        cause=f"{needer} was built against {newer}: it needs symbols of version {version}, "
              f"and the {library} the loader found is older and lacks them (the installed ROCm "
              "is older than the one the binary was built for, or an older copy comes first "
              "on the loader path)",
        fix=f"install the ROCm release {needer} was built for (or rebuild it against the "
            f"installed one); `ldd {by}` shows which {library} is loaded, and "
            "LD_LIBRARY_PATH or /etc/ld.so.conf.d must not put an older ROCm first")


RULES: tuple[Rule, ...] = (
    Rule(id="rocm-symbol-version", klass="import",
         triggers=("' not found (required by",),
         pattern=rx(r"(?:^|[\s/])(?P<lib>lib[\w+-]+\.so[\w.]*): version [`'](?P<ver>[\w.]+)' "
                     r"not found \(required by (?P<by>[^)\s]+)\)"),
         read=_rocm_symbol_version, source="glibc's version check (\"version `%s' not found "
         "(required by %s)\"); ROCm/clr@d3901a76cab583249cdfc608f446729d7d8854b0:hipamd/src/"
         "hip_hcc.map.in (libamdhip64's symbol versions hip_4.2 ... hip_7.2, one per release "
         "that added functions); reproduced with ROCm 5.2's libamdhip64.so.5"),
    Rule(id="cannot-open-so", klass="import",
         triggers=("cannot open shared object file",),
         pattern=rx(NOT_SHELL_TRACE + r"(?P<lib>[\w.+-]+\.so[\w.]*): cannot open shared "
                    r"object file"),
         read=_cannot_open_so, source="glibc dlerror()"),
    Rule(id="dlopen-static-tls", klass="import",
         triggers=("static TLS",),
         pattern=rx(r"(?:(?P<lib>[\w./+-]+\.so[\w.]*): )?cannot allocate memory in static TLS "
                     r"block|dlopen: cannot load any more object with static TLS"),
         read=_static_tls, source="glibc's dynamic loader (_dl_allocate_static_tls: \"cannot "
         "allocate memory in static TLS block\"; older glibc's \"cannot load any more object "
         "with static TLS\"); NVIDIA-AI-IOT/trt_pose#111, NVIDIA-AI-IOT/jetbot#507, "
         "pytorch/pytorch#2575, #2083"),
    Rule(id="dlopen-exec-stack", klass="import",
         triggers=("cannot enable executable stack",),
         pattern=rx(r"(?P<lib>[\w./+-]+\.so[\w.]*): cannot enable executable stack as shared "
                     r"object requires"),
         read=_exec_stack, source="glibc 2.41 NEWS (dlopen no longer makes the stack "
         "executable; lists.gnu.org info-gnu 2025-01 msg00014, bminor/glibc commit "
         "0ca8785a28515291d4ef074b5b6cfb27434c1d2b); lamikr/rocm_sdk_builder#241 (librccl), "
         "OpenNMT/CTranslate2#1849"),
    Rule(id="undefined-symbol", klass="import",
         triggers=("undefined symbol: ",),
         pattern=rx(r"(?:(?P<where>[\w./+-]+\.so[\w.]*): )?undefined symbol: (?P<sym>[\w$.@]+)"),
         read=_undefined_symbol, source="glibc dlerror()"),
    Rule(id="loader-symbol-wrapped", klass="import",
         triggers=("_Z",),
         pattern=rx(r"^(?P<sym>_Z\w+)$"),
         read=_wrapped_symbol, source="glibc dlerror() wrapped by a log formatter; "
         "ROCm/rocm-systems#8514"),
    Rule(id="bitsandbytes-library", klass="import",
         triggers=("bitsandbytes", "binary not found"),
         pattern=rx(r"(?:Could not find the bitsandbytes \w+ binary at|binary not found at)\W*"
                     r"(?:PosixPath\(')?\S*?(?P<lib>libbitsandbytes_\w+\.(?:so|dll|dylib))"),
         read=_bnb_binary, source="bitsandbytes-foundation/bitsandbytes@95f9af309d4d5793847169c"
         "39288dcd3fcbdf564:bitsandbytes/cextension.py (the library named by torch's ROCm "
         "version, BNB_ROCM_VERSION); bitsandbytes-foundation/bitsandbytes#2014"),
    Rule(id="rocm-sdk-preload", klass="import",
         triggers=("KeyError",),
         pattern=rx(r"KeyError: '(?P<name>(?!gfx)[a-z][\w-]*)'"),
         requires=rx(r"rocm_sdk[/\\]__init__\.py\S*, line \d+, in (?:find_libraries|"
                      r"preload_libraries)"),
         read=_sdk_preload_key, source="ROCm/TheRock@89553ce3746eda74ade42557470d25e37c91b6f0:"
         "build_tools/packaging/python/"
         "templates/rocm/src/rocm_sdk (preload_libraries, `rocm-sdk test`); ROCm/TheRock#2345"),
)
