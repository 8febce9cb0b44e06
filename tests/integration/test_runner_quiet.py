"""Issue 18 item 3: the console gets the step lines; a step's output goes to its log only
(`verbose=True` tees it to the console as before); a terminal gets one live line per step."""

from __future__ import annotations

import io
import shlex
import sys
from pathlib import Path

import pytest
from invoke import Config, Context

from rocmforge.errors import StepFailed
from rocmforge.execute.actions import ActionContext
from rocmforge.execute.model import Plan, Step
from rocmforge.execute.runner import StepRunner
from rocmforge.workdir import workdir_for

PY = sys.executable
NOISY = "for i in range(500): print('wheel tag', i)"


def _runner(tmp: Path, steps: tuple[Step, ...], console: io.StringIO, *, verbose: bool = False,
            actions=None) -> StepRunner:
    plan = Plan(settings={}, targets=("gfx1100",), steps=steps)
    return StepRunner(Context(Config()), plan, workdir_for(tmp / "work"), console=console,
                      actions=actions or {}, resume_hint="run `invoke build` again",
                      verbose=verbose)


def test_quiet_console_has_step_lines_and_the_log_has_the_output(tmp_path: Path) -> None:
    console = io.StringIO()
    steps = (Step(name="noisy", argv=(PY, "-c", NOISY), why="print 500 lines"),)
    _runner(tmp_path, steps, console).execute()
    lines = console.getvalue().splitlines()
    assert lines[0] == "==> [1/1] noisy: print 500 lines"
    assert lines[1] == "+ " + shlex.join((PY, "-c", NOISY))
    assert lines[2].startswith("[1/1] noisy ... ") and lines[2].endswith(" s")
    assert len(lines) == 3
    log = (tmp_path / "work" / "logs" / "noisy.log").read_text()
    assert "wheel tag 0\n" in log and "wheel tag 499\n" in log


def test_verbose_tees_the_output_to_the_console(tmp_path: Path) -> None:
    console = io.StringIO()
    steps = (Step(name="noisy", argv=(PY, "-c", NOISY), why="print 500 lines"),)
    _runner(tmp_path, steps, console, verbose=True).execute()
    assert console.getvalue().count("wheel tag ") == 500


def test_failed_command_step_shows_the_triage_not_the_whole_output(tmp_path: Path) -> None:
    console = io.StringIO()
    script = NOISY + "\nimport sys; print('error: the thing broke'); sys.exit(3)"
    steps = (Step(name="breaks", argv=(PY, "-c", script), why="fail"),)
    with pytest.raises(StepFailed, match="exited with status 3"):
        _runner(tmp_path, steps, console).execute()
    out = console.getvalue()
    assert "most relevant lines of" in out
    assert "    error: the thing broke" in out
    assert out.count("wheel tag ") <= 30


def test_failed_in_process_step_shows_its_output(tmp_path: Path) -> None:
    def refuse(ctx: ActionContext) -> None:
        ctx.log.write("FAIL  host compiler: gcc 99 is not in the table\n")
        raise StepFailed("Preflight found a FAIL", "see the rows above", "fix them")

    console = io.StringIO()
    steps = (Step(name="preflight", kind="python", argv=("refuse",), why="checks"),)
    with pytest.raises(StepFailed):
        _runner(tmp_path, steps, console, actions={"refuse": (refuse, "refuses")}).execute()
    assert "    FAIL  host compiler: gcc 99 is not in the table" in console.getvalue()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("columns", ["80", "200"])
def test_terminal_gets_a_live_line_that_is_cleared(tmp_path: Path, monkeypatch,
                                                   columns: str) -> None:
    # The console's width is the test's (COLUMNS), never the terminal pytest runs in.
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("COLUMNS", columns)
    console = _Terminal()
    steps = (Step(name="noisy", argv=(PY, "-c", "print('compiling kernel.hip')"), why="one"),)
    _runner(tmp_path, steps, console).execute()
    out = console.getvalue()
    assert "\r\x1b[K[1/1] noisy  " in out and "compiling kernel.hip" in out
    # The live line is wiped before the status line, which starts a clean row.
    assert "\r\x1b[K\x1b[1;32m[1/1] noisy ... " in out


def test_the_live_line_is_cut_at_the_consoles_width(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("COLUMNS", "40")
    console = _Terminal()
    steps = (Step(name="noisy", argv=(PY, "-c", "print('x' * 100)"), why="one"),)
    _runner(tmp_path, steps, console).execute()
    drawn = [part for part in console.getvalue().split("\r\x1b[K") if part.startswith("[1/1]")]
    assert drawn and all(len(part) == 39 for part in drawn), drawn


def test_a_notice_reaches_the_quiet_console_and_the_log(tmp_path: Path) -> None:
    def warn(ctx: ActionContext) -> None:
        ctx.say("an ordinary line")
        ctx.notice("Triton skipped (triton_mode = skip): torch.compile will not work")

    console = io.StringIO()
    steps = (Step(name="triton", kind="python", argv=("warn",), why="triton"),)
    _runner(tmp_path, steps, console, actions={"warn": (warn, "warns")}).execute()
    out = console.getvalue()
    assert "    Triton skipped (triton_mode = skip): torch.compile will not work\n" in out
    assert "an ordinary line" not in out
    log = (tmp_path / "work" / "logs" / "triton.log").read_text()
    assert "an ordinary line\nTriton skipped" in log
