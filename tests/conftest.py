"""Shared test fixtures.

Real tools are used wherever they exist here (gcc/clang, hipcc, git, update-alternatives); a test
that needs one skips with the reason only when the executable is missing. The only fakes are the
AMD-GPU boundary: fake ROCm trees, KFD sysfs trees and captured rocminfo output, named as such.
"""

from __future__ import annotations

import os
import shutil

import pytest

# Debian's hipcc also sees the CUDA toolkit on these machines; pin the platform (brief: always).
os.environ.setdefault("HIP_PLATFORM", "amd")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "tool(name): needs an executable on PATH")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers(name="needs_tool"):
        for name in mark.args:
            if shutil.which(name) is None:
                pytest.skip(f"{name} is not installed (see .ci/run for the apt package)")
