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


def protect_venv(prefix: Path, wheel_names: Iterable[str]) -> Path:
    """Write the constraint file into the venv at `prefix` and point its pip.conf at it (other
    settings of an existing pip.conf are kept). Returns the constraint file."""
    from rocmforge.fsutil import write_atomic

    constraints = prefix / CONSTRAINTS_NAME
    write_atomic(constraints, HEADER + "".join(f"{line}\n"
                                               for line in constraint_lines(wheel_names)))
    config = configparser.ConfigParser(interpolation=None)
    conf = prefix / PIP_CONF
    if conf.is_file():
        config.read(conf, encoding="utf-8")
    if not config.has_section("global"):
        config.add_section("global")
    config.set("global", "constraint", str(constraints))
    text = io.StringIO()
    config.write(text)
    write_atomic(conf, text.getvalue())
    return constraints


def release_venv(prefix: Path) -> bool:
    """Lift the kit's pin while the kit itself changes the venv (the build's requirements, a new
    Triton, the pip SDK): the `constraint` line the kit wrote leaves pip.conf; the install step
    writes the new one. Returns whether there was one."""
    from rocmforge.fsutil import write_atomic

    conf = prefix / PIP_CONF
    if not conf.is_file():
        return False
    config = configparser.ConfigParser(interpolation=None)
    config.read(conf, encoding="utf-8")
    ours = str(prefix / CONSTRAINTS_NAME)
    if not (config.has_section("global") and config.get("global", "constraint",
                                                        fallback="") == ours):
        return False
    config.remove_option("global", "constraint")
    text = io.StringIO()
    config.write(text)
    write_atomic(conf, text.getvalue())
    return True
