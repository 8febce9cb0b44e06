"""Turning reports into text a person reads: rich tables on a terminal, plain text elsewhere.

Owns: the decision between colour and plain output (`NO_COLOR`, non-TTY) and JSON emission.
Must not: decide what a report contains; callers pass rows already computed.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Sequence
from typing import TextIO

STATUS_STYLES = {
    "OK": "green",
    "PASS": "green",
    "WARN": "yellow",
    "FAIL": "bold red",
    "SKIP": "dim",
    "INFO": "cyan",
}


def wants_plain(stream: TextIO | None = None) -> bool:
    """Plain text when NO_COLOR is set (https://no-color.org) or the stream is not a terminal."""
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR", "") != "":
        return True
    isatty = getattr(stream, "isatty", None)
    return not (isatty and isatty())


def print_table(
    title: str,
    columns: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    status_column: int | None = None,
    stream: TextIO | None = None,
) -> None:
    """Print one table. The plain form is aligned columns, stable for logs and tests."""
    stream = stream or sys.stdout
    table_rows = [[("" if cell is None else str(cell)) for cell in row] for row in rows]
    if wants_plain(stream):
        stream.write(plain_table(title, columns, table_rows))
        stream.flush()
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, title_justify="left", show_lines=False)
    for name in columns:
        table.add_column(name, overflow="fold")
    for row in table_rows:
        cells: list[str] = list(row)
        if status_column is not None and status_column < len(cells):
            style = STATUS_STYLES.get(cells[status_column], "")
            cells[status_column] = (
                f"[{style}]{cells[status_column]}[/]" if style else cells[status_column]
            )
        table.add_row(*cells)
    Console(file=stream, soft_wrap=False).print(table)


def plain_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Aligned plain-text table; the last column is never padded so long fixes stay readable."""
    widths = [len(c) for c in columns]
    for row in rows:
        for index, cell in enumerate(row[: len(columns)]):
            widths[index] = max(widths[index], max((len(x) for x in cell.splitlines()), default=0))
    lines = [title] if title else []

    def fmt(cells: Sequence[str]) -> str:
        padded = [cell.ljust(widths[i]) for i, cell in enumerate(cells[:-1])]
        return "  ".join([*padded, cells[-1] if cells else ""]).rstrip()

    lines.append(fmt(list(columns)))
    lines.append(fmt(["-" * w for w in widths]))
    for row in rows:
        lines.append(fmt(list(row) + [""] * (len(columns) - len(row))))
    return "\n".join(lines) + "\n"


def emit_json(document: object, stream: TextIO | None = None) -> None:
    """Write a JSON document (already versioned by the caller) with a trailing newline."""
    stream = stream or sys.stdout
    stream.write(json.dumps(document, indent=2, sort_keys=False, default=str) + "\n")
    stream.flush()


def say(message: str, stream: TextIO | None = None) -> None:
    """One line of narration on stderr so stdout stays clean for JSON and `eval`."""
    stream = stream or sys.stderr
    stream.write(message.rstrip("\n") + "\n")
    stream.flush()
