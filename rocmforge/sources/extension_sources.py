"""Resolve every `--with` extension to its source before the plan is made, and copy a folder.

Owns: `resolve_sources` (each extension word as an ExtensionSource: a recipe's or a git URL's
ref looked up on the remote with one `git ls-remote --symref` round trip, "" taken as the
remote's default branch; a folder checked to exist, to be a folder and to hold a setup.py or
pyproject.toml, a clean git repository's top level taken at its HEAD commit and any other
folder by the digest of its files; a name given twice refused), `folder_digest` and
`copy_folder` (one walk of a folder's files, leaving out what a build writes: .git, build/,
dist/, *.egg-info, __pycache__). Bad input is a UsageError (exit 2) and nothing is written.
A remote that cannot be asked is a FetchFailed (exit 3) here, before any
step, unless the ref is a 40-hex commit (nothing to ask: the checkout step fetches it).
Must not: touch the work dir (the checkout and copy steps do).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from urllib.parse import unquote

from rocmforge.errors import UsageError
from rocmforge.knowledge.extensions import (
    FORM_FOLDER,
    FORM_GIT_FOLDER,
    FORM_RECIPE,
    ExtensionSource,
    ExtensionTable,
    parse_source,
)
from rocmforge.sources.checkout import git_config_for
from rocmforge.sources.git import FULL_SHA, FetchFailed, GitResult, run_git
from rocmforge.sources.offline import extension_fix

# What a build writes into a source folder: never part of the folder's content.
_BUILD_DIRS = frozenset({".git", "build", "dist", "__pycache__", ".eggs"})
BUILD_FILES = ("setup.py", "pyproject.toml")

GitRunner = Callable[..., GitResult]


def resolve_sources(words: Sequence[str], table: ExtensionTable, *,
                    repos: Mapping[str, str], mirrors: Mapping[str, str],
                    torch_version: str = "",
                    git: GitRunner = run_git) -> tuple[ExtensionSource, ...]:
    """Every extension word resolved (see the module docstring), in the order given;
    `torch_version` picks a recipe's ref that pairs with it (knowledge.extensions)."""
    seen: dict[str, str] = {}
    resolved = []
    for word in words:
        source = parse_source(word, table, repos, torch_version)
        if source.name in seen:
            raise UsageError(
                f"{source.name} is named twice in --with ({seen[source.name]!r} and "
                f"{source.word!r})",
                "each extension is built once, from one source at one ref",
                f"name {source.name} once")
        seen[source.name] = source.word
        if source.form == FORM_FOLDER:
            resolved.append(_folder(source, git))
        else:
            resolved.append(_remote(source, mirrors, git))
    return tuple(resolved)


def _folder(source: ExtensionSource, git: GitRunner) -> ExtensionSource:
    folder = Path(source.repo)
    fix = "give the folder that holds the extension's setup.py or pyproject.toml, as a path"
    if not folder.exists():
        raise UsageError(f"{source.word!r} (--with) names no folder: {folder} does not exist",
                         "a --with word written as a path is a local extension's folder", fix)
    if not folder.is_dir():
        raise UsageError(f"{source.word!r} (--with) is not a folder: {folder}",
                         "a --with word written as a path is a local extension's folder", fix)
    if not any((folder / name).is_file() for name in BUILD_FILES):
        raise UsageError(f"{folder} (--with) has no setup.py or pyproject.toml",
                         "pip builds an extension's wheel from one of them", fix)
    top = git(("rev-parse", "--show-toplevel"), cwd=folder, check=False)
    if top.ok and Path(top.stdout.strip()).resolve() == folder.resolve():
        changes = git(("status", "--porcelain"), cwd=folder, check=False)
        head = git(("rev-parse", "--verify", "--quiet", "HEAD^{commit}"), cwd=folder,
                   check=False)
        if changes.ok and not changes.stdout.strip() and head.ok:
            commit = head.stdout.strip()
            return dataclasses.replace(source, form=FORM_GIT_FOLDER, ref=commit, commit=commit,
                                       repo=str(folder.resolve()))
        note = (f"{source.name}: {folder} has uncommitted changes (or no commit), so its files "
                "as they are now are built, versioned by their digest, not a commit")
        source = dataclasses.replace(source, notes=(*source.notes, note))
    return dataclasses.replace(source, repo=str(folder.resolve()),
                               digest=folder_digest(folder))


def ls_remote_argv(url: str, ref: str) -> tuple[str, ...]:
    """One round trip: the remote's HEAD (and the branch it points to) and the ref as a tag
    (peeled too) or a branch."""
    # A pattern matches a peeled tag's line only when it names the "^{}" too.
    names = (f"refs/tags/{ref}", f"refs/tags/{ref}^{{}}", f"refs/heads/{ref}") if ref else ()
    return ("ls-remote", "--symref", "--", url, "HEAD", *names)


