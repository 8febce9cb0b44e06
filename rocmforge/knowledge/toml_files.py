"""Strict reading of the kit's TOML files.

Owns: locating `config/`, parsing TOML, and rejecting unknown or missing keys with a
did-you-mean suggestion. Every loader in `rocmforge.knowledge` goes through here so a typo in
any config file fails the same way (ConfigError, exit 2) instead of being silently ignored.
Must not: know what any file means (the loaders beside it do) or write anything (the parsed
documents are kept by knowledge.parsed_toml).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import TypeVar, overload

from rocmforge.errors import ConfigError


def _toml_module() -> ModuleType:
    """tomllib (tomli before 3.11), imported on first need: parsed documents usually come from
    knowledge.parsed_toml, and then no TOML parser is loaded at all."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    return tomllib


def __getattr__(name: str) -> ModuleType:
    if name == "tomllib":  # `from rocmforge.knowledge.toml_files import tomllib` keeps working
        return _toml_module()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


CONFIG_DIR_ENV = "ROCMFORGE_CONFIG_DIR"

_T = TypeVar("_T")
_U = TypeVar("_U")
_V = TypeVar("_V")

TomlTable = dict[str, object]
"""A parsed TOML document or table: keys to values that loaders narrow with `expect_type`."""


def config_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The directory holding the kit's TOML facts.

    Order: an explicit argument, then ROCMFORGE_CONFIG_DIR, then the kit's own `config/`
    (beside the package in a checkout or vendored copy, inside it in an installed wheel).
    """
    if override:
        return Path(override)
    env = os.environ.get(CONFIG_DIR_ENV)
    if env:
        return Path(env)
    return kit_data_dir("config")


def kit_data_dir(name: str) -> Path:
    """`config/` or `patches/` of this copy of the kit.

    A checkout or a vendored copy keeps them beside the package; an installed wheel carries them
    inside it as `rocmforge/_kit/<name>` (setup.py copies them there at build time).
    """
    package = Path(__file__).resolve().parent.parent
    beside = package.parent / name
    inside = package / "_kit" / name
    return inside if not beside.is_dir() and inside.is_dir() else beside


def read_toml(path: Path) -> TomlTable:
    """Parse one TOML file, turning every failure into a ConfigError paragraph; callers narrow
    each value with `expect_type`/`check_keys`."""
    from rocmforge.knowledge.parsed_toml import parsed

    try:
        return parsed(path.read_bytes(), lambda data: _toml_module().loads(data.decode()))
    except FileNotFoundError:
        raise ConfigError(
            f"The kit's config file {path} does not exist",
            "rocmforge reads its facts from the config/ folder that ships beside the package",
            f"restore it (git checkout -- {path.name}) or point {CONFIG_DIR_ENV} at a complete "
            "config/ folder",
        ) from None
    except _toml_module().TOMLDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid TOML: {exc}",
            "the kit cannot guess what a malformed file meant",
            "fix the line named above",
        ) from None
    except OSError as exc:
        raise ConfigError(
            f"{path} could not be read: {exc.strerror}",
            "the kit needs to read its facts before doing anything",
            "check the file's permissions",
        ) from None


def suggest(word: str, choices: Iterable[str]) -> str:
    """' Did you mean "x"?' for the closest choice, or '' when nothing is close."""
    import difflib  # here: only a typo needs it

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f' Did you mean "{close[0]}"?' if close else ""


def check_keys(
    table: Mapping[str, object],
    *,
    where: str,
    required: Iterable[str] = (),
    optional: Iterable[str] = (),
) -> None:
    """Reject keys that are not known and report required keys that are absent."""
    required = tuple(required)
    known = set(required) | set(optional)
    for key in table:
        if key not in known:
            raise ConfigError(
                f'Unknown key "{key}" in {where}.{suggest(key, known)}',
                "a misspelled key would otherwise be ignored silently and its default used",
                f"use one of: {', '.join(sorted(known))}",
            )
    for key in required:
        if key not in table:
            raise ConfigError(
                f'Missing key "{key}" in {where}',
                "the kit has no default for it",
                f'add {key} = ... to {where}',
            )


@overload
def expect_type(value: object, kind: type[_T], *, where: str) -> _T: ...
@overload
def expect_type(value: object, kind: tuple[type[_T], type[_U]], *, where: str) -> _T | _U: ...
@overload
def expect_type(
    value: object, kind: tuple[type[_T], type[_U], type[_V]], *, where: str
) -> _T | _U | _V: ...
def expect_type(value: object, kind: type | tuple[type, ...], *, where: str) -> object:
    """Check one value's type (bool is not accepted where an int is wanted).

    Returns `value` narrowed to `kind`, so a loader reads a TOML value as the type it checked.
    """
    kinds = kind if isinstance(kind, tuple) else (kind,)
    ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
    if not ok:
        names = " or ".join(k.__name__ for k in kinds)
        raise ConfigError(
            f"{where} should be {names}, not {type(value).__name__} ({value!r})",
            "the kit checks every fact's type when it loads config/",
            f"write {where} as {names}",
        )
    return value


def read_section(path: Path, key: str) -> dict[str, object]:
    """The one top-level table `key` of a config file that must hold only it (e.g.
    [extension.*] of extensions.toml), checked to be a table."""
    data = read_toml(path)
    check_keys(data, where=str(path), required=(key,))
    return expect_type(data[key], dict, where=f"{path} [{key}]")
