"""`rocmforge` console script: the kit's tasks without a tasks.py (Invoke's Program).

Used where no tasks.py is at hand: inside nox's `build` session, in a vendored copy, or after a
plain `pip install`. Settings come from config/ defaults, ROCMFORGE_* variables and flags.
"""

from __future__ import annotations

import signal

from invoke import Program

from rocmforge import __version__
from rocmforge.tasks import ns

# A console script piped into `head` should end like any shell tool, without a traceback.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)

program = Program(namespace=ns, version=__version__, name="rocmforge", binary="rocmforge")
