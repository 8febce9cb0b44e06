"""The pip pin of a venv (rocmforge.sources.constraints, issue 33 item 3) with real pip: a
user's own pip.conf settings and constraint stay, the kit's pin comes and goes, the kit's own
wheel builds are not refused by it, and a path pip cannot read is not written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rocmforge.sources.constraints import (
    CONSTRAINTS_NAME,
    constraint_lines,
    protect_venv,
    release_venv,
    unpinned_env,
)


def test_lines_from_wheel_names() -> None:
    assert constraint_lines([
        "torch-2.8.0a0+rocm7.14.1-cp311-cp311-linux_x86_64.whl",
        "pytorch_triton_rocm-3.4.0+gitf7888497-cp311-cp311-linux_x86_64.whl",
        "flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl", "manifest.json"]) == [
        "torch==2.8.0a0+rocm7.14.1", "pytorch-triton-rocm==3.4.0+gitf7888497",
        "flash-attn==2.8.3"]


def test_a_users_pip_conf_is_kept_and_the_pin_comes_and_goes(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / "pip.conf").write_text("[global]\nindex-url = https://mirror/simple\n"
                                   "constraint = /etc/site-constraints.txt\n")
    written = protect_venv(venv, ["torch-2.9.1-cp311-cp311-linux_x86_64.whl"])
    assert written == venv / CONSTRAINTS_NAME
    conf = (venv / "pip.conf").read_text()
    assert "index-url = https://mirror/simple" in conf
    assert f"constraint = /etc/site-constraints.txt {written}" in conf
    assert release_venv(venv)
    conf = (venv / "pip.conf").read_text()
    assert "constraint = /etc/site-constraints.txt\n" in conf and str(written) not in conf
    assert not release_venv(venv)  # nothing of the kit's left to lift


def test_a_path_with_a_space_is_named_by_its_file_url(tmp_path: Path) -> None:
    """pip splits a `constraint` value on white space: the file is named by its file: URL
    (real pip reads it: test_pin_holds.py)."""
    venv = tmp_path / "my venv"
    venv.mkdir()
    written = protect_venv(venv, ["torch-2.9.1-cp311-cp311-linux_x86_64.whl"])
    assert written == venv / CONSTRAINTS_NAME
    url = f"file://{tmp_path}/my%20venv/{CONSTRAINTS_NAME}"
    line = next(x for x in (venv / "pip.conf").read_text().splitlines()
                if x.startswith("constraint = "))
    assert line.split()[-1] == url  # after the machine's own constraint files, if any
    assert release_venv(venv) and url not in (venv / "pip.conf").read_text()


def test_the_kits_wheel_build_is_not_refused_by_the_old_pin(tmp_path: Path) -> None:
    """Real pip: the pin is pip.conf's [install] constraint (issue 39 item 4), which `pip wheel`
    (its own section, [wheel]) does not read: the kit's `pip wheel` of myext 2.0 in a venv
    pinned to myext 1.0 builds, with or without unpinned_env; `pip install` of it is refused
    by the pin, and unpinned_env lifts it for one command."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True)
    project = tmp_path / "myext"
    project.mkdir()
    (project / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='myext', version='2.0', py_modules=[])\n")
    protect_venv(venv, ["myext-1.0-py3-none-any.whl"])
    argv = [str(venv / "bin" / "python"), "-m", "pip", "wheel", "--no-deps",
            "--no-build-isolation", "-w", str(tmp_path / "out"), "."]
    for env in ({"PATH": "/usr/bin:/bin"}, {"PATH": "/usr/bin:/bin", **unpinned_env(venv)}):
        built = subprocess.run(argv, cwd=project, capture_output=True, text=True, env=env)
        assert built.returncode == 0, built.stdout + built.stderr
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["myext-2.0-py3-none-any.whl"]
    install = [str(venv / "bin" / "python"), "-m", "pip", "install", "--dry-run", "--no-deps",
               "--no-index", str(tmp_path / "out" / "myext-2.0-py3-none-any.whl")]
    refused = subprocess.run(install, capture_output=True, text=True,
                             env={"PATH": "/usr/bin:/bin"})
    assert refused.returncode != 0 and "myext" in refused.stdout + refused.stderr
    lifted = subprocess.run(install, capture_output=True, text=True,
                            env={"PATH": "/usr/bin:/bin", **unpinned_env(venv)})
    assert lifted.returncode == 0, lifted.stdout + lifted.stderr
