"""Bad input to the build tasks through the real CLI: one paragraph, exit 2, nothing written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rocmforge.execute.stamps import Stamp, write_stamp
from rocmforge.workdir import mark_work_dir

REPO_ROOT = Path(__file__).resolve().parents[2]


def invoke(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120)


def test_unknown_triton_mode_is_exit_2_and_writes_nothing(tmp_path: Path) -> None:
    done = invoke("build", "--arch", "gfx1100", "--work-dir", str(tmp_path / "w"),
                  "--triton", "maybe")
    assert done.returncode == 2
    assert ("Setting triton_mode from flag --triton has the value 'maybe', which is not one of "
            "auto, wheel, source, skip") in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "w").exists()


def test_install_without_a_finished_build_is_exit_2(tmp_path: Path) -> None:
    done = invoke("install", "--work-dir", str(tmp_path / "w"), "--python", sys.executable)
    assert done.returncode == 2
    assert "manifest.json is missing or not a rocmforge manifest" in done.stderr


def test_clean_removes_only_kit_folders(tmp_path: Path) -> None:
    work = tmp_path / "w"
    (work / "logs").mkdir(parents=True)
    (work / "logs" / "configure.log").write_text("-- USE_ROCM : OFF\n")
    (work / "state" / "stamps").mkdir(parents=True)
    (work / "src" / "pytorch" / "build").mkdir(parents=True)
    (work / "notes.txt").write_text("mine")
    mark_work_dir(work / "state")
    done = invoke("clean", "--work-dir", str(work))
    assert done.returncode == 0, done.stderr
    assert not (work / "src" / "pytorch" / "build").exists()
    assert not (work / "state" / "stamps").exists()
    assert (work / "src" / "pytorch").exists()
    # Issue 18 item 10: the logs stay (a fix text says `invoke clean` after a failed configure).
    assert (work / "logs" / "configure.log").read_text() == "-- USE_ROCM : OFF\n"
    assert done.stdout.splitlines() == [f"removed {work / 'src' / 'pytorch' / 'build'}",
                                        f"removed {work / 'state' / 'stamps'}",
                                        f"kept {work / 'logs'}: the build logs (`invoke clean "
                                        "--logs` removes them)"]
    done = invoke("clean", "--logs", "--work-dir", str(work))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"removed {work / 'logs'}"]
    assert not (work / "logs").exists()
    (work / "logs").mkdir()
    done = invoke("clean", "--all", "--work-dir", str(work))
    assert done.returncode == 0
    assert sorted(p.name for p in work.iterdir()) == ["notes.txt"]


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("everything", [False, True])
def test_clean_refuses_a_folder_the_kit_did_not_make(tmp_path: Path, everything: bool) -> None:
    """`--work-dir` pointing at a user's project: its own dist/, logs/, src/ and state/ stay."""
    project = tmp_path / "project"
    for sub in ("dist", "logs", "src/pytorch/build", "state/stamps", "venv"):
        (project / sub).mkdir(parents=True)
    (project / "dist" / "mine.whl").write_text("user's")
    before = _tree(project)
    done = invoke("clean", *(["--all"] if everything else []), "--work-dir", str(project))
    assert done.returncode == 2, done.stdout
    assert (f"rocmforge: {project} is not a work dir the kit made (it has no "
            f"{project / 'state' / 'work-dir'} and no build stamps), so `invoke clean` deletes "
            "nothing there.") in done.stderr
    assert "Traceback" not in done.stderr
    assert _tree(project) == before


def test_clean_of_the_root_folder_is_refused() -> None:
    done = invoke("clean", "--all", "--work-dir", "/")
    assert done.returncode == 2
    assert "rocmforge: / is not a work dir the kit made" in done.stderr


