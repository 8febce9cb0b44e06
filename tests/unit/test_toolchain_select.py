"""Pure parts of the toolchain: query parsing, restore planning, os-release, compiler choice."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmforge.errors import UsageError
from rocmforge.probes.compilers import GccInstall, HostCompiler, find_gcc_installs
from rocmforge.toolchain.alternatives import (
    AlternativesTool,
    LinkTarget,
    SavedGroup,
    SavedState,
    parse_query,
    plan_restore,
)
from rocmforge.toolchain.distro import install_command, parse_os_release
from rocmforge.toolchain.select import (
    ToolchainInventory,
    Verdict,
    choose_build_compilers,
)

# Captured from Debian 12's update-alternatives 1.21.22 (--query gcc in a sandbox).
QUERY_GCC = """\
Name: gcc
Link: /tmp/uat/links/gcc
Slaves:
 g++ /tmp/uat/links/g++
 gcov /tmp/uat/links/gcov
Status: manual
Best: /usr/bin/gcc-12
Value: /usr/bin/gcc-11

Alternative: /usr/bin/gcc-11
Priority: 110
Slaves:
 g++ /usr/bin/g++-11

Alternative: /usr/bin/gcc-12
Priority: 120
Slaves:
 g++ /usr/bin/g++-12
 gcov /usr/bin/gcov-12
