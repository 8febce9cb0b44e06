"""Torch protected in every venv the kit fills: a pip constraint pinning the wheels of dist/,
written where pip's own precedence lets no other setting replace it.

pip takes one value of `constraint` for `pip install` (pip 23.2.1 and 26.3 alike, read in
pip/_internal/configuration.py and pip/_internal/cli/parser.py): the files are read in the order
global (/etc/xdg/pip, /etc), user (~/.pip, ~/.config/pip), site (the venv's own pip.conf),
PIP_CONFIG_FILE (OVERRIDE_ORDER), a later file's value replacing an earlier one; then the
sections are taken in the order [global], [install], PIP_* variables (`override_order`), an
empty value dropped. So a `[global] constraint` in the venv is replaced by any `[install]
constraint` of the user's, by PIP_CONFIG_FILE's `[install]` and by PIP_CONSTRAINT. The kit
therefore writes (all in the venv):

- rocmforge-constraints.txt: `name==version` per wheel (`constraint_lines`);
- pip.conf `[install] constraint`: the user's own constraint files (the value pip would take
  from the global, user and site files without the kit) and then the kit's, so the highest
  file setting names both; the line it replaced is kept above it as a comment and put back by
  `release_venv`; every other line of the file (comments included) stays as it was;
- a `.pth` hook in site-packages (`HOOK_TEXT`), run by the venv's interpreter when it starts
  pip: when PIP_CONSTRAINT is set, or PIP_CONFIG_FILE sets a `constraint`, it puts that value
  and then the kit's file into PIP_CONSTRAINT, the one setting above every file.

A `pip install -c FILE` adds to the configured list (optparse's append), so it keeps the pin.
Owns: writing and lifting those files, and the work dir's list of pinned venvs (reading them:
rocmforge.probes.pip_pin). Must not: decide which wheels a venv holds (the install steps,
`invoke install` and `nox -s verify` pass them).
"""

from __future__ import annotations

import configparser
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

from rocmforge.probes.pip_pin import (
    CONSTRAINTS_NAME,
    HOOK_MODULE,
    HOOK_PTH,
    MARK,
    OPTION,
    PINNED_LIST,
    PIP_CONF,
    UNPINNED_NAME,
    WAS,
    check_pip_configuration,
    option_end,
    own_constraints,
    pin_value,
    pinned_venvs,
    site_packages,
    without_pin,
)

__all__ = ["CONSTRAINTS_NAME", "HOOK_PTH", "MARK", "check_pip_configuration", "constraint_lines",
           "pin_effects", "protect_venv", "record_pinned", "release_venv", "unpinned_env"]

# For the kit's own wheel builds (`pip wheel`, whose section is [wheel], not [install]) and a
# kit `pip install` while the pin is lifted: empty values replace the venv's (and the hook skips).
UNPINNED_TEXT = ("# Written by rocmforge: named by PIP_CONFIG_FILE for the kit's own wheel builds "
                 "only,\n# so the venv's pin does not refuse the new version being built.\n"
                 "[global]\nconstraint =\n[install]\nconstraint =\n")
HEADER = ("# Written by rocmforge: the wheels this venv got from the kit's dist/. pip reads this "
          "file\n# through pip.conf ([install] constraint); `invoke install` rewrites it.\n")
_SECTION = re.compile(r"\s*\[(?P<name>[^\]]*)\]")

# Run at the start of every interpreter of the venv (site.py executes a .pth line that begins
# with `import`); it acts only in a pip process and only when an environment variable would
# replace the venv's pip.conf. {ours} and {unpinned} are filled in by `protect_venv`.
HOOK_TEXT = '''"""Written by rocmforge (sources/constraints.py): keeps this venv's pin of the kit's
wheels when PIP_CONSTRAINT or PIP_CONFIG_FILE would replace it. Remove {pth} to drop it."""
import os
import sys

OURS = {ours!r}
VALUE = {value!r}  # OURS as pip reads it in a setting: a file: URL where the path has a space
UNPINNED = {unpinned!r}


def _is_pip():
    argv = list(getattr(sys, "orig_argv", sys.argv))
    if "-m" in argv and argv[argv.index("-m") + 1:argv.index("-m") + 2] == ["pip"]:
        return True
    return os.path.basename(sys.argv[0] if sys.argv else "").startswith("pip")


def hold():
    if not _is_pip() or os.environ.get("PIP_CONFIG_FILE") == UNPINNED \\
            or not os.path.isfile(OURS):
        return
    value = os.environ.get("PIP_CONSTRAINT", "").split()
    conf = os.environ.get("PIP_CONFIG_FILE", "")
    if not value and conf != os.devnull:  # /dev/null: pip reads no file, the venv's included
        if not conf or not os.path.isfile(conf):
            return
        import configparser
        parser = configparser.RawConfigParser()
        try:
            parser.read(conf, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            return
        # The file's [install] value replaces the venv's; its [global] one would be replaced by
        # the venv's [install] (the kit's): both are kept, with the kit's file after them.
        value = parser.get("install", "constraint", fallback="").split() or \
            parser.get("global", "constraint", fallback="").split()
        if not value:
            return
    if VALUE not in value:
        os.environ["PIP_CONSTRAINT"] = " ".join([*value, VALUE])


hold()
'''


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


