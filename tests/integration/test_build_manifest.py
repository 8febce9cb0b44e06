"""dist/manifest.json as the build writes it (the real `collect` action through the runner) is
what `nox -s verify` reads (rocmforge.sessions.support), and both agree on where dist/ is."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from buildhelpers import make_wheel
from invoke import Config, Context
from packaging.tags import sys_tags

from rocmforge.execute.model import Plan, Step
from rocmforge.execute.runner import run_plan
from rocmforge.knowledge.manifest import MANIFEST_SCHEMA
from rocmforge.sessions import support as nox_support
from rocmforge.steps.outputs import collect
from rocmforge.workdir import workdir_for

PY = sys.executable
REPO_ROOT = Path(__file__).resolve().parents[2]


def _fake_triton(ctx):  # the real action needs an index or a Triton checkout
    return {"wheel": ctx.step.argv[1]}


def _build_dist(tmp_path: Path, targets: tuple[str, ...]) -> Path:
    """Run a plan whose `build` step leaves a torch wheel and whose `collect` step is real."""
    work = workdir_for(tmp_path / "work")
    tree = tmp_path / "tree"
    triton = make_wheel(tmp_path / "tw", "pytorch-triton-rocm", "3.4.0+git01234567",
                        {"triton/__init__.py": ""})
    torch_src = make_wheel(tmp_path / "built", "torch", "2.8.0a0", {"torch/__init__.py": ""})
    make = (f"import pathlib, shutil; d = pathlib.Path({str(tree / 'dist')!r}); "
            f"d.mkdir(parents=True, exist_ok=True); shutil.copy({str(torch_src)!r}, d)")
    work.root.mkdir(parents=True)
    work.lock_file.write_text('schema = 1\n\n[pytorch]\nrepo = "r"\nref = "v2.8.0"\n'
                              'commit = "' + "a" * 40 + '"\n')
    steps = (
        Step(name="triton", kind="python", argv=("test-fake-triton", str(triton)), why="t"),
        Step(name="build", argv=(PY, "-c", make), why="b"),
        Step(name="collect", kind="python", argv=("collect",), why="c", cwd=str(tree)),
    )
    plan = Plan(settings={"work_dir": str(work.root)}, targets=targets, steps=steps)
    actions = {
        "test-fake-triton": (_fake_triton, "test: report a Triton wheel built elsewhere"),
        "collect": (lambda ctx: collect(ctx, targets=targets, plan_settings=plan.settings), "c"),
    }
    run_plan(Context(Config()), plan, work, actions=actions, console=io.StringIO())
    return work.dist


def test_manifest_written_by_collect_has_the_keys_verify_reads(tmp_path: Path) -> None:
    dist = _build_dist(tmp_path, ("gfx1100", "gfx942"))
    doc = json.loads((dist / "manifest.json").read_text())
    assert doc["schema"] == MANIFEST_SCHEMA == "rocmforge.manifest/1"
    assert doc["targets"] == ["gfx1100", "gfx942"]
    assert doc["wheels"] == {"torch": "torch-2.8.0a0-py3-none-any.whl",
                             "triton": "pytorch_triton_rocm-3.4.0+git01234567-py3-none-any.whl"}
    assert doc["lock"]["pytorch"]["commit"] == "a" * 40
    assert [s["name"] for s in doc["steps"]] == ["triton", "build"]
    assert nox_support.session_targets(dist, {}, lambda: ()) == ["gfx1100", "gfx942"]
    session = nox_support.plan_session("gfx942", dist=dist, environ={},
                                       supported_tags=sys_tags(), python="3.11")
    assert session.wheels.torch == dist / "torch-2.8.0a0-py3-none-any.whl"
    assert session.wheels.triton == dist / doc["wheels"]["triton"]
    assert session.wheels.triton_version == "3.4.0+git01234567"
    assert session.verify_argv()[:5] == ["python", "-m", "rocmforge.verify", "--expect", "gfx942"]


def test_verify_finds_the_build_dist_through_the_work_dir_setting(tmp_path: Path) -> None:
    root = tmp_path / "kit"
    assert nox_support.dist_dir(root, {}) == root / ".rocmforge" / "dist"
    assert nox_support.dist_dir(root, {"ROCMFORGE_WORK_DIR": "build-area"}) == (
        root / "build-area" / "dist")
    assert nox_support.dist_dir(root, {"ROCMFORGE_WORK_DIR": str(tmp_path / "w")}) == (
        tmp_path / "w" / "dist")
    assert nox_support.dist_dir(root, {"ROCMFORGE_WORK_DIR": "w",
                                       "ROCMFORGE_DIST": str(tmp_path / "d")}) == tmp_path / "d"
    # The kit root's default agrees with what `invoke build` writes (workdir_for(work_dir)).
    assert nox_support.dist_dir(REPO_ROOT, {}) == workdir_for(REPO_ROOT / ".rocmforge").dist
