"""Building ggml's HIP backend (llama.cpp, whisper.cpp, stable-diffusion.cpp, koboldcpp,
ollama): ggml's own ROCm version check, a ggml header that names a HIP header newer than the
ROCm found, CMake's HIP language refusing hipcc or taking CUDA's nvcc, and hipcc linking for
the nvidia platform.

Owns: the rules that read those stops, each from the program that prints it (ggml's CMake,
CMake's HIP compiler detection, hipcc). Must not: hold a CMake package not found
(cmake_package.py, cmake_find.py), a header missing from every ROCm (compiler_headers.py) or
a plain missing library at link time (link.py).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

GGML_HIP_CMAKE = ("ggml-org/ggml@d99724f2b141fed9e1a9f402213506c081433465:"
                  "src/ggml-hip/CMakeLists.txt")
CMAKE_HIP_DETECT = ("Kitware/CMake@03676b051d5a1302c8b17bb6b3325ee38acab914:"
                    "Modules/CMakeDetermineHIPCompiler.cmake")
HIPCC_PL = "ROCm/HIP@d4762f69efd0d35f2ccfa4ecf14bcbf898bf1fc4"

# HIP headers that ggml includes and the first ROCm release whose HIP has them (ROCm/HIP's
# include/hip/hip_bf16.h: added by 954132ff1cfa23fb713a7ebf9c1cc6996aab281a, first tagged
# rocm-5.6.0). Only headers checked this way are listed.
_HIP_HEADER_SINCE: dict[str, str] = {"hip/hip_bf16.h": "5.6"}

_HIPCC_COMMAND = re.compile(r"(?:^|[\s/:&])hipcc(?:\.pl|\.bat)?\s")


def _rocm_too_old(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block != "error":
        return None  # the words quoted (a grep of the CMakeLists, a forum post) stop nothing
    need = match.group("need")
    return Reading(
        subject="hip",
        cause=f"ggml's HIP backend stopped at its own version check: the HIP package CMake "
              f"found (find_package(hip), its hip_VERSION) is older than {need}, the oldest "
              "ROCm this ggml builds with",
        fix=f"install ROCm {need} or newer and configure from a clean build folder with "
            "ROCM_PATH (and -DCMAKE_PREFIX_PATH) set to it; where an older ROCm is also "
            "installed (a distro's under /usr), hip_DIR in CMakeCache.txt shows which one "
            "CMake took; or build an older ggml / llama.cpp release whose check this ROCm "
            "passes")


def _hip_header_newer(match: re.Match[str], view: LineView) -> Reading | None:
    header = match.group("header")
    since = _HIP_HEADER_SINCE[header]
    name = header.removeprefix("hip/")
    return Reading(
        subject=name, klass="rocm-install",
        cause=f"ggml's {match.group('file')} found HIP's other headers (it includes "
              f"hip/hip_runtime.h first) but not {header}, which HIP has had since ROCm "
              f"{since}: the HIP headers this compile uses are of an older ROCm than this ggml "
              "needs",
        fix="build with a newer ROCm (6.1 or newer for today's ggml): set ROCM_PATH to it "
            "and configure again from a clean build folder, so hipcc and CMake take its "
            "headers, not an older ROCm's (a distro's under /usr); or build an older ggml / "
            "llama.cpp release made for this ROCm")


def _hipcc_wrapper(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block != "error":
        return None
    what = "HIPCXX" if match.group("what").startswith("The HIPCXX") else "CMAKE_HIP_COMPILER"
    return Reading(
        subject="cmake",
        cause=f"{what} names the hipcc wrapper, and CMake's HIP language refuses it: its HIP "
              "compiler must be a clang++ (ROCm's), which it drives itself",
        fix=f"set {what} to ROCm's clang++ (-DCMAKE_HIP_COMPILER=/opt/rocm/llvm/bin/clang++, "
            "or the path `hipconfig --hipclangpath` prints) or leave it unset so CMake finds "
            "it, keep CC/CXX as the host compilers, then configure again from a clean build "
            "folder")


def _hip_compiler_nvidia(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="HIP_PLATFORM",
        cause="CMake took the nvidia HIP platform and tested CUDA's nvcc as the HIP compiler, "
              "which failed: CMAKE_HIP_PLATFORM was nvidia, given so or guessed from "
              "`hipconfig --platform`, which says nvidia when HIP_PLATFORM is unset and it "
              "finds nvcc",
        fix="configure again from a clean build folder with -DCMAKE_HIP_PLATFORM=amd (and "
            "HIP_PLATFORM=amd exported, so hipconfig agrees), so ROCm's clang++ is the HIP "
            "compiler")


def _hipcc_links_cuda(match: re.Match[str], view: LineView) -> Reading | None:
    if not any(_HIPCC_COMMAND.search(line) for line in view.previous):
        return None  # a CUDA program's own link: libcuda may really be missing
    return Reading(
        subject="HIP_PLATFORM",
        cause="hipcc linked with -lcuda, which it adds only on the nvidia platform: it ran "
              "CUDA's nvcc (HIP_PLATFORM=nvidia, or unset where hipcc found nvcc); a ROCm "
              "build needs no libcuda",
        fix="export HIP_PLATFORM=amd (`hipconfig --platform` must print amd) in the shell "
            "that configures, then configure again from a clean build folder; do not install "
            "libcuda for it")


RULES: tuple[Rule, ...] = (
    Rule(id="ggml-hip-rocm-too-old", klass="rocm-install",
         triggers=("At least ROCM/HIP V",),
         pattern=rx(r"^At least ROCM/HIP V(?P<need>\d+(?:\.\d+)*) is required$"),
         read=_rocm_too_old, steps=("configure",),
         source=f"{GGML_HIP_CMAKE} (hip_VERSION VERSION_LESS 6.1; 5.5 before "
         "ggml-org/ggml@76d6ba8b5aa4aef456b5dd4b79bbf5d27654ee7a)"),
    Rule(id="ggml-hip-header-newer-than-rocm", klass="rocm-install",
         triggers=("hip/hip_bf16.h",),
         pattern=rx(r"(?P<file>\S*vendors/hip\.h):\d+:\d+: fatal error: '?(?P<header>"
                    r"hip/hip_bf16\.h)'?:? (?:file not found|No such file or directory)"),
         read=_hip_header_newer,
         source="ggml-org/ggml@d99724f2b141fed9e1a9f402213506c081433465:src/ggml-cuda/vendors/"
         "hip.h (hip_runtime.h, hip_fp16.h, then hip_bf16.h); ROCm/HIP@954132ff1cfa23fb713a7e"
         "bf9c1cc6996aab281a:include/hip/hip_bf16.h (first in rocm-5.6.0)"),
    Rule(id="cmake-hip-compiler-hipcc", klass="cmake",
         triggers=("the hipcc wrapper",),
         pattern=rx(r"^(?P<what>CMAKE_HIP_COMPILER is set to|The HIPCXX environment variable "
                    r"is set to) the hipcc wrapper:?$"),
         read=_hipcc_wrapper, steps=("configure",), source=CMAKE_HIP_DETECT),
    Rule(id="cmake-hip-compiler-nvidia", klass="rocm-install", tier=0,
         triggers=("The HIP compiler identification is NVIDIA",),
         pattern=rx(r"The HIP compiler identification is NVIDIA\b"),
         requires=rx(r"Check for working HIP compiler: \S*nvcc\S* - broken"),
         read=_hip_compiler_nvidia, steps=("configure",),
         source=f"{CMAKE_HIP_DETECT} (CMAKE_HIP_PLATFORM from `hipconfig --platform`); "
         f"{HIPCC_PL}:bin/hipvars.pm (nvidia when HIP_PLATFORM is unset and nvcc is found)"),
    Rule(id="hipcc-links-cuda", klass="rocm-install",
         triggers=("cannot find -lcuda",),
         pattern=rx(r"\bld(?:\.\w+)?: (?:error: )?cannot find -lcuda\b"),
         read=_hipcc_links_cuda,
         source=f"{HIPCC_PL}:bin/hipcc.pl (nvidia platform: HIPLDFLAGS '-lcuda -lcudart'); "
         f"{HIPCC_PL}:bin/hipvars.pm"),
)
