"""Choosing the build's host compilers: CC/CXX and the libstdc++ hint for (amd)clang.

Owns: the pure decision `choose_build_compilers(inventory, gcc=, clang=, ...)` that `invoke
toolchain`, `invoke env` and `invoke plan` share, and its error messages for bad choices.
Must not: probe, run, or hold the version table (the caller passes a `judge` built from
`rocmforge.knowledge.compiler_policy`, so the table lives in one place).

Why the hint: clang, and the ROCm clang behind hipcc, use the newest GCC installation they find
for libstdc++ unless told otherwise; a newer GCC without its `libstdc++-N-dev` breaks HIP files
with "'cmath' file not found" (rocm-arch-toolchain.md 3.3). `--gcc-install-dir=` (clang >= 16;
clang-15 has only `--gcc-toolchain=`, which again takes the newest version in that prefix, as
`clang++-15 --help` says) pins the GCC whose libstdc++ the build should use; PyTorch's LoadHIP
passes the same flag from `PYTORCH_HIP_GCC_INSTALL_DIR` (pytorch-rocm-build.md 5.4).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rocmforge.errors import UsageError
from rocmforge.probes.compilers import CompilerKind, GccInstall, HostCompiler, ResolvedName
from rocmforge.toolchain.distro import OsRelease, install_command

if TYPE_CHECKING:  # imported where used: `invoke plan` needs no alternatives code
    from rocmforge.toolchain.alternatives import AlternativesGroup

# clang learned --gcc-install-dir in LLVM 16 (clang-15 here rejects it; clang-16 lists it).
GCC_INSTALL_DIR_MIN_CLANG = 16


@dataclass(frozen=True, kw_only=True)
class ToolchainInventory:
    """What the probes found, in one record the pure functions can take."""

    compilers: tuple[HostCompiler, ...] = ()
    gcc_installs: tuple[GccInstall, ...] = ()
    resolved: tuple[ResolvedName, ...] = ()
    groups: tuple[AlternativesGroup, ...] = ()
    os_release: OsRelease | None = None

    def installed(self, kind: str) -> tuple[HostCompiler, ...]:
        return tuple(c for c in self.compilers if c.kind == kind and c.origin != "rocm")

    def find(self, kind: str, major: int) -> HostCompiler | None:
        """The versioned driver first (gcc-11), a plain one (gcc) of that major otherwise."""
        matches = [c for c in self.installed(kind) if c.major == major]
        matches.sort(key=lambda c: c.origin != "path")
        return matches[0] if matches else None

    def gcc_install(self, major: int) -> GccInstall | None:
        return next((g for g in self.gcc_installs if g.major == major), None)


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """The policy's answer as this module needs it (mirrors compiler_policy.CompilerVerdict)."""

    status: str  # "OK" | "WARN" | "FAIL"
    reason: str = ""
    fix: str = ""


Judge = Callable[[str, str], Verdict]


@dataclass(frozen=True, kw_only=True)
class CompilerChoice:
    """The compilers the build uses, and the flags that keep clang on the matching libstdc++."""

    kind: CompilerKind
    major: int
    version: str
    cc: Path
    cxx: Path
    # Flags for the host compiler (clang only: --gcc-install-dir=...).
    extra_flags: tuple[str, ...] = ()
    # The GCC whose libstdc++ clang and amdclang should use; the flag for amdclang/hipcc.
    gcc_install_dir: Path | None = None
    hip_extra_flags: tuple[str, ...] = ()
    verdict: Verdict | None = None
    notes: tuple[str, ...] = ()
    reason: str = ""  # why this pair: "--gcc 11", "recommended for ROCm 6.4", ...

    def env(self) -> dict[str, str]:
        """The build environment delta: CC and CXX (absolute paths)."""
        return {"CC": str(self.cc), "CXX": str(self.cxx)}

    def exports(self) -> tuple[str, ...]:
        """`export CC=...` lines, quoted, for `eval` and for reading."""
        return tuple(f"export {k}={shlex.quote(v)}" for k, v in self.env().items())


