"""A build of exactly the tree a lock file describes (`invoke build --lock FILE`, issue 18 item 13).

Owns: turning Settings with `lock_file` into the Settings of the locked build (the lock's ref, at
the lock's commit; its repository unless a --repo flag names another copy of it, e.g. a local
clone; each value's origin says it came from the lock), the check of the lock's patch hashes
before anything runs, and the lines `invoke plan` shows about the lock. Must not: run git or
write anything; the checkout step reads the same lock again through `checkout_pytorch` and
compares the submodule commits and the Triton pin of the tree it checked out.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rocmforge.errors import UsageError
from rocmforge.render import count
from rocmforge.sources.lockfile import Lock, read_lock

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from rocmforge.fsutil import JSONDoc
    from rocmforge.knowledge.extensions import ExtensionSource
    from rocmforge.settings import Settings


@dataclass(frozen=True, kw_only=True)
class LockedBuild:
    """The lock a build reproduces, where it was read, and the ref it set aside."""

    path: Path
    lock: Lock
    ignored_ref: str  # a pytorch_ref given by a flag or the environment that the lock overrides
    ignored_companions: tuple[str, ...] = ()  # a companions setting (config, env) the lock beat

    def check_folders(self, sources: Sequence[ExtensionSource]) -> None:
        """A locked plain folder (no commit, its digest as version) must still hold what was
        built: a UsageError naming both digests when its files changed since."""
        found = {s.name: s for s in sources}
        for entry in self.lock.companions:
            source = found.get(entry.name)
            if entry.commit or not entry.version.startswith("sha256:") or source is None:
                continue
            if source.version != entry.version:
                raise UsageError(
                    f"{entry.repo} is not the folder {self.path} locks: its files' digest is "
                    f"{source.version[:19] or 'none'}, the lock's {entry.version[:19]}",
                    "a locked build reproduces what was built, and a folder has no commit to "
                    "go back to", "restore the folder's files, or build without --lock")

    def notes(self) -> tuple[str, ...]:
        lock = self.lock
        notes = [f"building the tree locked in {self.path}: PyTorch {lock.pytorch_commit} "
                 f"({lock.pytorch_ref or 'no ref recorded'} of {lock.pytorch_repo}), "
                 f"{count(len(lock.submodules), 'submodule commit')}"
                 + (f", Triton {lock.triton_commit}" if lock.triton_commit else "")
                 + f", {count(len(lock.patches), 'patch', 'patches')} with their sha256"]
        for comp in lock.companions:
            notes.append(f"{comp.name} {comp.commit} ({comp.ref or 'no ref recorded'} of "
                         f"{comp.repo}), {count(len(comp.patches), 'patch', 'patches')}, "
                         "as locked")
        if self.ignored_ref:
            notes.append(f"pytorch_ref {self.ignored_ref!r} is not used: the lock's commit wins")
        if self.ignored_companions:
            notes.append(f"companions {','.join(self.ignored_companions)!r} is not used: the "
                         "lock's companions win")
        return tuple(notes)

    def as_dict(self) -> JSONDoc:
        lock = self.lock
        return {
            "file": str(self.path),
            "pytorch": {"repo": lock.pytorch_repo, "ref": lock.pytorch_ref,
                        "commit": lock.pytorch_commit},
            "submodules": {s.path: s.commit for s in lock.submodules},
            "triton": {"repo": lock.triton_repo, "commit": lock.triton_commit,
                       "version": lock.triton_version},
            "patches": [{"project": p.project, "file": p.file, "sha256": p.sha256}
                        for p in lock.patches],
            "companions": {c.name: {"repo": c.repo, "ref": c.ref, "commit": c.commit,
                                    "version": c.version,
                                    "patches": [{"file": p.file, "sha256": p.sha256}
                                                for p in c.patches]}
                           for c in lock.companions},
        }


def locked_settings(settings: Settings) -> tuple[Settings, LockedBuild | None]:
    """Settings for a build of `settings.lock_file` (unchanged when it is empty).

    A lock file that is missing or malformed, or whose patches changed since, is a LockError
    (exit 2) here, before anything is planned or written."""
    if not settings.lock_file:
        return settings, None
    from rocmforge.sources import check_locked_patches, series_root

    path = Path(settings.lock_file)
    lock = read_lock(path)
    check_locked_patches(lock, path, series_root(settings))
    origin = f"lock file {path}"
    origins = {**settings.origins, "pytorch_ref": origin}
    repo = settings.pytorch_repo
    if not origins.get("pytorch_repo", "").startswith("flag"):  # --repo: a copy of it (offline)
        repo = lock.pytorch_repo
        origins["pytorch_repo"] = origin
    # The lock's ref (its tag or branch, else the commit) names the release whose facts the plan
    # estimates and the work dir's lock matches; the checkout itself goes to the lock's commit
    # (checkout_pytorch reads the lock_file setting) and compares the tree with the lock.
    ref = lock.pytorch_ref or lock.pytorch_commit
    given = settings.origins.get("pytorch_ref", "")
    ignored = settings.pytorch_ref if given.startswith(("flag", "env")) and \
        settings.pytorch_ref not in (ref, lock.pytorch_commit) else ""
    companions, repos, ignored_companions = _locked_companions(settings, lock, path)
    if lock.companions:
        origins["companions"] = origin
        if not settings.companion_repos:
            origins["companion_repos"] = origin
    return (dataclasses.replace(settings, pytorch_ref=ref, pytorch_repo=repo,
                                companions=companions, companion_repos=repos, origins=origins),
            LockedBuild(path=path, lock=lock, ignored_ref=ignored,
                        ignored_companions=ignored_companions))


def _locked_companions(settings: Settings, lock: Lock, path: Path
                       ) -> tuple[tuple[str, ...], Mapping[str, str], tuple[str, ...]]:
    """The companions setting of a locked build: each locked companion at its commit
    ("torchvision@<commit>"), from the lock's repository unless companion_repos names a copy
    of it (a mirror or a local clone, as --repo does for PyTorch).

    A lock that records no companion (older kits, a build without --with) leaves the setting as
    it is. `--with` that names the locked companions (bare, or at the locked ref or commit) is
    the lock's choice said again; any other `--with` is refused (UsageError, exit 2): the flag
    asks for another build than the lock describes, and a reproduction that quietly drops or
    adds a companion is not one. A companions setting from a config file or the environment is
    set aside with a note instead, as pytorch_ref is: the lock on the command line is the
    user's newer word."""
    if not lock.companions:
        return settings.companions, settings.companion_repos, ()
    locked = {c.name: c for c in lock.companions}
    given = [w.strip() for item in settings.companions for w in str(item).split(",") if w.strip()]
    if settings.origins.get("companions", "").startswith("flag") and given:
        asked = dict(_name_and_ref(w) for w in given)
        differ = sorted(set(asked) ^ set(locked)) + sorted(
            n for n, r in asked.items()
            if n in locked and r and r not in (locked[n].ref, locked[n].commit))
        if differ:
            raise UsageError(
                f"--with {','.join(given)} is not what {path} locks "
                f"({', '.join(f'{c.name} {c.commit[:12]}' for c in lock.companions)}); it differs "
                f"in {', '.join(differ)}",
                "a build with --lock reproduces the locked companions at their commits, and "
                "the kit does not guess whether the flag or the lock should win",
                "leave out --with (the lock's companions are built), or build without --lock "
                "and write a new lock",
            )
        ignored: tuple[str, ...] = ()
    else:
        ignored = tuple(given) if given and sorted(
            _name_and_ref(w)[0] for w in given) != sorted(locked) else ()
    from rocmforge.knowledge.addon_table import load_addons

    # A name the kit knows (a companion, a recipe) is built from the lock's repository; any
    # other extension's word (git+<repo>@<commit>, a folder) carries its source itself.
    known = set(load_addons().names)
    repos = {c.name: c.repo for c in lock.companions if c.name in known}
    repos.update({k: v for k, v in settings.companion_repos.items() if k in locked})
    chosen = tuple(_locked_word(c.name, c.repo, c.commit) for c in lock.companions)
    return chosen, {**settings.companion_repos, **repos}, ignored


