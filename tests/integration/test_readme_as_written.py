"""The README as a new user runs it (issue 41 item 8): `invoke fetch` after a `--repo` build
finds that build's checkout, and nox says nothing about a uv this machine does not have."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_build_e2e import REPO_ROOT, build_env, make_fixture_repo


def _invoke(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = build_env()
    for name in ("ROCMFORGE_PYTORCH_REPO", "ROCMFORGE_PYTORCH_REF"):
        full.pop(name, None)
    full.update(env)
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=REPO_ROOT, env=full,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_fetch_reads_the_checkout_a_repo_build_left(tmp_path: Path) -> None:
    repo = make_fixture_repo(tmp_path / "pytorch")
    work = tmp_path / "work"
    checkout = _invoke("checkout", "--repo", str(repo), "--ref", "v2.8.0", "-w", str(work))
    assert checkout.returncode == 0, checkout.stderr
    # No --repo on fetch (it has none): the checkout that is there is the one the build uses.
    dry = _invoke("--dry", "fetch", "--arch", "gfx1100", "--rocm", "6.2", "-w", str(work))
    assert dry.returncode == 0, dry.stderr
    assert "dry run: would fetch AOTriton for ROCm 6.2" in dry.stderr
    # A ref the settings name explicitly and the checkout is not: one paragraph, exit 2.
    other = _invoke("--dry", "fetch", "--arch", "gfx1100", "--rocm", "6.2", "-w", str(work),
                    ROCMFORGE_PYTORCH_REF="v2.9.0")
    assert other.returncode == 2, other.stderr
    assert f"The checkout in {work / 'src'} is of {repo} at v2.8.0, not of" in other.stderr
    assert "Traceback" not in other.stderr
    # Nothing checked out: as before.
    empty = _invoke("--dry", "fetch", "--arch", "gfx1100", "--rocm", "6.2",
                    "-w", str(tmp_path / "empty"))
    assert empty.returncode == 2 and "Fix: run `invoke checkout` first" in empty.stderr


NOXFILE = f'''import sys
sys.path.insert(0, {str(REPO_ROOT)!r})
import nox
from rocmforge.sessions import definitions  # noqa: F401  (the kit's sessions, as rocm_nox)


@nox.session(venv_backend="virtualenv", reuse_venv=True)
def hello(session):
    session.run("python", "-c", "print('in the venv')")
'''


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("uv") is not None, reason="uv is installed here")
def test_nox_says_nothing_about_a_missing_uv(tmp_path: Path) -> None:
    (tmp_path / "noxfile.py").write_text(NOXFILE)
    env = {k: v for k, v in os.environ.items() if k != "UV"}
    done = subprocess.run([sys.executable, "-m", "nox", "-s", "hello"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "in the venv" in done.stdout + done.stderr
    assert "uv binary not found" not in done.stdout + done.stderr


def test_verify_on_a_stand_in_torch_is_one_paragraph(tmp_path: Path) -> None:
    """`nox -s verify` on the fixture build's wheel (a torch package without torch.cuda):
    one paragraph and exit 2, not an AttributeError traceback first."""
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text('__version__ = "2.8.0a0"\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO_ROOT)])}
    done = subprocess.run([sys.executable, "-m", "rocmforge.verify", "--only", "build"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert (f"the torch that imports here ({tmp_path / 'torch' / '__init__.py'}) is not a "
            "PyTorch: it has no torch.cuda, torch.version. Nothing was checked") in done.stderr
