"""Build-time families read from the programs' own wordings (issue 40, devbt): each line is
what the program prints (CMake, GCC, clang, GNU ld, gold, lld, bash, glibc's strerror in the
UI language), with the value the reading must take out of it, and the look-alikes beside them
that must claim nothing."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

_REFUSED = """CMake Warning at cmake/public/LoadHIP.cmake:36 (find_package):
  Could not find a configuration file for package "HIP" that is compatible
  with requested version "1.0".

  The following configuration files were considered but not accepted:

    /usr/lib64/cmake/hip/hip-config.cmake, version: 6.0.0
"""


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words"), [
    # CMake 4's removed compatibility, re-flowed so the space before "CMake" is lost
    ("CMake Error at CMakeLists.txt:10 (cmake_minimum_required):\n"
     "Compatibility with CMake < 3.5 has been removed fromCMake.",
     "cmake", "cmake", "cmake-4-policy", ("CMAKE_POLICY_VERSION_MINIMUM",)),
    # GCC's bug-report banner with the ICE line cut above it
    ("0x7173d1 c_parse_final_cleanups()\n        ???:0\n"
     "Please submit a full bug report, with preprocessed source (by using -freport-bug).",
     "compiler-crash", "gcc", "compiler-crash", ("gcc",)),
    # a CUDA name left in a hipified header of PyTorch's c10/hip folder
    ("../c10/hip/HIPGraphsC10Utils.h:85:7: error: use of undeclared identifier "
     "'cudaStreamIsCapturing'", "hipify", "HIPGraphsC10Utils.h", "hipified-unknown-type",
     ("cudaStreamIsCapturing", "hipify")),
    # find_package's refused config: the version found and the one asked, from the list
    (_REFUSED, "missing-component", "hip", "cmake-config-refused",
     ("6.0.0", "1.0", "/usr/lib64/cmake/hip/hip-config.cmake")),
    # LoadHIP's HIP lookup finding no config at all (a warning: the configure goes on)
    ("CMake Warning at cmake/public/LoadHIP.cmake:2 (find_package):\n"
     "  By not providing \"FindHIP.cmake\" in CMAKE_MODULE_PATH this project has\n"
     "  asked CMake to find a package configuration file provided by \"HIP\", but\n"
     "  CMake did not find one.", "missing-component", "hip", "cmake-config-file", ("HIP",)),
    # an empty ROCM_HOME: bash in Russian, dash in English
    ("bash: строка 1: bin/hipcc: Нет такого файла или каталога", "rocm-install", "hipcc",
     "hipcc-relative-rocm-home", ("ROCM_HOME",)),
    ("/bin/sh: 1: bin/hipcc: not found", "rocm-install", "hipcc", "hipcc-relative-rocm-home",
     ("ROCM_HOME",)),
    # a -std the compiler does not know: GCC (UTF-8 quotes, and the pre-GCC 8 spelling), clang
    ("g++-11: error: unrecognized command-line option \u2018-std=c++26\u2019; did you mean "
     "\u2018-std=c++20\u2019?", "host-compiler", "gcc", "cxx-standard-unknown",
     ("-std=c++26", "g++-11")),
    ("g++: error: unrecognized command line option '-std=c++17'", "host-compiler", "gcc",
     "cxx-standard-unknown", ("-std=c++17",)),
    ("error: invalid value 'c++20' in '-std=c++20'", "host-compiler", "clang",
     "cxx-standard-unknown", ("-std=c++20",)),
    # HIP's own driver flags reaching GCC
    ("gcc-11: error: unrecognized command-line option '--rocm-path=/opt/rocm'",
     "host-compiler", "gcc", "hip-flag-to-gcc", ("--rocm-path=/opt/rocm", "clang++")),
    ("g++-12: error: unrecognized command-line option \u2018--offload-arch=gfx90a:xnack-\u2019",
     "host-compiler", "gcc", "hip-flag-to-gcc", ("--offload-arch=gfx90a:xnack-",)),
    # CMake's compiler path that does not exist: a ROCm hipcc, a host g++
    ("CMake Error at CMakeLists.txt:2 (project):\n  The CMAKE_CXX_COMPILER:\n\n"
     "    /opt/rocm-6.2.0/bin/hipcc\n\n  is not a full path to an existing compiler tool.",
     "rocm-install", "hipcc", "cmake-compiler-path", ("/opt/rocm-6.2.0/bin/hipcc",)),
    ("CMake Error at CMakeLists.txt:2 (project):\n  The CMAKE_C_COMPILER:\n\n"
     "    /usr/bin/gcc-14\n\n  is not a full path to an existing compiler tool.",
     "host-compiler", "gcc", "cmake-compiler-path", ("/usr/bin/gcc-14",)),
    # no ninja: tier 0 over the "compiler not set" lines it causes
    ("CMake Error: CMake was unable to find a build program corresponding to \"Ninja\".  "
     "CMAKE_MAKE_PROGRAM is not set.  You probably need to select a different build tool.\n"
     "CMake Error: CMAKE_CXX_COMPILER not set, after EnableLanguage",
     "cmake", "cmake", "cmake-no-build-program", ("Ninja",)),
    # a static archive without -fPIC: GNU ld, gold, lld (the archive after the error)
    ("/usr/bin/ld: third_party/lib/libfmt.a(format.o): relocation R_X86_64_PC32 against "
     "symbol `fmt_state' can not be used when making a shared object; recompile with -fPIC",
     "link", "libfmt", "link-not-pic", ("R_X86_64_PC32", "libfmt.a")),
    ("/usr/bin/ld.gold: error: /x/libprotobuf.a(arena.o): requires dynamic R_X86_64_32 reloc "
     "against '_ZTV5Arena' which may overflow at runtime; recompile with -fPIC",
     "link", "libprotobuf", "link-not-pic", ("R_X86_64_32",)),
    ("ld.lld: error: relocation R_X86_64_PC32 cannot be used against symbol 'g'; recompile "
     "with -fPIC\n>>> defined in /x/libfmt.a(format.o)\n>>> referenced by format.c\n"
     ">>>               format.o:(fmt_format) in archive /x/libfmt.a",
     "link", "libfmt", "link-not-pic-lld", ("/x/libfmt.a",)),
    # a library input named by a full path that does not exist: GNU ld, gold, clang's driver
    ("/usr/bin/ld: cannot find /opt/rocm-6.2.0/lib/libamdhip64.so: No such file or directory",
     "link", "libamdhip64", "link-missing-library-file", ("/opt/rocm-6.2.0/lib/libamdhip64.so",)),
    ("/usr/bin/ld.gold: error: cannot open /opt/rocm/lib/librocblas.so.4: No such file or "
     "directory", "link", "librocblas", "link-missing-library-file", ("rocblas",)),
    ("clang-22: error: no such file or directory: '/opt/rocm-6.2.0/lib/libamdhip64.so'",
     "link", "libamdhip64", "link-missing-library-file", ("rocm-path",)),
    # one symbol defined twice: GNU ld, lld
    ("probe.c:(.text+0x0): multiple definition of `hip_probe'; /tmp/a.o:main.c:(.text+0x0): "
     "first defined here", "link", "hip_probe", "link-duplicate-symbol", ("one copy",)),
    ("ld.lld: error: duplicate symbol: c10::hip::getCurrentHIPStream(signed char)", "link",
     "c10::hip::getCurrentHIPStream", "link-duplicate-symbol", ("one copy",)),
    # a compiler SIGKILLed under setuptools: Python's CalledProcessError, distutils' spawn
    ("error: Command '['/usr/bin/g++', '-O3', '-c', 'csrc/flash_api.cpp']' died with "
     "<Signals.SIGKILL: 9>.", "out-of-memory", "g++", "spawn-killed", ("SIGKILL",)),
    ("error: command '/opt/rocm/bin/hipcc' failed with exit code -9", "out-of-memory",
     "hipcc", "spawn-killed", ("SIGKILL",)),
    # ENOSPC and EDQUOT in the UI language (glibc's libc.mo)
    ("/tmp/ccX.s: Fatal error: /dev/full: Auf dem Gerät ist kein Speicherplatz mehr verfügbar",
     "disk-full", "disk", "disk-full", ("df",)),
    ("cp: ошибка записи '/dev/full': На устройстве не осталось свободного места",
     "disk-full", "disk", "disk-full", ("df",)),
    ("error: 写入失败: 设备上没有空间", "disk-full", "disk", "disk-full", ("df",)),
    ("tar: x: Cannot write: Débordement du quota d'espace disque", "disk-full", "disk",
     "disk-full", ("df",)),
])
def test_build_family_reads_its_value(text: str, klass: str, subject: str, rule: str,
                                      words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words, step="build")


@pytest.mark.parametrize("text", [
    # CMake 3.31's deprecation warning: "will be removed", not "has been removed"
    ("CMake Deprecation Warning at CMakeLists.txt:1 (cmake_minimum_required):\n"
     "  Compatibility with CMake < 3.10 will be removed from a future version of\n  CMake."),
    # GCC's banner after a killed cc1plus is the memory family's, not a crash
    ("g++: internal compiler error: Killed (program cc1plus)\n"
     "Please submit a full bug report, with preprocessed source (by using -freport-bug)."),
    # a hip* name in a hip/ folder: a HIP API of another release, not hipify's leftover
    "../aten/src/ATen/hip/Blas.h:3:1: error: use of undeclared identifier 'hipblasLtMatmul'",
    # ROCm's own include/hip headers
    "/opt/rocm/include/hip/hip_runtime.h:9:1: error: use of undeclared identifier 'cudaFree'",
    # an optional package's refused config (not LoadHIP's HIP): the configure goes on
    _REFUSED.replace("LoadHIP.cmake", "Dependencies.cmake"),
    _REFUSED.replace('package "HIP"', 'package "MIOpen"'),
    # an optional package's missing config in a LoadHIP warning (not HIP)
    ("CMake Warning at cmake/public/LoadHIP.cmake:2 (find_package):\n"
     "  Could not find a package configuration file provided by \"hipsparselt\" with"),
    # the list without its header: no package to name
    "    /usr/lib64/cmake/hip/hip-config.cmake, version: 6.0.0",
    # an absolute hipcc is the missing-install rule's, a relative one under another name no one's
    "/bin/sh: 1: bin/hipconfig: not found",
    # a compile line that merely holds -std= and the words
    "note: use 'c++17' for 'ISO C++ 2017 with amendments' standard",
    # CMake's compiler block outside an error block, and a path CMake did not print
    "The CMAKE_CXX_COMPILER:\n/usr/bin/g++-13\nis not a full path to an existing compiler tool.",
    # a relocation error that is not about PIC, and lld's lines without the -fPIC error
    ">>> referenced by format.c\n>>>               format.o:(fmt_format) in archive /x/libfmt.a",
    # a startup file or a source, not a library, missing
    "/usr/bin/ld: cannot find crt1.o: No such file or directory",
    "clang++: error: no such file or directory: '/src/aten/src/ATen/hip/Blas.hip'",
    # a build driver (not a compiler) SIGKILLed, and a compiler failing with another code
    "error: Command '['cmake', '--build', '.', '-j', '32']' died with <Signals.SIGKILL: 9>.",
    "error: command '/usr/bin/g++' failed with exit code 1",
    # build tools' frames around an ordinary error
    "FAILED: torch/csrc/Module.cpp.o\nninja: build stopped: subcommand failed.\n"
    "make: *** [Makefile:2: all] Error 1",
])
def test_build_family_look_alike_claims_nothing(text: str) -> None:
    found = explain_text(text, step="build")
    if "Killed" in text:
        assert (found.klass, found.rule) == ("out-of-memory", "compiler-killed")
    else:
        assert found.klass is None, (found.klass, found.rule)
