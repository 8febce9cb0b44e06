"""The values the verify suite passes around: what was asked, and what each check found.

Owns: `Status`, `CheckResult` (one check's verdict, reason and figures), `VerifyOptions` (what the
user asked for) and the list of check names. Must not: import torch or anything outside the
standard library, because `python -m rocmforge.verify` must report a broken torch cleanly.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

# Order in which checks run and appear in the report. `build` first: its figures (which build
# this is) explain every later verdict. `comm` late: it starts other processes.
CHECK_NAMES: tuple[str, ...] = (
    "build",
    "arch",
    "static",
    "triton_targets",
    "ops",
    "blas",
    "attention",
    "triton",
    "memory",
    "perf",
    "comm",
    "companions",
    "extensions",
)

# The companion packages the `companions` check knows, in report order.
COMPANIONS: tuple[str, ...] = ("torchvision", "torchaudio")

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

# Message sizes for `comm`: 1 KiB .. 1 GiB on GPUs (issue 8), small on CPU so the gloo run stays
# a few seconds on a two-core CI machine.
DEFAULT_COMM_SIZES_GPU: tuple[int, ...] = (KIB, 64 * KIB, MIB, 16 * MIB, 256 * MIB, GIB)
DEFAULT_COMM_SIZES_CPU: tuple[int, ...] = (KIB, 64 * KIB, MIB)


class Status(str, enum.Enum):
    """A check's verdict. FAIL makes the run exit 1; WARN and SKIP do not."""

    PASS = "PASS"
    WARN = "WARN"
    FAIL = "FAIL"
    SKIP = "SKIP"


@dataclass(frozen=True, kw_only=True)
class CheckResult:
    """One check's verdict. `figures` holds the numbers behind it, JSON-ready."""

    name: str
    status: Status
    reason: str
    figures: dict[str, object] = field(default_factory=dict)
    seconds: float = 0.0

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "status": self.status.value,
            "reason": self.reason,
            "seconds": round(self.seconds, 3),
            "figures": self.figures,
        }


@dataclass(frozen=True, kw_only=True)
class ExpectedCompanion:
    """A companion the build's manifest says it built (dist/manifest.json "companions"): it must
    be installed here, import, and be that version."""

    name: str  # "torchvision" or "torchaudio"
    version: str = ""  # "0.28.0"; "" when the manifest does not say
    wheel: str = ""  # its wheel's file name in dist/
    commit: str = ""  # the source commit it was built from


@dataclass(frozen=True, kw_only=True)
class ExpectedExtension:
    """An extension the manifest says the build made (a "companions" entry of kind
    "extension"): it must import, be that version, hold the built targets, run its op."""

    name: str
    module: str = ""
    distribution: str = ""  # the wheel's distribution name (importlib.metadata)
    version: str = ""
    backend: str = ""
    verify: str = ""  # the op the recipe names ("" = import only)
    targets: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class VerifyOptions:
    """What one run of the suite was asked to do (from the command line or a task's flags).

    `device` is "cuda" (ROCm and CUDA builds both use the `cuda` device string) or "cpu".
    `expect` holds requested GPU targets such as "gfx1100" or "gfx942:sramecc+:xnack-".
    `comm_fault` is for proving the timeout path: "exit:RANK" makes that rank die before its
    first collective, "hang:RANK" makes it sleep; empty in normal runs.
    `companions` are the companions `--manifest` says were built (empty without a manifest);
    `manifest_given` whether a manifest was read at all.
    """

    device: str = "cuda"
    only: tuple[str, ...] = CHECK_NAMES
    expect: tuple[str, ...] = ()
    triton_pin: str = ""
    comm_sizes: tuple[int, ...] = ()
    comm_timeout_s: float = 0.0
    comm_world_size: int = 0
    comm_fault: str = ""
    companions: tuple[ExpectedCompanion, ...] = ()
    extensions: tuple[ExpectedExtension, ...] = ()
    manifest_given: bool = False

    def sizes_for_comm(self) -> tuple[int, ...]:
        if self.comm_sizes:
            return self.comm_sizes
        return DEFAULT_COMM_SIZES_CPU if self.device == "cpu" else DEFAULT_COMM_SIZES_GPU

    def timeout_for_comm(self) -> float:
        if self.comm_timeout_s > 0:
            return self.comm_timeout_s
        # Seconds without progress (no rank starting a new phase) before comm declares a hang.
        # The slowest phase is the first: importing torch and rendezvous, a few seconds (10+ on a
        # loaded two-core machine); a 1 GiB all-gather on any working GPU pair takes well under
        # one. One or two minutes leaves room for cold caches and slow links while still ending
        # a hang in bounded time.
        return 60.0 if self.device == "cpu" else 120.0


def human_bytes(size: int) -> str:
    """1024 -> '1 KiB'; used in figure keys and messages."""
    for unit, scale in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def parse_size(text: str) -> int:
    """'1KiB', '64K', '1 GiB', '4096' -> bytes. ValueError on anything else."""
    cleaned = text.strip().replace(" ", "").lower()
    units = (("gib", GIB), ("mib", MIB), ("kib", KIB), ("g", GIB), ("m", MIB), ("k", KIB),
             ("b", 1))
    number, scale = cleaned, 1
    for suffix, unit in units:
        if cleaned.endswith(suffix):
            number, scale = cleaned[: -len(suffix)], unit
            break
    if not number.isdigit() or int(number) <= 0:
        raise ValueError(f"not a size: {text!r} (examples: 1KiB, 64MiB, 1GiB, 4096)")
    return int(number) * scale
