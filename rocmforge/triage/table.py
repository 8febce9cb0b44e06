"""The signature table (config/diagnostics.toml) as triage rules.

Owns: reading the table strictly (unknown keys, empty values, duplicate ids, bad regexes and
placeholders the pattern cannot fill, a `steps` entry naming no step of knowledge.steps are
ConfigErrors at load) and turning each entry into a
`Rule`. The table holds the exact messages of one program each (a CMake FATAL_ERROR text, the
HIP runtime's error names, setup.py's download lines); the parsers for recurring shapes (linker,
loader, CMake package lookups) live in `parsers/`. Must not: scan logs.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from rocmforge.errors import ConfigError
from rocmforge.knowledge.steps import check_step_kind
from rocmforge.knowledge.toml_files import check_keys, config_dir, expect_type, read_toml
from rocmforge.triage.model import CLASSES
from rocmforge.triage.rule import LineView, Reading, Rule

DIAGNOSTICS_FILE = "diagnostics.toml"

# Placeholders any entry may use, filled from the failed run (rocmforge.triage.run_context)
# and from the whole log ({device}: the GPU target the log names; {gfx}: the same, or `<gfx>`
# where the log names none, for commands).
RUN_FIELDS = ("max_jobs", "fewer_jobs", "jobs_advice", "device", "gfx")


@dataclass(frozen=True, kw_only=True)
class Signature:
    """One table entry: a line regex, its class and subject, what it means and what to do."""

    id: str
    klass: str
    subject: str
    pattern: re.Pattern[str]
    cause: str
    fix: str
    source: str
    requires: re.Pattern[str] | None = None
    unless: re.Pattern[str] | None = None
    """A line that shows the matched one was recovered from (the run went on past it)."""
    steps: tuple[str, ...] = ()
    tier: int = 1
    triggers: tuple[str, ...] = ()
    """Words a line must hold for the pattern to be tried (() = every line is tried)."""

    def as_rule(self) -> Rule:
        return Rule(id=self.id, klass=self.klass, triggers=self.triggers, pattern=self.pattern,
                    read=self._read, tier=self.tier, steps=self.steps, source=self.source,
                    requires=self.requires, unless=self.unless)

    def _read(self, match: re.Match[str], view: LineView) -> Reading:
        groups = _Groups({k: v for k, v in match.groupdict().items() if v is not None})
        return Reading(subject=self.subject.format_map(groups),
                       cause=self.cause.format_map(groups), fix=self.fix.format_map(groups))


class _Groups(dict[str, str]):
    """Fills a pattern's groups and leaves the run's placeholders for the engine."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


@cache
def load_signatures(directory: str | None = None) -> tuple[Signature, ...]:
    """Read diagnostics.toml from `directory` (default: the kit's config/) in file order."""
    path = config_dir(directory) / DIAGNOSTICS_FILE
    doc = read_toml(path)
    check_keys(doc, where=str(path), optional=("signature",))
    entries = expect_type(doc.get("signature", []), list, where=f"{path}: signature")
    seen: set[str] = set()
    out = []
    for index, entry in enumerate(entries):
        where = f"{path}: signature #{index + 1}"
        expect_type(entry, dict, where=where)
        check_keys(entry, where=where,
                   required=("id", "class", "subject", "pattern", "cause", "fix", "source"),
                   optional=("requires", "unless", "steps", "tier", "triggers"))
        for key in ("id", "class", "subject", "pattern", "cause", "fix", "source"):
            expect_type(entry[key], str, where=f"{where}.{key}")
            if not entry[key].strip():
                raise ConfigError(f"{where}.{key} is empty",
                                  "every signature needs an id, a class, a subject, a pattern, "
                                  "a cause, a fix and its source", f"write a value for {key}")
        sig_id = entry["id"]
        if sig_id in seen:
            raise ConfigError(f'Signature id "{sig_id}" appears twice in {path}',
                              "ids name signatures in reports and tests, so they must be unique",
                              "rename one of them")
        seen.add(sig_id)
        if entry["class"] not in CLASSES:
            raise ConfigError(f"{where} ({sig_id}).class is {entry['class']!r}, not a triage "
                              "class", "`invoke triage --json` answers one of a closed list of "
                              "classes", "use one of: " + ", ".join(CLASSES))
        pattern = _compile(entry["pattern"], where=f"{where} ({sig_id}).pattern")
        requires = None
        if "requires" in entry:
            requires = _compile(expect_type(entry["requires"], str, where=f"{where}.requires"),
                                where=f"{where} ({sig_id}).requires")
        unless = None
        if "unless" in entry:
            unless = _compile(expect_type(entry["unless"], str, where=f"{where}.unless"),
                              where=f"{where} ({sig_id}).unless")
        steps: tuple[str, ...] = ()
        if "steps" in entry:
            # A step name no step has would switch the signature off without a word.
            steps = tuple(check_step_kind(s, where=f"{where} ({sig_id}).steps")
                          for s in expect_type(entry["steps"], list, where=f"{where}.steps"))
        tier = expect_type(entry.get("tier", 1), int, where=f"{where}.tier")
        triggers = tuple(_trigger(t, where=f"{where} ({sig_id}).triggers") for t in
                         expect_type(entry.get("triggers", []), list, where=f"{where}.triggers"))
        for key in ("subject", "cause", "fix"):
            _check_placeholders(entry[key], pattern, where=f"{where} ({sig_id}).{key}")
        out.append(Signature(id=sig_id, klass=entry["class"], subject=entry["subject"],
                             pattern=pattern, cause=entry["cause"], fix=entry["fix"],
                             source=entry["source"], requires=requires, unless=unless,
                             steps=steps, tier=tier, triggers=triggers))
    return tuple(out)


def signature(sig_id: str, directory: str | Path | None = None) -> Signature:
    """The table entry with this id (a KeyError names a typo in the kit's code)."""
    for entry in load_signatures(None if directory is None else str(directory)):
        if entry.id == sig_id:
            return entry
    raise KeyError(sig_id)


def _trigger(word: object, *, where: str) -> str:
    if isinstance(word, str) and word:
        return word
    raise ConfigError(f"{where} holds {word!r}, not a word", "a trigger is text a line must "
                      "hold before the pattern is tried; an empty one would match every line",
                      "write the non-empty strings the message always contains")


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
                f"and from the failed run and log ({', '.join(RUN_FIELDS)})",
                f"add (?P<{field}>...) to the pattern or remove the placeholder",
            )
