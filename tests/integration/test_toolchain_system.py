"""System-wide switch and restore with the REAL update-alternatives, sandboxed in temp dirs.

--altdir/--admindir and the link dir (the stand-in for /usr/bin) are temp dirs; the compilers are
the real gcc-11/gcc-12 of this machine. Nothing outside tmp_path is touched.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from rocmforge.errors import StepFailed
from rocmforge.probes.compilers import find_host_compilers
from rocmforge.toolchain.alternatives import AlternativesTool
from rocmforge.toolchain.system import (
    execute_restore,
    execute_switch,
    prepare_switch,
    query_group,
    state_path,
)

pytestmark = [
    pytest.mark.needs_tool("update-alternatives", "gcc-11", "g++-11", "gcc-12", "g++-12"),
]
REPO = Path(__file__).resolve().parents[2]


class Sandbox:
    def __init__(self, root: Path) -> None:
        self.alt = root / "alt"
        self.adm = root / "adm"
        self.links = root / "links"
        self.work = root / "work"
        for d in (self.alt, self.adm, self.links):
            d.mkdir()
        # Debian's shape before any switch: gcc and g++ are plain links owned by the package.
        (self.links / "gcc").symlink_to("/usr/bin/gcc-12")
        (self.links / "g++").symlink_to("/usr/bin/g++-12")
        self.tool = AlternativesTool(altdir=str(self.alt), admindir=str(self.adm))
        self.state = state_path(self.work)

    def ua(self, *args: str) -> None:
        subprocess.run(list(self.tool.argv(*args)), check=True, capture_output=True)

    def major(self, name: str) -> int:
        out = subprocess.run(
            [str(self.links / name), "-dumpfullversion"], capture_output=True, text=True, check=True
        ).stdout
        return int(out.split(".")[0])

    def switch(self, major: int, echo: list[str] | None = None) -> None:
        compilers = tuple(
            c for c in find_host_compilers("/usr/bin") if c.kind == "gcc" and c.major in (11, 12)
        )
        chosen = next(c for c in compilers if c.major == major)
        plan = prepare_switch(
            compilers=compilers, chosen=chosen, link_dir=str(self.links), tool=self.tool
        )
        lines = echo if echo is not None else []
        result = execute_switch(
            plan,
            chosen=chosen,
            state_file=self.state,
            tool=self.tool,
            dry=False,
            echo=lines.append,
        )
        assert [m for _, m in result.verified] == [major, major]


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path)


@pytest.mark.slow
def test_switch_12_11_12_then_restore_absent_group(box: Sandbox) -> None:
    echoed: list[str] = []
    box.switch(11, echoed)
    assert echoed[0].startswith(
        f"+ update-alternatives --altdir {box.alt} --admindir {box.adm} --install "
        f"{box.links}/gcc gcc /usr/bin/gcc-11 110 --slave {box.links}/g++ g++ /usr/bin/g++-11 "
        f"--slave {box.links}/gcov gcov /usr/bin/gcov-11"
    )
    assert echoed[2] == (
        f"+ update-alternatives --altdir {box.alt} --admindir {box.adm} --set gcc /usr/bin/gcc-11"
    )
    assert os.readlink(box.links / "gcc") == str(box.alt / "gcc")
    assert os.readlink(box.alt / "gcc") == "/usr/bin/gcc-11"
    assert os.readlink(box.alt / "g++") == "/usr/bin/g++-11"
    assert (box.major("gcc"), box.major("g++")) == (11, 11)
    group = query_group("gcc", altdir=str(box.alt), admindir=str(box.adm))
    assert (group.status, group.value) == ("manual", "/usr/bin/gcc-11")
    assert group.paths == ("/usr/bin/gcc-11", "/usr/bin/gcc-12")
    assert group.slave_links["g++"] == f"{box.links}/g++"

    echoed.clear()
    box.switch(12, echoed)
    # Both are registered already: only the --set runs (re-installing would rewrite priorities).
    assert echoed == [
        f"+ update-alternatives --altdir {box.alt} --admindir {box.adm} --set gcc /usr/bin/gcc-12",
        f"+ {box.links}/gcc --version",
        f"+ {box.links}/g++ --version",
    ]
    assert (box.major("gcc"), box.major("g++")) == (12, 12)

    commands = execute_restore(state_file=box.state, dry=False, echo=lambda _: None)
    assert commands is not None
    assert [c.argv for c in commands] == [
        box.tool.argv("--remove-all", "gcc"),
        ("ln", "-sfn", "/usr/bin/gcc-12", f"{box.links}/gcc"),
        ("ln", "-sfn", "/usr/bin/g++-12", f"{box.links}/g++"),
    ]
    assert not query_group("gcc", altdir=str(box.alt), admindir=str(box.adm)).exists
    # The package-owned links are back exactly as they were.
    assert os.readlink(box.links / "gcc") == "/usr/bin/gcc-12"
    assert os.readlink(box.links / "g++") == "/usr/bin/g++-12"
    assert not box.state.exists()


@pytest.mark.slow
def test_restore_brings_back_auto_mode_and_removes_what_the_kit_added(box: Sandbox) -> None:
    # Before: a group in auto mode with only gcc-12, registered by "the admin".
    (box.links / "gcc").unlink()
    (box.links / "g++").unlink()
    box.ua(
        "--install",
        f"{box.links}/gcc",
        "gcc",
        "/usr/bin/gcc-12",
        "50",
        "--slave",
        f"{box.links}/g++",
        "g++",
        "/usr/bin/g++-12",
    )
    before = query_group("gcc", altdir=str(box.alt), admindir=str(box.adm))
    assert (before.status, before.paths) == ("auto", ("/usr/bin/gcc-12",))

    box.switch(11)
    assert (box.major("gcc"), box.major("g++")) == (11, 11)
    saved = box.state.read_text()
    assert '"status": "auto"' in saved

    execute_restore(state_file=box.state, dry=False, echo=lambda _: None)
    after = query_group("gcc", altdir=str(box.alt), admindir=str(box.adm))
    assert (after.status, after.value, after.paths) == (
        "auto",
        "/usr/bin/gcc-12",
        ("/usr/bin/gcc-12",),
    )
    # The admin's priority 50 was never rewritten.
    assert after.alternatives[0].priority == 50
    assert (box.major("gcc"), box.major("g++")) == (12, 12)


@pytest.mark.slow
def test_restore_brings_back_a_manual_choice(box: Sandbox) -> None:
    (box.links / "gcc").unlink()
    (box.links / "g++").unlink()
    for v, prio in (("11", "110"), ("12", "120")):
        box.ua(
            "--install",
            f"{box.links}/gcc",
            "gcc",
            f"/usr/bin/gcc-{v}",
            prio,
            "--slave",
            f"{box.links}/g++",
            "g++",
            f"/usr/bin/g++-{v}",
        )
    box.ua("--set", "gcc", "/usr/bin/gcc-11")
    box.switch(12)
    assert box.major("gcc") == 12
    execute_restore(state_file=box.state, dry=False, echo=lambda _: None)
    after = query_group("gcc", altdir=str(box.alt), admindir=str(box.adm))
    assert (after.status, after.value) == ("manual", "/usr/bin/gcc-11")
    assert box.major("g++") == 11


@pytest.mark.slow
def test_failure_half_way_rolls_back(box: Sandbox) -> None:
    compilers = tuple(
        c for c in find_host_compilers("/usr/bin") if c.kind == "gcc" and c.major in (11, 12)
    )
    chosen = next(c for c in compilers if c.major == 11)
    plan = prepare_switch(
        compilers=compilers, chosen=chosen, link_dir=str(box.links), tool=box.tool
    )
    calls: list[tuple[str, ...]] = []

    def runner(argv):  # the real command, except the --set, which fails as if interrupted
        calls.append(tuple(argv))
        if "--set" in argv:
            return 2, "update-alternatives: error: simulated failure"
        proc = subprocess.run(list(argv), capture_output=True, text=True)
        return proc.returncode, proc.stdout + proc.stderr

    with pytest.raises(StepFailed, match="simulated failure"):
        execute_switch(
            plan,
            chosen=chosen,
            state_file=box.state,
            tool=box.tool,
            dry=False,
            echo=lambda _: None,
            runner=runner,
        )
    assert any("--remove-all" in c for c in calls)
    assert not query_group("gcc", altdir=str(box.alt), admindir=str(box.adm)).exists
    assert os.readlink(box.links / "gcc") == "/usr/bin/gcc-12"
    assert not box.state.exists()


@pytest.mark.slow
def test_switched_pair_compiles_links_and_runs_cxx(box: Sandbox, tmp_path: Path) -> None:
    box.switch(11)
    source = tmp_path / "hello.cpp"
    source.write_text(
        "#include <iostream>\n#include <string>\n#include <vector>\n"
        'int main() { std::vector<std::string> v{"gcc", std::to_string(__GNUC__)};\n'
        "  std::cout << v[0] << ' ' << v[1] << '\\n'; return 0; }\n"
    )
    exe = tmp_path / "hello"
    subprocess.run([str(box.links / "g++"), "-std=c++17", str(source), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    assert out == "gcc 11\n"


def _invoke(args: list[str], box: Sandbox) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.update(
        NO_COLOR="1",
        ROCMFORGE_ALTERNATIVES_ALTDIR=str(box.alt),
        ROCMFORGE_ALTERNATIVES_ADMINDIR=str(box.adm),
        ROCMFORGE_WORK_DIR=str(box.work),
        ROCMFORGE_ALTERNATIVES_LINK_DIR=str(box.links),
    )
    return subprocess.run(
        [sys.executable, "-m", "invoke", *args], cwd=REPO, env=env, capture_output=True, text=True
    )


def _snapshot(box: Sandbox) -> dict[str, str]:
    out = {}
    for d in (box.alt, box.adm, box.links):
        for p in sorted(d.iterdir()):
            out[str(p)] = os.readlink(p) if p.is_symlink() else p.read_text()
    return out


@pytest.mark.slow
def test_invoke_dry_system_prints_exact_commands_and_changes_nothing(box: Sandbox) -> None:
    before = _snapshot(box)
    proc = _invoke(
        ["--dry", "toolchain", "--gcc", "11", "--system"], box
    )
    assert proc.returncode == 0, proc.stderr
    ua = f"update-alternatives --altdir {box.alt} --admindir {box.adm}"
    lines = proc.stdout.splitlines()

    def slaves(v: str) -> str:
        return " ".join(
            f"--slave {box.links}/{t} {t} /usr/bin/{t}-{v}"
            for t in ("g++", "gcov", "gcov-dump", "gcov-tool", "gcc-ar", "gcc-nm", "gcc-ranlib")
        )

    assert lines == [
        f"+ {ua} --install {box.links}/gcc gcc /usr/bin/gcc-11 110 {slaves('11')}",
        f"+ {ua} --install {box.links}/gcc gcc /usr/bin/gcc-12 120 {slaves('12')}",
        f"+ {ua} --set gcc /usr/bin/gcc-11",
        f"+ {box.links}/gcc --version",
        f"+ {box.links}/g++ --version",
    ]
    assert _snapshot(box) == before
    assert not box.work.exists()


@pytest.mark.slow
def test_invoke_system_then_restore(box: Sandbox) -> None:
    proc = _invoke(["toolchain", "--gcc", "11", "--system"], box)
    assert proc.returncode == 0, proc.stderr
    assert f"{box.links}/g++ now reports major 11" in proc.stderr
    assert (box.major("gcc"), box.major("g++")) == (11, 11)
    assert state_path(box.work).exists()
    proc = _invoke(["toolchain", "--restore"], box)
    assert proc.returncode == 0, proc.stderr
    assert "+ " + shlex.join(box.tool.argv("--remove-all", "gcc")) in proc.stdout
    assert os.readlink(box.links / "gcc") == "/usr/bin/gcc-12"
    assert not state_path(box.work).exists()
    proc = _invoke(["toolchain", "--restore"], box)
    assert proc.returncode == 0
    assert "nothing to restore" in proc.stderr


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--gcc", "99"], "gcc 99 is not installed (no gcc-99 on PATH); installed: "),
        (["--gcc", "eleven"], "--gcc 'eleven' is not a compiler major version"),
        (["--clang"], "--clang was given without a version"),
        (["--gcc", "11", "--clang", "16"], "Both --gcc 11 and --clang 16 were given"),
        (["--system"], "--system needs the compiler to switch to"),
        (["--gcc", "11", "--rocm-path", "/nonexistent/rocm"],
         "The ROCm path /nonexistent/rocm given by --rocm-path does not exist"),
    ],
)
def test_bad_input_exit_2_and_nothing_touched(box: Sandbox, args: list[str], fragment: str) -> None:
    before = _snapshot(box)
    proc = _invoke(["toolchain", *args, "--system"], box)
    assert proc.returncode == 2, proc.stderr
    assert fragment in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1  # one paragraph
    assert _snapshot(box) == before
    assert not box.work.exists()


def test_bad_rocm_path_is_refused_without_system_too(box: Sandbox) -> None:
    """A mistyped --rocm-path used to fall back to whatever ROCm was found, silently."""
    proc = _invoke(["toolchain", "--gcc", "11", "--rocm-path", "/nonexistent/rocm"], box)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(
        "rocmforge: The ROCm path /nonexistent/rocm given by --rocm-path does not exist."
    )
    assert proc.stdout == ""
