"""`rocmforge` console script: the kit's tasks without a tasks.py (Invoke's Program).

Used where no tasks.py is at hand: inside nox's `build` session, in a vendored copy, or after a
plain `pip install`. Settings come from config/ defaults, ROCMFORGE_* variables and flags.
"""

from __future__ import annotations

import re
import shlex
import signal
import sys

from invoke import Exit, ParseError, Program

from rocmforge import __version__
from rocmforge.render import fit
from rocmforge.tasks import ns
from rocmforge.tasks.inspect import spread_paths

# A console script piped into `head` should end like any shell tool, without a traceback.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)


class _Program(Program):
    """Invoke's Program; `rocmforge inspect A B ...` reads every path (Invoke takes one), and a
    flag or task it does not know is bad input: exit 2, as every other bad input (Invoke's own
    parser exits 1, which the kit keeps for a failed check)."""

    def run(self, argv: list[str] | str | None = None, exit: bool = True) -> None:  # noqa: A002
        words = shlex.split(argv) if isinstance(argv, str) else list(argv or sys.argv)
        super().run(spread_paths(words), exit)

    def parse_core(self, argv: list[str] | None) -> None:
        try:
            super().parse_core(argv)
        except ParseError as exc:
            raise Exit(fit(_parse_error(exc), sys.stderr), code=2) from None

    def parse_tasks(self) -> None:
        try:
            super().parse_tasks()
        except ParseError as exc:
            raise Exit(fit(_parse_error(exc), sys.stderr), code=2) from None


# What each task's positional argument is, and how to give it, for "did not receive required
# positional arguments" (Invoke's words, which say nothing of what to pass).
_POSITIONALS = {
    "log": ("the log to explain",
            "a file (a failed step's log, <work>/logs/<step>.log, a CI log, pip's or docker's "
            "output) or - for stdin",
            "`rocmforge triage .rocmforge/logs/build.log --step build`, or pipe a log in: "
            "`... 2>&1 | rocmforge triage -`"),
    "paths": ("what to inspect", "a wheel, a directory or an ELF file (several: quote them as one "
              "argument)", "`rocmforge inspect dist/torch-*.whl`"),
}
_MISSING = re.compile(r"'(?P<task>[^']+)' did not receive required positional arguments: "
                      r"'(?P<arg>[^']+)'")


def _parse_error(exc: ParseError) -> str:
    """Invoke's parse error as the kit's one paragraph (what, why, fix)."""
    missing = _MISSING.search(str(exc))
    if missing and missing["arg"] in _POSITIONALS:
        what, takes, example = _POSITIONALS[missing["arg"]]
        return (f"rocmforge: `rocmforge {missing['task']}` was given no {missing['arg']}. It "
                f"needs {what}: {takes}. Fix: {example}.")
    return (f"rocmforge: {exc} The command line names a flag or task this kit does not have. "
            "Fix: `rocmforge --list` lists the tasks and `rocmforge <task> --help` the flags of "
            "one.")


program = _Program(namespace=ns, version=__version__, name="rocmforge", binary="rocmforge")
