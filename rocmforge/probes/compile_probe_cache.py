"""The per-target compile probe's results kept across runs, and the proof that they still hold.

Owns: what decides one target's compile (`compile_key`: the argv with the temporary folder
written as `<tmp>`, the probe source, the environment the compiler sees, and the identity of
every file of the compiler chain from `compiler_chain`: the driver, the interpreter of a driver
script, hipcc's scripts and settings files and the clang it runs, each clang's tools and shared
libraries, and the target's device-library file, "missing" when absent), the record kept with
a compile that worked (`Dependency`: real path, size, mtime, ctime and inode of every file the
compile read, from its dependency file, and of every `*.bc` in the device-library folder), the
check that nothing in it changed (`changed`), and which failures may be kept
(`keeps_failure`: only the driver's refusal of the target itself, which its binaries alone
decide). Must not: compile, decide what doctor reports, or fail a probe: a record it cannot read
is a miss.
"""

from __future__ import annotations

import os
import re
import stat as stat_module
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rocmforge.probes import probe_store
from rocmforge.probes.elf_needed import needed_libraries

KIND = "target-compile/1"
TMP_MARK = "<tmp>"
# The programs a `--cuda-device-only -c` compile runs beside the clang driver (clang -cc1, the
# device linker, the bundler), looked up in the clang's real folder.
CLANG_TOOLS = ("clang", "lld", "ld.lld", "clang-offload-bundler")
# hipcc's own files beside its real file (ROCm 5.x: the Perl script and its module; ROCm 6:
# the compiled hipcc.bin) and the settings files hipvars.pm reads.
HIPCC_FILES = ("hipcc.pl", "hipvars.pm", "hipcc.bin", "hipconfig", "hipconfig.pl")


@dataclass(frozen=True, kw_only=True)
class Dependency:
    """One file a compile read, as it was: a change to any field (or a vanished file) means
    the compile may come out differently. ctime cannot be set back, so an edit that restores
    the mtime still shows."""

    path: str  # the real path (symlinks resolved)
    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int

    def as_json(self) -> list[object]:
        return [self.path, self.size, self.mtime_ns, self.ctime_ns, self.inode]

    @classmethod
    def of_json(cls, data: object) -> Dependency | None:
        if not isinstance(data, list) or len(data) != 5:
            return None
        path, size, mtime, ctime, inode = data
        if not isinstance(path, str) or not all(isinstance(v, int)
                                                for v in (size, mtime, ctime, inode)):
            return None
        return cls(path=path, size=size, mtime_ns=mtime, ctime_ns=ctime, inode=inode)


def dependency_of(path: str | os.PathLike[str]) -> Dependency | None:
    """The identity of the file `path` names now; None when it is not a readable file."""
    try:
        real = os.path.realpath(path)
        found = os.stat(real)
    except OSError:
        return None
    if not stat_module.S_ISREG(found.st_mode):
        return None
    return Dependency(path=real, size=found.st_size, mtime_ns=found.st_mtime_ns,
                      ctime_ns=found.st_ctime_ns, inode=found.st_ino)


def changed(dependencies: Iterable[Dependency]) -> str:
    """The first file that is not as recorded ("" when none): each is stat'ed again."""
    for dep in dependencies:
        try:
            found = os.stat(dep.path)
        except OSError:
            return f"{dep.path} is gone"
        if (found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino) != (
                dep.size, dep.mtime_ns, dep.ctime_ns, dep.inode):
            return f"{dep.path} changed"
    return ""


# --- the dependency file ----------------------------------------------------------------------


