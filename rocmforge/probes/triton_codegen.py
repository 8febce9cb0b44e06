"""Runs inside a target Python (a build or verify venv): compile one small Triton kernel per GPU
target with Triton's AMD backend and write the code objects.

Usage (the kit's `rocmforge.probes.triton_targets` builds this argv; never run by users):
    python triton_codegen.py --out DIR [--lld-candidate PATH ...] gfx942:64 gfx1100:32 ...

Owns: importing triton, choosing how to drive this Triton's compile API (it changed within 3.x),
finding the `ld.lld` Triton 3.0-3.4 link with, and, per target, `triton.compile(ASTSource(...),
target=GPUTarget("hip", arch, wave))`, the code object bytes in `DIR/<arch>.hsaco` and an event
line in `DIR/events.jsonl` (written as it goes, so a crash or time-out keeps what was finished).
Exit status: 0 done (per-target errors are events), 3 no triton, 4 an API this script does not
know, 5 no ld.lld, 2 bad arguments.
Must not: import anything but the standard library and triton (it runs where the kit is not
installed), read or write outside DIR and the Triton cache the caller chose (TRITON_CACHE_DIR),
or judge a code object (the kit reads it with its own ELF decoder).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType
from typing import IO

EVENTS_FILE = "events.jsonl"
KERNEL_FILE = Path(__file__).with_name("triton_probe_kernel.py")
EXIT_NO_TRITON = 3
EXIT_API_UNKNOWN = 4
EXIT_NO_LLD = 5

# How ASTSource is called, by release: 3.0/3.1 key the signature and constants by argument index;
# 3.2 keys both by name and leaves the constexpr out of the signature; 3.3 onwards takes
# `constexprs` and lists the constexpr in the signature as "constexpr".
API_INDEXED = "indexed-constants"
API_NAMED = "named-constants"
API_CONSTEXPRS = "constexprs"

_ERROR_LINE = re.compile(r"\berror\b", re.IGNORECASE)


class ApiUnknown(Exception):
    """This Triton's compile API is not one the script knows."""


class Events:
    """The event log the kit reads: one JSON object per line, flushed at once."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, event: str, **fields: object) -> None:
        self._stream.write(json.dumps({"event": event, **fields}) + "\n")
        self._stream.flush()


def version_tuple(text: str) -> tuple[int, ...]:
    """'3.6.0+gitabc' -> (3, 6, 0); the leading numeric parts only."""
    parts = []
    for piece in text.split("+", 1)[0].split("."):
        match = re.match(r"\d+", piece)
        if not match:
            break
        parts.append(int(match.group()))
    return tuple(parts)


def choose_api(triton: ModuleType) -> str:
    """The ASTSource calling convention of this Triton, or ApiUnknown saying why."""
    import inspect

    version = version_tuple(getattr(triton, "__version__", ""))
    try:
        from triton.compiler import ASTSource
    except ImportError as exc:
        raise ApiUnknown(f"triton.compiler has no ASTSource ({exc})") from None
    params = list(inspect.signature(ASTSource.__init__).parameters)
    if version < (3, 0):
        raise ApiUnknown(
            f"Triton {triton.__version__} predates 3.0; the probe drives Triton 3.x only"
        )
    if "constexprs" in params:
        return API_CONSTEXPRS
    if "constants" in params:
        return API_NAMED if version >= (3, 2) else API_INDEXED
    raise ApiUnknown(f"ASTSource takes {params[1:]}, neither `constexprs` nor `constants`")


def make_source(api: str, kernel: ModuleType) -> object:
    from triton.compiler import ASTSource

    fn = kernel.rocmforge_probe_add
    types = {name: "*fp32" for name in kernel.POINTER_ARGS}
    types.update({name: "i32" for name in kernel.SCALAR_ARGS})
    block = {kernel.CONSTEXPR: kernel.BLOCK_SIZE}
    if api == API_CONSTEXPRS:
        return ASTSource(fn, signature={**types, kernel.CONSTEXPR: "constexpr"},
                         constexprs=block)
    if api == API_NAMED:
        return ASTSource(fn, signature=types, constants=block)
    names = list(fn.arg_names)
    return ASTSource(
        fn,
        signature={names.index(name): ty for name, ty in types.items()},
        constants={names.index(kernel.CONSTEXPR): kernel.BLOCK_SIZE},
    )


def gpu_target_class() -> type:
    try:
        from triton.backends.compiler import GPUTarget
    except ImportError:
        try:
            from triton.compiler import GPUTarget  # type: ignore[no-redef]
        except ImportError as exc:
            raise ApiUnknown(f"no GPUTarget in triton.backends.compiler ({exc})") from None
    return GPUTarget  # type: ignore[no-any-return]


def hip_backend() -> type:
    try:
        from triton.backends.amd.compiler import HIPBackend
    except ImportError as exc:
        raise ApiUnknown(f"this Triton has no AMD backend (triton.backends.amd: {exc})") from None
    return HIPBackend  # type: ignore[no-any-return]


def find_lld(backend: type, candidates: list[str]) -> dict[str, object]:
    """Which ld.lld this Triton will link with. Triton 3.5+ links in-process (`needed` False).
    The user's TRITON_HIP_LLD_PATH is taken as it is; else Triton's own search; else the first of
    the kit's candidates, exported as TRITON_HIP_LLD_PATH for this process only."""
    if not hasattr(backend, "path_to_rocm_lld"):
        return {"needed": False}
    user = os.environ.get("TRITON_HIP_LLD_PATH")
    if user is not None:
        if Path(user).is_file():
            return {"needed": True, "path": user, "source": "TRITON_HIP_LLD_PATH"}
        return {"needed": True, "path": None, "source": "TRITON_HIP_LLD_PATH",
                "error": f"TRITON_HIP_LLD_PATH={user} is not a file", "tried": [user]}
    try:
        found = backend.path_to_rocm_lld()
        return {"needed": True, "path": str(found), "source": "triton"}
    except Exception as exc:  # noqa: BLE001 - Triton raises a bare Exception here
        triton_error = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
    for candidate in candidates:
        if Path(candidate).is_file():
            os.environ["TRITON_HIP_LLD_PATH"] = candidate
            return {"needed": True, "path": candidate, "source": "kit",
                    "triton_error": triton_error}
    return {"needed": True, "path": None, "source": "none", "error": triton_error,
            "tried": candidates}


