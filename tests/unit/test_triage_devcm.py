"""CMake's own failure catalog (issue 40, devcm): find_program / find_library / find_path
given REQUIRED, FindPython's NumPy and version failures (wrapped as CMake wraps them),
find_package of packages outside ROCm, add_subdirectory of a missing folder, a command no
module defines, enable_language(HIP) without a GPU, a download hash mismatch, a failed
FetchContent clone and a generator mismatch. Each text is what cmake 3.25.1 or 4.4.5 prints
(tests/failures/make/devcm.sh), with the values the reading must take out of it, and the
look-alikes beside them (warnings, status lines, echoed text) that must claim nothing."""

from __future__ import annotations

import pytest

from rocmforge.triage import explain_text

_FIND_PROGRAM = """CMake Error at CMakeLists.txt:3 (find_program):
  Could not find NINJA_EXE using the following names: ninja, ninja-build
"""

_FIND_PROGRAM_WRAPPED = """CMake Error at CMakeLists.txt:3 (find_program):
  Could not find PATCHELF_EXECUTABLE using the following names:
  patchelf
"""

_FIND_LIBRARY = """CMake Error at cmake/Dependencies.cmake:40 (find_library):
  Could not find NUMA_LIBRARY using the following names: numa
"""

_FIND_PATH = """CMake Error at CMakeLists.txt:3 (find_path):
  Could not find NUMA_INCLUDE_DIR using the following files: numa.h
"""

_NUMPY_CMAKE4 = """CMake Error at /x/cmake-4.4/Modules/FindPackageHandleStandardArgs.cmake:290 \
(message):
  Could NOT find Python (missing: Python_INCLUDE_DIRS
  Python_NumPy_INCLUDE_DIRS Interpreter Development.Module NumPy) (found
  version "3.11.2")
Call Stack (most recent call first):
"""

_PYTHON_UNSUITABLE = """CMake Error at /usr/share/cmake-3.25/Modules/\
FindPackageHandleStandardArgs.cmake:230 (message):
  Could NOT find Python3: Found unsuitable version "3.11.7", but required is
  at least "3.99" (found /tmp/work/venv/bin/python, found
  components: Interpreter)
Call Stack (most recent call first):
"""

_PYTHON_REQUIRED_VERSION = """CMake Error at /usr/share/cmake-3.25/Modules/\
FindPackageHandleStandardArgs.cmake:230 (message):
  Could NOT find Python3 (missing: Python3_EXECUTABLE Interpreter) (Required
  is at least version "3.20")

      Reason given by package:
          Interpreter: Wrong version for the interpreter "/bin/python3"

Call Stack (most recent call first):
"""

_FMT = """CMake Error at CMakeLists.txt:3 (find_package):
  By not providing "Findfmt.cmake" in CMAKE_MODULE_PATH this project has
  asked CMake to find a package configuration file provided by "fmt", but
  CMake did not find one.

  Could not find a package configuration file provided by "fmt" with any of
  the following names:
"""

_MIOPEN = _FMT.replace('"fmt"', '"miopen"').replace("Findfmt", "Findmiopen")

_ADD_SUBDIRECTORY = """CMake Error at CMakeLists.txt:3 (add_subdirectory):
  add_subdirectory given source "third_party/fmt" which is not an existing
  directory.
"""


def _unknown(command: str) -> str:
    return f'CMake Error at CMakeLists.txt:3 ({command}):\n  Unknown CMake command "{command}".\n'


_HIP_ARCH = """CMake Error at /x/share/cmake-4.4/Modules/CMakeDetermineHIPCompiler.cmake:368 \
(message):
  Failed to find a default HIP architecture.
Call Stack (most recent call first):
"""

_HASH = """CMake Error at CMakeLists.txt:4 (file):
  file DOWNLOAD HASH mismatch

    for file: [/home/user/proj/build/dep.tar.gz]
"""

_CLONE_NEW = """CMake Error at cutlass-subbuild/cutlass-populate-prefix/tmp/\
cutlass-populate-gitclone.cmake:50 (message):
  Failed to clone repository:
  'https://github.com/NVIDIA/cutlass.git'
"""

