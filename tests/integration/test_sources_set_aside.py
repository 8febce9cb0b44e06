"""`checkout_tree(set_aside=...)`: the build moves a tree the kit edited (patches, hipify) to
another commit by stashing the edits, never discarding them; without it, DirtyTree as before.

Real git over file:// URLs, fake remotes from tests/gitfixtures.py (a submodule reached through
the `mirrors` setting; v2.8.0 pins sub commit s1, v2.9.1 pins s2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitfixtures import SUB_URL, FakeRemotes, build_remotes, commit_files, git, tree_state, url

from rocmforge.sources.checkout import CheckoutResult, DirtyTree, GitFailed, checkout_tree
from rocmforge.steps.checkout import kit_edits_evidence, record_kit_edits, set_aside_line
from rocmforge.workdir import workdir_for

pytestmark = pytest.mark.slow

MESSAGE = "rocmforge: kit edits (patches, hipify) of X before moving to v2.9.1"


@pytest.fixture(scope="module")
def remotes(tmp_path_factory: pytest.TempPathFactory) -> FakeRemotes:
    return build_remotes(tmp_path_factory.mktemp("remotes"))


def _checkout(remotes: FakeRemotes, dest: Path, ref: str, set_aside: str = "") -> CheckoutResult:
    return checkout_tree(
        dest=dest,
        repo=remotes.pytorch_url,
        ref=ref,
        mirrors=remotes.mirrors,
        name="PyTorch",
        set_aside=set_aside,
    )


def _dirty(tree: Path) -> None:
    """What hipify leaves: tracked files edited in place (tree and submodule), new files."""
    (tree / "src/a.py").write_text("def f():\n    return 'hip'\n")
    (tree / "third_party/sub/sub.c").write_text("int one; /* HIP_PLATFORM_AMD */\n")
    (tree / "src/a_hip.py").write_text("hipified\n")
    (tree / "third_party/sub/sub_hip.c").write_text("int hip;\n")


def test_set_aside_stashes_tree_and_submodule_then_moves(
    remotes: FakeRemotes, tmp_path: Path
) -> None:
    tree = tmp_path / "pytorch"
    _checkout(remotes, tree, "v2.8.0")
    _dirty(tree)
    old = git("rev-parse", "HEAD", cwd=tree)

    result = _checkout(remotes, tree, "v2.9.1", set_aside=MESSAGE)

    assert result.changed and result.old_commit == old
    assert result.commit == remotes.tags["v2.9.1"] == git("rev-parse", "HEAD", cwd=tree)
    sub = tree / "third_party/sub"
    assert git("rev-parse", "HEAD", cwd=sub) == remotes.sub_commits["v2.9.1"]
    # Clean at the new commit: no tracked change, no untracked file, in either repository.
    assert git("status", "--porcelain", "--ignore-submodules=none", cwd=tree) == ""
    assert git("status", "--porcelain", cwd=sub) == ""
    assert (tree / "third_party/sub/sub.c").read_text() == "int two;\n"
    assert not (tree / "src/a_hip.py").exists()
    # Submodule first, tree last; each stash is the repository's refs/stash.
    assert [(s.path, s.paths) for s in result.set_aside] == [("third_party/sub", 2), (".", 2)]
    for entry, repo in zip(result.set_aside, (sub, tree), strict=True):
        assert git("rev-parse", "refs/stash", cwd=repo) == entry.stash
        assert git("stash", "list", cwd=repo) == f"stash@{{0}}: On (no branch): {MESSAGE}"
    # The stashes hold the edits (tracked in `stash show -p`, untracked in the third parent).
    assert "+    return 'hip'" in git("stash", "show", "-p", "stash@{0}", cwd=tree)
    assert git("show", "stash@{0}^3:src/a_hip.py", cwd=tree) == "hipified"
    assert "+int one; /* HIP_PLATFORM_AMD */" in git("stash", "show", "-p", "stash@{0}", cwd=sub)
    assert git("show", "stash@{0}^3:sub_hip.c", cwd=sub) == "int hip;"
    assert any("stash push --include-untracked -m" in line for line in result.log)

    # Nothing lost: back at the old commit, `stash pop` restores exactly the edits.
    git("checkout", "-q", old, cwd=tree)
    git("-c", "protocol.file.allow=always", "submodule", "update", "--recursive", cwd=tree)
    git("stash", "pop", cwd=tree)
    git("stash", "pop", cwd=sub)
    assert (tree / "src/a.py").read_text() == "def f():\n    return 'hip'\n"
    assert (sub / "sub.c").read_text() == "int one; /* HIP_PLATFORM_AMD */\n"
    assert (tree / "src/a_hip.py").read_text() == "hipified\n"
    assert (sub / "sub_hip.c").read_text() == "int hip;\n"


def test_without_set_aside_dirty_tree_stops_and_changes_nothing(
    remotes: FakeRemotes, tmp_path: Path
) -> None:
    tree = tmp_path / "pytorch"
    _checkout(remotes, tree, "v2.8.0")
    _dirty(tree)
    before = tree_state(tree)
    sub_before = git("status", "--porcelain", cwd=tree / "third_party/sub")
    with pytest.raises(DirtyTree, match="has local changes") as info:
        _checkout(remotes, tree, "v2.9.1")
    assert info.value.exit_code == 2
    assert tree_state(tree) == before
    assert git("status", "--porcelain", cwd=tree / "third_party/sub") == sub_before
    assert git("stash", "list", cwd=tree) == ""


def test_set_aside_on_same_commit_changes_nothing(remotes: FakeRemotes, tmp_path: Path) -> None:
    """The kit's edits at the commit the build wants are the build's state, not in the way."""
    tree = tmp_path / "pytorch"
    _checkout(remotes, tree, "v2.8.0")
    _dirty(tree)
    before = tree_state(tree)
    result = _checkout(remotes, tree, "v2.8.0", set_aside=MESSAGE)
    assert not result.changed and result.set_aside == ()
    assert tree_state(tree) == before
    assert git("stash", "list", cwd=tree) == ""


def test_failed_checkout_after_stash_rolls_back_and_pops(
    remotes: FakeRemotes, tmp_path: Path
) -> None:
    """The move fails after the stash (a new submodule commit behind a dead mirror): HEAD goes
    back and the stashes are popped, so the tree is exactly as it was."""
    torch, sub = tmp_path / "torch.git", tmp_path / "sub.git"
    git("clone", "-q", "--mirror", remotes.pytorch_url, str(torch), cwd=tmp_path)
    git("clone", "-q", "--mirror", url(remotes.sub), str(sub), cwd=tmp_path)
    sub_wc, torch_wc = tmp_path / "sub-wc", tmp_path / "torch-wc"
    git("clone", "-q", url(sub), str(sub_wc), cwd=tmp_path)
    s3 = commit_files(sub_wc, {"sub.c": "int three;\n"}, "sub 3")
    git("push", "-q", "origin", "HEAD:refs/heads/side", cwd=sub_wc)
    git("clone", "-q", url(torch), str(torch_wc), cwd=tmp_path)
    git("update-index", "--add", "--cacheinfo", f"160000,{s3},third_party/sub", cwd=torch_wc)
    git("commit", "-q", "-m", "bump sub", cwd=torch_wc)
    git("tag", "v2.11.0", cwd=torch_wc)
    git("push", "-q", "origin", "v2.11.0", cwd=torch_wc)

    tree = tmp_path / "pytorch"
    checkout_tree(dest=tree, repo=url(torch), ref="v2.8.0", mirrors={SUB_URL: url(sub)})
    _dirty(tree)
    before = tree_state(tree)
    sub_before = git("status", "--porcelain", cwd=tree / "third_party/sub")
    broken = {SUB_URL: (tmp_path / "no-such-mirror.git").as_uri()}
    with pytest.raises(GitFailed, match="Cannot fetch the submodules of PyTorch") as info:
        checkout_tree(
            dest=tree,
            repo=url(torch),
            ref="v2.11.0",
            mirrors=broken,
            name="PyTorch",
            set_aside=MESSAGE,
        )
    assert "could not be restored" not in info.value.paragraph()
    assert tree_state(tree) == before
    assert git("status", "--porcelain", cwd=tree / "third_party/sub") == sub_before
    assert (tree / "src/a_hip.py").read_text() == "hipified\n"
    assert git("stash", "list", cwd=tree) == ""
    assert git("stash", "list", cwd=tree / "third_party/sub") == ""


def test_kit_edits_evidence_from_record_or_stamps(tmp_path: Path) -> None:
    from rocmforge.execute.stamps import Stamp, write_stamp

    work = workdir_for(str(tmp_path / "work"))
    head = "a" * 40
    assert kit_edits_evidence(work, head) == ""  # a tree the kit never edited
    record_kit_edits(work, head)
    assert kit_edits_evidence(work, head).endswith(f"kit-edits.json names {'a' * 12}")
    assert kit_edits_evidence(work, "b" * 40) == ""  # the record is of another commit
    write_stamp(work.state, Stamp(step="hipify", digest="d", finished="t", duration_s=1.0))
    assert kit_edits_evidence(work, "b" * 40) == (
        f"the hipify step has a stamp in {work.state / 'stamps'}"
    )


def test_set_aside_line_names_stashes_and_how_to_restore(tmp_path: Path) -> None:
    from rocmforge.sources.checkout import SetAsideStash

    tree = tmp_path / "src" / "pytorch"
    line = set_aside_line(
        tree,
        (
            SetAsideStash(path="third_party/sub", paths=2, stash="s" * 40),
            SetAsideStash(path=".", paths=5, stash="t" * 40),
        ),
        "c" * 40,
        "why",
    )
    assert "\n" not in line
    assert "2 paths in third_party/sub, 5 paths in the tree" in line
    assert f"`git -C {tree} stash list`" in line
    assert f"`git -C {tree} checkout {'c' * 40}`" in line and f"`git -C {tree} stash pop`" in line


def test_set_aside_line_says_whose_edits_they_are(tmp_path: Path) -> None:
    """Issue 30 item 12: with the user's own edits on top of the kit's, the line said "the
    kit's edits … 4 paths", two of which were the user's."""
    from rocmforge.sources.checkout import SetAsideStash

    stashes = (SetAsideStash(path=".", paths=4, stash="s" * 40),)
    mixed = set_aside_line(tmp_path, stashes, "c" * 40, "why", "yours and the kit's")
    assert mixed.startswith("set aside yours and the kit's edits of cccccccccccc (why)")
    assert set_aside_line(tmp_path, stashes, "c" * 40, "why").startswith(
        "set aside the kit's edits of")


def test_user_edits_names_what_the_kit_did_not_edit(remotes: FakeRemotes, tmp_path: Path) -> None:
    """Issue 41 item 3: the record hipify writes names each file the kit left edited; a file
    added, changed or removed since is the user's and is named, submodule files with their
    submodule's path."""
    from rocmforge.sources.checkout import tree_entries
    from rocmforge.sources.checkout import tree_state as state_of
    from rocmforge.steps.checkout import user_edits

    work = workdir_for(str(tmp_path / "work"))
    tree = work.pytorch
    _checkout(remotes, tree, "v2.8.0")
    head = git("rev-parse", "HEAD", cwd=tree)
    _dirty(tree)
    assert user_edits(work, head) == ()  # nothing recorded: cannot tell, set aside as today
    record_kit_edits(work, head)
    assert user_edits(work, head) == ()  # an unfinished kit edit: the same
    record_kit_edits(work, head, state=state_of(tree), entries=tree_entries(tree))
    assert user_edits(work, head) == ()  # exactly as the kit left it
    assert user_edits(work, "f" * 40) == ()  # a record of another commit says nothing
    (tree / "src/a_hip.py").write_text("hipified, then mine\n")
    (tree / "third_party/sub/mine.c").write_text("int mine;\n")
    (tree / "third_party/sub/sub.c").unlink()  # a tracked file the kit edited, removed
    (tree / "third_party/sub/sub_hip.c").unlink()  # the kit wrote it: nothing is lost
    assert sorted(user_edits(work, head)) == [
        "src/a_hip.py", "third_party/sub/mine.c", "third_party/sub/sub.c"]
    git("checkout", "--", "src/a.py", cwd=tree)  # a kit edit back at the commit: nobody's
    assert "src/a.py" not in user_edits(work, head)