def test_clean_of_a_missing_or_empty_work_dir_is_nothing_to_do(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for folder in (tmp_path / "missing", tmp_path / "empty"):
        done = invoke("clean", "--all", "--work-dir", str(folder))
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"nothing to clean in {folder}"
    assert (tmp_path / "empty").is_dir() and not (tmp_path / "missing").exists()


def test_clean_accepts_a_work_dir_with_stamps_from_before_the_marker(tmp_path: Path) -> None:
    work = tmp_path / "w"
    write_stamp(work / "state", Stamp(step="checkout", digest="d", finished="t", duration_s=1))
    (work / "logs").mkdir()
    done = invoke("clean", "--logs", "--work-dir", str(work))
    assert done.returncode == 0, done.stderr
    assert not (work / "logs").exists() and not (work / "state" / "stamps").exists()


@pytest.mark.parametrize(("flags", "message"), [
    (("--python", "/nonexistent/bin/python"),
     "The interpreter '/nonexistent/bin/python' given with --python does not exist"),
    (("--python", "no-such-python-here"),
     "The interpreter 'no-such-python-here' given with --python does not exist"),
    ((), "The build venv's interpreter {work}/venv/bin/python does not exist. Without --python"),
])
def test_install_bad_interpreter_is_exit_2(tmp_path: Path, flags: tuple[str, ...],
                                           message: str) -> None:
    work = tmp_path / "w"
    done = invoke("install", "--work-dir", str(work), *flags)
    assert done.returncode == 2
    assert f"rocmforge: {message.format(work=work)}" in done.stderr
    assert "Traceback" not in done.stderr
    assert not work.exists()


@pytest.mark.parametrize("ref", ["a b", "v2.9..1", "--upload-pack=x", "main~1", "x.lock", ""])
def test_plan_refuses_a_ref_git_cannot_name(tmp_path: Path, ref: str) -> None:
    done = invoke("plan", "--arch", "gfx1100", "--work-dir", str(tmp_path / "w"), f"--ref={ref}")
    if ref == "":  # an empty flag means "not given": the setting's default ref is used
        assert done.returncode == 0, done.stderr
        return
    assert done.returncode == 2, done.stdout
    assert f"rocmforge: {ref!r} (setting pytorch_ref) cannot be a git tag, branch or commit" \
        in done.stderr
    assert not (tmp_path / "w").exists()


def test_plan_notes_a_ref_outside_the_version_table(tmp_path: Path) -> None:
    done = invoke("plan", "--arch", "gfx1100", "--work-dir", str(tmp_path / "w"),
                  "--ref", "not-a-version")
    assert done.returncode == 0, done.stderr
    assert ("note: 'not-a-version' is not a release the kit's version table knows: it is built "
            "with the newest row's facts, and the checkout step stops (exit 2) if the "
            "repository has no such tag or branch") in done.stderr
    assert not (tmp_path / "w").exists()


def _plan_json(*args: str, env: dict[str, str] | None = None) -> dict:
    import json
    import os

    done = subprocess.run([sys.executable, "-m", "invoke", "plan", "--arch", "gfx1100", "--json",
                           *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_triton_mode_comes_from_the_setting_and_the_flag(tmp_path: Path) -> None:
    work = str(tmp_path / "w")
    from_env = _plan_json("--work-dir", work, env={"ROCMFORGE_TRITON_MODE": "wheel"})
    steps = {s["name"]: s for s in from_env["steps"]}
    assert steps["triton"]["argv"] == ["triton", "wheel", f"{work}/venv/bin/python"]
    assert from_env["settings"]["triton_mode"] == "wheel"
    from_flag = _plan_json("--work-dir", work, "--triton", "skip", "--system-site-packages",
                           env={"ROCMFORGE_TRITON_MODE": "wheel"})
    steps = {s["name"]: s for s in from_flag["steps"]}
    assert steps["triton"]["argv"][1] == "skip"
    assert "--system-site-packages" in steps["venv"]["argv"]
    assert not (tmp_path / "w").exists()


def test_env_triton_mode_typo_is_exit_2() -> None:
    import os

    done = subprocess.run([sys.executable, "-m", "invoke", "plan", "--arch", "gfx1100"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "ROCMFORGE_TRITON_MODE": "wheels"})
    assert done.returncode == 2
    assert "Setting triton_mode from ROCMFORGE_TRITON_MODE has the value 'wheels'" in done.stderr


@pytest.mark.needs_tool("gcc-12", "hipcc")
def test_compiler_outside_the_table_is_refused_by_preflight(tmp_path: Path) -> None:
    """Debian's ROCm 5.2 here: GCC 12 is a WARN of the shared policy, so the build refuses it
    (issue 3 item 4) with both fixes; --allow-compiler keeps it (a WARN row, no FAIL)."""
    # Debian's ROCm 5.2 is also too old for PyTorch 2.9 and lacks most components: those two
    # rows FAIL either way; the compiler row is the one --allow-compiler changes.
    # (plan is for gfx1100: Debian's rocSPARSE and rocRAND hold no gfx1100 code, two more.)
    rocm_rows = ["ROCm for PyTorch", "ROCm components", "kernels rocsparse", "kernels rocrand"]
    refused = _plan_json("--gcc", "12", "--work-dir", str(tmp_path / "w"))
    assert refused["steps"][0]["inputs"]["fail_rows"] == [*rocm_rows, "host compiler"]
    allowed = _plan_json("--gcc", "12", "--allow-compiler", "--work-dir", str(tmp_path / "w"))
    assert allowed["steps"][0]["inputs"]["fail_rows"] == rocm_rows
    # gfx90a: the one target Debian's ROCm 5.2 can build, so no target row fails.
    done = invoke("build", "--arch", "gfx90a", "--gcc", "12", "--work-dir",
                  str(tmp_path / "w"))
    assert done.returncode == 1
    assert ("Preflight found 3 FAIL rows that would make the build fail: ROCm for PyTorch, "
            "ROCm components, host compiler.") in done.stderr
    # The row and its fix are shown once, above the stop (issue 41 item 4).
    assert "FAIL  host compiler" in done.stdout
    shown = " ".join(done.stdout.split())
    assert "GCC 12.2.0 is newer than the kit's choice for ROCm 5.2" in shown
    assert ("fix: invoke toolchain --gcc 11 (or --allow-compiler to keep GCC 12); for this "
            "build only: `invoke build --arch gfx90a --gcc 11`") in shown
    assert not (tmp_path / "w" / "src").exists()


def test_plan_prints_plain_tables_when_not_a_tty(tmp_path: Path) -> None:
    import os

    done = subprocess.run([sys.executable, "-m", "invoke", "plan", "--arch", "gfx1100",
                           "--work-dir", str(tmp_path / "w"), "--triton", "skip"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "rocmforge plan: settings"
    assert lines[1].split() == ["setting", "value"]
    assert lines[3].split() == ["targets", "gfx1100"]
    assert any(line.split()[:2] == ["triton_mode", "skip"] for line in lines)
    header = lines.index("steps") + 1
    assert lines[header].split() == ["#", "step", "state", "command", "why"]
    first = lines[header + 2].split()
    assert first[:5] == ["1", "preflight", "to", "run", "[python]"]
    assert "\x1b[" not in done.stdout
    assert "note: Triton is skipped (triton_mode = skip)" in done.stderr


def test_build_preflight_runs_the_real_compile_probe(tmp_path: Path) -> None:
    """Debian's ROCm 5.2 has no device library for gfx1100: the build stops before checkout."""
    done = invoke("build", "--arch", "gfx1100", "--gcc", "11", "--work-dir", str(tmp_path / "w"))
    assert done.returncode == 1
    assert "FAIL  compile gfx1100: this ROCm has no device library for gfx1100" in done.stdout
    # 4 toolchain problems, and Debian's rocSPARSE and rocRAND hold no gfx1100 code.
    assert "Preflight found 6 FAIL rows that would make the build fail: ROCm for PyTorch" \
        in done.stderr
    assert ", compile gfx1100, device lib gfx1100," in done.stderr
    assert "FAIL  kernels rocsparse: " in done.stdout and "FAIL  kernels rocrand: " in done.stdout
    # The stop names the first fix and how to see all, not every fix again.
    assert "cannot build gfx1100" not in done.stderr, done.stderr
    assert "`invoke doctor --arch gfx1100 --gcc 11 --work-dir " in done.stderr
    assert not (tmp_path / "w" / "src").exists()


def test_a_work_dir_under_a_missing_folder_is_bad_input_and_creates_nothing(tmp_path: Path) -> None:
    """Issue 32 item 9: `--work-dir /nonexistent/dir/x` silently created the whole path."""
    work = tmp_path / "missing" / "deeper" / "w"
    done = invoke("build", "--arch", "gfx90a", "--skip-preflight", "--work-dir", str(work))
    assert done.returncode == 2, done.stderr
    assert (f"The work dir {work} cannot be made: the folder {work.parent} does not exist"
            in done.stderr)
    assert not (tmp_path / "missing").exists()
