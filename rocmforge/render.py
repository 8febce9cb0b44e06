"""Turning reports into text a person reads: rich tables on a terminal, plain text elsewhere.

Owns: the decision between colour and plain output (`NO_COLOR`, non-TTY) and JSON emission.
Must not: decide what a report contains; callers pass rows already computed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
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
    return not on_terminal(stream)


def on_terminal(stream: TextIO) -> bool:
    """Whether `stream` is a terminal: its width rules apply (colour or not); a pipe or a file
    gets the text unwrapped."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def print_table(
    title: str,
    columns: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    status_column: int | None = None,
    stream: TextIO | None = None,
) -> None:
    """Print one table. The plain form is aligned columns, stable for logs and tests."""
    from rocmforge.errors import task_names

    stream = stream or sys.stdout
    # A command in a cell (a doctor fix, a note) as the user types it: `invoke rocm.build` in a
    # repository that vendored the kit.
    table_rows = [[task_names("" if cell is None else str(cell)) for cell in row] for row in rows]
    if wants_plain(stream):
        text = plain_table(title, columns, table_rows)
        if on_terminal(stream):  # NO_COLOR on a terminal: whole at its width, as blocks
            width = terminal_width(stream)
            if max((len(line) for line in text.splitlines()), default=0) > width:
                text = block_table(title, columns, table_rows, width=width,
                                   status_column=status_column)  # fmt: skip
        stream.write(text)
        stream.flush()
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    terminal = Console(file=stream).width
    layout = column_layout(columns, table_rows)
    if natural_width(columns, table_rows) > terminal and (
            terminal < WIDE or table_width(layout, columns) > terminal):
        # Too narrow for the table without wrapping every cell into a sliver, or a path, URL
        # or command needs more than the terminal has: one block a row, wrapped at the
        # terminal's width, words whole (nothing cropped, paths and URLs intact).
        stream.write(block_table(title, columns, table_rows, width=terminal,
                                 status_column=status_column))
        stream.flush()
        return

    # Cells are text, not rich markup: "[python] preflight" and "config/build.toml [cache]"
    # must show their brackets (rich would take them for style tags and drop them).
    table = Table(title=escape(title), title_justify="left", show_lines=False)
    for name, (whole, min_width) in zip(columns, layout, strict=True):
        table.add_column(escape(name), overflow="fold", no_wrap=whole,
                         min_width=min_width or None)
    for row in table_rows:
        cells: list[str] = [escape(cell) for cell in row]
        if status_column is not None and status_column < len(cells):
            style = STATUS_STYLES.get(cells[status_column], "")
            cells[status_column] = (
                f"[{style}]{cells[status_column]}[/]" if style else cells[status_column]
            )
        table.add_row(*cells)
    # Drawn off screen first: rich keeps a no-wrap or min-width column whole even when the
    # table then needs more than the terminal has; such a table goes out as blocks instead.
    import io

    from rich.cells import cell_len

    drawn = io.StringIO()
    Console(file=drawn, width=terminal, soft_wrap=False,
            force_terminal=True).print(table, crop=False)
    text = drawn.getvalue()
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    if max((cell_len(line) for line in plain.splitlines()), default=0) > terminal:
        stream.write(block_table(title, columns, table_rows, width=terminal,
                                 status_column=status_column))
    else:
        stream.write(text)
    stream.flush()


# Columns whose cells are commands to paste: never wrapped. Elsewhere a URL inside a cell keeps
# its column at least as wide as the URL, so the text wraps around it, never through it.
WHOLE_COLUMNS = frozenset({"command", "commands", "url"})
# A URL or an absolute path: a cell keeps it on one line (a path folded in two does not paste).
_URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+|(?<![\w.])/[\w.+*-]+(?:/[\w.+*-]*)+")
_FLOOR = 8  # the narrowest a wrapping column is drawn when URLs or commands need the room


def column_layout(columns: Sequence[str], rows: Sequence[Sequence[str]]
                  ) -> list[tuple[bool, int]]:
    """Per column: (no wrap, the least width that keeps its URLs or commands on one line)."""
    layout: list[tuple[bool, int]] = []
    for index, name in enumerate(columns):
        cells = [row[index] for row in rows if index < len(row)]
        if name.lower() in WHOLE_COLUMNS:
            widest = max((len(line) for cell in cells for line in cell.splitlines()), default=0)
            layout.append((True, max(widest, len(name))))
        else:
            urls = max((len(m.group()) for cell in cells for m in _URL.finditer(cell)), default=0)
            layout.append((False, urls))
    return layout


def table_width(layout: Sequence[tuple[bool, int]], columns: Sequence[str]) -> int:
    """The width a table needs so that every column gets its least width (rich's box: one
    border per column plus one, and one space of padding on each side of a cell)."""
    inner = sum(max(need, min(_FLOOR, len(name))) for (_, need), name in zip(layout, columns,
                                                                              strict=True))
    return inner + 3 * len(columns) + 1


