"""Checkout of PyTorch (and Triton) at a ref: real git over file:// URLs, fake remotes from
tests/gitfixtures.py. Every bad input must leave the tree exactly as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitfixtures import SUB_URL, FakeRemotes, build_remotes, commit_files, git, tree_state, url

from rocmforge.errors import RocmforgeError
from rocmforge.settings import Settings
from rocmforge.sources import checkout_pytorch, checkout_triton, resolve_pytorch_ref
from rocmforge.sources.checkout import (
    DirtyTree,
    RefNotFound,
    checkout_tree,
    fetch_argv,
    git_config_for,
    ls_remote_argv,
    nearest_tags,
    parse_ls_remote,
    parse_submodule_status,
)
from rocmforge.sources.git import GitFailed

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def remotes(tmp_path_factory: pytest.TempPathFactory) -> FakeRemotes:
    return build_remotes(tmp_path_factory.mktemp("remotes"))


def settings(remotes: FakeRemotes, work: Path, **kw: object) -> Settings:
    base: dict[str, object] = {
        "work_dir": str(work),
        "pytorch_repo": remotes.pytorch_url,
        "pytorch_ref": "v2.9.1",
        "mirrors": remotes.mirrors,
        "triton_repo": url(remotes.triton),
    }
    base.update(kw)
    return Settings(**base)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------ pure parts


def test_mirror_config_rewrites_and_allows_file_only_for_local_mirrors() -> None:
    assert git_config_for("https://github.com/pytorch/pytorch.git", {}) == ()
    assert git_config_for(
        "https://github.com/pytorch/pytorch.git", {"https://github.com/x/y.git": "file:///m/y.git"}
    ) == (
        ("url.file:///m/y.git.insteadOf", "https://github.com/x/y.git"),
        ("protocol.file.allow", "always"),
    )


def test_parse_ls_remote_peels_annotated_tags_and_finds_branches() -> None:
    out = (
        "a" * 40
        + "\trefs/tags/v2.9.1\n"
        + "b" * 40
        + "\trefs/tags/v2.9.1^{}\n"
        + "c" * 40
        + "\trefs/heads/release/2.9\n"
    )
    tag = parse_ls_remote(out, "v2.9.1")
    assert tag is not None and (tag.kind, tag.commit) == ("tag", "b" * 40)
    assert tag.refspec == "+refs/tags/v2.9.1:refs/tags/v2.9.1"
    branch = parse_ls_remote(out, "release/2.9")
    assert branch is not None and branch.kind == "branch" and branch.commit == "c" * 40
    assert parse_ls_remote(out, "v9.9.9") is None


def test_fetch_argv_is_shallow_and_exact() -> None:
    ref = parse_ls_remote("d" * 40 + "\trefs/tags/v2.8.0\n", "v2.8.0")
    assert ref is not None
    assert fetch_argv("file:///r", ref, shallow=True) == (
        "fetch",
        "--quiet",
        "--no-tags",
        "--depth",
        "1",
        "--",
        "file:///r",
        "+refs/tags/v2.8.0:refs/tags/v2.8.0",
    )


def test_parse_submodule_status() -> None:
    out = f" {'a' * 40} third_party/sub (heads/main)\n-{'b' * 40} third_party/other dir\n"
    states = parse_submodule_status(out)
    assert [(s.flag, s.path, s.commit) for s in states] == [
        (" ", "third_party/sub", "a" * 40),
        ("-", "third_party/other dir", "b" * 40),
    ]


# ------------------------------------------------------------------------------------- real git


def test_checkout_tag_with_submodule_through_mirror(remotes: FakeRemotes, tmp_path: Path) -> None:
    result, lock, lock_file = checkout_pytorch(settings(remotes, tmp_path))
    tree = tmp_path / "src" / "pytorch"
    assert result.commit == remotes.tags["v2.9.1"] == git("rev-parse", "HEAD", cwd=tree)
    assert (tree / "third_party/sub/sub.c").read_text() == "int two;\n"
    assert [(s.path, s.commit) for s in result.submodules] == [
        ("third_party/sub", remotes.sub_commits["v2.9.1"])
    ]
    # Shallow: only the tagged commit came over.
    assert git("rev-parse", "--is-shallow-repository", cwd=tree) == "true"
    # The mirror is not written anywhere: .gitmodules is untouched, the tree is clean.
    assert SUB_URL in (tree / ".gitmodules").read_text()
    assert git("status", "--porcelain", cwd=tree) == ""
    assert lock_file.is_file() and lock.triton_commit == remotes.triton_commits[1]


def test_same_ref_again_runs_no_fetch(remotes: FakeRemotes, tmp_path: Path) -> None:
    checkout_pytorch(settings(remotes, tmp_path))
    again, _, _ = checkout_pytorch(settings(remotes, tmp_path))
    assert again.changed is False
    assert not any(" fetch " in line for line in again.log)


def test_different_ref_updates_in_place(remotes: FakeRemotes, tmp_path: Path) -> None:
    checkout_pytorch(settings(remotes, tmp_path))
    tree = tmp_path / "src" / "pytorch"
    result, _, _ = checkout_pytorch(settings(remotes, tmp_path, pytorch_ref="v2.8.0"))
    assert result.changed and result.commit == remotes.tags["v2.8.0"]
    assert (tree / "third_party/sub/sub.c").read_text() == "int one;\n"
    branch, _, _ = checkout_pytorch(settings(remotes, tmp_path, pytorch_ref="main"))
    assert branch.commit == remotes.main_commit
    assert (tree / "version.txt").read_text() == "2.10.0a0\n"


def test_dirty_tree_stops_and_says_how_to_keep(remotes: FakeRemotes, tmp_path: Path) -> None:
    checkout_pytorch(settings(remotes, tmp_path))
    tree = tmp_path / "src" / "pytorch"
    (tree / "src/a.py").write_text("local edit\n")
    before = tree_state(tree)
    with pytest.raises(DirtyTree) as info:
        checkout_pytorch(settings(remotes, tmp_path, pytorch_ref="v2.8.0"))
    assert tree_state(tree) == before
    text = info.value.paragraph()
    assert "has local changes (1 path: src/a.py)" in text
    assert f"git -C {tree} stash push" in text and "reset --hard" in text
    assert info.value.exit_code == 2


def test_missing_ref_changes_nothing(remotes: FakeRemotes, tmp_path: Path) -> None:
    checkout_pytorch(settings(remotes, tmp_path))
    tree = tmp_path / "src" / "pytorch"
    before = tree_state(tree)
    with pytest.raises(RefNotFound, match="'v9.9.9' is not a tag, branch or full commit"):
        checkout_pytorch(settings(remotes, tmp_path, pytorch_ref="v9.9.9"))
    assert tree_state(tree) == before
    with pytest.raises(RefNotFound, match="short commit hash"):
        checkout_pytorch(settings(remotes, tmp_path, pytorch_ref=remotes.tags["v2.8.0"][:10]))


def test_nearest_release_tags_by_version_else_the_newest() -> None:
    tags = ["v2.7.0", "v2.7.1", "v2.8.0", "v2.9.0", "v2.9.1", "v2.10.0-rc1", "ciflow/x/1"]
    assert nearest_tags(tags, "v9.9.9") == ("v2.9.1", "v2.9.0", "v2.8.0")
    assert nearest_tags(tags, "v2.8.1") == ("v2.9.0", "v2.8.0", "v2.7.1")
    assert nearest_tags(tags, "mian") == ("v2.9.1", "v2.9.0", "v2.8.0")
    assert nearest_tags(["v2.10.0-rc1"], "v2.9.1") == ("v2.10.0-rc1",)  # no final release
    assert nearest_tags(["ciflow/x/1"], "v2.9.1") == ()


def test_ref_is_resolved_in_one_round_trip_naming_the_nearest_tags(
    remotes: FakeRemotes, tmp_path: Path
) -> None:
    """The build's check before any step (review defect): one `git ls-remote`, the ref as a
    tag (peeled) or branch and the release tags in the same answer; nothing is written."""
    assert ls_remote_argv("U", "v2.9.2") == (
        "ls-remote", "--", "U", "refs/tags/v2.9.2", "refs/tags/v2.9.2^{}", "refs/heads/v2.9.2",
        "refs/tags/v*")
    found = resolve_pytorch_ref(settings(remotes, tmp_path))
    assert found is not None and found.commit == remotes.tags["v2.9.1"]
    with pytest.raises(RefNotFound) as info:
        resolve_pytorch_ref(settings(remotes, tmp_path, pytorch_ref="v2.9.2"))
    assert info.value.exit_code == 2
    assert info.value.paragraph() == (
        f"'v2.9.2' is not a tag, branch or full commit of {remotes.pytorch_url}; it has "
        "v2.9.1, v2.8.0, v2.4.0. The kit checks out only refs the remote really has. Fix: pass "
        "an existing tag (e.g. v2.9.1), branch, or 40-hex commit with --ref (or the "
        "pytorch_ref setting).")
    assert list(tmp_path.iterdir()) == []


def test_a_missing_default_ref_names_a_tag_the_remote_has(tmp_path: Path) -> None:
    """Review defect: the default v2.9.1 missing on a remote (an old mirror) was answered
    "pass an existing tag (e.g. v2.9.1)", the very ref it could not find."""
    from gitfixtures import new_repo

    from rocmforge.settings import defaults_from_config

    remote = new_repo(tmp_path / "old-mirror")
    commit_files(remote, {"version.txt": "2.8.0a0\n"}, "2.8")
    git("tag", "v2.8.0", cwd=remote)
    default = str(defaults_from_config()["pytorch_ref"])
    assert default == "v2.9.1"  # config/defaults.toml
    with pytest.raises(RefNotFound) as info:
        resolve_pytorch_ref(Settings(work_dir=str(tmp_path / "w"), pytorch_repo=str(remote),
                                     pytorch_ref=default))
    text = info.value.paragraph()
    assert "it has v2.8.0." in text and "e.g. v2.8.0" in text and "v2.9.1)" not in text


def test_missing_ref_on_fresh_checkout_leaves_no_directory(
    remotes: FakeRemotes, tmp_path: Path
) -> None:
    with pytest.raises(RefNotFound, match="^'nope' is not a tag, branch or full commit of "):
        checkout_pytorch(settings(remotes, tmp_path, pytorch_ref="nope"))
    assert not (tmp_path / "src" / "pytorch").exists()


def test_unreachable_mirror_rolls_back(remotes: FakeRemotes, tmp_path: Path) -> None:
    # Private copies: a new PyTorch commit needs a submodule commit no local clone has yet.
    torch, sub = tmp_path / "torch.git", tmp_path / "sub.git"
    git("clone", "-q", "--mirror", remotes.pytorch_url, str(torch), cwd=tmp_path)
    git("clone", "-q", "--mirror", url(remotes.sub), str(sub), cwd=tmp_path)
    s = settings(
        remotes,
        tmp_path / "w",
        pytorch_repo=url(torch),
        pytorch_ref="main",
        mirrors={SUB_URL: url(sub)},
    )
    checkout_pytorch(s)
    tree = tmp_path / "w" / "src" / "pytorch"
    sub_wc, torch_wc = tmp_path / "sub-wc", tmp_path / "torch-wc"
    git("clone", "-q", url(sub), str(sub_wc), cwd=tmp_path)
    s3 = commit_files(sub_wc, {"sub.c": "int three;\n"}, "sub 3")
    git("push", "-q", "origin", "HEAD:main", cwd=sub_wc)
    git("clone", "-q", url(torch), str(torch_wc), cwd=tmp_path)
    git("update-index", "--add", "--cacheinfo", f"160000,{s3},third_party/sub", cwd=torch_wc)
    git("commit", "-q", "-m", "bump sub", cwd=torch_wc)
    git("tag", "v2.11.0", cwd=torch_wc)
    git("push", "-q", "origin", "HEAD:main", "v2.11.0", cwd=torch_wc)

    before = tree_state(tree)
    broken = {SUB_URL: (tmp_path / "no-such-mirror.git").as_uri()}
    with pytest.raises(
        GitFailed, match="Cannot fetch the submodules of PyTorch at v2.11.0"
    ) as info:
        checkout_pytorch(
            settings(
                remotes,
                tmp_path / "w",
                pytorch_repo=url(torch),
                pytorch_ref="v2.11.0",
                mirrors=broken,
            )
        )
    # A mirror git cannot reach is the environment's failure (exit 3, issue 18 item 5c).
    assert info.value.exit_code == 3 and "mirrors" in info.value.paragraph()
    assert tree_state(tree) == before
    # A fresh checkout through the dead mirror leaves nothing behind.
    fresh = tmp_path / "fresh"
    with pytest.raises(GitFailed):
        checkout_pytorch(settings(remotes, fresh, mirrors=broken))
    assert not (fresh / "src" / "pytorch").exists()


def test_unreachable_repo_is_a_clear_error(remotes: FakeRemotes, tmp_path: Path) -> None:
    with pytest.raises(GitFailed, match="Cannot fetch from .*gone: git could not reach it") as info:
        checkout_pytorch(settings(remotes, tmp_path, pytorch_repo=(tmp_path / "gone").as_uri()))
    assert info.value.exit_code == 3  # the environment failed (issue 18 item 5c)
    assert not (tmp_path / "src" / "pytorch").exists()


def test_commit_ref_not_at_a_tip_falls_back_when_server_refuses(
    remotes: FakeRemotes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Protocol v0 servers refuse unadvertised commits in a shallow fetch; the kit then fetches
    # every branch and finds the commit in history.
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "protocol.version")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "0")
    t1, t2, _ = remotes.triton_commits
    dest = tmp_path / "triton"
    result = checkout_tree(dest=dest, repo=url(remotes.triton), ref=t2, mirrors={})
    assert result.commit == t2 == git("rev-parse", "HEAD", cwd=dest)
    assert any("+refs/heads/*:refs/remotes/origin/*" in line for line in result.log)
    # An unknown commit: a clear error, nothing left.
    with pytest.raises(RefNotFound, match="is not in"):
        checkout_tree(dest=tmp_path / "t2", repo=url(remotes.triton), ref="f" * 40, mirrors={})
    assert not (tmp_path / "t2").exists()


def test_triton_checkout_at_pinned_commit_not_a_tip(remotes: FakeRemotes, tmp_path: Path) -> None:
    s = settings(remotes, tmp_path)
    checkout_pytorch(s)
    result, pin = checkout_triton(s)
    t2 = remotes.triton_commits[1]
    assert pin.commit == t2 and pin.version == "3.5.1" and pin.pin_file.endswith("triton.txt")
    assert git("rev-parse", "HEAD", cwd=tmp_path / "src" / "triton") == t2
    assert git("rev-parse", "main", cwd=remotes.triton) != t2
    again, _ = checkout_triton(s)
    assert again.changed is False


def test_triton_checkout_without_pytorch_is_an_error(remotes: FakeRemotes, tmp_path: Path) -> None:
    with pytest.raises(RocmforgeError, match="no PyTorch checkout"):
        checkout_triton(settings(remotes, tmp_path))


def test_non_git_directory_is_never_overwritten(remotes: FakeRemotes, tmp_path: Path) -> None:
    tree = tmp_path / "src" / "pytorch"
    tree.mkdir(parents=True)
    (tree / "mine.txt").write_text("keep")
    with pytest.raises(RocmforgeError, match="is not a git checkout"):
        checkout_pytorch(settings(remotes, tmp_path))
    assert [p.name for p in tree.iterdir()] == ["mine.txt"]


def test_new_commit_in_remote_branch_is_picked_up(remotes: FakeRemotes, tmp_path: Path) -> None:
    # A private copy of the remote so the module-scoped remotes stay unchanged.
    own = tmp_path / "own"
    git("clone", "-q", "--mirror", remotes.pytorch_url, str(own), cwd=tmp_path)
    work_clone = tmp_path / "wc"
    git("clone", "-q", url(own), str(work_clone), cwd=tmp_path)
    s = settings(remotes, tmp_path / "w", pytorch_repo=url(own), pytorch_ref="main")
    first, _, _ = checkout_pytorch(s)
    new = commit_files(work_clone, {"new.txt": "x\n"}, "new")
    git("push", "-q", "origin", "HEAD:main", cwd=work_clone)
    second, _, _ = checkout_pytorch(s)
    assert first.commit != second.commit == new


def test_git_failure_tail_keeps_the_last_non_blank_lines(tmp_path: Path) -> None:
    from rocmforge.sources.git import run_git

    gone = tmp_path / "gone"
    result = run_git(["ls-remote", str(gone)], check=False)
    assert result.returncode == 128
    # git prints a blank line between its two messages; the tail must not show it as " |  | ".
    assert result.tail() == (
        f"fatal: '{gone}' does not appear to be a git repository | "
        "fatal: Could not read from remote repository. | "
        "Please make sure you have the correct access rights | and the repository exists."
    )
