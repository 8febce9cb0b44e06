"""Probe: conditions that break a PyTorch ROCm build long after it starts, read before it does.

Each comes from failures users really hit (tests/failures): CUDA's thrust shadowing rocThrust
(ROCm/pytorch#361), a second HIP or HSA runtime on the loader or link path (mixed installs),
CMake 4 against submodules that still declare `cmake_minimum_required` below 3.5, setuptools
82 against setup.py files that import `pkg_resources` (pytorch/vision#9380), and a CUDA
`triton` or a CUDA or CPU torch (never the one the kit built) already in the build venv,
libstdc++'s assertions switched on by the flag variables in any spelling distributions use
(ROCm/composable_kernel#1405, NixOS/nixpkgs#468809), and a temp directory on another,
smaller filesystem than the work dir (pytorch/pytorch#2046). Owns: reading the folders, files
and variables that show them (and dpkg's package lists, to say which package installed a
file). Must not: run programs, write anything or judge (plan/hazard_rows.py turns these facts
into doctor rows).
"""

from __future__ import annotations

import dataclasses
import glob
import os
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rocmforge.probes.pip_pin import PinReport

# The HIP runtime and the HSA runtime: one copy each, from the install the build uses.
RUNTIME_LIBRARIES = ("libamdhip64.so", "libhsa-runtime64.so")
# CMake 4 removed compatibility with projects that declare a minimum below this.
CMAKE4_FLOOR = (3, 5)
_MINIMUM = re.compile(r"cmake_minimum_required\s*\(\s*VERSION\s+(\d+(?:\.\d+)*)", re.IGNORECASE)
_PKG_RESOURCES = re.compile(r"^\s*(?:import pkg_resources|from pkg_resources import)", re.M)
_SKIP_DIRS = {".git", "build", "node_modules", "__pycache__", "test", "tests", "docs", "examples"}


# libstdc++'s macros that turn on its assertions (_GLIBCXX_DEBUG implies _GLIBCXX_ASSERTIONS),
# and the variables whose flags reach a build's compiles. Fedora's rpm build flags and Arch's
# makepkg.conf spell it -Wp,-D_GLIBCXX_ASSERTIONS; others -D_GLIBCXX_ASSERTIONS or -D NAME.
ASSERTION_MACROS = ("_GLIBCXX_ASSERTIONS", "_GLIBCXX_DEBUG")
# PyTorch's AOTriton CMake file, and what it takes from the install dir (AOTRITON_INSTALLED_PREFIX
# when set): the files named in target_link_libraries / target_include_directories of
# __caffe2_aotriton (lib/libaotriton_v2.a in 2.3-2.4 era trees, lib/libaotriton_v2.so later).
AOTRITON_CMAKE = "cmake/External/aotriton.cmake"
AOTRITON_PREFIX_VARIABLE = "AOTRITON_INSTALLED_PREFIX"
_AOTRITON_USES = re.compile(
    r"target_(?:link_libraries|include_directories)\s*\(\s*__caffe2_aotriton\s+INTERFACE"
    r"\s+([^)]*)\)")
