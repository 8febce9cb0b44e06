"""Shared plumbing of the task modules: settings from an Invoke context, and error reporting.

Owns: turning a RocmforgeError into one paragraph on stderr and an exit status (no traceback),
and building Settings from the layers (config/, each Invoke configuration layer under its own
file or variable name, ROCMFORGE_*, flags), so every value carries its true source. Must not:
import anything heavy at module level, because `invoke --list` imports every task module.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from invoke import Context, Exit

if TYPE_CHECKING:
    from rocmforge.settings import Settings

F = TypeVar("F", bound=Callable[..., Any])


def project_dir(start: Path) -> Path | None:
    """The folder Invoke takes tasks.py from: the nearest one at or above `start`."""
    for folder in (start, *start.parents):
        if (folder / "tasks.py").is_file():
            return folder
    return None


def reported(func: F) -> F:
    """Run a task body; a RocmforgeError becomes its paragraph and exit code, nothing else."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from rocmforge.errors import RocmforgeError

        try:
            return func(*args, **kwargs)
        except RocmforgeError as exc:
            _say_unanswered()
            import sys

            from rocmforge.render import fit

            raise Exit(fit(f"rocmforge: {exc.paragraph()}", sys.stderr),
                       code=exc.exit_code) from None
        except KeyboardInterrupt:
            raise Exit("rocmforge: interrupted.", code=130) from None
        except BrokenPipeError:
            # The reader went away (`invoke plan | head`): stop quietly, as shell tools do.
            import sys

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise Exit(code=141) from None
        except OSError as exc:
            # A path the user gave (work dir under a file, a read-only folder) that the library
            # did not check itself: still one paragraph and exit 2, not a traceback; a full disk
            # or an I/O error is the environment's (exit 3).
            import errno
            import sys

            from rocmforge.errors import EXIT_BAD_INPUT, EXIT_ENVIRONMENT, disk_full
            from rocmforge.render import fit

            full = disk_full(exc, Path(exc.filename).parent if exc.filename else Path.cwd(),
                             path=exc.filename or "a file the system did not name")
            if full is not None:  # the disk's one message (README "Exit codes"), not a path's
                raise Exit(fit(f"rocmforge: {full.paragraph()}", sys.stderr),
                           code=full.exit_code) from None
            environment = (errno.EIO,)
            code = EXIT_ENVIRONMENT if exc.errno in environment else EXIT_BAD_INPUT
            raise Exit(f"rocmforge: {os_error_paragraph(exc)}", code=code) from None

        finally:
            _say_unanswered()

    return wrapper  # type: ignore[return-value]


def _say_unanswered() -> None:
    """Name each probed program that hung or printed garbage (said once per program), so a
    doctor or plan that took its timeouts says why and which facts are missing."""
    import sys

    from rocmforge.probes import forget_unanswered, unanswered
    from rocmforge.render import fit

    for program, what in unanswered():
        print(fit(f"rocmforge: note: {program} {what}; what it would have said is left out "
                  "of these results. Check that program (run it by hand), or take its folder "
                  "off PATH.", sys.stderr), file=sys.stderr)
    forget_unanswered()


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


