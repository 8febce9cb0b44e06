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

from rocmforge.render import count
from rocmforge.sources.lockfile import Lock, read_lock

if TYPE_CHECKING:
    from rocmforge.fsutil import JSONDoc
    from rocmforge.settings import Settings


@dataclass(frozen=True, kw_only=True)
class LockedBuild:
    """The lock a build reproduces, where it was read, and the ref it set aside."""

    path: Path
    lock: Lock
    ignored_ref: str  # a pytorch_ref given by a flag or the environment that the lock overrides

    def notes(self) -> tuple[str, ...]:
        lock = self.lock
        notes = [f"building the tree locked in {self.path}: PyTorch {lock.pytorch_commit} "
                 f"({lock.pytorch_ref or 'no ref recorded'} of {lock.pytorch_repo}), "
                 f"{count(len(lock.submodules), 'submodule commit')}"
                 + (f", Triton {lock.triton_commit}" if lock.triton_commit else "")
                 + f", {count(len(lock.patches), 'patch', 'patches')} with their sha256"]
        if self.ignored_ref:
            notes.append(f"pytorch_ref {self.ignored_ref!r} is not used: the lock's commit wins")
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
    return (dataclasses.replace(settings, pytorch_ref=ref, pytorch_repo=repo, origins=origins),
            LockedBuild(path=path, lock=lock, ignored_ref=ignored))