_INSTALL_DIR = "${__AOTRITON_INSTALL_DIR}/"
# Composable Kernel as the checkout vendors it: its ck.hpp defines CK_BUFFER_RESOURCE_3RD_DWORD
# per target group; a target in no group leaves it undefined and every CK kernel fails for it
# ("use of undeclared identifier 'CK_BUFFER_RESOURCE_3RD_DWORD'", ROCm/TheRock#4768: gfx1033).
CK_HEADER = "third_party/composable_kernel/include/ck/ck.hpp"
_DEFINED = re.compile(r"defined\s*\(\s*(__gfx\w+__)\s*\)")
# CK's own target lists, in its top CMakeLists.txt: the targets it refuses
# (`set(CK_UNSUPPORTED_GPU_TARGETS "gfx900;gfx906;gfx90c")`, filtered out of GPU_TARGETS, a
# lone one gets a dummy target: ROCm/rocm-libraries@01ccac10577d1da9108747d8c4950faba04898f8:
# projects/composablekernel/CMakeLists.txt) and the ones it builds for by default per HIP
# release (`set(CK_GPU_TARGETS "gfx908;gfx90a;...;gfx11-generic;gfx12-generic")`, the same file
# and ROCm/composable_kernel@00115f80f6baaae41ae4774e86317ee383906dca:CMakeLists.txt, which has
# no refused list). ck.hpp's buffer-resource groups cover gfx906 although CK supports it not
# (ROCm/TheRock#1245).
CK_CMAKE = "third_party/composable_kernel/CMakeLists.txt"
_CK_LIST = re.compile(r'\bset\s*\(\s*(CK_UNSUPPORTED_GPU_TARGETS|CK_GPU_TARGETS)\s+"([^"]*)"\s*\)')
FLAG_VARIABLES = ("CPPFLAGS", "CFLAGS", "CXXFLAGS", "HIPFLAGS")


@dataclass(frozen=True, kw_only=True)
class Found:
    """A file or folder that shows a hazard, and how it is reached (a variable, a config)."""

    path: Path
    via: str
    owner: str = ""
    """The distro package (dpkg) that installed the file ('' when none did)."""
    conf: str = ""
    """The ld.so.conf file it is reached through, relative to the root ('' for a variable)."""
    conf_owner: str = ""
    """The distro package that installed that ld.so.conf file ('' when none did)."""


@dataclass(frozen=True, kw_only=True)
class FlagFound:
    """A flag variable that turns libstdc++'s assertions on."""

    variable: str
    words: tuple[str, ...]
    """The flags as written (`-Wp,-D_GLIBCXX_ASSERTIONS`, `-D _GLIBCXX_DEBUG`)."""
    without: str
    """The variable's value with those flags taken out (other -Wp options kept)."""


@dataclass(frozen=True, kw_only=True)
class AotritonPrefix:
    """AOTRITON_INSTALLED_PREFIX against what the checkout's aotriton.cmake takes from it."""

    prefix: Path
    used: tuple[str, ...]
    """Paths under the prefix the tree links or includes ('lib/libaotriton_v2.so', 'include')."""
    missing: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class TempSpace:
    """The folder compilers and pip write their temporary files to."""

    path: Path
    via: str
    """"TMPDIR", or "default" (no TMPDIR: /tmp)."""
    exists: bool
    free_gib: float
    """Free space for this user (0 when the folder does not exist)."""
    same_filesystem_as_work: bool
    """True when it shares the work dir's filesystem (the disk row already counts it)."""


@dataclass(frozen=True, kw_only=True)
class Hazards:
    cuda_thrust: tuple[Found, ...] = ()
    """Include folders with a thrust/ that is CUDA's (it has no system/hip)."""
    rocthrust: Path | None = None
    """The install's rocThrust (thrust/system/hip), or None."""
    runtime_copies: tuple[Found, ...] = ()
    """HIP/HSA runtime libraries on the loader or link path that are not the install's."""
    cmake_floors: tuple[tuple[str, str], ...] = ()
    """(CMakeLists.txt relative to the checkout, declared minimum) below 3.5."""
    tree_read: bool = False
    pkg_resources: tuple[str, ...] = ()
    """setup.py files (relative to the work dir's src/) that import pkg_resources, outside the
    PyTorch checkout (the companions')."""
    checkout_pkg_resources: tuple[str, ...] = ()
    """The same for the PyTorch checkout: its build-requirements step pins setuptools for them."""
    venv_foreign: tuple[str, ...] = ()
    """'triton 3.4.0' / 'torch 2.9.0+cu128' in the build venv: not ROCm's."""
    venv_setuptools: str = ""
    """The build venv's setuptools version ('' when there is no venv or no setuptools)."""
    venv_torch: str = ""
    """The torch version installed in the build venv ('' when none)."""
    built_torch: str = ""
    """The torch version of the wheel dist/manifest.json names ('' without a finished build)."""
    pins: tuple[PinReport, ...] = ()
    """Each venv the kit pinned (the build venv, those `invoke install` filled) as it is now."""
    assertion_flags: tuple[FlagFound, ...] = ()
    """Flag variables that define _GLIBCXX_ASSERTIONS or _GLIBCXX_DEBUG, in any spelling."""
    temp: TempSpace | None = None
    """The temp directory (None: not probed)."""
    aotriton_prefix: AotritonPrefix | None = None
    """Set when AOTRITON_INSTALLED_PREFIX is and the checkout's aotriton.cmake could be read."""
    ck_targets: tuple[str, ...] | None = None
    """The processors the checkout's Composable Kernel defines its buffer resource for (None:
    no vendored CK, or its ck.hpp has no such definition)."""
    ck_lists: CkTargetLists | None = None
    """The vendored CK's own target lists from its CMakeLists.txt (None: no file, no list)."""


