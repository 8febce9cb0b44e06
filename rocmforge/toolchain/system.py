"""The one place that changes the system compiler: runs update-alternatives, saves and restores.

Owns: querying groups (`update-alternatives --query`), the saved-state file (atomic write), running
a switch or restore plan with every command printed first (`+ argv`), verifying the switched
drivers by their `--version`, and rolling back a half-done switch. Must not: decide what to
switch (that is `alternatives.plan_switch`) or build shell strings: argv lists only.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rocmforge import process
from rocmforge.errors import StepFailed, UsageError
from rocmforge.fsutil import write_atomic
from rocmforge.probes.compilers import HostCompiler, identify
from rocmforge.toolchain.alternatives import (
    GCC_SLAVE_TOOLS,
    AlternativesGroup,
    AlternativesTool,
    LinkTarget,
    SavedGroup,
    SavedState,
    SwitchPlan,
    SystemCommand,
    absent_group,
    group_name,
    members_for,
    parse_query,
    plan_restore,
    plan_switch,
)

Echo = Callable[[str], None]
# Runs an argv, returns (exit status, combined output).
Runner = Callable[[Sequence[str]], "tuple[int, str]"]


def run_argv(argv: Sequence[str]) -> tuple[int, str]:
    """The real runner (rocmforge.process): argv list, no shell, output captured for the error
    message; a program that cannot be started is status 127/126 with the reason."""
    done = process.run(argv)
    return done.returncode, done.output


# --- probes ---------------------------------------------------------------------------------


def query_group(name: str, *, altdir: str = "", admindir: str = "") -> AlternativesGroup:
    """`update-alternatives --query NAME` parsed; a group that does not exist comes back absent."""
    argv = AlternativesTool(altdir=altdir, admindir=admindir).argv("--query", name)
    done = process.run(argv)
    if done.returncode != 0:
        return absent_group(name)
    return parse_query(name, done.stdout)


def link_state(path: str) -> LinkTarget:
    """What is at a link path now: a symlink (with its target as written), a file, or nothing."""
    p = Path(path)
    if p.is_symlink():
        return LinkTarget(path=path, kind="symlink", target=os.readlink(p))
    if p.exists():
        return LinkTarget(path=path, kind="file")
    return LinkTarget(path=path, kind="absent")


def existing_tool_files(compilers: Iterable[HostCompiler]) -> frozenset[str]:
    """The versioned GCC tools (gcov-11, cpp-11, ...) that exist beside each gcc-N."""
    out: set[str] = set()
    for compiler in compilers:
        if compiler.kind != "gcc" or "-" not in compiler.cc.name:
            continue
        suffix = compiler.cc.name.split("-", 1)[1]
        for tool in GCC_SLAVE_TOOLS:
            candidate = compiler.cc.parent / f"{tool}-{suffix}"
            if candidate.exists():
                out.add(str(candidate))
    return frozenset(out)


# --- saved state ----------------------------------------------------------------------------


def state_path(work_dir: str | os.PathLike[str]) -> Path:
    return Path(work_dir).absolute() / "state" / "alternatives.json"


def load_state(path: Path) -> SavedState | None:
    if not path.exists():
        return None
    try:
        return SavedState.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(
            f"The saved compiler state {path} cannot be read ({exc})",
            "restore needs it to know what the groups looked like before the switch",
            f"inspect it; delete {path} only if you will restore the groups by hand",
        ) from None


def save_state(path: Path, state: SavedState) -> None:
    """Write atomically (rocmforge.fsutil.write_atomic) so a crash leaves no half-written state."""
    write_atomic(path, json.dumps(state.to_json(), indent=2) + "\n")


# --- executing ------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SwitchResult:
    plan: SwitchPlan
    verified: tuple[tuple[str, int], ...]  # (driver path, major it printed)
    dry: bool


def prepare_switch(
    *,
    compilers: Sequence[HostCompiler],
    chosen: HostCompiler,
    link_dir: str,
    tool: AlternativesTool,
) -> SwitchPlan:
    """Probe the group and its links now, then plan; refuses a master link that is a real file."""
    name = group_name(chosen.kind)
    members = members_for(
        compilers,
        kind=chosen.kind,
        link_dir=link_dir,
        existing_files=existing_tool_files(compilers),
    )
    current = query_group(name, altdir=tool.altdir, admindir=tool.admindir)
    paths = [os.path.join(link_dir, name)] + sorted({s[1] for m in members for s in m.slaves})
    links_now = {p: link_state(p) for p in paths}
    master = links_now[paths[0]]
    if master.kind == "file":
        raise UsageError(
            f"{paths[0]} is a regular file, not a link",
            "update-alternatives never replaces a real file with its link, so the switch "
            "would silently do nothing",
            f"use the build-only way (`invoke toolchain --{chosen.kind} {chosen.major}` without "
            "--system), or move that file away first",
        )
    return plan_switch(
        kind=chosen.kind,
        chosen=chosen,
        members=members,
        current=current,
        links_now=links_now,
        link_dir=link_dir,
        tool=tool,
    )


def verify_commands(plan: SwitchPlan, kind: str) -> tuple[tuple[str, ...], ...]:
    cxx = "g++" if kind == "gcc" else "clang++"
    link_dir = os.path.dirname(plan.link)
    return ((plan.link, "--version"), (os.path.join(link_dir, cxx), "--version"))


def execute_switch(
    plan: SwitchPlan,
    *,
    chosen: HostCompiler,
    state_file: Path,
    tool: AlternativesTool,
    dry: bool,
    echo: Echo,
    runner: Runner = run_argv,
) -> SwitchResult:
    """Save the state, run the plan, verify the majors; on any failure roll back and raise."""
    for command in plan.commands:
        echo("+ " + shlex.join(command.argv))
    checks = verify_commands(plan, chosen.kind)
    for argv in checks:
        echo("+ " + shlex.join(argv))
    if dry:
        return SwitchResult(plan=plan, verified=(), dry=True)
    previous = load_state(state_file)
    fresh = SavedState(altdir=tool.altdir, admindir=tool.admindir, groups=(plan.saved,))
    save_state(state_file, previous.merged_with(fresh) if previous is not None else fresh)

    def undo() -> None:
        # Back to the state before *this* run (an earlier switch stays recorded for --restore).
        _rollback(saved_group=plan.saved, tool=tool, echo=echo, runner=runner)
        if previous is None:
            state_file.unlink(missing_ok=True)
        else:
            save_state(state_file, previous)

    for command in plan.commands:
        status, output = runner(command.argv)
        if status != 0:
            undo()
            raise StepFailed(
                f"`{shlex.join(command.argv)}` failed with exit status {status}: "
                f"{_last_line(output)}",
                "the switch stopped there and the changes made so far were rolled back",
                "read the message above; `update-alternatives --query "
                f"{plan.group}` shows the group",
            )
    verified: list[tuple[str, int]] = []
    for argv in checks:
        found = identify(Path(argv[0]))
        if found is None or found.major != chosen.major or found.kind != chosen.kind:
            undo()
            got = found.label if found else "nothing runnable"
            raise StepFailed(
                f"After the switch {argv[0]} reports {got}, not {chosen.kind} {chosen.major}",
                "a link on the way is not managed by the group (or PATH order differs)",
                f"check `ls -l {argv[0]}`; the switch was rolled back",
            )
        verified.append((argv[0], found.major))
    return SwitchResult(plan=plan, verified=tuple(verified), dry=False)


def execute_restore(
    *,
    state_file: Path,
    dry: bool,
    echo: Echo,
    runner: Runner = run_argv,
    sudo: bool = False,
) -> tuple[SystemCommand, ...] | None:
    """Put every saved group back; the state file is deleted only after all commands succeed.

    None when there is nothing saved (no switch was made, or it was already restored).
    """
    state = load_state(state_file)
    if state is None:
        return None
    tool = AlternativesTool(altdir=state.altdir, admindir=state.admindir, sudo=sudo)
    commands: list[SystemCommand] = []
    for saved in state.groups:
        current = query_group(saved.name, altdir=tool.altdir, admindir=tool.admindir)
        commands.extend(plan_restore(saved, current, tool=tool))
    for command in commands:
        echo("+ " + shlex.join(command.argv))
    if dry:
        return tuple(commands)
    for command in commands:
        status, output = runner(command.argv)
        if status != 0:
            raise StepFailed(
                f"`{shlex.join(command.argv)}` failed with exit status {status}: "
                f"{_last_line(output)}",
                f"the saved state stays in {state_file} so the restore can be run again",
                "fix the cause and rerun `invoke toolchain --restore`",
            )
    state_file.unlink()
    return tuple(commands)


def _rollback(
    *, saved_group: SavedGroup, tool: AlternativesTool, echo: Echo, runner: Runner
) -> None:
    current = query_group(saved_group.name, altdir=tool.altdir, admindir=tool.admindir)
    for command in plan_restore(saved_group, current, tool=tool):
        echo("+ " + shlex.join(command.argv) + "   # rollback")
        runner(command.argv)


def _last_line(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"
