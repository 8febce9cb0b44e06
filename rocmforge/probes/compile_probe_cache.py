"""The per-target compile probe's results kept across runs, and the proof that they still hold.

Owns: what decides one target's compile (`compile_key`: the argv with the temporary folder
written as `<tmp>`, the probe source, the environment the compiler sees, and the identity of
every file of the compiler chain from `compiler_chain`: the driver, the interpreter of a driver
script, hipcc's scripts and settings files and the clang it runs, each clang's tools and shared
libraries, and the target's device-library file, "missing" when absent); what a compile that
worked rests on besides (`compile_record`: a `PathStamp` of every file it read, from its
dependency file, of every folder a header was or could have been found in, from clang -cc1's
`-v` search list, and of the device-library folder and each `*.bc` in it); the check that none
of it changed (`still_holds`); the folders a missing device library would be added to
(`device_library_folders`); and the records themselves. Which failures may be kept is the
compile probe's call (compile_probe.rejects_target, the driver's refusal of the target, and
compile_probe.lacks_device_library, kept with those folders).
Must not: compile, decide what doctor reports, or fail a probe: a record it cannot read is a
miss.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rocmforge.probes import probe_store
from rocmforge.probes.elf_needed import needed_libraries
from rocmforge.probes.probe_store import PathStamp, changed, stamp_of

KIND = "target-compile/2"  # 2: kept failures may rest on paths (a missing device library)
TMP_MARK = "<tmp>"
# The programs a `--cuda-device-only -c` compile runs beside the clang driver (clang -cc1, the
# device linker, the bundler), looked up in the clang's real folder.
CLANG_TOOLS = ("clang", "lld", "ld.lld", "clang-offload-bundler")
# hipcc's own files beside its real file (ROCm 5.x: the Perl script and its module; ROCm 6:
# the compiled hipcc.bin) and the settings files hipvars.pm reads.
HIPCC_FILES = ("hipcc.pl", "hipvars.pm", "hipcc.bin", "hipconfig", "hipconfig.pl")


# --- what a compile read, and where it looked ---------------------------------------------------


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


_NONEXISTENT = re.compile(r'^ignoring nonexistent directory "(.*)"$')


def parse_search_dirs(output: str) -> tuple[str, ...]:
    """The header search folders clang -cc1 printed with `-v` (`#include <...> search starts
    here:` and the lines after it), then those it skipped as nonexistent: a header put into
    one of them later may be found first."""
    found: list[str] = []
    missing: list[str] = []
    listing = False
    for line in output.splitlines():
        if line.startswith("#include ") and line.endswith("search starts here:"):
            listing = True
        elif line.startswith("End of search list."):
            listing = False
        elif listing and line.startswith(" "):
            found.append(line.strip().removesuffix(" (framework directory)"))
        else:
            match = _NONEXISTENT.match(line.strip())
            if match:
                missing.append(match.group(1))
    return tuple(dict.fromkeys([*found, *missing]))


def compile_record(depfile: Path, output: str, *, cwd: Path,
                   device_lib_dir: Path | None) -> tuple[PathStamp, ...] | None:
    """Everything a compile that worked rests on besides its key: each file it read (its
    dependency file, less the probe's own temporary folder `cwd`); each folder that was or
    could have been searched for one of them (the folder of each file, and every header
    search folder joined with the sub-folder each header was found in, e.g. `bits`, so a
    header that would now shadow it shows); the folders around the GCC install a search folder
    was built from (`_chosen_install`); the device-library folder and each `*.bc` in it.
    None when the dependency file is missing or empty, or a file it names is gone: then
    nothing is kept."""
    try:
        names = parse_depfile(depfile.read_text(errors="replace"))
    except OSError:
        return None
    if not names:
        return None
    scratch = os.path.realpath(cwd) + os.sep
    search = parse_search_dirs(output)
    files: list[str] = []
    folders: list[str] = []
    below: set[str] = set()
    for name in names:
        full = name if os.path.isabs(name) else os.path.join(cwd, name)
        if os.path.realpath(full).startswith(scratch):
            continue
        files.append(full)
        folders.append(os.path.dirname(full))
        root = max((d for d in search if full.startswith(d.rstrip("/") + "/")), key=len,
                   default=None)
        if root is not None:
            below.add(os.path.dirname(full[len(root.rstrip("/")) + 1:]))
    libs = device_library_files(device_lib_dir)
    if device_lib_dir is not None:
        folders.append(os.fspath(device_lib_dir))
    record: dict[str, PathStamp] = {}
    for path in (*files, *libs):
        stamp = stamp_of(path)
        if stamp is None:  # read a moment ago, gone now: nothing to prove a hit with
            return None
        record.setdefault(path, PathStamp(path=path, stamp=stamp))
    for folder in search:
        folders += _chosen_install(folder)
        folders.append(folder)
        if stamp_of(folder) is None:
            continue
        # A folder that is not there stands for everything below it: nothing can appear
        # below it without it appearing first.
        absent: list[str] = []
        for sub in sorted(below - {""}):  # parents sort before their children
            if not any(sub.startswith(gone + "/") for gone in absent):
                folders.append(os.path.join(folder, sub))
                if stamp_of(folders[-1]) is None:
                    absent.append(sub)
    for path in folders:
        record.setdefault(path, PathStamp(path=path, stamp=stamp_of(path)))
    return tuple(record.values())


def _chosen_install(folder: str) -> list[str]:
    """For a search folder the driver built from an install it chose among siblings
    (`/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12`: the newest GCC under
    `lib/gcc/<triple>`), that install's folder, its parent and grandparent, where another
    version or triple would appear; [] for a folder without `..`."""
    parts = folder.split("/")
    if ".." not in parts:
        return []
    cut = len(parts) - parts[::-1].index("..")  # just past the last `..`
    while parts[cut - 1] == "..":  # back to the start of that run of `..`
        cut -= 1
    return ["/".join(parts[:n]) for n in range(max(2, cut - 2), cut + 1)]


def device_library_files(device_lib_dir: Path | None) -> tuple[str, ...]:
    """The `*.bc` files of the device-library folder, sorted by name."""
    if device_lib_dir is None:
        return ()
    try:
        return tuple(sorted(entry.path for entry in os.scandir(device_lib_dir)
                            if entry.name.endswith(".bc")))
    except OSError:
        return ()


def device_library_folders(device_lib_dir: Path | None,
                           rocm_root: Path | None) -> tuple[PathStamp, ...]:
    """Where a missing device library would be added, as they are now: the folder the compile
    was given and every folder of the install's layouts that may hold device bitcode
    (rocm.device_lib_candidates), present or not. A library added, removed or renamed there
    moves the folder's mtime; a folder that appears shows too."""
    from rocmforge.probes.rocm import device_lib_candidates

    folders = [device_lib_dir, *(device_lib_candidates(rocm_root) if rocm_root else ())]
    paths = dict.fromkeys(os.fspath(f) for f in folders if f is not None)
    return tuple(PathStamp(path=path, stamp=stamp_of(path)) for path in paths)


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


def success_record(reason: str, stamps: Sequence[PathStamp]) -> dict[str, object]:
    """What is kept of a compile that worked: its reason and what it rests on."""
    return {"compiles": True, "reason": reason, "rests_on": [s.as_json() for s in stamps]}


def failure_record(reason: str, stamps: Sequence[PathStamp] = ()) -> dict[str, object]:
    """What is kept of a failure the compile probe may keep: the reason, and what it rests on
    besides the key (nothing for the driver's refusal of a target; the device-library folders
    for a missing library)."""
    return {"compiles": False, "reason": reason, "rests_on": [s.as_json() for s in stamps]}


@dataclass(frozen=True, kw_only=True)
class KeptCompile:
    """A kept verdict that still holds: whether it compiled, the reason, when it was kept."""

    compiles: bool
    reason: str
    stored_at: str


def still_holds(kept: probe_store.Stored) -> KeptCompile | None:
    """The kept verdict when nothing it rests on changed: the key, and every path of its
    record, stat'ed again (a kept success lists what it read; a kept failure what a fix
    would change, if anything). None: a miss (something changed, or the record is
    unreadable)."""
    value = kept.value
    compiles, reason = value.get("compiles"), value.get("reason")
    if not isinstance(compiles, bool) or not isinstance(reason, str):
        return None
    raw = value.get("rests_on", None if compiles else [])
    if not isinstance(raw, list):
        return None
    stamps = [PathStamp.of_json(item) for item in raw]
    if any(s is None for s in stamps) or changed(s for s in stamps if s is not None):
        return None
    return KeptCompile(compiles=compiles, reason=reason, stored_at=kept.stored_at)