@dataclass(frozen=True, kw_only=True)
class CkTargetLists:
    """Composable Kernel's CMakeLists.txt target lists, as written."""

    unsupported: tuple[str, ...]
    """CK_UNSUPPORTED_GPU_TARGETS: the targets CK filters out (() when the file has none)."""
    defaults: tuple[str, ...]
    """Every target of its default CK_GPU_TARGETS lists (all HIP releases), features dropped:
    processors and generic targets ("gfx11-generic")."""

    def default_covers(self, processor: str) -> bool:
        """A default list names the processor, or a generic target of its family
        ("gfx10-3-generic" covers gfx103x)."""
        for target in self.defaults:
            if target == processor:
                return True
            if target.endswith("-generic") and processor.startswith(
                    target.removesuffix("-generic").replace("-", "")):
                return True
        return False


def probe_hazards(*, rocm_root: Path | None, checkout: Path | None, sources: Path | None,
                  venv: Path | None, environ: Mapping[str, str], root: Path = Path("/"),
                  dist: Path | None = None, state: Path | None = None,
                  work_dir: Path | None = None) -> Hazards:
    return Hazards(
        cuda_thrust=tuple(cuda_thrust_folders(environ, root)),
        rocthrust=rocthrust(rocm_root),
        runtime_copies=tuple(runtime_copies(rocm_root, environ, root)),
        cmake_floors=tuple(cmake_floors(checkout)) if checkout else (),
        tree_read=bool(checkout and checkout.is_dir()),
        pkg_resources=tuple(pkg_resources_users(sources, skip=checkout)) if sources else (),
        checkout_pkg_resources=tuple(checkout_pkg_resources(checkout)) if checkout else (),
        venv_foreign=tuple(venv_foreign(venv, dist)) if venv else (),
        venv_setuptools=dist_version(venv, "setuptools") if venv else "",
        venv_torch=dist_version(venv, "torch") if venv else "",
        built_torch=manifest_torch(dist) if dist else "",
        pins=probe_pins(venv, state, environ),
        assertion_flags=tuple(assertion_flags(environ)),
        temp=temp_space(environ, work_dir, root) if work_dir is not None else None,
        aotriton_prefix=aotriton_prefix(environ, checkout) if checkout else None,
        ck_targets=ck_targets(checkout) if checkout else None,
        ck_lists=ck_lists(checkout) if checkout else None,
    )


def probe_pins(venv: Path | None, state: Path | None,
               environ: Mapping[str, str]) -> tuple[PinReport, ...]:
    """The pin of the build venv and of every venv the work dir's list names (pip_pin)."""
    from rocmforge.probes.pip_pin import pin_report, pinned_venvs

    venvs = [*([venv] if venv else []), *(pinned_venvs(state) if state else [])]
    reports = (pin_report(v, environ) for v in dict.fromkeys(venvs))
    return tuple(r for r in reports if r is not None)


# --- Composable Kernel ----------------------------------------------------------------------

def _logical_lines(text: str) -> list[str]:
    return text.replace("\\\n", " ").splitlines()


