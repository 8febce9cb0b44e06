"""Build-side families of r17's misses (issue 40, devbt9), read from the programs' own
wordings: CMake's subdirectory without a CMakeLists.txt (a vendored folder never checked
out), GNU ld's undefined template instance in the build's own shared library, clang's missing
rocprim:: name in hipCUB's or rocThrust's own headers, CPython's import from a namespace stub
("unknown location"), and comgr's run-time compile on Windows without a C++ standard header.
Each line is what the program prints (cmake 3.25.1, g++-12's ld, clang++-22 and python 3.11
here: make/devbt9.sh), with the values the reading must take out of it, and the look-alikes
that must claim nothing (or not this)."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

_CMAKE_EMPTY = ("CMake Error at CMakeLists.txt:3 (add_subdirectory):\n"
                "  The source directory\n\n"
                "    /home/user/proj/third_party/psimd\n\n"
                "  does not contain a CMakeLists.txt file.\n")
_LD_TEMPLATE = ("/usr/bin/ld: ../bin/libfa.so.0.1: undefined reference to `void "
                "fa_vec_case<128, 2>(float*)'\n"
                "collect2: error: ld returned 1 exit status\n")
_ROCPRIM = ("/src/hipCUB/hipcub/include/hipcub/backend/rocprim/util_type.hpp:786:32: error: "
            "no template named 'radix_key_codec' in namespace 'rocprim'\n")
_NAMESPACE_STUB = ("Traceback (most recent call last):\n"
                   '  File "<string>", line 1, in <module>\n'
                   "ImportError: cannot import name 'setup' from 'setuptools' "
                   "(unknown location)\n")
_WINDOWS_COMGR = ("C:\\Users\\me\\AppData\\Local\\Temp\\comgr-12248-10-fb0bcb\\include\\"
                  "miopen_type_traits.hpp:151:10: fatal error: 'type_traits' file not found\n")


@pytest.mark.parametrize(("text", "step", "klass", "subject", "rule", "words"), [
    (_CMAKE_EMPTY, "configure", "cmake", "cmake", "cmake-subdirectory-without-lists",
     ("/home/user/proj/third_party/psimd", "never checked out",
      "git submodule update --init --recursive")),
    (_LD_TEMPLATE, "build", "link", "fa_vec_case", "shared-library-template-instance",
     ("libfa.so.0.1, built by this build", "void fa_vec_case<128, 2>(float*)",
      "instance source that defines fa_vec_case")),
    (_ROCPRIM, "build", "rocm-install", "rocprim", "rocprim-name-missing",
     ("hipcub's headers use rocprim::radix_key_codec", "different releases",
      "same ROCm release")),
    (_NAMESPACE_STUB, "build", "python-packaging", "setuptools", "import-from-namespace-stub",
     ("empty namespace package", "no 'setup'", "run from a folder that holds no setuptools",
      "python -m pip install --force-reinstall setuptools")),
    (_WINDOWS_COMGR, "verify", "rocm-install", "type_traits", "std-header-missing",
     ("comgr, on Windows", "'type_traits'", "without libc++", "does not help")),
])
def test_family_reads_its_values(text: str, step: str, klass: str, subject: str, rule: str,
                                 words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words, step=step)


@pytest.mark.parametrize(("text", "step"), [
    # the project's own folder without CMakeLists.txt: a wrong path as likely as a submodule
    (_CMAKE_EMPTY.replace("third_party/psimd", "src/tools"), "configure"),
    # the line quoted in a grep, without CMake's block
    ("grep -rn 'does not contain a CMakeLists.txt file' docs/\n", "configure"),
    # an installed system library's undefined reference: not this build's instance
    (_LD_TEMPLATE.replace("../bin/libfa.so.0.1", "/usr/lib/x86_64-linux-gnu/libfoo.so.3"),
     "build"),
    # a user's own source misusing rocprim: a typo or an API they misread
    (_ROCPRIM.replace("/src/hipCUB/hipcub/include/hipcub/backend/rocprim/util_type.hpp",
                      "src/sort.hip"), "build"),
])
def test_look_alikes_claim_nothing(text: str, step: str) -> None:
    assert explain_text(text, step=step).klass is None


def test_linux_comgr_keeps_the_host_compiler_reading() -> None:
    # the same line under /tmp (Linux): the host's libstdc++ headers, eight corpus cases
    text = _WINDOWS_COMGR.replace(
        "C:\\Users\\me\\AppData\\Local\\Temp\\comgr-12248-10-fb0bcb\\include\\",
        "/tmp/comgr-209-20-187dbd/include/")
    found = explain_text(text, step="verify")
    assert (found.klass, found.subject, found.rule) == ("host-compiler", "libstdc++",
                                                        "std-header-missing")


def test_a_plain_function_from_the_build_library_claims_nothing() -> None:
    text = "/usr/bin/ld: ../bin/libfa.so.0.1: undefined reference to `fa_plain(float*)'\n"
    assert explain_text(text, step="build").klass is None


def test_import_with_a_file_location_is_not_the_stub() -> None:
    text = ("ImportError: cannot import name 'setup' from 'setuptools' "
            "(/venv/lib/python3.11/site-packages/setuptools/__init__.py)\n")
    assert explain_text(text, step="build").rule != "import-from-namespace-stub"
