"""Score triage on a set of failure cases: right / partial / silent / wrong, case by case.

The one verdict tests/test_failure_corpus.py applies (class, subject, cause words, fix words; a
negative case, class "", must get no claim at all), usable without pytest:

    python3 tests/failures/score.py rounds/r2          # a held-out round, before any change
    python3 tests/failures/score.py                    # the whole corpus (cases/ + rounds/*)

A directory argument is relative to tests/failures/ (or a path) and may hold the cases itself or
in a `cases/` folder. Needs only the standard library and the rocmforge package.
"""

from __future__ import annotations

import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import tomllib

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rocmforge.errors import ConfigError  # noqa: E402
from rocmforge.knowledge.steps import check_step  # noqa: E402
from rocmforge.render import wrap_whole  # noqa: E402
from rocmforge.triage import explain_lines  # noqa: E402
from rocmforge.triage.symbols import symbol_name  # noqa: E402

OUTCOMES = ("right", "partial", "silent", "wrong")


@dataclass(frozen=True)
class Case:
    id: str
    log: Path
    source: str
    step: str
    klass: str
    subject: str
    cause_words: tuple[str, ...]
    fix_words: tuple[str, ...]


def case_dirs() -> list[Path]:
    """Every folder of the corpus: cases/ and each round's cases/."""
    return [HERE / "cases", *sorted(HERE.glob("rounds/*/cases"))]


def load_cases(directories: list[Path] | None = None) -> list[Case]:
    cases = []
    for directory in directories if directories is not None else case_dirs():
        for meta in sorted(directory.glob("*.toml")):
            data = tomllib.loads(meta.read_text())
            step = data.get("step", "")
            if step:  # a step the kit does not have is a typo: the case would test nothing
                shown = meta.relative_to(ROOT) if meta.is_relative_to(ROOT) else meta
                check_step(step, where=f"{shown}: `step`")
            cases.append(Case(id=meta.stem, log=meta.with_suffix(".log"),
                              source=data["source"], step=step,
                              klass=data["class"], subject=data.get("subject", ""),
                              cause_words=tuple(data.get("cause_words", ())),
                              fix_words=tuple(data.get("fix_words", ()))))
    return cases


def same_subject(got: str, want: str) -> bool:
    """Equal ignoring case; a symbol also matches in its other spellings (mangled, demangled
    with parameters, or its qualified name: `_ZN3c103hip3fooEa` = `c10::hip::foo`)."""
    if got.lower() == want.lower():
        return True
    return bool(want) and symbol_name(got) == symbol_name(want)


def verdict(case: Case) -> tuple[str, str]:
    """(one of OUTCOMES, why) for one case."""
    with case.log.open(encoding="utf-8", errors="replace") as handle:
        got = explain_lines(handle, step=case.step)
    if not case.klass:
        if got.klass is None:
            return "right", ""
        return "wrong", f"claimed {got.klass}/{got.subject} ({got.rule}) on a log that proves " \
                        "nothing"
    if got.klass is None:
        return "silent", "nothing claimed"
    if got.klass != case.klass:
        return "wrong", f"class {got.klass} ({got.rule}), expected {case.klass}"
    if case.subject and not same_subject(got.subject, case.subject):
        return "partial", f"subject {got.subject!r}, expected {case.subject!r}"
    cause, fix = got.cause.lower(), got.fix.lower()
    missing = [w for w in case.cause_words if w.lower() not in cause]
    missing += [f"fix:{w}" for w in case.fix_words if w.lower() not in fix]
    if missing:
        return "partial", f"missing words {missing}"
    return "right", ""


USAGE = """\
usage: python3 tests/failures/score.py [FOLDER]

Score triage on failure cases, case by case (right, partial, silent, wrong),
then the totals. Without FOLDER: the whole corpus (cases/ and rounds/*/cases).
FOLDER: a folder of cases, or one holding cases/, as a path or relative to
tests/failures/ (rounds/r1).

  -h, --help  show this text and exit
"""


class _Usage(Exception):
    """Bad command line: one paragraph on stderr, exit 2."""


def _resolve(arg: str) -> list[Path]:
    path = Path(arg)
    if not path.exists():
        path = HERE / arg
    if (path / "cases").is_dir():
        path = path / "cases"
    if not path.is_dir():
        raise _Usage(f"{arg}: no such folder of cases. Give a folder of cases, or one holding "
                     "cases/, as a path or relative to tests/failures/. Fix: `python3 "
                     "tests/failures/score.py rounds/r1` (or no argument: the whole corpus).")
    return [path]


def _folders(argv: list[str]) -> list[Path] | None:
    """The folders the command line names (None: the whole corpus)."""
    flags = [a for a in argv if a.startswith("-")]
    if flags:
        raise _Usage(f"{flags[0]}: no such option; score.py takes only a folder of cases. "
                     "Fix: `python3 tests/failures/score.py --help` shows the usage.")
    if len(argv) > 1:
        raise _Usage(f"{len(argv)} folders given; score.py scores one folder (or, with none, "
                     "the whole corpus). Fix: `python3 tests/failures/score.py rounds/r1`.")
    return _resolve(argv[0]) if argv else None


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        sys.stdout.write(USAGE)
        return 0
    try:
        cases = load_cases(_folders(argv))
    except _Usage as error:
        print("\n".join(wrap_whole(f"score: {error}", 79)), file=sys.stderr)
        return 2
    except ConfigError as error:
        print(textwrap.fill(f"score: {error.paragraph()}", 79), file=sys.stderr)
        return 2
    if not cases:
        print("score: no cases found", file=sys.stderr)
        return 2
    counts = dict.fromkeys(OUTCOMES, 0)
    for case in cases:
        outcome, why = verdict(case)
        counts[outcome] += 1
        label = case.klass or "(negative)"
        print(f"{outcome:8} {label:18} {case.id}" + (f": {why}" if why else ""))
    total = len(cases)
    print(f"{total} cases: " + ", ".join(
        f"{name} {counts[name]} ({100 * counts[name] / total:.0f}%)" for name in OUTCOMES))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
