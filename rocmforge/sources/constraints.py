"""Torch protected in every venv the kit fills: a pip constraint pinning the wheels of dist/.

Owns: `constraint_lines` (pure: `name==version` for each wheel file name, in the order given)
and `protect_venv` (writes <venv>/rocmforge-constraints.txt and the venv's own pip.conf, pip's
per-environment configuration file at sys.prefix, whose `constraint` applies to every `pip
install` run with that venv's pip). A later `pip install X` that would replace torch, Triton, a
companion or an extension with another version then stops with pip's resolution conflict,
instead of silently swapping the self-built torch for PyPI's. Must not: decide which wheels a
venv holds (the install steps, `invoke install` and `nox -s verify` pass them).
"""

from __future__ import annotations

import configparser
import io
from collections.abc import Iterable
from pathlib import Path

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

CONSTRAINTS_NAME = "rocmforge-constraints.txt"
UNPINNED_NAME = "rocmforge-unpinned.conf"
UNPINNED_TEXT = ("# Written by rocmforge: named by PIP_CONFIG_FILE for the kit's own wheel builds "
                 "only,\n# so the venv's pin does not refuse the new version being built.\n"
                 "[global]\nconstraint =\n")
PIP_CONF = "pip.conf"
HEADER = ("# Written by rocmforge: the wheels this venv got from the kit's dist/. pip reads this "
          "file\n# through pip.conf (constraint); remove that line to let pip replace them.\n")


def constraint_lines(wheel_names: Iterable[str]) -> list[str]:
    """`torch==2.9.0a0+rocm7.14.1` for each wheel file name (a name that is no wheel's is
    left out); each distribution once."""
    lines: dict[str, str] = {}
    for name in wheel_names:
        try:
            dist, version, _, _ = parse_wheel_filename(Path(name).name)
        except InvalidWheelFilename:
            continue
        lines.setdefault(str(canonicalize_name(dist)), f"{canonicalize_name(dist)}=={version}")
    return list(lines.values())


def protect_venv(prefix: Path, wheel_names: Iterable[str]) -> Path | None:
    """Write the constraint file into the venv at `prefix` and add it to the `constraint` of its
    pip.conf [global] (a constraint of the user's own stays; other settings stay). Also writes
    the config that lifts the pin for the kit's own wheel builds (`unpinned_env`). Returns the
    constraint file; None when pip could not read it there (pip splits a config value on white
    space: a venv path with a space cannot be named) and nothing was written."""
    from rocmforge.fsutil import write_atomic

    constraints = prefix / CONSTRAINTS_NAME
    if any(ch.isspace() for ch in str(constraints)):
        return None
    write_atomic(constraints, HEADER + "".join(f"{line}\n"
                                               for line in constraint_lines(wheel_names)))
    write_atomic(prefix / UNPINNED_NAME, UNPINNED_TEXT)
    config, conf = _config(prefix)
    if not config.has_section("global"):
        config.add_section("global")
    theirs = [v for v in config.get("global", "constraint", fallback="").split()
              if v != str(constraints)]
    config.set("global", "constraint", " ".join([*theirs, str(constraints)]))
    _write(config, conf)
    return constraints


def release_venv(prefix: Path) -> bool:
    """Lift the kit's pin while the kit itself changes the venv (the build's requirements, a new
    Triton, the pip SDK, the install of new wheels): the kit's file leaves pip.conf's
    `constraint` (a constraint of the user's own stays). Returns whether it was there."""
    conf = prefix / PIP_CONF
    if not conf.is_file():
        return False
    config, conf = _config(prefix)
    ours = str(prefix / CONSTRAINTS_NAME)
    values = config.get("global", "constraint", fallback="").split() \
        if config.has_section("global") else []
    if ours not in values:
        return False
    kept = [v for v in values if v != ours]
    if kept:
        config.set("global", "constraint", " ".join(kept))
    else:
        config.remove_option("global", "constraint")
    _write(config, conf)
    return True


def unpinned_env(prefix: Path) -> dict[str, str]:
    """The variable that lifts the venv's pin for one command (the kit's own `pip wheel` of a
    companion or extension, whose new version the old pin would refuse): pip loads the file
    PIP_CONFIG_FILE names last, and an empty `constraint` there replaces the venv's. It only
    disables the user's per-user pip.conf for that command, which `pip wheel --no-deps` of a
    local tree does not need."""
    return {"PIP_CONFIG_FILE": str(prefix / UNPINNED_NAME)}


def _config(prefix: Path) -> tuple[configparser.ConfigParser, Path]:
    config = configparser.ConfigParser(interpolation=None)
    conf = prefix / PIP_CONF
    if conf.is_file():
        config.read(conf, encoding="utf-8")
    return config, conf


def _write(config: configparser.ConfigParser, conf: Path) -> None:
    from rocmforge.fsutil import write_atomic

    text = io.StringIO()
    config.write(text)
    write_atomic(conf, text.getvalue())