def ck_covered(text: str) -> tuple[str, ...] | None:
    """The processors a ck.hpp defines CK_BUFFER_RESOURCE_3RD_DWORD for: the `defined(...)`
    of each #if/#elif that leads to its #define, with the file's own group macros
    (`#if defined(__gfx1030__) || ... / #define __gfx103__`) expanded. None without one."""
    lines = [line.strip() for line in _logical_lines(text)]
    groups: dict[str, set[str]] = {}
    for index, line in enumerate(lines[:-1]):
        following = lines[index + 1]
        if line.startswith("#if") and following.startswith("#define __gfx"):
            name = following.split()[1]
            groups.setdefault(name, set()).update(_DEFINED.findall(line))
    wanted: set[str] = set()
    for index, line in enumerate(lines):
        if line.startswith("#define CK_BUFFER_RESOURCE_3RD_DWORD") and index:
            condition = lines[index - 1]
            if condition.startswith(("#elif", "#if")):
                wanted.update(_DEFINED.findall(condition))
    if not wanted:
        return None
    covered: set[str] = set()
    todo = list(wanted)
    while todo:
        macro = todo.pop()
        if macro in groups:
            todo += [m for m in groups.pop(macro) if m not in covered]
        else:
            covered.add(macro)
    return tuple(sorted(m.strip("_").replace("_", "-") for m in covered))


def ck_targets(checkout: Path) -> tuple[str, ...] | None:
    try:
        return ck_covered((checkout / CK_HEADER).read_text(errors="replace"))
    except OSError:
        return None


def ck_cmake_lists(text: str) -> CkTargetLists | None:
    """The target lists of a CK CMakeLists.txt; None when it sets neither."""
    unsupported: list[str] = []
    defaults: list[str] = []
    for name, value in _CK_LIST.findall(_strip_hash_comments(text)):
        targets = [t.strip().split(":")[0] for t in value.split(";") if t.strip()]
        (unsupported if name == "CK_UNSUPPORTED_GPU_TARGETS" else defaults).extend(targets)
    if not unsupported and not defaults:
        return None
    return CkTargetLists(unsupported=tuple(dict.fromkeys(unsupported)),
                         defaults=tuple(dict.fromkeys(defaults)))


def _strip_hash_comments(text: str) -> str:
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


def ck_lists(checkout: Path) -> CkTargetLists | None:
    try:
        return ck_cmake_lists((checkout / CK_CMAKE).read_text(errors="replace"))
    except OSError:
        return None


# --- a preinstalled AOTriton ----------------------------------------------------------------

def aotriton_uses(text: str) -> tuple[str, ...]:
    """The paths under the AOTriton install dir an aotriton.cmake links or includes."""
    used: list[str] = []
    for match in _AOTRITON_USES.finditer(text):
        used += [w.removeprefix(_INSTALL_DIR) for w in match.group(1).split()
                 if w.startswith(_INSTALL_DIR)]
    return tuple(dict.fromkeys(used))


def aotriton_prefix(environ: Mapping[str, str], checkout: Path) -> AotritonPrefix | None:
    value = environ.get(AOTRITON_PREFIX_VARIABLE, "")
    if not value:
        return None
    try:
        text = (checkout / AOTRITON_CMAKE).read_text(errors="replace")
    except OSError:
        return None
    used = aotriton_uses(text)
    if not used:
        return None
    prefix = Path(value)
    return AotritonPrefix(prefix=prefix, used=used,
                          missing=tuple(u for u in used if not (prefix / u).exists()))


# --- compile flags --------------------------------------------------------------------------

def _asserting(definition: str) -> bool:
    """`-D_GLIBCXX_ASSERTIONS`, `-D_GLIBCXX_ASSERTIONS=1`, `_GLIBCXX_DEBUG` (after -D)."""
    name = definition.removeprefix("-D").split("=", 1)[0]
    return name in ASSERTION_MACROS


