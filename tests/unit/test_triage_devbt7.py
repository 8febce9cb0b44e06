"""Build-side families of r15's misses (issue 40, devbt7), read from the programs' own
wordings: GCC's driver given -x hip, clang's -Woption-ignored under -Werror for an option that
needs a target feature (asan and xnack+), FindHIP.cmake's 'Specify HIP_ROOT_DIR', hipconfig or
hipcc missing clang inside its own /opt/rocm install, no space while update-initramfs writes,
the driver's name in an invalid target ID, clang's HIP wrapper header not found, and crt1's
undefined main. Each line is what the program prints, with the values the reading must take
out of it, and the look-alikes beside them that must claim nothing (or not this)."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

_FINDHIP_WINDOWS = """CMake Error at D:/r/dist/rocm/cmake/FindHIP.cmake:113 (message):
  Specify HIP_ROOT_DIR
Call Stack (most recent call first):
  cmake/public/LoadHIP.cmake:118 (find_package)
"""

_FINDHIP_LINUX = """CMake Error at /opt/rocm-6.2.0/lib/cmake/hip/FindHIP.cmake:113 (message):
  Specify HIP_ROOT_DIR
"""

_HIPCONFIG_NO_LLVM = ('Can\'t exec "/opt/rocm-6.1.0/llvm/bin/clang++": No such file or '
                      "directory at /opt/rocm-6.1.0/bin/hipconfig line 141.\n")

_INITRAMFS = """update-initramfs: Generating /boot/initrd.img-6.1.0-18-amd64
zstd: error 70 : Write error : cannot write block : No space left on device
E: mkinitramfs failure zstd -q -9 -T0 70
update-initramfs: failed for /boot/initrd.img-6.1.0-18-amd64 with 1.
"""

_ASAN_WRAPPED = """clang++: error: ignoring '-fsanitize=address' option for offload arch 'gfx90a' \\
    as it is not currently supported there. \\
"""


@pytest.mark.parametrize(("text", "step", "klass", "subject", "rule", "words"), [
    ("g++-12: error: language hip not recognized\n", "build", "host-compiler", "gcc",
     "hip-language-to-gcc", ("g++-12", "-x hip", "CXX=$ROCM_PATH/llvm/bin/clang++")),
    ("  /usr/bin/c++: error: language hip not recognized\n", "build", "host-compiler", "gcc",
     "hip-language-to-gcc", ("c++ (GCC's driver)",)),
    ("clang++-22: error: ignoring '-fsanitize=address' option for offload arch 'gfx942' as it "
     "is not currently supported there. Use it with an offload arch containing 'xnack+' "
     "instead [-Werror,-Woption-ignored]\n", "build", "gpu-target", "gfx942",
     "offload-option-needs-feature", ("-fsanitize=address", "gfx942:xnack+", "-Werror")),
    (_ASAN_WRAPPED, "build", "gpu-target", "gfx90a", "offload-option-needs-feature",
     ("gfx90a:xnack+",)),
    (_FINDHIP_WINDOWS, "configure", "missing-component", "hip", "findhip-root-dir",
     ("HIP_ROOT_DIR", "hipconfig.exe", "D:/r/dist/rocm/cmake/FindHIP.cmake")),
    (_FINDHIP_LINUX, "configure", "missing-component", "hip", "findhip-root-dir",
     ("bin/hipconfig", "-DHIP_ROOT_DIR=<rocm>")),
    (_HIPCONFIG_NO_LLVM, "build", "rocm-install", "clang++", "hipcc-no-clang",
     ("/opt/rocm-6.1.0 has HIP but not its LLVM", "rocm-llvm", "hipconfig --version")),
    (_INITRAMFS, "build", "disk-full", "disk", "initramfs-no-space",
     ("/boot/initrd.img-6.1.0-18-amd64", "df -h /boot", "dpkg --configure -a")),
    ("clang-14: error: invalid target ID 'gfx1100'; format is a processor name followed by an "
     "optional colon-delimited list of features followed by an enable/disable sign (e.g., "
     "'gfx908:sramecc+:xnack-')\n", "build", "gpu-target", "gfx1100",
     "unsupported-offload-arch", ("clang-14 (the compiler that ran)", "older than the target")),
    ("MIOpen(HIP): Warning [BuildHip] <built-in>:1:10: fatal error: "
     "'__clang_hip_runtime_wrapper.h' file not found\n", "verify", "rocm-install",
     "__clang_hip_runtime_wrapper.h", "clang-wrapper-header-missing",
     ("resource dir", "rocm-llvm")),
])
def test_family_reads_its_values(text: str, step: str, klass: str, subject: str, rule: str,
                                 words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words, step=step)


@pytest.mark.parametrize(("text", "step"), [
    # the same option warning without -Werror: the compile goes on (make/devbt7.sh)
    ("clang++-22: warning: ignoring '-fsanitize=address' option for offload arch 'gfx942' as "
     "it is not currently supported there. Use it with an offload arch containing 'xnack+' "
     "instead [-Woption-ignored]\n", "build"),
    # FindHIP's message when HIP is not REQUIRED, and the line with no CMake error block
    ("HIP_ROOT_DIR not found or specified\n", "configure"),
    ("Specify HIP_ROOT_DIR\n", "configure"),
    # the force-include echoed in a command line or a source listing, not an error
    ("#include \"__clang_hip_runtime_wrapper.h\"\n", "build"),
    # -x hip on a command line that worked
    ("/opt/rocm/llvm/bin/clang++ -x hip --offload-arch=gfx1100 -c a.hip -o a.o\n", "build"),
    # `hipcc -v` with no source: crt1's _start finds no main, nothing is broken
    ("ld: /usr/lib/gcc/x86_64-pc-linux-gnu/9.2.0/../../../../lib64/crt1.o: in function "
     "`_start':\n(.text+0x20): undefined reference to `main'\n"
     "ld: link errors found, deleting executable `a.out'\n", "compilers"),
])
def test_look_alikes_claim_nothing(text: str, step: str) -> None:
    assert explain_text(text, step=step).klass is None


def test_no_space_outside_initramfs_stays_the_general_reading() -> None:
    text = "cc1plus: fatal error: error writing to /tmp/ccX.s: No space left on device\n"
    assert explain_text(text, step="build").rule == "disk-full"
