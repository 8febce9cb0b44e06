"""Check `companions`: torchvision and torchaudio, where installed or built, work with this torch.

Owns: one report row per part, so what ran and what did not stay apart in the summary:
- `<name>`: it imports, its torch requirement (metadata, else its release line) is met by the
  running torch, and, when `--manifest` names it, it is the version (and source commit) the
  build made. A companion that does not import is a FAIL with the loader's cause
  (rocmforge.verify.checks._companion_load); one the manifest names but that is not installed
  is a FAIL; one neither installed nor named is a SKIP.
- `<name>.ops(cpu)`: its compiled operators on the CPU against references (torchvision: nms,
  roi_align; torchaudio: lfilter);
- `<name>.ops(gpu)`: the same operators on the device against the CPU (torchaudio adds
  resample); a SKIP with the reason where no device is usable;
- `torchaudio.decode`: a WAV written here decodes to its exact samples; a SKIP with the reason
  where this torchaudio has no decoder (2.9+ needs TorchCodec).
With neither companion installed nor named, the check is one SKIP row named `companions`.
Must not: import anything outside the standard library, torch and the companions (it runs in the
target venv), or PASS a part that did not run.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
import time
from collections.abc import Callable, Mapping
from types import ModuleType

from rocmforge.verify.checks import CheckContext, no_binary_diagnosis, result
from rocmforge.verify.checks._companion_load import (
    diagnosis,
    load_failures,
    native_libraries,
    package_dir,
)
from rocmforge.verify.checks._companion_pairing import pairing, release_of
from rocmforge.verify.checks.build import build_kind
from rocmforge.verify.model import COMPANIONS, CheckResult, ExpectedCompanion, Status

NAME = "companions"

Part = Callable[[], tuple[list[str], dict[str, object]]]


def expected_from_manifest(doc: Mapping[str, object]) -> tuple[ExpectedCompanion, ...]:
    """The companions a manifest says were built: a non-empty `wheels[<name>]`, or a
    `companions[<name>]` entry naming a wheel. Other shapes name nothing."""
    wheels = doc.get("wheels")
    section = doc.get("companions")
    found = []
    for name in COMPANIONS:
        wheel = wheels.get(name) if isinstance(wheels, dict) else None
        entry = section.get(name) if isinstance(section, dict) else None
        entry = entry if isinstance(entry, dict) else {}
        wheel = wheel if isinstance(wheel, str) and wheel else str(entry.get("wheel") or "")
        if not wheel:
            continue
        found.append(ExpectedCompanion(name=name, wheel=wheel,
                                       version=str(entry.get("version") or ""),
                                       commit=str(entry.get("commit") or "")))
    return tuple(found)


def installed_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def requirements(name: str) -> list[str] | None:
    try:
        return importlib.metadata.requires(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def timed(fn: Callable[[], CheckResult]) -> CheckResult:
    started = time.perf_counter()
    row = fn()
    return CheckResult(name=row.name, status=row.status, reason=row.reason,
                       figures=row.figures, seconds=time.perf_counter() - started)


def device_unusable(ctx: CheckContext) -> str:
    """Why the device part cannot run, or "" when it can."""
    if not ctx.torch.cuda.is_available():
        return "no GPU visible to torch (torch.cuda.is_available() is False)"
    if not ctx.on_gpu:
        return ("the device under test is the CPU (--device cpu, or no GPU of the "
                "--when-device target)")
    return ""


def run_part(ctx: CheckContext, row: str, what: str, part: Part) -> CheckResult:
    """A part's row: PASS when it ran without problems, FAIL naming them or what raised."""
    try:
        problems, figures = part()
    except Exception as exc:  # noqa: BLE001 - kernels fail in many types; the row says which
        reason = no_binary_diagnosis(ctx, exc) or f"{type(exc).__name__}: {_first_line(exc)}"
        return result(row, Status.FAIL, f"{what} raised {reason}")
    if problems:
        return result(row, Status.FAIL, "; ".join(problems), **figures)
    return result(row, Status.PASS, what, **figures)


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0][:300] if lines else ""


def import_companion(name: str) -> tuple[ModuleType | None, str]:
    """The module, or None and the error's first line. Anything can fly out of a broken
    native library at import, SystemExit included."""
    try:
        return importlib.import_module(name), ""
    except BaseException as exc:  # noqa: BLE001
        if isinstance(exc, KeyboardInterrupt):
            raise
        return None, f"{type(exc).__name__}: {_first_line(exc)}"


def identity_row(ctx: CheckContext, name: str, version: str, module: ModuleType,
                 expected: ExpectedCompanion | None) -> CheckResult:
    """`<name>`: imported; paired with this torch; the manifest's version and commit."""
    torch_version = str(ctx.torch.__version__)
    paired = pairing(name, version, torch_version, requirements(name))
    commit = str(getattr(getattr(module, "version", None), "git_version", "") or "")
    figures: dict[str, object] = {
        "version": version, "torch": torch_version, "requirement": paired.requirement,
        "pairing_source": paired.source, "commit": commit,
        "location": str(getattr(module, "__file__", "") or ""),
    }
    problems = [] if paired.ok is not False else [paired.text]
    if expected is not None:
        figures["manifest"] = {"version": expected.version, "wheel": expected.wheel,
                               "commit": expected.commit}
        if expected.version and release_of(expected.version) != release_of(version):
            problems.append(f"the build's manifest names {name} {expected.version} "
                            f"({expected.wheel}), but {version} is installed: reinstall the "
                            f"built wheel (pip install --force-reinstall --no-deps "
                            f"dist/{expected.wheel})")
        if expected.commit and commit and not (expected.commit.startswith(commit)
                                               or commit.startswith(expected.commit)):
            problems.append(f"the installed {name} was built from commit {commit[:12]}, the "
                            f"manifest's from {expected.commit[:12]}")
    if problems:
        return result(name, Status.FAIL, "; ".join(problems), **figures)
    if paired.ok is None:
        return result(name, Status.WARN, f"{name} {version} imports; {paired.text}", **figures)
    built = " (the version the manifest names)" if expected is not None else ""
    return result(name, Status.PASS, f"{name} {version}{built} imports; {paired.text}",
                  **figures)


