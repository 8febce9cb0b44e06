"""Volatile steps: a build of a branch notices that upstream advanced.

The checkout step's digest holds the ref's name, so a stamp alone cannot tell that `main` (or
`release/2.8`) now names another commit. The runner re-checks volatile steps and compares their
fingerprint with the stamp's: the same one keeps every later stamp, another one redoes them all.
First the chain logic on in-process actions, then `invoke build` of a real git branch of the
fixture "pytorch" (tests/fixtures/fakepytorch, compiled with clang-22).
"""

from __future__ import annotations

import io
import json
import subprocess
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from invoke import Config, Context

from rocmforge.errors import StepFailed
from rocmforge.execute.actions import ActionContext
from rocmforge.execute.model import Plan, Step
from rocmforge.execute.runner import StepRunner
from rocmforge.execute.stamps import read_stamp
from rocmforge.execute.states import planned_states
from rocmforge.workdir import workdir_for


def _ctx(dry: bool = False) -> Context:
    return Context(Config(overrides={"run": {"dry": dry}}))


def _source_action(ctx: ActionContext) -> Mapping[str, Any]:
    """Stands for the checkout: reads what the 'branch' names now, says so, fingerprints it."""
    names = Path(ctx.step.argv[1])
    text = names.read_text().strip()
    if text == "unreachable":
        raise StepFailed("Cannot reach the repository", "the test said so", "fix the test")
    ctx.say(f"branch is at {text}")
    doc: dict[str, Any] = {"commit": text}
    if text != "no-fingerprint":
        doc["fingerprint"] = f"fp-{text}"
    return doc


ACTIONS = {"rf-test-source": (_source_action, "test: report the 'commit' a file names")}


def _plan(tmp: Path) -> Plan:
    out = tmp / "out.txt"
    append = "import sys; open(sys.argv[1], 'a').write(sys.argv[2] + '\\n')"
    steps = (
        Step(name="source", kind="python", argv=("rf-test-source", str(tmp / "branch")),
             why="resolve the branch", volatile=True),
        Step(name="compile", argv=("python3", "-c", append, str(out), "compile"),
             why="append compile"),
        Step(name="package", argv=("python3", "-c", append, str(out), "package"),
             why="append package"),
    )
    return Plan(settings={}, targets=("gfx1100",), steps=steps)


def _run(tmp: Path, dry: bool = False) -> tuple[list[str], str]:
    console = io.StringIO()
    runner = StepRunner(_ctx(dry), _plan(tmp), workdir_for(tmp / "work"), actions=ACTIONS,
                        console=console,
                        resume_hint="run `invoke build` again")
    results = runner.execute()
    return [r.status for r in results], console.getvalue()


def test_volatile_step_keeps_the_chain_until_its_fingerprint_changes(tmp_path: Path) -> None:
    state = tmp_path / "work" / "state"
    out = tmp_path / "out.txt"
    (tmp_path / "branch").write_text("aaa\n")
    assert _run(tmp_path)[0] == ["ran", "ran", "ran"]
    assert read_stamp(state, "source").fingerprint == "fp-aaa"  # type: ignore[union-attr]
    # The fingerprint is the stamp's own field, not part of the details kept for the manifest.
    assert read_stamp(state, "source").details == {"commit": "aaa"}  # type: ignore[union-attr]

    # Nothing moved: the check runs (quietly, into its log), the rest is skipped.
    statuses, console = _run(tmp_path)
    assert statuses == ["checked", "skipped", "skipped"]
    assert "==> source: done (stamp matches), skipped; re-checked in" in console
    assert "unchanged (fp-aaa)" in console
    assert "branch is at aaa" not in console
    assert "branch is at aaa" in (tmp_path / "work" / "logs" / "source.log").read_text()
    assert "every step is up to date; nothing to do" in console
    assert "==> [" not in console
    assert out.read_text() == "compile\npackage\n"

    # Upstream advanced: the check reports the change and every later step runs again.
    (tmp_path / "branch").write_text("bbb\n")
    statuses, console = _run(tmp_path)
    assert statuses == ["ran", "ran", "ran"]
    assert ("==> [1/3] source: re-check found a change (fingerprint fp-aaa -> fp-bbb); every "
            "later step runs again (its output: "
            f"{tmp_path / 'work' / 'logs' / 'source.log'})") in console
    # The step's own output goes to its log only (the console names the log).
    assert "branch is at bbb" not in console
    assert "branch is at bbb" in (tmp_path / "work" / "logs" / "source.log").read_text()
    assert "==> [2/3] compile" in console and "==> [3/3] package" in console
    assert out.read_text() == "compile\npackage\ncompile\npackage\n"
    assert read_stamp(state, "source").fingerprint == "fp-bbb"  # type: ignore[union-attr]
    assert _run(tmp_path)[0] == ["checked", "skipped", "skipped"]


