"""Failure triage for the runner and the configure check: a thin adapter over rocmforge.triage.

Owns: the `Triage` shape the runner prints (signature id, cause, fix, the lines to show) and
reading the CMake summary's `USE_ROCM` line. Must not: hold rules (rocmforge/triage and
config/diagnostics.toml do), run anything or write files.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from rocmforge.triage import run_context
from rocmforge.triage.engine import MAX_EVIDENCE, diagnose
from rocmforge.triage.model import Diagnosis
from rocmforge.triage.parsers import PARSERS
from rocmforge.triage.rule import Rule
from rocmforge.triage.table import RUN_FIELDS, Signature
from rocmforge.triage.table import load_signatures as _load_table

__all__ = ["MAX_RELEVANT_LINES", "RUN_FIELDS", "Signature", "Triage", "configure_reports_rocm",
           "load_signatures", "relevant_lines", "run_context", "triage", "triage_file",
           "triage_lines"]

MAX_RELEVANT_LINES = MAX_EVIDENCE

# Summary.cmake: two spaces, the name padded to column 24, ": ", the value (reference §2.1).
_USE_ROCM_LINE = re.compile(r"^--\s+USE_ROCM\s+:\s*(\S*)\s*$")
_SUMMARY_START = re.compile(r"^--\s+\*+\s+Summary\s+\*+\s*$")


@dataclass(frozen=True, kw_only=True)
class Triage:
    """The explanation of a failed step, ready to print."""

    signature_id: str
    cause: str
    fix: str
    relevant_lines: tuple[str, ...]
    source: str = ""
    klass: str = ""
    subject: str = ""


# The parsers this adapter has always used (those of the former triage/rules.py), in their
# former order; until the runner takes the whole rule set, as `invoke triage` does.
_FIRST_IDS = (
    "disk-full", "compiler-killed", "out-of-memory", "exit-137", "cmake-config-file",
    "cmake-could-not-find", "cmake-incompatible-version", "pkg-config-missing", "missing-header",
    "std-header-missing", "host-function-in-device", "unsupported-gcc", "triton-cuda-backend",
    "cannot-find-lib", "undefined-reference", "relocation-overflow", "cannot-open-so",
    "undefined-symbol", "glibcxx-version", "unsupported-offload-arch", "tensile-library",
    "hipblaslt-arch", "pkg-resources", "no-module", "no-distribution", "cmake-4-policy",
    "triton-no-driver", "triton-import", "aotriton-error", "ck-error", "compiler-crash",
    "hipify-failed", "not-compiled-with-gpu", "cuda-thrust", "oom-killer", "aotriton-arch",
    "aotriton-no-target", "aotriton-no-runtime", "flash-attention-arch", "cuda-toolkit-path",
    "hip-platform-nvcc", "mixed-hcc", "setup-cmake-version", "hipify-module-missing",
    "hipify-recursion", "triton-lld-missing", "isolated-torch", "hipified-duplicate",
    "llvm-stack-dump")
_BY_ID = {rule.id: rule for rule in PARSERS}
_FIRST_PARSERS: tuple[Rule, ...] = tuple(_BY_ID[name] for name in _FIRST_IDS)


def load_signatures(directory: str | Path | None = None) -> tuple[Signature, ...]:
    """The table's signatures (config/diagnostics.toml, or the one in `directory`)."""
    return _load_table(None if directory is None else str(directory))


def triage(log_text: str, step: str = "", *, signatures: tuple[Signature, ...] | None = None,
           context: Mapping[str, str] | None = None) -> Triage | None:
    """The first root cause of a failed step's log; None when nothing explains it."""
    return triage_lines(io.StringIO(log_text), step, signatures=signatures, context=context)


def triage_file(path: Path, step: str = "", *, signatures: tuple[Signature, ...] | None = None,
                context: Mapping[str, str] | None = None) -> Triage | None:
    """`triage` for a log on disk, streamed (bad bytes replaced, never loaded whole)."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        return triage_lines(handle, step, signatures=signatures, context=context)


def triage_lines(lines: Iterable[str], step: str = "", *,
                 signatures: tuple[Signature, ...] | None = None,
                 context: Mapping[str, str] | None = None) -> Triage | None:
    table = load_signatures() if signatures is None else signatures
    found = diagnose(lines, _FIRST_PARSERS + tuple(s.as_rule() for s in table), step,
                     {**run_context({}), **(context or {})})
    return as_triage(found)


def as_triage(found: Diagnosis) -> Triage | None:
    if found.klass is None:
        return None
    return Triage(signature_id=found.rule, cause=found.cause, fix=found.fix,
                  relevant_lines=tuple(e.text for e in found.evidence), source=found.source,
                  klass=found.klass, subject=found.subject)


def relevant_lines(log_text: str) -> tuple[str, ...]:
    """The error-looking lines of a log (at most 30), for a failure nothing explains."""
    found = diagnose(io.StringIO(log_text), (), "")
    return tuple(e.text for e in found.evidence)


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
