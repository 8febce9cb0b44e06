"""The pip pin of a venv as it is now (read only): pip's configuration files and their
precedence, what pip would take as `constraint` for `pip install` in an environment, and what
is installed against the kit's constraint file (doctor's "venv pin" and "venv torch" rows).

pip's precedence, read in pip 23.2.1 and 26.3 (pip/_internal/configuration.py: OVERRIDE_ORDER
global, user, site, PIP_CONFIG_FILE, PIP_* variables; get_configuration_files and
appdirs.site_config_dirs for the paths; the user files are skipped when PIP_CONFIG_FILE names a
file that exists; pip/_internal/cli/parser.py _get_ordered_configuration_items: sections
[global], then the command's ([install]), then the variables, an empty value dropped).
rocmforge.sources.constraints writes the pin; this module only reads. Must not: write.
"""

from __future__ import annotations

import configparser
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import canonicalize_name

from rocmforge.errors import UsageError

CONSTRAINTS_NAME = "rocmforge-constraints.txt"
UNPINNED_NAME = "rocmforge-unpinned.conf"
HOOK_MODULE = "_rocmforge_pin"
HOOK_PTH = "_rocmforge_pin.pth"
PIP_CONF = "pip.conf"
PINNED_LIST = "pinned-venvs.txt"  # in the work dir's state/: one venv prefix a line
# The kit's block in a venv's pip.conf [install]: MARK, the replaced option as WAS lines, then
# the kit's `constraint` line (rocmforge.sources.constraints writes it).
MARK = "# rocmforge pin: the line below names your constraint files and then the kit's"
WAS = "# rocmforge was: "
OPTION = re.compile(r"\s*constraint\s*[=:]", re.IGNORECASE)


