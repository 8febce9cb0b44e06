"""pyenv shims on PATH are replaced by the program pyenv would run (real pyenv, real shims).

A compiler launcher found through a pyenv shim would start pyenv's version selection on every
compile of a build; the probe asks pyenv once. The versions, programs and shims live in a
temporary PYENV_ROOT; the shims are written by the real `pyenv rehash`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rocmforge.probes.shims import pyenv_of_shim, resolve_shim
from rocmforge.probes.system import compiler_caches


def _pyenv_root(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A PYENV_ROOT with versions 1.0 and 2.0, each with its own `sccache` program, and the
    shims the real pyenv writes for them."""
    root = tmp_path / "pyenv"
    for version in ("1.0", "2.0"):
        folder = root / "versions" / version / "bin"
        folder.mkdir(parents=True)
        program = folder / "sccache"
        program.write_text(f"#!/bin/sh\necho sccache from {version}\n")
        program.chmod(0o755)
    env = {**os.environ, "PYENV_ROOT": str(root)}
    subprocess.run([shutil.which("pyenv") or "pyenv", "rehash"], env=env, check=True,
                   cwd=tmp_path)  # fmt: skip
    return root, env


@pytest.mark.needs_tool("pyenv")
def test_a_pyenv_shim_resolves_to_the_program_of_the_selected_version(tmp_path: Path) -> None:
    root, env = _pyenv_root(tmp_path)
    shim = root / "shims" / "sccache"
    assert pyenv_of_shim(shim) == Path(os.path.realpath(shutil.which("pyenv") or ""))
    for version in ("1.0", "2.0"):
        chosen = {**env, "PYENV_VERSION": version}
        found = resolve_shim(str(shim), chosen)
        assert found == str(root / "versions" / version / "bin" / "sccache")
        # The shim itself runs the same program.
        ran = subprocess.run([str(shim)], env=chosen, capture_output=True, text=True,
                             check=True, cwd=tmp_path)  # fmt: skip
        assert ran.stdout == f"sccache from {version}\n"
        assert subprocess.run([found], capture_output=True, text=True).stdout == ran.stdout


@pytest.mark.needs_tool("pyenv")
def test_the_build_launcher_is_the_program_not_the_shim(tmp_path: Path) -> None:
    root, env = _pyenv_root(tmp_path)
    env["PYENV_VERSION"] = "2.0"
    found = compiler_caches(str(root / "shims"), env)
    assert found == {"sccache": str(root / "versions" / "2.0" / "bin" / "sccache")}


@pytest.mark.needs_tool("pyenv")
def test_a_shim_pyenv_cannot_resolve_stays_as_it_is(tmp_path: Path) -> None:
    root, env = _pyenv_root(tmp_path)
    shim = str(root / "shims" / "sccache")
    # No version 3.0 and no other sccache on PATH: pyenv names no program, the shim stays.
    alone = {**env, "PYENV_VERSION": "3.0", "PATH": f"{root / 'shims'}:/usr/bin:/bin"}
    assert subprocess.run([shim], env=alone, capture_output=True).returncode != 0
    assert resolve_shim(shim, alone) == shim


def test_a_program_that_is_not_a_shim_is_kept(tmp_path: Path) -> None:
    folder = tmp_path / "shims"
    folder.mkdir()
    script = folder / "sccache"
    script.write_text('#!/bin/sh\nexec "/usr/bin/true" "$@"\n')  # in a `shims` folder, no pyenv
    assert pyenv_of_shim(script) is None
    assert resolve_shim(str(script)) == str(script)
    assert resolve_shim("/usr/bin/true") == "/usr/bin/true"