def parse_depfile(text: str) -> tuple[str, ...]:
    """The prerequisites of a Make rule as clang writes it (`out.o: a.hip b.h \\` ...), with
    `\\ ` for a space in a name and `$$` for `$`."""
    joined = text.replace("\\\r\n", " ").replace("\\\n", " ")
    rule = re.search(r":(?:\s|$)", joined)
    if rule is None:
        return ()
    words: list[str] = []
    current: list[str] = []
    chars = joined[rule.end():]
    index = 0
    while index < len(chars):
        char = chars[index]
        if char == "\\" and index + 1 < len(chars) and chars[index + 1] in " #\\":
            current.append(chars[index + 1])
            index += 2
            continue
        if char == "$" and chars[index + 1:index + 2] == "$":
            current.append("$")
            index += 2
            continue
        if char.isspace():
            if current:
                words.append("".join(current))
                current = []
        else:
            current.append(char)
        index += 1
    if current:
        words.append("".join(current))
    return tuple(words)


def compile_dependencies(depfile: Path, *, cwd: Path, device_lib_dir: Path | None
                         ) -> tuple[Dependency, ...] | None:
    """Every file the compile read (its dependency file, less what is in `cwd`, the probe's own
    temporary folder) and every `*.bc` of `device_lib_dir`; None when the dependency file is
    missing or names a file that cannot be stat'ed (then nothing is kept)."""
    try:
        names = parse_depfile(depfile.read_text(errors="replace"))
    except OSError:
        return None
    if not names:
        return None
    found: dict[str, Dependency] = {}
    scratch = os.path.realpath(cwd) + os.sep
    for name in names:
        full = name if os.path.isabs(name) else os.path.join(cwd, name)
        if os.path.realpath(full).startswith(scratch):
            continue
        dep = dependency_of(full)
        if dep is None:
            return None
        found.setdefault(dep.path, dep)
    for path in device_library_files(device_lib_dir):
        dep = dependency_of(path)
        if dep is None:
            return None
        found.setdefault(dep.path, dep)
    return tuple(found.values())


def device_library_files(device_lib_dir: Path | None) -> tuple[str, ...]:
    """The `*.bc` files of the device-library folder, sorted by name."""
    if device_lib_dir is None:
        return ()
    try:
        return tuple(sorted(entry.path for entry in os.scandir(device_lib_dir)
                            if entry.name.endswith(".bc")))
    except OSError:
        return ()


# --- the key ----------------------------------------------------------------------------------


def compiler_chain(compiler: Path, driver: str, *, rocm_root: Path | None, llvm_major: int,
                   environ: Mapping[str, str]) -> tuple[Path, ...]:
    """The files that decide what the driver does, whether or not they exist: the driver, the
    interpreter of a driver script (hipcc is Perl in ROCm 5), hipcc's own files and the files
    its hipvars.pm reads, the clang hipcc runs (HIP_CLANG_PATH, else `<ROCM_PATH>/llvm/bin` or
    `<ROCM_PATH>/bin`, as hipvars.pm decides) and, for each clang, the tools beside its real
    file and the shared libraries they load."""
    files: list[Path] = [compiler]
    real = Path(os.path.realpath(compiler))
    files += script_interpreters(real, environ)
    clangs: list[Path] = []
    if driver == "hipcc":
        files += [real.parent / name for name in HIPCC_FILES]
        hip_path = Path(environ.get("HIP_PATH") or real.parent.parent)
        rocm_path = Path(environ.get("ROCM_PATH") or rocm_root or real.parent.parent)
        files += [hip_path / "lib" / ".hipInfo", hip_path / "bin" / ".hipVersion",
                  real.parent.parent / "lib" / ".hipInfo", rocm_path / ".info" / "version"]
        clang_dir = Path(environ["HIP_CLANG_PATH"]) if environ.get("HIP_CLANG_PATH") else (
            rocm_path / "llvm" / "bin" if (rocm_path / "llvm" / "bin").exists()
            else rocm_path / "bin")
        names = ["clang++", "clang"]
        if llvm_major:
            names = [f"clang++-{llvm_major}", f"clang-{llvm_major}", *names]
        clangs = [clang_dir / name for name in names]
    else:
        clangs = [compiler]
    tool_dirs: list[Path] = []
    for clang in clangs:
        files.append(clang)
        folder = Path(os.path.realpath(clang)).parent
        if folder not in tool_dirs and Path(os.path.realpath(clang)).is_file():
            tool_dirs.append(folder)
    for folder in tool_dirs:
        for name in CLANG_TOOLS:
            tool = folder / name
            files.append(tool)
            files += needed_libraries(tool, environ) if tool.is_file() else ()
    unique: dict[str, Path] = {}
    for path in files:
        unique.setdefault(os.fspath(path), path)
    return tuple(unique.values())


