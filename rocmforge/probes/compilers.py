"""Probe: which host C/C++ compilers are installed, and what the plain names resolve to now.

Owns: scanning a PATH for `gcc-N`/`g++-N`, `clang-N`/`clang++-N` and the plain `gcc`/`clang`, the
ROCm clang under a given ROCm root, running each driver once to read its real version, and
following `gcc`/`cc`/`c++`... through their symlinks (including /etc/alternatives).
Must not: write anything, change PATH, or judge versions (that is
`rocmforge.knowledge.compiler_policy`). The PATH is a parameter so tests can point it at a temp dir.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rocmforge import process
from rocmforge.probes.tool_cache import cached_output
from rocmforge.versions import major_of

CompilerKind = Literal["gcc", "clang"]

# `gcc-11`, `clang-15`; plain `gcc`/`clang` have no suffix. Dotted suffixes (`gcc-4.8`) count too.
_DRIVER_NAME = re.compile(r"^(?P<kind>gcc|clang)(?:-(?P<suffix>\d+(?:\.\d+)*))?$")
# "Debian clang version 15.0.6", "clang version 22.1.8 (1~deb12u1)", "AMD clang version 19.0.0git"
_CLANG_VERSION = re.compile(r"clang version (?P<version>\d+(?:\.\d+)*)")
# `gcc -dumpfullversion` prints "11.3.0"; old releases print "11" (`-dumpversion`).
_GCC_DUMP = re.compile(r"^\s*(?P<version>\d+(?:\.\d+)*)\s*$")
# Fallback for `gcc --version` first lines: "gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0",
# "gcc (GCC) 13.2.1 20231011 (Red Hat 13.2.1-4)".
_GCC_FIRST_LINE = re.compile(r"^\S+ \([^)]*\) (?P<version>\d+(?:\.\d+)+)")

_RUN_TIMEOUT_S = 20.0
_C_TO_CXX = {"gcc": "g++", "clang": "clang++"}
# Names `default_compiler` callers usually ask about, in the order the inventory shows them.
PLAIN_DRIVER_NAMES = ("gcc", "g++", "cc", "c++", "clang", "clang++")
_CXX_DRIVER_NAMES = frozenset({"g++", "c++", "clang++"})


@dataclass(frozen=True, kw_only=True)
class HostCompiler:
    """One installed compiler pair, as its driver reported itself.

    `cc` is the C driver the build would be given as CC (the PATH entry, not its symlink target, so
    `CC=/usr/bin/gcc-11` stays readable); `cxx` is the matching C++ driver, or None when that
    package is not installed (gcc-11 without g++-11). For `default_compiler("g++")`, `cc` and
    `cxx` are both the C++ driver the name resolves to.
    """

    kind: CompilerKind
    major: int
    version: str
    cc: Path
    cxx: Path | None
    # Where it was found: "path" (a versioned name on PATH), "plain" (gcc/clang on PATH),
    # "rocm" (the ROCm LLVM), "default" (what a plain name resolves to).
    origin: str = "path"

    @property
    def label(self) -> str:
        """`gcc 11.3.0`: how reports name it."""
        return f"{self.kind} {self.version}"


@dataclass(frozen=True, kw_only=True)
class ResolvedName:
    """Where a plain name (`cc`, `g++`) leads: each symlink hop, and the compiler at the end."""

    name: str
    chain: tuple[Path, ...]
    compiler: HostCompiler | None

    @property
    def target(self) -> Path | None:
        return self.chain[-1] if self.chain else None


# --- pure parsers ---------------------------------------------------------------------------


def parse_clang_version(text: str) -> str | None:
    """The dotted version from `clang --version` output, or None when it is not clang's."""
    match = _CLANG_VERSION.search(text)
    return match.group("version") if match else None


def parse_gcc_version(dump: str, version_text: str = "") -> str | None:
    """The version from `gcc -dumpfullversion` output, falling back to `--version`'s first line."""
    match = _GCC_DUMP.match(dump)
    if match and "." in match.group("version"):
        return match.group("version")
    first = version_text.strip().splitlines()[0] if version_text.strip() else ""
    line_match = _GCC_FIRST_LINE.match(first)
    if line_match:
        return line_match.group("version")
    return match.group("version") if match else None


def driver_kind(name: str) -> tuple[CompilerKind, str] | None:
    """(`gcc`, "11") for `gcc-11`, (`clang`, "") for `clang`; None for any other name."""
    match = _DRIVER_NAME.match(name)
    if not match:
        return None
    kind: CompilerKind = "gcc" if match.group("kind") == "gcc" else "clang"
    return kind, match.group("suffix") or ""


