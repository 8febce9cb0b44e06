"""Small PyTorch-like git trees, one per era of PyTorch's layout, built at test time.

The files are written here, short, in the shape of pytorch/pytorch's own files as read with the
search tool (CMakeLists.txt at 00117da6/0cbc3db7, setup.py of the 2.4-era python_min_version
form, pyproject.toml at 0034f545, requirements-build.txt at 1975038f, LoadHIP.cmake of the
find_package_and_print_version era and of the CONFIG era). The values are examples per era, not a
record of any release: the tests check that the reader follows whatever the files say.

Eras (one tagged commit each in one repository; `worktree()` checks a tag out on its own):
- v2.4.0  "triton-rocm.txt era": triton-rocm.txt + triton.txt, setup.py with python_min_version,
          a [build-system]-only pyproject.toml (setuptools legacy backend), no
          requirements-build.txt
- v2.9.1  "setup.py era": triton.txt only, setup.py beside a pyproject.toml with [project]
          requires-python and classifiers, setuptools.build_meta, requirements-build.txt
- v2.14.0 "scikit-build-core era": no setup.py, build-backend scikit_build_core.build,
          C++20, GCC 11.3 and Clang 16 checks, LoadHIP in CONFIG mode
- v2.99.0 FUTURE: values no table has (CMake 3.31, C++23, GCC 13.1, Clang 18, a new pin, a new
          ROCm component, Python >=3.12)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gitfixtures import commit_files, git, new_repo

PINS = ".ci/docker/ci_commit_pins"

PIN_24_ROCM = "bbe6246e37d8aa791c67daaf9d9d61b26c9ccfdc"
PIN_24 = "1b2f15840e0d70eec50d84c7a0575cb835524def"
PIN_29 = "bfeb066872bc1e8b2d2bc0a3b295b99dd77206e7"
PIN_214 = "5d6048aa0a324e090ada215b609ea76620133845"
PIN_FUTURE = "f00dfacef00dfacef00dfacef00dfacef00dface"


def cmakelists(*, floor: str, cxx: int, gcc: str, clang: str = "", extra: str = "") -> str:
    """A top-level CMakeLists.txt in the layout PyTorch's has (floor, standard, compiler checks)."""
    clang_check = (
        f"\n# --- [ Check that minimal clang version is {clang}+\n"
        "# Older clangs fail to compile C++20 ranges adaptors; AppleClang is excluded.\n"
        'if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS '
        f"{clang})\n"
        "  message(FATAL_ERROR\n"
        f'    "Clang-{clang} or newer is required to compile PyTorch, but found '
        '${CMAKE_CXX_COMPILER_VERSION}")\n'
        "endif()\n"
    ) if clang else ""
    return (
        f"cmake_minimum_required(VERSION {floor} FATAL_ERROR)\n"
        "# cmake_policy(SET CMP0022 NEW) cmake_policy(SET CMP0023 NEW)\n"
        "cmake_policy(SET CMP0010 NEW)\n\n"
        "# Prohibit in-source builds\n"
        "if(${CMAKE_SOURCE_DIR} STREQUAL ${CMAKE_BINARY_DIR})\n"
        '  message(FATAL_ERROR "In-source build are not supported")\n'
        "endif()\n\n"
        "project(Torch CXX C)\n\n"
        "# check and set CMAKE_CXX_STANDARD\n"
        'string(FIND "${CMAKE_CXX_FLAGS}" "-std=c++" env_cxx_standard)\n'
        "if(env_cxx_standard GREATER -1)\n"
        "  message(\n"
        f'    WARNING "PyTorch requires -std=c++{cxx}. Please remove -std=c++ settings."\n'
        "  )\n"
        "endif()\n"
        "set(CMAKE_CXX_STANDARD\n"
        f"    {cxx}\n"
        "    CACHE STRING\n"
        '          "The C++ standard whose features are requested to build this target.")\n'
        "set(CMAKE_C_STANDARD\n    11\n    CACHE STRING \"The C standard.\")\n\n"
        f"# --- [ Check that minimal gcc version is {gcc}+\n"
        "if(CMAKE_COMPILER_IS_GNUCXX AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS "
        f"{gcc})\n"
        "  message(\n"
        "    FATAL_ERROR\n"
        f'      "GCC-{gcc} or newer is required to compile PyTorch, but found '
        '${CMAKE_CXX_COMPILER_VERSION}"\n'
        "  )\n"
        "endif()\n"
        f"{clang_check}\n"
        "# A version check that only adds a flag is not a minimum.\n"
        "if(CMAKE_COMPILER_IS_GNUCXX AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)\n"
        '  string(APPEND CMAKE_CXX_FLAGS " -Wno-stringop-overflow")\n'
        "endif()\n"
        f"{extra}"
    )


