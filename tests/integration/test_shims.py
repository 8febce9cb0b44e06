"""pyenv shims on PATH are replaced by the program pyenv would run (real pyenv, real shims).

A compiler launcher found through a pyenv shim would start pyenv's version selection on every
compile of a build; the probe asks pyenv once, and keeps the answer with what it rests on. The
versions, programs and shims live in a temporary PYENV_ROOT; the shims are written by the real
`pyenv rehash`. Which runs asked pyenv is seen by a runner that logs what it starts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rocmforge.probes import RunResult, run_command
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
    # pyenv's own variables from the shim that started this Python (PYENV_VERSION, PYENV_DIR,
    # PYENV_HOOK_PATH, ...) are left out: the tests choose the version themselves.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYENV_", "_PYENV_"))}
    env["PYENV_ROOT"] = str(root)
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


class LoggingRunner:
    """The real runner, logging the programs it starts."""

    def __init__(self) -> None:
        self.started: list[str] = []

    def __call__(self, argv: list[str], **kwargs: object) -> RunResult:
        self.started.append(" ".join(argv[1:]))
        return run_command(argv, **kwargs)  # type: ignore[arg-type]


@pytest.mark.needs_tool("pyenv")
def test_pyenv_is_asked_again_only_when_what_decides_its_answer_changes(
        tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, env = _pyenv_root(tmp_path)
    shim = str(root / "shims" / "sccache")
    work = tmp_path / "project" / "sub"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    (root / "version").write_text("1.0\n")
    runner = LoggingRunner()

    def resolve(**extra: str) -> str:
        return resolve_shim(shim, {**env, **extra}, runner, keep=True)

    one = str(root / "versions" / "1.0" / "bin" / "sccache")
    two = str(root / "versions" / "2.0" / "bin" / "sccache")
    assert (resolve(), resolve(), len(runner.started)) == (one, one, 1)
    assert runner.started == ["which sccache"]
    # A local version file appears two folders up: pyenv is asked, and answers 2.0.
    (tmp_path / "project" / ".python-version").write_text("2.0\n")
    assert (resolve(), resolve(), len(runner.started)) == (two, two, 2)
    # The global version file is not read while a local one decides; rewriting the local one
    # (same size, back to 1.0) is a change all the same.
    (tmp_path / "project" / ".python-version").write_text("1.0\n")
    assert (resolve(), len(runner.started)) == (one, 3)
    # Another environment is another question; so is a hook added for `which`.
    assert (resolve(PYENV_VERSION="2.0"), len(runner.started)) == (two, 4)
    assert (resolve(), len(runner.started)) == (one, 4)
    hooks = root / "pyenv.d" / "which"
    hooks.mkdir(parents=True)
    (hooks / "noop.bash").write_text("true\n")
    assert (resolve(), resolve(), len(runner.started)) == (one, one, 5)
    # The program itself replaced, or the probe store off: asked again.
    program = Path(one)
    text = program.read_text()
    program.unlink()
    program.write_text(text)
    program.chmod(0o755)
    assert (resolve(), len(runner.started)) == (one, 6)
    assert (resolve_shim(shim, env, runner), len(runner.started)) == (one, 7)


@pytest.mark.needs_tool("pyenv")
def test_a_system_answer_is_not_kept(tmp_path: Path, cache_dir: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """With the "system" version, PATH decides the program; PATH's folders are not stamped,
    so that answer is asked for every time."""
    root, env = _pyenv_root(tmp_path)
    shim = str(root / "shims" / "sccache")
    elsewhere = tmp_path / "bin"
    elsewhere.mkdir()
    (elsewhere / "sccache").write_text("#!/bin/sh\necho system sccache\n")
    (elsewhere / "sccache").chmod(0o755)
    monkeypatch.chdir(tmp_path)
    system = {**env, "PYENV_VERSION": "system",
              "PATH": f"{root / 'shims'}:{elsewhere}:{os.environ['PATH']}"}
    runner = LoggingRunner()
    answers = {resolve_shim(shim, system, runner, keep=True) for _ in range(2)}
    assert (answers, len(runner.started)) == ({str(elsewhere / "sccache")}, 2)
