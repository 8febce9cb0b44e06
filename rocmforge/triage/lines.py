"""Log lines as a reader sees them: colour codes, CI timestamps and runner prefixes removed.

Owns: `clean(line)`, the one place that knows the prefixes build logs carry (GitHub Actions
timestamps and `##[error]`, docker BuildKit `#21 5.5` and legacy `28.67`, syslog, dmesg and
bracketed timestamps, nix's `pkg> ` and `> `, torch.distributed's `[rank7]:`, TheRock's
`[<sub-project>] `, makepkg's `==>`, pip's boxed subprocess output, pytest's `E   `).
Must not: decide what a line means.
"""

from __future__ import annotations

import re

# ESC-based colour and cursor codes, and the same codes after a copy-paste lost the ESC byte.
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07"
                   r"|(?<![\w\]])\[(?:\d{1,3}(?:;\d{1,3})*)?m")

# One prefix at a time; clean() strips them repeatedly (a docker step inside a CI log has both).
_PREFIXES = re.compile(
    r"^(?:"
    r"\ufeff"                                                    # a byte-order mark
    r"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\s"  # ISO / Actions
    r"|\[\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\] ?"  # Jenkins
    r"|\[?\d\d:\d\d:\d\d(?:[.,]\d+)?\]?\s+"                         # 12:34:56 / [12:34:56]
    r"|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d\s+"                     # Jan 25 20:48:51
    r"|\[[^\]\n]{0,40}\d\d:\d\d:\d\d[^\]\n]{0,20}\]\s*"               # dmesg -T, any locale
    r"|\[\s*\d+\.\d+\]\s*"                                          # dmesg [12345.678901]
    r"|\[\]\s*"                                                     # an empty CI prefix
    r"|\[rank\d+\]:\s*"                                              # torch.distributed ranks
    r"|[A-Za-z][\w.+-]*> "                                          # nix: python3.11-torch>
    r"|>(?: |$)"                                                    # nix's indented log tail
    r"|(?:>>>|==>|-->) "                                            # makepkg, spack, REPL
    r"|\d+\.\d\d(?:\s|$)"                                             # docker (legacy) seconds
    r"|##\[(?:error|warning|notice|debug|group|endgroup|section)\]"  # Actions annotations
    r"|#\d+ \d+(?:\.\d+)?\s"                                        # BuildKit step + seconds
    r"|#\d+ (?=\S)"                                                 # BuildKit step, no time
    r"|E {2,}"                                                      # pytest's error lines
    r"|[│║┃|]\s"                                                    # pip's boxed output
    r")"
)


# TheRock's teatime.py labels a sub-project's console lines "[<target>] ", "[<target>
# configure] ", "[<target> install] " (ROCm/TheRock@89553ce3746eda74ade42557470d25e37c91b6f0:
# cmake/therock_subproject.cmake, build_tools/teatime.py); a log level in brackets is no label.
_LABEL = re.compile(r"\[(?!(?i:info|error|err|warning|warn|debug|notice|note|fatal|trace|[ewi])"
                    r"\])(?P<name>[A-Za-z][\w.+-]*)(?: [\w.+-]+)?(?: configure| install)?\] ")


def clean(line: str) -> str:
    """`line` without its line ending, colour codes and the prefixes above, indentation kept
    (CMake's message blocks are told apart by it)."""
    return clean_labelled(line)[0]


def clean_labelled(line: str) -> tuple[str, str]:
    """(the cleaned line, the TheRock sub-project its label names or '')."""
    label = ""
    text = line.rstrip("\r\n")
    if "\r" in text:  # progress bars redraw with a bare CR: the last state is the real line
        text = text.rsplit("\r", 1)[-1] or text.replace("\r", "")
    if "[" in text or "\x1b" in text:
        text = _ANSI.sub("", text)
    for _ in range(4):
        stripped = text.lstrip()
        cut = _PREFIXES.match(stripped)
        if cut is None or not cut.group(0):
            cut = _LABEL.match(stripped)
            if cut is None:
                break
            label = cut.group("name")
        text = stripped[cut.end():]
    return text, label
