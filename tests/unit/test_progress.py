"""The live line's progress for a long step: ninja's `[N/M]` read into percent and an ETA at the
rate since the first progress line of this run (issue 32: users want to see how far the build
is and how long it will take)."""

from __future__ import annotations

import io

from rocmforge.execute.progress import Progress, duration


def test_ninja_lines_give_percent_and_an_eta_from_this_runs_rate() -> None:
    progress = Progress()
    assert progress.text() == ""
    assert not progress.feed("-- Configuring done", 0.0)
    # A resumed build starts at its own N: the rate counts from there, not from 0.
    assert progress.feed("[4000/8094] Building HIP object caffe2/x.hip.o", 100.0)
    assert progress.text() == "[4000/8094] 49%"  # no rate yet
    assert progress.feed("[4100/8094] Building HIP object caffe2/y.hip.o", 200.0)
    # 100 edges in 100 s: 3,994 left at 1/s.
    assert progress.eta_s() == 3994.0
    assert progress.text() == "[4100/8094] 51%  ETA 1 h 7 min"
    assert not progress.feed("[9/8] nonsense", 300.0)


def test_make_percent_lines_and_durations() -> None:
    progress = Progress()
    assert progress.feed("[ 10%] Building CXX object a.o", 0.0)
    assert progress.feed("[ 20%] Building CXX object b.o", 60.0)
    assert progress.text() == "20%  ETA 8 min"
    assert (duration(30), duration(600), duration(4380)) == ("30 s", "10 min", "1 h 13 min")


def test_the_live_line_shows_it_and_a_plain_console_gets_a_line_every_few_minutes(
        monkeypatch) -> None:
    from rocmforge.execute import runner

    live = io.StringIO()
    line = runner._LiveLine(live, "[15/17] build", live=True)
    line.REDRAW_S = 0.0  # every write redraws (the real line redraws at most every 0.1 s)
    line.write("[10/100] Building a\n")
    line.write("[20/100] Building b\n")
    assert "[15/17] build" in live.getvalue() and "[20/100] 20%" in live.getvalue()
    plain = io.StringIO()
    clock = iter([0.0, 0.0, 400.0, 400.0])
    monkeypatch.setattr(runner.time, "monotonic", lambda: next(clock))
    quiet = runner._LiveLine(plain, "[15/17] build", live=False)
    quiet.write("[10/100] Building a\n")
    assert plain.getvalue() == ""  # not yet: a line every few minutes only
    quiet.write("[20/100] Building b\n")
    assert plain.getvalue() == "[15/17] build  7 min  [20/100] 20%  ETA 53 min\n"


def test_the_closing_line_gives_the_longest_steps_first() -> None:
    from rocmforge.execute.actions import StepResult
    from rocmforge.execute.progress import step_times

    results = [StepResult(name=n, status=st, duration_s=d, digest="") for n, st, d in (
        ("preflight", "ran", 0.4), ("checkout", "skipped", 30.0), ("configure", "ran", 250.0),
        ("build", "ran", 10_920.0), ("collect", "ran", 2.0), ("hipify", "ran", 95.0),
        ("install", "ran", 12.0), ("venv", "ran", 3.0))]
    assert step_times(results) == (" (build 3 h 2 min, configure 4 min, hipify 2 min, install "
                                   "12 s, venv 3 s, 2 more)")
    assert step_times(results[1:2]) == ""
