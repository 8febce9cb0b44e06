"""What clean() strips from a log line, and what it must keep."""

from __future__ import annotations

import pytest

from rocmforge.triage.lines import clean, clean_labelled


@pytest.mark.parametrize(("line", "text"), [
    # TheRock's teatime.py labels (cmake/therock_subproject.cmake's LABEL values)
    ("[rocprofiler-systems] make[3]: *** [Makefile:1781: doc/bfd.info] Error 127\n",
     "make[3]: *** [Makefile:1781: doc/bfd.info] Error 127"),
    ("[hipBLASLt configure] CMake Error at CMakeLists.txt:12 (find_package):",
     "CMake Error at CMakeLists.txt:12 (find_package):"),
    ("[rocm-core devel install] -- Installing: /x", "-- Installing: /x"),
    # a label under a CI timestamp
    ("2026-04-23T10:38:01.0000001Z [amd-llvm] FAILED: lib/x.o", "FAILED: lib/x.o"),
])
def test_a_label_or_prefix_is_stripped(line: str, text: str) -> None:
    assert clean(line) == text


@pytest.mark.parametrize("line", [
    "[ 45%] Building CXX object foo.o",     # make's progress
    "[12/3456] Building CXX object foo.o",  # ninja's progress
    "[warning] the cache is cold",          # a log level is not a label
    "[ERROR] no such file",
    "[e] value",
    "[W socket.cpp:663] [c10d] The client socket has failed to connect",
])
def test_progress_and_levels_are_kept(line: str) -> None:
    assert clean(line) == line


def test_the_label_names_its_sub_project() -> None:
    assert clean_labelled("[rocBLAS configure]   Unsupported GPU target: gfx1036") == (
        "  Unsupported GPU target: gfx1036", "rocBLAS")
    assert clean_labelled("#12 3.4 [amd-llvm] ld.lld: error: x") == ("ld.lld: error: x",
                                                                    "amd-llvm")
    assert clean_labelled("[warning] x") == ("[warning] x", "")
