"""Every output that prints exports is evaluable (issue 18 item 8), run for real in the shells:
`eval "$(invoke toolchain --gcc 11)"` in bash and dash sets CC/CXX to the real gcc-11 (the
header and notes are `#` comments); `invoke env` in its sh form (bash, dash), fish form (fish,
`| source`) and github form ($GITHUB_ENV lines, read back as KEY=value)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocmforge.render import wrap_whole
from rocmforge.toolchain.cli import choice_script
from rocmforge.toolchain.select import CompilerChoice

REPO = Path(__file__).resolve().parents[2]
INVOKE = f"{sys.executable} -m invoke"


def sandbox_env(root: Path) -> dict[str, str]:
    """update-alternatives state in temp dirs (as test_toolchain_system.py): the toolchain
    task reads the sandbox, never the machine's groups."""
    for sub in ("alt", "adm", "links"):
        (root / sub).mkdir(exist_ok=True)
    return dict(os.environ, NO_COLOR="1", HIP_PLATFORM="amd", PYTHONPATH=str(REPO),
                ROCMFORGE_ALTERNATIVES_ALTDIR=str(root / "alt"),
                ROCMFORGE_ALTERNATIVES_ADMINDIR=str(root / "adm"),
                ROCMFORGE_ALTERNATIVES_LINK_DIR=str(root / "links"),
                ROCMFORGE_WORK_DIR=str(root / "work"))