def protect_venv(prefix: Path, wheel_names: Iterable[str],
                 environ: Mapping[str, str] | None = None) -> Path:
    """Pin the venv at `prefix` to `wheel_names` (the module's docstring says how). Returns the
    constraint file. A venv path with white space is named by its file: URL (`pin_value`). A
    pip.conf pip cannot parse (the venv's, the user's or a global one): UsageError, nothing
    written."""
    from rocmforge.fsutil import write_atomic

    environ = os.environ if environ is None else environ
    constraints = prefix / CONSTRAINTS_NAME
    value = pin_value(prefix)
    conf = prefix / PIP_CONF
    check_pip_configuration(prefix, environ)  # before anything is written
    text = without_pin(conf.read_text(encoding="utf-8") if conf.is_file() else "", value)
    site_conf = configparser.RawConfigParser()
    site_conf.read_string(text, source=str(conf))
    theirs = own_constraints(site_conf, environ)
    write_atomic(constraints, HEADER + "".join(f"{line}\n"
                                               for line in constraint_lines(wheel_names)))
    write_atomic(prefix / UNPINNED_NAME, UNPINNED_TEXT)
    write_atomic(conf, _with_pin(text, [*theirs, value]))
    site = site_packages(prefix)
    if site is not None:
        write_atomic(site / f"{HOOK_MODULE}.py", HOOK_TEXT.format(
            ours=str(constraints), value=value, unpinned=str(prefix / UNPINNED_NAME),
            pth=HOOK_PTH))
        write_atomic(site / HOOK_PTH, f"import {HOOK_MODULE}\n")
    return constraints


def release_venv(prefix: Path) -> bool:
    """Lift the kit's pin while the kit itself changes the venv (the build's requirements, a new
    Triton, the pip SDK, the install of new wheels): the `constraint` line the kit replaced is
    put back as it was, the hook leaves site-packages. Returns whether a pin was there."""
    from rocmforge.fsutil import write_atomic

    site = site_packages(prefix)
    had_hook = site is not None and (site / HOOK_PTH).is_file()
    if site is not None:
        for name in (HOOK_PTH, f"{HOOK_MODULE}.py"):
            (site / name).unlink(missing_ok=True)
    conf = prefix / PIP_CONF
    if not conf.is_file():
        return had_hook
    text = conf.read_text(encoding="utf-8")
    kept = without_pin(text, pin_value(prefix))
    if kept != text:
        write_atomic(conf, kept)
    return had_hook or kept != text


def unpinned_env(prefix: Path) -> dict[str, str]:
    """The variable that lifts the venv's pin for one command: pip loads the file
    PIP_CONFIG_FILE names last, its empty `constraint` values replace the venv's, and the hook
    leaves this command alone. The kit's `pip wheel` of a companion or extension carries it
    (`pip wheel` reads [wheel], not [install], so the pin does not refuse it anyway; an older
    kit's [global] pin would). It also disables the user's per-user pip.conf for that command,
    which `pip wheel --no-deps` of a local tree does not need."""
    return {"PIP_CONFIG_FILE": str(prefix / UNPINNED_NAME)}


def pin_effects(prefix: Path) -> tuple[tuple[str, ...], str]:
    """What pinning the venv at `prefix` writes (for the plan's effects) and one sentence that
    says what the pin is."""
    writes = (str(prefix / PIP_CONF), str(prefix / CONSTRAINTS_NAME),
              str(prefix / UNPINNED_NAME),
              str(prefix / "lib" / "python*" / "site-packages" / HOOK_PTH),
              str(prefix / "lib" / "python*" / "site-packages" / f"{HOOK_MODULE}.py"))
    note = (f"pins {prefix}: {prefix / PIP_CONF} [install] constraint names your own "
            f"constraint files, then {prefix / CONSTRAINTS_NAME} (name==version of each wheel "
            f"installed); {HOOK_PTH} keeps it under PIP_CONSTRAINT and PIP_CONFIG_FILE")
    return writes, note


def record_pinned(state_dir: Path, prefix: Path) -> None:
    """Add `prefix` to the list of venvs the kit pinned (doctor reads it)."""
    from rocmforge.fsutil import write_atomic

    listed = pinned_venvs(state_dir)
    if prefix not in listed:
        state_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(state_dir / PINNED_LIST,
                     "".join(f"{p}\n" for p in [*listed, prefix]))


def _with_pin(text: str, values: Sequence[str]) -> str:
    """`text` (a pip.conf without the kit's pin) with `constraint = values` in its [install]
    section, the option it replaces kept above it as `# rocmforge was:` lines."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    start = next((i for i, line in enumerate(lines) if (m := _SECTION.match(line))
                  and m["name"].strip() == "install"), None)
    if start is None:
        return "".join(lines) + "[install]\n" + MARK + "\n" + f"constraint = {' '.join(values)}\n"
    end = next((i for i in range(start + 1, len(lines)) if _SECTION.match(lines[i])), len(lines))
    first = next((i for i in range(start + 1, end) if OPTION.match(lines[i])), None)
    block = [MARK + "\n"]
    if first is None:
        at, stop = start + 1, start + 1
    else:
        at, stop = first, option_end(lines, first, end)
        block += [WAS + line for line in lines[first:stop]]
    block.append(f"constraint = {' '.join(values)}\n")
    return "".join(lines[:at] + block + lines[stop:])


