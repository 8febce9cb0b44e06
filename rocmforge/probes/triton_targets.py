"""Probe: can the Triton installed in a given Python generate code for each GPU target?

Owns: running `triton_codegen.py` (stdlib + triton only, passed by path) in that Python with a
time limit, a fresh Triton home and cache in a temporary directory (never the user's
`~/.triton`) and the kit's `ld.lld` candidates for Triton 3.0-3.4 (3.5+ link in-process); then,
in this process, reading each code object's ELF header with the kit's own decoder
(`rocmforge.inspect.elf`) and checking its EF_AMDGPU_MACH against the arch table. The verdict per
target: OK, FAIL (Triton's first error line, a crash, or a mach mismatch) or SKIP (no triton in
that Python, no ld.lld, not a target Triton compiles for, or the time limit ran out).
Also `gap_error` (the paragraph that stops a build) and `main`, the entry point verify runs in a
subprocess of the verify venv.
When the caller allows it (doctor), the Python asked about is this very interpreter and nothing
here can find a triton, the answer (SKIP, no triton) is given without starting it
(`triton_missing_here`).
Must not: import triton into the kit's process, write outside its temporary directory, or
decide what a FAIL means for a build (the build step and doctor decide).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rocmforge.errors import StepFailed
from rocmforge.knowledge.arches import ArchTable, load_arch_table
from rocmforge.probes import Runner, RunResult, run_command
from rocmforge.probes.triton_codegen import (
    EVENTS_FILE,
    EXIT_API_UNKNOWN,
    EXIT_NO_LLD,
    EXIT_NO_TRITON,
)

CODEGEN_SCRIPT = Path(__file__).with_name("triton_codegen.py")
SCHEMA = "rocmforge.triton-probe/1"
# benchmarks/triton_probe.py on a shared 2-core machine: about 1 s for a one-target probe (the
# first compile in a process 0.5-1 s), 0.03-0.25 s per further target, under 3 s for eight
# targets. The limit is far above that; a hung compile ends here.
DEFAULT_TIMEOUT_S = 180.0
# Folders whose llvm*/bin/ld.lld the kit offers Triton 3.0-3.4 when Triton finds none itself.
DEFAULT_LLD_ROOTS: tuple[Path, ...] = (Path("/opt/rocm"), Path("/usr/lib"))
LLD_FIX = (
    "set TRITON_HIP_LLD_PATH to an ld.lld (ROCm ships /opt/rocm/llvm/bin/ld.lld; on Debian "
    "`apt-get install lld-22` gives /usr/lib/llvm-22/bin/ld.lld)"
)

ProbeStatus = Literal["OK", "FAIL", "SKIP"]
# Why a target was not proven (SKIP) or what kind of FAIL it is; "" for OK and plain FAILs.
Cause = Literal["", "no_triton", "no_lld", "time_limit", "cannot_run", "not_a_triton_target",
                "crash", "api", "mach"]


@dataclass(frozen=True, kw_only=True)
class TritonTargetResult:
    """One target's verdict. `mach` is what the code object's header says (None when there is
    no code object); `expected_mach` is the arch table's value for `target`."""

    target: str
    status: ProbeStatus
    reason: str
    wave: int = 0
    code_object_size: int = 0
    mach: int | None = None
    expected_mach: int | None = None
    seconds: float = 0.0
    cause: Cause = ""

    def to_json(self) -> dict[str, object]:
        return {
            "target": self.target,
            "status": self.status,
            "reason": self.reason,
            "wave": self.wave,
            "code_object_size": self.code_object_size,
            "mach": None if self.mach is None else f"{self.mach:#05x}",
            "expected_mach": None if self.expected_mach is None else f"{self.expected_mach:#05x}",
            "seconds": round(self.seconds, 3),
            "cause": self.cause,
        }


