"""What the summary of a PyTorch CMake configure says about ROCm.

Owns: reading the `USE_ROCM` line of the summary Summary.cmake prints (the configure check's
proof that the build is not a CPU-only one). Must not: explain failures (the rule set does) or
read files.
"""

from __future__ import annotations

import io
import re

__all__ = ["configure_reports_rocm"]

# Summary.cmake: two spaces, the name padded to column 24, ": ", the value (reference §2.1).
_USE_ROCM_LINE = re.compile(r"^--\s+USE_ROCM\s+:\s*(\S*)\s*$")
_SUMMARY_START = re.compile(r"^--\s+\*+\s+Summary\s+\*+\s*$")



def configure_reports_rocm(log_text: str) -> bool | None:
    """What the CMake summary says about ROCm: True (ON), False (OFF/0/empty), None (no summary).

    The last summary in the log wins (a reconfigure appends a new one to the same log).
    """
    verdict: bool | None = None
    in_summary = False
    for line in io.StringIO(log_text):
        line = line.rstrip("\r\n")
        if _SUMMARY_START.match(line):
            in_summary = True
            continue
        match = _USE_ROCM_LINE.match(line)
        if match and in_summary:
            verdict = match.group(1).upper() in {"ON", "1", "TRUE", "YES", "Y"}
    return verdict
