"""`invoke vendor`: the kit copied into a throwaway "existing repo", then used from there."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rocmforge.sessions import vendor as kit

KIT = Path(__file__).resolve().parents[2]

THEIR_TASKS = '''from invoke import Collection, task


@task
def hello(c):
    """Their own task."""
    print("hello")


ns = Collection(hello)
'''

THEIR_NOXFILE = '''import nox


@nox.session(python=False)
def theirs(session):
    """Their own session."""
'''


def _run(argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "NO_COLOR": "1", **env}
    full_env.pop("ROCMFORGE_CONFIG_DIR", None)
    return subprocess.run(argv, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def their_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "theirs"
    repo.mkdir()
    (repo / "tasks.py").write_text(THEIR_TASKS)
    (repo / "noxfile.py").write_text(THEIR_NOXFILE)
    return repo


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_plan_never_overwrites_their_tasks_py(their_repo: Path) -> None:
    files = {"rocmforge/__init__.py": b"x"}
    rels = [
        "third_party/rocmforge/rocmforge/__init__.py",
        "tasks.py",
        "rocm_tasks.py",
        "rocm_nox.py",
    ]
    plan = kit.plan_vendor(
        dest=their_repo, files=files, existing=kit.read_existing(their_repo, rels)
    )
    actions = {c.rel: c.action for c in plan.copies}
    assert actions == {
        "rocm_nox.py": "create",
        "rocm_tasks.py": "create",
        "third_party/rocmforge/rocmforge/__init__.py": "create",
    }
    assert plan.instructions[:2] == (
        "import rocm_tasks  # at the end of tasks.py",
        "ns = rocm_tasks.mount(globals())",
    )
    # nox does not put the noxfile's folder on sys.path: the path line comes before the import.
    assert plan.instructions[2:] == (
        kit.NOXFILE_PATH_LINE + "  # in noxfile.py",
        "import rocm_nox  # noqa: E402,F401  (in noxfile.py: adds build and verify)",
    )


def test_conflict_is_refused_and_nothing_written(their_repo: Path) -> None:
    target = their_repo / "third_party" / "rocmforge" / "config"
    target.mkdir(parents=True)
    (target / "defaults.toml").write_text("# theirs\n")
    before = _snapshot(their_repo)
    result = _run([sys.executable, "-m", "invoke", "vendor", "--into", str(their_repo)], KIT)
    assert result.returncode == 2, result.stderr
    assert "would overwrite files that are already there" in result.stderr
    assert "third_party/rocmforge/config/defaults.toml" in result.stderr
    assert "Traceback" not in result.stderr
    assert _snapshot(their_repo) == before


def test_missing_into_is_a_clear_error() -> None:
    result = _run([sys.executable, "-m", "invoke", "vendor"], KIT)
    assert result.returncode == 2
    assert "invoke vendor needs --into DIR" in result.stderr


@pytest.mark.parametrize(
    "prefix", ["../outside", "/abs/rocmforge", "", ".", "kit/../../up"],
    ids=["parent", "absolute", "empty", "dot", "climbs-out"],
)
def test_prefix_outside_the_repo_is_refused_before_any_write(
    their_repo: Path, prefix: str
) -> None:
    before = _snapshot(their_repo.parent)
    result = _run(
        [sys.executable, "-m", "invoke", "vendor", "--into", str(their_repo), "--prefix", prefix],
        KIT,
    )
    assert result.returncode == 2, result.stderr
    assert f"--prefix {prefix!r} is not a folder inside the repository" in result.stderr
    assert "Fix: pass a relative path without '..'" in result.stderr
    assert "Traceback" not in result.stderr
    assert _snapshot(their_repo.parent) == before


@pytest.mark.parametrize(
    ("given", "clean"),
    [("third_party/rocmforge/", "third_party/rocmforge"), ("./vendor//kit", "vendor/kit")],
)
def test_checked_prefix_normalises_relative_folders(given: str, clean: str) -> None:
    assert kit.checked_prefix(given) == clean


def test_dry_run_writes_nothing(their_repo: Path) -> None:
    before = _snapshot(their_repo)
    result = _run(
        [sys.executable, "-m", "invoke", "--dry", "vendor", "--into", str(their_repo)], KIT
    )
    assert result.returncode == 0, result.stderr
    assert "dry run: nothing written" in result.stderr
    assert _snapshot(their_repo) == before


@pytest.mark.slow
def test_vendored_kit_works_from_their_repo(their_repo: Path) -> None:
    result = _run([sys.executable, "-m", "invoke", "vendor", "--into", str(their_repo)], KIT)
    assert result.returncode == 0, result.stderr
    assert (their_repo / "tasks.py").read_text() == THEIR_TASKS  # untouched
    assert (their_repo / "rocm_tasks.py").is_file()
    assert (their_repo / "third_party/rocmforge/config/defaults.toml").is_file()
    assert "    import rocm_tasks" in result.stderr
    # Do literally what the printed instructions say: each line goes to the file it names.
    printed = result.stderr.split(
        "Add to that repo's tasks.py / noxfile.py (each line whole):\n", 1)[1]
    printed = printed.split("\nThen ", 1)[0]  # the setup hints' commands follow
    lines = [line[4:] for line in printed.splitlines() if line.startswith("    ")]
    nox_lines = [line for line in lines if "in noxfile.py" in line]
    task_lines = [line for line in lines if line not in nox_lines]
    assert task_lines == ["import rocm_tasks  # at the end of tasks.py",
                          "ns = rocm_tasks.mount(globals())"]
    assert len(nox_lines) == 2 and nox_lines[1].startswith("import rocm_nox")
    with (their_repo / "tasks.py").open("a") as handle:
        handle.write("\n" + "\n".join(task_lines) + "\n")
    with (their_repo / "noxfile.py").open("a") as handle:
        handle.write("\n" + "\n".join(nox_lines) + "\n")

    listed = _run([sys.executable, "-m", "invoke", "--list"], their_repo)
    assert listed.returncode == 0, listed.stderr
    assert "hello" in listed.stdout
    assert "rocm.plan" in listed.stdout
    assert "rocm.build" in listed.stdout
    assert "rocm.vendor" in listed.stdout

    planned = _run(
        [sys.executable, "-m", "invoke", "rocm.plan", "--arch", "gfx1100", "--json"], their_repo
    )
    assert planned.returncode == 0, planned.stderr
    doc = json.loads(planned.stdout)
    assert doc["schema"] == "rocmforge.plan/1"
    assert doc["targets"] == ["gfx1100"]

    # The kit's sessions are not defaults (they build and install wheels): name them to list them.
    sessions = _run(
        [sys.executable, "-m", "nox", "-l", "--json", "-s", "theirs", "build", "verify"],
        their_repo,
        ROCMFORGE_VERIFY_TARGETS="gfx1100;gfx942",
    )
    assert sessions.returncode == 0, sessions.stderr
    names = [s["session"] for s in json.loads(sessions.stdout)]
    assert names == ["theirs", "verify(gfx1100)", "verify(gfx942)", "build"]

    # Issue 32 item 7: in their repo, every command the kit prints is one that exists there.
    doctor = _run([sys.executable, "-m", "invoke", "rocm.doctor", "--arch", "gfx1100",
                   "--work-dir", str(their_repo / ".rocmforge")], their_repo, HIP_PLATFORM="amd")
    shown = doctor.stdout + doctor.stderr
    assert "invoke rocm.doctor --arch gfx1100" in shown
    assert re.search(r"invoke (?:--?[a-z-]+ )*(?!rocm\.)[a-z]", shown) is None, shown
    workflow = _run([sys.executable, "-m", "invoke", "rocm.matrix", "--workflow", "--arch",
                     "gfx1100"], their_repo)
    assert workflow.returncode == 0, workflow.stderr
    runs = [step.get("run", "") for step in
            yaml.safe_load(workflow.stdout)["jobs"]["build"]["steps"]]
    assert any('-m pip install -e ./third_party/rocmforge' in run for run in runs), runs
    assert "invoke rocm.doctor" in runs and "invoke rocm.build" in runs

    # Refreshing the copy does not ask for lines that are already in their files.
    (their_repo / ".gitignore").write_text(".rocmforge/\n")
    again = _run(
        [sys.executable, "-m", "invoke", "vendor", "--into", str(their_repo), "--update"], KIT
    )
    assert again.returncode == 0, again.stderr
    assert "Add to that repo's" not in again.stderr
    assert ".gitignore" not in again.stderr + again.stdout


@pytest.mark.slow
def test_update_shows_diff_and_keeps_local_edits(their_repo: Path) -> None:
    first = _run([sys.executable, "-m", "invoke", "vendor", "--into", str(their_repo)], KIT)
    assert first.returncode == 0, first.stderr
    prefix = their_repo / "third_party" / "rocmforge"
    edited = prefix / "config" / "defaults.toml"
    edited.write_text(edited.read_text() + "# local edit\n")
    stale = prefix / "rocmforge" / "workdir.py"
    stale.write_text(stale.read_text().replace("fixed sub-folders", "OLD TEXT"))
    # Pretend the stale file was vendored that way: rewrite its record hash.
    record_path = prefix / kit.RECORD_NAME
    record = json.loads(record_path.read_text())
    rel = "third_party/rocmforge/rocmforge/workdir.py"
    record["files"][rel] = kit._sha256(stale.read_bytes())
    record_path.write_text(json.dumps(record))

    again = _run(
        [sys.executable, "-m", "invoke", "vendor", "--into", str(their_repo), "--update"], KIT
    )
    assert again.returncode == 0, again.stderr
    assert f"--- a/{rel}" in again.stdout
    assert "-# local edit" in again.stdout  # shown, but kept
    assert "OLD TEXT" not in stale.read_text()  # ours, unedited there: updated
    assert edited.read_text().endswith("# local edit\n")  # theirs: kept


def _vendored_git_repo(tmp_path: Path) -> Path:
    """A throwaway git repository with its own tasks.py and noxfile.py, the kit vendored into
    it and the printed lines added where they say."""
    repo = tmp_path / "theirrepo"
    repo.mkdir()
    (repo / "tasks.py").write_text(THEIR_TASKS)
    (repo / "noxfile.py").write_text(THEIR_NOXFILE)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    done = _run([sys.executable, "-m", "invoke", "vendor", "--into", str(repo)], KIT)
    assert done.returncode == 0, done.stderr
    printed = done.stderr.split(
        "Add to that repo's tasks.py / noxfile.py (each line whole):\n", 1)[1]
    printed = printed.split("\nThen ", 1)[0]  # the setup hints' commands follow
    lines = [line[4:] for line in printed.splitlines() if line.startswith("    ")]
    with (repo / "tasks.py").open("a") as handle:
        handle.write("\n" + "\n".join(x for x in lines if "noxfile" not in x) + "\n")
    with (repo / "noxfile.py").open("a") as handle:
        handle.write("\n" + "\n".join(x for x in lines if "noxfile" in x) + "\n")
    return repo


def test_vendor_output_is_short_and_names_what_to_do(tmp_path: Path) -> None:
    repo = tmp_path / "theirrepo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    done = _run([sys.executable, "-m", "invoke", "vendor", "--into", str(repo)], KIT)
    assert done.returncode == 0, done.stderr
    out = done.stdout + done.stderr
    assert "/../" not in out
    # A summary per folder, not one row per file (the kit has about a hundred).
    assert "rocmforge/workdir.py" not in out
    assert len(out.splitlines()) < 40, out
    assert (repo / "third_party/rocmforge/setup.py").is_file()  # pip install of the copy
    pip_line = next(line for line in out.splitlines() if "python -m pip install" in line)
    assert '"invoke>=2.2"' in pip_line and '"pyelftools>=0.31"' in pip_line
    # One line that a shell splits into exactly the requirements of pyproject.toml.
    import shlex

    import tomllib

    wanted = tomllib.loads((KIT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert shlex.split(pip_line.strip())[4:] == wanted
    assert "echo '.rocmforge/' >> .gitignore" in out


@pytest.mark.slow
def test_vendored_nox_sessions_use_the_work_dir_of_invoke_rocm_build(tmp_path: Path) -> None:
    """Issue 18 items 1, 11, 14: `nox -s build` in the vendored repo builds into the work dir
    that invoke.yaml names, `nox -s verify` finds that build, and a `--triton skip` build is
    verified without Triton (the session says so)."""
    sys.path.insert(0, str(KIT / "tests"))
    from test_build_e2e import LLVM22, make_fixture_repo

    repo = _vendored_git_repo(tmp_path)
    (repo / "invoke.yaml").write_text("rocm:\n  work_dir: build-area\n")
    dist = repo / "build-area" / "dist"
    # Nothing built yet: the session says so before it makes a venv.
    nothing = _run([sys.executable, "-m", "nox", "-s", "verify"], repo)
    assert nothing.returncode == 2, nothing.stderr
    assert f"nothing to verify: no manifest.json in {dist}" in nothing.stderr
    assert not list((repo / ".nox").glob("verify*")) if (repo / ".nox").exists() else True
    # The fix text names the vendored task.
    assert "`invoke rocm.build --arch <target>`" in nothing.stderr

    fixture = make_fixture_repo(tmp_path / "pytorch")
    built = _run([sys.executable, "-m", "nox", "-s", "build", "--", "--arch", "gfx1100",
                  "--repo", str(fixture), "--ref", "v2.8.0", "--clang", "22", "--triton", "skip",
                  "--skip-preflight", "--system-site-packages"], repo,
                 ROCMFORGE_BUILD_ENV=f"HIP_CLANG_PATH={LLVM22}", HIP_PLATFORM="amd")
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    manifest = json.loads((dist / "manifest.json").read_text())
    assert manifest["targets"] == ["gfx1100"] and manifest["wheels"]["triton"] == ""
    assert not (repo / "third_party" / "rocmforge" / ".rocmforge").exists()
    # The kit was installed from a copy: no build/ or egg-info in their tree (issue 32 item 7).
    kit = repo / "third_party" / "rocmforge"
    assert not (kit / "build").exists() and not list(kit.glob("*.egg-info"))

    listed = _run([sys.executable, "-m", "nox", "-l", "--json", "-s", "verify"], repo)
    assert [s["session"] for s in json.loads(listed.stdout)] == ["verify(gfx1100)"]
    verified = _run([sys.executable, "-m", "nox", "-s", "verify"], repo)
    assert f"{dist / 'manifest.json'} names no Triton wheel" not in verified.stderr
    assert "Triton was skipped by the build" in verified.stderr, verified.stderr[-3000:]
    # The verify venv is pinned to the wheels under test (issue 33 item 3).
    venv = next((repo / ".nox").glob("verify*"))
    # The venv's pip.conf names the kit's constraint file last (after the user's own, which pip
    # would otherwise have read: this machine's /etc/xdg/pip/pip.conf has one).
    line = next(x for x in (venv / "pip.conf").read_text().splitlines()
                if x.startswith("constraint = "))
    assert line.split()[-1] == str(venv / "rocmforge-constraints.txt"), line
    assert "torch==2.8.0a0" in (venv / "rocmforge-constraints.txt").read_text()
    assert "--only build,arch,static,ops,blas,attention,memory,perf,comm,companions,extensions" \
        in verified.stderr
    # The fix texts of the vendored copy name the tasks as that repo has them.
    broken = _run([sys.executable, "-m", "invoke", "rocm.clean", "--work-dir", str(tmp_path)],
                  repo)
    assert broken.returncode == 2 and "`invoke clean`" not in broken.stderr


def test_fix_texts_name_the_vendored_tasks() -> None:
    from rocmforge.errors import task_names

    text = "Fix: run `invoke build --arch gfx1100` or `invoke --dry checkout` (`invoke rocm.plan`)"
    assert task_names(text, vendored=True) == (
        "Fix: run `invoke rocm.build --arch gfx1100` or `invoke --dry rocm.checkout` "
        "(`invoke rocm.plan`)")
    assert task_names(text, vendored=False) == text
    bare = "install ROCm 7.2, then: invoke doctor --arch gfx1100; users invoke the kit"
    assert task_names(bare, vendored=True) == (
        "install ROCm 7.2, then: invoke rocm.doctor --arch gfx1100; users invoke the kit")


def test_the_task_name_list_is_the_kits() -> None:
    """errors.KIT_TASKS (the bare commands rewritten in a vendored repo) is what Invoke lists."""
    from rocmforge.errors import KIT_TASKS

    listed = subprocess.run([sys.executable, "-m", "invoke", "--list", "--list-format", "json"],
                            cwd=KIT, capture_output=True, text=True, check=True).stdout
    doc = json.loads(listed)
    names = [t["name"] for t in doc["tasks"]]
    names += [f"{c['name']}.{t['name']}" for c in doc["collections"] for t in c["tasks"]]
    assert sorted(KIT_TASKS) == sorted(names)


def test_project_work_dir_reads_invoke_yaml_then_the_environment(tmp_path: Path) -> None:
    from rocmforge.sessions.project import project_work_dir
    from rocmforge.sessions.support import dist_dir

    assert project_work_dir(tmp_path, {}) == tmp_path / ".rocmforge"
    (tmp_path / "invoke.yaml").write_text("rocm:\n  work_dir: build-area\n")
    assert dist_dir(tmp_path, {}) == tmp_path / "build-area" / "dist"
    assert project_work_dir(tmp_path, {"ROCMFORGE_WORK_DIR": "/abs/w"}) == Path("/abs/w")
