"""A preflight stop ends short (issue 41 item 4): the count of FAIL rows, their names, the first
fix and the doctor command that shows them all, as the user types it; the rows and their fixes
are printed once, above it. Before, the stop was a 40-line paragraph at 80 columns repeating
every row and every fix joined by `;`.

Real tools: Debian's ROCm 5.2 here cannot build gfx1100 (6 FAIL rows), on a real terminal
(script(1)) at 80 columns.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.needs_tool("script", "hipcc")]


def _screen(argv: list[str], cwd: Path, cols: int = 80) -> tuple[str, int]:
    env = {**os.environ, "HIP_PLATFORM": "amd", "PYTHONPATH": str(REPO)}
    env.pop("NO_COLOR", None)
    command = f"stty cols {cols} rows 50; {shlex.join(argv)}; echo rc=$?"
    done = subprocess.run(["script", "-qec", command, "/dev/null"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", done.stdout).replace("\r", "")
    rc = int(re.findall(r"^rc=(\d+)$", shown, re.M)[-1])
    return shown, rc


@pytest.mark.parametrize("cols", [80, 120])
def test_a_preflight_stop_ends_with_the_count_the_first_fix_and_how_to_see_all(
        tmp_path: Path, cols: int) -> None:
    invoke = [sys.executable, "-m", "invoke", "-r", str(REPO)]
    screen, rc = _screen([*invoke, "build", "--arch", "gfx1100"], tmp_path, cols)
    assert rc == 1, screen
    stop = screen[screen.index("rocmforge: Preflight found"):screen.index("\nrc=")]
    words = " ".join(stop.split())
    assert words.startswith(
        "rocmforge: Preflight found 6 FAIL rows that would make the build fail: ROCm for "
        "PyTorch, ROCm components, compile gfx1100, device lib gfx1100, kernels rocsparse, "
        "kernels rocrand. Each is shown above with its fix;"), words
    assert ("Fix: first, ROCm for PyTorch: install ROCm 6.4 and pass --rocm-path "
            "/opt/rocm-6.4.x") in words
    assert words.endswith("then all of them with their fixes: `invoke doctor --arch gfx1100`."), \
        words
    lines = stop.splitlines()
    assert len(lines) <= 8, stop  # was 40 at 80 columns
    assert all(len(line) <= cols for line in lines), stop
    # The rows themselves, each fix once, are above the stop; the stop does not repeat them.
    assert "fix: install hiprand: libhiprand-dev (Debian)" in " ".join(screen.split())
    assert "hiprand" not in words
    assert not (tmp_path / ".rocmforge" / "src").exists()
    # The doctor command it names runs as written, and shows the same 6 FAIL rows.
    doctor, code = _screen([*invoke, "doctor", "--arch", "gfx1100"], tmp_path)
    assert code == 1, doctor
    assert "6 FAIL" in doctor


def test_the_doctor_command_carries_the_flags_that_change_its_verdicts() -> None:
    from rocmforge.plan.report import doctor_command
    from rocmforge.settings import Settings

    assert doctor_command(Settings(arch="gfx1100")) == "invoke doctor --arch gfx1100"
    assert doctor_command(Settings(arch="gfx90a;gfx942", rocm_path="/opt/rocm-6.4.1",
                                   pytorch_ref="v2.8.0", gcc=12, allow_compiler=True,
                                   work_dir="/tmp/my work")) == (
        "invoke doctor --arch 'gfx90a;gfx942' --rocm-path /opt/rocm-6.4.1 --ref v2.8.0 "
        "--gcc 12 --allow-compiler --work-dir '/tmp/my work'")


@pytest.mark.parametrize("extra, verdict", [
    ([], "verdict: preflight would stop this build (4 FAIL: ROCm for PyTorch, ROCm components, "
         "kernels rocsparse, kernels rocrand); next: `invoke doctor --arch gfx1100` shows each "
         "fix"),
    (["--skip-preflight"], "verdict: preflight is skipped, nothing stops the build before it "
                           "compiles; next: `invoke -r {repo} build --arch gfx1100 "
                           "--skip-preflight`"),
])
def test_plan_leads_with_the_verdict_and_ends_with_it(tmp_path: Path, extra: list[str],
                                                       verdict: str) -> None:
    """Issue 41 item 5: plan's one line to act on sat at line ~88 of 232 at 80 columns."""
    invoke = [sys.executable, "-m", "invoke", "-r", str(REPO)]
    screen, rc = _screen([*invoke, "plan", "--arch", "gfx1100", *extra], tmp_path)
    assert rc == 0, screen
    lines = screen[:screen.index("\nrc=")].splitlines()
    head = lines[:lines.index("rocmforge plan: settings")]
    assert " ".join(" ".join(head).split()) == verdict.format(repo=REPO), head
    tail = lines[-len(head):]
    assert tail == head, (tail, head)
    assert all(len(line) <= 80 for line in head)


def test_the_doctor_command_carries_the_add_ons() -> None:
    from rocmforge.plan.report import doctor_command
    from rocmforge.settings import Settings

    assert doctor_command(Settings(arch="gfx1100", companions=("xformers", "torchvision"))) == (
        "invoke doctor --arch gfx1100 --with xformers,torchvision")


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_an_add_ons_fail_row_is_shown_by_the_doctor_command_plan_names(tmp_path: Path) -> None:
    """`plan --with xformers` counts "compile job memory xformers"; the doctor command it
    names must take --with and show that row; a bad --with is refused as plan refuses it."""
    repo = tmp_path / "xformers"
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "setup.py").write_text("print(1)\n")
    subprocess.run([*git, "add", "setup.py"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    env = {**os.environ, "HIP_PLATFORM": "amd", "PYTHONPATH": str(REPO), "NO_COLOR": "1",
           "ROCMFORGE_COMPANION_REPOS": f"xformers={repo.as_uri()}"}
    invoke = [sys.executable, "-m", "invoke", "-r", str(REPO)]
    work = tmp_path / "here"
    work.mkdir()
    plan = _run([*invoke, "plan", "--arch", "gfx1100", "--with", "xformers"], work, env)
    assert plan.returncode == 0, plan.stderr
    first = next(line for line in (plan.stderr + plan.stdout).splitlines()
                 if line.startswith("verdict:"))
    assert "compile job memory xformers" in first, first
    assert first.endswith("next: `invoke doctor --arch gfx1100 --with xformers` shows each "
                          "fix"), first
    doctor = _run([*invoke, "doctor", "--arch", "gfx1100", "--with", "xformers"], work, env)
    assert doctor.returncode == 1, doctor.stderr
    row = next(line for line in doctor.stdout.splitlines()
               if line.startswith("compile job memory xformers"))
    assert row.split()[4] == "FAIL", row
    bad_plan = _run([*invoke, "plan", "--arch", "gfx1100", "--with", "nonsense"], work, env)
    bad_doctor = _run([*invoke, "doctor", "--arch", "gfx1100", "--with", "nonsense"], work, env)
    assert (bad_doctor.returncode, bad_doctor.stdout) == (2, "")
    assert bad_doctor.stderr == bad_plan.stderr
    assert bad_doctor.stderr.startswith("rocmforge: 'nonsense' (--with / setting companions) is "
                                        "no companion or extension the kit builds.")
    assert "Traceback" not in bad_doctor.stderr
    assert list(work.iterdir()) == []
