"""`invoke clean`: remove what the kit made in a work dir, never anything else.

Owns: which folders `clean` removes (default: the CMake build dir, wheels of the checkout,
stamps and logs; `everything`: every folder the kit creates) and the refusals (a folder without
the kit's marker, a live build holding the lock). Must not: remove a path it did not list.
"""

from __future__ import annotations

import shutil

from rocmforge.workdir import WorkDir


def clean_work_dir(workdir: WorkDir, *, everything: bool, dry: bool) -> list[str]:
    """Remove what the kit made and say what; under `dry` only say it.

    Default: the CMake build dir and the built wheels of the checkout, the stamps and the logs
    (sources, venv and dist/ stay). `everything`: each folder the kit creates under the work dir,
    and the work dir itself only when nothing else is left in it (files a user put there stay).
    A live build holding the lock is refused, and so is a folder the kit did not make (no
    work-dir marker and no stamp in its state/): `--work-dir .` or `/` must never lose a user's
    own `dist/` or `logs/`.
    """
    from rocmforge.errors import UsageError
    from rocmforge.execute.lock import BuildLocked, _pid_alive, read_holder
    from rocmforge.execute.stamps import WORK_DIR_MARKER, is_kit_work_dir

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
    holder = read_holder(workdir.state / "build.lock")
    if holder is not None and _pid_alive(holder.pid):
        raise BuildLocked(
            f"A build (pid {holder.pid}, started {holder.started}) is running in {workdir.root}",
            "cleaning under a running build would break it",
            "wait for it to finish or stop it, then clean",
        )
    if everything:
        paths = [workdir.src, workdir.logs, workdir.state, workdir.dist, workdir.venv,
                 workdir.downloads, workdir.lock_file]
    else:
        paths = [workdir.pytorch / "build", workdir.pytorch / "dist", workdir.state / "stamps",
                 workdir.logs]
    lines: list[str] = []
    for path in paths:
        if not path.exists() and not path.is_symlink():
            continue
        lines.append(f"{'would remove' if dry else 'removed'} {path}")
        if dry:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    if everything and kit_made and not dry and root.is_dir() and not any(root.iterdir()):
        workdir.root.rmdir()
        lines.append(f"removed {workdir.root}")
    if not lines:
        lines.append(f"nothing to clean in {workdir.root}")
    return lines