# At this many columns or more a wide table is drawn as a table (its cells wrap); below it,
# a table that does not fit is printed as blocks (block_table).
WIDE = 120


def natural_width(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> int:
    """How wide the table is with no cell wrapped (rich's box: 3 per column, 1 more)."""
    widths = [len(c) for c in columns]
    for row in rows:
        for index, cell in enumerate(row[: len(columns)]):
            widths[index] = max(widths[index],
                                max((len(x) for x in cell.splitlines()), default=0))
    return sum(w + 3 for w in widths) + 1


def block_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], *,
                width: int, status_column: int | None = None) -> str:
    """A table as blocks for a narrow terminal: a row's first cell and its status on one line,
    every other cell below it as `column: text`, wrapped at `width` without breaking a word
    (a path, a URL or a flag longer than the line stays whole on its own line); a command
    column's cell is never wrapped."""

    width = max(width, 40)
    lines = [title] if title else []
    if len(columns) == 2 and status_column is None:
        # name/value pairs (plan's settings): one `name: value` a row, wrapped under itself
        for row in rows:
            cells = list(row) + [""] * (2 - len(row))
            lines.extend(wrap_whole(f"{cells[0]}: {cells[1]}", width,
                                    subsequent_indent="    ") or [cells[0]])
        return "\n".join(lines) + "\n"
    for row in rows:
        cells = list(row) + [""] * (len(columns) - len(row))
        head = cells[0]
        if status_column is not None and 0 < status_column < len(cells):
            head = f"{cells[status_column]:<5} {head}"
        lines.append(head)
        for index, (name, cell) in enumerate(zip(columns, cells, strict=False)):
            if index == 0 or index == status_column or not cell:
                continue
            for part in cell.splitlines() or [""]:
                if name.lower() in WHOLE_COLUMNS:  # a command to paste: one line, unwrapped
                    lines.append(f"    {name}: {part}")
                    continue
                lines.extend(wrap_whole(f"{name}: {part}", width, initial_indent="    ",
                                        subsequent_indent="      "))
    return "\n".join(lines) + "\n"


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


def count(number: int, noun: str, plural: str = "") -> str:
    """`1 path`, `2 paths`, `0 submodules`: a number and its noun in the right form (`plural`
    when adding "s" is wrong: `count(2, "patch", "patches")`)."""
    return f"{number} {noun if number == 1 else (plural or noun + 's')}"


def emit_json(document: object, stream: TextIO | None = None) -> None:
    """Write a JSON document (already versioned by the caller) with a trailing newline."""
    stream = stream or sys.stdout
    stream.write(json.dumps(document, indent=2, sort_keys=False, default=str) + "\n")
    stream.flush()


def say(message: str, stream: TextIO | None = None, *, whole: bool = False) -> None:
    """One line of narration on stderr so stdout stays clean for JSON and `eval`. `whole`: a
    line of code or a command to paste, never wrapped (a terminal may fold it; it stays one
    line when copied)."""
    from rocmforge.errors import task_names

    stream = stream or sys.stderr
    text = task_names(message.rstrip("\n"))
    stream.write((text if whole else fit(text, stream)) + "\n")
    stream.flush()


def terminal_width(stream: TextIO) -> int:
    """The columns of the terminal `stream` writes to (COLUMNS wins, as for rich)."""
    if os.environ.get("COLUMNS", "").isdigit():
        return int(os.environ["COLUMNS"])
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return 80


def fit(text: str, stream: TextIO) -> str:
    """`text` wrapped at word boundaries to the terminal's width (continuation lines indented
    two spaces more than the line's own indent: a hanging indent), so a terminal does not cut
    words in two, with or without colour; unchanged when piped. A word longer than the line (a
    path, a URL) stays whole on a line of its own."""
    if not on_terminal(stream):
        return text

    width = max(terminal_width(stream), 40)

    def wrapped(line: str) -> str:
        body = line.lstrip(" ")
        indent = line[:len(line) - len(body)]
        return "\n".join(wrap_whole(body, width, initial_indent=indent,
                                     subsequent_indent=indent + "  "))

    return "\n".join(wrapped(line) if len(line) > width else line
                     for line in text.split("\n"))