def parse_symref_listing(output: str, ref: str) -> tuple[str, str]:
    """(ref, commit) from `git ls-remote --symref` output: for "" the branch HEAD points to
    (or HEAD's commit when it points to none), else the tag (peeled) or branch `ref`;
    ("", "") when the remote has no such ref."""
    found: dict[str, str] = {}
    head_branch = ""
    for line in output.splitlines():
        left, _, name = line.strip().partition("\t")
        if left.startswith("ref: ") and name == "HEAD":
            head_branch = left[len("ref: "):].strip().removeprefix("refs/heads/")
        elif FULL_SHA.match(left):
            found[name] = left
    if not ref:
        if "HEAD" not in found:
            return "", ""
        return (head_branch or found["HEAD"]), found["HEAD"]
    tag = f"refs/tags/{ref}"
    if tag in found:
        return ref, found.get(tag + "^{}", found[tag])
    if f"refs/heads/{ref}" in found:
        return ref, found[f"refs/heads/{ref}"]
    return "", ""


def _remote(source: ExtensionSource, mirrors: Mapping[str, str],
            git: GitRunner) -> ExtensionSource:
    # git decodes a file:// URL's %XX (a lock writes a git folder's path so: file:///a%20b)
    local = unquote(source.repo.removeprefix("file://")) if source.repo.startswith(
        ("file://", "/")) else ""
    if local and not Path(local).exists():
        given = ("the setting companion_repos" if source.form == FORM_RECIPE
                 else f"--with {source.word}")
        raise UsageError(f"{source.repo} ({given}, for {source.name}) does not exist",
                         "a file:// URL names a repository on this machine",
                         "give the path of a git repository, or an https:// URL")
    if FULL_SHA.match(source.ref):
        return dataclasses.replace(source, commit=source.ref)
    listed = git(ls_remote_argv(source.repo, source.ref),
                 config=git_config_for(source.repo, mirrors), check=False)
    if not listed.ok:  # every --with is resolved before any step (issue 39 item 2)
        asked = f"its ref {source.ref}" if source.ref else "its default branch"
        raise FetchFailed(
            f"Cannot reach {source.repo} to find {asked} for --with {source.word}; no step "
            "ran", f"git said: {listed.tail()}" if listed.tail() else "",
            extension_fix(source.name, source.repo, source.form == FORM_RECIPE))
    ref, commit = parse_symref_listing(listed.stdout, source.ref)
    if not commit:
        short = "; a short commit hash is not enough, give all 40 hex digits" if (
            len(source.ref) < 40 and all(c in "0123456789abcdef" for c in source.ref)) else ""
        raise UsageError(
            f"{source.ref!r} is no tag or branch of {source.repo} (--with {source.word}){short}",
            "the kit builds an extension only at a ref its repository has; nothing was built "
            "or written",
            f"give one of its tags or branches (`git ls-remote {source.repo}` lists them), or "
            "a 40-hex commit, after @")
    return dataclasses.replace(source, ref=ref, commit=commit)


def folder_files(root: Path) -> Iterator[Path]:
    """The files and links of a folder that are its content, in a stable order (relative
    paths), without what a build writes there."""
    for here, dirs, files in os.walk(root):
        base = Path(here)
        links = [d for d in dirs if (base / d).is_symlink()]
        dirs[:] = sorted(d for d in dirs if d not in links and d not in _BUILD_DIRS
                         and not d.endswith(".egg-info"))
        for name in sorted([*files, *links]):
            yield (base / name).relative_to(root)


def folder_digest(root: Path) -> str:
    """sha256 over every content file's path, mode (executable or not) and bytes, and every
    link's path and target."""
    digest = hashlib.sha256()
    for rel in folder_files(root):
        path = root / rel
        if path.is_symlink():
            digest.update(b"L" + str(rel).encode() + b"\0" + os.readlink(path).encode() + b"\0")
            continue
        mode = b"x" if os.access(path, os.X_OK) else b"f"
        digest.update(mode + str(rel).encode() + b"\0"
                      + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def copy_folder(source: Path, dest: Path) -> str:
    """Copy a folder's content (folder_files) to `dest`, which must not exist; the digest of
    what was copied."""
    dest.mkdir(parents=True)
    for rel in folder_files(source):
        src, out = source / rel, dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            out.symlink_to(os.readlink(src))
        else:
            shutil.copy2(src, out)
    return folder_digest(dest)
