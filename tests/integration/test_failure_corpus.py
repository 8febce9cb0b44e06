"""The failure corpus (tests/failures): every real failure explained right, and none wrong.

Each case is a real log (a public thread's lines, or real tools' output made by
tests/failures/make/) and the answer the thread established: cases/ and every held-out round
once it is scored (rounds/*/cases, tests/failures/ROUNDS.md); the verdict is score.py's. A case
whose class is "" must stay unexplained: triage claims nothing there.
`python tests/integration/test_failure_corpus.py` prints the score per class (the README's figures).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from rocmforge.triage import CLASSES  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "failures"))
from score import Case, load_cases, verdict  # noqa: E402

ALL = load_cases()


def test_corpus_covers_every_class_with_at_least_60_cases() -> None:
    assert len(ALL) >= 60
    assert {c.klass for c in ALL if c.klass} == set(CLASSES)
    for case in ALL:
        assert case.log.is_file(), case.id
        assert case.klass in CLASSES or case.klass == "", case.id
        assert case.source.startswith("reproduced: make/") or "#" in case.source, case.id


def test_reproduced_cases_name_a_script_that_exists() -> None:
    for case in ALL:
        if case.source.startswith("reproduced: "):
            script = case.source.removeprefix("reproduced: ").split()[0]
            assert (ROOT / "tests" / "failures" / script).is_file(), case.id


# Cases whose lines are the same as other cases' with another established cause: no rule can
# tell them apart from the log, so the corpus keeps the majority reading and records the
# contradiction. Strict: the day one of them is answered right, this list must shrink.
CONTRADICTED = {
    "rocm-install-type-traits-missing-runtime-compile-therock3588":
        "comgr's run-time compile without a C++ standard header: eight cases (r1 to r12) were "
        "the host's libstdc++ headers missing; this one was TheRock's artifacts without "
        "amd-llvm's headers, which only the thread shows (ROUNDS.md, r14 after)",
}


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.id, marks=pytest.mark.xfail(strict=True, reason=CONTRADICTED[c.id]))
    if c.id in CONTRADICTED else pytest.param(c, id=c.id) for c in ALL])
def test_no_case_is_explained_wrong(case: Case) -> None:
    outcome, why = verdict(case)
    assert outcome != "wrong", why


def test_at_least_90_percent_explained_right() -> None:
    outcomes = [verdict(c) for c in ALL]
    right = sum(1 for o, _ in outcomes if o == "right")
    failing = [(c.id, o, why) for c, (o, why) in zip(ALL, outcomes, strict=True) if o != "right"]
    assert right / len(ALL) >= 0.9, failing


def main() -> int:
    by_class: dict[str, list[str]] = {}
    for case in ALL:
        outcome, why = verdict(case)
        by_class.setdefault(case.klass or "(negative)", []).append(outcome)
        if outcome != "right":
            print(f"{outcome:11} {case.id}: {why}")
    total = sum(len(v) for v in by_class.values())
    right = sum(v.count("right") for v in by_class.values())
    wrong = sum(v.count("wrong") for v in by_class.values())
    for klass, outcomes in sorted(by_class.items()):
        print(f"{klass:20} {outcomes.count('right')}/{len(outcomes)}")
    print(f"total {right}/{total} right ({100 * right / total:.0f}%), {wrong} wrong")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def test_the_readme_figures_are_the_measured_ones() -> None:
    """The README's triage section states the rule count, the corpus size and the score: each
    is what the code and the corpus give now."""
    from rocmforge.triage import all_rules
    from rocmforge.triage.table import load_signatures

    text = " ".join((ROOT / "README.md").read_text().split())
    rules = re.search(r"(\d+) rules: (\d+) parsers for shapes .*? and (\d+) exact-message "
                      r"signatures", text)
    assert rules is not None
    total, signatures = len(all_rules()), len(load_signatures())
    assert (int(rules[1]), int(rules[2]), int(rules[3])) == (
        total, total - signatures, signatures)
    measured = re.search(r"corpus in `tests/failures` \((\d+) real failures: .*?; (\d+) of them "
                         r"negatives .*?\): (\d+) right .*?, (\d+) partly, (\d+) not explained, "
                         r"(\d+) wrong", text)
    assert measured is not None
    outcomes = [verdict(c)[0] for c in ALL]
    assert tuple(int(g) for g in measured.groups()) == (
        len(ALL), sum(1 for c in ALL if not c.klass), outcomes.count("right"),
        outcomes.count("partial"), outcomes.count("silent"), outcomes.count("wrong"))


def test_the_corpus_readme_lists_the_registrys_steps() -> None:
    """tests/failures/README.md names the steps a case may give: exactly knowledge.steps'."""
    from rocmforge.knowledge.steps import names_for_people

    text = " ".join((ROOT / "tests" / "failures" / "README.md").read_text().split())
    listed = re.search(r"Steps \(the kit's, [^)]*\): (.*?)\. An add-on's", text)
    assert listed is not None
    assert listed[1] == names_for_people()


