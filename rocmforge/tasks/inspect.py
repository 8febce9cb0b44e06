"""Invoke tasks: inspect. Thin adapters: parse flags, call the library, print the report."""

from __future__ import annotations

from invoke import Context, Exit

from rocmforge.tasks._common import reported
from rocmforge.tasks._flags import flagged


@flagged(positional=["paths"], iterable=["path"],
         help={"json": "print the rocmforge.inspect/1 JSON document instead of tables"})
@reported
def inspect(
    c: Context,
    paths: str,
    path: list[str] | None = None,
    expect: str = "",
    json: bool = False,
) -> None:
    """Show the GPU targets a wheel, directory or .so really contains (offload bundles).

    Paths: `invoke inspect PATH`, more with `--path P` (repeatable) or quoted in PATH
    (Invoke takes one positional value per argument).
    """
    import shlex

    from rocmforge import render
    from rocmforge.errors import UsageError
    from rocmforge.inspect import inspect_paths, missing_targets, to_json
    from rocmforge.inspect.reader import expand_path_words
    from rocmforge.inspect.report import COLUMNS, LIKELY_CAUSE, library_rows, summary_rows

    try:
        words = shlex.split(paths)
    except ValueError as exc:
        raise UsageError(f"cannot split the path argument {paths!r}", str(exc)) from None
    words += [p for p in (path or []) if p]  # --path values are taken whole, never split
    if not words:
        raise UsageError(
            "no path given",
            "inspect reads the offload bundles of wheels, directories or ELF files",
            "run `invoke inspect dist/torch-*.whl` (more paths: add `--path P` for each)",
        )
    found = expand_path_words(words)

    expected: tuple[str, ...] = ()
    if expect:
        from rocmforge.knowledge.arches import load_arch_table
        from rocmforge.knowledge.targets import parse_targets

        expected = tuple(str(t) for t in parse_targets(expect, load_arch_table()))

    report = inspect_paths(found)
    missing = missing_targets(report, expected) if expected else ()
    if json:
        render.emit_json(to_json(report, expected=expected, missing=missing))
    else:
        render.print_table(
            "Offload bundles per library", COLUMNS, library_rows(report), status_column=0
        )
        render.print_table("Summary", ("item", "value"), summary_rows(report))
        if missing:
            render.print_table(
                "Expected targets missing",
                ("target", "library", "targets found"),
                [(m.target, m.path, " ".join(m.found)) for m in missing],
            )
    if not report.readable:
        raise Exit(
            "rocmforge: nothing could be read: every path above failed (see the table). "
            "Fix: pass wheels, directories or ELF files (.so, executables).",
            code=2,
        )
    if missing:
        targets = sorted({m.target for m in missing})
        raise Exit(
            f"rocmforge: {len(missing)} library/target pair(s) missing: expected "
            f"{', '.join(targets)} not found in "
            f"{len({m.path for m in missing})} of {len(report.with_device_code)} libraries "
            f"with device code. Likely cause: {LIKELY_CAUSE}.",
            code=1,
        )


TASKS: tuple = (inspect,)
COLLECTIONS: tuple = ()
