"""Shared test fixtures.

Real tools are used wherever they exist here (gcc/clang, hipcc, git, update-alternatives); a test
that needs one skips with the reason only when the executable is missing. The only fakes are the
AMD-GPU boundary: fake ROCm trees, KFD sysfs trees and captured rocminfo output, named as such.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

# Debian's hipcc also sees the CUDA toolkit on these machines; pin the platform (brief: always).
os.environ.setdefault("HIP_PLATFORM", "amd")
# The tool-output cache (rocmforge.probes.tool_cache) lives in a folder of this test run, so a
# test never reads an answer cached by an earlier run or by the user's own commands.
os.environ["ROCMFORGE_CACHE_DIR"] = tempfile.mkdtemp(prefix="rocmforge-test-cache-")
# Tests make real git commits; a machine without a global git identity must not fail them.
for _name, _value in (
    ("GIT_AUTHOR_NAME", "rocmforge tests"),
    ("GIT_AUTHOR_EMAIL", "tests@rocmforge.invalid"),
    ("GIT_COMMITTER_NAME", "rocmforge tests"),
    ("GIT_COMMITTER_EMAIL", "tests@rocmforge.invalid"),
):
    os.environ.setdefault(_name, _value)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "tool(name): needs an executable on PATH")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers(name="needs_tool"):
        for name in mark.args:
            if shutil.which(name) is None:
                pytest.skip(f"{name} is not installed (see .ci/run for the apt package)")
