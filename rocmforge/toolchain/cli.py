"""The body of `invoke toolchain`: flags -> settings -> probes -> choice -> report or switch.

Owns: flag validation that Invoke cannot do (`--gcc eleven`, `--clang` without a version), the
order of the steps, and the printed report. Must not: hold policy, parse tool output, or run
update-alternatives itself (`rocmforge.toolchain.system` does).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Protocol

from rocmforge.errors import UsageError
from rocmforge.render import emit_json, print_table, say, wrap_whole
from rocmforge.toolchain.alternatives import AlternativesTool
from rocmforge.toolchain.inventory import (
    compiler_rows,
    gcc_install_rows,
    group_rows,
    policy_context,
    resolved_rows,
    take_inventory,
)
from rocmforge.toolchain.select import CompilerChoice, choose_build_compilers, parse_version_flag
from rocmforge.toolchain.system import execute_restore, execute_switch, prepare_switch, state_path

if TYPE_CHECKING:
    from invoke import Context

    from rocmforge.fsutil import JSONDoc
    from rocmforge.settings import Settings
    from rocmforge.toolchain.inventory import PolicyContext
    from rocmforge.toolchain.select import ToolchainInventory



class SettingsFor(Protocol):
    """How the task turns its context and setting flags into Settings (tasks._common)."""

    def __call__(self, c: Context, **flags: object) -> Settings: ...


DEFAULT_LINK_DIR = "/usr/bin"
JSON_SCHEMA = "rocmforge.toolchain/1"


def version_flag(flag: str, value: object) -> int:
    """Invoke hands `--gcc` over as "" (absent), True (given without a value) or the text.
    True -> -1: `missing_version` says what to write, once the machine's compilers are known."""
    if value is True:
        return -1
    if value in ("", None, False):
        return 0
    return parse_version_flag(flag, value)


def missing_version(flag: str, inventory: ToolchainInventory, ctx: PolicyContext) -> UsageError:
    """`--clang` without a version: the example is an installed compiler of that kind that the
    build accepts for this machine's ROCm (issue 41 item 7: `--clang 16` was suggested on ROCm
    5.2, which refuses it), or says there is none."""
    from rocmforge.knowledge.compiler_policy import toolchain_command

    name = "GCC" if flag == "gcc" else "Clang"
    installed = sorted({c.major for c in inventory.installed(flag)}, reverse=True)
    if ctx.judge is None:
        accepted = installed
    else:
        rank = {major: i for i, (kind, major) in enumerate(ctx.recommended) if kind == flag}
        accepted = sorted(
            (c.major for c in inventory.installed(flag)
             if ctx.judge(flag, c.version).status == "OK"),
            key=lambda m: (rank.get(m, len(rank)), -m))
    if accepted:
        fix = (f"write e.g. `{toolchain_command(flag, accepted[0])}` (installed here"
               + (f", and a {name} the build accepts for {ctx.rocm_label}" if ctx.judge else "")
               + "); `invoke toolchain` alone lists what is installed")
    else:
        fix = (f"no {name} installed here is one the build accepts for {ctx.rocm_label}"
               + (f" (found: {', '.join(f'{name} {m}' for m in installed)})" if installed else "")
               + "; `invoke toolchain` alone lists what is installed and the kit's choice")
    return UsageError(f"--{flag} was given without a version",
                      f"--{flag} takes the major version to build with", fix)


