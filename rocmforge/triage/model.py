"""The answer of triage: one Diagnosis, its evidence, and the closed list of failure classes.

Owns: the class names (one place), `Finding` (what one rule saw at one line) and `Diagnosis`
(the chosen finding with its evidence lines, ready to print or to serialise). Must not: parse
logs or read files.
"""

from __future__ import annotations

from dataclasses import dataclass

# The failure classes `invoke triage --json` may answer, in the order the README lists them.
CLASSES: tuple[str, ...] = (
    "missing-component",
    "host-compiler",
    "cmake",
    "gpu-target",
    "rocm-install",
    "out-of-memory",
    "triton",
    "aotriton",
    "link",
    "import",
    "python-packaging",
    "hipify",
    "rocm-disabled",
    "math-library",
    "disk-full",
    "composable-kernel",
    "compiler-crash",
    "compiler-cache",
)

SCHEMA = "rocmforge.triage/1"


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One rule's reading of one log line: what it is about and why it failed.

    `tier` orders findings before their position: 0 for conditions that explain every error
    after them (a full disk, a killed compiler), 1 for a root cause, 2 for a symptom that a
    root cause elsewhere in the log explains better (a crash report, a generic error).
    """

    rule: str
    klass: str
    subject: str
    cause: str
    fix: str
    lineno: int
    tier: int = 1
    source: str = ""

    def __post_init__(self) -> None:
        if self.klass not in CLASSES:
            raise ValueError(f"unknown failure class {self.klass!r} (rule {self.rule})")


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """A log line the diagnosis rests on: its 1-based number and its text (prefixes removed)."""

    lineno: int
    text: str


@dataclass(frozen=True, kw_only=True)
class Alternative:
    """Another class the log also fits, weaker than the answer: its rule, subject and the line
    that shows it (so a reader can weigh it)."""

    klass: str
    subject: str
    rule: str
    evidence: Evidence


@dataclass(frozen=True, kw_only=True)
class Diagnosis:
    """What triage concluded about a log. `klass` is None when nothing was explained: then
    `evidence` holds the lines that look like errors and no cause is claimed."""

    klass: str | None
    subject: str
    cause: str
    fix: str
    rule: str
    evidence: tuple[Evidence, ...]
    source: str = ""
    step: str = ""
    alternatives: tuple[Alternative, ...] = ()
    """Other classes some line of the log fits (one per class, strongest first); never set
    when nothing was explained."""

    @classmethod
    def unexplained(cls, *, step: str = "", evidence: tuple[Evidence, ...] = ()) -> Diagnosis:
        """No cause claimed: only the lines that look like errors, if any."""
        return cls(klass=None, subject="", cause="", fix="", rule="", evidence=evidence,
                   step=step)

    @property
    def explained(self) -> bool:
        return self.klass is not None

    def to_json(self) -> dict[str, object]:
        return {
            "schema": SCHEMA,
            "class": self.klass,
            "subject": self.subject or None,
            "cause": self.cause or None,
            "fix": self.fix or None,
            "rule": self.rule or None,
            "step": self.step or None,
            "source": self.source or None,
            "evidence": [{"line": e.lineno, "text": e.text} for e in self.evidence],
            "alternatives": [{"class": a.klass, "subject": a.subject or None, "rule": a.rule,
                              "evidence": {"line": a.evidence.lineno, "text": a.evidence.text}}
                             for a in self.alternatives],
        }
