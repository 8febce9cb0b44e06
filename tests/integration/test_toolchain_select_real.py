"""The real-tool tests of tests/unit/test_toolchain_select.py: they run clang++-16 and g++-11,
so they live in tests/integration (issue 42 item 6)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rocmforge.probes.compilers import HostCompiler, find_gcc_installs
from rocmforge.toolchain.select import (
    ToolchainInventory,
    choose_build_compilers,
)


@pytest.mark.needs_tool("clang++-16", "g++-11")
def test_real_clang16_takes_the_gcc_install_dir_hint(tmp_path: Path) -> None:
    choice = choose_build_compilers(
        ToolchainInventory(
            compilers=(
                HostCompiler(
                    kind="clang",
                    major=16,
                    version="16.0.6",
                    cc=Path(shutil.which("clang-16") or ""),
                    cxx=Path(shutil.which("clang++-16") or ""),
                ),
            ),
            gcc_installs=find_gcc_installs("/"),
        ),
        clang=16,
        libstdcxx_gcc=11,
    )
    src = tmp_path / "v.cpp"
    src.write_text(
        '#include <cmath>\n#include <cstdio>\nint main(){std::printf("%d\\n", __GLIBCXX__ > 0);}\n'
    )
    proc = subprocess.run(
        [str(choice.cxx), *choice.extra_flags, "-v", str(src), "-o", str(tmp_path / "v")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Selected GCC installation: /usr/lib/gcc/x86_64-linux-gnu/11" in proc.stderr
    assert "/include/c++/11" in proc.stderr
    assert "/include/c++/12" not in proc.stderr
    out = subprocess.run([str(tmp_path / "v")], capture_output=True, text=True, check=True)
    assert out.stdout == "1\n"
