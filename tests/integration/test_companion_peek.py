"""The build's early pairing of a companion at a branch or commit (sources.companion_peek), with
real git repositories: the version.txt a ref holds is read by a shallow fetch into a scratch
repository; a mismatch is refused naming both versions; an unreachable remote is a note (the
checkout step reports it), never a pass or a crash."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitfixtures import git

from rocmforge.errors import UsageError
from rocmforge.knowledge.companions import CompanionChoice, load_companions
from rocmforge.sources.companion_peek import check_companion_refs, peek_version


@pytest.fixture()
def vision(tmp_path: Path) -> Path:
    repo = tmp_path / "vision"
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    (repo / "version.txt").write_text("0.24.0a0\n")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "0.24", cwd=repo)
    git("checkout", "-q", "-b", "old", cwd=repo)
    (repo / "version.txt").write_text("0.23.0a0\n")
    git("commit", "-q", "-am", "0.23", cwd=repo)
    git("checkout", "-q", "main", cwd=repo)
    return repo


def _choice(repo: str, ref: str) -> CompanionChoice:
    return CompanionChoice(name="torchvision", package="torchvision", repo=repo, ref=ref,
                           origin="ref")


@pytest.mark.needs_tool("git")
def test_peek_reads_the_version_at_a_branch_and_a_commit(vision: Path) -> None:
    assert peek_version(vision.as_uri(), "main") == "0.24.0a0"
    assert peek_version(vision.as_uri(), "old") == "0.23.0a0"
    assert peek_version(str(vision), git("rev-parse", "old", cwd=vision)) == "0.23.0a0"
    assert peek_version(vision.as_uri(), "no-such-branch") == ""
    assert peek_version((vision.parent / "missing").as_uri(), "main") == ""


@pytest.mark.needs_tool("git")
def test_a_branch_for_another_torch_is_refused_with_both_versions(vision: Path) -> None:
    table = load_companions()
    with pytest.raises(UsageError) as info:
        check_companion_refs([_choice(vision.as_uri(), "main")], "2.8.0", table)
    assert info.value.what == ("torchvision 0.24.0a0 (the ref main, whose version.txt says "
                               "0.24.0a0) needs torch ==2.9.*, but this build makes torch 2.8.0")
    assert info.value.exit_code == 2
    # The branch whose version pairs with 2.8 passes, with no note.
    assert check_companion_refs([_choice(vision.as_uri(), "old")], "2.8.0", table) == []


@pytest.mark.needs_tool("git")
def test_what_cannot_be_read_is_a_note_and_tags_and_unknown_torch_are_not_peeked(
        vision: Path) -> None:
    table = load_companions()
    missing = (vision.parent / "missing").as_uri()
    assert check_companion_refs([_choice(missing, "main")], "2.8.0", table) == [
        f"torchvision: could not read version.txt at main from {missing} before the build; "
        "the pairing step checks it after the checkout"]
    asked: list[tuple[str, str]] = []

    def peek(repo: str, ref: str) -> str:
        asked.append((repo, ref))
        return "0.24.0a0"

    tagged = CompanionChoice(name="torchvision", package="torchvision", repo="r", ref="v0.23.0",
                             version="0.23.0", origin="ref")
    check_companion_refs([tagged], "2.8.0", table, peek=peek)  # the plan checked the tag
    check_companion_refs([_choice("r", "main")], "", table, peek=peek)  # torch not known yet
    assert asked == []
