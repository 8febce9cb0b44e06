"""Invoke tasks: toolchain. Thin adapters: parse flags, call the library, print the report.

Must not: import the library at module level (`invoke --list` stays fast) or hold toolchain
logic; rocmforge.toolchain.cli does the work.
"""

from __future__ import annotations

from invoke import Context

from rocmforge.tasks._common import is_dry, reported, settings_for
from rocmforge.tasks._flags import flagged


@flagged(("gcc", "clang", "allow_compiler", "rocm_path"), optional=["gcc", "clang"])
@reported
def toolchain(
    c: Context, system: bool = False, restore: bool = False, json: bool = False, **flags: object
) -> None:
    """Show, pick or switch the host compilers.

    Show, pick or switch the host compilers (build-only CC/CXX, or --system, --restore)."""
    from rocmforge.toolchain.cli import run_toolchain

    run_toolchain(
        c,
        settings_for=settings_for,
        dry=is_dry(c),
        gcc=flags["gcc"],
        clang=flags["clang"],
        system=system,
        restore=restore,
        allow_compiler=bool(flags["allow_compiler"]),
        rocm_path=str(flags["rocm_path"]),
        as_json=json,
    )


TASKS = (toolchain,)
COLLECTIONS: tuple = ()