@dataclass(frozen=True, kw_only=True)
class TritonProbeReport:
    """What the probe found in one Python: the Triton it ran and a verdict per target."""

    python: str
    triton_version: str
    """"" when that Python has no importable triton."""
    triton_location: str = ""
    api: str = ""
    """How ASTSource was called (triton_codegen.API_*)."""
    lld: str = ""
    """The ld.lld Triton linked with; "" for Triton 3.5+ (in-process) or when none was found."""
    lld_source: str = ""
    """"TRITON_HIP_LLD_PATH" (the user's), "triton" (its own search), "kit" (a kit candidate)."""
    results: tuple[TritonTargetResult, ...] = ()
    seconds: float = 0.0
    argv: tuple[str, ...] = field(default=(), compare=False)

    def failed(self) -> tuple[TritonTargetResult, ...]:
        return tuple(r for r in self.results if r.status == "FAIL")

    def skipped(self) -> tuple[TritonTargetResult, ...]:
        return tuple(r for r in self.results if r.status == "SKIP")

    def to_json(self) -> dict[str, object]:
        return {
            "schema": SCHEMA,
            "python": self.python,
            "triton_version": self.triton_version,
            "triton_location": self.triton_location,
            "api": self.api,
            "lld": self.lld,
            "lld_source": self.lld_source,
            "seconds": round(self.seconds, 3),
            "argv": list(self.argv),
            "results": [r.to_json() for r in self.results],
        }


@dataclass(frozen=True, kw_only=True)
class LldSearch:
    """The ld.lld files the kit found (best first) and every place it looked."""

    found: tuple[str, ...]
    looked_at: tuple[str, ...]


def find_lld(environ: Mapping[str, str], roots: Sequence[Path] = DEFAULT_LLD_ROOTS) -> LldSearch:
    """ROCm's (`$ROCM_PATH`, then each root's llvm/bin), `ld.lld` on PATH, then versioned LLVM
    installs (`<root>/llvm-N/bin/ld.lld`, newest first)."""
    looked: list[str] = []
    found: list[str] = []

    def consider(path: str) -> None:
        if path not in looked:
            looked.append(path)
            if os.path.isfile(path) and path not in found:
                found.append(path)

    rocm_path = environ.get("ROCM_PATH", "").strip()
    if rocm_path:
        consider(os.path.join(rocm_path, "llvm", "bin", "ld.lld"))
    for root in roots:
        consider(str(root / "llvm" / "bin" / "ld.lld"))
    search_path = environ.get("PATH", "")
    on_path = shutil.which("ld.lld", path=search_path) if search_path else None
    looked.append(f"ld.lld on PATH ({search_path or 'empty'})")
    if on_path and on_path not in found:
        found.append(on_path)
    for root in roots:
        pattern = str(root / "llvm-*" / "bin" / "ld.lld")
        versioned = sorted(glob.glob(pattern), key=_llvm_major, reverse=True)
        looked.append(pattern)
        found += [p for p in versioned if os.path.isfile(p) and p not in found]
    return LldSearch(found=tuple(found), looked_at=tuple(looked))


def _llvm_major(path: str) -> int:
    name = Path(path).parent.parent.name  # llvm-22
    digits = name.rpartition("-")[2]
    return int(digits) if digits.isdigit() else 0


@dataclass(frozen=True, kw_only=True)
class ProbeRequest:
    """One target to compile: processor name, wave size and EF_AMDGPU_MACH from the arch table."""

    target: str
    wave: int
    expected_mach: int


def plan_targets(
    targets: Sequence[str], table: ArchTable
) -> tuple[tuple[ProbeRequest, ...], tuple[TritonTargetResult, ...]]:
    """(targets to compile, verdicts decided without compiling). Feature suffixes are dropped
    (Triton compiles for the processor); generic and unknown targets SKIP with the reason."""
    requests: list[ProbeRequest] = []
    decided: list[TritonTargetResult] = []
    seen: set[str] = set()
    for text in targets:
        base = processor(text)
        if not base or base in seen:
            continue
        seen.add(base)
        arch = table.get(base)
        if arch is None:
            decided.append(TritonTargetResult(
                target=base, status="SKIP", cause="not_a_triton_target",
                reason=f"{base} is not in the kit's arch table (no wave size or mach to check)"))
        elif arch.generic:
            members = ", ".join(arch.generic_members)
            decided.append(TritonTargetResult(
                target=base, status="SKIP", wave=arch.wavefront, cause="not_a_triton_target",
                reason=f"Triton compiles for the GPU it runs on, never for a generic target; "
                       f"probe a member instead ({members})"))
        else:
            requests.append(ProbeRequest(target=base, wave=arch.wavefront, expected_mach=arch.mach))
    return tuple(requests), tuple(decided)


def codegen_argv(python: str, out: Path, requests: Sequence[ProbeRequest],
                 lld_candidates: Sequence[str]) -> list[str]:
    argv = [python, str(CODEGEN_SCRIPT), "--out", str(out)]
    for candidate in lld_candidates:
        argv += ["--lld-candidate", candidate]
    argv += [f"{r.target}:{r.wave}" for r in requests]
    return argv


