"""The six variant losses left (issue 40, devwp9): rules that knew only /opt/rocm (or only "/")
read any ROCm root, a Windows path with either separator and the space of C:\\Program Files,
and keep the declines that guard their look-alikes. tests/integration/test_failure_variants.py
moves whole corpus logs; these are the rules' own lines."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

WIN = "C:\\Program Files\\AMD\\ROCm\\6.2"
VENV = "/home/u/venv/lib/python3.12/site-packages/_rocm_sdk_devel"
SPACK = "/opt/spack/opt/spack/linux-zen3/hip-6.4.3-2fkq5sn7bqh3xyhd6uvmfm7lmk5v"

# ninja's words for a library a build links by full path (corpus: aotriton-missing-static-lib)
_NINJA = ("ninja: error: '{path}', needed by 'lib/libtorch_hip.so', missing and no known rule "
          "to make it")
# perl's words when hipconfig cannot run its clang (corpus: ...-rocmbuild1332)
_HIPCONFIG = "Can't exec \"{clang}\": No such file or directory at {script} line 141."
# clang's include chain into ROCm's own HIP header (corpus: vllm-hip-bf16-...-vllm1313)
_HIP_HEADER = ("In file included from csrc/attention/attention_kernels.hip:23:\n"
               "{root}{sep}include{sep}hip{sep}hip_bf16.h:30:10: fatal error: "
               "'hip/amd_detail/amd_hip_bf16.h' file not found")
# clang's resource header of ROCm's LLVM (corpus: ...-clang-hip-math-uint64-therock950)
_WRAPPER = ("{root}\\lib\\llvm\\lib\\clang\\20\\include\\__clang_hip_math.h:115:1: error: "
            "unknown type name 'uint64_t'")
# CMake's block (cmake 3.25.1 here, make/cmake_compiler_path.sh); a Windows CMake takes C:/...
_CMAKE = ("CMake Error at CMakeLists.txt:2 (project):\n  The CMAKE_CXX_COMPILER:\n\n"
          "    {path}\n\n  is not a full path to an existing compiler tool.\n")
# amd-smi's CLI importing a venv's amdsmi (corpus: amdsmi-pip-version-mismatch-...-vllm28680)
_AMDSMI = ("Traceback (most recent call last):\n"
           "  File \"/usr/bin/amd-smi\", line 44, in <module>\n"
           "  File \"{cli}amdsmi_commands.py\", line 33, in <module>\n"
           "    from amdsmi import amdsmi_interface\n"
           "  File \"{site}/amdsmi/__init__.py\", line 26, in <module>\n")
_SITE = "/mnt/x/test-venv/lib/python3.12/site-packages"


@pytest.mark.parametrize(("text", "step", "klass", "subject", "rule", "words"), [
    # AOTriton's static library missing under a pip SDK or spack prefix: aotriton.py's reading
    (_NINJA.format(path=f"{VENV}/aotriton/lib/libaotriton_v2.a"), "build", "aotriton",
     "aotriton", "aotriton-error", ("AOTRITON_INSTALLED_PREFIX",)),
    (_NINJA.format(path=f"{SPACK}/aotriton/lib/libaotriton_v2.a"), "build", "aotriton",
     "aotriton", "aotriton-error", ("AOTriton",)),
    # hipconfig of a root (any) runs its own <root>/llvm/bin/clang++: the LLVM part is missing
    (_HIPCONFIG.format(clang=f"{VENV}/llvm/bin/clang++", script=f"{VENV}/hip/bin/hipconfig"),
     "compilers", "rocm-install", "clang++", "hipcc-no-clang", (f"{VENV}/llvm/bin/clang++",)),
    (_HIPCONFIG.format(clang="/usr/llvm/bin/clang++", script="/usr/bin/hipconfig"),
     "compilers", "rocm-install", "clang++", "hipcc-no-clang", ("rocm-llvm",)),
    # ROCm's own hip_bf16.h including a header its install lacks, at any root and separator
    (_HIP_HEADER.format(root=VENV, sep="/"), "build", "rocm-install", VENV, "missing-header",
     ("partial or older",)),
    (_HIP_HEADER.format(root="/usr", sep="/"), "build", "rocm-install", "/usr",
     "missing-header", ("hip/hip_bf16.h",)),
    (_HIP_HEADER.format(root=WIN, sep="\\"), "build", "rocm-install", WIN, "missing-header",
     ("partial or older",)),
    # clang's own resource header with backslashes: not a missing <cstdint> in the sources
    (_WRAPPER.format(root=WIN), "build", "rocm-install", WIN, "clang-resource-header-types",
     ()),
    # CMake on Windows: the compiler path has a space, the block's line delimits it
    (_CMAKE.format(path="C:/Program Files/AMD/ROCm/6.2/bin/hipcc.exe"), "configure",
     "rocm-install", "hipcc.exe", "cmake-compiler-path",
     ("C:/Program Files/AMD/ROCm/6.2/bin/hipcc.exe",)),
    (_CMAKE.format(path="/home/u/my tools/g++-13"), "configure", "host-compiler", "gcc",
     "cmake-compiler-path", ("/home/u/my tools/g++-13",)),
    # amd-smi's CLI under a pip SDK, a versioned nix root, the Windows HIP SDK
    (_AMDSMI.format(cli=f"{VENV}/libexec/amdsmi_cli/", site=_SITE), "verify",
     "python-packaging", "amdsmi", "amdsmi-cli-venv-package", (_SITE,)),
    (_AMDSMI.format(cli="/nix/store/9x2c-rocm-7.1.1/libexec/amdsmi_cli/", site=_SITE),
     "verify", "python-packaging", "amdsmi", "amdsmi-cli-venv-package",
     ("ROCm 7.1.1", "amdsmi==7.1.1")),
    (_AMDSMI.format(cli=f"{WIN}\\libexec\\amdsmi_cli\\", site=_SITE), "verify",
     "python-packaging", "amdsmi", "amdsmi-cli-venv-package", ("ROCm 6.2", WIN)),
])
def test_a_moved_root_keeps_the_reading(text: str, step: str, klass: str, subject: str,
                                        rule: str, words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words, step=step)


@pytest.mark.parametrize(("text", "step", "klass", "subject", "rule"), [
    # the build's own library, wherever: still a file the build recorded and lost
    (_NINJA.format(path="/usr/lib/libfoo.so.3"), "build", "link", "libfoo",
     "library-file-missing"),
    # Gentoo's hipcc (/usr/lib/hip) looking in /usr/llvm: its environment, not a second root
    # (justxi/rocm#131, corpus)
    (_HIPCONFIG.format(clang="/usr/llvm/bin/clang", script="/usr/lib/hip/bin/hipcc"),
     "compilers", "rocm-install", "hipcc", "hipcc-no-clang"),
    # the fixed /opt/rocm fallback of hipvars.pm: the environment, not a missing LLVM
    (_HIPCONFIG.format(clang="/opt/rocm/llvm/bin/clang++", script="/opt/rocm/bin/hipconfig"),
     "compilers", "rocm-install", "hipcc", "hipcc-no-clang"),
    # a project's own source (no include/hip/ folder) missing HIP's header: the include path
    ("/home/u/proj/src/kern.h:3:10: fatal error: 'hip/hip_runtime.h' file not found",
     "build", "rocm-install", "ROCM_HOME", "missing-header"),
    # a user's source on Windows missing <cstdint>: still the host compiler's reading
    ("C:\\src\\app\\main.cpp:3:1: error: unknown type name 'uint64_t'", "build",
     "host-compiler", "libstdc++", "cstdint-type-unknown"),
])
def test_the_look_alikes_keep_their_own_reading(text: str, step: str, klass: str,
                                                subject: str, rule: str) -> None:
    found = explain_text(text, step=step)
    assert (found.klass, found.subject, found.rule) == (klass, subject, rule)


@pytest.mark.parametrize(("text", "step"), [
    # a project's own include/hip/ header missing a header no owner knows: no ROCm to blame
    ("/home/u/proj/include/hip/foo.h:3:10: fatal error: 'mylib/x.h' file not found", "build"),
    # CMake's block with no full path on the line (not CMake's words for a missing tool)
    (_CMAKE.format(path="ccache g++"), "configure"),
    # a system Python's amdsmi, where ROCm's installer puts its own
    (_AMDSMI.format(cli=f"{VENV}/libexec/amdsmi_cli/",
                    site="/usr/local/lib/python3.12/site-packages"), "verify"),
    # the site-packages that holds TheRock's SDK itself: its own amdsmi, not another release
    (_AMDSMI.format(cli=f"{VENV}/libexec/amdsmi_cli/",
                    site="/home/u/venv/lib/python3.12/site-packages"), "verify"),
    # the root's own amdsmi (inside the ROCm root)
    (_AMDSMI.format(cli=f"{WIN}\\libexec\\amdsmi_cli\\", site=f"{WIN}\\share\\site-packages"),
     "verify"),
])
def test_look_alikes_claim_nothing(text: str, step: str) -> None:
    assert explain_text(text, step=step).klass is None
