"""Temp files that a killed run left in the work dir.

Owns: which files are the kit's own temp files and removing them: `.<name>.<random>.tmp` that
`fsutil.write_atomic` makes beside a stamp (state/stamps/) or the manifest (dist/),
`.<wheel>.<pid>.tmp` of the collect step's copies (dist/), `.<wheel>.<random>.part` of a Triton
download (downloads/), and the dot-folders of an AOTriton unpack (aotriton/). Each writer removes
its own temp file when it fails, but a SIGKILL (or the OOM killer) leaves it behind. Callers hold
the work-dir lock (the runner, `invoke clean`), so no live writer of this work dir owns one. Must
not: remove anything else: only regular files whose names have that shape (and aotriton/'s dot-f
olders), in exactly those folders, and never in a folder reached through a symbolic link (its
files are someone else's)."""

from __future__ import annotations

import contextlib
from pathlib import Path

from rocmforge.workdir import WorkDir


def _places(workdir: WorkDir) -> tuple[tuple[Path, str], ...]:
    """(folder, suffix) of each kind of temp file the kit writes."""
    return (
        (workdir.dist, ".tmp"),
        (workdir.state / "stamps", ".tmp"),
        (workdir.downloads, ".part"),
    )


def find_leftovers(workdir: WorkDir) -> tuple[Path, ...]:
    """The kit's temp files present in the work dir now, sorted."""
    from rocmforge.workdir import link_on_the_way

    found: list[Path] = []
    for folder, suffix in _places(workdir):
        if link_on_the_way(workdir.root, folder) is not None:
            continue  # a folder linked in from elsewhere (a shared downloads/) is not ours
        try:
            entries = list(folder.iterdir())
        except OSError:  # no such folder (or not one): nothing of ours there
            continue
        for path in entries:
            name = path.name
            if (name.startswith(".") and name.endswith(suffix)
                    and len(name) > 1 + len(suffix)
                    and path.is_file() and not path.is_symlink()):
                found.append(path)
    return tuple(sorted(found))


def find_unpack_leftovers(workdir: WorkDir) -> tuple[Path, ...]:
    """The half-unpacked AOTriton folders a killed `fetch` left in aotriton/: every folder
    there whose name starts with a dot (`.<prefix>.XXXXXXXX` being filled, `.unpack.XXXXXXXX`
    raw); a finished prefix never does."""
    from rocmforge.workdir import link_on_the_way

    folder = workdir.aotriton
    if link_on_the_way(workdir.root, folder) is not None:
        return ()
    try:
        entries = list(folder.iterdir())
    except OSError:
        return ()
    return tuple(sorted(p for p in entries if p.name.startswith(".") and len(p.name) > 1
                        and p.is_dir() and not p.is_symlink()))


def remove_leftovers(workdir: WorkDir, *, dry: bool = False) -> tuple[Path, ...]:
    """Remove (under `dry`: only find) the kit's temp files and half-unpacked folders; the
    ones removed."""
    import shutil

    removed: list[Path] = []
    for path in find_leftovers(workdir):
        if not dry:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        removed.append(path)
    for path in find_unpack_leftovers(workdir):
        if not dry:
            shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return tuple(removed)