def assertion_flags(environ: Mapping[str, str]) -> Iterable[FlagFound]:
    """Each flag variable whose words leave libstdc++'s assertions on: `-DNAME[=v]`, `-D NAME`,
    and `-Wp,...,-DNAME,...` (the preprocessor list Fedora and Arch use), unless a later
    `-UNAME` takes it back. Unsplittable text is skipped (the build stops on it itself)."""
    for name in FLAG_VARIABLES:
        try:
            words = shlex.split(environ.get(name, ""))
        except ValueError:
            continue
        kept: list[str] = []
        found: list[str] = []
        index = 0
        while index < len(words):
            word = words[index]
            if word == "-D" and index + 1 < len(words) and _asserting(words[index + 1]):
                found.append(f"-D {words[index + 1]}")
                index += 2
                continue
            if word.startswith("-D") and _asserting(word):
                found.append(word)
            elif word.startswith("-Wp,"):
                parts = word.split(",")[1:]
                hits = [p for p in parts if p.startswith("-D") and _asserting(p)]
                if hits:
                    found.append(word)
                    rest = [p for p in parts if p not in hits]
                    if rest:
                        kept.append(",".join(["-Wp", *rest]))
                else:
                    kept.append(word)
            elif word.startswith("-U") and word[2:] in ASSERTION_MACROS:
                found = []  # taken back: what follows decides
                kept.append(word)
            else:
                kept.append(word)
            index += 1
        if found:
            yield FlagFound(variable=name, words=tuple(found), without=shlex.join(kept))


# --- the temp directory ---------------------------------------------------------------------

def _existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def temp_space(environ: Mapping[str, str], work_dir: Path, root: Path = Path("/")) -> TempSpace:
    """Where GCC, clang/hipcc and pip put their temporary files: TMPDIR, else /tmp; its free
    space and whether it is the work dir's filesystem."""
    value = environ.get("TMPDIR", "")
    path = Path(value) if value else root / "tmp"
    via = "TMPDIR" if value else "default"
    if not path.is_dir():
        return TempSpace(path=path, via=via, exists=False, free_gib=0.0,
                         same_filesystem_as_work=False)
    stat = os.statvfs(path)
    free = stat.f_bavail * stat.f_frsize / 2**30
    try:
        same = os.stat(path).st_dev == os.stat(_existing(work_dir)).st_dev
    except OSError:
        same = False
    return TempSpace(path=path, via=via, exists=True, free_gib=free,
                     same_filesystem_as_work=same)


def manifest_torch(dist: Path) -> str:
    """The version of the torch wheel dist/manifest.json names ('' when there is none)."""
    import json

    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    try:
        doc = json.loads((dist / "manifest.json").read_text(encoding="utf-8"))
        wheel = str(doc["wheels"]["torch"])
        return str(parse_wheel_filename(wheel)[1])
    except (OSError, ValueError, KeyError, TypeError, InvalidWheelFilename):
        return ""


# --- include path ---------------------------------------------------------------------------

def include_folders(environ: Mapping[str, str], root: Path) -> list[Found]:
    """Where a compile looks for `<thrust/...>` besides its -I flags: CPATH, CPLUS_INCLUDE_PATH,
    C_INCLUDE_PATH, then the system folders."""
    out: list[Found] = []
    for name in ("CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH"):
        out += [Found(path=Path(p), via=name) for p in environ.get(name, "").split(":") if p]
    out += [Found(path=root / p, via="system include folder")
            for p in ("usr/local/include", "usr/include", "usr/local/cuda/include")]
    return out


def cuda_thrust_folders(environ: Mapping[str, str], root: Path) -> Iterable[Found]:
    seen: set[Path] = set()
    for folder in include_folders(environ, root):
        thrust = folder.path / "thrust"
        if not (thrust / "version.h").is_file() or (thrust / "system" / "hip").is_dir():
            continue
        real = thrust.resolve()
        if real not in seen:
            seen.add(real)
            yield Found(path=thrust, via=folder.via)


