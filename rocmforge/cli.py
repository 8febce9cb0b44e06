"""`rocmforge` console script: the kit's tasks without a tasks.py (Invoke's Program).

Used where no tasks.py is at hand: inside nox's `build` session, in a vendored copy, or after a
plain `pip install`. Settings come from config/ defaults, ROCMFORGE_* variables and flags.
"""

from __future__ import annotations

import shlex
import signal
import sys

from invoke import Program

from rocmforge import __version__
from rocmforge.tasks import ns
from rocmforge.tasks.inspect import spread_paths

# A console script piped into `head` should end like any shell tool, without a traceback.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)


class _Program(Program):
    """Invoke's Program; `rocmforge inspect A B ...` reads every path (Invoke takes one)."""

    def run(self, argv: list[str] | str | None = None, exit: bool = True) -> None:  # noqa: A002
        words = shlex.split(argv) if isinstance(argv, str) else list(argv or sys.argv)
        super().run(spread_paths(words), exit)


program = _Program(namespace=ns, version=__version__, name="rocmforge", binary="rocmforge")
