"""A program a build recipe runs that is not installed: the shell's "not found" (dash's
`sh: 1: bison: not found`, bash's `bash: line 1: flex: command not found`) or make's own
`make: bison: No such file or directory` (make runs a simple recipe without a shell), in a
make build that stopped with the shell's 127, or under a ninja edge that FAILED.

Owns: this family's rules and the program → Debian package table. Compilers and ROCm's tools
(hipcc, clang, nvcc...) are left to their own modules (rocm_install.py, hipcc.py); automake's
`missing` wrapper is build_dependency.py's. Must not: read files, run programs or pick between
findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import Alias, Groups, LineView, Reading, Rule, rx

# Debian 12 package of each program where the names differ (apt-cache show / dpkg -S here;
# automake's lib/missing names the same homes for makeinfo, yacc, lex, aclocal, autoreconf).
_PACKAGE = {"makeinfo": "texinfo", "yacc": "bison", "lex": "flex", "ninja": "ninja-build",
            "aclocal": "automake", "autoreconf": "autoconf", "autoheader": "autoconf",
            "autom4te": "autoconf", "libtoolize": "libtool", "pkg-config": "pkgconf",
            "msgfmt": "gettext"}

# Programs whose absence other modules explain (a compiler or ROCm's own tools), and
# interpreters whose "not found" says more about the environment than a missing package.
_OTHERS = re.compile(r"^(?:hipcc|hipconfig|nvcc|amdclang\S*|clang\S*|gcc\S*|g\+\+\S*|cc|c\+\+"
                     r"|ld(?:\.\w+)?|python\S*|pip\S*|conda|cmake|rocm\S*|hip\S*|roc\S*|amd\S*"
                     r"|sudo|source)$")


_BY_RECIPE = "a build recipe ran {tool} and the shell (or make) found no program of that name"
_BY_MESON = "Meson's configure needs the program {tool} (a required find_program) and found none"


def _tool_missing(tool: str, how: str = _BY_RECIPE) -> Reading | None:
    if _OTHERS.match(tool):
        return None
    package = _PACKAGE.get(tool, tool)
    return Reading(
        subject=tool,
        cause=how.format(tool=tool) + f" on PATH: {tool} is not installed on the build "
              "machine",
        fix=f"install {tool} (Debian/Ubuntu: `apt install {package}`; other distributions: "
            f"the package that ships {tool}), or put the folder that holds it on PATH; then "
            "run the build again")


def _ran_it(tool: str, lines: tuple[str, ...]) -> bool:
    """The recipe's own command line (make's echo, ninja's FAILED block) names the program, or
    a CMake Makefile's progress line stands for the recipe it ran without echoing it: a
    program found missing elsewhere (a configure's or a script's probe) is no proof."""
    named = re.compile(rf"(?:^|[\s/;&|(]){re.escape(tool)}(?:\s|$)")
    return any(named.search(line) or _CMAKE_PROGRESS.match(line) for line in lines)


_CMAKE_PROGRESS = re.compile(r"^\[\s*\d+%\] ")


def _under_make(match: Groups, view: LineView) -> Reading | None:
    tool = match.group("tool")
    if not _ran_it(tool, view.previous[-3:]):
        return None
    return _tool_missing(tool)


def _under_ninja(match: Groups, view: LineView) -> Reading | None:
    # ninja prints the edge's `FAILED: <outputs>` and its command line, then the output: the
    # program's "not found" is the first line of that output.
    tool = match.group("tool")
    if len(view.previous) < 2 or not view.previous[-2].startswith("FAILED: ") \
            or not _ran_it(tool, view.previous[-1:]):
        return None
    return _tool_missing(tool)


def _linker_missing(match: Groups, view: LineView) -> Reading | None:
    path = match.groupdict().get("ldpath") or ""
    named = match.group("linker") or re.sub(r"^ld\.|-\d+$", "", path.rsplit("/", 1)[-1])
    return _linker_reading(named, path, view)


def _linker_reading(named: str, path: str, view: LineView) -> Reading:
    asked = next((found.group(1) for line in reversed(view.previous)
                  if (found := _FUSE_LD.search(line))), "")
    linker = named or asked or "ld"
    program = {"ld": "ld", "lld": "ld.lld", "gold": "ld.gold", "mold": "ld.mold (mold)",
               "bfd": "ld.bfd"}.get(linker, f"ld.{linker}")
    return Reading(
        subject=linker,
        cause=f"the compiler driver found no linker program {path or program} ("
              + (f"asked for with --ld-path={path}" if path else
                 f"asked for with -fuse-ld={linker}" if linker != "ld" else
                 "its default ld, or the ld.<name> of a -fuse-ld=<name> in the flags")
              + "): that linker is not installed, or not on PATH / next to the compiler",
        fix=f"install the linker ({program}; Debian/Ubuntu: lld or lld-N for ld.lld, mold, "
            "binutils for ld, ld.gold and ld.bfd) or drop -fuse-ld (--ld-path) from the flags "
            "(LDFLAGS, CMAKE_LINKER_TYPE, the project's option) to link with the default one")


_FUSE_LD = re.compile(r"-fuse-ld=(\w+)")


# Libraries another family reads by name at any prefix (aotriton.py: aotriton-error).
_OWNED_STEMS = ("libaotriton",)


def _library_file_missing(match: Groups, view: LineView) -> Reading | None:
    path, target = match.group("path"), match.group("target")
    if "/rocm" in path:
        return None  # a ROCm install's library: rocm_install.py's
    stem = path.rsplit("/", 1)[-1].split(".so")[0].split(".a")[0]
    if stem.startswith(_OWNED_STEMS):
        return None  # AOTriton's own library, wherever its prefix is: aotriton.py's
    return Reading(
        subject=stem, klass="link",
        cause=f"the build files link {target} with the library file {path}, which does not "
              "exist: the build recorded that full path at configure (or a package's CMake "
              "files name it) and the file has since been removed, moved or upgraded to "
              "another version",
        fix=f"install {stem} again where the path says, or configure again from a clean build "
            "folder (delete CMakeCache.txt) so the build finds the library where it is now")


# The programs GCC's driver runs and the package each comes with (Debian 12: cc1plus in g++-N's
# cpp/g++ packages, as and ld in binutils, f951 in gfortran-N).
_DRIVER_PROGRAM = {"as": "binutils", "ld": "binutils", "cc1plus": "g++", "cc1": "gcc",
                   "f951": "gfortran", "collect2": "gcc", "lto1": "gcc"}


def _driver_program_missing(match: Groups, view: LineView) -> Reading | None:
    return _driver_reading(match.group("prog"), match.group("driver"))


# clang's driver when the program it spawned is not there (LLVM 22: posix_spawn; older
# releases name it: 'Executable "ld" doesn't exist!'), the line before '<tool> command failed'.
_SPAWN_FAILED = re.compile(r"unable to execute command: (?:posix_spawn failed: No such file or "
                           r"directory|Executable \"[^\"]+\" doesn't exist!)")


def _clang_spawn_missing(match: Groups, view: LineView) -> Reading | None:
    if not (view.previous and _SPAWN_FAILED.search(view.previous[-1])):
        return None  # the linker or assembler ran and failed: its own errors are above
    if match.group("tool") == "assembler":
        return _driver_reading("as", match.group("driver"))
    return _linker_reading("", "", view)


def _driver_reading(prog: str, driver: str) -> Reading | None:
    package = _DRIVER_PROGRAM.get(prog)
    if package is None:
        return None
    return Reading(
        subject=package,
        cause=f"the compiler driver {driver} could not run {prog}, a program it needs for this "
              f"step: {package} is not installed (or not on PATH), so {driver} has only part of "
              "its toolchain",
        fix=f"install {package} (Debian/Ubuntu: `apt install {package}`"
            + (", or g++-N for gcc-N" if package == "g++" else "")
            + "; for a compiler under another prefix, that prefix's bin on PATH), then build "
            "again")


_NOT_FOUND = (r"^(?:/(?:usr/)?bin/)?(?:(?:da)?sh: (?:\d+: )?(?P<tool>[\w.+-]+): not found"
              r"|bash: (?:line \d+: )?(?P<tool2>[\w.+-]+): command not found)$")
_SOURCE = ("dash's '<sh>: <n>: <prog>: not found' and bash's '<sh>: line <n>: <prog>: command "
           "not found' (Debian 12's dash 0.5.12 and bash 5.2), GNU make 4.3's 'make: <prog>: "
           "No such file or directory' for a recipe it runs without a shell, then '*** [...] "
           "Error 127': all reproduced here (make/devtl.sh); the shells' and make's sources "
           "not read")

RULES: tuple[Rule, ...] = (
    Rule(id="recipe-program-missing", klass="missing-component",
         triggers=(": not found", ": command not found", ": No such file or directory"),
         pattern=rx(_NOT_FOUND + r"|^make(?:\[\d+\])?: (?P<tool3>[\w+-]+): No such file or "
                    r"directory$"),
         # The shell's (and make's) 127 for a program it could not find stopped make.
         requires=rx(r"\*\*\* \[[^\]]*\] Error 127"),
         read=lambda m, v: _under_make(Alias(m, tool="tool2" if m.group("tool2") else "tool3"),
                                       v),
         source=_SOURCE),
    Rule(id="ninja-recipe-program-missing", klass="missing-component",
         triggers=(": not found", ": command not found"),
         pattern=rx(_NOT_FOUND),
         requires=rx(r"^FAILED: "),
         read=lambda m, v: _under_ninja(Alias(m, tool="tool2"), v),
         source=_SOURCE + "; ninja 1.11's FAILED block (reproduced here)"),
    Rule(id="meson-program-missing", klass="missing-component",
         triggers=("not found or not executable",),
         pattern=rx(r"ERROR: Program (?:or command )?'(?P<tool>[\w.+-]+)' not found or not "
                    r"executable"),
         read=lambda m, v: _tool_missing(m.group("tool"), _BY_MESON),
         source="mesonbuild/meson@cd1a097e10d3a16062772c985a0dfdd6f5d824bf:mesonbuild/"
         "interpreter/interpreter.py (find_program of a required program: \"Program '<name>' "
         "not found or not executable\"; an optional one only logs 'found: NO'); meson 1.12.1 "
         "here (make/devtl.sh)"),
    Rule(id="linker-program-missing", klass="missing-component",
         triggers=("cannot find \u2018ld\u2019", "cannot find 'ld'", "invalid linker name"),
         pattern=rx(r"collect2: fatal error: cannot find [\u2018'`]ld[\u2019']"
                    r"|error: invalid linker name in argument '(?:-fuse-ld=(?P<linker>[\w.+-]+)"
                    r"|--ld-path=(?P<ldpath>[\w./+-]+))'"),
         read=_linker_missing,
         source="GCC's collect2 ('collect2: fatal error: cannot find 'ld'' when the ld, or "
         "ld.<name> of -fuse-ld=<name>, is not found: g++-12 -fuse-ld=lld without ld.lld "
         "here) and clang's driver (\"invalid linker name in argument '-fuse-ld=mold'\": "
         "clang++-15 here; the same words for a --ld-path=<file> that does not exist: "
         "clang++-22 here, make/devq8.sh): make/devtl.sh, sources not read"),
    # clang's words for collect2's "cannot find 'ld'" and GCC's "cannot execute 'as'".
    Rule(id="clang-spawn-linker-missing", klass="missing-component",
         triggers=("linker command failed with exit code 1", "assembler command failed"),
         pattern=rx(r"^(?P<driver>\S*clang[\w.+-]*): error: (?P<tool>linker|assembler) command "
                    r"failed with exit code 1(?: |$)"),
         read=_clang_spawn_missing,
         source="clang-22 here with PATH holding no ld or as (make/devq8.sh): 'unable to "
         "execute command: posix_spawn failed: No such file or directory', then '<tool> "
         "command failed with exit code 1', where gcc-12 says 'collect2: fatal error: cannot "
         "find 'ld'' and 'cannot execute 'as''; older LLVM's 'Executable \"ld\" doesn't exist!' "
         "is rocm_install.py's driver-tool-missing source (llvm Program.cpp), not run here"),
    Rule(id="library-file-missing", klass="link",
         triggers=("No rule to make target '/", "missing and no known rule"),
         pattern=rx(r"(?:No rule to make target '|ninja: error: ')(?P<path>/\S+?\.(?:so"
                    r"(?:\.[\d.]+)?|a))', needed by '(?P<target>[^']+)'"),
         read=_library_file_missing,
         source="GNU make 4.3 ('No rule to make target '<file>', needed by '<target>'.  "
         "Stop.') and ninja 1.11 (\"ninja: error: '<file>', needed by '<target>', missing and "
         "no known rule to make it\") for a library a CMake build links by full path, the "
         "file then deleted: reproduced here (make/devtl.sh)"),
    Rule(id="compiler-driver-program-missing", klass="missing-component",
         triggers=("execvp: No such file or directory",),
         pattern=rx(r"^(?P<driver>\S+): fatal error: cannot execute [\u2018'`](?P<prog>[\w+-]+)"
                    r"[\u2019']: execvp: No such file or directory"),
         read=_driver_program_missing,
         source="GCC's driver ('gcc-12: fatal error: cannot execute 'as': execvp: No such file "
         "or directory'): gcc-12 here with binutils off PATH (make/devtl.sh); cc1plus and the "
         "others by the same driver message (GCC's source not read)"),
)