# --- probes ---------------------------------------------------------------------------------


def identify(driver: Path, *, origin: str = "path", cxx: Path | None = None) -> HostCompiler | None:
    """Run `driver --version` (and `-dumpfullversion` for GCC) and say what it really is.

    A `gcc` that is really clang (macOS-style symlinks) is reported as clang. None when the
    driver does not run or prints nothing we recognise.
    """
    version_text = _run_text([str(driver), "--version"])
    if version_text is None:
        return None
    clang_version = parse_clang_version(version_text)
    if clang_version is not None:
        return HostCompiler(
            kind="clang",
            major=major_of(clang_version),
            version=clang_version,
            cc=driver,
            cxx=cxx,
            origin=origin,
        )
    if "Free Software Foundation" not in version_text and "(GCC)" not in version_text:
        return None
    dump = _run_text([str(driver), "-dumpfullversion"]) or ""
    gcc_version = parse_gcc_version(dump, version_text)
    if gcc_version is None:
        return None
    return HostCompiler(
        kind="gcc",
        major=major_of(gcc_version),
        version=gcc_version,
        cc=driver,
        cxx=cxx,
        origin=origin,
    )


def find_host_compilers(
    path_env: str | None = None, *, rocm_root: str | os.PathLike[str] | None = None
) -> tuple[HostCompiler, ...]:
    """Every gcc-N and clang-N on PATH (with its g++-N/clang++-N), plain gcc/clang, ROCm's clang.

    `path_env` defaults to the PATH of this process; the first directory that holds a name wins,
    as in the shell. A plain `gcc` that is the same file as a versioned one already found
    (`/usr/bin/gcc -> gcc-12`) is not listed twice. Sorted by kind, then major, newest first.
    """
    versioned: list[tuple[Path, Path | None]] = []
    plain: list[tuple[Path, Path | None]] = []
    seen_names: set[str] = set()
    for directory in _path_dirs(path_env):
        try:
            entries = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in entries:
            kind_suffix = driver_kind(name)
            if kind_suffix is None or name in seen_names:
                continue
            driver = directory / name
            if not _is_executable(driver):
                continue
            seen_names.add(name)
            kind, suffix = kind_suffix
            cxx_name = _C_TO_CXX[kind] + (f"-{suffix}" if suffix else "")
            (versioned if suffix else plain).append((driver, _first_on_path(cxx_name, path_env)))
    # Each identification runs one or two `--version` processes; running them side by side keeps
    # `invoke plan` and `invoke doctor` quick on machines with many compilers installed.
    with ThreadPoolExecutor(max_workers=8) as pool:
        versioned_ids = list(pool.map(lambda d: identify(d[0], origin="path", cxx=d[1]), versioned))
        plain_ids = list(pool.map(lambda d: identify(d[0], origin="plain", cxx=d[1]), plain))
    found: list[HostCompiler] = []
    seen_real: set[Path] = set()
    for (driver, _), compiler in zip(versioned, versioned_ids, strict=True):
        if compiler is not None:
            found.append(compiler)
            seen_real.add(driver.resolve())
    for (driver, _), compiler in zip(plain, plain_ids, strict=True):
        if compiler is None or driver.resolve() in seen_real:
            continue
        found.append(compiler)
        seen_real.add(driver.resolve())
    if rocm_root is not None:
        rocm_clang = rocm_clang_of(rocm_root)
        if rocm_clang is not None:
            found.append(rocm_clang)
    return tuple(sorted(found, key=lambda c: (c.kind, c.origin == "rocm", -c.major, str(c.cc))))


def rocm_clang_of(rocm_root: str | os.PathLike[str]) -> HostCompiler | None:
    """The clang shipped in a ROCm install: `lib/llvm/bin` (ROCm >= 6, TheRock) or `llvm/bin`.

    Layout from rocm-arch-toolchain.md section 3.4.
    """
    root = Path(rocm_root)
    for sub in ("lib/llvm/bin", "llvm/bin"):
        driver = root / sub / "clang"
        if _is_executable(driver):
            cxx = root / sub / "clang++"
            return identify(driver, origin="rocm", cxx=cxx if _is_executable(cxx) else None)
    return None


def resolve_name(name: str, path_env: str | None = None) -> ResolvedName:
    """Follow `name` from PATH through each symlink hop (cc -> /etc/alternatives/cc -> gcc)."""
    start = _first_on_path(name, path_env)
    if start is None:
        return ResolvedName(name=name, chain=(), compiler=None)
    chain = link_chain(start)
    final = chain[-1]
    compiler = identify(final, origin="default")
    if compiler is not None:
        cxx = final if name in _CXX_DRIVER_NAMES else None
        compiler = HostCompiler(
            kind=compiler.kind,
            major=compiler.major,
            version=compiler.version,
            cc=final,
            cxx=cxx,
            origin="default",
        )
    return ResolvedName(name=name, chain=chain, compiler=compiler)