def invoke_layers(
    c: Context, defaults: Mapping[str, object]
) -> list[tuple[str, dict[str, object]]]:
    """The `rocm:` keys of each Invoke configuration layer, labelled with where they came from,
    lowest first: the collection's configure() (values that differ from config/defaults.toml,
    which the kit's own collection holds), the system, user and project files (/etc/invoke.yaml,
    ~/.invoke.yaml, the project's invoke.yaml), INVOKE_ROCM_* variables, the runtime file
    (`invoke -f`), overrides and changes made in code.

    Invoke keeps its layers apart only in attributes without a public accessor; they have not
    changed since Invoke 1.0. If a future Invoke lacks them, the merged section is one layer.
    """
    config = c.config
    prefix = str(getattr(config, "_env_prefix", None) or "INVOKE_")
    files = (("_system", "_system_path"), ("_user", "_user_path"), ("_project", "_project_path"))
    if not all(hasattr(config, name) for name, _ in files):
        merged = _section(_get(config, "rocm"))
        return [("Invoke config (rocm:)",
                 {k: v for k, v in merged.items() if defaults.get(k, _MISSING) != v})]
    layers: list[tuple[str, dict[str, object]]] = []
    collection = _section(_get(getattr(config, "_collection", {}), "rocm"))
    changed = {k: v for k, v in collection.items() if defaults.get(k, _MISSING) != v}
    layers.append(("tasks.py (Collection.configure rocm:)", changed))
    for data_name, path_name in files:
        path = getattr(config, path_name, None) or data_name.strip("_") + " config file"
        layers.append((f"{path} (rocm:)", _section(_get(getattr(config, data_name), "rocm"))))
    env = _section(_get(getattr(config, "_env", {}), "rocm"))
    layers += [(f"env {prefix}ROCM_{key.upper()}", {key: value}) for key, value in env.items()]
    runtime_path = getattr(config, "_runtime_path", None) or "invoke -f file"
    layers.append((f"{runtime_path} (rocm:)",
                   _section(_get(getattr(config, "_runtime", {}), "rocm"))))
    layers.append(("Invoke config overrides (rocm:)",
                   _section(_get(getattr(config, "_overrides", {}), "rocm"))))
    layers.append(("c.config.rocm set in code",
                   _section(_get(getattr(config, "_modifications", {}), "rocm"))))
    return [(label, values) for label, values in layers if values]


_MISSING = object()


def _get(data: Any, key: str) -> Any:
    try:
        return data.get(key, {}) if data is not None else {}
    except Exception:  # noqa: BLE001 - Invoke's DataProxy raises various errors on odd config
        return {}


def _section(value: Any) -> dict[str, Any]:
    return {str(k): _plain(v) for k, v in dict(value).items()} if isinstance(value, Mapping) \
        else {}


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in dict(value).items()}
    return value


def settings_for(c: Context, **flags: object) -> Settings:
    """Settings for this invocation: config/ < Invoke's layers < ROCMFORGE_* < flags (by
    setting name), each value with its true source."""
    from rocmforge.knowledge.toml_files import CONFIG_DIR_ENV, config_dir
    from rocmforge.settings import DEFAULTS_SOURCE, defaults_from_config, resolve

    defaults = defaults_from_config()
    moved = os.environ.get(CONFIG_DIR_ENV)  # the kit's config/ replaced by another folder
    settings = resolve(
        defaults=defaults,
        defaults_source=str(config_dir() / "defaults.toml") if moved else DEFAULTS_SOURCE,
        invoke_layers=invoke_layers(c, defaults),
        environ=os.environ,
        flags=flags,
    )
    anchored = anchored_work_dir(settings)
    from rocmforge.workdir import check_work_dir

    check_work_dir(anchored.work_dir)  # a file there: one paragraph, exit 2, for every task
    return anchored


def anchored_work_dir(settings: Settings, cwd: Path | None = None) -> Settings:
    """The default work dir (relative, from config/defaults.toml) belongs to the project whose
    tasks.py Invoke found, not to the folder the command ran in: `invoke build` from a
    subfolder of the checkout uses the same .rocmforge as from its top. A work dir the user
    named (flag, variable, invoke.yaml) keeps its meaning."""
    import dataclasses

    from rocmforge.settings import BUILT_IN, DEFAULTS_SOURCE

    here = cwd or Path.cwd()
    if Path(settings.work_dir).is_absolute() or settings.origins.get("work_dir") not in (
            DEFAULTS_SOURCE, BUILT_IN):
        return settings
    project = project_dir(here)
    if project is None or project == here:
        return settings
    return dataclasses.replace(settings, work_dir=str(project / settings.work_dir))


def is_dry(c: Context) -> bool:
    """True under `invoke --dry`: tasks must then skip their Python-level writes too."""
    try:
        return bool(c.config.run.dry)
    except AttributeError:
        return False


@contextlib.contextmanager
def holding_work_dir(settings: Settings, task: str) -> Iterator[None]:
    """Hold the work dir's lock while a task changes what a build reads (checkout, patch,
    triton.checkout, install): the same kernel lock `invoke build` holds, so neither can
    change the tree or the venv under the other (issue 14 item 4)."""
    from rocmforge.execute.lock import work_lock
    from rocmforge.render import say
    from rocmforge.workdir import workdir_for

    with work_lock(workdir_for(settings.work_dir), task=task, say=say):
        yield
