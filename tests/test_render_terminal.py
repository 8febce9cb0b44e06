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
