"""Why a companion does not import: load its native libraries and read what the loader says.

A companion wheel built against another torch or another GPU stack fails at import with a
message about its own code ("operator torchvision::nms does not exist": torchvision's import
carries on after its `_C` library failed to load, and its first use of the operators raises).
The cause is in the loader's error for that library: a library only another torch build has
("libc10_cuda.so: cannot open shared object file": a CUDA build against a CPU or ROCm torch) or
a C++ symbol this torch does not define ("undefined symbol: _ZN3c10…": another torch version).

Owns: finding the package's `.so` files without importing it, loading each with ctypes in a
child of this interpreter after `import torch` (so torch's own libraries are there, as at a real
import; a child, because a library that does load runs its static initialisers), and turning
the loader's errors into a diagnosis: what failed, why, and the fix.
Must not: import the companion into this process, or anything outside the standard library.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

TIMEOUT_S = 180

# argv[1:] are the libraries, in order. Prints {path: "" or the loader's error}.
PROGRAM = (
    "import ctypes, json, sys\n"
    "import torch  # noqa: F401 - its libraries, as at a real import\n"
    "out = {}\n"
    "for path in sys.argv[1:]:\n"
    "    try:\n"
    "        ctypes.CDLL(path)\n"
    "        out[path] = ''\n"
    "    except OSError as exc:\n"
    "        out[path] = str(exc)\n"
    "print(json.dumps(out))\n"
)

_MISSING = re.compile(r"([^\s:]+\.so[.\d]*): cannot open shared object file")
_UNDEFINED = re.compile(r"undefined symbol: (\S+)")

# What a missing library says about the stack the companion was built for.
_STACK_OF = (
    (re.compile(r"^lib(c10_cuda|torch_cuda|cudart|cublas|nvrtc|cudnn|nvjpeg)"), "CUDA"),
    (re.compile(r"^lib(c10_hip|torch_hip|amdhip64|hiprtc|rocblas|MIOpen|hipblas)"), "ROCm"),
    (re.compile(r"^lib(c10_xpu|torch_xpu|sycl)"), "XPU"),
)


@dataclass(frozen=True, kw_only=True)
class LoadFailure:
    """The first native library of the companion that the loader refused, and why."""

    library: str  # path of the companion's .so
    error: str  # the loader's message
    missing: str = ""  # a needed library that could not be found, e.g. "libc10_cuda.so"
    undefined: str = ""  # a symbol no loaded library defines


def package_dir(name: str) -> Path | None:
    """The installed package's folder, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    return Path(spec.origin).parent


def native_libraries(folder: Path) -> list[Path]:
    """The package's extension libraries: those in the folder, then in `lib/` (torchaudio's
    libtorchaudio before the modules that need it)."""
    found = sorted(folder.glob("*.so")) + sorted((folder / "lib").glob("*.so"))
    return sorted(found, key=lambda p: (0 if p.name.startswith("lib") else 1, str(p)))


def load_failures(libraries: list[Path]) -> tuple[list[LoadFailure], str]:
    """Each library the loader refuses in a child with torch imported; and "" or why the
    child could not tell (torch itself broken there, a time-out)."""
    if not libraries:
        return [], ""
    argv = [sys.executable, "-c", PROGRAM, *(str(p) for p in libraries)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S,
                              check=False)
    except subprocess.TimeoutExpired:
        return [], f"loading its libraries took over {TIMEOUT_S} s"
    try:
        answers = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        tail = " ".join(done.stderr.strip().splitlines()[-2:])
        return [], f"the loader child failed (exit {done.returncode}): {tail[:300]}"
    failures = []
    for path, error in answers.items():
        if not error:
            continue
        missing = _MISSING.search(error)
        undefined = _UNDEFINED.search(error)
        failures.append(LoadFailure(library=path, error=error,
                                    missing=missing.group(1) if missing else "",
                                    undefined=undefined.group(1) if undefined else ""))
    return failures, ""


def stack_of(library: str) -> str:
    """"CUDA", "ROCm", "XPU" or "" for a library name such as libc10_cuda.so."""
    name = Path(library).name
    return next((stack for pattern, stack in _STACK_OF if pattern.match(name)), "")


def diagnosis(*, companion: str, version: str, import_error: str, torch_version: str,
              torch_kind: str, failures: list[LoadFailure], unknown: str) -> str:
    """One paragraph: what failed, why, and the fix."""
    what = f"{companion} {version} does not import ({import_error})"
    fix = (f"Fix: build {companion} against this torch with `invoke build --with {companion}` "
           f"(its wheel lands in dist/ beside torch's and `nox -s verify` installs it), or "
           f"install the {companion} wheel that was built with this torch.")
    if failures:
        first = failures[0]
        lib = Path(first.library).name
        if first.missing:
            stack = stack_of(first.missing)
            built_for = f"a {stack} build of torch" if stack else "another torch build"
            why = (f"its native library {lib} cannot be loaded: it needs {first.missing}, which "
                   f"this torch {torch_version} ({torch_kind}) does not have, so it was built "
                   f"against {built_for}, not this one, and its operators were never "
                   "registered")
        elif first.undefined:
            why = (f"its native library {lib} cannot be loaded: it needs the symbol "
                   f"{first.undefined}, which this torch {torch_version} does not define, so "
                   "it was built against another torch version (the C++ ABI differs)")
        else:
            why = f"its native library {lib} cannot be loaded: {first.error.strip()[:300]}"
        return f"{what}: {why}. {fix}"
    if unknown:
        return f"{what}; the loader could not say why ({unknown}). {fix}"
    return (f"{what}; its native libraries load with this torch, so the error is in its Python "
            f"code or a missing Python dependency. Fix: reinstall {companion} "
            f"(`pip install --force-reinstall --no-deps <wheel>`) or read the error above.")
