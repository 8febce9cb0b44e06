"""Every compiler fix the kit prints is a command the kit accepts on the machine that printed it
(issue 41 item 7: `invoke toolchain --clang` suggested `invoke toolchain --clang 16`, which
ROCm 5.2 then refused with exit 2).

Real tools: this machine's ROCm, gcc-11/12 and clang-15/16/22. Each case asks `invoke
toolchain` or `invoke doctor` for something the build refuses, collects every `invoke ...`
command its message suggests, runs each one here, and asserts none is refused as bad input
(exit 2). A build command runs under `invoke --dry` (its flags are checked, nothing is built).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from test_eval_exports import REPO, sandbox_env

pytestmark = pytest.mark.needs_tool("gcc-11", "gcc-12", "clang-15", "clang-16", "hipcc")

# What a message suggests: a command in backticks, or a fix that starts with one.
_QUOTED = re.compile(r"`(invoke [^`]+)`")
_BARE = re.compile(r"(?:Fix: |\s{2})(invoke toolchain --(?:gcc|clang) \d+)")
_KEEP = re.compile(r"\(or --allow-compiler to keep (GCC|Clang) (\d+)\)")


def _invoke(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


def suggested(text: str) -> list[list[str]]:
    """The invoke commands `text` tells the user to run, as argv after `invoke`."""
    found = [m.group(1) for m in _QUOTED.finditer(text)]
    found += [m.group(1) for m in _BARE.finditer(text)]
    found += [f"invoke toolchain --{'gcc' if m.group(1) == 'GCC' else 'clang'} {m.group(2)} "
              "--allow-compiler" for m in _KEEP.finditer(text)]
    out: list[list[str]] = []
    for command in found:
        if "<" in command:
            continue  # a template (`--rocm-path /opt/rocm-<version>`): the user fills it in
        argv = shlex.split(command)[1:]
        if argv[0] == "toolchain" and len(argv) == 1:
            continue  # `invoke toolchain` alone lists; tested below as well
        if argv[0] == "build":
            argv = ["--dry", *argv]
        if argv not in out:
            out.append(argv)
    return out


@pytest.mark.parametrize("asked", [
    ["toolchain", "--clang"],
    ["toolchain", "--gcc"],
    ["toolchain", "--clang", "16"],
    ["toolchain", "--clang", "22"],
    ["toolchain", "--gcc", "12"],
    ["doctor", "--arch", "gfx1100", "--clang", "16"],
    ["doctor", "--arch", "gfx1100", "--gcc", "12"],
])
def test_each_suggested_compiler_command_is_accepted(tmp_path: Path, asked: list[str]) -> None:
    env = sandbox_env(tmp_path)
    env["COLUMNS"] = "400"  # doctor's fix column on one line, so a command is read whole
    done = _invoke(asked, env)
    text = done.stdout + done.stderr
    assert done.returncode in (1, 2), text  # each asks for something the build refuses
    commands = suggested(text)
    assert any(a[0] == "toolchain" for a in commands), text  # the message names a way out
    for argv in commands:
        ran = _invoke(argv, env)
        assert ran.returncode != 2, (asked, argv, ran.stdout[-2000:] + ran.stderr[-2000:])
        assert "Traceback" not in ran.stderr


def test_missing_version_suggests_an_installed_accepted_compiler(tmp_path: Path) -> None:
    """On this machine's ROCm (5.2: GCC 11 or Clang 15) the example is one the build accepts,
    not the Clang 16 the message named before."""
    done = _invoke(["toolchain", "--clang"], sandbox_env(tmp_path))
    assert done.returncode == 2
    assert "ROCm 5.2" in done.stderr, done.stderr
    assert ("Fix: write e.g. `invoke toolchain --clang 15` (installed here, and a Clang the "
            "build accepts for ROCm 5.2") in done.stderr
    assert "--clang 16" not in done.stderr


def test_suggested_reads_quoted_and_bare_commands() -> None:
    text = ("Fix: invoke toolchain --clang 15 (or --allow-compiler to keep Clang 16); for this "
            "build only: `invoke build --arch gfx1100 --clang 15`.")
    assert suggested(text) == [["--dry", "build", "--arch", "gfx1100", "--clang", "15"],
                               ["toolchain", "--clang", "15"],
                               ["toolchain", "--clang", "16", "--allow-compiler"]]
