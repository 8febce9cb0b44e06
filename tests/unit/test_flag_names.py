"""Every flag a message names exists (issue 18 item 5a): a stale name ("set --triton-index", a
flag that never existed) cannot come back.

The scan reads every string the kit can show (each string literal under rocmforge/, f-strings
with their placeholders, every string value of config/*.toml: the fix texts of diagnostics.toml)
and every line of README.md and docs/*.md (a code block's lines as commands), and finds each
`--flag`:
- in a backticked command of the kit (`invoke build --arch gfx1100`, `rocmforge inspect ...`):
  the flag must be an argument of that very task, or one of Invoke's own flags before it;
- in a backticked command of another tool (`git reset --hard`, `cmake --version`): that tool's;
- anywhere else (prose: "pass --ref v2.9.1"): a flag of the kit's table (settings.FLAGS), one of
  Invoke's own, or one of the few other tools' flags the prose names, listed below with the tool.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from invoke import Program

from rocmforge.settings import FLAGS
from rocmforge.tasks import ns
from rocmforge.verify.__main__ import parser as verify_parser

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
TICKED = re.compile(r"`([^`]*)`")
PLACEHOLDER = "\x00"

KIT_FLAGS = {f.long for f in FLAGS}
INVOKE_FLAGS = {"--" + n for a in Program().core_args() for n in a.names if len(n) > 1}
# `python -m rocmforge.verify` (run inside the target venv by `nox -s verify`) has its own
# argparse flags; texts under rocmforge/verify/ may name them.
VERIFY_FLAGS = {o for a in verify_parser()._actions for o in a.option_strings if o[:2] == "--"}
# Flags of other tools that the kit's prose names outside backticks, each with its tool.
OTHER_TOOLS = {
    "--offload-arch": "clang/hipcc",
    "--hip-device-lib-path": "clang (a HIP compile's device library folder)",
    "--cuda-gpu-arch": "clang (the older spelling of --offload-arch)",
    "--amdgpu-target": "hipcc before ROCm 4.0 (the target flag --offload-arch replaced)",
    "--version-script": "ld / ld.lld (a shared library's exported symbols)",
    "--no-undefined-version": "ld.lld (its default since LLVM 16)",
    "--undefined-version": "ld.lld (the remedy triage names)",
    "--verify-manifest": "TensileCreateLibrary (TensileConfig.cmake's manifest check)",
    "--gcc-install-dir": "clang",
    "--gcc-toolchain": "clang",
    "--cuda-device-only": "clang",
    "--hip-link": "clang (the HIP link flag hip::device adds; triage names it)",
    "--version": "every compiler and tool the probes ask",
    "--no-isolation": "python -m build / pip",
    "--build": "cmake (bitsandbytes' pre-build in config/extensions.toml)",
    "--wheel": "python -m build",
    "--recursive": "git submodule",
    "--include-untracked": "git stash",
    "--force-python": "nox",
    "--upgrade": "pip",
    "--no-deps": "pip",
    "--pre": "pip (a nightly index's pre-release wheels)",
    "--no-cache-dir": "pip",
    "--without-docbook": "expat's configure (TheRock's sysdeps build)",
    "--wipe": "meson setup (mesonbuild/meson: a failed build folder set up again)",
    "--force-reinstall": "pip",
    "--disable-pip-version-check": "pip",
    "--query": "update-alternatives",
    "--altdir": "update-alternatives",
    "--admindir": "update-alternatives",
    "--install": "update-alternatives",
    "--remove": "update-alternatives",
    "--remove-all": "update-alternatives",
    "--auto": "update-alternatives",
    "--set": "update-alternatives",
    "--hard": "git reset",
    "--index": "git apply",
    "--git": "diff --git (a patch header)",
    "--offloading": "llvm-objdump",
    "--print-stats": "ccache",
    "--show-stats": "sccache",
    "--stats-format": "sccache",
    "--out": "probes/triton_codegen.py (its own script, run by the probe)",
    "--lld-candidate": "probes/triton_codegen.py (its own script, run by the probe)",
    "--name": "settings.Flag's docstring: the pattern `--name` itself",
    "--worker": "verify/checks/comm.py (its own worker entry point)",
    # Named by triage's causes and fixes (rocmforge/triage/parsers/).
    "--no-build-isolation": "pip",
    "--index-url": "pip",
    "--extra-index-url": "pip",
    "--hash": "pip (a requirements file's pinned sha256)",
    "--proxy": "pip",
    "--trusted-host": "pip (an http index it may read)",
    "--resume-retries": "pip (resuming an interrupted download)",
    "--user": "pip (a user-site install, refused in a venv)",
    "--offload-compress": "clang (HIP offload bundles)",
    "--ld-path": "clang (the linker a compile links with)",
    "--no-undefined": "GNU ld / lld (-Wl,--no-undefined)",
    "--require-hashes": "pip / uv pip",
    "--find-links": "pip / uv pip",
    "--no-index": "pip / uv pip",
    "--offline": "uv",
    "--break-system-packages": "pip / uv pip (PEP 668's override)",
    "--sysroot": "gcc/clang (the system root headers and libraries come from)",
    "--target": "AOTriton's generate.py (--target_gpus, FLAG stops at the underscore)",
    "--memory": "docker run",
    "--group-add": "docker run (the GPU's device groups in a container)",
    "--root": "rocm-sdk path (TheRock's pip SDK CLI)",
    "--allow-version-mismatch": "TheRock's PyTorch test runners (run_pytorch_tests*.py)",
    "--warn-unresolved-symbols": "GNU ld / lld (-Wl,--warn-unresolved-symbols: warn, link anyway)",
}
KIT_COMMANDS = ("invoke", "rocmforge")
# `invoke [invoke flags] <task> <the rest of the command>` outside backticks.
BARE_COMMAND = re.compile(r"(?<![\w`./-])invoke((?: --?[a-z][a-z-]*)*) ([a-z][a-z0-9_.]*)"
                          r"([^`;|&#'\"\n]*)")


def _texts_of_module(path: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    in_fstring: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                in_fstring.add(id(value))
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    parts.append(value.value)
                else:
                    parts.append(PLACEHOLDER)
            if not parts or not parts[0].startswith("-"):  # f"--x={y}" is an argv element
                yield node.lineno, "".join(parts)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in in_fstring and not node.value.startswith("-"):
            # A literal that starts with "-" is an argv element (`"--depth"`), not prose.
            yield node.lineno, node.value


def _strings_of(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings_of(item)


def all_texts() -> Iterator[tuple[str, str]]:
    """(where, text) for every string the kit can show."""
    for path in sorted((ROOT / "rocmforge").rglob("*.py")):
        for line, text in _texts_of_module(path):
            yield f"{path.relative_to(ROOT)}:{line}", text
    for path in sorted((ROOT / "config").glob("*.toml")):
        for text in _strings_of(tomllib.loads(path.read_text(encoding="utf-8"))):
            yield str(path.relative_to(ROOT)), text
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        fenced = False
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            # A line of a code block is a command, as if it were in backticks.
            command = line.split("#", 1)[0].strip()
            text = f"`{command}`" if fenced and command and "`" not in command else line
            yield f"{path.relative_to(ROOT)}:{number}", text


def _task_flags(name: str) -> set[str] | None:
    """The long flags of kit task `name` (`rocm.` prefix allowed), None when it is no task."""
    name = name.removeprefix("rocm.")
    if name not in ns.task_names:
        return None
    task, _ = ns.task_with_config(name)
    return {"--" + n for a in task.get_arguments() for n in a.names if len(n) > 1} | {"--help"}


def problems_in(text: str, *, own: frozenset[str] = frozenset()) -> list[str]:
    """The flags `text` names that do not exist where it names them (`own`: the flags of the
    module's own command line, e.g. `python -m rocmforge.verify`)."""
    found: list[str] = []
    covered: list[tuple[int, int]] = []
    for span in TICKED.finditer(text):
        covered.append(span.span())
        words = span.group(1).split()
        if not words or words[0] not in KIT_COMMANDS:
            continue  # another tool's command: its flags are its own
        rest = words[1:]
        while rest and rest[0].startswith("-"):
            if FLAG.fullmatch(rest[0]) and rest[0] not in INVOKE_FLAGS:
                found.append(f"{rest[0]} (not an Invoke flag) in `{span.group(1)}`")
            rest = rest[1:]
        flags = _task_flags(rest[0]) if rest and PLACEHOLDER not in rest[0] else None
        allowed = flags if flags is not None else KIT_FLAGS | INVOKE_FLAGS
        for word in rest[1:]:
            for match in FLAG.finditer(word.split("=", 1)[0]):
                if match.group() not in allowed:
                    found.append(f"{match.group()} (not a flag of `{words[0]} {rest[0]}`) in "
                                 f"`{span.group(1)}`")
    # A kit command outside backticks ("then: invoke doctor --arch gfx1100 --rocm-path ..."):
    # its flags up to the end of the command (";", "|", "&&", "#", a quote or the line's end)
    # must be that task's (issue 32: every flag a message names exists on its task).
    for bare in BARE_COMMAND.finditer(text):
        if any(start <= bare.start() < end for start, end in covered):
            continue
        flags = _task_flags(bare.group(2))
        if flags is None:
            continue
        covered.append((bare.start(3), bare.end(3)))
        for match in FLAG.finditer(bare.group(3)):
            if match.group() not in flags:
                found.append(f"{match.group()} (not a flag of `invoke {bare.group(2)}`) in "
                             f"{bare.group(0)!r}")
    for match in FLAG.finditer(text):
        if any(start <= match.start() < end for start, end in covered):
            continue
        flag = match.group()
        if flag not in KIT_FLAGS | INVOKE_FLAGS | own and flag not in OTHER_TOOLS:
            found.append(f"{flag} (no such flag) in {text[max(0, match.start() - 40):][:90]!r}")
    return found


def test_every_flag_that_a_message_names_exists() -> None:
    stale = [f"{where}: {problem}" for where, text in all_texts()
             for problem in problems_in(text, own=frozenset(VERIFY_FLAGS) if where.startswith(
                 "rocmforge/verify/") else frozenset())]
    assert stale == []


@pytest.mark.parametrize(("text", "problem"), [
    ("check the network, or set --triton-index to a reachable mirror",
     "--triton-index (no such flag)"),
    ("build a newer release, e.g. --pytorch-ref v2.9.0", "--pytorch-ref (no such flag)"),
    ("run `invoke build --rocm v7.0`", "--rocm (not a flag of `invoke build`)"),
    ("run `invoke --drty build`", "--drty (not an Invoke flag)"),
    ("run `invoke rocm.checkout --lock x --arch gfx90a`",
     "--arch (not a flag of `invoke rocm.checkout`)"),
    ("install ROCm 7.2, then: invoke toolchain --arch gfx1100 --rocm-path /opt/rocm",
     "--arch (not a flag of `invoke toolchain`)"),
])
def test_the_scan_catches_a_stale_flag(text: str, problem: str) -> None:
    """The scan itself: each of these names a flag that does not exist where it is named."""
    found = problems_in(text)
    assert len(found) == 1 and found[0].startswith(problem), found


@pytest.mark.parametrize("text", [
    "pass --ref v2.9.1 or --arch gfx942",
    "run `invoke --dry build --arch gfx1100 --triton skip`",
    "`invoke fetch --rocm 7.0` first",
    "`git -C tree reset --hard` discards them",
    "the ROCm clang has no --gcc-install-dir",
])
def test_the_scan_accepts_real_flags(text: str) -> None:
    assert problems_in(text) == []
