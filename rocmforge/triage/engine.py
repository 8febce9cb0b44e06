"""Triage of a whole log: one streaming pass, every rule, then the first root cause.

Owns: reading lines (cleaned by `lines.clean`), tracking CMake message blocks, trying each rule
on the lines that hold its trigger words, collecting facts the answer may name (the GPU's
target), choosing the finding that explains the log (lowest tier, then earliest line), and the
evidence lines. Must not: print, run programs or read anything but the lines it is given.

Memory stays bounded on multi-MB ninja logs: a few lines of context before each line, a
capped list of findings, and a capped set of error-looking lines.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from rocmforge.triage.lines import clean_labelled
from rocmforge.triage.model import Alternative, Diagnosis, Evidence, Finding
from rocmforge.triage.rule import LineView, Rule

MAX_EVIDENCE = 30
MAX_LINE_CHARS = 400
CONTEXT_BEFORE = 3
CONTEXT_AFTER = 4
MAX_FINDINGS = 200
FIRST_ERRORS_KEPT = 12
SAME_RULE_SHOWN = 3
LAST_ERRORS_KEPT = 6

ERROR_LINE = re.compile(
    r"error:|Error:|ERROR|FAILED|CMake Error|\bError\b|\bfatal\b|Traceback \(most recent|"
    r"undefined reference|undefined symbol|Killed|Aborted|(?:Error|Exception): |"
    r"cannot open shared object|No space left|not found|build stopped"
)
_ERROR_WORDS = ("rror", "FAILED", "fatal", "Traceback", "undefined", "Killed", "Aborted",
                "Exception", "cannot open", "No space", "not found", "ERROR", "build stopped")

# Where a log names the GPU a run-time error happened on: the HIP runtime's "Devices:" list and
# "for ISA:" and "No compatible code objects found for:", rocminfo, torch's gcnArchName, rocBLAS'
# "GPU arch :" (strong), and any other target
# a line names (weak: a compile target, a list). The code objects a bundle *holds* (hipv4-…) are
# not the device.
_DEVICE_STRONG = re.compile(
    r"gcnArchName\W+(?P<a>gfx[0-9a-f]{3,4})|GPU arch\s*:\s*(?P<b>gfx[0-9a-f]{3,4})"
    r"|^\s*Name:\s+(?P<c>gfx[0-9a-f]{3,4})\s*$"
    r"|amdgcn-amd-amdhsa--(?P<d>gfx[0-9a-f]{3,4})\S* - \[Not Found\]"
    r"|for ISA: amdgcn-amd-amdhsa--(?P<e>gfx[0-9a-f]{3,4})"
    r"|device ISA amdgcn-amd-amdhsa--(?P<f>gfx[0-9a-f]{3,4})"
    r"|No compatible code objects found for: (?P<g>gfx[0-9a-f]{3,4})"
)
_DEVICE_WEAK = re.compile(
    r"(?<!hipv4-)amdgcn-amd-amdhsa--(?P<d>gfx[0-9a-f]{3,4})"
    r"|(?i:device|GPU|arch(?:itecture)?|compiling for|ISA)\W{1,3}(?P<e>gfx[0-9a-f]{3,4})\b"
    r"|^# Architecture\s+from TensileCreateLibrary: (?P<f>gfx[0-9a-f]{3,4})\s*$"
)
STRONG_WEIGHT = 100

# Versioned ROCm roots a log names (/opt/rocm-7.0.1): two of them are two installs.
_ROCM_ROOT = re.compile(r"/opt/rocm-(\d+\.\d+(?:\.\d+)?)\b")
MAX_ROOTS = 8

# A long line with this many " -" flags is an echoed compile or link command.
COMMAND_FLAGS = 12
# GCC and GNU ld quote with ‘…’ in a UTF-8 locale and with '…' (or `…') otherwise: the rules
# see the ASCII form of either, the evidence keeps the line as it was written.
_TYPOGRAPHIC_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'"})
_CMAKE_HEADER = re.compile(r"^CMake (Error|Warning|Deprecation Warning)\b")


@dataclass(kw_only=True)
class _Scan:
    """What one pass kept; mutable while the pass fills it, never seen outside this module."""

    findings: list[Finding] = field(default_factory=list)
    kept: dict[int, str] = field(default_factory=dict)
    finding_lines: set[int] = field(default_factory=set)
    error_lines: list[int] = field(default_factory=list)
    last_errors: deque[int] = field(default_factory=lambda: deque(maxlen=LAST_ERRORS_KEPT))
    devices: dict[str, int] = field(default_factory=dict)
    requires_seen: set[str] = field(default_factory=set)
    unless_seen: set[str] = field(default_factory=set)
    requires_line: dict[str, int] = field(default_factory=dict)
    rocm_roots: list[str] = field(default_factory=list)
    lines_read: int = 0


def scan(lines: Iterable[str], rules: Iterable[Rule], step: str = "") -> _Scan:
    active = [r for r in rules if r.applies_to(step)]
    state = _Scan()
    before: deque[tuple[int, str]] = deque(maxlen=CONTEXT_BEFORE)
    recent: deque[str] = deque(maxlen=8)
    after_until = -1
    block = ""
    block_header = -1
    block_text = ""
    requirers = [r for r in active if r.requires is not None]
    voiders = [r for r in active if r.unless is not None]
    # Each trigger word once, with the rules (by position) it wakes: a line is checked for
    # every word once, not once per rule; rules without triggers are tried on every line.
    waking: dict[str, list[int]] = {}
    for position, rule in enumerate(active):
        for word in rule.triggers:
            waking.setdefault(word, []).append(position)
    always = [position for position, rule in enumerate(active) if not rule.triggers]
    for index, raw in enumerate(lines):
        lineno = index + 1
        text_full, label = clean_labelled(raw)
        stripped = text_full.strip()
        shown = stripped if len(stripped) <= MAX_LINE_CHARS else stripped[:MAX_LINE_CHARS] + " …"
        stripped = stripped.translate(_TYPOGRAPHIC_QUOTES)  # rules read one quote; shown keeps
        indented = bool(text_full) and text_full[0] in " \t"
        header = _CMAKE_HEADER.match(stripped)
        if header:
            block = "error" if header.group(1) == "Error" else "warning"
            block_header = lineno
            block_text = shown
        elif block and (stripped.startswith("-- ") or (stripped and not indented and
                        not stripped.startswith(("Call Stack", "CMake")))):
            block = ""
        view = None
        matched = False
        # A compiler or linker command line echoed by ninja or make (kilobytes of flags) holds
        # no message to explain, and its --offload-arch targets are not the GPU: skip it.
        command = len(stripped) > MAX_LINE_CHARS and stripped.count(" -") >= COMMAND_FLAGS
        if not command and len(state.findings) < MAX_FINDINGS:
            woken = set(always)
            for word, positions in waking.items():
                if word in stripped:
                    woken.update(positions)
            for position in sorted(woken):  # the rules' own order
                rule = active[position]
                found = rule.pattern.search(stripped)
                if found is None:
                    continue
                if view is None:
                    view = LineView(text=stripped, indented=indented, cmake_block=block,
                                    previous=tuple(recent), step=step,
                                    rocm_roots=tuple(state.rocm_roots), label=label)
                reading = rule.read(found, view)
                if reading is None:
                    continue
                state.findings.append(Finding(
                    rule=rule.id, klass=reading.klass or rule.klass, subject=reading.subject,
                    cause=reading.cause, fix=reading.fix, lineno=lineno, tier=rule.tier,
                    source=rule.source))
                matched = True
        for rule in requirers:
            if rule.id not in state.requires_seen and rule.requires is not None and \
                    rule.requires.search(stripped):
                state.requires_seen.add(rule.id)
                state.requires_line[rule.id] = lineno
                state.kept.setdefault(lineno, shown)
                state.finding_lines.add(lineno)
        for rule in voiders:
            if rule.unless is not None and rule.unless.search(stripped):
                state.unless_seen.add(rule.id)
        if "/rocm-" in stripped and len(state.rocm_roots) < MAX_ROOTS:
            for version in _ROCM_ROOT.findall(stripped):
                if version not in state.rocm_roots and len(state.rocm_roots) < MAX_ROOTS:
                    state.rocm_roots.append(version)
        if not command and "gfx" in stripped and "[code object" not in stripped:
            for regex, weight in ((_DEVICE_STRONG, STRONG_WEIGHT), (_DEVICE_WEAK, 1)):
                hits = [next(g for g in m.groups() if g) for m in regex.finditer(stripped)]
                for target in hits:
                    state.devices[target] = state.devices.get(target, 0) + weight
                if hits:
                    break
        if matched:
            state.kept[lineno] = shown
            state.finding_lines.add(lineno)
            if block and block_header > 0:
                state.kept[block_header] = block_text
                state.finding_lines.add(block_header)
            for prev_no, prev_text in before:
                state.kept.setdefault(prev_no, prev_text)
            after_until = lineno + CONTEXT_AFTER
        elif lineno <= after_until and stripped:
            state.kept.setdefault(lineno, shown)
        if stripped and any(w in stripped for w in _ERROR_WORDS) and ERROR_LINE.search(stripped):
            if len(state.error_lines) < FIRST_ERRORS_KEPT:
                state.error_lines.append(lineno)
                state.kept.setdefault(lineno, shown)
            else:
                state.last_errors.append(lineno)
                state.kept.setdefault(lineno, shown)
        if stripped:
            before.append((lineno, shown))
            recent.append(stripped)
        state.lines_read = lineno
    _trim(state)
    return state


def _trim(state: _Scan) -> None:
    """Drop kept lines nobody will show (error lines beyond the first and last few)."""
    wanted = set(state.error_lines) | set(state.last_errors) | state.finding_lines
    for lineno in list(state.kept):
        if lineno in wanted:
            continue
        if any(abs(lineno - f) <= CONTEXT_AFTER + CONTEXT_BEFORE for f in state.finding_lines):
            continue
        del state.kept[lineno]


def usable(findings: list[Finding], rules: Iterable[Rule], requires_seen: set[str],
           unless_seen: AbstractSet[str] = frozenset()) -> list[Finding]:
    """The findings that stand, strongest first: conditions that cause every later error
    (tier 0), then root causes, then symptoms (tier 2), each by line. A finding whose rule
    needs context the log does not hold, or whose lines the log shows to be symptoms, is
    dropped."""
    needs = {r.id for r in rules if r.requires is not None}
    kept = [f for f in findings if (f.rule not in needs or f.rule in requires_seen)
            and f.rule not in unless_seen]
    return sorted(kept, key=lambda f: (f.tier, f.lineno))


def choose(findings: list[Finding], rules: Iterable[Rule], requires_seen: set[str],
           unless_seen: AbstractSet[str] = frozenset()) -> Finding | None:
    """The finding that explains the log (the strongest that stands), or None."""
    ranked = usable(findings, rules, requires_seen, unless_seen)
    return ranked[0] if ranked else None


def diagnose(lines: Iterable[str], rules: Iterable[Rule], step: str = "",
             run: Mapping[str, str] | None = None) -> Diagnosis:
    rules = tuple(rules)
    state = scan(lines, rules, step)
    ranked = usable(state.findings, rules, state.requires_seen, state.unless_seen)
    chosen = ranked[0] if ranked else None
    if chosen is None:
        return Diagnosis.unexplained(step=step, evidence=_evidence(state, None))
    device = _device(state)
    fill = _Fill({**(run or {}), "device": device, "gfx": device or "<gfx>"})
    subject = chosen.subject
    if subject == "{device}":
        subject = device or "PYTORCH_ROCM_ARCH"
    return Diagnosis(klass=chosen.klass, subject=subject.format_map(fill),
                     cause=chosen.cause.format_map(fill), fix=chosen.fix.format_map(fill),
                     rule=chosen.rule, evidence=_evidence(state, chosen), source=chosen.source,
                     step=step, alternatives=_alternatives(state, chosen, ranked[1:], fill))


def _alternatives(state: _Scan, chosen: Finding, others: list[Finding],
                  fill: Mapping[str, str]) -> tuple[Alternative, ...]:
    """One alternative per other class some standing finding names, strongest first."""
    out: list[Alternative] = []
    classes = {chosen.klass}
    for other in others:
        if other.klass in classes:
            continue
        classes.add(other.klass)
        subject = other.subject
        if subject == "{device}":
            subject = fill.get("device") or "PYTORCH_ROCM_ARCH"
        out.append(Alternative(klass=other.klass, subject=subject.format_map(fill),
                               rule=other.rule, evidence=Evidence(
                                   lineno=other.lineno, text=state.kept.get(other.lineno, ""))))
    return tuple(out)


def _device(state: _Scan) -> str:
    """The target the log names most (strong mentions outweigh any number of weak ones; the
    first named wins a tie)."""
    if not state.devices:
        return ""
    return max(state.devices.items(), key=lambda item: item[1])[0]


def _evidence(state: _Scan, chosen: Finding | None) -> tuple[Evidence, ...]:
    if chosen is None:
        numbers = sorted(set(state.error_lines) | set(state.last_errors))
    else:
        near = [n for n in state.kept
                if chosen.lineno - CONTEXT_BEFORE <= n <= chosen.lineno + CONTEXT_AFTER]
        # The same rule's other lines (a summary repeating the cause) and the context line a
        # `requires` rule rests on.
        same = [f.lineno for f in state.findings if f.rule == chosen.rule][:SAME_RULE_SHOWN]
        context = [state.requires_line[chosen.rule]] if chosen.rule in state.requires_line else []
        numbers = sorted(set(near) | {chosen.lineno} | set(same) | set(context))
    out = []
    seen: set[str] = set()
    for lineno in numbers:
        text = state.kept.get(lineno, "")
        if text and text not in seen:
            seen.add(text)
            out.append(Evidence(lineno=lineno, text=text))
    return tuple(out[:MAX_EVIDENCE])


class _Fill(dict[str, str]):
    """format_map values: a placeholder the log and the run did not fill says so."""

    def __missing__(self, key: str) -> str:
        if key == "device":
            return "the GPU's target (the log does not name it)"
        return f"<{key}>"

    def __getitem__(self, key: str) -> str:
        value = super().get(key)
        if not value:
            return self.__missing__(key)
        return value
