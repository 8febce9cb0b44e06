"""The suite's outputs: a versioned JSON document and a table a person reads.

Owns: the report schema ("rocmforge.verify/1"), environment and version figures, the exit code
rule (1 on any FAIL, else 0) and the table. Must not: import torch at module level (it receives
the module), or anything outside the standard library (rich only when importable and on a TTY)
and the kit's stdlib-only rocmforge.knowledge.triton.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import os
import platform
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import TextIO, TypedDict

from rocmforge import __version__
from rocmforge.knowledge.triton import TRITON_PROVIDERS
from rocmforge.verify.model import CheckResult, Status, VerifyOptions

SCHEMA = "rocmforge.verify/1"

# Variables that change which GPUs or kernels a run sees; recorded so a report explains itself.
RELEVANT_ENV = (
    "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES",
    "HSA_OVERRIDE_GFX_VERSION", "PYTORCH_ROCM_ARCH", "HIP_PLATFORM", "ROCM_PATH",
    "NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS",
)


def exit_code(results: Sequence[CheckResult]) -> int:
    return 1 if any(r.status is Status.FAIL for r in results) else 0


def dist_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


class Versions(TypedDict, total=False):
    """What the report says was imported (None: not there)."""

    python: str
    torch: str | None
    torch_hip: str | None
    torch_cuda: str | None
    triton: str | None
    triton_dist: str  # which Triton distribution provided `triton`


class VerifyDocument(TypedDict):
    """The `--json` report (schema rocmforge.verify/1)."""

    schema: str
    rocmforge_version: str  # the kit that ran the suite: for bug reports
    created: str
    wall_s: float
    exit_code: int
    options: dict[str, object]
    environment: dict[str, object]
    versions: Versions
    summary: dict[str, int]
    notes: list[str]
    checks: list[dict[str, object]]


def versions(torch: ModuleType) -> Versions:
    found: Versions = {
        "python": platform.python_version(),
        "torch": getattr(torch, "__version__", None),
        "torch_hip": getattr(torch.version, "hip", None),
        "torch_cuda": getattr(torch.version, "cuda", None),
        "triton": None,
    }
    for name in TRITON_PROVIDERS:
        version = dist_version(name)
        if version:
            found["triton"] = version
            found["triton_dist"] = name
            break
    return found


def environment() -> dict[str, object]:
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python_executable": sys.executable,
        "env": {k: os.environ[k] for k in RELEVANT_ENV if k in os.environ},
    }


def build_document(*, options: VerifyOptions, results: Sequence[CheckResult],
                   torch: ModuleType, wall_s: float, notes: Sequence[str] = ()
                   ) -> VerifyDocument:
    counts = {s.value: sum(1 for r in results if r.status is s) for s in Status}
    return {
        "schema": SCHEMA,
        "rocmforge_version": __version__,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "wall_s": round(wall_s, 2),
        "exit_code": exit_code(results),
        "options": {
            "device": options.device, "only": list(options.only), "expect": list(options.expect),
            "triton_pin": options.triton_pin or None,
        },
        "environment": environment(),
        "versions": versions(torch),
        "summary": counts,
        "notes": list(notes),
        "checks": [r.to_json() for r in results],
    }


def write_json(document: VerifyDocument, path: str) -> None:
    """Write the report atomically: a crash or full disk never leaves half a JSON document."""
    from pathlib import Path

    from rocmforge.fsutil import write_atomic

    write_atomic(Path(path), json.dumps(document, indent=2, default=str) + "\n")


def table_rows(results: Sequence[CheckResult]) -> list[tuple[str, str, str, str]]:
    """One row per check, then its per-item sub-rows (figures["rows"]: name, status, reason,
    seconds; e.g. triton_targets' one row per GPU target), indented under it."""
    rows = []
    for r in results:
        rows.append((r.name, r.status.value, f"{r.seconds:.1f}s", r.reason))
        subs = r.figures.get("rows", [])
        for sub in subs if isinstance(subs, list) else []:
            rows.append((f"  {sub['name']}", sub["status"], f"{sub['seconds']:.1f}s",
                         sub["reason"]))
    return rows


def plain_table(results: Sequence[CheckResult]) -> str:
    rows = [("CHECK", "STATUS", "TIME", "REASON"), *table_rows(results)]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = ["  ".join([*(row[i].ljust(widths[i]) for i in range(3)), row[3]]).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  ------")
    return "\n".join(lines) + "\n"


def print_report(results: Sequence[CheckResult], document: VerifyDocument,
                 stream: TextIO | None = None) -> None:
    """The table, then one line with the totals. Rich on a colour terminal, else plain."""
    stream = stream or sys.stdout
    counts = document["summary"]
    total = (f"{counts['PASS']} passed, {counts['WARN']} warned, {counts['FAIL']} failed, "
             f"{counts['SKIP']} skipped in {document['wall_s']:.1f} s")
    found = document["versions"]
    versions_line = (f"torch {found['torch']}, hip {found['torch_hip']}, "
                     f"cuda {found['torch_cuda']}, triton {found['triton']}")
    isatty = getattr(stream, "isatty", None)
    if os.environ.get("NO_COLOR", "") == "" and isatty is not None and isatty():
        try:
            from rich.console import Console
            from rich.table import Table
        except ImportError:
            pass
        else:
            styles = {"PASS": "green", "WARN": "yellow", "FAIL": "bold red", "SKIP": "dim"}
            table = Table(title=f"rocmforge verify: {versions_line}", title_justify="left")
            for column in ("check", "status", "time", "reason"):
                table.add_column(column, overflow="fold")
            for name, status, seconds, reason in table_rows(results):
                table.add_row(name, f"[{styles[status]}]{status}[/]", seconds, reason)
            console = Console(file=stream)
            console.print(table)
            console.print(total)
            return
    stream.write(f"rocmforge verify: {versions_line}\n")
    stream.write(plain_table(results))
    stream.write(total + "\n")
    stream.flush()
