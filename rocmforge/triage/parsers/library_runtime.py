"""The ROCm libraries' own files at run time: MIOpen's SQLite databases (its find-db, user
performance db and compiled-kernel cache) and RCCL's shared-memory segments in /dev/shm.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Only SQLite's and the kernel's own words for a file that may
not be written, or a file system that is full, are read: MIOpen's other database errors
(a locked database, a corrupt file) prove no single cause. Must not: read files, run programs
or pick between findings (the engine does). A library with no kernels for the GPU is
math_library.py's and tensile.py's.
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

_MIOPEN_DIRS = ("~/.config/miopen (the user db) and ~/.cache/miopen (the kernel cache), or "
                "what MIOPEN_USER_DB_PATH and MIOPEN_CUSTOM_CACHE_DIR name")


def _miopen_sqlite(match: re.Match[str], view: LineView) -> Reading | None:
    what = match.group("err")
    if what == "database or disk is full":
        return Reading(
            subject="disk", klass="disk-full",
            cause="MIOpen could not write to one of its SQLite databases: SQLite reports "
                  "'database or disk is full', so the file system that holds "
                  f"{_MIOPEN_DIRS} has no space left",
            fix="free space there (`df -h ~/.cache ~/.config`), or point "
                "MIOPEN_USER_DB_PATH and MIOPEN_CUSTOM_CACHE_DIR at a folder on a disk "
                "with room, then run again")
    if what == "attempt to write a readonly database":
        cause = ("MIOpen tried to write to one of its SQLite databases and SQLite refused: "
                 "the file (or its folder) is read-only for this user; typically "
                 f"{_MIOPEN_DIRS} belongs to another user (created by root or another "
                 "container user) or sits on a read-only mount")
    else:  # unable to open database file
        cause = ("MIOpen could not open or create one of its SQLite databases: the folder "
                 "for it does not exist and cannot be made, or may not be written by this "
                 f"user ({_MIOPEN_DIRS}; a HOME that is unset or read-only, as in some "
                 "containers and services, leaves no place for them)")
    return Reading(
        subject="miopen",
        cause=cause,
        fix="give this user a writable place: `export MIOPEN_USER_DB_PATH=$HOME/.config/"
            "miopen MIOPEN_CUSTOM_CACHE_DIR=$HOME/.cache/miopen` (or another writable "
            "folder) and fix the owner of existing ones (`sudo chown -R $USER "
            "~/.config/miopen ~/.cache/miopen`), then run again")


def _rccl_shm(match: re.Match[str], view: LineView) -> Reading | None:
    size = int(match.group("size"))
    return Reading(
        subject="disk",
        cause=f"RCCL could not reserve {size} bytes ({size / 2**20:.1f} MiB) for a "
              f"shared-memory segment ({match.group('path')}): fallocate failed on /dev/shm, "
              "the memory-backed file system it uses between processes of one machine, "
              "which is too small or full; a docker container's /dev/shm is 64 MiB unless "
              "`docker run --shm-size=<size>` made it larger",
        fix="start the container with a larger /dev/shm (`docker run --shm-size=16g ...` "
            "or `--ipc=host`; Kubernetes: an emptyDir with medium Memory mounted on "
            "/dev/shm), or remove stale /dev/shm/nccl-* files of crashed runs; "
            "NCCL_SHM_DISABLE=1 avoids the segment at some cost in speed")


RULES: tuple[Rule, ...] = (
    Rule(id="miopen-sqlite-not-writable", klass="math-library",
         triggers=("Internal error while accessing SQLite database",),
         pattern=rx(r"Internal error while accessing SQLite database: (?P<err>attempt to write "
                     r"a readonly database|database or disk is full|unable to open database "
                     r"file)"),
         read=_miopen_sqlite,
         source="ROCm/MIOpen@2d1fd997a6fcf801ac4ca7a63e0656ef1cb9f488:src/sqlite_db.cpp "
         "(SQLite::ErrorMessage: 'Internal error while accessing SQLite database: ' + "
         "sqlite3_errmsg), src/include/miopen/kern_db.hpp (MIOPEN_THROW of it) and "
         "src/include/miopen/errors.hpp ('MIOpen Error: ' before the what()); the errmsg "
         "texts from the real SQLite 3.40.1 here (make/devrt6.sh)"),
    Rule(id="rccl-shm-extend-failed", klass="disk-full",
         triggers=("NCCL WARN Error: failed to extend",),
         pattern=rx(r"NCCL WARN Error: failed to extend (?P<path>/dev/shm/\S+) to "
                     r"(?P<size>\d+) bytes"),
         read=_rccl_shm,
         source="ROCm/rccl@0cbce2a7571c907554199fad7e905f16ec0a565c:src/misc/shmutils.cc "
         "(ncclShmOpen: mkstemp of /dev/shm/nccl-XXXXXX, then WARN 'Error: failed to extend "
         "%s to %ld bytes' when fallocate fails) and src/debug.cc (the '<host>:<pid>:<tid> "
         "[<dev>] <file>:<line> NCCL WARN ' prefix)"),
)