def choose_build_compilers(
    inventory: ToolchainInventory,
    gcc: int = 0,
    clang: int = 0,
    *,
    allow_compiler: bool = False,
    judge: Judge | None = None,
    recommended: Sequence[tuple[str, int]] = (),
    rocm_llvm_major: int = 0,
    libstdcxx_gcc: int = 0,
) -> CompilerChoice:
    """Pick CC/CXX: the version asked for, else the first recommended pair that is installed.

    Raises UsageError (exit 2) for both kinds at once, a version not installed (naming what is),
    a C compiler without its C++ driver, a GCC without libstdc++ dev files, or a version the
    policy fails (unless `allow_compiler`). `recommended` is (kind, major) in order of preference;
    `rocm_llvm_major` is the LLVM major of the ROCm clang (0 = unknown), which decides whether
    amdclang understands --gcc-install-dir.
    """
    if gcc and clang:
        raise UsageError(
            f"Both --gcc {gcc} and --clang {clang} were given",
            "the build has one host compiler pair (CC and CXX); the two flags choose it",
            f"give one of them: `invoke toolchain --gcc {gcc}` or "
            f"`invoke toolchain --clang {clang}`",
        )
    kind: CompilerKind
    if gcc or clang:
        kind, major = ("gcc", gcc) if gcc else ("clang", clang)
        reason = f"--{kind} {major}"
        compiler = inventory.find(kind, major)
        if compiler is None:
            raise _not_installed(inventory, kind, major)
    else:
        compiler, reason = _recommended_or_default(inventory, recommended)
        kind, major = compiler.kind, compiler.major
    if compiler.cxx is None:
        cxx_name = ("g++" if kind == "gcc" else "clang++") + f"-{major}"
        raise UsageError(
            f"{compiler.cc} is installed but its C++ driver {cxx_name} is not",
            "PyTorch is C++: the build needs CC and CXX of the same release",
            _install_fix(inventory.os_release, kind, major),
        )
    verdict = judge(kind, compiler.version) if judge is not None else None
    if verdict is not None and verdict.status == "FAIL" and not allow_compiler:
        raise UsageError(
            f"{kind} {compiler.version} is not a compiler this kit builds with here: "
            f"{verdict.reason}",
            "a host compiler outside the table is the most common cause of link errors and "
            "segfaults in ROCm source builds",
            (verdict.fix or "choose a compiler the table allows (`invoke toolchain` lists them)")
            + "; or pass --allow-compiler to build with it anyway",
        )
    notes: list[str] = []
    if verdict is not None and verdict.status == "WARN":
        notes.append(f"{kind} {compiler.version}: {verdict.reason}")
    gcc_dir = _libstdcxx_install(inventory, kind, major, libstdcxx_gcc)
    extra: tuple[str, ...] = ()
    hip: tuple[str, ...] = ()
    if gcc_dir is not None:
        flag = f"--gcc-install-dir={gcc_dir.lib_dir}"
        if kind == "clang":
            if major >= GCC_INSTALL_DIR_MIN_CLANG:
                extra = (flag,)
            else:
                notes.append(
                    f"clang-{major} has no --gcc-install-dir; it uses the newest GCC installation "
                    f"({_newest_label(inventory)}) for libstdc++"
                )
        if rocm_llvm_major == 0 or rocm_llvm_major >= GCC_INSTALL_DIR_MIN_CLANG:
            hip = (flag,)
        else:
            notes.append(
                f"the ROCm clang (LLVM {rocm_llvm_major}) has no --gcc-install-dir; hipcc uses "
                f"the newest GCC installation ({_newest_label(inventory)}) for libstdc++"
            )
    newest = inventory.gcc_installs[0] if inventory.gcc_installs else None
    if newest is not None and not newest.complete:
        fix = _install_fix(inventory.os_release, "gcc", newest.major, libstdcxx_only=True)
        notes.append(
            f"the newest GCC installation {newest.lib_dir} lacks libstdc++-{newest.major}-dev "
            f"({_missing_parts(newest)}); clang without --gcc-install-dir picks it and fails "
            f"with \"'cmath' file not found\". Fix: {fix}"
        )
    return CompilerChoice(
        kind=kind,
        major=major,
        version=compiler.version,
        cc=compiler.cc,
        cxx=compiler.cxx,
        extra_flags=extra,
        gcc_install_dir=gcc_dir.lib_dir if gcc_dir is not None else None,
        hip_extra_flags=hip,
        verdict=verdict,
        notes=tuple(notes),
        reason=reason,
    )


def parse_version_flag(flag: str, value: object) -> int:
    """`--gcc 11` as Invoke hands it over: an int, or a string when Invoke could not convert it."""
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit():
        raise UsageError(
            f"--{flag} {text!r} is not a compiler major version",
            f"--{flag} takes the major version as a whole number",
            f"write it as digits, e.g. `invoke toolchain --{flag} {11 if flag == 'gcc' else 16}`",
        )
    return int(text)