def run_toolchain(
    c: Context,
    *,
    settings_for: SettingsFor,
    dry: bool,
    gcc: object,
    clang: object,
    system: bool,
    restore: bool,
    allow_compiler: bool,
    rocm_path: str,
    as_json: bool,
) -> CompilerChoice | None:
    gcc_major = version_flag("gcc", gcc)
    clang_major = version_flag("clang", clang)
    missing = [f for f, m in (("gcc", gcc_major), ("clang", clang_major)) if m < 0]
    gcc_major, clang_major = max(gcc_major, 0), max(clang_major, 0)
    if restore and (gcc_major or clang_major or system or missing):
        raise UsageError(
            "--restore cannot be combined with --gcc, --clang or --system",
            "restore puts back the saved state; it does not choose a compiler",
            "run `invoke toolchain --restore` alone",
        )
    settings = settings_for(
        c,
        gcc=gcc_major,
        clang=clang_major,
        allow_compiler=allow_compiler,
        rocm_path=rocm_path,
    )
    sudo = os.geteuid() != 0
    if restore:
        commands = execute_restore(
            state_file=state_path(settings.work_dir), dry=dry, echo=print, sudo=sudo
        )
        if commands is None:
            say(f"rocmforge: nothing to restore ({state_path(settings.work_dir)} does not exist).")
        elif not dry:
            say("rocmforge: update-alternatives groups restored.")
        return None
    # A flag for one kind overrides a configured value of the other kind.
    if gcc_major or clang_major:
        want_gcc, want_clang = gcc_major, clang_major
    else:
        want_gcc, want_clang = settings.gcc, settings.clang
    ctx = policy_context(
        rocm_path=settings.rocm_path, pytorch_ref=settings.pytorch_ref, environ=os.environ
    )
    inventory = take_inventory(
        rocm_root=ctx.rocm_root,
        altdir=settings.alternatives_altdir,
        admindir=settings.alternatives_admindir,
    )
    if missing:
        raise missing_version(missing[0], inventory, ctx)
    if system and not (want_gcc or want_clang):
        raise UsageError(
            "--system needs the compiler to switch to",
            "a system-wide switch is never made on a guess",
            "add --gcc N or --clang N, e.g. `invoke toolchain --gcc 11 --system`",
        )
    explicit = bool(want_gcc or want_clang)
    choice: CompilerChoice | None = None
    choice_error = ""
    try:
        choice = choose_build_compilers(
            inventory,
            gcc=want_gcc,
            clang=want_clang,
            allow_compiler=settings.allow_compiler,
            judge=ctx.judge,
            recommended=ctx.recommended,
            rocm_llvm_major=ctx.rocm_llvm_major,
        )
    except UsageError as exc:
        if explicit:
            raise
        choice_error = exc.paragraph()
    if explicit and choice is not None and not as_json:  # JSON reports the verdict instead
        _refuse_what_the_build_refuses(choice, ctx, allow_compiler=settings.allow_compiler,
                                       installed=_pairs_installed(inventory))
    if system and choice is not None:
        chosen = inventory.find(choice.kind, choice.major)
        assert chosen is not None  # choose_build_compilers found it
        tool = AlternativesTool(
            altdir=settings.alternatives_altdir, admindir=settings.alternatives_admindir, sudo=sudo
        )
        plan = prepare_switch(
            compilers=inventory.compilers,
            chosen=chosen,
            link_dir=settings.alternatives_link_dir or DEFAULT_LINK_DIR,
            tool=tool,
        )
        result = execute_switch(
            plan,
            chosen=chosen,
            state_file=state_path(settings.work_dir),
            tool=tool,
            dry=dry,
            echo=print,
        )
        for slave in plan.skipped_slaves:
            say(f"rocmforge: left {slave} alone (a regular file, not a link).")
        if not result.dry:
            for driver, major in result.verified:
                say(f"rocmforge: {driver} now reports major {major}.")
            say("rocmforge: undo with `invoke toolchain --restore`.")
        return choice
    if as_json:
        emit_json(_json_doc(inventory, ctx, choice, choice_error, settings.allow_compiler))
        return choice
    if not explicit:
        print_table(
            "Installed compilers",
            ("status", "compiler", "drivers", "found as", "policy"),
            compiler_rows(inventory, ctx.judge, allow_compiler=settings.allow_compiler),
            status_column=0,
        )
        print_table(
            "What the plain names run now",
            ("name", "compiler", "resolves through"),
            resolved_rows(inventory),
        )
        print_table(
            "update-alternatives groups",
            ("group", "mode", "value", "alternatives"),
            group_rows(inventory),
        )
        print_table(
            "GCC installations (libstdc++ for clang/amdclang)",
            ("status", "major", "directory", "problem"),
            gcc_install_rows(inventory),
            status_column=0,
        )
        print(f"ROCm: {ctx.rocm_label}; PyTorch ref: {ctx.torch_ref}")
        if ctx.note:
            print(ctx.note)
    if choice is None:
        print(f"Build compilers: none chosen. {choice_error}")
        return None
    print(choice_script(choice))
    return choice


