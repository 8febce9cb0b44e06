"""Step stamps: the record that a step finished with a given inputs digest.

Owns: reading, writing and removing `<state>/stamps/<step>.json`. A stamp is written only after a
step succeeded, atomically (temp file in the same folder + `os.replace`), so a crash, a SIGKILL or
a full disk leaves either the old stamp or none, never half a file. Also the work-dir marker
(`<state>/work-dir`), written when the runner first works in a folder, so `invoke clean` can tell a
folder the kit made from one it did not. Must not: decide what runs; the runner compares digests.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from rocmforge.fsutil import write_atomic
from rocmforge.workdir import WORK_DIR_MARKER

STAMP_SCHEMA = "rocmforge.stamp/1"


@dataclass(frozen=True, kw_only=True)
class Stamp:
    """What a finished step left behind: its digest, when it ended and how long it took."""

    step: str
    digest: str
    finished: str
    duration_s: float
    result: str = "ok"
    details: Mapping[str, object] | None = None  # the step's JSON-able findings
    # What a volatile step found when it last ran (e.g. the commits a branch resolved to); the
    # runner compares it with the next check's to decide whether later steps still count.
    fingerprint: str = ""

    def to_json(self) -> dict[str, object]:
        doc: dict[str, object] = {
            "schema": STAMP_SCHEMA,
            "step": self.step,
            "digest": self.digest,
            "finished": self.finished,
            "duration_s": round(self.duration_s, 3),
            "result": self.result,
        }
        if self.details:
            doc["details"] = self.details
        if self.fingerprint:
            doc["fingerprint"] = self.fingerprint
        return doc


def stamps_dir(state: Path) -> Path:
    return state / "stamps"


def stamp_path(state: Path, step: str) -> Path:
    return stamps_dir(state) / f"{step}.json"


def read_stamp(state: Path, step: str) -> Stamp | None:
    """The stamp of `step`, or None when absent or unreadable (an unreadable stamp = not done)."""
    try:
        doc = json.loads(stamp_path(state, step).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("schema") != STAMP_SCHEMA:
        return None
    if doc.get("details") is not None and not isinstance(doc.get("details"), dict):
        return None  # details of the wrong shape: the step's result is unknown, so it runs again
    try:
        return Stamp(
            step=str(doc["step"]),
            digest=str(doc["digest"]),
            finished=str(doc["finished"]),
            duration_s=float(doc["duration_s"]),
            result=str(doc.get("result", "ok")),
            details=doc.get("details") if isinstance(doc.get("details"), dict) else None,
            fingerprint=str(doc.get("fingerprint", "") or ""),
        )
    except (KeyError, TypeError, ValueError):
        return None


def write_stamp(state: Path, stamp: Stamp) -> Path:
    """Write a stamp atomically; on any OSError nothing is left behind and the error propagates."""
    path = stamp_path(state, stamp.step)
    write_atomic(path, json.dumps(stamp.to_json(), indent=2, sort_keys=True) + "\n")
    return path


def remove_stamp(state: Path, step: str) -> bool:
    try:
        stamp_path(state, step).unlink()
        return True
    except FileNotFoundError:
        return False


def is_kit_work_dir(state: Path) -> bool:
    """True when `<state>` holds the marker or a readable stamp (work dirs older than the
    marker): only then may `invoke clean` delete anything under the work dir."""
    if (state / WORK_DIR_MARKER).is_file():
        return True
    try:
        names = [p.stem for p in stamps_dir(state).glob("*.json")]
    except OSError:
        return False
    return any(read_stamp(state, name) is not None for name in names)
