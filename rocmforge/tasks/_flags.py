"""Invoke tasks whose flags come from the one flag table (rocmforge.settings.FLAGS).

Owns: `flagged`, the task decorator that gives a task (a) the table's setting flags it names,
generated as keyword parameters of an explicit `__signature__` (Invoke reads a task's arguments
with `inspect.signature` and takes each flag's type from its default), and (b) for every
parameter, the long flag, short letter and help of the table. Must not: hold a flag's spelling
or help itself, import the library, or accept a parameter the table does not know (that raises
at import, so a new flag cannot drift from the table).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from invoke import Task, task

from rocmforge.settings import FLAG_BY_NAME, flag_default


class TableTask(Task):
    """A Task whose arguments take their short flag and help from the flag table, and whose
    words (its docstring in `--list`, its flags' help, everything it prints while it runs) name
    the kit's tasks as the user must type them (render.tasks_as_typed)."""

    def __init__(self, body: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self._doc = ""
        super().__init__(body, *args, **kwargs)

    # Invoke shows `task.__doc__` in `--list` and `--help`: read through task_names, so a
    # repository that mounts the kit as `rocm` sees `invoke rocm.env` there too.
    @property  # type: ignore[override]
    def __doc__(self) -> str:  # type: ignore[override]
        from rocmforge.errors import task_names

        return task_names(self._doc)

    @__doc__.setter
    def __doc__(self, value: str | None) -> None:
        self._doc = value or ""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from rocmforge.render import tasks_as_typed

        with tasks_as_typed():
            return super().__call__(*args, **kwargs)

    def arg_opts(self, name: str, default: str, taken_names: set[str]) -> dict[str, object]:
        flag = FLAG_BY_NAME.get(name)
        if flag is None:
            raise ValueError(
                f"task {self.name!r} has the parameter {name!r}, which rocmforge.settings.FLAGS "
                "does not list; add it there (long name, short letter, help)"
            )
        opts: dict[str, Any] = super().arg_opts(name, default, taken_names)
        if flag.short:
            opts["names"].append(flag.short)
        opts.setdefault("help", flag.help)
        from rocmforge.errors import task_names

        opts["help"] = task_names(str(opts["help"])) if opts.get("help") else opts.get("help")
        return opts


def flagged(
    settings: Sequence[str] = (), *, help: Mapping[str, str] | None = None,  # noqa: A002
    **task_options: object,
) -> Callable[[Callable[..., None]], TableTask]:
    """Make an Invoke task of `body`, with the table's flags for `settings` added.

    The body takes its own task options as keyword parameters (their defaults give their
    types) and the setting flags through `**flags` (flag name -> value, "" or False when not
    given). `help` may word an option's help for this task; a setting flag's help is the table's.
    """
    for name in settings:
        flag = FLAG_BY_NAME.get(name)
        if flag is None or not flag.setting:
            raise ValueError(f"{name!r} is not a setting flag of rocmforge.settings.FLAGS")
    overridden = sorted(set(help or {}) & set(settings))
    if overridden:
        raise ValueError(f"the help of setting flags comes from the flag table: {overridden}")

    def decorate(body: Callable[..., None]) -> TableTask:
        own = [p for p in inspect.signature(body).parameters.values()
               if p.kind is not inspect.Parameter.VAR_KEYWORD]
        unknown = [p.name for p in own[1:] if p.name not in FLAG_BY_NAME]
        if unknown:
            raise ValueError(f"task {body.__name__!r} has parameters that "
                             f"rocmforge.settings.FLAGS does not list: {unknown}; add them there "
                             "(long name, short letter, help)")
        generated = [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                              default=flag_default(FLAG_BY_NAME[name]),
                              annotation=type(flag_default(FLAG_BY_NAME[name])).__name__)
            for name in settings
        ]
        body.__signature__ = inspect.Signature(own + generated)  # type: ignore[attr-defined]
        made: TableTask = task(klass=TableTask, auto_shortflags=False, help=dict(help or {}),
                               **task_options)(body)
        return made

    return decorate