def default_compiler(name: str, path_env: str | None = None) -> HostCompiler | None:
    """What `gcc`, `cc`, `clang++`... run now, following symlinks through /etc/alternatives.

    `cc` is the fully resolved file (e.g. /usr/bin/x86_64-linux-gnu-gcc-12). None when the name
    is not on PATH or does not run.
    """
    return resolve_name(name, path_env).compiler


def link_chain(path: Path, *, max_hops: int = 40) -> tuple[Path, ...]:
    """`path`, then each symlink target in turn (made absolute), ending at a non-link."""
    chain = [path]
    current = path
    for _ in range(max_hops):
        if not current.is_symlink():
            break
        target = Path(os.readlink(current))
        if not target.is_absolute():
            target = current.parent / target
        current = Path(os.path.normpath(target))
        chain.append(current)
    return tuple(chain)


# --- helpers --------------------------------------------------------------------------------


def _path_dirs(path_env: str | None) -> list[Path]:
    text = os.environ.get("PATH", "") if path_env is None else path_env
    return [Path(part) for part in text.split(os.pathsep) if part]


def _first_on_path(name: str, path_env: str | None) -> Path | None:
    for directory in _path_dirs(path_env):
        candidate = directory / name
        if _is_executable(candidate):
            return candidate
    return None


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _run_text(argv: Sequence[str]) -> str | None:
    """stdout+stderr of a short read-only command, or None when it cannot run or fails.

    The answer of a compiler to `--version`/`-dumpfullversion` depends only on its file, so it
    is kept in the tool cache (rocmforge.probes.tool_cache) and asked again only after the
    compiler changes.
    """
    return cached_output(Path(argv[0]), tuple(argv[1:]), lambda: _run_uncached(argv))


def _run_uncached(argv: Sequence[str]) -> str | None:
    done = process.run(argv, env={**os.environ, "LC_ALL": "C"}, timeout=_RUN_TIMEOUT_S)
    if done.returncode != 0:
        return None
    return done.stdout + done.stderr


# --- GCC installations (what clang picks its libstdc++ from) --------------------------------


@dataclass(frozen=True, kw_only=True)
class GccInstall:
    """One `<prefix>/lib/gcc/<triple>/<N>` directory and whether its libstdc++ dev files exist.

    clang (and amdclang) picks the newest such directory unless given `--gcc-install-dir`; when
    that one lacks `libstdc++-N-dev` HIP files fail with "'cmath' file not found"
    (rocm-arch-toolchain.md section 3.3).
    """

    major: int
    lib_dir: Path
    headers: Path
    has_libstdcxx: bool  # libstdc++.so (the link-time library of libstdc++-N-dev) in lib_dir
    has_headers: bool  # <prefix>/include/c++/<N> exists

    @property
    def complete(self) -> bool:
        return self.has_libstdcxx and self.has_headers


def find_gcc_installs(root: str | os.PathLike[str] = "/") -> tuple[GccInstall, ...]:
    """GCC installation dirs under `root` (/usr and RHEL's /opt/rh/gcc-toolset-N/root/usr).

    Only directories with `crtbegin.o` count, as for clang's own detection. Sorted newest first.
    """
    base = Path(root)
    prefixes = [base / "usr"]
    toolsets = base / "opt" / "rh"
    if toolsets.is_dir():
        prefixes += sorted(p / "root" / "usr" for p in toolsets.glob("gcc-toolset-*"))
    found: list[GccInstall] = []
    for prefix in prefixes:
        gcc_lib = prefix / "lib" / "gcc"
        if not gcc_lib.is_dir():
            continue
        for triple_dir in sorted(p for p in gcc_lib.iterdir() if p.is_dir()):
            for version_dir in sorted(p for p in triple_dir.iterdir() if p.is_dir()):
                if not re.fullmatch(r"\d+(?:\.\d+)*", version_dir.name):
                    continue
                if not (version_dir / "crtbegin.o").exists():
                    continue
                headers = prefix / "include" / "c++" / version_dir.name
                found.append(
                    GccInstall(
                        major=major_of(version_dir.name),
                        lib_dir=version_dir,
                        headers=headers,
                        has_libstdcxx=(version_dir / "libstdc++.so").exists(),
                        has_headers=headers.is_dir(),
                    )
                )
    return tuple(sorted(found, key=lambda g: (-g.major, str(g.lib_dir))))
