"""Failure triage for build logs: which known failure this is, why, the fix, and the lines to show.

Owns: loading `config/diagnostics.toml` (strictly, regexes compiled at load), scanning a log for
the first matching signature, choosing at most 30 relevant lines, and reading the CMake summary's
`USE_ROCM` line. Must not: run anything, read the environment or write files; the runner hands it
log text (or a path, streamed) and prints what it returns.

Logs of a PyTorch build are large (a ninja log is several MB, with command lines of many KB), so
the scan streams line by line and keeps only bounded buffers: a few lines of context before the
current one, the first matches of each signature, and a capped set of error-looking lines.
"""

from __future__ import annotations

import io
import re
import string
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from rocmforge.errors import ConfigError
from rocmforge.knowledge.toml_files import check_keys, config_dir, expect_type, read_toml

DIAGNOSTICS_FILE = "diagnostics.toml"
MAX_RELEVANT_LINES = 30
# Lines kept around a signature match (before, after).
CONTEXT_BEFORE = 2
CONTEXT_AFTER = 2
# A ninja command line can be tens of KB; show its start only.
MAX_LINE_CHARS = 400
# Error-looking lines kept: the first ones are usually the root cause, the last ones the summary.
FIRST_ERRORS_KEPT = 12
LAST_ERRORS_KEPT = 6
MATCHES_KEPT_PER_SIGNATURE = 3

# Lines a person scanning a failed build looks for first (compiler, ninja, CMake, Python, ld).
# Plain alternatives only: this runs on every line of a multi-MB log.
ERROR_LINE = re.compile(
    r"error:|FAILED:|CMake Error|\bError\b|\bfatal\b|Traceback \(most recent|"
    r"undefined reference|Killed|Aborted|(?:Error|Exception): "
)

# Summary.cmake: two spaces, the name padded to column 24, ": ", the value (reference §2.1).
_USE_ROCM_LINE = re.compile(r"^--\s+USE_ROCM\s+:\s*(\S*)\s*$")
_SUMMARY_START = re.compile(r"^--\s+\*+\s+Summary\s+\*+\s*$")


@dataclass(frozen=True, kw_only=True)
class Signature:
    """One known failure: a line regex, what it means and what to do about it."""

    id: str
    pattern: re.Pattern[str]
    cause: str
    fix: str
    source: str
    requires: re.Pattern[str] | None = None
    steps: tuple[str, ...] = ()

    def applies_to(self, step: str) -> bool:
        return not step or not self.steps or step in self.steps


@dataclass(frozen=True, kw_only=True)
class Triage:
    """The explanation of a failed step, ready to print."""

    signature_id: str
    cause: str
    fix: str
    relevant_lines: tuple[str, ...]
    source: str = ""


def load_signatures(directory: str | Path | None = None) -> tuple[Signature, ...]:
    """Read diagnostics.toml from `directory` (default: the kit's config/) in file order."""
    path = config_dir(directory) / DIAGNOSTICS_FILE
    doc = read_toml(path)
    check_keys(doc, where=str(path), optional=("signature",))
    entries = expect_type(doc.get("signature", []), list, where=f"{path}: signature")
    seen: set[str] = set()
    signatures = []
    for index, entry in enumerate(entries):
        where = f"{path}: signature #{index + 1}"
        expect_type(entry, dict, where=where)
        check_keys(
            entry,
            where=where,
            required=("id", "pattern", "cause", "fix", "source"),
            optional=("requires", "steps"),
        )
        for key in ("id", "pattern", "cause", "fix", "source"):
            expect_type(entry[key], str, where=f"{where}.{key}")
            if not entry[key].strip():
                raise ConfigError(
                    f"{where}.{key} is empty",
                    "every signature needs an id, a pattern, a cause, a fix and its source",
                    f"write a value for {key}",
                )
        sig_id = entry["id"]
        if sig_id in seen:
            raise ConfigError(
                f'Signature id "{sig_id}" appears twice in {path}',
                "ids name signatures in reports and tests, so they must be unique",
                "rename one of them",
            )
        seen.add(sig_id)
        pattern = _compile(entry["pattern"], where=f"{where} ({sig_id}).pattern")
        requires = None
        if "requires" in entry:
            expect_type(entry["requires"], str, where=f"{where}.requires")
            requires = _compile(entry["requires"], where=f"{where} ({sig_id}).requires")
        steps: tuple[str, ...] = ()
        if "steps" in entry:
            expect_type(entry["steps"], list, where=f"{where}.steps")
            steps = tuple(expect_type(s, str, where=f"{where}.steps[]") for s in entry["steps"])
        for key in ("cause", "fix"):
            _check_placeholders(entry[key], pattern, where=f"{where} ({sig_id}).{key}")
        signatures.append(
            Signature(
                id=sig_id,
                pattern=pattern,
                cause=entry["cause"],
                fix=entry["fix"],
                source=entry["source"],
                requires=requires,
                steps=steps,
            )
        )
    return tuple(signatures)


