"""A repository that vendors the kit: its own tasks stay, and every command the kit prints
there names the kit's tasks as that repository reaches them (`invoke rocm.<task>`).

Real `invoke vendor` into a throwaway git repository, the printed lines added where they say,
then the repository's tasks run with real invoke (issue 41 items 1 and 2).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

KIT = Path(__file__).resolve().parents[2]

# The two common shapes of a tasks.py: plain @task functions (Invoke collects them itself), and
# an explicit root collection.
ONLY_TASKS = '''from invoke import task


@task
def hello(c):
    """Their own task."""
    print("hello from theirs")
'''

EXPLICIT_NS = '''from invoke import Collection, task


@task
def hello(c):
    """Their own task."""
    print("hello from theirs")


@task
def build(c):
    """Their own build, not the kit's."""
    print("their build")


ns = Collection(hello, build)
'''

# `invoke <task>` as printed: options, then a task name. In the vendored repo every one of them
# must be `rocm.<task>` (the repository's own `build` is another program).
_COMMAND = re.compile(r"\binvoke((?: --?[a-z][a-z-]*)*) ([a-z][\w.-]*)")


def _run(argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "NO_COLOR": "1", "HIP_PLATFORM": "amd", **env}
    for name in ("ROCMFORGE_CONFIG_DIR", "ROCMFORGE_TASK_PREFIX", "COLUMNS"):
        full.pop(name, None)
    return subprocess.run(argv, cwd=cwd, env=full, capture_output=True, text=True, timeout=300)


def _invoke(repo: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "invoke", *args], repo, **env)


def vendored_repo(root: Path, tasks_py: str) -> Path:
    """`invoke vendor --into` a new git repository holding `tasks_py`, and the lines it prints
    for tasks.py appended to that file, literally."""
    repo = root / "theirs"
    repo.mkdir(parents=True)
    (repo / "tasks.py").write_text(tasks_py)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    done = _run([sys.executable, "-m", "invoke", "vendor", "--into", str(repo)], KIT)
    assert done.returncode == 0, done.stderr
    printed = done.stderr.split(
        "Add to that repo's tasks.py / noxfile.py (each line whole):\n", 1)[1]
    printed = printed.split("\nThen ", 1)[0]  # the setup hints' commands follow
    lines = [line[4:] for line in printed.splitlines() if line.startswith("    ")]
    tasks_lines = [line for line in lines if "noxfile" not in line]
    assert tasks_lines == ["import rocm_tasks  # at the end of tasks.py",
                           "ns = rocm_tasks.mount(globals())"]
    with (repo / "tasks.py").open("a") as handle:
        handle.write("\n" + "\n".join(tasks_lines) + "\n")
    nox_lines = [line for line in lines if "noxfile" in line]
    (repo / "noxfile.py").write_text("import nox  # noqa: F401\n\n" + "\n".join(nox_lines) + "\n")
    return repo


def unprefixed(text: str) -> list[str]:
    """Each printed `invoke <task>` that does not name a `rocm.` task."""
    return [m.group() for m in _COMMAND.finditer(text) if not m.group(2).startswith("rocm.")]


@pytest.mark.slow
@pytest.mark.parametrize("shape", [ONLY_TASKS, EXPLICIT_NS], ids=["only-tasks", "explicit-ns"])
def test_the_printed_lines_keep_their_tasks_and_add_the_kit(tmp_path: Path, shape: str) -> None:
    repo = vendored_repo(tmp_path, shape)
    listed = _invoke(repo, "--list")
    assert listed.returncode == 0, listed.stderr
    rows = [line for line in listed.stdout.splitlines()[2:] if line.strip()]
    names = [line.split()[0] for line in rows]
    assert "hello" in names and "rocm.build" in names and "rocm.triton.pin" in names
    # Piped, Invoke wraps at 80 columns: each task's line is one whole sentence, none wrapped.
    assert all(re.fullmatch(r"  [\w.-]+ +\S.*\.", row) and len(row) <= 80 for row in rows), rows
    hello = _invoke(repo, "hello")
    assert (hello.returncode, hello.stdout) == (0, "hello from theirs\n"), hello.stderr
    plan = _invoke(repo, "rocm.plan", "--arch", "gfx1100", "--json", "-w", str(tmp_path / "w"))
    assert plan.returncode == 0, plan.stderr
    if shape == EXPLICIT_NS:  # their `build` is theirs; the kit's is rocm.build
        assert _invoke(repo, "build").stdout == "their build\n"


def test_each_task_opens_with_one_short_sentence() -> None:
    """`invoke --list` shows a docstring's first line: a whole sentence, short enough that
    Invoke never wraps it at 80 columns (the longest vendored name, rocm.triton.checkout,
    leaves 54), and with no command in it (Invoke's wrapping would split one)."""
    from invoke import Collection

    from rocmforge.tasks import ns

    def firsts(collection: Collection) -> list[str]:
        lines = [str(t.__doc__).strip().splitlines()[0] for t in collection.tasks.values()]
        for sub in collection.collections.values():
            lines += firsts(sub)
        return lines

    lines = firsts(ns)
    assert len(lines) == 18
    assert [line for line in lines
            if not (line.endswith(".") and len(line) <= 54 and "`" not in line)] == []


def test_mount_keeps_an_explicit_namespace_and_collects_bare_tasks() -> None:
    from invoke import Collection, task

    from rocmforge.errors import TASK_PREFIX_ENV
    from rocmforge.tasks import mount, ns

    @task
    def hello(c: object) -> None:
        """Theirs."""

    saved = os.environ.get(TASK_PREFIX_ENV)
    try:
        bare = mount({"hello": hello, "alias": hello, "__name__": "tasks"})
        assert sorted(bare.tasks) == ["hello"] and bare.collections["rocm"] is ns
        theirs = Collection("theirs", hello)
        assert mount({"ns": theirs, "hello": hello}) is theirs
        assert sorted(theirs.collections) == ["rocm"] and sorted(theirs.tasks) == ["hello"]
        assert os.environ[TASK_PREFIX_ENV] == "rocm."
    finally:
        if saved is None:
            os.environ.pop(TASK_PREFIX_ENV, None)
        else:
            os.environ[TASK_PREFIX_ENV] = saved


@pytest.mark.slow
def test_every_command_the_kit_prints_there_names_a_rocm_task(tmp_path: Path) -> None:
    """Issue 41 item 1: triage fixes, clean's note, verify's paragraph, doctor's and preflight's
    fixes, plan, env, `--list` and `--help` in the vendored repo: no `invoke <task>` without
    `rocm.`, and the messages the issue names say `invoke rocm.<task>`."""
    repo = vendored_repo(tmp_path / "repo", ONLY_TASKS)
    work = tmp_path / "work"
    (work / "state").mkdir(parents=True)
    (work / "state" / "work-dir").touch()  # a work dir the kit made, with a log to keep
    (work / "logs").mkdir()
    (work / "logs" / "configure.log").write_text("log\n")
    oom = tmp_path / "oom.log"
    oom.write_text("FAILED: torch_cuda.cpp.o\n"
                   "c++: fatal error: Killed signal terminated program cc1plus\n"
                   "ninja: build stopped: subcommand failed.\n")
    # A Python without torch (this one has it): a torch package that is not there.
    no_torch = tmp_path / "no_torch"
    (no_torch / "torch").mkdir(parents=True)
    (no_torch / "torch" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n")
    pythonpath = os.pathsep.join([str(no_torch), os.environ.get("PYTHONPATH", "")])

    runs: dict[str, tuple[tuple[str, ...], dict[str, str], str]] = {
        "triage": (("rocm.triage", str(oom)), {}, "ROCMFORGE_MAX_JOBS=4 invoke rocm.build"),
        "clean": (("rocm.clean", "-w", str(work)), {}, "`invoke rocm.clean --logs`"),
        "verify": (("rocm.verify",), {"PYTHONPATH": pythonpath},
                   "`invoke rocm.install --python"),
        "doctor": (("rocm.doctor", "--arch", "gfx1100", "-w", str(work)), {},
                   "invoke rocm.doctor --arch gfx1100"),
        "build": (("rocm.build", "--arch", "gfx1100", "-w", str(work)), {},
                  "`invoke rocm.doctor --arch gfx1100"),
        "unknown target": (("rocm.build", "--arch", "gfx9999", "-w", str(work)), {},
                           "is not a GPU target the kit knows"),
        "plan": (("rocm.plan", "--arch", "gfx1100", "-w", str(work)), {}, "invoke rocm."),
        "env": (("rocm.env", "--arch", "gfx1100", "-w", str(work)), {}, ""),
        "list": (("--list",), {}, "rocm.build"),
        "help env": (("--help", "rocm.env"), {}, "invoke rocm.env"),
        "help build": (("--help", "rocm.build"), {}, "`invoke --dry rocm.build`"),
    }
    seen: dict[str, list[str]] = {}
    for name, (args, env, expected) in runs.items():
        done = _invoke(repo, *args, **env)
        shown = done.stdout + done.stderr
        assert "Traceback" not in shown, (name, shown[-2000:])
        assert expected in shown, (name, shown[-3000:])
        seen[name] = unprefixed(shown)
    assert seen == {name: [] for name in runs}


@pytest.mark.slow
def test_nox_build_there_names_the_rocm_tasks(tmp_path: Path) -> None:
    """`nox -s build` runs `rocmforge build` from a copy of the kit in a fresh venv: its
    preflight stop names `invoke rocm.doctor` too."""
    repo = vendored_repo(tmp_path / "repo", ONLY_TASKS)
    done = _run([sys.executable, "-m", "nox", "-s", "build", "--", "--arch", "gfx1100",
                 "--system-site-packages", "-w", str(tmp_path / "work")], repo)
    shown = done.stdout + done.stderr
    assert done.returncode == 1, shown[-3000:]
    assert "`invoke rocm.doctor --arch gfx1100" in shown, shown[-3000:]
    assert unprefixed(shown) == []
