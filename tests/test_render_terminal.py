"""What a person sees on a terminal: text in square brackets is text, not rich markup (issue 32
item 3: `[python] preflight` showed as ` preflight`, `config/features.toml [aotriton]` lost its
brackets)."""

from __future__ import annotations

import io

import pytest

from rocmforge import render


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_brackets_in_cells_titles_and_headers_survive_on_a_terminal(monkeypatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = _Terminal()
    render.print_table("Plan [steps]", ("step [kind]", "why"),
                       [("[python] preflight", "config/features.toml [aotriton] and [/b]"),
                        ("OK", "plain")], status_column=0, stream=out)
    text = out.getvalue()
    for shown in ("Plan [steps]", "step [kind]", "[python] preflight",
                  "config/features.toml [aotriton] and [/b]"):
        assert shown in text, text
    assert "\x1b[" in text  # still drawn by rich, with its styles


def test_plain_output_is_unchanged(monkeypatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    out = io.StringIO()
    render.print_table("T", ("a",), [("[x] y",)], stream=out)
    assert "[x] y" in out.getvalue()


@pytest.fixture(autouse=True)
def _wide(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")


def test_plan_shows_the_pytorch_facts_in_one_line() -> None:
    """Issue 32 item 2: the pytorch_facts setting was a raw dict of ~2,500 characters."""
    from rocmforge.plan.report import _facts_summary

    doc = {"schema": "rocmforge.pytorch_facts/1", "table_row": "2.9", "row_is_estimate": True,
           "facts": {"version": {"value": "2.9.1", "origin": "ref"},
                     "cmake_minimum": {"value": "3.27", "origin": "table"},
                     "triton_pin": {"value": "", "origin": "unknown"}}}
    assert _facts_summary(doc) == (
        "PyTorch 2.9.1; 3 facts: 1 from ref, 1 from table, 1 from unknown; table row 2.9 (an "
        "estimate until the checkout exists); all of them: `invoke plan --json` or `invoke "
        "knowledge`")
