"""The patch series: header parsing, selection by version, apply/check/revert all-or-nothing,
already-applied, absorbed-upstream and stale patches. Patches are made with `git format-patch`."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitfixtures import FakeRemotes, build_remotes, make_patch, tree_state

from rocmforge.settings import Settings
from rocmforge.sources import checkout_pytorch, patch_sources
from rocmforge.sources.patches import PatchError, load_series, parse_header, select

pytestmark = pytest.mark.slow

HEADER = "Applies-To: >=2.9,<2.11\nWhy: {why}\nUpstream: submitted https://github.com/pytorch/pytorch/pull/1"
A_PY = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"


@pytest.fixture(scope="module")
def remotes(tmp_path_factory: pytest.TempPathFactory) -> FakeRemotes:
    return build_remotes(tmp_path_factory.mktemp("remotes"))


@pytest.fixture(scope="module")
def patch_files(remotes: FakeRemotes, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Patch files, made once, copied into each test's own patches/ folder."""
    work = tmp_path_factory.mktemp("patchsrc")
    # name: (the ref it is made against, the files it writes, its header)
    made = {
        "f": ("v2.9.1", {"src/a.py": A_PY.replace("1", "10")},
              HEADER.format(why="f must return 10")),
        "g": ("v2.9.1", {"src/a.py": A_PY.replace("2", "20")},
              HEADER.format(why="g must return 20")),
        "old": ("v2.8.0", {"src/a.py": "old\n"},
                "Applies-To: <2.9\nWhy: only old\nUpstream: local"),
        "stale": ("main", {"version.txt": "2.10.0+x\n"}, HEADER.format(why="was for main")),
        "absorbed": ("v2.8.0", {"version.txt": "2.9.1\n"},
                     "Applies-To: >=2.8\nWhy: bump\nUpstream: merged https://x.invalid/1"),
    }
    return {name: make_patch(remotes.pytorch, ref, files, header,
                             work / "made" / f"{name}.patch", work=work)
            for name, (ref, files, header) in made.items()}


def series(root: Path, files: dict[str, Path], names: list[str]) -> Path:
    folder = root / "patches" / "pytorch"
    folder.mkdir(parents=True)
    for i, name in enumerate(names, start=1):
        (folder / f"{i:04d}-{name}.patch").write_bytes(files[name].read_bytes())
    return root / "patches"


@pytest.fixture
def tree(remotes: FakeRemotes, tmp_path: Path) -> tuple[Settings, Path]:
    s = Settings(
        work_dir=str(tmp_path / "w"),
        pytorch_repo=remotes.pytorch_url,
        pytorch_ref="v2.9.1",
        mirrors=remotes.mirrors,
    )
    checkout_pytorch(s, patches_root=tmp_path / "none")
    return s, tmp_path / "w" / "src" / "pytorch"


# ------------------------------------------------------------------------------------- headers


def test_header_parsed_from_format_patch(patch_files: dict[str, Path]) -> None:
    header = parse_header(patch_files["f"].read_text(), source="f")
    assert str(header.applies_to) == "<2.11,>=2.9"
    assert header.why == "f must return 10"
    assert (header.upstream_status, header.upstream_url) == (
        "submitted",
        "https://github.com/pytorch/pytorch/pull/1",
    )


@pytest.mark.parametrize(
    ("header", "problem"),
    [
        ("Why: x\nUpstream: local", "missing or empty Applies-To"),
        ("Applies-To: >=2.9\nUpstream: local", "missing or empty Why"),
        ("Applies-To: 2.9 or later\nWhy: x\nUpstream: local", "is not a version specifier"),
        ("Applies-To: >=2.9\nWhy: x\nUpstream: maybe", "Upstream status 'maybe' is not one of"),
        ("Applies-To: >=2.9\nWhy: x\nUpstream: submitted", "needs the URL"),
        ("Applies-To: >=2.9\nApplies-To: <3\nWhy: x\nUpstream: local", "Applies-To appears twice"),
    ],
)
def test_malformed_headers(header: str, problem: str) -> None:
    text = f"Subject: [PATCH] x\n\n{header}\n---\ndiff --git a/x b/x\n"
    with pytest.raises(PatchError, match=problem) as info:
        parse_header(text, source="p")
    assert info.value.exit_code == 2