def rocthrust(rocm_root: Path | None) -> Path | None:
    if rocm_root is None:
        return None
    for include in (rocm_root / "include", rocm_root / "include" / "rocthrust"):
        if (include / "thrust" / "system" / "hip").is_dir():
            return include / "thrust"
    return None


# --- loader and link path -------------------------------------------------------------------

def loader_folders(environ: Mapping[str, str], root: Path) -> list[Found]:
    """LD_LIBRARY_PATH, LIBRARY_PATH (the link path), then /etc/ld.so.conf and its includes."""
    out: list[Found] = []
    for name in ("LD_LIBRARY_PATH", "LIBRARY_PATH"):
        out += [Found(path=Path(p), via=name) for p in environ.get(name, "").split(":") if p]
    out += [Found(path=Path(p), via=f"ld.so.conf ({source})", conf=source)
            for p, source in _ld_so_conf(root / "etc" / "ld.so.conf", root, depth=0)]
    return out


def package_owners(paths: Iterable[str], root: Path) -> dict[str, str]:
    """The dpkg package that installed each of `paths` (absolute, as the package lists them),
    read from var/lib/dpkg/info/*.list; a path no list names is left out."""
    wanted = set(paths)
    owners: dict[str, str] = {}
    if not wanted:
        return owners
    for listing in sorted((root / "var" / "lib" / "dpkg" / "info").glob("*.list")):
        try:
            lines = listing.read_text(errors="replace").splitlines()
        except OSError:
            continue
        package = listing.name.removesuffix(".list").split(":")[0]
        for line in lines:
            if line in wanted and line not in owners:
                owners[line] = package
    return owners


def _listed(path: Path, root: Path) -> list[str]:
    """The names a package list may use for `path` under `root`: as found and resolved."""
    names = []
    for candidate in (path, path.resolve()):
        if candidate.is_relative_to(root):
            names.append("/" + str(candidate.relative_to(root)).lstrip("/"))
    return names


def _ld_so_conf(path: Path, root: Path, depth: int) -> Iterable[tuple[str, str]]:
    if depth > 3:
        return
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("include "):
            pattern = line.split(None, 1)[1].strip()
            pattern = str(root / pattern.lstrip("/")) if pattern.startswith("/") else str(
                path.parent / pattern)
            for match in sorted(glob.glob(pattern)):
                yield from _ld_so_conf(Path(match), root, depth + 1)
        else:
            yield str(root / line.lstrip("/")), str(path.relative_to(root)) if path.is_relative_to(
                root) else str(path)


def runtime_copies(rocm_root: Path | None, environ: Mapping[str, str], root: Path
                   ) -> Iterable[Found]:
    """The HIP/HSA runtimes in the loader and link folders whose real file is not under the
    selected install (for a distro install at /usr: not under /usr)."""
    if rocm_root is None:
        return
    own = rocm_root.resolve()
    seen: set[Path] = set()
    copies: list[Found] = []
    for folder in loader_folders(environ, root):
        for name in RUNTIME_LIBRARIES:
            for match in sorted(folder.path.glob(name + "*")):
                real = match.resolve()
                if real in seen or not real.is_file():
                    continue
                seen.add(real)
                if not real.is_relative_to(own):
                    copies.append(Found(path=match, via=folder.via, conf=folder.conf))
    if not copies:
        return
    # Who installed each copy and each ld.so.conf file: a distro package's file is removed
    # with the package, never by hand.
    names = {f: _listed(f.path, root) for f in copies}
    confs = {f.conf: "/" + f.conf.lstrip("/") for f in copies if f.conf}
    owners = package_owners([n for listed in names.values() for n in listed]
                            + list(confs.values()), root)
    for found in copies:
        owner = next((owners[n] for n in names[found] if n in owners), "")
        conf_owner = owners.get(confs.get(found.conf, ""), "")
        yield dataclasses.replace(found, owner=owner, conf_owner=conf_owner)


# --- the checkout ---------------------------------------------------------------------------

