"""`invoke install`'s checks as a library call (steps.venv.install_argv): exact pip argv for a
finished build, and exit-2 refusals for a missing interpreter, a missing manifest and a PEP 668
system Python (Debian's /usr/bin/python3 here carries EXTERNALLY-MANAGED)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import missing_real_part, put_wheels

from rocmforge.errors import UsageError
from rocmforge.knowledge.manifest import build_manifest, write_manifest
from rocmforge.steps.venv import install_argv, install_command, pip_install_argv
from rocmforge.workdir import workdir_for


def _finished_build(root: Path, *, triton: str = "triton-3.4.0-cp311-linux_x86_64.whl") -> Path:
    work = workdir_for(root)
    doc = build_manifest(
        targets=["gfx1100"], wheels={"torch": "torch-2.9.1-cp311-linux_x86_64.whl",
                                     "triton": triton},
        lock=None, toolchain={}, env={}, steps=[], plan_settings={}, created="t")
    put_wheels(work.dist, doc, [n for n in doc["wheels"].values() if n])
    write_manifest(work.dist / "manifest.json", doc)
    return root


def test_pip_install_argv_is_exact() -> None:
    assert pip_install_argv("/v/bin/python", ["/d/a.whl", "/d/b c.whl"]) == [
        "/v/bin/python", "-m", "pip", "install", "--no-deps", "--force-reinstall", "/d/a.whl",
        "/d/b c.whl"]


def test_venv_of_a_finished_build_gets_triton_then_torch(tmp_path: Path) -> None:
    root = _finished_build(tmp_path / "w")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")],
                   check=True)
    python = str(root / "venv" / "bin" / "python")
    assert install_argv(workdir_for(root)) == pip_install_argv(python, [
        str(root / "dist" / "triton-3.4.0-cp311-linux_x86_64.whl"),
        str(root / "dist" / "torch-2.9.1-cp311-linux_x86_64.whl")])
    # The same command as a record: what `invoke install` prints and names when pip fails.
    command = install_command(workdir_for(root))
    assert (command.python, command.wheels) == (python, (
        str(root / "dist" / "triton-3.4.0-cp311-linux_x86_64.whl"),
        str(root / "dist" / "torch-2.9.1-cp311-linux_x86_64.whl")))
    assert list(command.argv) == install_argv(workdir_for(root))


def test_a_build_without_triton_installs_torch_alone(tmp_path: Path) -> None:
    root = _finished_build(tmp_path / "w", triton="")
    argv = install_argv(workdir_for(root), sys.executable)
    assert argv == pip_install_argv(sys.executable,
                                    [str(root / "dist" / "torch-2.9.1-cp311-linux_x86_64.whl")])


def test_companion_wheels_are_installed_after_torch(tmp_path: Path) -> None:
    root = tmp_path / "w"
    work = workdir_for(root)
    doc = build_manifest(
        targets=["gfx1100"], wheels={"torch": "torch-2.9.1-cp311-linux_x86_64.whl", "triton": ""},
        lock=None, toolchain={}, env={}, steps=[], plan_settings={}, created="t")
    doc["companions"] = {
        name: {"version": version, "ref": f"v{version}", "commit": "a" * 40, "repo": "r",
               "wheel": f"{name}-{version}-cp311-linux_x86_64.whl", "sha256": "", "torch": "2.9.1",
               "patches": []}
        for name, version in (("torchvision", "0.24.1"), ("torchaudio", "2.9.1"))}
    put_wheels(work.dist, doc, ["torch-2.9.1-cp311-linux_x86_64.whl",
                                *(c["wheel"] for c in doc["companions"].values())])
    write_manifest(work.dist / "manifest.json", doc)
    argv = install_argv(work, sys.executable)
    assert argv == pip_install_argv(sys.executable, [
        str(root / "dist" / "torch-2.9.1-cp311-linux_x86_64.whl"),
        str(root / "dist" / "torchvision-0.24.1-cp311-linux_x86_64.whl"),
        str(root / "dist" / "torchaudio-2.9.1-cp311-linux_x86_64.whl")])


@pytest.mark.parametrize("manifest_text", [None, "{}", "not json", '{"schema": "other"}'])
def test_no_manifest_of_the_kit_is_refused(tmp_path: Path, manifest_text: str | None) -> None:
    work = workdir_for(tmp_path / "w")
    if manifest_text is not None:
        work.dist.mkdir(parents=True)
        (work.dist / "manifest.json").write_text(manifest_text)
    with pytest.raises(UsageError) as info:
        install_argv(work, sys.executable)
    assert info.value.what == f"{work.dist / 'manifest.json'} is missing or not a rocmforge " \
        "manifest"
    assert info.value.fix == "run `invoke build` first"


def test_missing_interpreters_are_refused_by_name(tmp_path: Path) -> None:
    work = workdir_for(_finished_build(tmp_path / "w"))
    with pytest.raises(UsageError) as given:
        install_argv(work, str(tmp_path / "nope" / "python"))
    assert given.value.what == (f"The interpreter {str(tmp_path / 'nope' / 'python')!r} given "
                                "with --python does not exist")
    with pytest.raises(UsageError) as default:
        install_argv(work)
    assert default.value.what == (f"The build venv's interpreter {work.venv}/bin/python does "
                                  "not exist")
    assert default.value.exit_code == 2


def test_a_pep_668_system_python_is_refused(tmp_path: Path) -> None:
    if not (Path("/usr/lib/python3.11/EXTERNALLY-MANAGED").is_file()
            and Path("/usr/bin/python3.11").is_file()):
        missing_real_part("needs Debian's PEP 668 python3.11")
    work = workdir_for(_finished_build(tmp_path / "w"))
    with pytest.raises(UsageError) as info:
        install_argv(work, "/usr/bin/python3.11")
    assert info.value.what == ("/usr/bin/python3.11 is a system Python managed by the OS "
                               "package manager (/usr/lib/python3.11/EXTERNALLY-MANAGED exists)")


def test_invoke_installs_into_a_venv_then_pins_it(tmp_path: Path) -> None:
    """install_pinned_venv (what `invoke install` runs): real pip installs a real wheel into a
    real venv, then the venv's pip.conf names the constraint file pinning it; a system
    interpreter (not a venv) would get no pin."""
    from buildhelpers import make_wheel

    from rocmforge.steps.venv import WheelInstall, install_pinned_venv

    wheel = make_wheel(tmp_path / "dist", "torch", "2.9.1", {"torch/__init__.py": ""})
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    ok, said = install_pinned_venv(WheelInstall(python=python, wheels=(str(wheel),)))
    assert ok and said == [f"pinned {venv} to these wheels ({venv / 'rocmforge-constraints.txt'})"]
    assert "torch==2.9.1" in (venv / "rocmforge-constraints.txt").read_text()
    assert str(venv / "rocmforge-constraints.txt") in (venv / "pip.conf").read_text()
    # Again (a new build's wheel): the old pin is lifted first, so pip is not refused.
    newer = make_wheel(tmp_path / "dist2", "torch", "2.9.2", {"torch/__init__.py": ""})
    ok, _ = install_pinned_venv(WheelInstall(python=python, wheels=(str(newer),)))
    assert ok and "torch==2.9.2" in (venv / "rocmforge-constraints.txt").read_text()