_GENERATOR = """CMake Error: Error: generator : Ninja
Does not match the generator used previously: Unix Makefiles
"""


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words"), [
    (_FIND_PROGRAM, "missing-component", "ninja", "cmake-find-required",
     ("find_program", "ninja, ninja-build", "-DNINJA_EXE=")),
    # the names wrapped onto the next line by CMake's formatter
    (_FIND_PROGRAM_WRAPPED, "missing-component", "patchelf", "cmake-find-required-wrapped",
     ("find_program", "install patchelf", "-DPATCHELF_EXECUTABLE=")),
    (_FIND_LIBRARY, "missing-component", "libnuma", "cmake-find-required",
     ("find_library", "libnuma.so", "-DNUMA_LIBRARY=")),
    (_FIND_PATH, "missing-component", "numa.h", "cmake-find-required",
     ("find_path", "numa.h", "-DNUMA_INCLUDE_DIR=")),
    (_NUMPY_CMAKE4, "missing-component", "numpy", "cmake-python-components",
     ("Python 3.11.2", "pip install numpy", "-DPython_EXECUTABLE")),
    (_PYTHON_UNSUITABLE, "missing-component", "python3", "cmake-python-components",
     ("Python 3.11.7", "3.99", "-DPython3_EXECUTABLE")),
    (_PYTHON_REQUIRED_VERSION, "missing-component", "python3", "cmake-python-components",
     ("3.20 or newer",)),
    (_FMT, "missing-component", "fmt", "cmake-config-file", ("fmt_DIR", "CMAKE_PREFIX_PATH")),
    (_ADD_SUBDIRECTORY, "cmake", "cmake", "cmake-add-subdirectory-missing",
     ("third_party/fmt", "submodule", "git submodule update --init --recursive")),
    (_unknown("rocm_install"), "cmake", "cmake", "cmake-unknown-command",
     ("rocm_install", "rocm-cmake", "apt/dnf: rocm-cmake")),
    (_unknown("protobuf_generate_cpp"), "cmake", "cmake", "cmake-unknown-command",
     ("protobuf_generate_cpp", "function(protobuf_generate_cpp")),
    (_HIP_ARCH, "gpu-target", "PYTORCH_ROCM_ARCH", "cmake-hip-no-default-architecture",
     ("rocm_agent_enumerator", "-DCMAKE_HIP_ARCHITECTURES=gfx1100")),
    (_HASH, "cmake", "cmake", "cmake-download-hash-mismatch", ("EXPECTED_HASH", "proxy")),
    (_CLONE_NEW, "cmake", "cmake", "cmake-git-clone-failed", ("FETCHCONTENT_SOURCE_DIR_",)),
    (_GENERATOR, "cmake", "cmake", "cmake-stale-cache", ("remove the build folder",)),
])
def test_family_reads_its_values(text: str, klass: str, subject: str, rule: str,
                                 words: tuple[str, ...]) -> None:
    d = explain_text(text, step="configure")
    assert (d.klass, d.subject, d.rule) == (klass, subject, rule)
    for word in words:
        assert word in d.cause + " " + d.fix, word


def test_a_package_outside_rocm_is_not_called_a_rocm_component() -> None:
    d = explain_text(_FMT, step="configure")
    assert "ROCm" not in d.cause
    # a ROCm component keeps its ROCm answer
    rocm = explain_text(_MIOPEN, step="configure")
    assert (rocm.subject, "ROCm" in rocm.cause) == ("miopen", True)


def test_unknown_cmake_own_command_stays_with_the_old_cmake_rule() -> None:
    assert explain_text(_unknown("cmake_path"), step="configure").rule == \
        "unknown-cmake-command"


@pytest.mark.parametrize("text", [
    # find_* without REQUIRED prints nothing; the same words in a warning or a status line
    _FIND_PROGRAM.replace("CMake Error", "CMake Warning"),
    "-- Could not find NINJA_EXE using the following names: ninja\n",
    # an optional FindPython: a status line, and the configure goes on
    "-- Could NOT find Python (missing: Python_NumPy_INCLUDE_DIRS NumPy) (found version "
    "\"3.11.2\")\n-- Configuring done\n",
    _NUMPY_CMAKE4.replace("CMake Error", "CMake Warning"),
    _ADD_SUBDIRECTORY.replace("CMake Error", "CMake Warning (dev)"),
    _unknown("rocm_install").replace("CMake Error", "CMake Warning"),
    # the message echoed by a script, not printed by CMake
    "-- Failed to find a default HIP architecture. Using gfx90a\n",
    "echo 'file DOWNLOAD HASH mismatch' >> notes.txt\n",
])
def test_look_alikes_claim_nothing(text: str) -> None:
    assert explain_text(text, step="configure").klass is None


_NOTFOUND_INCLUDE = """CMake Error: The following variables are used in this project, but they are \
set to NOTFOUND.
Please set them or make sure they are set and tested correctly in the CMake files:
/home/user/proj/NUMA_INCLUDE_DIR
   used as include directory in directory /home/user/proj
"""

_MISSING_SOURCE = """CMake Error at CMakeLists.txt:3 (add_library):
  Cannot find source file:

    third_party/fmt/src/format.cc

  Tried extensions .c .C .c++ .cc .cpp .cxx .cu .mpp .m .M .mm .ixx .cppm .h
"""

