"""The table fixes of issue 16 (each value against the upstream source its row cites), the
version a ref really is (never the newest row, never a branch name), and where that shows:
doctor's CMake message and `invoke plan --ref <commit>`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rocmforge.errors import UsageError
from rocmforge.knowledge.arches import load_arch_table
from rocmforge.knowledge.releases import (
    load_pytorch_releases,
    load_rocm_releases,
    pytorch_release_for,
    rocm_release_for,
)
from rocmforge.plan.doctor import diagnose
from rocmforge.probes.system import ToolVersion
from rocmforge.settings import Settings

KIT = Path(__file__).resolve().parents[2]
SHA = "0123456789abcdef0123456789abcdef01234567"


# ------------------------------------------------------------------------------- the tables


def test_pytorch_212_is_cxx20_with_gcc_113_and_no_clang_check() -> None:
    row = load_pytorch_releases()["2.12"]
    assert (row.cxx_std, row.gcc_min, row.clang_min) == (20, "11.3", 0)


def test_pytorch_215_and_216_rows_carry_their_release_dates_and_no_guessed_triton() -> None:
    releases = load_pytorch_releases()
    assert list(releases)[-4:] == ["2.14", "2.15", "2.16", "2.17"]
    r214, r215, r216, r217 = (releases[v] for v in ("2.14", "2.15", "2.16", "2.17"))
    assert (r215.released, r216.released, r217.released) == ("2026-10-28", "2026-12-22", "")
    assert (r215.triton_version, r215.rocm_stable, r216.triton_version) == ("", "", "")
    assert (r215.cxx_std, r215.scikit_build_core, r215.build_style) == (20, True, "build")
    # 2.15 is the first release without Python 3.10 (pytorch/pytorch#197242, #198233); its
    # nightlies moved to ROCm 7.14 and 10.0 (pytorch/test-infra#8670).
    assert r214.python_specifier.contains("3.10")
    for row in (r215, r216, r217):
        assert not row.python_specifier.contains("3.10")
        assert row.python_specifier.contains("3.11") and row.python_specifier.contains("3.15")
        assert row.rocm == ("7.14", "10.0")


def test_pytorch_2141_shares_the_214_row() -> None:
    release = pytorch_release_for("v2.14.1")
    assert (release.version, release.ref_version, release.tracks_main) == ("2.14", "2.14.1", False)
    assert release.rocm_stable == "7.14"


def test_rocm_rows_52_72_714() -> None:
    releases = load_rocm_releases()
    assert releases["5.2"].released == "2022-06-28"
    seven2 = releases["7.2"]
    assert (seven2.llvm_major, seven2.released) == (22, "2026-01-21")
    assert "7.2.4" in seven2.note
    seven14 = rocm_release_for("7.14.0")
    assert (seven14.version, seven14.llvm_major, seven14.released, seven14.approximate) == (
        "7.14", 23, "2026-07-16", False)


def test_generic_members() -> None:
    table = load_arch_table()
    assert "gfx1153" in table.arches["gfx11-generic"].generic_members
    assert table.arches["gfx9-4-generic"].generic_members == (
        "gfx940", "gfx941", "gfx942", "gfx950")
    # gfx940/gfx941 are members only while LLVM still has them (before 21).
    old = [m for m in table.arches["gfx9-4-generic"].generic_members
           if table.arches[m].accepted_by_llvm(20)]
    new = [m for m in table.arches["gfx9-4-generic"].generic_members
           if table.arches[m].accepted_by_llvm(21)]
    assert (old, new) == (["gfx940", "gfx941", "gfx942", "gfx950"], ["gfx942", "gfx950"])


@pytest.mark.parametrize("name", ["pytorch.toml", "rocm.toml", "arches.toml"])
def test_facts_cite_no_internal_notes(name: str) -> None:
    text = (KIT / "config" / name).read_text()
    internal = re.findall(r"reference [a-z\-]+\.md|reference §|§\d|\bissue \d+\b|issues? \d+/\d+",
                          text)
    assert internal == []


# Issue 16 item 4: a fact names an upstream file or release artifact, never the team's own notes.
INTERNAL_CITATION = re.compile(
    r"reference §|rocm-arch-toolchain\.md|pytorch-rocm-build\.md|team rule", re.IGNORECASE)
CONFIG_FILES = sorted(p.name for p in (KIT / "config").glob("*.toml"))


def test_the_internal_citation_pattern_matches_what_it_must() -> None:
    found = [INTERNAL_CITATION.search(text) is not None for text in (
        'source = "reference §2: 181 TFLOPS"', "# Team rule: pin the platform",
        "reference rocm-arch-toolchain.md §1.1", "(reference pytorch-rocm-build.md §1.6)",
        'source = "pytorch/pytorch:cmake/public/utils.cmake@dbd090ee"',
        "# ROCm/ROCm:docs/reference/gpu-arch-specs.rst")]
    assert found == [True, True, True, True, False, False]
    assert {"aliases.toml", "build.toml", "diagnostics.toml", "products.toml"} <= set(CONFIG_FILES)


@pytest.mark.parametrize("name", CONFIG_FILES)
def test_no_config_file_cites_the_teams_notes(name: str) -> None:
    text = (KIT / "config" / name).read_text()
    cited = [f"{number}: {line.strip()}" for number, line in enumerate(text.splitlines(), 1)
             if INTERNAL_CITATION.search(line)]
    assert cited == []


def test_a_negative_llvm_major_is_refused(tmp_path: Path) -> None:
    from rocmforge.errors import ConfigError

    for name in ("rocm.toml", "pytorch.toml"):
        (tmp_path / name).write_text((KIT / "config" / name).read_text())
    path = tmp_path / "rocm.toml"
    path.write_text(path.read_text().replace("llvm_major = 0", "llvm_major = -1", 1))
    with pytest.raises(ConfigError) as info:
        load_rocm_releases(tmp_path)
    assert 'llvm_major is -1' in info.value.what


# -------------------------------------------------------------- the version a ref really is


@pytest.mark.parametrize(
    ("ref", "tree_version", "row", "ref_version", "tracks_main"),
    [
        ("v2.9.1", "", "2.9", "2.9.1", False),
        ("v2.13.0-rc2", "", "2.13", "2.13.0", False),
        ("release/2.9", "", "2.9", "", False),
        (SHA, "", "2.17", "", True),
        ("main", "", "2.17", "", True),
        ("oom", "", "2.17", "", True),
        ("oom", "2.9.1", "2.9", "2.9.1", False),
        (SHA, "2.10.0a0", "2.10", "2.10.0a0", False),
        ("main", "2.99.0", "2.17", "2.99.0", True),
        ("v2.9.1", "2.9.1", "2.9", "2.9.1", False),
    ],
)
def test_ref_version_comes_from_the_tree_or_the_tag_never_the_newest_row(
    ref: str, tree_version: str, row: str, ref_version: str, tracks_main: bool
) -> None:
    release = pytorch_release_for(ref, tree_version=tree_version)
    assert (release.version, release.ref_version, release.tracks_main, release.requested) == (
        row, ref_version, tracks_main, ref)


def test_labels_name_the_version_not_the_branch() -> None:
    assert pytorch_release_for("oom", tree_version="2.9.1").label == "PyTorch 2.9.1"
    assert pytorch_release_for("oom").label == (
        "PyTorch at 'oom' (its version.txt decides once checked out; until then the newest "
        "table row, 2.17, is an estimate)")
    assert pytorch_release_for("main", tree_version="2.99.0").label == (
        "PyTorch 2.99.0 (newer than the kit's table; its newest row, 2.17, fills what the tree "
        "does not say)")
    assert pytorch_release_for("release/2.9").label == "PyTorch 2.9"


@pytest.mark.parametrize(
    ("tree_version", "fragment"),
    [("2.3.0", "PyTorch 2.3 (from version.txt 2.3.0) is older than the kit supports"),
     ("two", "version.txt says 'two', which is not a PyTorch version")],
)
def test_a_tree_version_the_table_cannot_use_is_refused(tree_version: str, fragment: str) -> None:
    with pytest.raises(UsageError) as info:
        pytorch_release_for("main", tree_version=tree_version)
    assert fragment in str(info.value)


def test_doctor_never_calls_a_branch_name_a_pytorch_version() -> None:
    from test_doctor import facts, row, system

    old_cmake = system(cmake=ToolVersion(path=Path("/usr/bin/cmake"), version="3.25.1"))
    rows = diagnose(facts(system=old_cmake), (), Settings(pytorch_ref="oom"))
    assert row(rows, "cmake").detail == (
        "cmake 3.25.1 at /usr/bin/cmake is older than 3.27, the minimum for PyTorch at 'oom' "
        "(its version.txt decides once checked out; until then the newest table row, 2.17, is "
        "an estimate)")


def test_hipfile_and_libhipcxx_are_asked_for_only_from_their_rocm() -> None:
    """Issue 31: LoadHIP requires hipfile from ROCm 7.14 and looks for libhipcxx (fetching it on
    ROCm 10); before a checkout the table applies the same ROCm floors."""
    from rocmforge.knowledge.components import components_for

    def named(version: str) -> dict[str, bool]:
        return {c.name: c.required for c in components_for(None, version)}

    assert "hipfile" not in named("7.2.4") and "libhipcxx" not in named("7.2.4")
    assert named("7.14.1")["hipfile"] is True and "libhipcxx" not in named("7.14.1")
    assert (named("10.1.0")["hipfile"], named("10.1.0")["libhipcxx"]) == (True, False)
    assert named("10.1.0")["rocsolver"] is True