def installed_summary(inventory: ToolchainInventory) -> str:
    """`gcc 11.3.0 (/usr/bin/gcc-11), gcc 12.2.0 (/usr/bin/gcc-12), clang 15.0.6 (...)`."""
    items = [f"{c.kind} {c.version} ({c.cc})" for c in inventory.compilers if c.origin != "rocm"]
    return ", ".join(items) if items else "none found on PATH"


def _not_installed(inventory: ToolchainInventory, kind: str, major: int) -> UsageError:
    return UsageError(
        f"{kind} {major} is not installed (no {kind}-{major} on PATH); installed: "
        f"{installed_summary(inventory)}",
        "the kit only uses compilers it can run and check",
        f"choose an installed one with --{kind}, or, if your distribution packages {kind} "
        f"{major}, {_install_fix(inventory.os_release, kind, major)}",
    )


def _install_fix(
    release: OsRelease | None, kind: str, major: int, *, libstdcxx_only: bool = False
) -> str:
    argv = (
        install_command(release, kind=kind, major=major, libstdcxx_only=libstdcxx_only)
        if release is not None
        else None
    )
    if argv is not None:
        return "install it: `" + shlex.join(argv) + "`"
    package = (
        f"libstdc++ {major} development files" if libstdcxx_only else f"{kind} {major} (C and C++)"
    )
    return f"install {package} with your distribution's package manager"


def _recommended_or_default(
    inventory: ToolchainInventory, recommended: Sequence[tuple[str, int]]
) -> tuple[HostCompiler, str]:
    for kind, major in recommended:
        compiler = inventory.find(kind, major)
        if compiler is not None and compiler.cxx is not None:
            return compiler, f"recommended: {kind} {major}"
    by_name: Mapping[str, ResolvedName] = {r.name: r for r in inventory.resolved}
    for name in ("gcc", "cc", "clang"):
        resolved = by_name.get(name)
        if resolved is None or resolved.compiler is None:
            continue
        match = inventory.find(resolved.compiler.kind, resolved.compiler.major)
        if match is not None:
            return match, f"system default ({name} -> {resolved.compiler.label})"
    installed = [c for c in inventory.compilers if c.origin != "rocm" and c.cxx is not None]
    if installed:
        return installed[0], "the only kind installed"
    wanted = ", ".join(f"{k} {m}" for k, m in recommended) or "gcc or clang"
    raise UsageError(
        "No host C/C++ compiler pair was found on PATH",
        "the build compiles PyTorch's C++ sources with the host compiler",
        f"install one ({wanted}), e.g. "
        + _install_fix(inventory.os_release, *(recommended[0] if recommended else ("gcc", 11))),
    )


def _libstdcxx_install(
    inventory: ToolchainInventory, kind: str, major: int, libstdcxx_gcc: int
) -> GccInstall | None:
    """The GCC installation whose libstdc++ the build should use, checked to be complete."""
    if kind == "gcc":
        wanted = major
    elif libstdcxx_gcc:
        wanted = libstdcxx_gcc
    else:
        complete = [g for g in inventory.gcc_installs if g.complete]
        return complete[0] if complete else None
    install = inventory.gcc_install(wanted)
    if install is None:
        if kind == "gcc":
            return None  # a gcc outside the scanned prefixes (e.g. /usr/local): no hint
        raise UsageError(
            f"No GCC {wanted} installation was found for clang's libstdc++",
            "clang uses a GCC installation's libstdc++ headers and library",
            _install_fix(inventory.os_release, "gcc", wanted),
        )
    if not install.complete:
        raise UsageError(
            f"GCC {wanted} at {install.lib_dir} lacks libstdc++-{wanted}-dev "
            f"({_missing_parts(install)})",
            "without it C++ and HIP files fail with \"'cmath' file not found\" or cannot link "
            "-lstdc++ (rocm-arch-toolchain.md 3.3)",
            _install_fix(inventory.os_release, "gcc", wanted, libstdcxx_only=True),
        )
    return install


def _missing_parts(install: GccInstall) -> str:
    parts = []
    if not install.has_headers:
        parts.append(f"no {install.headers}")
    if not install.has_libstdcxx:
        parts.append(f"no {install.lib_dir / 'libstdc++.so'}")
    return ", ".join(parts)


def _newest_label(inventory: ToolchainInventory) -> str:
    return f"GCC {inventory.gcc_installs[0].major}" if inventory.gcc_installs else "none found"