def test_failed_check_keeps_later_stamps_and_shows_its_output(tmp_path: Path) -> None:
    state = tmp_path / "work" / "state"
    (tmp_path / "branch").write_text("aaa\n")
    _run(tmp_path)
    (tmp_path / "branch").write_text("unreachable\n")
    with pytest.raises(StepFailed, match="Cannot reach the repository"):
        _run(tmp_path)
    # Nothing is known to have changed: the finished steps stay finished.
    assert read_stamp(state, "source").fingerprint == "fp-aaa"  # type: ignore[union-attr]
    assert read_stamp(state, "package") is not None
    (tmp_path / "branch").write_text("aaa\n")
    assert _run(tmp_path)[0] == ["checked", "skipped", "skipped"]


def test_check_without_fingerprint_counts_as_a_change(tmp_path: Path) -> None:
    (tmp_path / "branch").write_text("aaa\n")
    _run(tmp_path)
    (tmp_path / "branch").write_text("no-fingerprint\n")
    assert _run(tmp_path)[0] == ["ran", "ran", "ran"]
    # And again: a step that cannot say what it found never lets later stamps count.
    assert _run(tmp_path)[0] == ["ran", "ran", "ran"]


def test_dry_and_planned_states_say_checks_and_run_nothing(tmp_path: Path) -> None:
    (tmp_path / "branch").write_text("aaa\n")
    plan, work = _plan(tmp_path), workdir_for(tmp_path / "work")
    assert planned_states(plan, work) == ["to run", "to run", "to run"]
    _run(tmp_path)
    (tmp_path / "branch").write_text("bbb\n")  # a dry run must not look
    assert planned_states(plan, work) == ["checks", "done", "done"]
    log = tmp_path / "work" / "logs" / "source.log"
    before = log.read_text()
    statuses, console = _run(tmp_path, dry=True)
    assert statuses == ["dry", "dry", "dry"]
    assert "==> [1/3] source: stamp matches, would re-check (volatile" in console
    assert "==> [2/3] compile: done (stamp matches), would skip" in console
    assert log.read_text() == before
    (tmp_path / "work" / "state" / "stamps" / "package.json").unlink()
    assert planned_states(plan, work) == ["checks", "done", "to run"]


# --- invoke build of a branch that advances (real git, real clang-22) ---------------------------

BRANCH = "release/2.8"  # a branch the version table maps to 2.8 (setup.py bdist_wheel)


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@example.com",
                           "-c", "user.name=t", *args],
                          check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _build_at(work: Path, repo: Path, ref: str, *extra: str) -> subprocess.CompletedProcess[str]:
    from buildhelpers import assert_manifest_describes_wheel
    from test_build_e2e import REPO_ROOT, build_argv, build_env

    argv = build_argv(work, repo, "gfx1100")
    argv[argv.index("--ref") + 1] = ref
    done = subprocess.run([*argv[:3], *extra, *argv[3:]], cwd=REPO_ROOT, env=build_env(),
                          capture_output=True, text=True, timeout=300)
    manifest = work / "dist" / "manifest.json"
    if done.returncode == 0 and "--dry" not in extra and manifest.is_file():
        assert_manifest_describes_wheel(work)
    return done