def import_failure_row(ctx: CheckContext, name: str, version: str, error: str) -> CheckResult:
    torch = ctx.torch
    folder = package_dir(name)
    libraries = native_libraries(folder) if folder is not None else []
    failures, unknown = load_failures(libraries)
    kind = build_kind(getattr(torch.version, "hip", None), getattr(torch.version, "cuda", None),
                      getattr(torch.version, "rocm", None))
    text = diagnosis(companion=name, version=version, import_error=error,
                     torch_version=str(torch.__version__), torch_kind=kind, failures=failures,
                     unknown=unknown)
    return result(name, Status.FAIL, text, version=version, import_error=error,
                  libraries=[str(p) for p in libraries],
                  load_errors={f.library: f.error for f in failures},
                  missing=sorted({f.missing for f in failures if f.missing}),
                  undefined=sorted({f.undefined for f in failures if f.undefined}))


def companion_rows(ctx: CheckContext, name: str, expected: ExpectedCompanion | None
                   ) -> list[CheckResult]:
    version = installed_version(name)
    if version is None:
        if expected is None:
            why = ("the manifest names no build of it" if ctx.options.manifest_given
                   else "no --manifest given")
            return [result(name, Status.SKIP, f"{name} is not installed ({why})")]
        return [result(name, Status.FAIL,
                       f"the build's manifest names {name} {expected.version} "
                       f"({expected.wheel}), but it is not installed in this environment "
                       f"({sys.executable}). Fix: install the built wheel (pip install --no-deps "
                       f"dist/{expected.wheel}); `nox -s verify` installs it with torch's",
                       manifest={"version": expected.version, "wheel": expected.wheel})]
    module, error = import_companion(name)
    if module is None:
        why = f"{name} does not import (see the {name} row)"
        return [timed(lambda: import_failure_row(ctx, name, version, error)),
                *(result(f"{name}.{part}", Status.SKIP, why) for part in _parts(name))]
    rows = [timed(lambda: identity_row(ctx, name, version, module, expected))]
    torch = ctx.torch
    if name == "torchvision":
        from rocmforge.verify.checks import _vision_ops as ops

        cpu_what = "nms and roi_align on the CPU match the float64 references"
        gpu_what = "nms and roi_align on the device match the CPU"
    else:
        from rocmforge.verify.checks import _audio_ops as ops  # type: ignore[no-redef]

        cpu_what = "lfilter on the CPU matches the difference equation"
        gpu_what = "lfilter and resample on the device match the CPU"
    rows.append(timed(lambda: run_part(ctx, f"{name}.ops(cpu)", cpu_what,
                                             lambda: ops.cpu_against_reference(torch, module))))
    unusable = device_unusable(ctx)
    if unusable:
        rows.append(result(f"{name}.ops(gpu)", Status.SKIP,
                           f"not run: {unusable}; the CPU part ran"))
    else:
        rows.append(timed(lambda: run_part(
            ctx, f"{name}.ops(gpu)", gpu_what,
            lambda: ops.device_against_cpu(torch, module, "cuda"))))
    if name == "torchaudio":
        rows.append(timed(lambda: decode_row(ctx, module, version)))
    return rows


def decode_row(ctx: CheckContext, torchaudio: ModuleType, version: str) -> CheckResult:
    from rocmforge.verify.checks import _audio_ops

    row = "torchaudio.decode"
    missing = _audio_ops.decoder_missing(torchaudio, release_of(version))
    if missing:
        return result(row, Status.SKIP, f"not run: {missing}")
    try:
        problems, figures = _audio_ops.decode(ctx.torch, torchaudio)
    except Exception as exc:  # noqa: BLE001 - decoders raise many types
        text = f"{type(exc).__name__}: {_first_line(exc)}"
        if any(word in text.lower() for word in ("torchcodec", "ffmpeg", "libav")):
            return result(row, Status.SKIP, f"not run: the decoder is not usable here ({text})")
        return result(row, Status.FAIL, f"decoding a 16-bit WAV raised {text}")
    if problems:
        return result(row, Status.FAIL, "; ".join(problems), **figures)
    return result(row, Status.PASS, "a 16-bit PCM WAV decodes to its exact samples and rate",
                  **figures)


def _parts(name: str) -> tuple[str, ...]:
    return ("ops(cpu)", "ops(gpu)", "decode") if name == "torchaudio" else ("ops(cpu)", "ops(gpu)")


def run(ctx: CheckContext) -> list[CheckResult]:
    expected = {e.name: e for e in ctx.options.companions}
    present = [n for n in COMPANIONS if n in expected or installed_version(n) is not None]
    if not present:
        why = ("and the manifest names none" if ctx.options.manifest_given
               else "and no --manifest names one")
        return [result(NAME, Status.SKIP,
                       f"no companion installed ({', '.join(COMPANIONS)}) {why}")]
    rows: list[CheckResult] = []
    for name in COMPANIONS:
        rows += companion_rows(ctx, name, expected.get(name))
    return rows
