"""rocmforge.lock: TOML quoting, atomic write, and the round trip checkout -> lock -> fresh
checkout from the lock -> identical trees."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from gitfixtures import FakeRemotes, build_remotes, make_patch, tree_state

from rocmforge.settings import Settings
from rocmforge.sources import checkout_pytorch
from rocmforge.sources.lockfile import (
    Lock,
    LockedCompanion,
    LockedPatch,
    LockedSubmodule,
    LockError,
    read_lock,
    render_lock,
    toml_string,
    write_lock,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@pytest.fixture(scope="module")
def remotes(tmp_path_factory: pytest.TempPathFactory) -> FakeRemotes:
    return build_remotes(tmp_path_factory.mktemp("remotes"))


def test_toml_string_quotes_everything_tomllib_reads_back() -> None:
    nasty = 'a "quoted" \\ back\nline\ttab \x01 ü'
    assert tomllib.loads(f"x = {toml_string(nasty)}")["x"] == nasty


def test_render_and_read_round_trip(tmp_path: Path) -> None:
    lock = Lock(
        pytorch_repo="https://github.com/pytorch/pytorch.git",
        pytorch_ref="v2.9.1",
        pytorch_commit="a" * 40,
        submodules=(LockedSubmodule(path='third_party/we"ird', commit="b" * 40),),
        triton_repo="https://github.com/triton-lang/triton.git",
        triton_commit="c" * 40,
        triton_version="3.5.1",
        patches=(LockedPatch(project="pytorch", file="pytorch/0001-x.patch", sha256="d" * 64),),
    )
    path = tmp_path / "rocmforge.lock"
    write_lock(path, lock)
    assert read_lock(path) == lock
    assert render_lock(lock) == path.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["rocmforge.lock"]  # no temp file left


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("schema = 2\n", "schema is 2"),
        ("schema = 1\n", "no \\[pytorch\\] table"),
        (
            'schema = 1\n[pytorch]\nrepo = "r"\ncommit = "abc"\n',
            "pytorch.commit = 'abc' is not a full",
        ),
        ("schema = [\n", "not valid TOML"),
        (
            'schema = 1\n[pytorch]\nrepo = "r"\ncommit = "' + "a" * 40 + '"\n'
            '[[companions]]\nname = "torchvision"\nrepo = "r"\ncommit = "v0.23.0"\n',
            "companions.commit = 'v0.23.0' is not a full",
        ),
        (
            'schema = 1\n[pytorch]\nrepo = "r"\ncommit = "' + "a" * 40 + '"\n'
            + ('[[companions]]\nname = "torchvision"\nrepo = "r"\ncommit = "' + "b" * 40
               + '"\n') * 2,
            "a companion is named twice",
        ),
    ],
)
def test_bad_lock_files(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "l.lock"
    path.write_text(text)
    with pytest.raises(LockError, match=problem):
        read_lock(path)


def test_companions_round_trip_and_a_lock_without_them_reads_as_none(tmp_path: Path) -> None:
    vision = LockedCompanion(
        name="torchvision", repo="https://github.com/pytorch/vision.git", ref="v0.23.0",
        commit="e" * 40, version="0.23.0a0",
        patches=(LockedPatch(project="torchvision", file="torchvision/0001-x.patch",
                             sha256="f" * 64),))
    audio = LockedCompanion(name="torchaudio", repo="r", ref="v2.8.0", commit="1" * 40)
    base = Lock(pytorch_repo="r", pytorch_ref="v2.8.0", pytorch_commit="a" * 40,
                patches=(LockedPatch(project="pytorch", file="pytorch/0001-y.patch",
                                     sha256="d" * 64),))
    lock = base.with_companion(vision, ("torchvision",)).with_companion(
        audio, ("torchvision", "torchaudio"))
    path = tmp_path / "rocmforge.lock"
    write_lock(path, lock)
    assert read_lock(path) == lock
    assert [c.name for c in lock.companions] == ["torchvision", "torchaudio"]
    assert [p.file for p in lock.all_patches()] == ["pytorch/0001-y.patch",
                                                    "torchvision/0001-x.patch"]
    doc = tomllib.loads(path.read_text())
    assert doc["companions"][0]["patches"] == [
        {"project": "torchvision", "file": "torchvision/0001-x.patch", "sha256": "f" * 64}]
    # A new torchvision commit replaces the entry in place; a companion this build does not
    # make (torchaudio) is dropped.
    moved = LockedCompanion(name="torchvision", repo="r", ref="v0.23.0", commit="2" * 40)
    assert lock.with_companion(moved, ("torchvision",)).companions == (moved,)
    # A lock of an older kit (no [[companions]]) reads as a lock without companions.
    write_lock(path, base)
    assert "companions" not in path.read_text()
    assert read_lock(path).companions == ()


def _demo_patch(remotes: FakeRemotes, tmp_path: Path, patches: Path) -> Path:
    """One patch of the kit's series, made with git format-patch against v2.9.1."""
    return make_patch(
        remotes.pytorch,
        "v2.9.1",
        {"src/a.py": "x = 1\n"},
        "Applies-To: >=2.9\nWhy: demo\nUpstream: local",
        patches / "pytorch" / "0001-demo.patch",
        work=tmp_path,
    )


def _settings(remotes: FakeRemotes, work: Path, ref: str) -> Settings:
    return Settings(
        work_dir=str(work), pytorch_repo=remotes.pytorch_url, pytorch_ref=ref,
        mirrors=remotes.mirrors,
    )


@pytest.mark.slow
def test_lock_round_trip(remotes: FakeRemotes, tmp_path: Path) -> None:
    patches = tmp_path / "patches"
    _demo_patch(remotes, tmp_path, patches)
    first = _settings(remotes, tmp_path / "a", "v2.9.1")
    _, lock, lock_file = checkout_pytorch(first, patches_root=patches)
    assert lock.pytorch_commit == remotes.tags["v2.9.1"]
    assert [(s.path, s.commit) for s in lock.submodules] == [
        ("third_party/sub", remotes.sub_commits["v2.9.1"])
    ]
    assert lock.triton_commit == remotes.triton_commits[1] and lock.triton_version == "3.5.1"
    assert [p.file for p in lock.patches] == ["pytorch/0001-demo.patch"]

    # Fresh work dir, different ref in the settings: the lock's commits win.
    second = _settings(remotes, tmp_path / "b", "v2.8.0")
    result, _, lock_b = checkout_pytorch(second, lock_path=lock_file, patches_root=patches)
    assert result.commit == lock.pytorch_commit
    assert tree_state(tmp_path / "a/src/pytorch") == tree_state(tmp_path / "b/src/pytorch")
    assert lock_b.read_text() == lock_file.read_text()


@pytest.mark.slow
def test_lock_with_changed_patch_changes_nothing(remotes: FakeRemotes, tmp_path: Path) -> None:
    patches = tmp_path / "patches"
    patch = _demo_patch(remotes, tmp_path, patches)
    s = _settings(remotes, tmp_path / "a", "v2.9.1")
    _, _, lock_file = checkout_pytorch(s, patches_root=patches)
    patch.write_text(patch.read_text() + "\n")
    fresh = _settings(remotes, tmp_path / "b", "v2.9.1")
    with pytest.raises(LockError, match="changed since"):
        checkout_pytorch(fresh, lock_path=lock_file, patches_root=patches)
    assert not (tmp_path / "b").exists()