@pytest.mark.slow
@pytest.mark.needs_tool("clang-22", "clang-offload-bundler-22", "git")
def test_branch_build_follows_upstream_then_noop(tmp_path: Path) -> None:
    from test_build_e2e import make_fixture_repo, stamps

    repo = make_fixture_repo(tmp_path / "pytorch")
    _git(repo, "branch", BRANCH)
    work = tmp_path / "work"
    first = _build_at(work, repo, BRANCH)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    old_head = _git(repo, "rev-parse", BRANCH)
    wheel_old = work / "dist" / next(p.name for p in (work / "dist").glob("torch-2.8.0a0-*.whl"))
    assert read_stamp(work / "state", "checkout").fingerprint  # type: ignore[union-attr]

    # Upstream advances the branch: a new version and one more kernel.
    _git(repo, "checkout", "-q", BRANCH)
    (repo / "version.txt").write_text("2.8.1a0\n")
    kernel = repo / "csrc" / "kernel.cu"
    kernel.write_text(kernel.read_text() + "\nextern \"C\" int rf_added_upstream(void) "
                      "{ return 2; }\n")
    _git(repo, "commit", "-q", "-am", "upstream advanced")
    new_head = _git(repo, "rev-parse", BRANCH)
    assert new_head != old_head

    # The plan cannot know (no network): it says the checkout will be checked.
    dry = _build_at(work, repo, BRANCH, "--dry")
    assert dry.returncode == 0, dry.stderr
    assert "==> [3/16] checkout: stamp matches, would re-check (volatile" in dry.stdout
    assert _git(work / "src" / "pytorch", "rev-parse", "HEAD") == old_head

    second = _build_at(work, repo, BRANCH)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    assert "==> [3/16] checkout: re-check found a change" in second.stdout
    assert f"PyTorch {BRANCH} is at {new_head}" in (work / "logs" / "checkout.log").read_text()
    for redone in ("patches", "venv", "triton", "environment", "hipify", "configure", "build",
                   "collect", "install"):
        assert f"] {redone} ... " in second.stdout, redone
    assert _git(work / "src" / "pytorch", "rev-parse", "HEAD") == new_head
    assert "rf_added_upstream" in (work / "src" / "pytorch" / "csrc" / "kernel.hip").read_text()
    wheels = sorted(p.name for p in (work / "dist").glob("torch-*.whl"))
    assert len(wheels) == 1 and wheels[0].startswith("torch-2.8.1a0-"), wheels
    assert not wheel_old.exists()
    with zipfile.ZipFile(work / "dist" / wheels[0]) as archive:
        assert archive.read("torch/version.txt").decode().strip() == "2.8.1a0"
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    assert manifest["source"]["commit"] == new_head
    assert "fingerprint" not in manifest["source"]
    assert manifest["lock"]["pytorch"]["commit"] == new_head

    # Nothing changed: only the checkout's check runs, every other step is skipped.
    built = (work / "dist" / wheels[0]).stat().st_mtime_ns
    third = _build_at(work, repo, BRANCH)
    assert third.returncode == 0, third.stdout[-3000:] + third.stderr[-3000:]
    assert "==> checkout: done (stamp matches), skipped; re-checked in" in third.stdout
    assert "every step is up to date; nothing to do" in third.stdout
    assert "==> [" not in third.stdout
    assert (work / "dist" / wheels[0]).stat().st_mtime_ns == built
    assert stamps(work) >= {"checkout", "hipify", "build", "install"}


def test_cli_refuses_a_non_numeric_max_jobs_with_exit_2_and_writes_nothing(
        tmp_path: Path) -> None:
    import os
    import sys

    from test_build_e2e import REPO_ROOT

    work = tmp_path / "work"
    env = {**os.environ, "HIP_PLATFORM": "amd", "NO_COLOR": "1",
           "ROCMFORGE_BUILD_ENV": "MAX_JOBS=lots"}
    done = subprocess.run([sys.executable, "-m", "invoke", "build", "--arch", "gfx1100",
                           "--work-dir", str(work), "--clang", "22", "--triton", "skip",
                           "--skip-preflight"], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "rocmforge: MAX_JOBS='lots' is not a whole number" in done.stderr
    assert "Traceback" not in done.stderr
    assert not work.exists()


def test_triton_action_ignores_a_non_numeric_max_jobs_with_a_note(tmp_path: Path) -> None:
    from rocmforge.steps.triton import _max_jobs

    said: list[str] = []

    class _Ctx:
        def __init__(self, env: dict[str, str]) -> None:
            self.step = Step(name="triton", argv=("triton",), why="t", env=env)

        def notice(self, message: str) -> None:
            said.append(message)

    assert _max_jobs(_Ctx({"MAX_JOBS": "12"})) == 12  # type: ignore[arg-type]
    assert _max_jobs(_Ctx({})) == 0  # type: ignore[arg-type]
    assert said == []
    assert _max_jobs(_Ctx({"MAX_JOBS": "many"})) == 0  # type: ignore[arg-type]
    assert said == ["note: MAX_JOBS='many' is not a whole number; the Triton build chooses its "
                    "own job count"]