def _pairs_installed(inventory: ToolchainInventory) -> tuple[tuple[str, int], ...]:
    """(kind, major) of each host compiler on this machine (the ROCm clang is not one)."""
    return tuple(sorted({(c.kind, c.major) for c in inventory.compilers if c.origin != "rocm"}))


def _refuse_what_the_build_refuses(choice: CompilerChoice, ctx: PolicyContext, *,
                                   allow_compiler: bool,
                                   installed: tuple[tuple[str, int], ...] = ()) -> None:
    """One verdict for toolchain, doctor and the build: a compiler the table warns about is
    refused here as the build's preflight refuses it (nothing printed to eval, nothing
    switched), unless --allow-compiler."""
    from rocmforge.knowledge.compiler_policy import build_verdict

    if ctx.judge is None:
        return
    verdict = (ctx.judge_here(choice.kind, choice.version, installed) if ctx.judge_here
               else ctx.judge(choice.kind, choice.version))
    graded, reason = build_verdict(verdict.status, verdict.reason, allow_compiler=allow_compiler)
    if graded != "FAIL":
        return
    name = "GCC" if choice.kind == "gcc" else "Clang"
    fix = verdict.fix or "choose the kit's recommendation (`invoke toolchain` lists it)"
    if "--allow-compiler" not in fix:
        fix += (f", or keep it on purpose: `invoke toolchain --{choice.kind} {choice.major} "
                "--allow-compiler`")
    raise UsageError(f"{name} {choice.version} is not a compiler the build accepts for "
                     f"{ctx.rocm_label}", reason, fix)


def choice_script(choice: CompilerChoice) -> str:
    """The chosen compilers as a shell script: the `export` lines, every other line a `#`
    comment, so `eval "$(invoke toolchain --gcc 11)"` sets CC and CXX (issue 18 item 8)."""
    lines = [f"# Build compilers ({choice.reason}): {choice.kind} {choice.version}",
             *choice.exports()]
    if choice.extra_flags:
        lines.append("# clang flags: " + " ".join(choice.extra_flags))
    if choice.hip_extra_flags:
        lines.append("# amdclang/hipcc flags: " + " ".join(choice.hip_extra_flags))
    for note in choice.notes:  # comments wrapped at 80 columns, each line still a comment
        lines += wrap_whole(" ".join(note.split()), 80, initial_indent="# note: ",
                            subsequent_indent="#   ")
    return "\n".join(lines)


def _json_doc(inventory: ToolchainInventory, ctx: PolicyContext, choice: CompilerChoice | None,
              error: str, allow_compiler: bool = False) -> JSONDoc:
    rows = compiler_rows(inventory, ctx.judge, allow_compiler=allow_compiler)
    return {
        "schema": JSON_SCHEMA,
        "rocm": ctx.rocm_label,
        "compilers": [
            {
                "kind": c.kind,
                "version": c.version,
                "major": c.major,
                "cc": str(c.cc),
                "cxx": str(c.cxx) if c.cxx else None,
                "origin": c.origin,
                "status": row[0],
                "reason": row[4],
            }
            for c, row in zip(inventory.compilers, rows, strict=True)
        ],
        "resolved": {r.name: [str(p) for p in r.chain] for r in inventory.resolved},
        "groups": [
            {"name": g.name, "exists": g.exists, "status": g.status, "value": g.value}
            for g in inventory.groups
        ],
        "choice": None
        if choice is None
        else {
            "kind": choice.kind,
            "major": choice.major,
            "version": choice.version,
            "env": choice.env(),
            "extra_flags": list(choice.extra_flags),
            "hip_extra_flags": list(choice.hip_extra_flags),
            "notes": list(choice.notes),
        },
        "error": error or None,
    }
