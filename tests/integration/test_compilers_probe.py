"""The compiler probe against the real gcc/clang installed here, through PATHs built in temp dirs.

The only fake is the ROCm tree (a temp dir whose lib/llvm/bin/clang links to the real clang-22),
named as such.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from rocmforge.probes.compilers import (
    HostCompiler,
    default_compiler,
    driver_kind,
    find_host_compilers,
    link_chain,
    parse_clang_version,
    parse_gcc_version,
    resolve_name,
)


def _link_dir(tmp_path: Path, names: dict[str, str]) -> Path:
    """A directory of symlinks `name -> /usr/bin/target`, used as the whole PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, target in names.items():
        real = shutil.which(target)
        assert real is not None, target
        (bin_dir / name).symlink_to(real)
    return bin_dir


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Debian clang version 15.0.6\nTarget: x86_64-pc-linux-gnu\n", "15.0.6"),
        ("Debian clang version 22.1.8 (1~deb12u1)\n", "22.1.8"),
        (
            "AMD clang version 19.0.0git (https://github.com/RadeonOpenCompute/llvm-project)",
            "19.0.0",
        ),
        ("gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0\n", None),
    ],
)
def test_parse_clang_version(text: str, expected: str | None) -> None:
    assert parse_clang_version(text) == expected


@pytest.mark.parametrize(
    ("dump", "version_text", "expected"),
    [
        ("11.3.0\n", "", "11.3.0"),
        ("13\n", "gcc (GCC) 13.2.1 20231011 (Red Hat 13.2.1-4)\n", "13.2.1"),
        ("", "gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0\n", "11.4.0"),
        ("9\n", "", "9"),
        ("", "", None),
    ],
)
def test_parse_gcc_version(dump: str, version_text: str, expected: str | None) -> None:
    assert parse_gcc_version(dump, version_text) == expected


def test_driver_kind() -> None:
    assert driver_kind("gcc-11") == ("gcc", "11")
    assert driver_kind("clang") == ("clang", "")
    assert driver_kind("clang-format-15") is None
    assert driver_kind("gcc-ar-12") is None
    assert driver_kind("g++-11") is None


@pytest.mark.needs_tool("gcc-11", "g++-11", "gcc-12", "g++-12", "clang-15", "clang++-15")
def test_find_host_compilers_reads_real_versions(tmp_path: Path) -> None:
    bin_dir = _link_dir(
        tmp_path,
        {
            "gcc-11": "gcc-11",
            "g++-11": "g++-11",
            "gcc-12": "gcc-12",
            "g++-12": "g++-12",
            "gcc": "gcc-12",  # same file as gcc-12: listed once
            "clang-15": "clang-15",  # no clang++-15 in this PATH: cxx is None
            "gcc-ar-12": "gcc-ar-12",  # not a compiler driver
        },
    )
    found = find_host_compilers(str(bin_dir))
    assert [(c.kind, c.major, c.cc.name, c.cxx.name if c.cxx else None) for c in found] == [
        ("clang", 15, "clang-15", None),
        ("gcc", 12, "gcc-12", "g++-12"),
        ("gcc", 11, "gcc-11", "g++-11"),
    ]
    gcc11 = found[2]
    assert gcc11.version.startswith("11.")
    assert gcc11.version.count(".") == 2
    assert gcc11.cc == bin_dir / "gcc-11"
    assert found[0].version.startswith("15.")


@pytest.mark.needs_tool("gcc-11", "g++-11")
def test_plain_gcc_that_is_not_versioned_is_listed(tmp_path: Path) -> None:
    bin_dir = _link_dir(tmp_path, {"gcc": "gcc-11", "g++": "g++-11"})
    found = find_host_compilers(str(bin_dir))
    assert len(found) == 1
    assert found[0].kind == "gcc" and found[0].major == 11 and found[0].origin == "plain"
    assert found[0].cxx == bin_dir / "g++"


def test_empty_and_missing_path_dirs(tmp_path: Path) -> None:
    assert find_host_compilers(os.pathsep.join([str(tmp_path / "nope"), ""])) == ()
    assert default_compiler("gcc", str(tmp_path)) is None


@pytest.mark.needs_tool("clang-22", "clang++-22")
def test_rocm_clang_in_fake_rocm_tree(tmp_path: Path) -> None:
    # Fake ROCm tree (ROCm >= 6 layout, lib/llvm/bin) holding links to the real clang-22.
    llvm_bin = tmp_path / "fake-rocm" / "lib" / "llvm" / "bin"
    llvm_bin.mkdir(parents=True)
    (llvm_bin / "clang").symlink_to(shutil.which("clang-22") or "")
    (llvm_bin / "clang++").symlink_to(shutil.which("clang++-22") or "")
    found = find_host_compilers(str(tmp_path / "empty"), rocm_root=tmp_path / "fake-rocm")
    assert found == (
        HostCompiler(
            kind="clang",
            major=22,
            version=found[0].version,
            cc=llvm_bin / "clang",
            cxx=llvm_bin / "clang++",
            origin="rocm",
        ),
    )
    assert found[0].version.startswith("22.")


@pytest.mark.needs_tool("gcc-11", "g++-11")
def test_default_compiler_follows_alternatives_style_chain(tmp_path: Path) -> None:
    # cc -> alt/cc -> gcc-11 -> (real) x86_64-linux-gnu-gcc-11: the /etc/alternatives shape.
    bin_dir = _link_dir(tmp_path, {"gcc-11": "gcc-11"})
    alt = tmp_path / "alt"
    alt.mkdir()
    (alt / "cc").symlink_to(bin_dir / "gcc-11")
    (bin_dir / "cc").symlink_to(alt / "cc")
    resolved = resolve_name("cc", str(bin_dir))
    assert resolved.chain[:3] == (bin_dir / "cc", alt / "cc", bin_dir / "gcc-11")
    assert resolved.chain[-1] == Path(os.path.realpath(bin_dir / "cc"))
    compiler = default_compiler("cc", str(bin_dir))
    assert compiler is not None
    assert (compiler.kind, compiler.major, compiler.cxx) == ("gcc", 11, None)
    assert compiler.cc == resolved.chain[-1]


def test_link_chain_relative_links(tmp_path: Path) -> None:
    (tmp_path / "real").write_text("x")
    (tmp_path / "a").symlink_to("real")
    (tmp_path / "b").symlink_to("a")
    assert link_chain(tmp_path / "b") == (tmp_path / "b", tmp_path / "a", tmp_path / "real")


def test_non_compiler_named_gcc_is_ignored(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "gcc-13"
    script.write_text("#!/bin/sh\necho 'not a compiler'\n")
    script.chmod(0o755)
    assert find_host_compilers(str(bin_dir)) == ()
