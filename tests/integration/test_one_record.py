"""One record (issue 39 item 5): `invoke install`, `nox -s verify` and the build's up-to-date
check read the same manifest record, and dist/ never holds a wheel the manifest does not list
without every reader refusing it. The companions-collect step is killed (a real SIGKILL, in a
child process) at every instant it marks with a log line, and dist/ is read the way each reader
reads it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import put_wheels

from rocmforge.errors import UsageError
from rocmforge.knowledge.manifest import (
    build_manifest,
    listed_wheels,
    read_manifest,
    wheel_problems,
    write_manifest,
)
from rocmforge.steps.venv import install_argv
from rocmforge.workdir import workdir_for

TORCH = "torch-2.9.1-cp311-cp311-linux_x86_64.whl"
TRITON = "pytorch_triton_rocm-3.4.0-cp311-cp311-linux_x86_64.whl"
VISION = "torchvision-0.24.1-cp311-cp311-linux_x86_64.whl"
AUDIO = "torchaudio-2.9.1-cp311-cp311-linux_x86_64.whl"
OLD_AUDIO = "torchaudio-2.9.0-cp311-cp311-linux_x86_64.whl"

# The child: the real companions-collect action, its log killing the process (SIGKILL, no
# cleanup, no finally) at the Nth line it writes; each line marks an instant between two of
# the step's file operations.
_CHILD = """
import os, signal, sys
from pathlib import Path
from rocmforge.execute.actions import ActionContext
from rocmforge.execute.model import Step
from rocmforge.execute.step_inputs import AddonsCollect
from rocmforge.steps.companions import collect
from rocmforge.workdir import workdir_for

class Log:
    lines = 0
    def write(self, text):
        Log.lines += 1
        if Log.lines == int(sys.argv[2]):
            os.kill(os.getpid(), signal.SIGKILL)
        return len(text)
    def flush(self):
        pass

root = Path(sys.argv[1])
step = Step(name="companions-collect", argv=("companions-collect",), why="", kind="python",
            given=AddonsCollect(companions=("torchvision", "torchaudio"),
                                dist=str(root / "dist"),
                                packages=("torchvision", "torchaudio")))
ctx = ActionContext(step=step, workdir=workdir_for(root), results=(), log=Log(),
                    run_argv=None)
