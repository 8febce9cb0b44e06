"""Invoke task: triage. A thin adapter: read the log (a file or stdin), explain it, print.

Exit status: 0 explained (a class, a cause and a fix, with the lines they rest on), 1 not
explained (the lines that look like errors are printed; no cause is claimed), 2 bad input (no
such file, a directory, an unreadable file).
"""

from __future__ import annotations

import sys

from invoke import Context, Exit

from rocmforge.tasks._common import reported
from rocmforge.tasks._flags import flagged


@flagged(positional=["log"])
@reported
def triage(c: Context, log: str | None = None, step: str = "", json: bool = False) -> None:
    """Explain a failed build's log and give its fix.

    Explain a failed build's log: the class, what it is about, the cause, the fix, and the
    log lines that show it. Any log: a step's log under <work>/logs, a CI log (timestamps,
    docker and ##[error] prefixes are read through), pip's output, or - for stdin.
    Exit 0: explained; 1: not explained (the error-looking lines are shown); 2: bad input.
    """
    import shutil

    from rocmforge import render
    from rocmforge.errors import UsageError
    from rocmforge.knowledge.steps import names_for_people
    from rocmforge.triage import NotText, bounded_lines, explain_file, explain_lines
    from rocmforge.triage.report import known_step, render_text

    if not log:
        raise UsageError(
            "no log given",
            "triage explains one log: a failed step's log (<work>/logs/<step>.log), a CI log, "
            "pip's or docker's output",
            "run `invoke triage .rocmforge/logs/build.log --step build`, or pipe a log in: "
            "`... 2>&1 | invoke triage -`",
        )
    if step and not known_step(step):
        print(f"rocmforge: --step {step!r} is not one of the kit's steps "
              f"({names_for_people()}); every rule is tried", file=sys.stderr)
        step = ""
    if log == "-":
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None or sys.stdin.closed:
            raise UsageError("triage was told to read stdin (-), but stdin is closed",
                             "there is no log to read",
                             "pipe a log in (`... 2>&1 | invoke triage -`) or name a file")
        source = "stdin"
        try:
            found = explain_lines(bounded_lines(stream), step)
        except NotText as error:
            raise UsageError(f"stdin is not a text log ({error})",
                             "triage reads the text a build printed; a NUL byte near the start "
                             "means a binary file or a device such as /dev/zero",
                             "pipe the log itself, e.g. `invoke triage - < build.log`") from None
    else:
        from pathlib import Path

        path = Path(log)
        if not path.exists():
            raise UsageError(f"the log {log} does not exist", "triage reads a log file, or "
                             "stdin for -", "check the path (a step's log is "
                             "<work>/logs/<step>.log)")
        if path.is_dir():
            raise UsageError(f"{log} is a directory", "triage reads one log file",
                             "name a file in it, e.g. logs/build.log")
        try:
            found = explain_file(path, step)
        except NotText as error:
            raise UsageError(f"{log} is not a text log ({error})",
                             "triage reads the text a build printed; a NUL byte near the start "
                             "means a binary file (a wheel, a core dump) or a device such as "
                             "/dev/zero",
                             "name the log file, e.g. .rocmforge/logs/build.log") from None
        except OSError as error:
            raise UsageError(f"{log} cannot be read ({error.strerror or error})",
                             "triage reads one log file",
                             "check the file's permissions, or pipe it in with -") from None
        source = log
    if json:
        render.emit_json({**found.to_json(), "log": source})
    else:
        width = shutil.get_terminal_size((100, 24)).columns
        sys.stdout.write(render_text(found, source, width=min(width, 100)))
        sys.stdout.flush()
    if not found.explained:
        raise Exit(code=1)


TASKS: tuple = (triage,)
COLLECTIONS: tuple = ()
