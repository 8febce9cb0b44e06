"""Invoke tasks: toolchain. Thin adapters: parse flags, call the library, print the report.

Must not: import the library at module level (`invoke --list` stays fast) or hold toolchain
logic; rocmforge.toolchain.cli does the work.
"""

from __future__ import annotations

from invoke import Context, task

from rocmforge.tasks._common import is_dry, reported, settings_for


@task(
    optional=["gcc", "clang"],
    help={
        "gcc": "GCC major version for the build (e.g. 11): sets CC/CXX for the build only",
        "clang": "Clang major version for the build (e.g. 16), with the libstdc++ hint",
        "system": "also switch the system-wide gcc/clang with update-alternatives (needs root)",
        "restore": "put the update-alternatives groups back as they were before --system",
        "allow-compiler": "accept a compiler outside the version table for the ROCm found",
        "rocm-path": "the ROCm install whose table applies (default: the one found)",
        "json": "print the result as JSON",
    },
)
@reported
def toolchain(
    c: Context,
    gcc: str = "",
    clang: str = "",
    system: bool = False,
    restore: bool = False,
    allow_compiler: bool = False,
    rocm_path: str = "",
    json: bool = False,
) -> None:
    """Show, pick or switch the host compilers (build-only CC/CXX, or --system, --restore)."""
    from rocmforge.toolchain.cli import run_toolchain

    run_toolchain(
        c,
        settings_for=settings_for,
        dry=is_dry(c),
        gcc=gcc,
        clang=clang,
        system=system,
        restore=restore,
        allow_compiler=allow_compiler,
        rocm_path=rocm_path,
        as_json=json,
    )


TASKS = (toolchain,)
COLLECTIONS: tuple = ()
