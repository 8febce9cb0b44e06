"""Entry point for `invoke` in a rocmforge checkout: the kit's collection is the root namespace."""

import sys

# Invoke stops Python writing .pyc files (unless --write-pyc) before it loads this file, so a
# checkout would compile every kit module on every run (about 0.25 s of `invoke plan`,
# benchmarks/startup.py --source). The kit is a library: cache its bytecode as any import does,
# unless the user turned that off (-B, PYTHONDONTWRITEBYTECODE).
sys.dont_write_bytecode = bool(sys.flags.dont_write_bytecode)

from rocmforge.tasks import ns  # noqa: E402 - after the bytecode switch above

__all__ = ["ns"]