def test_user_edits_compare_content_and_read_an_older_size_mtime_record(
    remotes: FakeRemotes, tmp_path: Path
) -> None:
    """Defect 6: entries hold git's blob id (what `git hash-object` prints), so a new mtime
    with the same bytes is nobody's edit. A record written before (size:mtime_ns) still reads
    as it did: a file as the kit left it is the kit's, a changed one the user's."""
    import json
    import os

    from rocmforge.sources.checkout import content_facts, tree_entries
    from rocmforge.sources.checkout import tree_state as state_of
    from rocmforge.steps.checkout import user_edits

    work = workdir_for(str(tmp_path / "work"))
    tree = work.pytorch
    _checkout(remotes, tree, "v2.8.0")
    head = git("rev-parse", "HEAD", cwd=tree)
    _dirty(tree)
    a = tree / "src/a.py"
    assert content_facts(a) == "blob:" + git("hash-object", "src/a.py", cwd=tree)
    assert content_facts(tree / "src/none.py") == "gone"
    record_kit_edits(work, head, state=state_of(tree), entries=tree_entries(tree))
    state = state_of(tree)
    info = a.stat()
    os.utime(a, ns=(info.st_atime_ns, info.st_mtime_ns + 7_000_000_000))
    assert user_edits(work, head) == ()
    assert state_of(tree) == state
    # The older record: size:mtime_ns per entry.
    path = work.state / "kit-edits.json"
    doc = json.loads(path.read_text())
    for entry in doc["entries"]:
        found = (tree / entry[0] / entry[1]).lstat()
        entry[2] = f"{found.st_size}:{found.st_mtime_ns}"
    path.write_text(json.dumps(doc))
    assert user_edits(work, head) == ()
    (tree / "src/a_hip.py").write_text("hipified, then mine\n")
    assert user_edits(work, head) == ("src/a_hip.py",)