SETUP_PY_24 = '''\
import sys

if sys.platform == "win32" and sys.maxsize.bit_length() == 31:
    print("32-bit Windows Python runtime is not supported.")
    sys.exit(-1)

import platform

python_min_version = (3, 8, 0)
python_min_version_str = ".".join(map(str, python_min_version))
if sys.version_info < python_min_version:
    print(f"You are using Python {platform.python_version()}. Python >={python_min_version_str} "
          "is required.")
    sys.exit(-1)


def main():
    version_range_max = max(sys.version_info[1], 12) + 1
    setup(
        name="torch",
        python_requires=f">={python_min_version_str}",
        classifiers=[
            "Programming Language :: C++",
            "Programming Language :: Python :: 3",
        ]
        + [
            f"Programming Language :: Python :: 3.{i}"
            for i in range(python_min_version[1], version_range_max)
        ],
    )
'''

SETUP_PY_29 = SETUP_PY_24.replace("(3, 8, 0)", "(3, 10, 0)").replace(", 12) + 1", ", 14) + 1")

PYPROJECT_24 = '''\
[build-system]
requires = [
    "setuptools",
    "wheel",
    "numpy",
    "ninja",
    "pyyaml",
    "cmake",
    "typing-extensions",
    "requests",
]
# Use legacy backend to import local packages in setup.py
build-backend = "setuptools.build_meta:__legacy__"

[tool.ruff]
line-length = 120
'''


def pyproject(*, backend: str, requires: str, python: str, minors: range, cmake: str) -> str:
    """A pyproject.toml with [build-system] and [project] as PyTorch's has had since 2.8."""
    classifiers = "".join(
        f'    "Programming Language :: Python :: 3.{m}",\n' for m in minors)
    return (
        "# Package ######\n\n"
        "[build-system]\n"
        "requires = [\n"
        f'    "{requires}",\n'
        f'    "cmake{cmake}",\n'
        '    "ninja",\n'
        '    "numpy",\n'
        "]\n"
        f'build-backend = "{backend}"\n\n'
        "[project]\n"
        'name = "torch"\n'
        f'requires-python = "{python}"\n'
        "classifiers = [\n"
        '    "Programming Language :: C++",\n'
        '    "Programming Language :: Python :: 3 :: Only",\n'
        f"{classifiers}"
        "]\n"
        'dynamic = ["entry-points", "dependencies", "scripts", "version"]\n'
    )


def requirements_build(cmake: str) -> str:
    return (
        "# Build System requirements\n"
        "setuptools>=77.0.0,<80.0\n"
        f"cmake{cmake}\n"
        "ninja\n"
        "numpy\n"
        "six  # dependency chain: NNPACK -> PeachPy -> six\n"
    )