_DUPLICATE = """CMake Error at CMakeLists.txt:5 (add_library):
  add_library cannot create target "fmt" because another target with the same
  name already exists.  The existing target is a static library created in
"""

_HIP_LANG = """CMake Error at /x/cmake-4.4/Modules/CMakeHIPInformation.cmake:115 (find_package):
  Could not find a package configuration file provided by "hip-lang" with any
  of the following names:
"""


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words"), [
    (_NOTFOUND_INCLUDE, "missing-component", "numa", "cmake-notfound-include-dir",
     ("NUMA_INCLUDE_DIR is NOTFOUND", "-DNUMA_INCLUDE_DIR=")),
    # the ADVANCED spelling of the variable line
    (_NOTFOUND_INCLUDE.replace("/home/user/proj/NUMA_INCLUDE_DIR",
                               "ROCTX_INCLUDE_DIR (ADVANCED)"),
     "missing-component", "roctx", "cmake-notfound-include-dir", ("-DROCTX_INCLUDE_DIR=",)),
    (_MISSING_SOURCE, "cmake", "cmake", "cmake-source-file-missing",
     ("third_party/fmt/src/format.cc", "submodule that was not checked out")),
    (_MISSING_SOURCE.replace("third_party/fmt/", ""), "cmake", "cmake",
     "cmake-source-file-missing", ("src/format.cc", "renamed")),
    ('CMake Error at CMakeLists.txt:4 (add_library):\n  No SOURCES given to target: fmt\n',
     "cmake", "cmake", "cmake-no-sources", ("target fmt", "file(GLOB)")),
    (_DUPLICATE, "cmake", "cmake", "cmake-duplicate-target",
     ("add_library", "target fmt", "if(NOT TARGET fmt)")),
    ('CMake Error: The source directory "/src/pytorch/third_party/kineto" does not appear to '
     'contain CMakeLists.txt.\n', "cmake", "cmake", "cmake-source-dir-missing",
     ("/src/pytorch/third_party/kineto", "holds no CMakeLists.txt")),
    ('CMake Error: The source directory "/src/nope" does not exist.\n', "cmake", "cmake",
     "cmake-source-dir-missing", ("/src/nope, which does not exist",)),
])
def test_tree_checks_read_their_values(text: str, klass: str, subject: str, rule: str,
                                       words: tuple[str, ...]) -> None:
    d = explain_text(text, step="configure")
    assert (d.klass, d.subject, d.rule) == (klass, subject, rule)
    for word in words:
        assert word in d.cause + " " + d.fix, word


def test_hip_lang_stays_a_rocm_package() -> None:
    d = explain_text(_HIP_LANG, step="configure")
    assert (d.subject, "ROCm" in d.cause) == ("hip-lang", True)


def test_a_missing_source_wins_over_its_no_sources_symptom() -> None:
    text = _MISSING_SOURCE + ("CMake Error at CMakeLists.txt:3 (add_library):\n"
                              "  No SOURCES given to target: fmt\n")
    assert explain_text(text, step="configure").rule == "cmake-source-file-missing"


@pytest.mark.parametrize("text", [
    # a path line without CMake's header above it, and the NOTFOUND block's library variables
    # (cmake_package.py's rule) or a variable that names no include folder
    "    third_party/fmt/src/format.cc\n",
    _NOTFOUND_INCLUDE.replace("NUMA_INCLUDE_DIR", "NUMA_PATH"),
    _DUPLICATE.replace("CMake Error", "CMake Warning"),
    "-- No SOURCES given to target: fmt\n",
])
def test_tree_look_alikes_claim_nothing(text: str) -> None:
    assert explain_text(text, step="configure").klass is None


_OPENMP = """CMake Error at /usr/share/cmake-3.25/Modules/FindPackageHandleStandardArgs.cmake:230 \
(message):
  Could NOT find OpenMP_CXX (missing: OpenMP_CXX_FLAGS OpenMP_CXX_LIB_NAMES)
"""


def test_openmp_reads_the_language_and_names_the_runtime() -> None:
    d = explain_text(_OPENMP, step="configure")
    assert (d.klass, d.subject, d.rule) == ("missing-component", "openmp",
                                            "cmake-openmp-not-found")
    assert "CXX compiler" in d.cause and "libomp-22-dev" in d.fix


def test_an_optional_openmp_claims_nothing() -> None:
    # FindOpenMP without REQUIRED: a status line, then the configure goes on
    text = ("-- Could NOT find OpenMP_C (missing: OpenMP_C_FLAGS OpenMP_C_LIB_NAMES)\n"
            "-- Configuring done\n")
    assert explain_text(text, step="configure").klass is None


def _download(url: str, code: int, text: str) -> str:
    return (f"CMake Error at x-subbuild/download-x-populate.cmake:170 (message):\n"
            f"  Each download failed!\n\n    error: downloading '{url}' failed\n"
            f"          status_code: {code}\n          status_string: \"{text}\"\n")


