"""What the triage tests assert about one explained text: the rule that answered, the class and
subject it read from the line, and the words its cause or fix must carry."""

from __future__ import annotations

from collections.abc import Iterable

from rocmforge.triage import explain_text


def assert_reads(text: str, klass: str, subject: str, rule: str,
                 words: Iterable[str] = (), *, step: str = "") -> None:
    found = explain_text(text, step=step)
    assert (found.klass, found.subject, found.rule) == (klass, subject, rule)
    for word in words:
        assert word in found.cause + " " + found.fix, word
