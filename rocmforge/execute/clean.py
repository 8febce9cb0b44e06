"""`invoke clean`: remove what the kit made in a work dir, never anything else.

Owns: which folders `clean` removes (default: the CMake build dir, wheels of the checkout,
stamps, and the temp files a killed run left (rocmforge.execute.leftovers); the logs only with
`logs` (a failed step's log is what the user needs next, and fix texts say `invoke clean`);
`everything`: every folder the kit creates) and the refusals (a folder without the kit's marker,
a live process holding the work-dir lock, taken through rocmforge.execute.lock like a build
takes it). Must not: remove a path it did not list, or anything reached through a symbolic
link (a link it lists is removed as a link).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

from rocmforge.workdir import WorkDir


def clean_work_dir(workdir: WorkDir, *, everything: bool, dry: bool, logs: bool = False,
                   say: Callable[[str], None] | None = None) -> list[str]:
    """Remove what the kit made and say what; under `dry` only say it.

    Default: the CMake build dir and the built wheels of the checkout, the stamps, and the
    kit's temp files in dist/ and downloads/ (sources, venv, dist/ and logs/ stay; `logs`
    removes logs/ too)
    `everything`: each folder the kit creates under the work dir, and the work dir itself only
    when nothing else is left in it (files a user put there stay). It holds the work-dir lock
    while it removes, so a live build (or another task holding it) is refused; so is a folder
    the kit did not make (no work-dir marker and no stamp in its state/): `--work-dir .` or `/`
    must never lose a user's own `dist/` or `logs/`.
    """
    from rocmforge.errors import UsageError
    from rocmforge.execute.stamps import is_kit_work_dir
    from rocmforge.workdir import WORK_DIR_MARKER

    root = workdir.root
    kit_made = is_kit_work_dir(workdir.state)
    if root.is_dir() and any(root.iterdir()) and not kit_made:
        raise UsageError(
            f"{root} is not a work dir the kit made (it has no {workdir.state / WORK_DIR_MARKER} "
            "and no build stamps), so `invoke clean` deletes nothing there",
            "the kit deletes only folders it made; sub-folders such as dist/ or logs/ of any "
            "other folder may be yours",
            "pass the work dir of your build with --work-dir (default .rocmforge), or delete "
            "the folders yourself",
        )
    with _locked(workdir, kit_made=kit_made, dry=dry, say=say):
        return _remove(workdir, everything=everything, dry=dry, kit_made=kit_made, logs=logs)


@contextlib.contextmanager
def _locked(workdir: WorkDir, *, kit_made: bool, dry: bool,
            say: Callable[[str], None] | None) -> Iterator[None]:
    """The work-dir lock around the removal; a dry run only checks that it is free, and a work
    dir the kit did not make (missing or empty) gets no lock file written into it."""
    from rocmforge.execute.lock import check_work_dir_free, work_lock

    if dry or not kit_made:
        if kit_made:
            check_work_dir_free(workdir, task="clean")
        yield
        return
    with work_lock(workdir, task="clean", say=say):
        yield


def _remove(workdir: WorkDir, *, everything: bool, dry: bool, kit_made: bool,
            logs: bool) -> list[str]:
    from rocmforge.execute.leftovers import remove_leftovers
    from rocmforge.workdir import link_on_the_way

    root = workdir.root
    paths: list[Path]
    if everything:
        # state/ (which holds the lock file) goes last: the lock covers the other removals.
        paths = [workdir.src, workdir.logs, workdir.dist, workdir.venv, workdir.downloads,
                 workdir.aotriton, workdir.lock_file, workdir.state]
    else:
        paths = [workdir.pytorch / "build", workdir.pytorch / "dist", workdir.state / "stamps"]
        if logs:
            paths.append(workdir.logs)
    lines: list[str] = []
    if not everything:
        # The temp files a killed run left outside the folders removed below.
        stamps = workdir.state / "stamps"
        for path in remove_leftovers(workdir, dry=dry):
            if path.parent != stamps:
                lines.append(f"{'would remove' if dry else 'removed'} {path}")
    for path in paths:
        if not path.exists() and not path.is_symlink():
            continue
        link = link_on_the_way(root, path.parent)
        if link is not None:
            # src/pytorch linked to the user's own clone: its build/ and dist/ are theirs.
            lines.append(f"kept {path}: it is reached through the link {link} -> "
                         f"{os.readlink(link)}, which is not the kit's")
            continue
        if path.is_symlink():
            lines.append(f"{'would remove' if dry else 'removed'} the link {path} (not "
                         f"what it points to, {os.readlink(path)})")
            if not dry:
                path.unlink()
            continue
        lines.append(f"{'would remove' if dry else 'removed'} {path}")
        if dry:
            continue
        if path.is_dir():
            shutil.rmtree(path)  # removes links inside it, never what they point to
        else:
            path.unlink()
    if not everything and not logs and workdir.logs.is_dir() and any(workdir.logs.iterdir()):
        lines.append(f"kept {workdir.logs}: the build logs (`invoke clean --logs` removes them)")
    if everything and kit_made and not dry and root.is_symlink():
        lines.append(f"kept {root}: a link to {os.readlink(root)}, whose kit folders were "
                     "removed; the link and its folder are yours")
    elif everything and kit_made and not dry and root.is_dir() and not any(root.iterdir()):
        workdir.root.rmdir()
        lines.append(f"removed {workdir.root}")
    if not lines:
        lines.append(f"nothing to clean in {workdir.root}")
    return lines