LOADHIP_24 = '''\
set(PYTORCH_FOUND_HIP FALSE)

if(NOT DEFINED ENV{ROCM_PATH})
  set(ROCM_PATH /opt/rocm)
else()
  set(ROCM_PATH $ENV{ROCM_PATH})
endif()

macro(find_package_and_print_version PACKAGE_NAME)
  find_package("${PACKAGE_NAME}" ${ARGN})
  message("${PACKAGE_NAME} VERSION: ${${PACKAGE_NAME}_VERSION}")
endmacro()

# Find the HIP Package
find_package_and_print_version(HIP 1.0)

if(HIP_FOUND)
  set(PYTORCH_FOUND_HIP TRUE)
  find_package_and_print_version(hip REQUIRED)
  find_package_and_print_version(hsa-runtime64 REQUIRED)
  find_package_and_print_version(amd_comgr REQUIRED)
  find_package_and_print_version(rocrand REQUIRED)
  find_package_and_print_version(hiprand REQUIRED)
  find_package_and_print_version(rocblas REQUIRED)
  find_package_and_print_version(hipblas REQUIRED)
  if(ROCM_VERSION_DEV VERSION_GREATER_EQUAL "5.7.0")
    find_package_and_print_version(hipblaslt REQUIRED)
  endif()
  find_package_and_print_version(miopen REQUIRED)
  if(ROCM_VERSION_DEV VERSION_GREATER_EQUAL "4.1.0")
    find_package_and_print_version(hipfft REQUIRED)
  else()
    find_package_and_print_version(rocfft REQUIRED)
  endif()
  find_package_and_print_version(hipsparse REQUIRED)
  find_package_and_print_version(rccl)
  find_package_and_print_version(rocprim REQUIRED)
  find_package_and_print_version(hipcub REQUIRED)
  find_package_and_print_version(rocthrust REQUIRED)
  find_package_and_print_version(hipsolver REQUIRED)
endif()
'''


def loadhip_config(extra: str = "") -> str:
    """LoadHIP.cmake of the CONFIG-mode era (ROCm components found recursively in ROCM_PATH)."""
    return (
        "set(PYTORCH_FOUND_HIP FALSE)\n\n"
        "macro(find_package_and_print_version PACKAGE_NAME)\n"
        '  find_package("${PACKAGE_NAME}" ${ARGN})\n'
        "  if(NOT ${PACKAGE_NAME}_FOUND)\n"
        '    message("Optional package ${PACKAGE_NAME} not found")\n'
        "  endif()\n"
        "endmacro()\n\n"
        "set(PYTORCH_FOUND_HIP TRUE)\n"
        "find_package_and_print_version(hip REQUIRED CONFIG)\n\n"
        "if(PYTORCH_FOUND_HIP)\n"
        "  # Find ROCM components using Config mode\n"
        "  find_package_and_print_version(amd_comgr REQUIRED)\n"
        "  find_package_and_print_version(rocrand REQUIRED)\n"
        "  find_package_and_print_version(rocblas REQUIRED)\n"
        "  find_package_and_print_version(miopen REQUIRED)\n"
        "  find_package_and_print_version(rocshmem)\n"
        '  if(CMAKE_VERSION VERSION_GREATER_EQUAL "4.0.0")\n'
        "    find_package_and_print_version(hiprtc REQUIRED)\n"
        "  else()\n"
        "    find_package_and_print_version(hiprtc REQUIRED)\n"
        "  endif()\n"
        "  find_package_and_print_version(hipblaslt REQUIRED)\n"
        "  if(UNIX)\n"
        "    find_package_and_print_version(rccl)\n"
        "    find_package_and_print_version(hsa-runtime64 REQUIRED)\n"
        "  endif()\n"
        f"{extra}"
        "  # Optional components.\n"
        "  find_package_and_print_version(hipsparselt)  # Will be required when ready.\n"
        "endif()\n"
    )