def probe_environment(environ: Mapping[str, str], scratch: Path) -> dict[str, str]:
    """The child's environment: the caller's, with Triton's home, cache, dump and override dirs
    in `scratch` so nothing is read from or written to `~/.triton`."""
    env = dict(environ)
    env.update({
        "TRITON_HOME": str(scratch / "home"),
        "TRITON_CACHE_DIR": str(scratch / "cache"),
        "TRITON_DUMP_DIR": str(scratch / "dump"),
        "TRITON_OVERRIDE_DIR": str(scratch / "override"),
    })
    for name in ("TRITON_ALWAYS_COMPILE", "MLIR_ENABLE_DUMP", "TRITON_KERNEL_DUMP",
                 "TRITON_KERNEL_OVERRIDE", "TRITON_OVERRIDE_ARCH"):
        env.pop(name, None)
    return env


def read_events(path: Path) -> list[dict[str, object]]:
    """The script's events; a torn last line (killed mid-write) is dropped."""
    if not path.is_file():
        return []
    events = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            events.append(item)
    return events


def check_code_object(request: ProbeRequest, data: bytes, seconds: float,
                      table: ArchTable) -> TritonTargetResult:
    """OK when the bytes are an AMDGPU ELF whose EF_AMDGPU_MACH is the target's."""
    # Here: only a Triton that compiled something needs the ELF reader (doctor starts faster).
    from rocmforge.inspect.elf import EM_AMDGPU, ElfReadError, decode_code_object_header

    status: ProbeStatus = "FAIL"
    cause: Cause = "mach"
    mach: int | None = None
    try:
        header = decode_code_object_header(data[:64])
    except ElfReadError as exc:
        reason = f"Triton's code object is unreadable: {exc}"
    else:
        if header.e_machine != EM_AMDGPU:
            reason = (f"Triton's code object has e_machine {header.e_machine}, not AMDGPU "
                      f"({EM_AMDGPU})")
        elif header.mach != request.expected_mach:
            mach = header.mach
            other = table.by_mach(header.mach)
            named = other.name if other else "a target the kit does not know"
            reason = (f"Triton produced code for {named} (EF_AMDGPU_MACH {header.mach:#05x}), "
                      f"not for {request.target} ({request.expected_mach:#05x})")
        else:
            status, mach, cause = "OK", header.mach, ""
            reason = (f"{len(data)}-byte code object, EF_AMDGPU_MACH {header.mach:#05x} = "
                      f"{request.target}")
    return TritonTargetResult(
        target=request.target, status=status, reason=reason, wave=request.wave,
        code_object_size=len(data), mach=mach, expected_mach=request.expected_mach,
        seconds=seconds, cause=cause)


def _seconds(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) else 0.0


def probe_triton_targets(
    python: str | os.PathLike[str],
    targets: Sequence[str],
    *,
    table: ArchTable | None = None,
    environ: Mapping[str, str] = os.environ,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    lld_roots: Sequence[Path] = DEFAULT_LLD_ROOTS,
    run: Runner = run_command,
    answer_here: bool = False,
) -> TritonProbeReport:
    """Compile the probe kernel for each target with the Triton of `python` and check each code
    object. A crash on one target is that target's FAIL; the rest are compiled in a new process.
    `timeout_s` bounds the whole probe; targets left when it runs out SKIP. `answer_here`
    (doctor, a short-lived process): a missing triton in this very interpreter may be known
    without a child (`triton_missing_here`); a process that may have installed one since it
    started (a build: a `.pth` added then is not on this process's path) leaves it False."""
    table = table or load_arch_table()
    python = str(python)
    requests, decided = plan_targets(targets, table)
    lld = find_lld(environ, lld_roots)
    results: dict[str, TritonTargetResult] = {r.target: r for r in decided}
    info: dict[str, object] = {}
    argv: list[str] = []
    started = time.monotonic()
    pending = list(requests)
    missing = triton_missing_here(python, environ) if pending and answer_here else ""
    if missing:  # what the child would say, known without starting it
        _skip_all(results, pending, no_triton_reason(python, missing), "no_triton")
        pending = []
    with tempfile.TemporaryDirectory(prefix="rocmforge-triton-probe-") as tmp:
        scratch = Path(tmp)
        env = probe_environment(environ, scratch)
        attempt = 0
        while pending:
            attempt += 1
            out = scratch / f"run{attempt}"
            argv = codegen_argv(python, out, pending, lld.found)
            left = timeout_s - (time.monotonic() - started)
            if left <= 0:
                _skip_all(results, pending, f"not probed: the probe's time limit "
                                            f"({timeout_s:g} s) ran out", "time_limit")
                break
            done = run(argv, env=env, cwd=tmp, timeout=left)
            events = read_events(out / EVENTS_FILE)
            pending = absorb_run(done, events, pending, results, info, out, table, lld, timeout_s)
    ordered = tuple(results[t] for t in _order(targets) if t in results)
    return TritonProbeReport(
        python=python,
        triton_version=str(info.get("version", "")),
        triton_location=str(info.get("location", "")),
        api=str(info.get("api", "")),
        lld=str(info.get("lld", "")),
        lld_source=str(info.get("lld_source", "")),
        results=ordered,
        seconds=time.monotonic() - started,
        argv=tuple(argv),
    )