def test_a_failed_download_reads_url_and_curl_status() -> None:
    d = explain_text(_download("http://h/json-3.11.3.tar.xz", 22,
                               "HTTP response code said error"), step="configure")
    assert (d.klass, d.rule) == ("cmake", "cmake-download-failed")
    assert "http://h/json-3.11.3.tar.xz" in d.cause and "status 22" in d.cause
    assert "404" in d.cause and "FETCHCONTENT_SOURCE_DIR_" in d.fix
    # another status: its own text, no HTTP claim
    other = explain_text(_download("https://h/x.tgz", 6, "Couldn't resolve host name"),
                         step="configure")
    assert "Couldn't resolve host name" in other.cause and "404" not in other.cause


def test_aotriton_downloads_stay_with_their_signature() -> None:
    d = explain_text(_download("https://github.com/ROCm/aotriton/releases/a.tar.gz", 7,
                               "Couldn't connect to server"), step="build")
    assert d.rule == "aotriton-download"


def test_a_status_string_alone_claims_nothing() -> None:
    text = '-- status_string: "No error"\n'
    assert explain_text(text, step="configure").klass is None


_TOOLCHAIN_4 = """CMake Error at /x/cmake-4.4/Modules/CMakeDetermineSystem.cmake:165 (message):
  Could not find toolchain file:

   "/opt/rocm/share/toolchain.cmake"
Call Stack (most recent call first):
  CMakeLists.txt:2 (project)

CMake Error: CMake was unable to find a build program corresponding to "Unix Makefiles".  \
CMAKE_MAKE_PROGRAM is not set.  You probably need to select a different build tool.
"""


def test_a_missing_toolchain_file_is_the_root_not_the_build_program() -> None:
    d = explain_text(_TOOLCHAIN_4, step="configure")
    assert (d.klass, d.rule) == ("cmake", "cmake-toolchain-file-missing")
    assert "-DCMAKE_TOOLCHAIN_FILE" in d.fix


def test_an_unknown_generator_names_it() -> None:
    d = explain_text("CMake Error: Could not create named generator Ninja Multi\n\nGenerators\n",
                     step="configure")
    assert d.rule == "cmake-generator-unknown" and '"Ninja Multi"' in d.cause


def test_cmake_too_old_does_not_assume_pytorch() -> None:
    d = explain_text("CMake 3.27 or higher is required.  You are running version 3.25.1\n",
                     step="configure")
    assert d.rule == "cmake-too-old"
    assert d.cause.startswith("the project's cmake_minimum_required") and "3.27" in d.cause


_REFUSED = """CMake Error at CMakeLists.txt:3 (find_package):
  Could not find a configuration file for package "{name}" that is compatible
  with requested version "99".

  The following configuration files were considered but not accepted:

    /usr/lib/cmake/{name}/{name}Config.cmake, version: 2.5.0
"""


def test_a_refused_config_outside_rocm_gets_no_rocm_fix() -> None:
    d = explain_text(_REFUSED.format(name="expat"), step="configure")
    assert (d.subject, d.rule) == ("expat", "cmake-config-refused")
    assert "--rocm-path" not in d.fix and "expat_DIR" in d.fix and "expat 2.5.0" in d.fix
    rocm = explain_text(_REFUSED.format(name="rocsparse"), step="configure")
    assert "--rocm-path" in rocm.fix


def _include(name: str) -> str:
    return ("CMake Error at CMakeLists.txt:3 (include):\n  include could not find requested "
            f"file:\n\n    {name}\n")


@pytest.mark.parametrize(("name", "klass", "subject", "words"), [
    ("ROCMInstallTargets", "missing-component", "rocm", ("include(ROCMInstallTargets)",
                                                         "apt/dnf: rocm-cmake")),
    ("third_party/nlohmann/cmake/utils.cmake", "cmake", "cmake",
     ("third_party/nlohmann/cmake/utils.cmake", "submodule that was not checked out")),
    ("CUDAHelpers", "cmake", "cmake", ("CUDAHelpers.cmake", "CMAKE_MODULE_PATH")),
])
def test_include_of_a_missing_file_reads_its_name(name: str, klass: str, subject: str,
                                                  words: tuple[str, ...]) -> None:
    d = explain_text(_include(name), step="configure")
    assert (d.klass, d.subject, d.rule) == (klass, subject, "cmake-include-file-missing")
    for word in words:
        assert word in d.cause + " " + d.fix, word


def test_a_package_targets_file_is_left_to_the_package_rules() -> None:
    d = explain_text(_include("/opt/rocm/lib/cmake/hip/hip-targets.cmake"), step="configure")
    assert d.rule != "cmake-include-file-missing"