# The step reads only the plan's settings of the build (what this build asked for).
from types import SimpleNamespace
asked = {"companions": ["torchvision", "torchaudio"]}
build = SimpleNamespace(plan=SimpleNamespace(settings=asked))
collect(build, ctx)
"""


def _earlier_build(root: Path) -> None:
    """dist/ of a finished torch build plus an earlier build's torchaudio (another version),
    and the two companion trees whose builds left their wheels."""
    work = workdir_for(root)
    doc = build_manifest(targets=["gfx1100"], wheels={"torch": TORCH, "triton": TRITON},
                         lock=None, toolchain={}, env={}, steps=[], plan_settings={},
                         created="t")
    put_wheels(work.dist, doc, [TORCH, TRITON, OLD_AUDIO])
    doc["wheels"]["torchaudio"] = OLD_AUDIO
    doc["companions"] = {"torchaudio": {"version": "2.9.0", "ref": "v2.9.0", "commit": "a" * 40,
                                        "repo": "r", "wheel": OLD_AUDIO,
                                        "sha256": doc["files"][OLD_AUDIO]["sha256"]}}
    write_manifest(work.dist / "manifest.json", doc)
    for name, wheel in (("torchvision", VISION), ("torchaudio", AUDIO)):
        (work.src / name / "dist").mkdir(parents=True)
        (work.src / name / "dist" / wheel).write_bytes(f"new {wheel}".encode())
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")],
                   check=True, timeout=120)


def _kill_at(root: Path, line: int) -> int:
    return subprocess.run([sys.executable, "-c", _CHILD, str(root), str(line)],
                          capture_output=True, text=True, timeout=120).returncode


def _in_dist(root: Path) -> set[str]:
    return {p.name for p in (root / "dist").glob("*.whl")}


def test_a_sigkill_at_every_instant_of_companions_collect_leaves_no_unlisted_wheel(
        tmp_path: Path) -> None:
    line, killed = 0, 0
    while True:
        line += 1
        root = tmp_path / f"w{line}"
        _earlier_build(root)
        code = _kill_at(root, line)
        manifest = read_manifest(root / "dist" / "manifest.json")
        problems = wheel_problems(manifest, deep=True)
        if code == -signal.SIGKILL:
            killed += 1
            if problems:  # every reader refuses: install, verify, the up-to-date check
                with pytest.raises(UsageError) as refused:
                    install_argv(workdir_for(root))
                assert refused.value.exit_code == 2
                assert "nothing was installed" in refused.value.paragraph()
                assert wheel_problems(manifest, deep=False) != [] or \
                    not (root / "state").exists()  # no stamp: collect runs again anyway
            else:  # or dist/ is exactly what the manifest lists
                assert set(listed_wheels(manifest)) == _in_dist(root), line
            continue
        assert code == 0, line
        break
    assert killed >= 3
    assert problems == []
    assert _in_dist(root) == {TORCH, TRITON, VISION, AUDIO}
    argv = install_argv(workdir_for(root))
    assert [Path(a).name for a in argv if a.endswith(".whl")] == [TRITON, TORCH, VISION, AUDIO]


def test_an_unlisted_wheel_in_dist_is_refused_by_install(tmp_path: Path) -> None:
    root = tmp_path / "w"
    _earlier_build(root)
    (root / "dist" / VISION).write_bytes(b"a wheel no manifest lists")
    unlisted = (f"{root / 'dist' / VISION} is in dist/ but manifest.json does not list it")
    problems = wheel_problems(read_manifest(root / "dist" / "manifest.json"), deep=False)
    assert problems == [unlisted]
    with pytest.raises(UsageError) as refused:
        install_argv(workdir_for(root))
    assert refused.value.what == f"dist/ and its manifest disagree: {unlisted}"
    # The build's up-to-date check reads the same record: the stray wheel voids no build (its
    # output is there), it makes the collect steps run again (the runner's stray_wheels).
    from rocmforge.execute.model import Step
    from rocmforge.execute.states import missing_outputs, stray_wheels

    collect = Step(name="companions-collect", argv=("companions-collect",), why="",
                   kind="python", outputs=(str(root / "dist" / "manifest.json"),))
    assert missing_outputs(collect) == []
    assert stray_wheels(collect) == [str(root / "dist" / VISION)]
    # And nox -s verify's planner refuses it with the same sentence.
    from rocmforge.sessions.support import find_wheels

    with pytest.raises(UsageError) as verify:
        find_wheels(root / "dist", read_manifest(root / "dist" / "manifest.json"))
    assert verify.value.what == refused.value.what


def test_a_companion_record_that_disagrees_with_files_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "w"
    _earlier_build(root)
    path = root / "dist" / "manifest.json"
    doc = json.loads(path.read_text())
    doc["companions"]["torchaudio"]["sha256"] = "0" * 64
    path.write_text(json.dumps(doc))
    assert wheel_problems(read_manifest(path), deep=False) == [
        f"manifest.json records two sha256 for {OLD_AUDIO} (companions.torchaudio and files)"]


def test_invoke_install_after_a_kill_in_companions_collect_is_exit_2(tmp_path: Path) -> None:
    """The issue's case through the real CLI: killed after its first copy, `invoke install`
    installed torch alone with exit 0; now one paragraph, exit 2, nothing installed."""
    root = tmp_path / "w"
    _earlier_build(root)
    assert _kill_at(root, 2) == -signal.SIGKILL
    before = sorted(p.name for p in (root / "venv").rglob("*"))
    done = subprocess.run([sys.executable, "-m", "invoke", "install", "--work-dir", str(root)],
                          cwd=Path(__file__).resolve().parents[2], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("rocmforge: dist/ and its manifest disagree: ")
    assert f"{root / 'dist' / AUDIO} (listed in manifest.json) is gone" in done.stderr
    assert f"{root / 'dist' / OLD_AUDIO} is in dist/ but manifest.json does not list it" \
        in done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert sorted(p.name for p in (root / "venv").rglob("*")) == before