def no_triton_reason(python: str, error: object) -> str:
    """The SKIP reason of every target of a Python whose `import triton` fails with `error`."""
    return f"no triton in {python} ({error})"


# What `python` reads besides its own path that decides where `import triton` looks.
_PATH_VARIABLES = ("PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE", "PYTHONSAFEPATH",
                   "PYTHONUSERBASE", "PYTHONPLATLIBDIR")


def triton_missing_here(python: str, environ: Mapping[str, str]) -> str:
    """The error `import triton` would end with in `python`, known without starting it ("" when
    it cannot be): only when `python` is the very path of this interpreter, started as a plain
    one (no -I, -S, -s, -E, -P) and with this process's Python path variables, so its sys.path
    and finders are this process's (less the folders a caller added), and no finder of this
    process finds a module named triton (nothing is imported). A triton found, or one that
    might be, leaves the answer to the child."""
    if python != sys.executable or "triton" in sys.modules:
        return ""
    flags = sys.flags
    if (flags.isolated or flags.no_site or flags.no_user_site or flags.ignore_environment
            or getattr(flags, "safe_path", False)):
        return ""
    if any(environ.get(name) != os.environ.get(name) for name in _PATH_VARIABLES):
        return ""
    import importlib
    import importlib.util

    importlib.invalidate_caches()  # a folder listing read before an install is read again
    try:
        found = importlib.util.find_spec("triton")
    except (ImportError, ValueError):
        return ""
    return "" if found is not None else "ModuleNotFoundError: No module named 'triton'"


def processor(target: str) -> str:
    """`gfx90a:xnack-` -> `gfx90a`: Triton compiles for the processor."""
    return target.split(":", 1)[0].strip().lower()


def _order(targets: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(p for p in map(processor, targets) if p))


def _skip_all(results: dict[str, TritonTargetResult], requests: Sequence[ProbeRequest],
              reason: str, cause: Cause, status: ProbeStatus = "SKIP") -> None:
    for request in requests:
        results[request.target] = TritonTargetResult(
            target=request.target, status=status, reason=reason, wave=request.wave,
            expected_mach=request.expected_mach, cause=cause)


