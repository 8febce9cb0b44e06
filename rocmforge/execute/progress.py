"""How far a long step is: ninja's `[N/M]` lines read into a fraction done and an ETA.

Owns: parsing a progress line (ninja's `[1234/8094] Building …`, make's `[ 42%] Building …`),
the rate since the first one seen in this run (a resumed build starts at its own N), and the
text the live line shows (`[1234/8094] 15%  ETA 1 h 12 min`). Pure: it is fed lines and times.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rocmforge.execute.actions import StepResult

_NINJA = re.compile(r"^\[(\d+)/(\d+)\]\s")
_MAKE = re.compile(r"^\[\s*(\d{1,3})%\]\s")


@dataclass
class Progress:
    """Mutable on purpose: one per running step, fed as its output arrives."""

    done: int = 0
    total: int = 0
    percent: float = -1.0
    first_done: int = -1
    first_at: float = 0.0
    last_at: float = 0.0
    counted: bool = False  # ninja's [N/M] (edges), not make's [ P%]

    def feed(self, line: str, now: float) -> bool:
        """Read one output line; True when it was a progress line."""
        text = line.strip()
        match = _NINJA.match(text)
        if match:
            done, total = int(match.group(1)), int(match.group(2))
            if total <= 0 or done > total:
                return False
            if self.first_done < 0 or total != self.total:
                self.first_done, self.first_at = done, now
            self.done, self.total, self.last_at = done, total, now
            self.percent, self.counted = 100.0 * done / total, True
            return True
        match = _MAKE.match(text)
        if match:
            percent = float(match.group(1))
            if self.first_done < 0:
                self.first_done, self.first_at = int(percent), now
            self.percent, self.last_at = min(percent, 100.0), now
            self.done, self.total, self.counted = int(percent), 100, False
            return True
        return False

    def eta_s(self) -> float | None:
        """Seconds left at the rate since the first progress line, None before there is one."""
        if self.first_done < 0 or self.done <= self.first_done or self.last_at <= self.first_at:
            return None
        rate = (self.done - self.first_done) / (self.last_at - self.first_at)
        return (self.total - self.done) / rate if rate > 0 else None

    def text(self) -> str:
        """`[1234/8094] 15%  ETA 1 h 12 min` ("" before any progress line)."""
        if self.percent < 0:
            return ""
        counted = f"[{self.done}/{self.total}] " if self.counted else ""
        eta = self.eta_s()
        left = f"  ETA {duration(eta)}" if eta is not None else ""
        return f"{counted}{self.percent:.0f}%{left}"


def duration(seconds: float) -> str:
    """`45 s`, `12 min`, `1 h 12 min`."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


def step_times(results: Sequence[StepResult], shown: int = 5) -> str:
    """" (build 3 h 2 min, configure 4 min, ...)": the wall time of the steps that ran, longest
    first (at most `shown`), for the build's closing line; "" when none ran."""
    ran = sorted((r for r in results if r.status == "ran"), key=lambda r: -r.duration_s)
    if not ran:
        return ""
    listed = ", ".join(f"{r.name} {duration(r.duration_s) if r.duration_s >= 1 else '<1 s'}"
                       for r in ran[:shown])
    more = f", {len(ran) - shown} more" if len(ran) > shown else ""
    return f" ({listed}{more})"