def pip_config_files(environ: Mapping[str, str]) -> tuple[list[Path], list[Path]]:
    """pip's global and user configuration files on Linux, in its load order
    (pip/_internal/configuration.py get_configuration_files, appdirs.site_config_dirs: each
    $XDG_CONFIG_DIRS entry (default /etc/xdg) + /pip, then /etc; user: ~/.pip, then
    $XDG_CONFIG_HOME (default ~/.config) + /pip)."""
    home = Path(environ.get("HOME") or os.path.expanduser("~"))
    dirs = [d for d in (environ.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(":") if d]
    user_dir = environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    return ([Path(d) / "pip" / PIP_CONF for d in dirs] + [Path("/etc") / PIP_CONF],
            [home / ".pip" / PIP_CONF, Path(user_dir) / "pip" / PIP_CONF])


def read_pip_conf(path: Path) -> configparser.RawConfigParser:
    """The file as pip parses it (RawConfigParser, strict); a UsageError (one paragraph, exit 2)
    when pip could not read it either."""
    parser = configparser.RawConfigParser()
    if not path.is_file():
        return parser
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(
            f"{path} is not a pip configuration file pip can read ({first})",
            "the kit pins the venv's torch through it, and pip itself stops on every command "
            "while it is malformed; nothing was changed",
            f"correct or remove {path} (an INI file: `[install]` then `constraint = FILE`), "
            "then run the command again",
        ) from None
    return parser


def check_pip_configuration(prefix: Path, environ: Mapping[str, str]) -> None:
    """UsageError (one paragraph, exit 2) when a pip configuration file pip would read in the
    venv at `prefix` cannot be parsed: the venv's, a global, a user one, PIP_CONFIG_FILE's.
    Called before the kit changes the venv, so nothing is changed."""
    global_files, user_files = pip_config_files(environ)
    named = environ.get("PIP_CONFIG_FILE", "")
    for path in [*global_files, *user_files, prefix / PIP_CONF,
                 *([Path(named)] if named and named != os.devnull else [])]:
        read_pip_conf(path)


def site_packages(prefix: Path) -> Path | None:
    """The venv's purelib folder (lib/pythonX.Y/site-packages), None when there is not one."""
    found = sorted(prefix.glob("lib/python*/site-packages"))
    return found[0] if len(found) == 1 else None


@dataclass(frozen=True, kw_only=True)
class PinState:
    """What pip would take as `constraint` for `pip install` in a venv, and whether the kit's
    file is in it."""

    constraints: tuple[str, ...]
    source: str
    holds: bool


def pin_value(prefix: Path) -> str:
    """How the kit names the venv's constraint file in a pip setting: its path, or where the
    path has white space (pip splits a `constraint` value on it) its file: URL, spaces as %20,
    which pip reads as that file (pip/_internal/req/req_file.py get_file_content; tried with pip
    23.2.1 and 26.3 in tests/integration/test_pin_holds.py)."""
    path = prefix / CONSTRAINTS_NAME
    return path.as_uri() if any(ch.isspace() for ch in str(path)) else str(path)


def effective_pin(prefix: Path, environ: Mapping[str, str]) -> PinState:
    """pip's value of `constraint` for `pip install` with the venv at `prefix`, in `environ`
    (pip's precedence, the module's docstring), the kit's hook applied as it would apply."""
    ours = pin_value(prefix)
    hooked = site_packages(prefix)
    hooked_on = hooked is not None and (hooked / HOOK_PTH).is_file()
    env_value = environ.get("PIP_CONSTRAINT", "").split()
    env_file = environ.get("PIP_CONFIG_FILE", "")
    files: list[Path] = []
    global_files, user_files = pip_config_files(environ)
    files += global_files
    if not (env_file and Path(env_file).exists()):
        files += user_files
    files.append(prefix / PIP_CONF)
    if env_file:
        files.append(Path(env_file))
    found: dict[str, tuple[str, str]] = {}
    for path in files:
        parser = read_pip_conf(path)
        for section in ("global", "install"):
            if parser.has_option(section, "constraint"):
                found[section] = (parser.get(section, "constraint"), f"{path} [{section}]")
    hook_applies = hooked_on and (prefix / CONSTRAINTS_NAME).is_file() and env_file != str(
        prefix / UNPINNED_NAME)
    if env_value:
        values = env_value + ([ours] if hook_applies and ours not in env_value else [])
        return PinState(constraints=tuple(values), source="PIP_CONSTRAINT",
                        holds=ours in values)
    if env_file == os.devnull:  # pip loads no configuration file at all
        return PinState(constraints=(ours,) if hook_applies else (), holds=hook_applies,
                        source=f"PIP_CONSTRAINT, set by the kit's hook (PIP_CONFIG_FILE is "
                        f"{os.devnull}: pip reads no configuration file)" if hook_applies
                        else f"nowhere (PIP_CONFIG_FILE is {os.devnull})")
    if hook_applies and env_file and Path(env_file).is_file():
        named = read_pip_conf(Path(env_file))
        value = named.get("install", "constraint", fallback="").split() or \
            named.get("global", "constraint", fallback="").split()
        if value:
            values = value + ([ours] if ours not in value else [])
            return PinState(constraints=tuple(values), holds=True,
                            source=f"PIP_CONSTRAINT, set by the kit's hook from {env_file}")
    for section in ("install", "global"):
        value_text, source = found.get(section, ("", ""))
        if value_text.split():
            return PinState(constraints=tuple(value_text.split()), source=source,
                            holds=ours in value_text.split())
    return PinState(constraints=(), source="", holds=False)


@dataclass(frozen=True, kw_only=True)
class PinReport:
    """One pinned venv as it is now: the versions its constraint file pins, what is installed
    there instead (a pinned distribution at another version, or at the pinned version but not
    from a wheel file: pip's direct_url.json, PEP 610, is absent or names no file), and what
    pip would take as `constraint` in this environment."""

    prefix: Path
    pins: tuple[tuple[str, str], ...]
    replaced: tuple[str, ...]
    state: PinState
    left_out: tuple[str, ...] = ()
    """Constraint files the user's pip configuration names now that the kit's line (a copy
    taken at pin time) does not: the line replaces them in this venv."""


def pinned_venvs(state_dir: Path) -> list[Path]:
    path = state_dir / PINNED_LIST
    if not path.is_file():
        return []
    return [Path(line.strip()) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def pin_report(prefix: Path, environ: Mapping[str, str]) -> PinReport | None:
    """The venv's pin now; None when the kit's constraint file is not there (not pinned)."""
    import json

    constraints = prefix / CONSTRAINTS_NAME
    if not constraints.is_file():
        return None
    pins = tuple((name, version) for name, _, version in
                 (line.strip().partition("==") for line in
                  constraints.read_text(encoding="utf-8").splitlines())
                 if version and not name.startswith("#"))
    installed: dict[str, tuple[str, Path]] = {}
    for info in sorted(prefix.glob("lib/python*/site-packages/*.dist-info")):
        name, _, version = info.name.removesuffix(".dist-info").partition("-")
        installed[str(canonicalize_name(name))] = (version, info)
    replaced = []
    for name, version in pins:
        found = installed.get(name)
        if found is None:
            replaced.append(f"{name} (pinned {version}) is not installed")
            continue
        have, info = found
        if have != version:
            replaced.append(f"{name} {have} is installed, the pin says {version}")
            continue
        try:
            url = str(json.loads((info / "direct_url.json").read_text(encoding="utf-8"))["url"])
        except (OSError, ValueError, KeyError, TypeError):
            url = ""
        if not (url.startswith("file://") and url.endswith(".whl")):
            replaced.append(f"{name} {have} was installed from an index, not from a wheel "
                            "file of the kit's dist/")
    left_out: list[str] = []
    try:
        state = effective_pin(prefix, environ)
        if state.source == f"{prefix / PIP_CONF} [install]":  # the kit's line is what pip takes
            text = (prefix / PIP_CONF).read_text(encoding="utf-8")
            site = configparser.RawConfigParser()
            site.read_string(without_pin(text, pin_value(prefix)))
            left_out = [c for c in own_constraints(site, environ) if c not in state.constraints]
    except UsageError as exc:
        state = PinState(constraints=(), source=exc.what, holds=False)
    except (OSError, configparser.Error):
        pass
    return PinReport(prefix=prefix, pins=pins, replaced=tuple(replaced), state=state,
                     left_out=tuple(left_out))


def own_constraints(site: configparser.RawConfigParser, environ: Mapping[str, str]) -> list[str]:
    """The constraint files pip would take for `pip install` from the global and user files
    and the venv's pip.conf (`site`, without the kit's line): per section the last file's value,
    [install] over [global], an empty value dropped (pip/_internal/cli/parser.py
    _get_ordered_configuration_items)."""
    global_files, user_files = pip_config_files(environ)
    found: dict[str, str] = {}
    for parser in [*(read_pip_conf(p) for p in [*global_files, *user_files]), site]:
        for section in ("global", "install"):
            if parser.has_option(section, "constraint"):
                found[section] = parser.get(section, "constraint")
    for section in ("install", "global"):
        if found.get(section, "").split():
            return found[section].split()
    return []


def without_pin(text: str, ours: str) -> str:
    """`text` with the kit's pin block replaced by the lines it replaced; an older kit's
    `[global] constraint` naming `ours` loses that file (its own line, nothing else)."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].rstrip("\n") != MARK:
            out.append(lines[i])
            i += 1
            continue
        i += 1
        while i < len(lines) and lines[i].startswith(WAS):
            out.append(lines[i][len(WAS):])
            i += 1
        if i < len(lines) and OPTION.match(lines[i]):
            i = option_end(lines, i, len(lines))
    return _drop_old_global("".join(out), ours)


def option_end(lines: Sequence[str], first: int, end: int) -> int:
    """The line after an option's value: continuation lines are the indented ones after it."""
    stop = first + 1
    while stop < end and lines[stop].strip() and lines[stop][:1] in (" ", "\t"):
        stop += 1
    return stop


def _drop_old_global(text: str, ours: str) -> str:
    """An earlier kit wrote `constraint = ... <venv>/rocmforge-constraints.txt` into [global]:
    that file name leaves the line (the line goes when nothing else is on it)."""
    out = []
    for line in text.splitlines(keepends=True):
        if OPTION.match(line) and ours in line.split():
            key, _, value = line.partition("=") if "=" in line else line.partition(":")
            kept = [v for v in value.split() if v != ours]
            if not kept:
                continue
            line = f"{key.rstrip()} = {' '.join(kept)}\n"
        out.append(line)
    return "".join(out)
