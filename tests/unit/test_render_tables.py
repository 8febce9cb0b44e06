"""Rich tables keep URLs and commands whole (issue 18 item 14): rendered for a 60-column
terminal, each URL and each command is on one line, so it can be pasted."""

from __future__ import annotations

import io
import re

import pytest

from rocmforge.render import column_layout, print_table, table_width

URL = "https://download.pytorch.org/whl/rocm6.4/pytorch-triton-rocm/index.html"
COMMAND = ("/work/.rocmforge/venv/bin/python -m pip install --no-deps --force-reinstall "
           "/work/.rocmforge/downloads/pytorch_triton_rocm-3.4.0-cp311-linux_x86_64.whl")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Terminal(io.StringIO):
    """A stream that says it is a terminal, so print_table draws the rich table."""

    def isatty(self) -> bool:
        return True


def render(columns: tuple[str, ...], rows: list[tuple[str, ...]],
           monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("COLUMNS", "60")
    stream = Terminal()
    print_table("t", columns, rows, stream=stream)
    return [ANSI.sub("", line) for line in stream.getvalue().splitlines()]


def test_a_url_in_a_prose_column_stays_on_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = render(("setting", "value", "why"),
                   [("triton_index", f"the index is {URL} for ROCm 6.4",
                     "prebuilt wheels of the pinned Triton, checked against their sha256")],
                   monkeypatch)
    assert sum(URL in line for line in lines) == 1, "\n".join(lines)
    # The prose around it still wraps: the table is not one endless line.
    assert len(lines) > 5


def test_a_command_cell_is_not_wrapped(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = render(("#", "step", "command", "why"),
                   [("8", "triton", COMMAND, "install the wheel into the build venv")],
                   monkeypatch)
    assert sum(COMMAND in line for line in lines) == 1, "\n".join(lines)


def test_short_tables_keep_the_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = render(("status", "check"), [("OK", "python"), ("FAIL", "cmake")], monkeypatch)
    assert max(len(line) for line in lines) <= 60
    assert any("FAIL" in line and "cmake" in line for line in lines)


def test_the_layout_names_the_room_each_column_needs() -> None:
    layout = column_layout(("setting", "command", "why"),
                           [("a", "echo hi", f"see {URL}"), ("b", COMMAND, "short")])
    assert layout == [(False, 0), (True, len(COMMAND)), (False, len(URL))]
    assert table_width(layout, ("setting", "command", "why")) == \
        7 + len(COMMAND) + len(URL) + 3 * 3 + 1
