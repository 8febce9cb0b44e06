"""Headers a compile could not find: ROCm components' headers (and CUDA's thrust/cub
where rocThrust's were meant) and the C++ standard library's.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage import owners
from rocmforge.triage.parsers.comgr_windows import WINDOWS_SOURCE, windows_runtime_header
from rocmforge.triage.parsers.composable_kernel import ck_reading
from rocmforge.triage.parsers.libstdcxx import STD_HEADERS
from rocmforge.triage.rule import NOT_SHELL_TRACE, Alias, Groups, LineView, Reading, Rule, rx

_CUDA_HEADER_TREE = re.compile(
    r"(?P<path>\S*(?:/usr/include|cuda\S*/include)/(?:thrust|cub)/\S+?):\d+")

_ROCM_OWN_HEADER = re.compile(  # any root: the path runs from the line's start to its ":N"
    r"^(?P<root>(?:[A-Za-z]:)?[\\/][^:]*?)[\\/]include[\\/](?P<includer>hip[\\/][\w.\\/-]+\.h):\d+")

# HIP headers that a ROCm release added (the release they first shipped with): missing, they
# show a ROCm older than the sources expect, not a wrong include path.
# hip/hip_fp8.h: ROCm/hipBLASLt#1221 ("hip_fp8.h doesn't exist before hip 6.2").
_HIP_HEADER_SINCE = {"hip/hip_fp8.h": "6.2"}


# CUDA toolkit headers that hipify maps to nothing (torch 2.13.0's
# torch/utils/hipify/cuda_to_hip_mappings.py, installed here, has no entry for them).
_CUDA_ONLY_HEADERS = {"mma.h": "CUDA's warp matrix (WMMA, nvcuda::wmma) tensor-core header"}
# A file hipify wrote: <name>_hip.<ext> or <name>.hip, at the start of a compiler's message.
_HIPIFIED_INCLUDER = re.compile(r"(?P<file>\S+?(?:_hip\.(?:h|hpp|cuh|cpp|cu|cc)|\.hip))"
                                r"(?::\d+)+: ")

_TORCH_INCLUDE = re.compile(r"site-packages/torch/include/|/torch/include/torch/")


# The compiled source at the head of an include chain: clang's "In file included from
# x.cu:2:" (outermost first) and GCC's "In file included from a.h:1,\n from x.cu:2:".
_INCLUDER_SOURCE = re.compile(r"^(?:In file included )?from (?P<path>\S+?\.(?:cu|hip|cpp|cc|cxx|c))"
                              r":\d+[:,]")


def _includer_advice(view: LineView) -> str:
    found = next((m for m in map(_INCLUDER_SOURCE.match, view.previous) if m), None)
    if found is None:
        return ""
    source = found.group("path").replace("\\", "/").rsplit("/", 1)[-1]
    return (f"; here the chain starts at {source}: if {source} includes the CUDA header (or a "
            "CUDA-only vendor header) directly, include instead the project's common header "
            "that picks the HIP one for a HIP build")


def _missing_header(match: Groups, view: LineView) -> Reading | None:
    header = match.group("header").replace("\\", "/")
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
                "hipify step does this for PyTorch" + _includer_advice(view))
    hipified = _HIPIFIED_INCLUDER.match(view.text)
    if header in _CUDA_ONLY_HEADERS and hipified:
        return Reading(
            subject=header, klass="hipify",
            cause=f"the hipified {hipified.group('file')} still includes {header}, "
                  f"{_CUDA_ONLY_HEADERS[header]}: hipify has no HIP counterpart for it, so "
                  "this code's CUDA path was never ported to ROCm",
            fix="leave this op or extension out of the ROCm build (the project's switch for "
                "it, e.g. DeepSpeed's DS_BUILD_<OP>=0), or use a release whose sources support "
                "ROCm for it (code written for ROCm uses rocWMMA instead)")
    if header == "ck/config.h":
        # The one CK header that is not in CK's sources: its CMake generates it from
        # include/ck/config.h.in (ROCm/composable_kernel@f945be1c7a29edd3a75c142bdc416fe2b613ec75;
        # pytorch/pytorch's third_party/composable_kernel.BUILD makes it with a genrule).
        return Reading(
            subject="composable_kernel", klass="composable-kernel",
            cause="ck/config.h is missing: Composable Kernel (composable_kernel) generates it "
                  "when its CMake "
                  "configures (from include/ck/config.h.in), so a build that uses CK's headers "
                  "straight from its sources (a submodule, a wheel) has none unless the ROCm "
                  "install's include folder ships one, and this install (a pip SDK, a "
                  "runtime-only or distribution ROCm) does not",
            fix="generate ck/config.h from the CK sources' include/ck/config.h.in (configure CK "
                "with CMake, or the project's own step that writes it) into an include folder "
                "of the build, or build against a ROCm install whose include/ck/config.h "
                "exists (its composable_kernel development package); or leave CK out of a "
                "PyTorch build (`USE_ROCM_CK_GEMM=0 USE_ROCM_CK_SDPA=0`, features ck=off)")
    if header.startswith(("ck/", "ck_tile/")):
        return ck_reading(header)
    own = _ROCM_OWN_HEADER.match(view.text)
    if own and header.startswith("hip/"):
        # ROCm's own header includes one the same install does not have: the install is
        # partial or older than what includes it expects; no include path is wrong.
        root, includer = own.group("root"), own.group("includer")
        return Reading(
            subject=root, klass="rocm-install",
            cause=f"ROCm's own header {includer} (in {root}) includes {header}, which that "
                  f"install does not have: the ROCm at {root} is partial or older than the "
                  "code that uses it expects (a header a later ROCm release added)",
            fix=f"install the ROCm release the project asks for (a newer one than {root}, or "
                "reinstall its HIP development package if files are missing) and build against "
                "it (ROCM_PATH / ROCM_HOME), together with a torch built for that ROCm")

    since = _HIP_HEADER_SINCE.get(header)
    if since:
        return Reading(
            subject="rocm", klass="rocm-install",
            cause=f"the compile did not find {header}, which HIP ships from ROCm {since} on: "
                  f"the ROCm (HIP) this build uses is older than {since}, older than the "
                  "sources expect",
            fix=f"build against ROCm {since} or newer (ROCM_PATH / CMAKE_PREFIX_PATH at that "
                "install), or build the release of the sources that matches the installed ROCm "
                "(its release branch or tag)")
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


def _std_header(match: re.Match[str], view: LineView) -> Reading | None:
    if _RUNTIME_COMPILE.search(view.text):  # a kernel compiled at run time (comgr, hiprtc)
        return Reading(subject="libstdc++", cause=f"a kernel compiled at run time (comgr) found "
                       f"no C++ standard header '{match.group('header')}': a distro or AMD "
                       "ROCm compiles against the host's libstdc++ headers (libstdc++-N-dev), "
                       "a TheRock build against amd-llvm's own, which its artifacts must ship",
                       fix="install the newest GCC's libstdc++-N-dev (libstdc++-12-dev on "
                       "Ubuntu 22.04, libstdc++-14-dev on 24.04); with TheRock artifacts, use "
                       "a build that ships amd-llvm's C++ headers")
    return Reading(subject="libstdc++", cause=f"the C++ standard header '{match.group('header')}' "
                   "was not found: clang picked the newest GCC installation it found, whose "
                   "libstdc++ headers (libstdc++-N-dev) are not installed",
                   fix="install the headers of the newest installed GCC (`sudo apt-get install "
                   "libstdc++-N-dev` for N = the newest /usr/lib/gcc/x86_64-linux-gnu/N: "
                   "libstdc++-12-dev on Ubuntu 22.04, libstdc++-14-dev on 24.04), or "
                   "choose a GCC that has them (`invoke build --gcc 12`, which passes "
                   "--gcc-install-dir; clang's --gcc-toolchain=<prefix> or a clang++.cfg next "
                   "to ROCm's clang does the same)")


# A standard-library name whose header a newer libstdc++ no longer brings in through other
# headers (GCC 13 and 15 dropped transitive <cstdint>): GCC names the header in a note,
# clang only says the type is unknown, so clang's form is read for the <cstdint> types only.
_CSTDINT_TYPE = r"u?int(?:8|16|32|64|ptr|max)_t"
_CLANG_RESOURCE_HEADER = re.compile(r"/lib/clang/\d+/include/|/__clang_\w+\.h:")
_RUNTIME_COMPILE = re.compile(r"__hip_internal::|/comgr-[\w-]+/|/input/CompileSource|hiprtc")


def _needs_header(name: str, header: str, library: str = "libstdc++") -> Reading:
    releases = "newer GCC releases' libstdc++ (13, 15)" if library == "libstdc++" else \
        "a newer LLVM libc++"
    return Reading(
        subject=library,
        cause=f"{name} is used without #include <{header}>: {releases} stopped including "
              f"<{header}> from the other standard headers, and this source relied on that",
        fix=f"build the component with the GCC it was released with (an older GCC: `invoke "
            f"build --gcc N`), or add #include <{header}> where {name} is used (a patch), or "
            f"use a release of the component that includes <{header}> itself")


# Standard names of C++11 or older (so a -std too old cannot be the cause) and the header that
# declares each (ISO C++ [algorithms], [numeric.ops], [iostream.objects], [string.streams],
# [std.exceptions], [smartptr], [func.wrap], [limits], [thread]). A newer standard library
# stopped including these headers from the others; the name alone does not say which.
_STD_NAME_HEADER = {
    **dict.fromkeys(("reverse", "sort", "stable_sort", "find", "find_if", "find_if_not",
                     "transform", "unique", "remove_if", "count_if", "all_of", "any_of",
                     "none_of", "min_element", "max_element", "minmax_element", "lower_bound",
                     "upper_bound", "binary_search", "for_each", "replace", "rotate",
                     "nth_element", "equal_range", "is_sorted", "copy_if", "partial_sort"),
                    "algorithm"),
    **dict.fromkeys(("accumulate", "iota", "inner_product", "partial_sum"), "numeric"),
    **dict.fromkeys(("cout", "cerr", "clog", "cin"), "iostream"),
    **dict.fromkeys(("stringstream", "ostringstream", "istringstream"), "sstream"),
    **dict.fromkeys(("runtime_error", "logic_error", "invalid_argument", "out_of_range"),
                    "stdexcept"),
    **dict.fromkeys(("unique_ptr", "shared_ptr", "make_shared"), "memory"),
    **dict.fromkeys(("numeric_limits",), "limits"),
    **dict.fromkeys(("mutex", "lock_guard", "unique_lock"), "mutex"),
}


# Standard names of C++17 and the header that declares each (ISO C++17 [optional.syn],
# [variant.syn], [string.view.synop], [any.synop]): clang says the same thing when the header
# is not included and when the compile's -std is older than C++17 (the header then declares
# nothing), so a reading names both.
_STD17_NAME_HEADER = {
    **dict.fromkeys(("optional", "nullopt", "nullopt_t", "make_optional"), "optional"),
    **dict.fromkeys(("variant", "visit", "holds_alternative", "monostate"), "variant"),
    **dict.fromkeys(("string_view",), "string_view"),
    **dict.fromkeys(("any", "any_cast", "make_any"), "any"),
}


def _std17_name_missing(match: Groups, view: LineView) -> Reading | None:
    name = match.group("name")
    header = _STD17_NAME_HEADER.get(name)
    if header is None:
        return None
    libcxx = "/c++/v1/" in view.text or "-stdlib=libc++" in view.text
    return Reading(
        subject="libc++" if libcxx else "libstdc++",
        cause=f"std::{name} (C++17, declared in <{header}>) is not declared where it is used: "
              f"the source does not #include <{header}> itself and relied on another header "
              "including it (headers that stopped doing so, or a changed include set), or "
              "it is compiled with a -std older than C++17",
        fix=f"add #include <{header}> to the file that uses std::{name} (a patch, or a "
            f"release of the component that has it) and compile with -std=c++17 or newer")


def _std_member_missing(match: Groups, view: LineView) -> Reading | None:
    name = match.group("name")
    header = _STD_NAME_HEADER.get(name)
    if header is None:
        return None  # a name this table does not know (or one a newer -std adds): no claim
    libcxx = "/c++/v1/" in view.text or "-stdlib=libc++" in view.text
    return _needs_header(f"std::{name}", header, "libc++" if libcxx else "libstdc++")


def _gcc_header_note(match: re.Match[str], view: LineView) -> Reading | None:
    if match.group("header").endswith(".h"):
        return None  # a C header (GCC 14's C errors on implicit declarations): not libstdc++'s
    return _needs_header(match.group("name"), match.group("header"))


def _cstdint_type(match: re.Match[str], view: LineView) -> Reading | None:
    text = view.text.replace("\\", "/")  # a Windows path reads with either separator
    if _CLANG_RESOURCE_HEADER.search(text) or _RUNTIME_COMPILE.search(text):
        return None  # clang's own HIP wrappers (rocm_install: clang-resource-header-types),
        # or a run-time hiprtc/comgr compile (ROCm 7 moved these types to __hip_internal::):
        # not a missing include in a component's source built by the host toolchain
    name = match.group("name") or match.groupdict().get("name2") or ""
    return _needs_header(name, "cstdint")


def _libstdcxx_not_linked(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="libstdc++",
        cause="the linker found no libstdc++ for the GCC installation the compiler uses: "
              "clang picks the newest GCC under /usr/lib/gcc/<triple>/N, and that GCC's "
              "libstdc++ development files (libstdc++.so) are not installed",
        fix="install the libstdc++ development package of the newest installed GCC "
            "(`apt-get install libstdc++-N-dev` or g++-N; libstdc++-12-dev on Ubuntu 22.04), "
            "or choose a GCC that has it (`invoke build --gcc N`, clang's --gcc-toolchain)")


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


RULES: tuple[Rule, ...] = (
    Rule(id="missing-header", klass="missing-component",
         triggers=("file not found", "No such file or directory", "C1083"),
         pattern=rx(NOT_SHELL_TRACE + r"(?:fatal error: '?(?P<header>[\w./+-]+\."
                     r"(?:h|hpp|cuh|inc))'?(?::)? (?:file not found|No such file or directory)"
                     r"|fatal error C1083: Cannot open include file: "
                     r"'(?P<header2>[\w./\\+-]+\.(?:h|hpp|cuh|inc))')"),
         read=lambda m, v: _missing_header(Alias(m, header="header2"), v),
         source="gcc/clang 'fatal error: … file not found'; MSVC's 'fatal error C1083: Cannot "
         "open include file: '<header>': No such file or directory' (the header read by code "
         "and quotes)"),
    Rule(id="std-header-missing", klass="host-compiler",
         triggers=("file not found",),
         pattern=rx(r"fatal error: '(?P<header>" + STD_HEADERS + r")' file not found"),
         read=lambda m, v: windows_runtime_header(m.group("header"), v.text) or _std_header(m, v),
         source="ROCm/legacy-rocm-build#4612; clang's GCC detection; Windows: " + WINDOWS_SOURCE),
    Rule(id="std-name-needs-header", klass="host-compiler",
         triggers=("is defined in header",),
         pattern=rx(r"note: [\u2018']?(?P<name>[\w:]+)[\u2019']? is defined in header "
                     r"[\u2018']?<(?P<header>[\w./]+)>[\u2019']?; (?:this is probably fixable "
                     r"by adding|did you forget to)"),
         read=_gcc_header_note, source="GCC's note for a known standard name (\"is defined "
         "in header '<cstdint>'; this is probably fixable by adding '#include <cstdint>'\", "
         "older GCC: \"did you forget to '#include <cstdint>'?\"); ROCm/amdsmi#123, "
         "ROCm/ROCR-Runtime#227, ROCm/TheRock#3517"),
    Rule(id="std-member-missing", klass="host-compiler",
         triggers=("in namespace 'std'", "is not a member of"),
         pattern=rx(r"error: (?:no member named '(?P<name>\w+)' in namespace 'std'"
                     r"|[\u2018'](?P<name2>\w+)[\u2019'] is not a member of [\u2018']std"
                     r"[\u2019'])"),
         read=lambda m, v: _std_member_missing(Alias(m, name="name2"), v),
         source="clang's err_no_member (\"no member named 'reverse' in namespace 'std'\") and "
         "GCC's \"'reverse' is not a member of 'std'\", neither with a header note for "
         "std::reverse: reproduced: make/devbt5 (clang++-22, g++-12); triton-lang/triton#3960"),
    Rule(id="std17-name-missing", klass="host-compiler",
         triggers=("in namespace 'std'",),
         pattern=rx(r"error: no (?:template|member|type) named '(?P<name>\w+)' in namespace "
                    r"'std'"),
         read=_std17_name_missing,
         source="clang's err_no_template / err_no_member for a C++17 name: clang++-22 here "
         "(\"no template named 'optional' in namespace 'std'\", \"no member named 'nullopt' "
         "in namespace 'std'\" without <optional>), make/devcc6.sh; ROCm/aiter#4853"),
    Rule(id="cstdint-type-unknown", klass="host-compiler",
         triggers=("unknown type name '", "use of undeclared identifier '", "no type named '"),
         pattern=rx(r"error: (?:unknown type name|use of undeclared identifier) "
                     r"'(?P<name>" + _CSTDINT_TYPE + r")'(?!;)"
                     r"|error: no type named '(?P<name2>" + _CSTDINT_TYPE + r")' in namespace "
                     r"'std'"),
         read=_cstdint_type,
         source="clang's unknown-type diagnostics for the <cstdint> types; ROCm/TheRock#4252, "
         "ROCm/rocm-systems#3073 (yaml-cpp/elfio under libstdc++ 15)"),
    Rule(id="cstdint-type-unknown-gcc", klass="host-compiler", tier=2,  # GCC's note is stronger
         triggers=("was not declared in this scope", "does not name a type", "not been declared"),
         pattern=rx(r"error: '(?:std::)?(?P<name>" + _CSTDINT_TYPE + r")' (?:was not declared "
                     r"in this scope|does not name a type|has not been declared)"),
         read=_cstdint_type, source="g++-12 here (tests/integration/test_triage_gcc_cstdint.py)"),
    Rule(id="libstdcxx-not-linked", klass="host-compiler",
         triggers=("-lstdc++",),
         pattern=rx(r"(?:unable to find library|cannot find) -lstdc\+\+(?![\w.])"),
         read=_libstdcxx_not_linked, source="lld's \"unable to find library -l\" and GNU ld's "
         "\"cannot find -l\" for the C++ runtime; ROCm/legacy-rocm-build#2031, #2949; "
         "llvm/llvm-project#63988"),
    Rule(id="cuda-thrust", klass="rocm-install",
         triggers=("thrust/", "cub/"),
         pattern=rx(r"(?P<path>\S*cuda\S*/include/(?:thrust|cub)/\S+?|/usr/include/(?:thrust|cub)/\S+?)"
                     r":\d+(?::\d+)?: (?:fatal )?error"),
         read=_cuda_thrust, source="rocThrust vs CUDA thrust include order"),
)