def test_selection_by_version(tmp_path: Path, patch_files: dict[str, Path]) -> None:
    root = series(tmp_path, patch_files, ["f", "old", "g"])
    loaded = load_series(root, "pytorch")
    assert [p.name for p in loaded] == ["0001-f.patch", "0002-old.patch", "0003-g.patch"]
    assert [p.name for p in select(loaded, "2.9.1")] == ["0001-f.patch", "0003-g.patch"]
    assert [p.name for p in select(loaded, "2.10.0a0")] == ["0001-f.patch", "0003-g.patch"]
    assert [p.name for p in select(loaded, "2.8.0a0")] == ["0002-old.patch"]


def test_bad_file_name(tmp_path: Path, patch_files: dict[str, Path]) -> None:
    folder = tmp_path / "pytorch"
    folder.mkdir()
    (folder / "fix.patch").write_bytes(patch_files["f"].read_bytes())
    with pytest.raises(PatchError, match="does not follow NNNN-name.patch"):
        load_series(tmp_path, "pytorch")


# -------------------------------------------------------------------------------------- apply


def test_apply_twice_and_revert(
    tree: tuple[Settings, Path], tmp_path: Path, patch_files: dict[str, Path]
) -> None:
    settings, path = tree
    root = series(tmp_path, patch_files, ["f", "old", "g"])
    clean = tree_state(path)
    (report,) = patch_sources(settings, patches_root=root)
    assert report.changed == ("0001-f.patch", "0003-g.patch")
    assert (path / "src/a.py").read_text() == A_PY.replace("1", "10").replace("2", "20")
    patched = tree_state(path)
    (again,) = patch_sources(settings, patches_root=root)
    assert again.changed == () and [s.state for s in again.statuses] == ["applied", "applied"]
    assert tree_state(path) == patched
    (checked,) = patch_sources(settings, patches_root=root, check_only=True, revert=True)
    assert checked.changed == () and tree_state(path) == patched
    (reverted,) = patch_sources(settings, patches_root=root, revert=True)
    assert reverted.changed == ("0003-g.patch", "0001-f.patch")
    assert tree_state(path) == clean


def test_check_changes_nothing(
    tree: tuple[Settings, Path], tmp_path: Path, patch_files: dict[str, Path]
) -> None:
    settings, path = tree
    root = series(tmp_path, patch_files, ["f"])
    before = tree_state(path)
    (report,) = patch_sources(settings, patches_root=root, check_only=True)
    assert [s.state for s in report.statuses] == ["applies"] and report.changed == ()
    assert tree_state(path) == before


def test_stale_patch_stops_everything(
    tree: tuple[Settings, Path], tmp_path: Path, patch_files: dict[str, Path]
) -> None:
    settings, path = tree
    root = series(tmp_path, patch_files, ["f", "stale"])
    before = tree_state(path)
    with pytest.raises(PatchError, match="stale: 0002-stale.patch \\(was for main\\)") as info:
        patch_sources(settings, patches_root=root)
    assert info.value.exit_code == 2
    assert tree_state(path) == before  # 0001 was not applied either


def test_absorbed_upstream_is_reported_and_skipped(
    tree: tuple[Settings, Path], tmp_path: Path, patch_files: dict[str, Path]
) -> None:
    settings, path = tree
    root = series(tmp_path, patch_files, ["absorbed", "f"])
    (report,) = patch_sources(settings, patches_root=root)
    assert [(s.patch.name, s.state) for s in report.statuses] == [
        ("0001-absorbed.patch", "absorbed"),
        ("0002-f.patch", "applies"),
    ]
    assert report.changed == ("0002-f.patch",)


def test_malformed_header_changes_nothing(
    tree: tuple[Settings, Path], tmp_path: Path, patch_files: dict[str, Path]
) -> None:
    settings, path = tree
    root = series(tmp_path, patch_files, ["f"])
    text = patch_files["g"].read_text().replace("Why: g must return 20\n", "")
    (root / "pytorch" / "0002-g.patch").write_text(text)
    before = tree_state(path)
    with pytest.raises(
        PatchError, match="Malformed patch header .*0002-g.patch: missing or empty Why"
    ):
        patch_sources(settings, patches_root=root)
    assert tree_state(path) == before


def test_conflicting_local_edit_makes_patch_not_apply(
    tree: tuple[Settings, Path], tmp_path: Path, patch_files: dict[str, Path]
) -> None:
    settings, path = tree
    root = series(tmp_path, patch_files, ["f"])
    (path / "src/a.py").write_text("def f():\n    return 99\n")
    before = tree_state(path)
    with pytest.raises(PatchError, match="stale: 0001-f.patch"):
        patch_sources(settings, patches_root=root)
    assert tree_state(path) == before
