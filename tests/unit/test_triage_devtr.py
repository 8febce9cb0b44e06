"""TheRock's own failure texts read by shape (issue 40, devtr): its super-project CMake (a host
program or a bundled-sysdeps tool missing, a sub-project's undeclared dependency, sources not
fetched or an external source folder missing, an in-source configure), hipcc's platform, and
its pip SDK's rocm_sdk (a library file or the devel tarball missing,
ROCM_SDK_PRELOAD_LIBRARIES). Each text is the program's output as the d9 cases hold it, with
other values and other wrap points; the look-alikes claim nothing."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text


def _cmake_error(where: str, *message: str, stack: str = "CMakeLists.txt:8 (f)") -> str:
    """A CMake error block as CMake prints it: the header, the indented message lines."""
    body = "\n".join(f"  {line}" for line in message)
    return (f"CMake Error at {where} (message):\n{body}\nCall Stack (most recent call first):\n"
            f"  {stack}\n\n\n-- Configuring incomplete, errors occurred!")


_PRELOAD = (
    "Traceback (most recent call last):\n"
    "  File \"/venv/lib/python3.12/site-packages/rocm_sdk/__init__.py\", line 39, in "
    "find_libraries\n"
    "    raise ModuleNotFoundError(f\"Unknown rocm library '{{shortname}}'\")\n"
    "ModuleNotFoundError: Unknown rocm library 'hipdnn'\n\n"
    "The above exception was the direct cause of the following exception:\n\n"
    "Traceback (most recent call last):\n"
    "  File \"<string>\", line 1, in <module>\n"
    "RuntimeError: Could not preload libraries from environment variable "
    "ROCM_SDK_PRELOAD_LIBRARIES='{value}'. Check this environment variable and unset it if "
    "not correct/needed.")


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words"), [
    # a sub-project's host program, wrapped after any word
    (_cmake_error("/src/TheRock/cmake/therock_subproject.cmake:629",
                  "Building sub-project libhipcxx requires program 'lit' on the system path",
                  "but it is not found"), "missing-component", "lit",
     "therock-host-program-missing", ("libhipcxx", "pip install lit", "command -v lit")),
    (_cmake_error("/src/TheRock/cmake/therock_subproject.cmake:629",
                  "Building sub-project rocprofiler-systems requires program",
                  "'texinfo-makeinfo' on the system path but it is not found"),
     "missing-component", "texinfo-makeinfo", "therock-host-program-missing",
     ("rocprofiler-systems",)),
    # find_package of a package the super-project provides, undeclared; any package name
    (_cmake_error("/src/TheRock/cmake/therock_subproject_dep_provider.cmake:68",
                  "Project contains find_package(rocprim) for a package availabe in the",
                  "super-project but not declared: Add a BUILD_DEPS or RUNTIME_DEPS",
                  "appropriately", stack="CMakeLists.txt:3 (find_package)"),
     "missing-component", "rocprim", "therock-subproject-dep-undeclared",
     ("find_package(rocprim)", "BUILD_DEPS", "fetch_sources.py")),
    (_cmake_error("/src/TheRock/cmake/therock_subproject_dep_provider.cmake:68",
                  "Project contains find_package(LLVM) for a package availabe in the "
                  "super-project but not declared: Add a BUILD_DEPS or RUNTIME_DEPS "
                  "appropriately"), "missing-component", "llvm",
     "therock-subproject-dep-undeclared", ("find_package(LLVM)",)),
    # the HIP VERSION file of sources never fetched, path on the header's line or the next
    (_cmake_error("CMakeLists.txt:197", "Could not find HIP VERSION file:",
                  "/home/u/TheRock/rocm-systems/projects/hip/VERSION"), "cmake", "cmake",
     "therock-sources-not-fetched",
     ("/home/u/TheRock/rocm-systems/projects/hip/VERSION", "fetch_sources.py")),
    (_cmake_error("CMakeLists.txt:197", "Could not find HIP VERSION file: /r/hip/VERSION"),
     "cmake", "cmake", "therock-sources-not-fetched", ("/r/hip/VERSION",)),
    # bundled sysdeps' tools: patchelf (with rocGDB in the text), meson named only in the hint
    (_cmake_error("CMakeLists.txt:364", "Building with THEROCK_BUNDLE_SYSDEPS=ON or "
                  "THEROCK_ENABLE_ROCGDB=ON on", "Linux requires `patchelf`"),
     "missing-component", "patchelf", "therock-sysdeps-tool-missing",
     ("rocGDB", "apt install patchelf")),
    (_cmake_error("CMakeLists.txt:413", "Building with THEROCK_BUNDLE_SYSDEPS=ON on Linux "
                  "requires (easiest: `pip", "install meson`)"), "missing-component", "meson",
     "therock-sysdeps-tool-missing", ("pip install meson",)),
    (_cmake_error("CMakeLists.txt:454", "Building with THEROCK_BUNDLE_SYSDEPS=ON on macOS "
                  "requires `meson` (easiest: `pip install meson`)"), "missing-component",
     "meson", "therock-sysdeps-tool-missing", ("macOS",)),
    # a project that refuses an in-source configure (TheRock's wording, LLVM's shorter one)
    (_cmake_error("CMakeLists.txt:5", "In-source builds are not allowed.  Please create a "
                  "separate build", "directory."), "cmake", "cmake", "in-source-build-refused",
     ("-B", "CMakeCache.txt")),
    (_cmake_error("CMakeLists.txt:60", "In-source builds are not allowed."), "cmake", "cmake",
     "in-source-build-refused", ()),
    # an external source folder: not set, or set to a folder that is not there
    (_cmake_error("cmake/therock_external_source.cmake:20", "THEROCK_AMD_DBGAPI_SOURCE_DIR "
                  "points to '/src/rocdbgapi' which does", "not exist!"), "cmake", "cmake",
     "therock-external-source-missing", ("'/src/rocdbgapi'", "THEROCK_USE_EXTERNAL_AMD_DBGAPI")),
    (_cmake_error("cmake/therock_external_source.cmake:14", "If THEROCK_USE_EXTERNAL_ROCGDB is "
                  "set, THEROCK_ROCGDB_SOURCE_DIR is", "required!"), "cmake", "cmake",
     "therock-external-source-missing", ("THEROCK_ROCGDB_SOURCE_DIR is not set",)),
    # several selections and no bundle name, wrapped at any word; a family first
    (_cmake_error("cmake/therock_amdgpu_targets.cmake:415", "More than one AMDGPU target "
                  "bundle selected (gfx1100;gfx1201):", "THEROCK_AMDGPU_DIST_BUNDLE_NAME must be "
                  "set explicitly since it cannot be", "inferred."), "gpu-target", "gfx1100",
     "therock-dist-bundle-name", ("gfx1100, gfx1201",)),
    (_cmake_error("cmake/therock_amdgpu_targets.cmake:415", "More than one AMDGPU target "
                  "bundle selected (gfx94X-dcgpu;gfx950-dcgpu): THEROCK_AMDGPU_DIST_BUNDLE_NAME",
                  "must be set explicitly since it cannot be inferred."), "gpu-target",
     "gfx94X-dcgpu", "therock-dist-bundle-name", ("-DTHEROCK_AMDGPU_DIST_BUNDLE_NAME=",)),
    # rocGDB's Pythons: a name that is no path, a Python without a shared libpython
    (_cmake_error("cmake/therock_detect_python_versions.cmake:58", "Shared Python executable "
                  "not found: python3.12"), "cmake", "cmake", "therock-shared-python",
     ("'python3.12'", "--enable-shared")),
    (_cmake_error("cmake/therock_detect_python_versions.cmake:62", "Python executable does not "
                  "support shared libpython: /opt/py/bin/python3", "(from /opt/py/bin/python3)"),
     "cmake", "cmake", "therock-shared-python", ("/opt/py/bin/python3 was built without",)),
    # a sub-project's sources missing at build time, ninja's and make's words
    ("ninja: error: '/src/TheRock/rocm-libraries/projects/rocprim/CMakeLists.txt', needed by "
     "'math-libs/rocPRIM/stamp/configure.stamp', missing and no known rule to make it", "cmake",
     "cmake", "therock-subproject-sources-missing", ("rocPRIM", "fetch_sources.py")),
    ("make[2]: *** No rule to make target '/src/TheRock/compiler/amd-llvm/llvm/CMakeLists.txt', "
     "needed by 'compiler/amd-llvm/stamp/configure.stamp'.  Stop.", "cmake", "cmake",
     "therock-subproject-sources-missing", ("amd-llvm", "/src/TheRock/compiler/amd-llvm/llvm")),
    # the configure's Python without a module topology_to_cmake.py imports
    ("Error loading topology: No module named 'tomli'\nCMake Error at CMakeLists.txt:55 "
     "(execute_process):\n  execute_process failed command indexes:", "python-packaging",
     "tomli", "therock-topology-module-missing", ("tomllib", "requirements.txt")),
    ("Error loading topology: No module named 'yaml'", "python-packaging", "yaml",
     "therock-topology-module-missing", ("module yaml",)),
    # hipcc: a HIP_PLATFORM it does not know; an AMD option handed to nvcc
    ("error: unknown HIP_PLATFORM = 'rocm'       or HIP_COMPILER = 'clang'exit code 255",
     "rocm-install", "HIP_PLATFORM", "hipcc-unknown-platform", ("'rocm'", "HIP_PLATFORM=amd")),
    ("error: unknown HIP_PLATFORM = 'AMD'       or HIP_COMPILER = 'clang'", "rocm-install",
     "HIP_PLATFORM", "hipcc-unknown-platform", ("'AMD'",)),
    ("nvcc fatal   : Unknown option '--offload-arch=gfx942'", "rocm-install", "HIP_PLATFORM",
     "hipcc-on-nvcc", ("--offload-arch=gfx942", "hipconfig --platform")),
    ("nvcc fatal   : Unknown option '-amdgpu-target=gfx906'", "rocm-install", "HIP_PLATFORM",
     "hipcc-on-nvcc", ("-amdgpu-target=gfx906",)),
    # TheRock's artifact installer given a plain release version (it exits 0)
    ("### Installing TheRock using artifacts ###\nThis script requires a nightly or dev release "
     "version.\nPlease retrieve the correct release version from:\nExiting...", "rocm-install",
     "rocm", "therock-artifacts-release-not-nightly", ("--latest-release",)),
    # rocm_sdk: a library file missing from its package, any library and folder
    ("FileNotFoundError: Could not find rocm library 'hipblaslt' at path '/venv/lib/python3.12/"
     "site-packages/_rocm_sdk_libraries_gfx110X_all/lib,' no match for pattern "
     "'libhipblaslt.so*'", "rocm-install", "hipblaslt", "rocm-sdk-library-file-missing",
     ("_rocm_sdk_libraries_gfx110X_all/lib", "libhipblaslt.so*", "--force-reinstall")),
    ("FileNotFoundError: Could not find rocm library 'amdhip64' at path 'C:\\venv\\Lib\\"
     "site-packages\\_rocm_sdk_core\\bin,' no match for pattern 'amdhip64*.dll'",
     "rocm-install", "amdhip64", "rocm-sdk-library-file-missing", ("amdhip64*.dll",)),
    # rocm-sdk init with no tarball left to expand
    ("ImportError: Expected to find _devel.tar or _devel.tar.xz in /venv/lib/python3.12/"
     "site-packages/rocm_sdk_devel", "rocm-install", "rocm_sdk_devel",
     "rocm-sdk-devel-tarball-missing", ("/venv/lib/python3.12/site-packages/rocm_sdk_devel",
                                        "rocm-sdk init")),
    # the variable wins over the unknown-library lines it wraps (read as torch's preload)
    (_PRELOAD.format(value="hipdnn"), "rocm-install", "ROCM_SDK_PRELOAD_LIBRARIES",
     "rocm-sdk-preload-env", ("'hipdnn'", "unset ROCM_SDK_PRELOAD_LIBRARIES")),
    (_PRELOAD.format(value="amdhip64;hipblaslt;hipdnn"), "rocm-install",
     "ROCM_SDK_PRELOAD_LIBRARIES", "rocm-sdk-preload-env", ("amdhip64;hipblaslt;hipdnn",)),
])
def test_family_reads_its_value(text: str, klass: str, subject: str, rule: str,
                                words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words)


@pytest.mark.parametrize("text", [
    # the words echoed in a status line or a comment, not in a CMake error block
    "-- Building sub-project libhipcxx requires program 'lit' on the system path but it is "
    "not found",
    "# In-source builds are not allowed. Please create a separate build directory.",
    "-- Could not find HIP VERSION file: /r/hip/VERSION (using the ROCm one)",
    # a warning block with the same words
    "CMake Warning at CMakeLists.txt:364 (message):\n  Building with THEROCK_BUNDLE_SYSDEPS=ON "
    "on Linux requires `patchelf`\n\n\n-- Configuring done",
    # a CMake error whose header is out of sight (nine lines of message before the end)
    "CMake Error at x.cmake:1 (message):\n" + "  filler line\n" * 9
    + "  Building sub-project a requires program 'b' on the system path but it is not found",
    # another project's "not declared"
    _cmake_error("CMakeLists.txt:3", "Variable FOO was not declared"),
    # a missing library elsewhere, without rocm_sdk's wording
    "FileNotFoundError: Could not find library 'hipblaslt' at path '/x/lib'",
    # a CUDA build's own unknown option, and hipcc's deprecation warning for an old name
    "nvcc fatal   : Unknown option '--offload-arch=sm_90'",
    "nvcc fatal   : Unknown option '-fgpu-rdc'",
    "Warning: HIP_PLATFORM=hcc is deprecated. Please use HIP_PLATFORM=amd.",
    # an external source folder named in a status line
    "-- THEROCK_ROCGDB_SOURCE_DIR points to '/src/rocgdb' which does not exist!",
    # another missing input of a stamp, or ExternalProject's own stamps
    "ninja: error: 'base/rocm-cmake/stamp/stage.stamp', needed by "
    "'compiler/amd-llvm/stamp/configure.stamp', missing and no known rule to make it",
    "ninja: error: '/src/dep/CMakeLists.txt', needed by 'dep-prefix/src/dep-stamp/"
    "dep-configure', missing and no known rule to make it",
    # the installer's sentence quoted inside other text
    "# note: This script requires a nightly or dev release version. (see docs)",
    # the topology script's other errors
    "Error loading topology: [Errno 2] No such file or directory: 'BUILD_TOPOLOGY.toml'",
    # rocm_sdk's version check as a warning (torch's _rocm_init asks without failing)
    "/venv/lib/python3.12/site-packages/rocm_sdk/__init__.py:179: UserWarning: The program was "
    "compiled against a ROCm version matching '7\\.10\\.0' but the installed ROCm version in "
    "this Python environment is 7.11.0. This incompatibility may result in unexpected behavior",
    # ROCM_SDK_PRELOAD_LIBRARIES only printed, nothing failed
    "ROCM_SDK_PRELOAD_LIBRARIES='amdhip64' exported",
])
def test_look_alike_claims_nothing(text: str) -> None:
    assert explain_text(text).klass is None