ERAS: dict[str, dict[str, str | None]] = {
    "v2.4.0": {
        "version.txt": "2.4.0\n",
        f"{PINS}/triton-rocm.txt": PIN_24_ROCM + "\n",
        f"{PINS}/triton.txt": PIN_24 + "\n",
        ".ci/docker/triton_version.txt": "3.0.0\n",
        "CMakeLists.txt": cmakelists(floor="3.18", cxx=17, gcc="9.3"),
        "setup.py": SETUP_PY_24,
        "pyproject.toml": PYPROJECT_24,
        "requirements.txt": "astunparse\ncmake\nnumpy\n",
        "cmake/public/LoadHIP.cmake": LOADHIP_24,
    },
    "v2.9.1": {
        "version.txt": "2.9.1\n",
        f"{PINS}/triton-rocm.txt": None,
        f"{PINS}/triton.txt": PIN_29 + "\n",
        ".ci/docker/triton_version.txt": "3.5.1\n",
        "CMakeLists.txt": cmakelists(floor="3.18", cxx=17, gcc="9.3"),
        "setup.py": SETUP_PY_29,
        "pyproject.toml": pyproject(backend="setuptools.build_meta",
                                    requires="setuptools>=70.1.0", python=">=3.10",
                                    minors=range(10, 15), cmake=">=3.27"),
        "requirements-build.txt": requirements_build(">=3.27"),
        "cmake/public/LoadHIP.cmake": loadhip_config(),
    },
    "v2.14.0": {
        "version.txt": "2.14.0\n",
        f"{PINS}/triton.txt": PIN_214 + "\n",
        ".ci/docker/triton_version.txt": "3.8.0\n",
        "CMakeLists.txt": cmakelists(floor="3.27", cxx=20, gcc="11.3", clang="16"),
        "setup.py": None,
        "pyproject.toml": pyproject(backend="scikit_build_core.build",
                                    requires="scikit-build-core>=1.0", python=">=3.10",
                                    minors=range(10, 16), cmake=">=3.27"),
        "requirements-build.txt": requirements_build(">=3.27"),
    },
    "v2.99.0": {
        "version.txt": "2.99.0\n",
        f"{PINS}/triton.txt": PIN_FUTURE + "\n",
        ".ci/docker/triton_version.txt": "4.0.0\n",
        "CMakeLists.txt": cmakelists(floor="3.31...3.40", cxx=23, gcc="13.1", clang="18"),
        "pyproject.toml": pyproject(backend="scikit_build_core.build",
                                    requires="scikit-build-core>=2.0", python=">=3.12",
                                    minors=range(12, 17), cmake=">=3.31"),
        "requirements-build.txt": requirements_build(">=3.31"),
        # The ROCm floor as pytorch/pytorch's LoadHIP.cmake of the ROCm 7.14 era writes it.
        "cmake/public/LoadHIP.cmake": loadhip_config(
            "  find_package_and_print_version(hipdnn REQUIRED)\n"
            "  if(ROCM_VERSION_DEV_INT LESS 71400)\n"
            '    message(FATAL_ERROR "PyTorch needs ROCm 7.14 or above, but found '
            '${ROCM_VERSION_DEV}.")\n'
            "  endif()\n"),
    },
}


@dataclass(frozen=True, kw_only=True)
class EraRepo:
    """One repository holding every era as a tagged commit, plus a branch named like a word."""

    path: Path
    tags: dict[str, str]  # tag -> commit

    def worktree(self, ref: str, into: Path) -> Path:
        """A separate checkout of `ref` (tag, branch or commit) at `into`."""
        git("worktree", "add", "-q", "--detach", str(into), ref, cwd=self.path)
        return into


def build_era_repo(root: Path) -> EraRepo:
    """The pytorch-like repository: v2.4.0 -> v2.9.1 -> v2.14.0 -> v2.99.0, and branch `oom`
    (version.txt 2.9.1) forked from v2.9.1 with one more commit."""
    repo = new_repo(root / "pytorch")
    tags: dict[str, str] = {}
    for tag, files in ERAS.items():
        present = {rel: text for rel, text in files.items()
                   if text is not None or (repo / rel).exists()}
        tags[tag] = commit_files(repo, present, tag)
        git("tag", "-a", tag, "-m", tag, cwd=repo)
    git("checkout", "-q", "-b", "oom", "v2.9.1", cwd=repo)
    tags["oom"] = commit_files(repo, {"README.md": "an out-of-memory fix\n"}, "oom fix")
    git("checkout", "-q", "main", cwd=repo)
    return EraRepo(path=repo, tags=tags)