def _name_and_ref(word: str) -> tuple[str, str]:
    """A `--with` word's name and ref: "torchvision@v0.28.0", "flash-attention", and for an
    extension no recipe names (git+URL@ref, a folder) the name the kit gives it."""
    from rocmforge.knowledge.extensions import GIT_PREFIX, split_git_word

    text = word.strip()
    if text.startswith(GIT_PREFIX):
        from rocmforge.knowledge.extensions import generic_recipe

        url, ref = split_git_word(text)
        return generic_recipe(url).name, ref
    if text.startswith(("/", "./", "../", "~")):  # a folder: the name the kit gives it
        import os

        from rocmforge.knowledge.extensions import generic_recipe

        return generic_recipe(os.path.abspath(os.path.expanduser(text))).name, ""
    name, _, ref = text.partition("@")
    return name.strip().lower(), ref.strip()


def _locked_word(name: str, repo: str, commit: str) -> str:
    """The `--with` word that rebuilds a locked companion or extension at its commit: its name,
    or `git+<repo>@<commit>` for an extension no recipe names (`git+file:///path@<commit>`
    for a git folder, whose lock records its absolute path)."""
    from rocmforge.knowledge.addon_table import load_addons
    from rocmforge.knowledge.extensions import GIT_PREFIX

    if not commit:  # a plain folder: built from its path again (its digest is its version)
        return repo
    if name in load_addons().addons:
        return f"{name}@{commit}"
    if repo.startswith("/"):  # a git folder: its repository as a file:// URL git fetches
        return f"{GIT_PREFIX}{Path(repo).as_uri()}@{commit}"
    return f"{GIT_PREFIX}{repo}@{commit}"
