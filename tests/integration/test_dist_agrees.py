"""dist/ and manifest.json agree at every instant, and every reader checks (issue 30 items 2-5,
13, 14): each wheel's sha256 and size recorded, a wheel gone or swapped found by the next
build's up-to-date check and refused by `invoke install` and `nox -s verify`, a wheel named
outside dist/ refused, a malformed stamp taken as absent, a garbage manifest never kept, and
files beside the wheels readable as they are."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import put_wheels

from rocmforge.errors import UsageError
from rocmforge.execute.model import Step
from rocmforge.execute.stamps import Stamp, read_stamp, stamp_path, write_stamp
from rocmforge.execute.states import missing_outputs
from rocmforge.knowledge.manifest import (
    build_manifest,
    read_manifest,
    wheel_problems,
    write_manifest,
)
from rocmforge.steps.venv import install_argv
from rocmforge.workdir import workdir_for

TORCH = "torch-2.9.1-cp311-cp311-linux_x86_64.whl"
TRITON = "pytorch_triton_rocm-3.4.0-cp311-cp311-linux_x86_64.whl"
VISION = "torchvision-0.24.1-cp311-cp311-linux_x86_64.whl"


def _finished(root: Path, *, companion: bool = False) -> Path:
    work = workdir_for(root)
    doc = build_manifest(targets=["gfx1100"], wheels={"torch": TORCH, "triton": TRITON},
                         lock=None, toolchain={}, env={}, steps=[], plan_settings={},
                         created="t")
    names = [TORCH, TRITON]
    if companion:
        doc["wheels"]["torchvision"] = VISION
        names.append(VISION)
    put_wheels(work.dist, doc, names)
    write_manifest(work.dist / "manifest.json", doc)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")],
                   check=True, timeout=120)
    return root


def _collect_step(root: Path) -> Step:
    return Step(name="collect", argv=("collect",), why="", kind="python",
                outputs=(str(root / "dist" / "manifest.json"),))


def test_a_finished_build_agrees_and_installs(tmp_path: Path) -> None:
    root = _finished(tmp_path / "w")
    assert missing_outputs(_collect_step(root)) == []
    assert wheel_problems(read_manifest(root / "dist" / "manifest.json"), deep=True) == []
    assert install_argv(workdir_for(root))[-2:] == [str(root / "dist" / TRITON),
                                                     str(root / "dist" / TORCH)]


def test_a_deleted_wheel_makes_collect_run_again_and_install_refuse(tmp_path: Path) -> None:
    root = _finished(tmp_path / "w", companion=True)
    (root / "dist" / VISION).unlink()
    gone = f"{root / 'dist' / VISION} (listed in manifest.json) is gone"
    assert missing_outputs(_collect_step(root)) == [gone]
    with pytest.raises(UsageError) as refused:
        install_argv(workdir_for(root))
    assert refused.value.what == f"dist/ and its manifest disagree: {gone}"
    assert "nothing was installed" in refused.value.paragraph()


def test_a_swapped_torch_wheel_of_the_same_name_is_refused(tmp_path: Path) -> None:
    root = _finished(tmp_path / "w")
    wheel = root / "dist" / TORCH
    wheel.write_bytes(b"another build, same name")
    # Another size: even the cheap check (the next build's up-to-date test) sees it.
    assert missing_outputs(_collect_step(root)) == [
        f"{wheel} is not the file manifest.json records (size 24, recorded {len(TORCH)})"]
    # The same size, other bytes: only the sha256 tells, and install reads it.
    wheel.write_bytes(b"x" * len(TORCH))
    assert missing_outputs(_collect_step(root)) == []
    with pytest.raises(UsageError, match="sha256 differs"):
        install_argv(workdir_for(root))


@pytest.mark.parametrize("named", [f"../{TORCH}", "absolute"])
def test_a_wheel_named_outside_dist_is_refused(tmp_path: Path, named: str) -> None:
    root = _finished(tmp_path / "w")
    if named == "absolute":
        (tmp_path / "elsewhere").mkdir()
        named = str(tmp_path / "elsewhere" / TORCH)
    path = root / "dist" / "manifest.json"
    doc = json.loads(path.read_text())
    doc["wheels"]["torch"] = named
    path.write_text(json.dumps(doc))
    # The file it names exists (the case that was installed): still not the build's.
    outside = (root / "dist" / named).resolve() if not named.startswith("/") else Path(named)
    outside.write_bytes((root / "dist" / TORCH).read_bytes())
    with pytest.raises(UsageError, match=f"names '{named}', which is not a wheel file in"):
        install_argv(workdir_for(root))
    from packaging.tags import sys_tags

    from rocmforge.sessions import support

    with pytest.raises(UsageError, match="which is not a wheel file in"):
        support.plan_session("gfx1100", dist=root / "dist", environ={},
                             supported_tags=sys_tags(), python="3.11.7")


def test_a_garbage_manifest_is_never_kept(tmp_path: Path) -> None:
    root = _finished(tmp_path / "w")
    (root / "dist" / "manifest.json").write_text("{ garbage")
    problems = missing_outputs(_collect_step(root))
    assert len(problems) == 1 and "is not readable JSON" in problems[0]


def test_an_old_manifest_without_sha256_makes_collect_run_again(tmp_path: Path) -> None:
    root = _finished(tmp_path / "w")
    path = root / "dist" / "manifest.json"
    doc = json.loads(path.read_text())
    del doc["files"]
    path.write_text(json.dumps(doc))
    assert missing_outputs(_collect_step(root)) == [
        f"manifest.json records no sha256 for {TRITON}",
        f"manifest.json records no sha256 for {TORCH}"]


def test_a_stamp_with_malformed_details_is_absent(tmp_path: Path) -> None:
    state = tmp_path / "state"
    write_stamp(state, Stamp(step="collect", digest="d", finished="t", duration_s=1.0,
                             details={"torch": TORCH}))
    assert read_stamp(state, "collect") is not None
    doc = json.loads(stamp_path(state, "collect").read_text())
    doc["details"] = [1]
    stamp_path(state, "collect").write_text(json.dumps(doc))
    assert read_stamp(state, "collect") is None


def test_files_beside_the_wheels_are_readable_as_the_wheels(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        root = _finished(tmp_path / "w")
    finally:
        os.umask(old)
    assert oct((root / "dist" / "manifest.json").stat().st_mode & 0o777) == "0o644"
    old = os.umask(0o077)
    try:
        write_manifest(tmp_path / "private.json", {"schema": "x"})
    finally:
        os.umask(old)
    assert oct((tmp_path / "private.json").stat().st_mode & 0o777) == "0o600"


class _Watching:
    """The collect step's log, which checks dist/ against its manifest at every line the step
    writes: each line marks an instant between two of its file operations."""

    def __init__(self, dist: Path) -> None:
        self.dist, self.checks, self.lies = dist, 0, []

    def write(self, text: str) -> int:
        self.checks += 1
        path = self.dist / "manifest.json"
        if path.exists():
            problems = wheel_problems(read_manifest(path), deep=True)
            if problems:
                self.lies.append((text.strip(), problems))
        return len(text)

    def flush(self) -> None:
        pass


def test_no_instant_of_collect_shows_a_manifest_beside_another_wheel(tmp_path: Path) -> None:
    """Issue 30 item 2: a new torch wheel has the old one's name; the old order (copy, then
    rewrite the manifest) showed the old manifest beside the new wheel at the step's own
    'dist: torch-…' line. Each line the real collect writes is checked here."""
    from rocmforge.execute.actions import ActionContext
    from rocmforge.steps.outputs import collect

    root = _finished(tmp_path / "w")  # an earlier build: its manifest records its torch wheel
    tree = tmp_path / "tree"
    (tree / "dist").mkdir(parents=True)
    (tree / "dist" / TORCH).write_bytes(b"the gfx942 build's wheel, same name")
    watch = _Watching(root / "dist")
    ctx = ActionContext(step=Step(name="collect", argv=("collect",), why="", cwd=str(tree),
                                  kind="python"),
                        workdir=workdir_for(root), results=(), log=watch,  # type: ignore[arg-type]
                        run_argv=None)  # type: ignore[arg-type]
    collect(ctx, targets=["gfx942"], plan_settings={})
    assert watch.checks >= 2 and watch.lies == []
    manifest = read_manifest(root / "dist" / "manifest.json")
    assert manifest.targets == ("gfx942",) and wheel_problems(manifest, deep=True) == []
    assert not (root / "dist" / TRITON).exists()  # the earlier build's Triton left with it
