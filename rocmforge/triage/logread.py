"""Reading a log for triage: lines from a byte stream in bounded memory, whatever arrives.

Owns: splitting a stream into text lines with a cap on each line's length, and refusing input
that is not text (a NUL byte in the first 8000 bytes, the test git uses for "binary").
Must not: interpret a line (that is the engine's job) or print anything.

A log may be a file, a pipe or a device; a minified bundle or a progress bar can make one
"line" hundreds of megabytes long, and `/dev/zero` never ends a line at all. Python's own line
iteration holds a whole line in memory, so this reader takes fixed-size chunks and keeps at
most LINE_LIMIT bytes of any line (the rest is counted, not kept). No error message a rule
reads is that long, so a cut line loses nothing triage could use.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

CHUNK = 1 << 20
LINE_LIMIT = 64 * 1024
BINARY_PROBE = 8000


@dataclass(frozen=True)
class NotText(Exception):
    """The input has a NUL byte near its start: a binary file, a device such as /dev/zero."""

    offset: int

    def __str__(self) -> str:
        return f"a NUL byte at offset {self.offset}"


def _decode(raw: bytes, cut: int) -> str:
    text = raw.decode("utf-8", errors="replace")
    return f"{text} [... {cut} more bytes of this line not read]" if cut else text


def bounded_lines(stream: BinaryIO, line_limit: int = LINE_LIMIT,
                  chunk: int = CHUNK) -> Iterator[str]:
    """Yield the stream's lines (without their newline), each cut to `line_limit` bytes.

    Raises NotText before yielding anything when the first BINARY_PROBE bytes hold a NUL.
    Memory stays within about `chunk + line_limit` bytes whatever the input.
    """
    pending = bytearray()
    cut = 0
    probed = False
    while True:
        block = stream.read(chunk)
        if not block:
            break
        if not probed:
            nul = block.find(b"\0", 0, BINARY_PROBE)
            if nul >= 0:
                raise NotText(nul)
            probed = True
        start = 0
        while True:
            end = block.find(b"\n", start)
            piece = block[start:] if end < 0 else block[start:end]
            room = line_limit - len(pending)
            if room > 0:
                pending += piece[:room]
            cut += max(0, len(piece) - max(room, 0))
            if end < 0:
                break
            yield _decode(bytes(pending).rstrip(b"\r"), cut)
            pending.clear()
            cut = 0
            start = end + 1
    if pending or cut:
        yield _decode(bytes(pending).rstrip(b"\r"), cut)
