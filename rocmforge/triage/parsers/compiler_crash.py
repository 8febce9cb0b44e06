"""Compiler crashes: clang's and LLVM tools' crash reports, stack dumps and frames, and
MSVC's internal compiler errors.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

_LLVM_PROGRAM = re.compile(r"(?:^|[/\\\s])(?P<prog>llc|opt|llvm-link|ld\.lld|lld|clang[\w.+-]*)"
                           r"(?:\.exe)?(?:\(|\s+-)")


def _compiler_crash(match: re.Match[str], view: LineView) -> Reading | None:
    gcc_banner = view.text.startswith("Please submit a full bug report")
    if gcc_banner and any(_GCC_KILLED.search(line) for line in view.previous):
        return None  # the compiler was killed (out-of-memory's reading), not a crash
    prog = "gcc" if gcc_banner or "internal compiler error" in view.text else "clang"
    if prog == "clang":
        # The LLVM program that crashed, when its path or stack frames are in sight (hcc's
        # llc, llvm-link); clang under any version suffix is clang.
        for line in (view.text, *reversed(view.previous)):
            named = _LLVM_PROGRAM.search(line)
            if named:
                found = named.group("prog")
                prog = "clang" if found.startswith("clang") else found
                break
    where = (" in its frontend (cc1), the driver's 'frontend command failed'"
             if "frontend command failed" in view.text else "")
    return Reading(subject=prog, cause=f"the compiler ({prog}) crashed{where} (an internal "
                   "compiler error, not a problem in the source it was given)", fix="rerun the "
                   "step once (a crash under memory pressure is not repeatable); if it "
                   "repeats, upgrade to another release of the compiler (a newer ROCm, or "
                   "--gcc/--clang N) and report it upstream with the preprocessed source the "
                   "crash message names")


# GCC's ICE banner for a killed cc1plus: the memory family reads that line.
_GCC_KILLED = re.compile(r"internal compiler error: Killed\b|terminated with signal 9")


def _stack_dump(match: re.Match[str], view: LineView) -> Reading | None:
    # LLVM prints "Stack dump:" and then "0. Program arguments: <program> …" on the next line,
    # which names the program that crashed: that line gives the finding.
    if view.text.startswith("Stack dump:"):
        return None
    return _compiler_crash(match, view)


def _llvm_frame(match: re.Match[str], view: LineView) -> Reading | None:
    program = match.group("prog")
    subject = "clang" if program.startswith("clang") else program
    return Reading(
        subject=subject, cause=f"{program} crashed (the log shows its stack frames): a bug of "
        "the compiler hit by this source, not an error in the source",
        fix=f"use another release of {subject} (a newer ROCm, or the ROCm the project "
            "names), or build that source at a commit known to compile; report the crash "
            "upstream with the preprocessed source")


# The AMDGPU backend's own diagnostics an "error in backend" follows: a code generator
# that met what it cannot lower (SIInstrInfo's reportIllegalCopy, instruction selection).
_BACKEND_DIAG = re.compile(r"error: (?P<diag>illegal [VS]GPR to [VS]GPR copy|Cannot select: "
                           r"[^:]{0,60}|ran out of registers[^:]{0,40})")


# The AMDGPU backend's refusal of a generic target (gfx9-generic, gfx12-generic, …) below the
# code object version that introduced generic targets; clang 22 here prints it for
# --offload-arch=gfx12-generic -mcode-object-version=5 (make/devbt4.sh).
_GENERIC_NEEDS_COV = re.compile(r"(?P<target>gfx[\w.]+-generic) is only available on code "
                                r"object version (?P<cov>\d+) or better")


def _backend_error(match: re.Match[str], view: LineView) -> Reading | None:
    what = match.group("what").strip()
    if re.search(r"(?i)inline ?asm|constraint|out of memory|cannot allocate|No space", what):
        return None  # the source's inline assembly, or the host running out: not a crash
    generic = _GENERIC_NEEDS_COV.search(what)
    if generic:
        target, version = generic.group("target"), generic.group("cov")
        return Reading(
            subject=target, klass="gpu-target",
            cause=f"the backend refuses {target}: generic GPU targets exist only from code "
                  f"object version {version} on, and this compile asks for an older one "
                  "(-mcode-object-version below it): the target and code object version do "
                  "not pair, clang did not crash",
            fix=f"build {target} with code object version {version} "
                f"(-mcode-object-version={version}, the default of newer ROCm clang), or name "
                "the concrete targets instead of the generic one (gfx1200;gfx1201 for "
                "gfx12-generic) where the code object version is fixed")
    seen = [found.group("diag") for line in view.previous
            if (found := _BACKEND_DIAG.search(line))]
    before = f" after '{seen[-1]}'" if seen else ""
    return Reading(
        subject="clang",
        cause=f"clang's code generator stopped with an error in backend ('{what}'{before}): "
              "the compiler could not lower this source for the GPU, a compiler bug, not an "
              "error in the source",
        fix="build with a newer ROCm (its clang), or the ROCm release the project names for "
            "this source, or the source at a commit known to compile with this ROCm; report "
            "it upstream with the preprocessed source")


RULES: tuple[Rule, ...] = (
    Rule(id="compiler-crash", klass="compiler-crash", tier=2,
         triggers=("PLEASE submit a bug report", "internal compiler error",
                   "Please submit a full bug report",
                   "frontend command failed due to signal", "Segmentation fault",
                   "frontend command failed with exit code", "unable to execute command: "),
         pattern=rx(r"PLEASE submit a bug report|internal compiler error"
                     r"|^Please submit a full bug report,"
                     r"|clang\S*: error: (?:clang frontend command failed due to signal"
                     r"|clang frontend command failed with exit code "
                     r"(?:13[2-689]|70|3|-107374\d{4})\b"
                     r"|unable to execute command: (?:Segmentation fault|Aborted|Bus error|"
                     r"Illegal instruction|Floating point exception))"),
         read=_compiler_crash, source="LLVM PrettyStackTrace; GCC ICE text ("
         "gcc-mirror/gcc:gcc/diagnostic.cc, stored at "
         "50332a4fdd3243899c395712c43daaef82c8180b, not read; the banner 'Please submit a "
         "full bug report, with preprocessed source (by using -freport-bug).' read "
         "from gcc 12.2's cc1 here; it follows the ICE's backtrace, which a log may cut above "
         "it: rocm-arch/rocm-arch#786); clang's driver "
         "(Driver.cpp: err_drv_command_signalled 'failed due to signal' for an out-of-process "
         "cc1, err_drv_command_failed 'failed with exit code N' for the in-process one: 128 + "
         "the signal (139 SIGSEGV, 134 SIGABRT; 137, SIGKILL, is the out-of-memory reading), "
         "70 a fatal error, 3 abort() and 0xC0000005-style NTSTATUS codes on Windows; exit code "
         "1 is ordinary compile errors and claims nothing); llvm/llvm-project issues quoting "
         "'clang frontend command failed with exit code 139'"),
    Rule(id="llvm-stack-dump", klass="compiler-crash", tier=2,
         triggers=("RunSignalHandlers", "Stack dump:", "Running pass '", "Program arguments:"),
         pattern=rx(r"llvm\S*RunSignalHandlers|_ZN4llvm3sys17RunSignalHandlersEv|^Stack dump:"
                     r"|^\d+\.\s+Running pass '[^']+' on (?:module|function)"
                     r"|^0\.\s+Program arguments: "),
         read=_stack_dump, source="LLVM's PrettyStackTrace and signal handler output"),
    Rule(id="llvm-stack-frame", klass="compiler-crash", tier=2,
         triggers=("+0x",),
         pattern=rx(r"#\d+ 0x[0-9a-f]{6,} .*\((?:\S*[/\\])?(?P<prog>clang[\w.+-]*?|llc|opt|"
                     r"lld|ld\.lld)(?:\.exe)?\+0x[0-9a-f]+\)"),
         read=_llvm_frame, source="LLVM's symbolized stack trace; ggml-org/llama.cpp#24964"),
    Rule(id="clang-backend-fatal", klass="compiler-crash", tier=2,
         triggers=("error in backend: ",),
         pattern=rx(r"^(?:\S*clang\S*: )?fatal error: error in backend: (?P<what>.+)$"),
         read=_backend_error, source="clang's err_fe_error_backend ('fatal error: error in "
         "backend: %0', an LLVM report_fatal_error during code generation) and llvm/"
         "llvm-project llvm/lib/Target/AMDGPU/SIInstrInfo.cpp reportIllegalCopy ('illegal VGPR "
         "to SGPR copy', a DiagnosticInfoUnsupported error), read in the code index, commit "
         "not established; ROCm/TransformerEngine#653"),
)