"""


def test_parse_query() -> None:
    group = parse_query("gcc", QUERY_GCC)
    assert (group.exists, group.link, group.status, group.best, group.value) == (
        True,
        "/tmp/uat/links/gcc",
        "manual",
        "/usr/bin/gcc-12",
        "/usr/bin/gcc-11",
    )
    assert dict(group.slave_links) == {"g++": "/tmp/uat/links/g++", "gcov": "/tmp/uat/links/gcov"}
    assert group.paths == ("/usr/bin/gcc-11", "/usr/bin/gcc-12")
    assert group.alternatives[1].priority == 120
    assert dict(group.alternatives[1].slaves) == {
        "g++": "/usr/bin/g++-12",
        "gcov": "/usr/bin/gcov-12",
    }
    assert not parse_query("gcc", "").exists


def test_tool_argv_with_sudo_and_sandbox() -> None:
    tool = AlternativesTool(altdir="/a", admindir="/b", sudo=True)
    assert tool.argv("--auto", "gcc") == (
        "sudo",
        "update-alternatives",
        "--altdir",
        "/a",
        "--admindir",
        "/b",
        "--auto",
        "gcc",
    )
    assert AlternativesTool().argv("--auto", "gcc") == ("update-alternatives", "--auto", "gcc")


def test_plan_restore_manual_existing_group() -> None:
    saved = SavedGroup(
        name="gcc",
        existed=True,
        status="manual",
        value="/usr/bin/gcc-11",
        paths=("/usr/bin/gcc-11",),
    )
    current = parse_query("gcc", QUERY_GCC)
    argv = [c.argv for c in plan_restore(saved, current, tool=AlternativesTool())]
    assert argv == [
        ("update-alternatives", "--remove", "gcc", "/usr/bin/gcc-12"),
        ("update-alternatives", "--set", "gcc", "/usr/bin/gcc-11"),
    ]


def test_saved_state_round_trip_and_merge_keeps_oldest() -> None:
    first = SavedState(
        groups=(
            SavedGroup(
                name="gcc",
                existed=False,
                links=(LinkTarget(path="/usr/bin/gcc", kind="symlink", target="gcc-12"),),
            ),
        )
    )
    assert SavedState.from_json(first.to_json()) == first
    later = SavedState(groups=(SavedGroup(name="gcc", existed=True, status="manual"),))
    assert first.merged_with(later).groups == first.groups


@pytest.mark.parametrize(
    ("text", "kind", "major", "expected"),
    [
        (
            'ID=debian\nVERSION_ID="12"\n',
            "gcc",
            11,
            ("apt-get", "install", "-y", "gcc-11", "g++-11", "libstdc++-11-dev"),
        ),
        ("ID=ubuntu\nID_LIKE=debian\n", "clang", 16, ("apt-get", "install", "-y", "clang-16")),
        (
            'ID="rocky"\nID_LIKE="rhel centos fedora"\n',
            "gcc",
            11,
            ("dnf", "install", "-y", "gcc-toolset-11"),
        ),
        ("ID=fedora\n", "gcc", 14, ("dnf", "install", "-y", "gcc", "gcc-c++", "libstdc++-devel")),
        (
            'ID="opensuse-leap"\nID_LIKE="suse opensuse"\n',
            "gcc",
            12,
            ("zypper", "install", "-y", "gcc12", "gcc12-c++"),
        ),
        ("ID=nixos\n", "gcc", 11, None),
    ],
)
def test_install_command(
    text: str, kind: str, major: int, expected: tuple[str, ...] | None
) -> None:
    assert install_command(parse_os_release(text), kind=kind, major=major) == expected


def test_libstdcxx_only_command() -> None:
    release = parse_os_release("ID=debian\n")
    assert install_command(release, kind="gcc", major=13, libstdcxx_only=True) == (
        "apt-get",
        "install",
        "-y",
        "libstdc++-13-dev",
    )


def _compiler(kind: str, major: int, cxx: bool = True) -> HostCompiler:
    name = "gcc" if kind == "gcc" else "clang"
    cxx_name = "g++" if kind == "gcc" else "clang++"
    return HostCompiler(
        kind=kind,
        major=major,
        version=f"{major}.1.0",
        cc=Path(f"/usr/bin/{name}-{major}"),
        cxx=Path(f"/usr/bin/{cxx_name}-{major}") if cxx else None,
    )


def _install(major: int, complete: bool = True) -> GccInstall:
    return GccInstall(
        major=major,
        lib_dir=Path(f"/usr/lib/gcc/x86_64-linux-gnu/{major}"),
        headers=Path(f"/usr/include/c++/{major}"),
        has_libstdcxx=complete,
        has_headers=complete,
    )


INV = ToolchainInventory(
    compilers=(
        _compiler("clang", 16),
        _compiler("clang", 15),
        _compiler("gcc", 12),
        _compiler("gcc", 11),
    ),
    gcc_installs=(_install(12), _install(11)),
    os_release=parse_os_release("ID=debian\n"),
)


def test_choose_gcc_build_only() -> None:
    choice = choose_build_compilers(INV, gcc=11, rocm_llvm_major=19)
    assert choice.env() == {"CC": "/usr/bin/gcc-11", "CXX": "/usr/bin/g++-11"}
    assert choice.exports() == ("export CC=/usr/bin/gcc-11", "export CXX=/usr/bin/g++-11")
    assert choice.extra_flags == ()
    assert choice.hip_extra_flags == ("--gcc-install-dir=/usr/lib/gcc/x86_64-linux-gnu/11",)


def test_choose_clang_gets_gcc_install_dir_only_from_16() -> None:
    c16 = choose_build_compilers(INV, clang=16, libstdcxx_gcc=11)
    assert c16.extra_flags == ("--gcc-install-dir=/usr/lib/gcc/x86_64-linux-gnu/11",)
    c15 = choose_build_compilers(INV, clang=15)
    assert c15.extra_flags == ()
    assert any("clang-15 has no --gcc-install-dir" in n for n in c15.notes)


def test_choose_errors() -> None:
    with pytest.raises(UsageError, match=r"gcc 99 is not installed .*installed: clang 16\.1\.0"):
        choose_build_compilers(INV, gcc=99)
    with pytest.raises(UsageError, match="Both --gcc 11 and --clang 16"):
        choose_build_compilers(INV, gcc=11, clang=16)
    no_cxx = ToolchainInventory(
        compilers=(_compiler("gcc", 11, cxx=False),), os_release=INV.os_release
    )
    with pytest.raises(UsageError, match=r"g\+\+-11 is not.*apt-get install -y gcc-11 g\+\+-11"):
        choose_build_compilers(no_cxx, gcc=11)


def test_policy_fail_refused_unless_allowed() -> None:
    def judge(kind: str, version: str) -> Verdict:
        return Verdict(status="FAIL", reason="outside the table", fix="use gcc 11")

    with pytest.raises(UsageError, match="outside the table.*use gcc 11; or pass --allow-compiler"):
        choose_build_compilers(INV, gcc=12, judge=judge)
    assert choose_build_compilers(INV, gcc=12, judge=judge, allow_compiler=True).major == 12


def test_recommended_first_installed_wins() -> None:
    choice = choose_build_compilers(INV, recommended=(("gcc", 10), ("gcc", 11), ("clang", 16)))
    assert (choice.kind, choice.major, choice.reason) == ("gcc", 11, "recommended: gcc 11")


def test_missing_libstdcxx_dev_detected(tmp_path: Path) -> None:
    # Real GCC 11 files, minus libstdc++.so and the headers: what a missing libstdc++-11-dev leaves.
    lib = tmp_path / "usr/lib/gcc/x86_64-linux-gnu/11"
    lib.mkdir(parents=True)
    (lib / "crtbegin.o").write_bytes(b"")
    (tmp_path / "usr/lib/gcc/x86_64-linux-gnu/12").mkdir()
    (tmp_path / "usr/lib/gcc/x86_64-linux-gnu/12/crtbegin.o").write_bytes(b"")
    (tmp_path / "usr/lib/gcc/x86_64-linux-gnu/12/libstdc++.so").write_bytes(b"")
    (tmp_path / "usr/include/c++/12").mkdir(parents=True)
    installs = find_gcc_installs(tmp_path)
    assert [(g.major, g.complete) for g in installs] == [(12, True), (11, False)]
    inv = ToolchainInventory(
        compilers=INV.compilers, gcc_installs=installs, os_release=INV.os_release
    )
    with pytest.raises(
        UsageError, match=r"lacks libstdc\+\+-11-dev.*apt-get install -y libstdc\+\+-11-dev"
    ):
        choose_build_compilers(inv, clang=16, libstdcxx_gcc=11)
    # Newest incomplete: a note with the fix, the choice still works.
    broken_newest = ToolchainInventory(
        compilers=INV.compilers,
        gcc_installs=(_install(13, complete=False), _install(12)),
        os_release=INV.os_release,
    )
    choice = choose_build_compilers(broken_newest, gcc=12)
    assert any(
        "libstdc++-13-dev" in n and "apt-get install -y libstdc++-13-dev" in n for n in choice.notes
    )
