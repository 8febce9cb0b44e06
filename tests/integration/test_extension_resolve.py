"""sources.extension_sources with real git on repositories made here: every `--with` word
resolved before the plan (issue 39 items 1 and 2), without a build."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from gitfixtures import git

from rocmforge.errors import UsageError
from rocmforge.knowledge.extensions import load_extensions
from rocmforge.sources.extension_sources import (
    copy_folder,
    folder_digest,
    parse_symref_listing,
    resolve_sources,
)
from rocmforge.sources.git import FetchFailed

TABLE = load_extensions()
pytestmark = pytest.mark.needs_tool("git")


def project(folder: Path) -> Path:
    (folder / "pkg").mkdir(parents=True)
    (folder / "setup.py").write_text("from setuptools import setup\nsetup(name='pkg')\n")
    (folder / "pkg" / "__init__.py").write_text("VALUE = 1\n")
    return folder


def repo(folder: Path, branch: str = "trunk") -> Path:
    project(folder)
    git("init", "-q", "-b", branch, cwd=folder)
    git("add", "-A", cwd=folder)
    git("commit", "-q", "-m", "one", cwd=folder)
    git("tag", "-a", "-m", "release", "v1.0", cwd=folder)
    return folder


def resolve(*words: str, repos: dict[str, str] | None = None):  # noqa: ANN201
    return resolve_sources(list(words), TABLE, repos=repos or {}, mirrors={})


def test_a_git_url_without_a_ref_takes_the_default_branch(tmp_path: Path) -> None:
    remote = repo(tmp_path / "ops")
    (source,) = resolve(f"git+{remote.as_uri()}")
    assert (source.name, source.form, source.ref) == ("ops", "git", "trunk")
    assert source.commit == git("rev-parse", "HEAD", cwd=remote)


def test_an_annotated_tag_resolves_to_its_commit_and_an_unknown_ref_is_refused(
        tmp_path: Path) -> None:
    remote = repo(tmp_path / "ops")
    (tagged,) = resolve(f"git+{remote.as_uri()}@v1.0")
    peeled = git("rev-parse", "v1.0^{commit}", cwd=remote)
    assert (tagged.ref, tagged.commit) == ("v1.0", peeled)
    with pytest.raises(UsageError) as caught:
        resolve(f"git+{remote.as_uri()}@nosuch")
    assert caught.value.what == (f"'nosuch' is no tag or branch of {remote.as_uri()} "
                                 f"(--with git+{remote.as_uri()}@nosuch)")
    with pytest.raises(UsageError) as short:
        resolve(f"git+{remote.as_uri()}@abc1234")
    assert "give all 40 hex digits" in short.value.what


def test_a_recipe_ref_is_looked_up_on_its_companion_repos_entry(tmp_path: Path) -> None:
    mirror = repo(tmp_path / "fa")
    (fa,) = resolve("flash-attention@v1.0", repos={"flash-attention": mirror.as_uri()})
    assert (fa.form, fa.repo, fa.ref) == ("recipe", mirror.as_uri(), "v1.0")
    assert fa.commit == git("rev-parse", "v1.0^{commit}", cwd=mirror)


def test_folders_clean_git_dirty_git_and_plain(tmp_path: Path) -> None:
    clean = repo(tmp_path / "clean-ext")
    (source,) = resolve(str(clean))
    head = git("rev-parse", "HEAD", cwd=clean)
    assert (source.form, source.ref, source.commit, source.digest) == (
        "git-folder", head, head, "")
    dirty = repo(tmp_path / "dirty-ext")
    (dirty / "pkg" / "__init__.py").write_text("VALUE = 2\n")
    (edited,) = resolve(str(dirty))
    assert (edited.form, edited.commit, edited.digest) == ("folder", "", folder_digest(dirty))
    assert "has uncommitted changes" in edited.notes[0]
    # A project inside another repository is not that repository's top level: its files.
    inner = project(clean / "inner-ext")
    (nested,) = resolve(str(inner))
    assert nested.form == "folder" and nested.version == f"sha256:{folder_digest(inner)}"
    spaced = project(tmp_path / "with space" / "my ext")
    (plain,) = resolve(str(spaced))
    assert (plain.name, plain.form, plain.repo) == ("my-ext", "folder", str(spaced))


def test_the_digest_is_the_content_and_the_copy_has_it(tmp_path: Path) -> None:
    folder = project(tmp_path / "ext")
    first = folder_digest(folder)
    for built in ("build/x.o", "dist/ext.whl", "ext.egg-info/PKG-INFO", "pkg/__pycache__/a.pyc",
                  ".git/HEAD"):
        (folder / built).parent.mkdir(parents=True, exist_ok=True)
        (folder / built).write_text("what a build leaves\n")
    assert folder_digest(folder) == first
    (folder / "link").symlink_to("setup.py")
    linked = folder_digest(folder)
    assert linked != first
    assert copy_folder(folder, tmp_path / "copy") == linked
    assert not (tmp_path / "copy" / "build").exists()
    assert (tmp_path / "copy" / "link").is_symlink()
    os.chmod(folder / "setup.py", 0o755)
    assert folder_digest(folder) != linked


def test_the_symref_listing_is_read_as_git_prints_it() -> None:
    sha, tag, peeled = "a" * 40, "b" * 40, "c" * 40
    listing = (f"ref: refs/heads/main\tHEAD\n{sha}\tHEAD\n{tag}\trefs/tags/v2\n"
               f"{peeled}\trefs/tags/v2^{{}}\n{sha}\trefs/heads/dev\n")
    assert parse_symref_listing(listing, "") == ("main", sha)
    assert parse_symref_listing(listing, "v2") == ("v2", peeled)
    assert parse_symref_listing(listing, "dev") == ("dev", sha)
    assert parse_symref_listing(listing, "gone") == ("", "")
    # A remote whose HEAD is detached names no branch: its commit is the ref.
    assert parse_symref_listing(f"{sha}\tHEAD\n", "") == (sha, sha)


def test_bad_folders_and_duplicates_are_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "file.txt").write_text("x")
    for word, what in ((str(tmp_path / "nope"), "names no folder"),
                       (str(tmp_path / "file.txt"), "is not a folder"),
                       (str(tmp_path / "empty"), "has no setup.py or pyproject.toml")):
        with pytest.raises(UsageError) as caught:
            resolve(word)
        assert what in caught.value.what
    one = project(tmp_path / "a" / "ext")
    two = project(tmp_path / "b" / "ext")
    with pytest.raises(UsageError) as twice:
        resolve(str(one), str(two))
    assert twice.value.what.startswith("ext is named twice in --with")


def test_verify_takes_a_folder_digest_as_no_wheel_version() -> None:
    """A recipe's project built from a plain folder: the manifest's version is the folder's
    digest; verify's import row must not compare it with the wheel's own version (and still
    does for a commit-built one)."""
    from rocmforge.verify.checks.extensions import _imported
    from rocmforge.verify.model import ExpectedExtension

    from_folder = ExpectedExtension(name="x", module="json", distribution="pytest",
                                    version="sha256:" + "ab" * 32)
    assert _imported(from_folder)[1].status.name == "PASS"
    from_commit = ExpectedExtension(name="x", module="json", distribution="pytest",
                                    version="0.0.1")
    assert _imported(from_commit)[1].status.name == "FAIL"


def test_a_git_folder_with_a_space_reads_back_from_its_file_url(tmp_path: Path) -> None:
    """The lock's word of a git folder (sources.locked: git+file:///...@commit, the path
    percent-encoded) names the same extension, at the commit, and its path is found."""
    folder = repo(tmp_path / "my sources" / "beta-ext")
    (first,) = resolve(str(folder))
    assert (first.name, first.form) == ("beta-ext", "git-folder")
    (again,) = resolve(f"git+{folder.as_uri()}@{first.commit}")
    assert "%20" in folder.as_uri()
    assert (again.name, again.form, again.commit) == ("beta-ext", "git", first.commit)
    assert git("ls-remote", folder.as_uri(), "HEAD", cwd=tmp_path).startswith(
        first.commit)  # git decodes the %20


def test_a_remote_nothing_answers_is_exit_3_while_the_plan_is_made() -> None:
    with pytest.raises(FetchFailed) as caught:
        resolve("flash-attention@v2.8.3",
                repos={"flash-attention": "http://127.0.0.1:1/flash-attention.git"})
    assert caught.value.exit_code == 3
    assert caught.value.what == ("Cannot reach http://127.0.0.1:1/flash-attention.git to find "
                                 "its ref v2.8.3 for --with flash-attention@v2.8.3; no step ran")