def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def cmake_floors(checkout: Path, max_depth: int = 4) -> Iterable[tuple[str, str]]:
    """Every CMakeLists.txt of the checkout and its submodules (tests, docs and examples
    left out: a build does not configure them) declaring a minimum below 3.5."""
    if not checkout.is_dir():
        return
    base = len(checkout.parts)
    for folder, dirs, files in os.walk(checkout):
        depth = len(Path(folder).parts) - base
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and depth < max_depth)
        if "CMakeLists.txt" not in files:
            continue
        path = Path(folder) / "CMakeLists.txt"
        try:
            head = path.read_text(errors="replace")[:20000]
        except OSError:
            continue
        found = _MINIMUM.search(head)
        if found and version_tuple(found.group(1))[:2] < CMAKE4_FLOOR:
            yield str(path.relative_to(checkout)), found.group(1)


def pkg_resources_users(sources: Path, skip: Path | None = None) -> Iterable[str]:
    """The setup.py of each checkout under the work dir's src/ (PyTorch, the companions) that
    imports pkg_resources, and each module of that checkout setup.py loads that does
    (PyTorch's setup.py imports tools.setup_helpers.env, .cmake, ...; followed import by
    import within the checkout); `skip` is a checkout left out (PyTorch's, judged apart)."""
    if not sources.is_dir():
        return
    for setup in sorted(sources.glob("*/setup.py")):
        if skip is None or setup.parent.resolve() != skip.resolve():
            yield from _setup_users(setup, sources)


def checkout_pkg_resources(checkout: Path) -> Iterable[str]:
    """pkg_resources_users for one checkout, named relative to the folder that holds it."""
    setup = checkout / "setup.py"
    if setup.is_file():
        yield from _setup_users(setup, checkout.parent)


def _setup_users(setup: Path, base: Path) -> Iterable[str]:
    for module in _loaded_by(setup, setup.parent):
        try:
            if imports_pkg_resources(module.read_text(errors="replace")):
                name = str(module.relative_to(base))
                yield name if module == setup else f"{name} (setup.py imports it)"
        except OSError:
            continue