def test_a_case_naming_an_unknown_step_fails_to_load(tmp_path: Path) -> None:
    """A typo in a case's `step` is an error when the cases load, not a case that tests
    nothing; score.py says so in one paragraph and exits 2."""
    import subprocess

    from rocmforge.errors import ConfigError

    (tmp_path / "typo.log").write_text("c++: fatal error: Killed signal terminated program "
                                       "cc1plus\n")
    (tmp_path / "typo.toml").write_text('source = "test"\nstep = "biuld"\nclass = '
                                        '"out-of-memory"\n')
    with pytest.raises(ConfigError, match="names the step 'biuld'"):
        load_cases([tmp_path])
    run = subprocess.run([sys.executable, str(ROOT / "tests" / "failures" / "score.py"),
                          str(tmp_path)], capture_output=True, text=True, check=False)
    assert run.returncode == 2 and run.stdout == ""
    assert "Traceback" not in run.stderr and "did you mean 'build'?" in " ".join(
        run.stderr.split())
    assert all(len(line) <= 80 for line in run.stderr.splitlines())


@pytest.mark.parametrize("args, code, out, err", [
    (["--help"], 0, "usage: python3 tests/failures/score.py [FOLDER]\n", ""),
    (["-h"], 0, "usage: python3 tests/failures/score.py [FOLDER]\n", ""),
    (["--bogus"], 2, "", "score: --bogus: no such option; score.py takes only a folder of cases. "
                         "Fix: `python3 tests/failures/score.py --help` shows the usage."),
    (["no-such"], 2, "", "score: no-such: no such folder of cases. Give a folder of cases, or one "
                         "holding cases/, as a path or relative to tests/failures/. Fix: "
                         "`python3 tests/failures/score.py rounds/r1` (or no argument: the whole "
                         "corpus)."),
])
def test_score_py_usage(tmp_path: Path, args: list[str], code: int, out: str,
                        err: str) -> None:
    """`score.py --help` said "no such folder of cases", exit 1: a usage text, exit 0; a flag it
    does not have or a folder that is not there is bad input, exit 2, one paragraph."""
    import subprocess

    run = subprocess.run([sys.executable, str(ROOT / "tests" / "failures" / "score.py"), *args],
                         cwd=tmp_path, capture_output=True, text=True, check=False)
    assert run.returncode == code, run.stderr
    assert run.stdout.startswith(out) and (out or run.stdout == "")
    assert " ".join(run.stderr.split()) == err
    assert all(len(line) <= 80 for line in (run.stdout + run.stderr).splitlines())


# Table entries whose lines are tested (test_triage_families.py, or not yet) but that no corpus
# case or fixture log answers yet: they came from the parsers with the table's first split. The
# set may only shrink: a new entry comes with its case.
WITHOUT_CASE = frozenset({
    "setuptools-impimporter", "no-bdist-wheel",
    "cmake-missing", "numpy-abi", "unsupported-gcc",
    "kfd-permission", "triton-no-driver", "triton-launcher-build",
    "triton-libcuda",
})


def test_every_table_entry_is_the_answer_to_a_real_case() -> None:
    """Adding a signature is one table entry plus its corpus case (tests/failures/README.md):
    each entry of config/diagnostics.toml is what triage answers for some corpus case or
    fixture log made with the real tools (tests/fixtures/logs)."""
    from rocmforge.triage import explain_file, explain_lines
    from rocmforge.triage.table import load_signatures

    answered = set()
    for case in ALL:
        with case.log.open(encoding="utf-8", errors="replace") as handle:
            answered.add(explain_lines(handle, step=case.step).rule)
    for log in (ROOT / "tests" / "fixtures" / "logs").glob("*.log"):
        answered.add(explain_file(log).rule)
    without = {s.id for s in load_signatures()} - answered
    assert without == WITHOUT_CASE