_TICKED = re.compile(r"`[^`\n]*`")
_KEEP = "\x00"  # stands for a space inside a command while the line is wrapped
# Where a command outside backticks starts: a program the kit's messages name, an environment
# assignment (`ROCMFORGE_MAX_JOBS=4 invoke build`), or the runner's `+ argv` line.
_PROGRAMS = frozenset({
    "invoke", "nox", "rocmforge", "sudo", "export", "unset", "eval", "pip", "pip3", "python",
    "python3", "cmake", "git", "modprobe", "apt", "apt-get", "dnf", "usermod", "newgrp",
    "ccache", "sccache", "docker", "podman", "hipcc", "hipconfig", "amdgpu-install",
    "pyenv", "update-alternatives", "ln", "rm", "echo", "cd", "source", "conda", "uv",
})
_ASSIGNMENT = re.compile(r"[A-Z][A-Z0-9_]*=\S*")
# Words that end a command in a sentence ("run invoke doctor and read its FAIL rows", "hipcc of
# this ROCm"); so does a capitalised word that is not an assignment ("ROCm", "HIP_PATH").
_PROSE = frozenset({
    "and", "or", "then", "to", "if", "when", "which", "that", "the", "a", "an", "is", "are",
    "with", "for", "in", "on", "from", "so", "as", "but", "#", "of", "this", "its", "it", "not",
    "does", "do", "can", "cannot", "be", "by", "at", "was", "were", "has", "have", "will",
    "would", "should", "may", "must", "only", "also", "no", "before", "after", "until", "while",
    "where", "again", "first", "see", "says", "said", "finds", "found", "runs", "ran", "run",
})


def _argument(word: str) -> bool:
    """A word that can continue a command: not prose, not a capitalised word of a sentence."""
    if word in _PROSE:
        return False
    return not word[:1].isupper() or _ASSIGNMENT.fullmatch(word.rstrip(",;.:)")) is not None


def _command_spans(text: str) -> list[tuple[int, int]]:
    """Where the commands outside backticks are: from a program word (or `KEY=VALUE` before
    one) over its arguments, up to a word that ends a clause (`,` `;` `.` `:` `)`), a word of
    prose or a `#` comment; also a run of two or more flags (`--device=/dev/kfd
    --device=/dev/dri`)."""
    words = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", text)]
    if len(words) > 1 and words[0][2] == "+":  # the runner's `+ (cd DIR) argv  # what`
        argv = next((i for i, w in enumerate(words) if w[2] == "#"), len(words))
        return [(words[0][0], words[argv - 1][1])]
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(words):
        start, _, word = words[index]
        bare = word.lstrip("(")
        is_flag = bare.startswith("-") and len(bare) > 1 and bare[1:2] != " "
        starts = bare in _PROGRAMS or _ASSIGNMENT.fullmatch(bare.rstrip(",;.:)")) is not None
        if not starts and not (is_flag and index + 1 < len(words)
                               and words[index + 1][2].startswith("-")):
            index += 1
            continue
        end = words[index][1]
        last = index
        while not words[last][2].endswith((",", ";", ".", ":", ")")) \
                and last + 1 < len(words) and _argument(words[last + 1][2]):
            if not starts and not words[last + 1][2].startswith("-"):
                break  # a run of flags ends at the first word that is not one
            last += 1
            end = words[last][1]
        if last > index:
            spans.append((start, end))
        index = last + 1
    return spans


def keep_commands(text: str) -> str:
    """`text` with the spaces inside each command (in backticks, or recognised by
    `_command_spans`) replaced by a placeholder, so a wrapper cannot break a line there."""
    kept = _TICKED.sub(lambda m: m.group().replace(" ", _KEEP), text)
    out, at = [], 0
    for start, end in _command_spans(kept):
        out += [kept[at:start], kept[start:end].replace(" ", _KEEP)]
        at = end
    return "".join(out) + kept[at:]


def wrap_whole(text: str, width: int, *, initial_indent: str = "",
               subsequent_indent: str = "") -> list[str]:
    """`text` wrapped at `width` between words, never inside a word (a path, a URL) nor inside
    a command (in backticks, or a program with its arguments: `export CC=gcc-12`, `sudo
    modprobe amdgpu`, `invoke doctor --arch gfx1100`): a command pastes from one line. One
    longer than the line stands alone on its own line."""
    import textwrap

    return [line.replace(_KEEP, " ") for line in textwrap.wrap(
        keep_commands(text), width=width, initial_indent=initial_indent,
        subsequent_indent=subsequent_indent, break_long_words=False, break_on_hyphens=False)]


class TaskNamed:
    """A text stream that writes every message with the kit's commands as the user must type
    them (`errors.task_names`: `invoke rocm.build` where the kit is mounted as `rocm`). The one
    place a kit task's output passes through, whoever prints it (runner lines, triage fixes,
    notes, tables, Invoke's own Exit message); everything else is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        from rocmforge.errors import task_names

        self._stream.write(task_names(text))
        return len(text)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


@contextlib.contextmanager
def tasks_as_typed() -> Iterator[None]:
    """While a kit task runs in a repository that mounts the kit as `rocm`, stdout and stderr
    name its tasks as `invoke rocm.<task>`; elsewhere nothing changes."""
    from rocmforge.errors import is_vendored

    if not is_vendored() or isinstance(sys.stdout, TaskNamed):
        yield
        return
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = TaskNamed(sys.stdout), TaskNamed(sys.stderr)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