def script_interpreters(path: Path, environ: Mapping[str, str]) -> tuple[Path, ...]:
    """The program of a `#!` line (`/usr/bin/perl` for ROCm 5's hipcc); for
    `#!/usr/bin/env NAME`, `env` and NAME as found on the compile's PATH."""
    try:
        with path.open("rb") as handle:
            first = handle.readline(256)
    except OSError:
        return ()
    if not first.startswith(b"#!"):
        return ()
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return ()
    found = [Path(words[0])]
    if Path(words[0]).name == "env" and len(words) > 1:
        import shutil

        named = shutil.which(words[1], path=environ.get("PATH", os.defpath))
        if named is not None:
            found.append(Path(named))
    return tuple(found)


def normalized_argv(argv: Sequence[str], scratch: Path) -> tuple[str, ...]:
    """`argv` with the probe's temporary folder written as TMP_MARK (it differs every run)."""
    folder = os.fspath(scratch)
    return tuple(a.replace(folder, TMP_MARK) for a in argv)


def compile_key(argv: Sequence[str], *, scratch: Path, source: str, env: Mapping[str, str],
                chain: Sequence[Path], device_lib: Path | None) -> str:
    """The probe-store key of one target's compile (see the module docstring)."""
    files = [*chain, *([device_lib] if device_lib is not None else [])]
    return probe_store.probe_key(
        KIND, files=files,
        texts=[*normalized_argv(argv, scratch), "--source--", source],
        env=probe_store.compiler_environment(env))


# --- what is kept -----------------------------------------------------------------------------


def success_record(reason: str, dependencies: Sequence[Dependency],
                   device_lib_dir: Path | None) -> dict[str, object]:
    """What is kept of a compile that worked: the files it read, as they were, and the names
    of the `*.bc` files in the device-library folder it was given."""
    return {"compiles": True, "reason": reason,
            "dependencies": [d.as_json() for d in dependencies],
            "device_libs": list(device_library_files(device_lib_dir))}


def failure_record(reason: str) -> dict[str, object]:
    """What is kept of the driver's refusal of a target: the reason (the key is the proof)."""
    return {"compiles": False, "reason": reason}


@dataclass(frozen=True, kw_only=True)
class KeptCompile:
    """A kept verdict that still holds: whether it compiled, the reason, when it was kept."""

    compiles: bool
    reason: str
    stored_at: str


def still_holds(kept: probe_store.Stored, device_lib_dir: Path | None) -> KeptCompile | None:
    """The kept verdict when nothing it rests on changed: a kept failure rests on the key
    alone; a kept success also on each recorded file (re-stat'ed) and on the same set of
    `*.bc` files in the device-library folder. None: a miss (changed, or unreadable)."""
    value = kept.value
    compiles, reason = value.get("compiles"), value.get("reason")
    if not isinstance(compiles, bool) or not isinstance(reason, str):
        return None
    if compiles:
        raw = value.get("dependencies")
        libs = value.get("device_libs")
        if not isinstance(raw, list) or not raw or not isinstance(libs, list):
            return None
        deps = [Dependency.of_json(item) for item in raw]
        if any(d is None for d in deps):
            return None
        if list(device_library_files(device_lib_dir)) != libs:
            return None
        if changed(d for d in deps if d is not None):
            return None
    return KeptCompile(compiles=compiles, reason=reason, stored_at=kept.stored_at)
