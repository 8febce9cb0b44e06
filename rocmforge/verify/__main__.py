"""`python -m rocmforge.verify`: run the checks, print the table, write the JSON report.

Owns: the command line, the lazy import of torch (a broken torch is exit 2 with its error, not a
traceback), choosing the device, `--when-device` (runtime checks only when a GPU of a given target
is visible, used by `nox -s verify(<target>)`), and the exit status: 0 all passed (WARN/SKIP
allowed), 1 some check FAILED, 2 bad input or torch unusable.
Must not: import anything outside the standard library at module level.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from types import ModuleType
from typing import NoReturn

from rocmforge.verify.model import CHECK_NAMES, CheckResult, Status, VerifyOptions, parse_size

# Checks that need a running GPU; `--when-device` skips them when no matching GPU is visible.
RUNTIME_CHECKS = ("ops", "blas", "attention", "triton", "memory", "perf", "comm")


class BadInput(Exception):
    """Bad command line or unusable torch: one paragraph on stderr, exit 2."""


def split_list(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.replace(";", ",").split(",") if p.strip())


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad argument is one paragraph (no usage block), exit 2, like BadInput."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"rocmforge verify: {message}. Nothing was checked. "
                     f"Fix: see `{self.prog} --help` for the accepted values.\n")


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="python -m rocmforge.verify",
        description="Check that the installed PyTorch works on this machine's GPU(s).",
    )
    p.add_argument("--json", metavar="FILE", default="", help="write the JSON report here")
    p.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto",
                   help="cuda (ROCm and CUDA builds alike), cpu, or auto (cuda when available)")
    p.add_argument("--only", default="", metavar="A,B",
                   help=f"checks to run (default all: {','.join(CHECK_NAMES)})")
    p.add_argument("--expect", default="", metavar="T1;T2",
                   help="GPU targets the build must contain, e.g. 'gfx1100;gfx942'")
    p.add_argument("--when-device", default="", metavar="TARGET",
                   help="run the runtime checks only if a GPU of this target is visible; "
                        "otherwise they SKIP with the reason")
    p.add_argument("--manifest", default="", metavar="FILE",
                   help="the build's dist/manifest.json: check each optional part and each "
                   "companion (torchvision, torchaudio) it says was built (and SKIP, with the "
                   "reason, each it left out)")
    p.add_argument("--triton-pin", default="", metavar="VERSION",
                   help="the Triton version torch must run with (default: from torch's metadata)")
    p.add_argument("--comm-sizes", default="", metavar="1KiB,1MiB",
                   help="message sizes for comm (default 1KiB..1GiB on GPUs, up to 1MiB on CPU)")
    p.add_argument("--comm-timeout", type=float, default=0.0, metavar="S",
                   help="seconds before a comm run is declared hung and killed")
    p.add_argument("--comm-world-size", type=int, default=0, metavar="N",
                   help="processes for comm (default: every GPU, or 2 on CPU)")
    # Proves the dying-process path (tests, issue 8): "exit:RANK" or "hang:RANK".
    p.add_argument("--comm-fault", default="", help=argparse.SUPPRESS)
    return p


def options_from_args(args: argparse.Namespace) -> VerifyOptions:
    only = split_list(args.only) if args.only else CHECK_NAMES
    unknown = [n for n in only if n not in CHECK_NAMES]
    if unknown:
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, CHECK_NAMES, n=1)
            hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise BadInput(f"unknown check {', '.join(hints)} in --only. "
                       f"Known checks: {', '.join(CHECK_NAMES)}.")
    try:
        sizes = tuple(parse_size(s) for s in split_list(args.comm_sizes))
    except ValueError as exc:
        raise BadInput(f"--comm-sizes: {exc}.") from None
    if args.comm_fault and not (args.comm_fault.split(":")[0] in ("exit", "hang")
                                and args.comm_fault.partition(":")[2].isdigit()):
        raise BadInput(f"--comm-fault {args.comm_fault!r}: expected exit:RANK or hang:RANK.")
    if args.comm_world_size < 0 or args.comm_timeout < 0:
        raise BadInput("--comm-world-size and --comm-timeout must not be negative.")
    if args.json:
        check_report_path(args.json)
    # Keep the canonical order whatever order --only gave.
    ordered = tuple(n for n in CHECK_NAMES if n in only)
    return VerifyOptions(
        device=args.device, only=ordered, expect=split_list(args.expect),
        triton_pin=args.triton_pin.strip(), comm_sizes=sizes, comm_timeout_s=args.comm_timeout,
        comm_world_size=args.comm_world_size, comm_fault=args.comm_fault,
    )


def check_report_path(path: str) -> None:
    """Refuse a --json path that cannot be written before the checks run (they take minutes on a
    GPU); the report is written at the end, through a temp file in the same folder."""
    import os

    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise BadInput(f"--json {path} is a directory. The report is one file. "
                       "Fix: name a file, e.g. --json verify.json.")
    if not os.path.isdir(folder):
        raise BadInput(f"--json {path}: the folder {folder} does not exist, so the report could "
                       "not be written. Nothing was checked. Fix: create the folder first or "
                       "name a file in an existing one.")
    if not os.access(folder, os.W_OK):
        raise BadInput(f"--json {path}: the folder {folder} is not writable. Nothing was checked. "
                       "Fix: name a file in a folder you can write to.")


def import_torch() -> ModuleType:
    """torch, or BadInput saying what broke. Anything can fly out of a broken install."""
    try:
        import torch
    except BaseException as exc:  # noqa: BLE001 - SystemExit/OSError from native libs too
        if isinstance(exc, KeyboardInterrupt):
            raise
        text = str(exc).strip().splitlines()
        first = text[0] if text else ""
        explained = explain_import_error(exc)
        if explained:
            raise BadInput(f"torch does not import ({type(exc).__name__}: {first}). Nothing was "
                           f"checked. {explained}") from None
        raise BadInput(
            f"torch does not import ({type(exc).__name__}: {first}). Nothing was checked: the "
            "install is broken or incomplete (a missing shared library, a wheel for another "
            "Python, or a half-finished pip install). Fix: reinstall the torch wheel into this "
            f"environment ({sys.executable} -m pip install --force-reinstall <torch wheel>) and "
            "run again."
        ) from None
    missing = [name for name in ("cuda", "__version__", "version") if not hasattr(torch, name)]
    if missing:
        # A stand-in module named torch (a test fixture's wheel, a stub package, a folder named
        # torch on sys.path): every check would fail with an AttributeError traceback.
        where = getattr(torch, "__file__", None) or "an unknown place"
        raise BadInput(
            f"the torch that imports here ({where}) is not a PyTorch: it has no "
            f"{', '.join('torch.' + n for n in missing)}. Nothing was checked: it is a stand-in "
            "(a test fixture's wheel, a stub package, a folder named torch on the import path). "
            "Fix: install a PyTorch wheel from a real build into this environment, or run from "
            "a folder without a torch/ of its own.")
    return torch


def explain_import_error(exc: BaseException) -> str:
    """The triage of a failed import (the same engine that explains a failed build step and
    `invoke triage`), as 'Cause (class): … Fix: …', or '' when it explains nothing."""
    import traceback

    from rocmforge.knowledge.steps import STEP
    from rocmforge.triage import explain_lines

    lines = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).splitlines()
    try:
        found = explain_lines(lines, step=STEP.verify)
    except Exception:  # noqa: BLE001 - a broken table must not hide the import error itself
        return ""
    if found.klass is None:
        return ""
    return f"Cause ({found.klass}, {found.subject}): {found.cause}. Fix: {found.fix}."


def matching_devices(torch: ModuleType, target: str) -> tuple[list[str], bool]:
    """(visible device targets, whether one matches `target`) for --when-device."""
    try:
        if not torch.cuda.is_available():
            return [], False
        seen = []
        for index in range(torch.cuda.device_count()):
            if torch.version.hip:
                props = torch.cuda.get_device_properties(index)
                seen.append(str(getattr(props, "gcnArchName", "")))
            else:
                major, minor = torch.cuda.get_device_capability(index)
                seen.append(f"sm_{major}{minor}")
    except Exception:  # noqa: BLE001 - a broken runtime means: no usable device
        return [], False
    base = target.split(":")[0]
    return seen, any(s.split(":")[0] == base for s in seen)


def run_suite(options: VerifyOptions, torch: ModuleType, when_device: str = ""
              ) -> tuple[list[CheckResult], list[str], VerifyOptions]:
    from rocmforge.verify.checks import CheckContext, run_one

    notes: list[str] = []
    if options.device == "auto":
        options = replace(options, device="cuda" if torch.cuda.is_available() else "cpu")
        notes.append(f"--device auto chose {options.device}")
    asked = options.only
    skipped: dict[str, CheckResult] = {}
    if when_device:
        seen, found = matching_devices(torch, when_device)
        if not found:
            why = (f"no {when_device} device visible here (visible: "
                   f"{', '.join(seen) if seen else 'none'}); runtime checks skipped")
            notes.append(why)
            skipped = {n: CheckResult(name=n, status=Status.SKIP, reason=why)
                       for n in options.only if n in RUNTIME_CHECKS}
            # The build and the compiled arch list are still checked, without a device.
            options = replace(options, device="cpu",
                              only=tuple(n for n in options.only if n not in RUNTIME_CHECKS))
    ctx = CheckContext(torch=torch, options=options)
    # In the order asked (CHECK_NAMES order); a check may give several rows (companions).
    results: list[CheckResult] = []
    for name in asked:
        results += [skipped[name]] if name in skipped else run_one(name, ctx)
    return results, notes, options


def read_manifest_doc(manifest: str) -> dict[str, object] | None:
    """The --manifest document, None when none was given; BadInput when it is not JSON."""
    if not manifest:
        return None
    import json

    try:
        with open(manifest, encoding="utf-8") as handle:
            doc = json.load(handle)
    except (OSError, ValueError) as exc:
        raise BadInput(f"--manifest {manifest} cannot be read as JSON ({exc}). "
                       "Fix: pass the dist/manifest.json a build wrote.") from None
    if not isinstance(doc, dict):
        raise BadInput(f"--manifest {manifest} holds a JSON {type(doc).__name__}, not an object. "
                       "Fix: pass the dist/manifest.json a build wrote.")
    return doc


def with_manifest(options: VerifyOptions, doc: dict[str, object] | None) -> VerifyOptions:
    """The companions the manifest says were built, for the `companions` check."""
    if doc is None:
        return options
    from rocmforge.verify.checks import extensions
    from rocmforge.verify.checks.companions import expected_from_manifest

    return replace(options, companions=expected_from_manifest(doc),
                   extensions=extensions.expected_from_manifest(doc), manifest_given=True)


def feature_results(doc: dict[str, object] | None, options: VerifyOptions, torch: ModuleType
                    ) -> list[CheckResult]:
    """One result per optional part the manifest lists (issue 17): proven when built, SKIP with
    the build's reason when left out. No manifest, no rows."""
    if doc is None:
        return []
    from rocmforge.verify.checks import CheckContext
    from rocmforge.verify.checks.features import check_features

    features = doc.get("features")
    if not isinstance(features, dict):
        return []
    return check_features(CheckContext(torch=torch, options=options), features)


def main(argv: Sequence[str] | None = None) -> int:
    started = time.perf_counter()
    args = parser().parse_args(argv)
    try:
        options = options_from_args(args)
        doc = read_manifest_doc(args.manifest)
        options = with_manifest(options, doc)
        torch = import_torch()
        results, notes, options = run_suite(options, torch, args.when_device.strip())
        results += feature_results(doc, options, torch)
    except BadInput as exc:
        sys.stderr.write(f"rocmforge verify: {exc}\n")
        return 2
    from rocmforge.verify.report import build_document, exit_code, print_report, write_json

    document = build_document(options=options, results=results, torch=torch,
                              wall_s=time.perf_counter() - started, notes=notes)
    print_report(results, document)
    for note in notes:
        sys.stdout.write(f"note: {note}\n")
    if args.json:
        try:
            write_json(document, args.json)
        except OSError as exc:
            sys.stderr.write(f"rocmforge verify: cannot write the report to {args.json}: {exc}\n")
            return 2
    return exit_code(results)


if __name__ == "__main__":
    sys.exit(main())
