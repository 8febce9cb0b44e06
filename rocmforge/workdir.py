"""The kit's work directory layout: one root, fixed sub-folders, nothing written outside it.

Owns: the names of the folders under the work dir, so `invoke clean` knows what the kit made,
and the marker file that says the kit made the work dir (`mark_work_dir`). Must not: create
anything else (the runner and tasks create folders when they write).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rocmforge.fsutil import write_atomic


@dataclass(frozen=True, kw_only=True)
class WorkDir:
    """Paths under the kit's work dir (default `.rocmforge/`)."""

    root: Path

    @property
    def src(self) -> Path:
        return self.root / "src"

    @property
    def pytorch(self) -> Path:
        return self.src / "pytorch"

    @property
    def triton(self) -> Path:
        return self.src / "triton"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def state(self) -> Path:
        """Stamps, the build lock, saved update-alternatives state."""
        return self.root / "state"

    @property
    def dist(self) -> Path:
        return self.root / "dist"

    @property
    def venv(self) -> Path:
        """The build virtualenv the kit creates."""
        return self.root / "venv"

    @property
    def downloads(self) -> Path:
        return self.root / "downloads"

    @property
    def aotriton(self) -> Path:
        """AOTriton prefixes unpacked by `invoke fetch` (AOTRITON_INSTALLED_PREFIX points here)."""
        return self.root / "aotriton"

    @property
    def lock_file(self) -> Path:
        """Default lock file written after checkout (rocmforge.lock, TOML)."""
        return self.root / "rocmforge.lock"


def workdir_for(work_dir: str | Path) -> WorkDir:
    return WorkDir(root=Path(work_dir).absolute())


def check_work_dir(work_dir: str | Path) -> None:
    """Refuse a work dir that is, or lies under, something other than a folder (a file named
    by mistake: `--work-dir README.md`): nothing could be written there, and doctor's disk row
    would measure the wrong place. A path that does not exist yet is fine (the kit makes it)."""
    from rocmforge.errors import UsageError

    path = Path(work_dir).absolute()
    for place in (path, *path.parents):
        if place.exists() or place.is_symlink():
            if place.is_dir():
                return
            what = (f"The work dir {path} is a file, not a folder" if place == path else
                    f"The work dir {path} cannot be made: {place} is a file, not a folder")
            raise UsageError(
                what,
                "the kit keeps the sources, the venv, logs and dist/ in the work dir (--work-dir / "
                "setting work_dir), so it must be a folder or not exist yet",
                "pass --work-dir a folder (or a path that does not exist yet), e.g. --work-dir "
                ".rocmforge")


WORK_DIR_MARKER = "work-dir"
_MARKER_TEXT = "rocmforge work dir: `invoke clean` may delete what the kit made here.\n"


def mark_work_dir(state: Path) -> None:
    """Record that the kit made this work dir (idempotent); `state` is `<work dir>/state`."""
    marker = state / WORK_DIR_MARKER
    if not marker.is_file():
        write_atomic(marker, _MARKER_TEXT)


def link_on_the_way(root: Path, path: Path) -> Path | None:
    """The first symbolic link between `root` (excluded) and `path` (included), or None.

    What lies behind such a link is not the work dir's (a user's own clone linked in as
    src/pytorch, a shared downloads folder), so nothing may be deleted through it."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        return path
    current = root
    for part in rel.parts:
        current = current / part
        if current.is_symlink():
            return current
    return None