def triage(
    log_text: str,
    step: str = "",
    *,
    signatures: tuple[Signature, ...] | None = None,
) -> Triage | None:
    """Match a failed step's log against the known signatures; None when none matches.

    The first signature in table order that matches wins (the table lists specific failures
    before generic ones), not the first line in the log: a CPU fallback or an OOM kill explains
    the later errors that follow it.
    """
    return triage_lines(io.StringIO(log_text), step, signatures=signatures)


def triage_file(
    path: Path,
    step: str = "",
    *,
    signatures: tuple[Signature, ...] | None = None,
    context: Mapping[str, str] | None = None,
) -> Triage | None:
    """`triage` for a log on disk, streamed (bad bytes replaced, never loaded whole)."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        return triage_lines(handle, step, signatures=signatures, context=context)


# Placeholders any signature may use, filled from the failed run by run_context().
RUN_FIELDS = ("max_jobs", "fewer_jobs", "jobs_advice")


def run_context(env: Mapping[str, str]) -> dict[str, str]:
    """Values of the failed run that a signature's cause and fix may name ({max_jobs},
    {fewer_jobs}), so advice fits the run: half the jobs it really used, never a number that
    is not fewer."""
    value = env.get("MAX_JOBS", "").strip()
    if value.isdigit() and int(value) > 0:
        jobs = int(value)
        fewer = max(1, jobs // 2)
        return {"max_jobs": str(jobs), "fewer_jobs": str(fewer),
                "jobs_advice": (f"MAX_JOBS was {jobs}; rerun with half as many, "
                                f"`ROCMFORGE_MAX_JOBS={fewer} invoke build`" if jobs > 1 else
                                "MAX_JOBS was already 1, so fewer jobs cannot help: add memory "
                                "or swap, or build on a larger machine")}
    return {"max_jobs": "", "fewer_jobs": "",
            "jobs_advice": "MAX_JOBS was not set (ninja then runs one job per core); rerun "
                           "with fewer, e.g. `ROCMFORGE_MAX_JOBS=4 invoke build`"}


def triage_lines(
    lines: Iterable[str],
    step: str = "",
    *,
    signatures: tuple[Signature, ...] | None = None,
    context: Mapping[str, str] | None = None,
) -> Triage | None:
    """The streaming core of `triage`: one pass, bounded memory."""
    if signatures is None:
        signatures = load_signatures()
    active = [s for s in signatures if s.applies_to(step)]
    scan = _scan(lines, active)
    for sig in active:
        hits = scan.matches.get(sig.id)
        if not hits:
            continue
        if sig.requires is not None and sig.id not in scan.requires_seen:
            continue
        groups = {**run_context({}), **(context or {}), **hits[0].groups}
        return Triage(
            signature_id=sig.id,
            cause=_fill(sig.cause, groups),
            fix=_fill(sig.fix, groups),
            relevant_lines=scan.relevant(focus=sig.id),
            source=sig.source,
        )
    return None


def relevant_lines(log_text: str) -> tuple[str, ...]:
    """The error-looking lines of a log (at most 30), for a failure no signature explains."""
    return _scan(io.StringIO(log_text), []).relevant(focus=None)


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


# --- internals -------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Hit:
    lineno: int
    groups: dict[str, str]


@dataclass(kw_only=True)
class _Scan:
    """What one pass over a log kept: bounded by construction. Mutable on purpose: the scan
    fills it line by line; it never leaves this module."""

    matches: dict[str, list[_Hit]]
    requires_seen: set[str]
    # lineno -> (text, priority); lower priority number = more important.
    lines: dict[int, tuple[str, int]]
    match_lines: dict[str, set[int]]

    def relevant(self, *, focus: str | None) -> tuple[str, ...]:
        ranked: list[tuple[int, int, str]] = []
        focus_lines = self.match_lines.get(focus, set()) if focus else set()
        for lineno, (text, priority) in self.lines.items():
            if priority == _P_CONTEXT and focus is not None and not _near(lineno, focus_lines):
                continue
            if lineno in focus_lines:
                priority = _P_MATCH
            ranked.append((priority, lineno, text))
        ranked.sort()
        chosen: list[tuple[int, str]] = []
        seen_text: set[str] = set()
        for _priority, lineno, text in ranked:
            key = text.strip()
            if not key or key in seen_text:
                continue
            seen_text.add(key)
            chosen.append((lineno, text))
            if len(chosen) >= MAX_RELEVANT_LINES:
                break
        chosen.sort()
        return tuple(text for _lineno, text in chosen)


_P_MATCH = 0
_P_CONTEXT = 1
_P_ERROR = 2


def _near(lineno: int, anchors: set[int]) -> bool:
    return any(a - CONTEXT_BEFORE <= lineno <= a + CONTEXT_AFTER for a in anchors)


def _scan(lines: Iterable[str], signatures: list[Signature]) -> _Scan:
    matches: dict[str, list[_Hit]] = {}
    match_lines: dict[str, set[int]] = {}
    requires_seen: set[str] = set()
    kept: dict[int, tuple[str, int]] = {}
    before: deque[tuple[int, str]] = deque(maxlen=CONTEXT_BEFORE)
    after_until = -1
    first_errors = 0
    last_errors: deque[tuple[int, str]] = deque(maxlen=LAST_ERRORS_KEPT)
    requirers = [s for s in signatures if s.requires is not None]

    def keep(lineno: int, text: str, priority: int) -> None:
        old = kept.get(lineno)
        if old is None or priority < old[1]:
            kept[lineno] = (text, priority)

    for lineno, raw in enumerate(_lines(lines)):
        text = raw if len(raw) <= MAX_LINE_CHARS else raw[:MAX_LINE_CHARS] + " …"
        matched_here = False
        for sig in signatures:
            hits = matches.get(sig.id)
            if hits is not None and len(hits) >= MATCHES_KEPT_PER_SIGNATURE:
                continue
            found = sig.pattern.search(raw)
            if found is None:
                continue
            groups = {k: v for k, v in found.groupdict().items() if v is not None}
            matches.setdefault(sig.id, []).append(_Hit(lineno=lineno, groups=groups))
            match_lines.setdefault(sig.id, set()).add(lineno)
            matched_here = True
        for sig in requirers:
            if sig.id not in requires_seen and sig.requires is not None and (
                sig.requires.search(raw)
            ):
                    requires_seen.add(sig.id)
                    # The context line proves the match; show it too.
                    match_lines.setdefault(sig.id, set()).add(lineno)
                    matched_here = True
        if matched_here:
            keep(lineno, text, _P_MATCH)
            for prev_no, prev_text in before:
                keep(prev_no, prev_text, _P_CONTEXT)
            after_until = lineno + CONTEXT_AFTER
        elif lineno <= after_until:
            keep(lineno, text, _P_CONTEXT)
        if _looks_like_error(raw):
            if first_errors < FIRST_ERRORS_KEPT:
                first_errors += 1
                keep(lineno, text, _P_ERROR)
            else:
                last_errors.append((lineno, text))
        before.append((lineno, text))
    for lineno, text in last_errors:
        keep(lineno, text, _P_ERROR)
    return _Scan(
        matches=matches, requires_seen=requires_seen, lines=kept, match_lines=match_lines
    )


def _looks_like_error(raw: str) -> bool:
    # Substring tests first (C speed); the regex only runs on the few lines that pass.
    if not any(word in raw for word in _ERROR_WORDS):
        return False
    return ERROR_LINE.search(raw) is not None


_ERROR_WORDS = ("rror", "FAILED", "fatal", "Traceback", "undefined reference", "Killed", "Aborted",
                "Exception")


def _lines(source: Iterable[str]) -> Iterator[str]:
    for line in source:
        yield line.rstrip("\r\n")


def _compile(pattern: str, *, where: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ConfigError(
            f"{where} is not a valid Python regular expression: {exc}",
            "signatures are compiled when the table is loaded, so a typo cannot hide until a "
            "build fails",
            "fix the pattern (test it with python3 -c 'import re; re.compile(...)')",
        ) from None


def _check_placeholders(text: str, pattern: re.Pattern[str], *, where: str) -> None:
    for _literal, field, _spec, _conv in string.Formatter().parse(text):
        if field is None:
            continue
        if field not in pattern.groupindex and field not in RUN_FIELDS:
            known = ", ".join(sorted(pattern.groupindex)) or "none"
            raise ConfigError(
                f"{where} uses {{{field}}} but the pattern has no group named {field!r}",
                f"placeholders are filled from the pattern's named groups (it has: {known}) "
                f"and from the failed run ({', '.join(RUN_FIELDS)})",
                f"add (?P<{field}>...) to the pattern or remove the placeholder",
            )


class _Blank(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return f"<{key}>"


def _fill(text: str, groups: dict[str, str]) -> str:
    return text.format_map(_Blank(groups))