def in_shell(shell: str, script: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([shell, "-c", script], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.needs_tool("gcc-11", "g++-11", "update-alternatives")
@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_eval_toolchain_gcc_11_sets_cc_and_cxx(tmp_path: Path, shell: str) -> None:
    env = sandbox_env(tmp_path)
    done = in_shell(shell, f'eval "$({INVOKE} toolchain --gcc 11)" && echo "$CC|$CXX"', env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "/usr/bin/gcc-11|/usr/bin/g++-11\n"
    # The compiler the shell now names is the real gcc-11.
    version = in_shell(shell, f'eval "$({INVOKE} toolchain --gcc 11)" && "$CC" -dumpversion',
                       env)
    assert version.stdout.strip().split(".")[0] == "11", version.stderr


@pytest.mark.needs_tool("gcc-11", "g++-11", "update-alternatives")
def test_toolchain_output_is_exports_and_comments_only(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "invoke", "toolchain", "--gcc", "11"], cwd=REPO,
                          env=sandbox_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:3] == ["# Build compilers (--gcc 11): gcc " + lines[0].rsplit(" ", 1)[1],
                         "export CC=/usr/bin/gcc-11", "export CXX=/usr/bin/g++-11"]
    assert all(line.startswith(("# ", "export ")) for line in lines), lines


@pytest.mark.needs_tool("clang-22", "clang++-22")
def test_eval_toolchain_clang_keeps_its_flags_as_comments(tmp_path: Path) -> None:
    """clang's extra flags and notes are lines a shell must not run: they are comments.
    Clang 22 is not the kit's choice for Debian's ROCm 5.2: without --allow-compiler toolchain
    refuses it as the build would (issue 32 item 6), and `eval` then sets nothing."""
    refused = in_shell("bash", f'out="$({INVOKE} toolchain --clang 22)" && eval "$out"; '
                       'echo "rc=$? CC=${CC:-unset}"', {**sandbox_env(tmp_path), "CC": ""})
    assert refused.stdout.strip() == "rc=2 CC=unset", refused.stdout + refused.stderr
    assert "Clang 22.1.8 is not a compiler the build accepts for ROCm 5.2" in refused.stderr
    done = in_shell("bash", f'out="$({INVOKE} toolchain --clang 22 --allow-compiler)" && '
                    'eval "$out" && echo "$CC" && printf "%s\\n" "$out" | grep -c "^# "',
                    sandbox_env(tmp_path))
    assert done.returncode == 0, done.stderr
    cc, comments = done.stdout.split()
    assert cc == "/usr/bin/clang-22"
    assert int(comments) >= 2  # the header and at least the --gcc-install-dir flag line


def test_choice_script_runs_nothing_but_its_exports(tmp_path: Path) -> None:
    """A note with a line break and a command substitution stays a comment when evaluated."""
    marker = tmp_path / "ran"
    choice = CompilerChoice(kind="clang", major=22, version="22.1.8",
                            cc=Path("/usr/bin/clang-22"), cxx=Path("/usr/bin/clang++ 22"),
                            extra_flags=("--gcc-install-dir=/usr/lib/gcc/x86_64-linux-gnu/12",),
                            notes=(f"a note\nover two lines; $(touch {marker})",),
                            reason="--clang 22")
    script = choice_script(choice)
    assert script.splitlines() == [
        "# Build compilers (--clang 22): clang 22.1.8",
        "export CC=/usr/bin/clang-22",
        "export CXX='/usr/bin/clang++ 22'",
        "# clang flags: --gcc-install-dir=/usr/lib/gcc/x86_64-linux-gnu/12",
        *wrap_whole(f"a note over two lines; $(touch {marker})", 80,
                    initial_indent="# note: ", subsequent_indent="#   "),
    ]
    assert all(line.startswith("#") for line in script.splitlines()[3:])
    done = subprocess.run(["bash", "-c", 'eval "$1" && printf "%s|%s" "$CC" "$CXX"', "bash",
                           script], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "/usr/bin/clang-22|/usr/bin/clang++ 22"
    assert not marker.exists()


def test_a_long_note_is_wrapped_at_80_columns_as_comments() -> None:
    """`invoke toolchain`'s "# note: the ROCm clang (LLVM 15) has no --gcc-install-dir; …" was
    one 120-column line."""
    note = ("the ROCm clang (LLVM 15) has no --gcc-install-dir; hipcc uses the newest GCC "
            "installation (GCC 12) for libstdc++")
    choice = CompilerChoice(kind="gcc", major=11, version="11.3.0", cc=Path("/usr/bin/gcc-11"),
                            cxx=Path("/usr/bin/g++-11"), notes=(note,), reason="--gcc 11")
    assert choice_script(choice).splitlines()[-2:] == [
        "# note: the ROCm clang (LLVM 15) has no --gcc-install-dir; hipcc uses the newest",
        "#   GCC installation (GCC 12) for libstdc++"]


@pytest.mark.needs_tool("gcc-11", "g++-11")
@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_eval_env_sh_sets_the_build_environment(tmp_path: Path, shell: str) -> None:
    done = in_shell(shell, f'eval "$({INVOKE} env --arch gfx1100 --gcc 11)" && '
                    'echo "$CC|$CXX|$PYTORCH_ROCM_ARCH|$USE_ROCM"', sandbox_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "/usr/bin/gcc-11|/usr/bin/g++-11|gfx1100|1\n"


@pytest.mark.needs_tool("fish", "gcc-11")
def test_env_fish_is_sourced_by_fish(tmp_path: Path) -> None:
    done = in_shell("fish", f"{INVOKE} env --arch gfx1100 --gcc 11 --format fish | source; "
                    'and echo "$CC|$PYTORCH_ROCM_ARCH"', sandbox_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "/usr/bin/gcc-11|gfx1100\n"


@pytest.mark.needs_tool("gcc-11")
def test_env_github_lines_read_back_as_the_json_form(tmp_path: Path) -> None:
    """$GITHUB_ENV's KEY=value lines hold exactly the variables of the JSON form."""
    env = sandbox_env(tmp_path)
    run = [sys.executable, "-m", "invoke", "env", "--arch", "gfx1100", "--gcc", "11"]
    github = subprocess.run([*run, "--format", "github"], cwd=REPO, env=env, capture_output=True,
                            text=True, timeout=120)
    as_json = subprocess.run([*run, "--format", "json"], cwd=REPO, env=env, capture_output=True,
                             text=True, timeout=120)
    assert github.returncode == as_json.returncode == 0, github.stderr + as_json.stderr
    read = dict(line.split("=", 1) for line in github.stdout.splitlines())
    assert read == json.loads(as_json.stdout)
    assert read["CC"] == "/usr/bin/gcc-11"
