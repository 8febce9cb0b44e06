"""Version-manager shims on PATH: the program a pyenv shim stands for.

Owns: recognising a pyenv shim (a script in a `shims` folder that hands its name to
`<pyenv> exec`) and asking that pyenv, with the caller's environment, which program it would
run (`pyenv which NAME`). A compiler launcher is started once per compile; through a shim every
start first runs pyenv's version selection (about 0.2 s here, against 4 ms for sccache itself),
so the build gets the program the shim would have run, found once per probe.
pyenv's answer is kept in the probe store (`kept_which`) with every path it rests on: the
version files it would read from the current folder up, its version file and versions folder,
its hook folders and hook scripts for `which` and `version-name` (pyenv's own, the system's,
each plugin's), its own scripts, the shim and the program named. Any of them changed (or
another folder, environment or shim) asks pyenv again.
Must not: choose a version itself (pyenv decides, from the same environment), or fail: a shim
it cannot resolve is returned unchanged.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from rocmforge.probes import Runner, run_command

if TYPE_CHECKING:
    from rocmforge.probes import probe_store

# The last line of a pyenv shim: exec "/root/.pyenv/libexec/pyenv" exec "$program" "$@"
_PYENV_EXEC = re.compile(r'^exec "([^"]+)" exec "\$program" "\$@"$', re.MULTILINE)


def pyenv_of_shim(path: Path) -> Path | None:
    """The pyenv program a shim execs, or None when `path` is not a pyenv shim."""
    if path.parent.name != "shims":
        return None
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return None
    found = _PYENV_EXEC.search(head.decode("utf-8", "replace"))
    return Path(found.group(1)) if found else None


def resolve_shim(
    path: str, environ: Mapping[str, str] = os.environ, run: Runner = run_command, *,
    keep: bool = False,
) -> str:
    """The program behind `path` when it is a pyenv shim (`pyenv which` with `environ`, in
    the current folder, as the shim would decide), else `path` itself. `keep`: pyenv's answer
    may come from, and goes to, the probe store while nothing it rests on changed."""
    pyenv = pyenv_of_shim(Path(path))
    if pyenv is None:
        return path
    key = ""
    if keep:
        key = which_key(path, environ)
        kept = kept_which(key)
        if kept:
            return kept
    result = run([str(pyenv), "which", Path(path).name], env=dict(environ), timeout=20.0)
    lines = result.stdout.strip().splitlines() if result.returncode == 0 else []
    target = lines[-1].strip() if lines else ""
    if not (target and os.path.isabs(target) and os.access(target, os.X_OK)):
        return path
    stamps = which_rests_on(pyenv, path, target, environ) if key else None
    if stamps is not None:
        from rocmforge.probes import probe_store

        probe_store.store(key, {"program": target, "rests_on": [s.as_json() for s in stamps]})
    return target


def which_key(shim: str, environ: Mapping[str, str]) -> str:
    """The probe-store key of `pyenv which` for `shim`: the shim, the current folder and the
    environment pyenv sees (without shell noise)."""
    from rocmforge.probes import probe_store

    return probe_store.probe_key(
        "pyenv-which/1", files=[shim], texts=[shim, os.getcwd()],
        env=probe_store.compiler_environment(environ))


def kept_which(key: str) -> str:
    """The program kept under `key` when every path it rests on is as it was, else ""."""
    from rocmforge.probes import probe_store

    kept = probe_store.lookup(key)
    if kept is None:
        return ""
    program, raw = kept.value.get("program"), kept.value.get("rests_on")
    if not isinstance(program, str) or not isinstance(raw, list):
        return ""
    stamps = [probe_store.PathStamp.of_json(item) for item in raw]
    if not stamps or any(s is None for s in stamps):
        return ""
    if probe_store.changed(s for s in stamps if s is not None):
        return ""
    return program


# The hook kinds `pyenv which` runs (its own, and version-name's through version selection).
_HOOK_KINDS = ("which", "version-name")
_SYSTEM_HOOK_DIRS = ("/usr/etc/pyenv.d", "/usr/local/etc/pyenv.d", "/etc/pyenv.d",
                     "/usr/lib/pyenv/hooks")


def which_rests_on(pyenv: Path, shim: str, program: str,
                   environ: Mapping[str, str]) -> tuple[probe_store.PathStamp, ...] | None:
    """Every path pyenv's answer for `shim` depends on, as it is now (see the module
    docstring); absent ones too, so one that appears shows. None when the program is not one
    of pyenv's versions (the "system" version: PATH decides, and PATH's folders are not
    stamped), so that answer is not kept."""
    from rocmforge.probes.probe_store import PathStamp, stamp_of

    real = Path(os.path.realpath(pyenv))
    install = real.parent.parent  # <prefix>/libexec/pyenv
    home = Path(environ.get("HOME") or Path.home())
    roots = list(dict.fromkeys(Path(r) for r in (environ.get("PYENV_ROOT"), home / ".pyenv",
                                                 install) if r))
    if not any(Path(program).is_relative_to(root / "versions") for root in roots):
        return None
    paths: list[Path] = [Path(shim), real, Path(program), real.parent]
    for root in roots:
        paths += [root / "version", root / "versions", root / "plugins"]
    paths += sorted(real.parent.iterdir()) if real.parent.is_dir() else []
    starts = [Path(environ.get("PYENV_DIR") or os.getcwd()), Path(os.getcwd())]
    for start in dict.fromkeys(starts):
        paths += [folder / ".python-version" for folder in (start, *start.parents)]
    hook_dirs = [Path(p) for p in environ.get("PYENV_HOOK_PATH", "").split(":") if p]
    hook_dirs += [*(root / "pyenv.d" for root in roots), install / "pyenv.d",
                  *map(Path, _SYSTEM_HOOK_DIRS)]
    for root in roots:
        hook_dirs += sorted((root / "plugins").glob("*/etc/pyenv.d"))
    for folder in dict.fromkeys(hook_dirs):
        for kind in _HOOK_KINDS:
            paths.append(folder / kind)
            paths += sorted((folder / kind).glob("*.bash"))
    unique = dict.fromkeys(os.fspath(p) for p in paths)
    return tuple(PathStamp(path=p, stamp=stamp_of(p)) for p in unique)