def load_kernel() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rocmforge_triton_probe_kernel", KERNEL_FILE)
    if spec is None or spec.loader is None:
        raise ApiUnknown(f"cannot load the probe kernel from {KERNEL_FILE}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class CapturedStderr:
    """Points file descriptor 2 at a file while Triton compiles: MLIR and LLVM write their
    diagnostics there from C++, past Python's sys.stderr."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._saved = -1

    def __enter__(self) -> CapturedStderr:
        sys.stderr.flush()
        self._saved = os.dup(2)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 2)
        os.close(fd)
        return self

    def __exit__(self, *exc_info: object) -> None:
        sys.stderr.flush()
        os.dup2(self._saved, 2)
        os.close(self._saved)

    def text(self) -> str:
        return self.path.read_text(errors="replace") if self.path.exists() else ""


def first_error_line(diagnostics: str, exc: BaseException) -> str:
    """The compiler's first error line when it printed one (without the `loc(...)` prefix that
    points into the probe kernel), else the exception's first line."""
    for line in diagnostics.splitlines():
        if _ERROR_LINE.search(line):
            line = line.strip()
            at = line.find("error:")
            return (line[at:] if at > 0 else line)[:400]
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(exc).__name__}: {first}"[:400]


def code_object_bytes(compiled: object) -> bytes:
    asm = getattr(compiled, "asm", None)
    if asm is None or "hsaco" not in asm:
        keys = sorted(asm.keys()) if asm is not None else []
        raise ApiUnknown(f"the compiled kernel has no 'hsaco' in .asm (keys: {keys})")
    data = asm["hsaco"]
    if isinstance(data, str) and Path(data).is_file():
        return Path(data).read_bytes()
    if not isinstance(data, bytes):
        raise ApiUnknown(f".asm['hsaco'] is a {type(data).__name__}, not bytes")
    return data


def compile_targets(targets: list[tuple[str, int]], out: Path, events: Events,
                    api: str, kernel: ModuleType) -> None:
    import triton

    gpu_target = gpu_target_class()
    for arch, wave in targets:
        events.write("begin", target=arch, wave=wave)
        capture = CapturedStderr(out / f"{arch}.stderr")
        started = time.perf_counter()
        try:
            with capture:
                compiled = triton.compile(make_source(api, kernel),
                                          target=gpu_target("hip", arch, wave))
            data = code_object_bytes(compiled)
        except ApiUnknown as exc:
            events.write("done", target=arch, ok=False, api_error=True, error=str(exc),
                         seconds=time.perf_counter() - started)
            continue
        except Exception as exc:  # noqa: BLE001 - Triton fails with many exception types
            events.write("done", target=arch, ok=False, error=first_error_line(capture.text(), exc),
                         exception=f"{type(exc).__name__}",
                         traceback_tail=traceback.format_exc().strip().splitlines()[-3:],
                         seconds=time.perf_counter() - started)
            continue
        path = out / f"{arch}.hsaco"
        path.write_bytes(data)
        events.write("done", target=arch, ok=True, file=path.name, size=len(data),
                     seconds=time.perf_counter() - started)


def parse_target(text: str) -> tuple[str, int]:
    import argparse  # here: only the command line needs it (doctor imports this module)

    arch, sep, wave = text.partition(":")
    if not sep or not re.fullmatch(r"gfx[0-9a-z-]+", arch) or wave not in ("32", "64"):
        raise argparse.ArgumentTypeError(f"{text!r} is not ARCH:WAVE (e.g. gfx942:64)")
    return arch, int(wave)


def main(argv: list[str] | None = None) -> int:
    # `python this_file.py` puts this folder first on sys.path; the kit's modules beside this one
    # must not shadow anything triton imports.
    here = str(Path(__file__).resolve().parent)
    sys.path[:] = [p for p in sys.path if str(Path(p or ".").resolve()) != here]
    import argparse

    parser = argparse.ArgumentParser(prog="triton_codegen.py")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--lld-candidate", action="append", default=[])
    parser.add_argument("targets", nargs="+", type=parse_target)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / EVENTS_FILE, "a", encoding="utf-8") as stream:
        events = Events(stream)
        started = time.perf_counter()
        try:
            import triton
        except Exception as exc:  # noqa: BLE001 - a broken triton raises anything on import
            events.write("no_triton", error=f"{type(exc).__name__}: {exc}".splitlines()[0],
                         python=sys.executable)
            return EXIT_NO_TRITON
        version = str(getattr(triton, "__version__", "?"))
        try:
            api = choose_api(triton)
            backend = hip_backend()
            kernel = load_kernel()
        except ApiUnknown as exc:
            events.write("api_unknown", version=version, error=str(exc))
            return EXIT_API_UNKNOWN
        events.write("triton", version=version, api=api, location=str(Path(triton.__file__).parent),
                     python=sys.executable, import_seconds=time.perf_counter() - started)
        lld = find_lld(backend, list(args.lld_candidate))
        events.write("lld", **lld)
        if lld["needed"] and not lld.get("path"):
            return EXIT_NO_LLD
        compile_targets(args.targets, args.out, events, api, kernel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
