"""Shared plumbing of the task modules: settings from an Invoke context, and error reporting.

Owns: turning a RocmforgeError into one paragraph on stderr and an exit status (no traceback),
and building Settings from the four layers. Must not: import anything heavy at module level,
because `invoke --list` imports every task module.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from invoke import Context, Exit

F = TypeVar("F", bound=Callable[..., Any])


def reported(func: F) -> F:
    """Run a task body; a RocmforgeError becomes its paragraph and exit code, nothing else."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from rocmforge.errors import RocmforgeError

        try:
            return func(*args, **kwargs)
        except RocmforgeError as exc:
            raise Exit(f"rocmforge: {exc.paragraph()}", code=exc.exit_code) from None
        except KeyboardInterrupt:
            raise Exit("rocmforge: interrupted.", code=130) from None
        except BrokenPipeError:
            # The reader went away (`invoke plan | head`): stop quietly, as shell tools do.
            import sys

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise Exit(code=141) from None
        except OSError as exc:
            # A path the user gave (work dir under a file, a read-only folder, a full disk) that
            # the library did not check itself: still one paragraph and exit 2, not a traceback.
            raise Exit(f"rocmforge: {os_error_paragraph(exc)}", code=2) from None

    return wrapper  # type: ignore[return-value]


def os_error_paragraph(exc: OSError) -> str:
    """What/why/fix for an OSError that reached a task: the path and the system's reason."""
    from rocmforge.errors import RocmforgeError

    where = f" ({exc.filename})" if exc.filename else ""
    return RocmforgeError(
        f"The operating system refused a file operation{where}: {exc.strerror or exc}",
        "a path in the settings or flags (work_dir, --into, --json, --lock ...) does not point "
        "where the task can read or write",
        "check that path: it must be a folder (not a file), writable, and on a disk with space",
    ).paragraph()


def invoke_section(c: Context) -> dict[str, Any]:
    """The `rocm:` section as Invoke merged it (collection defaults + invoke.yaml)."""
    try:
        section = c.config.get("rocm", {})
    except Exception:  # noqa: BLE001 - Invoke's DataProxy raises various errors on odd config
        section = {}
    return {str(k): _plain(v) for k, v in dict(section).items()}


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in dict(value).items()}
    return value


def settings_for(c: Context, **flags: Any):  # -> Settings (lazy import keeps --list fast)
    """Settings for this invocation: config/ < invoke.yaml < ROCMFORGE_* < flags."""
    from rocmforge.settings import defaults_from_config, resolve

    return resolve(
        defaults=defaults_from_config(),
        invoke_config=invoke_section(c),
        environ=os.environ,
        flags=flags,
    )


def is_dry(c: Context) -> bool:
    """True under `invoke --dry`: tasks must then skip their Python-level writes too."""
    try:
        return bool(c.config.run.dry)
    except AttributeError:
        return False


@contextlib.contextmanager
def holding_work_dir(settings: Any, task: str) -> Iterator[None]:
    """Hold the work dir's lock while a task changes what a build reads (checkout, patch,
    triton.checkout, install): the same kernel lock `invoke build` holds, so neither can
    change the tree or the venv under the other (issue 14 item 4)."""
    from rocmforge.execute.lock import work_lock
    from rocmforge.render import say
    from rocmforge.workdir import workdir_for

    with work_lock(workdir_for(settings.work_dir), task=task, say=say):
        yield
