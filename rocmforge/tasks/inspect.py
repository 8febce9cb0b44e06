"""Invoke tasks: inspect. Thin adapters: parse flags, call the library, print the report.

Exit status: 0 proven (every file read whole; with --expect, device code present and every
expected target in every library that has device code), 1 a failed check (a FAIL row, no HIP
device code with --expect, a missing target), 2 bad input (a path that does not exist or is
not a wheel, directory, ELF file or kpack archive; an unknown target).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from invoke import Context, Exit

from rocmforge.tasks._common import reported
from rocmforge.tasks._flags import flagged

_HELP_WORDS = ("--help", "-h")


@flagged(
    positional=["paths"],
    iterable=["path"],
    help={
        "paths": "wheel, directory or ELF file (required, first argument); several: quote them "
        "as one argument ('dist/torch.whl build/lib' or 'dist/*.whl'); globs are expanded",
        "expect": 'targets every library with device code must carry, e.g. "gfx1100;gfx942"; '
        "a file set without any HIP device code then fails",
        "json": "print the rocmforge.inspect/1 JSON document instead of tables",
    },
)
@reported
def inspect(
    c: Context,
    paths: str,
    path: list[str] | None = None,
    expect: str = "",
    deep: bool = False,
    json: bool = False,
) -> None:
    """Show the GPU targets a wheel or .so contains.

    Show the GPU targets a wheel, directory or .so really contains (offload bundles, and
    the .kpack archives a kpack-split library names: give device wheels with their host wheel).

    Several paths: `rocmforge inspect dist/*.whl build/lib` takes every word as a path. Invoke
    takes one positional value per task, so there quote them as one argument
    (`invoke inspect 'dist/*.whl build/lib'`, globs are expanded) or add `--path P` for each.
    Exit 0: proven; 1: a FAIL row, no HIP device code with --expect, or a missing target;
    2: bad input.
    """
    import shlex

    from rocmforge import render
    from rocmforge.errors import UsageError
    from rocmforge.inspect import inspect_paths, missing_targets, to_json
    from rocmforge.inspect.reader import expand_path_words, unusable_paths
    from rocmforge.inspect.report import COLUMNS, library_rows, summary_rows
    from rocmforge.inspect.verdict import judge

    if paths in _HELP_WORDS:
        _print_help()
        return
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
    unusable = unusable_paths(found)
    if unusable:
        raise UsageError(
            "cannot inspect " + "; ".join(unusable),
            "inspect reads wheels (.whl, .zip), directories and ELF files (.so, .o, executables)",
            "check the path (a glob that matches nothing is kept as written) and pass one of those",
        )

    expected: tuple[str, ...] = ()
    if expect:
        from rocmforge.knowledge.arches import load_arch_table
        from rocmforge.knowledge.targets import parse_targets

        expected = tuple(str(t) for t in parse_targets(expect, load_arch_table()))

    report = inspect_paths(found, deep=deep)
    missing = missing_targets(report, expected) if expected else ()
    verdict = judge(report, expected, missing)
    if json:
        render.emit_json(to_json(report, expected=expected, missing=missing, verdict=verdict))
    else:
        if report.libraries:
            render.print_table(
                "Offload bundles per library", COLUMNS, library_rows(report), status_column=0
            )
        render.print_table("Summary", ("item", "value"), summary_rows(report))
        if missing:
            render.print_table(
                "Expected targets missing",
                ("target", "library", "targets proven"),
                [(m.target + (" (listed, unproven)" if m.listed else ""), m.path,
                  " ".join(m.found)) for m in missing],
            )  # fmt: skip
    if verdict.exit_code:
        raise Exit(render.fit("rocmforge: " + " ".join(verdict.problems), sys.stderr),
                   code=verdict.exit_code)  # fmt: skip
    for note in verdict.notes:
        print(render.fit(f"rocmforge: {note}", sys.stderr), file=sys.stderr)


def _print_help() -> None:
    """`inspect --help` / `-h`: Invoke hands them to the path argument; show the task's help."""
    from invoke import Collection, Program

    binary = "rocmforge" if os.path.basename(sys.argv[0]).startswith("rocmforge") else "invoke"
    program = Program(namespace=Collection(inspect), binary=binary, name=binary)
    program.run([binary, "--help", "inspect"], exit=False)


def spread_paths(argv: Sequence[str]) -> list[str]:
    """argv for the `rocmforge` script: each bare word after `inspect`'s first path becomes
    `--path WORD`, so `rocmforge inspect dist/*.whl` reads every file the shell matched.

    So `inspect` takes every later bare word as a path: run other tasks in their own call.
    """
    words = list(argv)
    try:
        at = words.index("inspect", 1)
    except ValueError:
        return words
    takes_value: set[str] = set()
    for argument in inspect.get_arguments():
        if argument.takes_value:
            takes_value.update(
                ("--" + name.replace("_", "-")) if len(name) > 1 else "-" + name
                for name in argument.names
            )
    out = words[: at + 1]
    have_first = False
    index = at + 1
    while index < len(words):
        word = words[index]
        if word == "--":
            out.extend(words[index:])
            break
        if word.startswith("-"):
            out.append(word)
            if word.split("=", 1)[0] in ("--paths", "-p"):
                have_first = True
            if word in takes_value and index + 1 < len(words):
                out.append(words[index + 1])
                index += 1
        elif have_first:
            out += ["--path", word]
        else:
            out.append(word)
            have_first = True
        index += 1
    return out


TASKS: tuple = (inspect,)
COLLECTIONS: tuple = ()