# An import in the body of a try with one of these handlers fails softly: the code goes on
# without pkg_resources (`try: import pkg_resources` / `except ImportError:`).
_IMPORT_GUARDS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def imports_pkg_resources(text: str) -> bool:
    """Whether Python source `text` imports pkg_resources where its absence stops it: any
    `import pkg_resources` (also `import os, pkg_resources`, `import pkg_resources.x`) or
    `from pkg_resources… import`, at any depth, except in the body of a try whose handlers
    catch ImportError, ModuleNotFoundError, Exception (or everything). Source that does not
    parse is read line by line (an import statement at the start of a line)."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return _PKG_RESOURCES.search(text) is not None

    def guarded(handlers: list[ast.ExceptHandler]) -> bool:
        for handler in handlers:
            caught = handler.type
            if caught is None:
                return True
            names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
            if any(isinstance(n, ast.Name) and n.id in _IMPORT_GUARDS or
                   isinstance(n, ast.Attribute) and n.attr in _IMPORT_GUARDS for n in names):
                return True
        return False

    def is_pkg(name: str | None) -> bool:
        return name is not None and (name == "pkg_resources" or
                                     name.startswith("pkg_resources."))

    def found(node: ast.AST) -> bool:
        if isinstance(node, ast.Import):
            return any(is_pkg(alias.name) for alias in node.names)
        if isinstance(node, ast.ImportFrom):
            return node.level == 0 and is_pkg(node.module)
        if type(node).__name__ in ("Try", "TryStar"):  # TryStar: `except*`, Python 3.11
            handlers: list[ast.ExceptHandler] = getattr(node, "handlers", [])
            if guarded(handlers):
                rest: list[ast.AST] = [*handlers, *getattr(node, "orelse", []),
                                       *getattr(node, "finalbody", [])]
                return any(found(child) for child in rest)
        return any(found(child) for child in ast.iter_child_nodes(node))

    return found(tree)


_MAX_MODULES = 200


def _loaded_by(setup: Path, root: Path) -> list[Path]:
    """`setup` and the modules under `root` it imports, directly or through each other (at
    most _MAX_MODULES files)."""
    import ast

    seen: list[Path] = [setup]
    todo = [setup]
    while todo and len(seen) < _MAX_MODULES:
        current = todo.pop(0)
        try:
            tree = ast.parse(current.read_text(errors="replace"))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    package = current.parent
                    for _ in range(node.level - 1):
                        package = package.parent
                    prefix = ".".join(package.relative_to(root).parts) if package != root and \
                        package.is_relative_to(root) else ""
                    base = ".".join(p for p in (prefix, base) if p)
                names = [base] + [f"{base}.{alias.name}" if base else alias.name
                                  for alias in node.names]
            for name in names:
                found = _module_file(root, name)
                if found is not None and found not in seen:
                    seen.append(found)
                    todo.append(found)
    return seen


def _module_file(root: Path, dotted: str) -> Path | None:
    if not dotted:
        return None
    parts = dotted.split(".")
    for candidate in (root.joinpath(*parts).with_suffix(".py"),
                      root.joinpath(*parts) / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


# --- the build venv -------------------------------------------------------------------------

def venv_foreign(venv: Path, dist: Path | None = None) -> Iterable[str]:
    """A CUDA `triton` (PyPI's; ROCm's is pytorch-triton-rocm) in the build venv's
    site-packages, or a torch from elsewhere: a CUDA or CPU build (a +cu…/+cpu local version,
    or METADATA requiring nvidia-* packages). The torch the kit built (`kit_torch`) never is,
    whatever its version says; a torch that shows neither sign is not named (nothing proves it
    foreign)."""
    for info in sorted(venv.glob("lib/python3*/site-packages/*.dist-info")):
        name, _, version = info.name.removesuffix(".dist-info").partition("-")
        if name == "triton":
            yield f"triton {version}"
        elif name == "torch" and not kit_torch(info, dist) and cuda_or_cpu_torch(info, version):
            yield f"torch {version}"


def kit_torch(info: Path, dist: Path | None) -> bool:
    """Whether the torch of dist-info `info` is the wheel dist/manifest.json names: the same
    version, installed from that file in dist/ (its PEP 610 direct_url.json names it)."""
    import json
    from urllib.parse import unquote, urlparse

    if dist is None:
        return False
    version = info.name.removesuffix(".dist-info").partition("-")[2]
    built = manifest_torch(dist)
    if not built or version != built:
        return False
    try:
        doc = json.loads((dist / "manifest.json").read_text(encoding="utf-8"))
        wheel = str(doc["wheels"]["torch"])
        url = urlparse(str(json.loads((info / "direct_url.json").read_text(
            encoding="utf-8"))["url"]))
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if url.scheme != "file":
        return False
    return os.path.realpath(unquote(url.path)) == os.path.realpath(dist / wheel)


def cuda_or_cpu_torch(info: Path, version: str) -> bool:
    """A torch built for CUDA or for the CPU only: its local version (+cu128, +cpu) or its
    METADATA's Requires-Dist on nvidia-* packages (PyPI's Linux CUDA torch)."""
    local = version.partition("+")[2].lower()
    if local.startswith("cu") or local.startswith("cpu"):
        return True
    try:
        metadata = (info / "METADATA").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(line.lower().removeprefix("requires-dist:").strip().startswith("nvidia-")
               for line in metadata.splitlines() if line.lower().startswith("requires-dist:"))


def dist_version(venv: Path, name: str) -> str:
    for info in sorted(venv.glob(f"lib/python3*/site-packages/{name}-*.dist-info")):
        return info.name.removesuffix(".dist-info").partition("-")[2]
    return ""


def describe(found: Sequence[Found]) -> str:
    return "; ".join(f"{f.path} (via {f.via})" for f in found)