def absorb_run(
    done: RunResult,
    events: list[dict[str, object]],
    pending: list[ProbeRequest],
    results: dict[str, TritonTargetResult],
    info: dict[str, object],
    out: Path,
    table: ArchTable,
    lld: LldSearch,
    timeout_s: float,
) -> list[ProbeRequest]:
    """Turn one run's events into verdicts; return the targets still to compile."""
    by_target = {r.target: r for r in pending}
    began = ""
    for event in events:
        kind = event.get("event")
        if kind == "triton":
            info.update(version=event.get("version", ""), location=event.get("location", ""),
                        api=event.get("api", ""))
        elif kind == "lld":
            info.update(lld=event.get("path") or "", lld_source=event.get("source", ""))
            if event.get("needed") and not event.get("path"):
                if event.get("source") == "none":
                    said = str(event.get("error", "")).rstrip(".")
                    where = (f"Triton's own search: {said}; the kit looked at "
                             f"{', '.join(lld.looked_at)}")
                else:
                    where = str(event.get("error", ""))
                _skip_all(results, pending,
                          f"no ld.lld for Triton {info.get('version', '')}, which links code "
                          f"objects with an external ld.lld (3.5 and later link in-process) "
                          f"({where}); fix: {LLD_FIX}", "no_lld")
                return []
        elif kind == "no_triton":
            _skip_all(results, pending, no_triton_reason(done.argv[0], event.get("error", "")),
                      "no_triton")
            return []
        elif kind == "api_unknown":
            info.update(version=event.get("version", ""))
            _skip_all(results, pending,
                      f"the probe cannot drive Triton {event.get('version', '')}'s compile API: "
                      f"{event.get('error', '')}", "api", status="FAIL")
            return []
        elif kind == "begin":
            began = str(event.get("target", ""))
        elif kind == "done":
            target = str(event.get("target", ""))
            request = by_target.get(target)
            began = ""
            if request is None:
                continue
            seconds = _seconds(event.get("seconds"))
            if event.get("ok"):
                data = (out / str(event.get("file", ""))).read_bytes()
                results[target] = check_code_object(request, data, seconds, table)
            else:
                api = bool(event.get("api_error"))
                prefix = "the probe cannot drive this Triton: " if api else ""
                results[target] = TritonTargetResult(
                    target=target, status="FAIL", reason=prefix + str(event.get("error", "")),
                    wave=request.wave, expected_mach=request.expected_mach, seconds=seconds,
                    cause="api" if api else "")
    remaining = [r for r in pending if r.target not in results]
    if not remaining:
        return []
    if done.returncode == 124:
        _skip_all(results, remaining, f"not probed: the probe's time limit ({timeout_s:g} s) "
                                      "ran out before Triton finished", "time_limit")
        return []
    if done.returncode in (126, 127):
        # The one process path already says "cannot run <argv0>: <why>" when it could not
        # start the program; a shell-style 126/127 from the program itself does not.
        said = done.stderr.strip()
        reason = said if said.startswith("cannot run ") else f"cannot run {done.argv[0]}: {said}"
        _skip_all(results, remaining, reason, "cannot_run")
        return []
    if done.returncode in (EXIT_NO_TRITON, EXIT_NO_LLD, EXIT_API_UNKNOWN) or not events:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        _skip_all(results, remaining, f"the probe did not run in {done.argv[0]} "
                                      f"(exit {done.returncode}: {tail})", "cannot_run")
        return []
    if began and began in by_target:
        request = by_target[began]
        tail = (done.stderr.strip().splitlines() or [""])[-1]
        results[began] = TritonTargetResult(
            target=began, status="FAIL", wave=request.wave, expected_mach=request.expected_mach,
            reason=f"Triton crashed compiling for {began} (exit {done.returncode}"
                   + (f": {tail}" if tail else "") + ")", cause="crash")
        return [r for r in remaining if r.target != began]
    _skip_all(results, remaining, f"the probe stopped early (exit {done.returncode})", "crash",
              status="FAIL")
    return []


def gap_error(report: TritonProbeReport, *, pin: str = "") -> StepFailed | None:
    """The paragraph that stops a build when the pinned Triton cannot target a requested GPU;
    None when no target FAILed. The build step adds `--allow-triton-gap` handling."""
    failed = report.failed()
    if not failed:
        return None
    names = ", ".join(r.target for r in failed)
    details = "; ".join(f"{r.target}: {r.reason}" for r in failed)
    which = f"Triton {report.triton_version}" + (f" (PyTorch's pin {pin})" if pin else "")
    return StepFailed(
        f"{which} cannot generate code for {names} ({details})",
        "every torch.compile and Triton-backed kernel would fail on that GPU at run time, "
        "after an hour-long build",
        f"build a PyTorch ref whose Triton pin supports {names}, drop {names} from --arch, or "
        "pass --allow-triton-gap to build anyway (recorded in the manifest)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """`python -c 'from rocmforge.probes.triton_targets import main; main()' [--python P]
    [--timeout S] TARGET...`: the report as JSON on stdout. Exit 0 when no target FAILed, 1
    when one did."""
    import argparse  # here: only the command line needs it (doctor imports this module)

    parser = argparse.ArgumentParser(prog="rocmforge.probes.triton_targets")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S)
    parser.add_argument("targets", nargs="+")
    args = parser.parse_args(argv)
    report = probe_triton_targets(args.python, args.targets, timeout_s=args.timeout)
    sys.stdout.write(json.dumps(report.to_json(), indent=2) + "\n")
    return 1 if report.failed() else 0
