"""A full disk or an exceeded quota or file-size limit, from any tool that reports it.

Owns: the parsers (rules) for these messages; each reads its values out of the line and
declines where the line alone does not prove the cause. Must not: read files, run programs
or pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _disk_full(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="disk", cause="no space left: a disk (a file system the build "
                   "writes to) is full (ENOSPC) or "
                   "over its quota: the work dir, the temp dir ($TMPDIR, /tmp), pip's cache or "
                   "the compile cache", fix="free space there (`df -h . $TMPDIR` shows which one "
                   "is full; a PyTorch ROCm build needs about 40 GB free for one target; pip's "
                   "cache keeps every wheel it downloaded: `pip cache purge`, or PIP_NO_CACHE_DIR="
                   "1), or move the work dir (--work-dir) or TMPDIR to a larger disk, then rerun")


RULES: tuple[Rule, ...] = (
    Rule(id="disk-full", klass="disk-full", tier=0,
         triggers=("No space left", "no space left", "Disk quota exceeded", "ENOSPC", "Errno 28",
                   "diskspace", "disk space", "Errno 27", "File size limit exceeded"),
         pattern=rx(r"(?i)no space left on device|disk quota exceeded|\bENOSPC\b|\[Errno 2[78]\]"
                     r"|file size limit exceeded"
                     r"|Available diskspace is less than|running out of disk space"),
         read=_disk_full, source="glibc strerror(ENOSPC, EDQUOT); EFBIG ([Errno 27] File too "
         "large) and SIGXFSZ (`clang++: error: unable to execute command: File size limit "
         "exceeded`) from the fixture build under a file-size limit, here "
         "(tests/test_download_codes.py); real output in tests/failures; a CI runner's low-disk "
         "warning (issue 40's example shape)"),
)
