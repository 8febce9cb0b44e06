"""What a PyTorch source tree states about itself, read from its own files.

Owns: reading one checkout's version.txt, Triton pin files and triton_version.txt,
CMakeLists.txt (CMake floor, C++ standard, compiler minimum checks), requirements-build.txt (the
CMake pin), pyproject.toml / setup.py (build backend, Python range) and
cmake/public/LoadHIP.cmake (the ROCm components it looks for) into one frozen `TreeFacts`; every
value carries the file (and line) it came from. Must not: run anything (no git, no subprocess),
write anything, consult config/ (rocmforge.plan.pytorch_facts merges the tree with the
table), or raise for a tree that lacks or garbles a file: a missing file is an UNKNOWN fact, a
file that is there but says nothing is ABSENT, a file that cannot be parsed is MALFORMED with
the reason. Only a path that is not a directory at all is refused (UsageError).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Generic, Literal, TypeVar

from rocmforge.errors import UsageError

VERSION_FILE = "version.txt"
PIN_DIR = ".ci/docker/ci_commit_pins"
TRITON_ROCM_PIN = f"{PIN_DIR}/triton-rocm.txt"
TRITON_PIN = f"{PIN_DIR}/triton.txt"
# A ROCm build reads triton-rocm.txt where the tree still has one (the 2.4 era), else triton.txt.
TRITON_PIN_FILES = (TRITON_ROCM_PIN, TRITON_PIN)
TRITON_VERSION_FILE = ".ci/docker/triton_version.txt"
CMAKELISTS = "CMakeLists.txt"
REQUIREMENTS_BUILD = "requirements-build.txt"
PYPROJECT = "pyproject.toml"
SETUP_PY = "setup.py"
LOADHIP = "cmake/public/LoadHIP.cmake"

SETUPTOOLS_LEGACY_BACKEND = "setuptools.build_meta:__legacy__"
SCIKIT_BUILD_CORE_BACKEND = "scikit_build_core.build"

FOUND: Final = "found"
ABSENT: Final = "absent"
UNKNOWN: Final = "unknown"
MALFORMED: Final = "malformed"
FactStatus = Literal["found", "absent", "unknown", "malformed"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


@dataclass(frozen=True, kw_only=True)
class TreeFact(Generic[T_co]):
    """One fact of the tree: its value and the file (and line) that states it.

    status FOUND: `value` is what the file says. ABSENT: the file was read and states no such
    thing (`value` is None; e.g. a CMakeLists.txt without a Clang check). UNKNOWN: the file is
    not in the tree. MALFORMED: the file is there but cannot be understood; `detail` says why.
    """

    value: T_co | None
    status: FactStatus
    source: str
    """"tree: CMakeLists.txt:1" when found; the file that was looked at otherwise."""
    detail: str = ""

    @property
    def known(self) -> bool:
        """The tree answers the question (with a value, or by stating there is none)."""
        return self.status in (FOUND, ABSENT)


@dataclass(frozen=True, kw_only=True)
class RocmComponent:
    """One package cmake/public/LoadHIP.cmake asks find_package for."""

    name: str
    required: bool
    line: int
    condition: str = ""
    """The enclosing if() conditions, joined with AND ("" at top level)."""
    version: str = ""
    """The version the call asks for (`find_package(HIP 1.0)` -> "1.0"); "" when none."""
    module: bool = False
    """The call says MODULE: a Find<name>.cmake answers, never the package's config."""


@dataclass(frozen=True, kw_only=True)
class TreeFacts:
    """Everything the kit reads from one PyTorch checkout."""

    root: Path
    version: TreeFact[str]
    """version.txt as written: "2.9.1", "2.10.0a0"."""
    triton_pin: TreeFact[str]
    """The 40-hex Triton commit of the pin file a ROCm build reads."""
    triton_pin_file: TreeFact[str]
    """Which pin file that is (relative path)."""
    triton_version: TreeFact[str]
    cmake_minimum: TreeFact[str]
    """cmake_minimum_required(VERSION x) of the top CMakeLists.txt (lower end of a range)."""
    cmake_pin: TreeFact[str]
    """The cmake requirement pip installs for the build, e.g. ">=3.27"."""
    cxx_standard: TreeFact[int]
    gcc_minimum: TreeFact[str]
    """The GCC version below which CMakeLists.txt stops with FATAL_ERROR."""
    clang_minimum: TreeFact[str]
    """The Clang version below which CMakeLists.txt stops with FATAL_ERROR."""
    build_backend: TreeFact[str]
    """[build-system] build-backend; setuptools' legacy backend for a setup.py-only tree."""
    has_setup_py: bool
    requires_python: TreeFact[str]
    """A PEP 440 specifier: [project] requires-python, or setup.py's python_requires."""
    python_max: TreeFact[str]
    """The newest Python "3.N" the tree's classifiers name."""
    rocm_components: TreeFact[tuple[RocmComponent, ...]]
    rocm_minimum: TreeFact[str] = field(default_factory=lambda: _unknown(LOADHIP, "not read"))
    """The ROCm release below which LoadHIP.cmake stops with FATAL_ERROR ("7.14"); ABSENT when
    it has no such check."""
    problems: tuple[str, ...] = field(default=())
    """One line per MALFORMED fact: "<source>: <detail>"."""

    @property
    def uses_scikit_build_core(self) -> bool:
        return self.build_backend.value == SCIKIT_BUILD_CORE_BACKEND


# ------------------------------------------------------------------------------------ reading


def read_tree_facts(root: str | Path) -> TreeFacts:
    """Read the facts of the PyTorch tree at `root` (never raises for its content)."""
    tree = Path(root)
    if not tree.is_dir():
        raise UsageError(
            f"{tree} is not a directory",
            "the kit reads a PyTorch checkout's own files (version.txt, CMakeLists.txt, ...)",
            "pass the folder of a PyTorch checkout (`invoke checkout` makes one in the work "
            "dir; `git clone https://github.com/pytorch/pytorch` makes one anywhere)",
        )
    files = _Files(tree)
    pin, pin_file = _triton_pin(files)
    gcc, clang = _compiler_minimums(files)
    backend, requires_python, python_max = _python_packaging(files)
    facts = TreeFacts(
        root=tree,
        version=_version(files),
        triton_pin=pin,
        triton_pin_file=pin_file,
        triton_version=_triton_version(files),
        cmake_minimum=_cmake_minimum(files),
        cmake_pin=_cmake_pin(files),
        cxx_standard=_cxx_standard(files),
        gcc_minimum=gcc,
        clang_minimum=clang,
        build_backend=backend,
        has_setup_py=(tree / SETUP_PY).is_file(),
        requires_python=requires_python,
        python_max=python_max,
        rocm_components=_rocm_components(files),
        rocm_minimum=_rocm_minimum(files),
    )
    problems = tuple(
        f"{fact.source}: {fact.detail}"
        for fact in _all_facts(facts)
        if fact.status == MALFORMED
    )
    said = {p.split(": ", 1)[0] for p in problems}
    problems += tuple(c for c in files.conflicts() if c.split(": ", 1)[0] not in said)
    return _with_problems(facts, problems)


def _all_facts(facts: TreeFacts) -> tuple[TreeFact[object], ...]:
    return (
        facts.version, facts.triton_pin, facts.triton_pin_file, facts.triton_version,
        facts.cmake_minimum, facts.cmake_pin, facts.cxx_standard, facts.gcc_minimum,
        facts.clang_minimum, facts.build_backend, facts.requires_python, facts.python_max,
        facts.rocm_components, facts.rocm_minimum,
    )


def _with_problems(facts: TreeFacts, problems: tuple[str, ...]) -> TreeFacts:
    from dataclasses import replace

    # The same file can garble several facts (a bad pyproject.toml): say it once.
    return replace(facts, problems=tuple(dict.fromkeys(problems)))


class _Files:
    """Reads the tree's text files once each; a missing file is None, an unreadable one an error."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[str, str | None | OSError | UnicodeDecodeError] = {}

    def text(self, rel: str) -> str | None:
        """The file's text; None when it does not exist; _Unreadable when it cannot be read."""
        if rel not in self._cache:
            path = self.root / rel
            try:
                self._cache[rel] = path.read_text(encoding="utf-8") if path.exists() else None
            except (OSError, UnicodeDecodeError) as exc:
                self._cache[rel] = exc
        value = self._cache[rel]
        if isinstance(value, (OSError, UnicodeDecodeError)):
            reason = value.strerror if isinstance(value, OSError) else "it is not UTF-8 text"
            raise _Unreadable(f"cannot be read ({reason or value})")
        return value

    def exists(self, rel: str) -> bool:
        return (self.root / rel).is_file()

    def conflicts(self) -> tuple[str, ...]:
        """Every file read that holds merge-conflict markers, with the first marker's line."""
        out = []
        for rel, value in self._cache.items():
            if isinstance(value, str):
                found = _CONFLICT.search(value)
                if found:
                    out.append(f"{_tree(rel, _line_of(value, found.start()))}: has unresolved "
                               "merge-conflict markers")
        return tuple(out)


class _Unreadable(Exception):
    pass


def _tree(rel: str, line: int = 0) -> str:
    return f"tree: {rel}:{line}" if line else f"tree: {rel}"


def _unknown(rel: str, what: str) -> TreeFact[T]:
    return TreeFact(value=None, status=UNKNOWN, source=_tree(rel), detail=f"no {rel} ({what})")


def _absent(rel: str, detail: str) -> TreeFact[T]:
    return TreeFact(value=None, status=ABSENT, source=_tree(rel), detail=detail)


def _malformed(rel: str, detail: str, line: int = 0) -> TreeFact[T]:
    return TreeFact(value=None, status=MALFORMED, source=_tree(rel, line), detail=detail)


def _found(value: T, rel: str, line: int = 0, detail: str = "") -> TreeFact[T]:
    return TreeFact(value=value, status=FOUND, source=_tree(rel, line), detail=detail)


def _read(files: _Files, rel: str) -> tuple[str | None, str]:
    """(text or None when missing, "") or (None, why the file cannot be read)."""
    try:
        return files.text(rel), ""
    except _Unreadable as exc:
        return None, str(exc)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


# ------------------------------------------------------------------------- version and Triton

_VERSION_TXT = re.compile(r"^\d+\.\d+(?:\.\d+)?(?:(?:a|b|rc)\d+)?(?:\+[0-9A-Za-z.]+)?$")
_CONFLICT = re.compile(r"^(?:<<<<<<<|>>>>>>>)(?: |$)|^=======$", re.MULTILINE)
_FULL_SHA = re.compile(r"^[0-9a-f]{40}$")
_DOTTED = re.compile(r"^\d+(?:\.\d+){0,3}$")


def _single_line(text: str) -> str | None:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if len(lines) == 1 else None


def _one_line_file(files: _Files, rel: str, pattern: re.Pattern[str], *, unknown: str,
                   expected: str) -> TreeFact[str]:
    """A file that holds one value on one line (version.txt, triton_version.txt)."""
    text, bad = _read(files, rel)
    if bad:
        return _malformed(rel, bad)
    if text is None:
        return _unknown(rel, unknown)
    conflict = _CONFLICT.search(text)
    if conflict:
        return _malformed(rel, "has unresolved merge-conflict markers (a `git merge`, `git "
                          "pull` or `git stash pop` stopped halfway)",
                          _line_of(text, conflict.start()))
    value = _single_line(text)
    if value is None or not pattern.match(value):
        return _malformed(rel, f"holds {text.strip()[:60]!r}, not {expected}")
    return _found(value, rel, 1)


def _version(files: _Files) -> TreeFact[str]:
    return _one_line_file(files, VERSION_FILE, _VERSION_TXT,
                          unknown="the tree does not say its version",
                          expected="a version such as 2.9.1 or 2.10.0a0")


def _triton_pin(files: _Files) -> tuple[TreeFact[str], TreeFact[str]]:
    for rel in TRITON_PIN_FILES:
        if not files.exists(rel):
            continue
        text, bad = _read(files, rel)
        if bad:
            return _malformed(rel, bad), _found(rel, rel)
        value = _single_line(text or "")
        if value is None or not _FULL_SHA.match(value):
            shown = (text or "").strip()[:60]
            return (_malformed(rel, f"holds {shown!r}, not one full 40-hex commit"),
                    _found(rel, rel))
        return _found(value, rel, 1), _found(rel, rel)
    where = f"{PIN_DIR}/"
    missing: TreeFact[str] = TreeFact(
        value=None, status=UNKNOWN, source=_tree(where),
        detail="neither triton-rocm.txt nor triton.txt is in the tree")
    return missing, missing


def _triton_version(files: _Files) -> TreeFact[str]:
    return _one_line_file(files, TRITON_VERSION_FILE, _DOTTED,
                          unknown="the tree does not say its Triton version",
                          expected="a version such as 3.5.0")


# ------------------------------------------------------------------------------------- CMake

_CMAKE_MIN = re.compile(r"\bcmake_minimum_required\s*\(([^)]*)\)", re.IGNORECASE)
_CXX_STD = re.compile(r"\bset\s*\(\s*CMAKE_CXX_STANDARD\s+([^\s)]+)", re.IGNORECASE)
_IF = re.compile(r"\bif\s*\(", re.IGNORECASE)
_BLOCK_END = re.compile(r"\b(?:endif|else|elseif)\s*\(", re.IGNORECASE)
_VERSION_LESS = re.compile(r'\bCMAKE_CXX_COMPILER_VERSION\s+VERSION_LESS\s+"?([0-9][0-9.]*)"?')
_GNU = re.compile(r'\bCMAKE_COMPILER_IS_GNUCXX\b|\bCMAKE_CXX_COMPILER_ID\s+STREQUAL\s+"GNU"')
_CLANG = re.compile(r'\bCMAKE_CXX_COMPILER_ID\s+STREQUAL\s+"Clang"')


def _strip_cmake_comments(text: str) -> str:
    """Blank out `# ...` comments (outside double quotes), keeping offsets and line numbers."""
    out: list[str] = []
    for line in text.split("\n"):
        quoted = False
        cut = len(line)
        for index, char in enumerate(line):
            if char == '"' and (index == 0 or line[index - 1] != "\\"):
                quoted = not quoted
            elif char == "#" and not quoted:
                cut = index
                break
        out.append(line[:cut] + " " * (len(line) - cut))
    return "\n".join(out)


def _cmake_text(files: _Files) -> tuple[str | None, str]:
    """CMakeLists.txt without comments (None when missing), or why it cannot be read."""
    text, bad = _read(files, CMAKELISTS)
    if bad or text is None:
        return None, bad
    return _strip_cmake_comments(text), ""


def _cmake_minimum(files: _Files) -> TreeFact[str]:
    text, bad = _cmake_text(files)
    if bad:
        return _malformed(CMAKELISTS, bad)
    if text is None:
        return _unknown(CMAKELISTS, "the tree does not say its CMake floor")
    match = _CMAKE_MIN.search(text)
    if match is None:
        return _absent(CMAKELISTS, "no cmake_minimum_required()")
    line = _line_of(text, match.start())
    args = match.group(1).split()
    if len(args) < 2 or args[0].upper() != "VERSION":
        return _malformed(CMAKELISTS, f"cmake_minimum_required({match.group(1).strip()}) names "
                          "no VERSION", line)
    low = args[1].split("...")[0]
    if not _DOTTED.match(low):
        return _malformed(CMAKELISTS, f"cmake_minimum_required(VERSION {args[1]}) is not a "
                          "version", line)
    return _found(low, CMAKELISTS, line)


def _cxx_standard(files: _Files) -> TreeFact[int]:
    text, bad = _cmake_text(files)
    if bad:
        return _malformed(CMAKELISTS, bad)
    if text is None:
        return _unknown(CMAKELISTS, "the tree does not say its C++ standard")
    match = _CXX_STD.search(text)
    if match is None:
        return _absent(CMAKELISTS, "no set(CMAKE_CXX_STANDARD ...)")
    line = _line_of(text, match.start())
    value = match.group(1).strip('"')
    if not value.isdigit():
        return _malformed(CMAKELISTS, f"CMAKE_CXX_STANDARD is set to {value!r}, not a number "
                          "such as 17 or 20", line)
    return _found(int(value), CMAKELISTS, line)


def _if_blocks(text: str) -> list[tuple[int, str, str]]:
    """(offset, condition, body up to the next else/elseif/endif) of each if() in `text`."""
    blocks = []
    for match in _IF.finditer(text):
        depth, index = 1, match.end()
        while index < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[index], 0)
            index += 1
        condition = text[match.end():index - 1]
        end = _BLOCK_END.search(text, index)
        body = text[index:end.start() if end else len(text)]
        blocks.append((match.start(), " ".join(condition.split()), body))
    return blocks


def _compiler_minimums(files: _Files) -> tuple[TreeFact[str], TreeFact[str]]:
    text, bad = _cmake_text(files)
    if bad:
        return _malformed(CMAKELISTS, bad), _malformed(CMAKELISTS, bad)
    if text is None:
        return (_unknown(CMAKELISTS, "the tree does not say its GCC minimum"),
                _unknown(CMAKELISTS, "the tree does not say its Clang minimum"))
    gcc: TreeFact[str] | None = None
    clang: TreeFact[str] | None = None
    for offset, condition, body in _if_blocks(text):
        less = _VERSION_LESS.search(condition)
        if less is None or "FATAL_ERROR" not in body.upper():
            continue
        fact = _found(less.group(1), CMAKELISTS, _line_of(text, offset))
        if gcc is None and _GNU.search(condition):
            gcc = fact
        elif clang is None and _CLANG.search(condition):
            clang = fact
    return (gcc or _absent(CMAKELISTS, "no GCC version check that stops the configure"),
            clang or _absent(CMAKELISTS, "no Clang version check that stops the configure"))


# ------------------------------------------------------------------------ Python packaging

_REQ_CMAKE = re.compile(r"^\s*cmake\s*((?:[<>=!~]=?\s*[0-9][0-9.*]*\s*,?\s*)*)\s*(?:[;#].*)?$",
                        re.IGNORECASE)
_PY_CLASSIFIER = re.compile(r"Programming Language :: Python :: 3\.(\d+)$")
_SETUP_REQUIRES = re.compile(r"""python_requires\s*=\s*(f?)(["'])(.*?)\2""")
_SETUP_MIN = re.compile(r"^python_min_version\s*=\s*(\([^)]*\))", re.MULTILINE)
_SETUP_RANGE_MAX = re.compile(
    r"^[ \t]*version_range_max\s*=\s*max\(\s*sys\.version_info\[1\]\s*,\s*(\d+)\s*\)\s*\+\s*1",
    re.MULTILINE)


def _cmake_pin(files: _Files) -> TreeFact[str]:
    text, bad = _read(files, REQUIREMENTS_BUILD)
    if bad:
        return _malformed(REQUIREMENTS_BUILD, bad)
    if text is None:
        return _pyproject_cmake_pin(files)
    for number, line in enumerate(text.splitlines(), start=1):
        if not re.match(r"^\s*cmake\b", line, re.IGNORECASE):
            continue
        match = _REQ_CMAKE.match(line)
        if match is None:
            return _malformed(REQUIREMENTS_BUILD, f"line {number} {line.strip()!r} is not a "
                              "requirement such as cmake>=3.27", number)
        spec = "".join(match.group(1).split()).rstrip(",")
        if not spec:
            return _absent(REQUIREMENTS_BUILD, f"cmake is required without a version (line "
                           f"{number})")
        return _found(spec, REQUIREMENTS_BUILD, number)
    return _absent(REQUIREMENTS_BUILD, "cmake is not listed")


def _pyproject_cmake_pin(files: _Files) -> TreeFact[str]:
    """A tree without requirements-build.txt: the cmake entry of [build-system] requires."""
    doc, bad = _pyproject(files)
    if bad:
        return _malformed(PYPROJECT, bad)
    if doc is None:
        return _unknown(REQUIREMENTS_BUILD, "nor a pyproject.toml: no CMake pin")
    requires = doc.get("build-system", {}).get("requires", [])
    for entry in requires if isinstance(requires, list) else []:
        match = _REQ_CMAKE.match(str(entry))
        if match is not None:
            spec = "".join(match.group(1).split()).rstrip(",")
            where = f"{PYPROJECT} [build-system] requires"
            if not spec:
                return TreeFact(value=None, status=ABSENT, source=_tree(where),
                                detail="cmake is required without a version")
            return TreeFact(value=spec, status=FOUND, source=_tree(where))
    return _absent(PYPROJECT, "no requirements-build.txt, and [build-system] requires no cmake")


def _pyproject(files: _Files) -> tuple[dict[str, Any] | None, str]:
    """pyproject.toml as a dict (None when missing), or why it cannot be read."""
    text, bad = _read(files, PYPROJECT)
    if bad or text is None:
        return None, bad
    # The parser is loaded when a tree has a pyproject.toml to read, not with this module.
    from rocmforge.knowledge.toml_files import tomllib
    try:
        return tomllib.loads(text), ""
    except tomllib.TOMLDecodeError as exc:
        return None, f"is not valid TOML ({exc})"


def _key_line(text: str, key: str) -> int:
    # [ \t]*, not \s*: \s would cross the newline of a blank line before and count one too few.
    match = re.search(rf"^[ \t]*{re.escape(key)}\s*=", text, re.MULTILINE)
    return _line_of(text, match.start()) if match else 0


def _python_packaging(files: _Files) -> tuple[TreeFact[str], TreeFact[str], TreeFact[str]]:
    doc, bad = _pyproject(files)
    setup, unreadable = _read(files, SETUP_PY)
    setup_bad: TreeFact[str] | None = _malformed(SETUP_PY, unreadable) if unreadable else None
    if bad:
        broken: TreeFact[str] = _malformed(PYPROJECT, bad)
        return broken, broken, broken
    text = files.text(PYPROJECT) if doc is not None else None
    backend: TreeFact[str]
    if doc is not None and text is not None:
        system = doc.get("build-system")
        if not isinstance(system, dict):
            backend = TreeFact(value=SETUPTOOLS_LEGACY_BACKEND, status=FOUND,
                               source=_tree(PYPROJECT),
                               detail="no [build-system] table: pip's setuptools default")
        elif "build-backend" not in system:
            backend = TreeFact(value=SETUPTOOLS_LEGACY_BACKEND, status=FOUND,
                               source=_tree(PYPROJECT, _key_line(text, "requires")),
                               detail="[build-system] names no build-backend: PEP 517's default")
        elif not isinstance(system["build-backend"], str) or not system["build-backend"]:
            backend = _malformed(PYPROJECT, "[build-system] build-backend is not a string")
        else:
            backend = _found(system["build-backend"], PYPROJECT,
                             _key_line(text, "build-backend"))
    elif setup_bad is not None:
        backend = setup_bad
    elif setup is not None:
        backend = TreeFact(value=SETUPTOOLS_LEGACY_BACKEND, status=FOUND, source=_tree(SETUP_PY),
                           detail="setup.py without pyproject.toml: setuptools' legacy backend")
    else:
        backend = _unknown(PYPROJECT, "nor a setup.py: the tree does not say how it is built")

    requires, python_max = _python_range(doc, text, setup, setup_bad)
    return backend, requires, python_max


def _python_range(
    doc: dict[str, Any] | None,
    text: str | None,
    setup: str | None,
    setup_bad: TreeFact[str] | None,
) -> tuple[TreeFact[str], TreeFact[str]]:
    project = doc.get("project") if doc is not None else None
    requires: TreeFact[str] | None = None
    python_max: TreeFact[str] | None = None
    if isinstance(project, dict) and text is not None:
        where = f"{PYPROJECT} [project]"
        value = project.get("requires-python")
        if value is not None:
            requires = (_specifier_fact(value, PYPROJECT, _key_line(text, "requires-python"))
                        if isinstance(value, str)
                        else _malformed(PYPROJECT, "[project] requires-python is not a string"))
        classifiers = project.get("classifiers", [])
        minors = [int(m.group(1)) for c in classifiers if isinstance(c, str)
                  for m in [_PY_CLASSIFIER.search(c)] if m] if isinstance(classifiers, list) else []
        if minors:
            python_max = TreeFact(value=f"3.{max(minors)}", status=FOUND,
                                  source=_tree(f"{where} classifiers"))
    if setup_bad is not None and (requires is None or python_max is None):
        return requires or setup_bad, python_max or setup_bad
    if setup is not None:
        requires = requires or _setup_requires(setup)
        python_max = python_max or _setup_python_max(setup)
    if requires is None:
        requires = (_absent(PYPROJECT, "no requires-python in [project] and no setup.py")
                    if doc is not None else _unknown(SETUP_PY, "nor a pyproject.toml [project]"))
    if python_max is None:
        python_max = (_absent(PYPROJECT if doc is not None else SETUP_PY,
                              "no \"Programming Language :: Python :: 3.N\" classifier")
                      if doc is not None or setup is not None
                      else _unknown(SETUP_PY, "nor a pyproject.toml [project]"))
    return requires, python_max


def _specifier_fact(value: str, rel: str, line: int) -> TreeFact[str]:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        SpecifierSet(value)
    except InvalidSpecifier:
        return _malformed(rel, f"requires-python {value!r} is not a PEP 440 specifier", line)
    return _found(value.replace(" ", ""), rel, line)


def _setup_requires(setup: str) -> TreeFact[str]:
    match = _SETUP_REQUIRES.search(setup)
    if match is None:
        return _absent(SETUP_PY, "setup() has no python_requires")
    line = _line_of(setup, match.start())
    literal = match.group(3)
    if not match.group(1):
        return _specifier_fact(literal, SETUP_PY, line)
    # PyTorch's form: python_requires=f">={python_min_version_str}" with
    # python_min_version = (3, 8, 0) earlier in the file.
    minimum = _SETUP_MIN.search(setup)
    if literal != ">={python_min_version_str}" or minimum is None:
        return _malformed(SETUP_PY, f"python_requires=f{literal!r} is not a form the kit reads",
                          line)
    try:
        parts = ast.literal_eval(minimum.group(1))
    except (ValueError, SyntaxError):
        parts = None
    if not (isinstance(parts, tuple) and len(parts) >= 2
            and all(isinstance(p, int) for p in parts)):
        return _malformed(SETUP_PY, f"python_min_version = {minimum.group(1)} is not a tuple "
                          "of numbers", _line_of(setup, minimum.start()))
    shown = ".".join(str(p) for p in (parts if parts[2:] and parts[2] else parts[:2]))
    return _found(f">={shown}", SETUP_PY, _line_of(setup, minimum.start()))


def _setup_python_max(setup: str) -> TreeFact[str]:
    listed = [int(m.group(1)) for m in re.finditer(
        r"""["']Programming Language :: Python :: 3\.(\d+)["']""", setup)]
    ranged = _SETUP_RANGE_MAX.search(setup)
    if ranged is not None:
        # classifiers 3.{min} .. 3.{max(running minor, N)}: N is the newest the tree names.
        listed.append(int(ranged.group(1)))
        return _found(f"3.{max(listed)}", SETUP_PY, _line_of(setup, ranged.start()))
    if listed:
        return _found(f"3.{max(listed)}", SETUP_PY)
    return _absent(SETUP_PY, "no \"Programming Language :: Python :: 3.N\" classifier")


# -------------------------------------------------------------------------------- LoadHIP

_HIP_TOKENS = re.compile(
    r"\b(?P<cmd>if|elseif|else|endif|find_package_and_print_version|find_package)\s*\(",
    re.IGNORECASE)


# find_package(<name> <version> ...): the version argument (major[.minor[.patch[.tweak]]]).
_VERSION_ARG = re.compile(r"^[0-9]+(?:\.[0-9]+){0,3}$")


def _rocm_components(files: _Files) -> TreeFact[tuple[RocmComponent, ...]]:
    raw, bad = _read(files, LOADHIP)
    if bad:
        return _malformed(LOADHIP, bad)
    if raw is None:
        return _unknown(LOADHIP, "the tree does not say which ROCm components it needs")
    text = _strip_cmake_comments(raw)
    stack: list[str] = []
    # The conditions of the if()/elseif() branches of each open block so far: an elseif or
    # else holds only where none of them did.
    taken: list[list[str]] = []
    found: dict[str, RocmComponent] = {}
    conditions: dict[str, list[str]] = {}
    for match in _HIP_TOKENS.finditer(text):
        depth, index = 1, match.end()
        while index < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[index], 0)
            index += 1
        args = " ".join(text[match.end():index - 1].split())
        cmd = match.group("cmd").lower()
        if cmd == "if":
            stack.append(args)
            taken.append([args])
        elif cmd in ("elseif", "else"):
            if not stack:
                return _malformed(LOADHIP, f"{cmd}() without if()", _line_of(text, match.start()))
            stack.pop()
            earlier = (" OR ".join(f"({c})" for c in taken[-1]) if len(taken[-1]) > 1
                       else taken[-1][0])
            here = f"NOT ({earlier})"
            if cmd == "elseif" and args:
                here += f" AND ({args})"
                taken[-1].append(args)
            stack.append(here)
        elif cmd == "endif":
            if not stack:
                return _malformed(LOADHIP, "endif() without if()", _line_of(text, match.start()))
            stack.pop()
            taken.pop()
        else:
            words = args.split()
            if not words or not re.match(r"^[A-Za-z][A-Za-z0-9_.\-]*$", words[0]):
                continue  # the macro's own find_package("${PACKAGE_NAME}" ...)
            name = words[0]
            required = "REQUIRED" in (w.upper() for w in words[1:])
            version = words[1] if len(words) > 1 and _VERSION_ARG.match(words[1]) else ""
            module = "MODULE" in (w.upper() for w in words[1:])
            known = found.get(name)
            # Looked for in several branches (if/else): only the conditions they share hold.
            shared = stack if known is None else _common_prefix(conditions[name], stack)
            conditions[name] = list(shared)
            found[name] = RocmComponent(
                name=name, required=required or (known is not None and known.required),
                line=known.line if known is not None else _line_of(text, match.start()),
                condition=" AND ".join(shared),
                version=version or (known.version if known is not None else ""),
                module=module if known is None else known.module and module)
    if stack:
        return _malformed(LOADHIP, f"{len(stack)} if() block(s) never closed with endif()")
    if not found:
        return _absent(LOADHIP, "no find_package() call")
    # A package whose <name>_FOUND gates the others (every component sits inside
    # if(HIP_FOUND)) is required for a ROCm build, REQUIRED or not: without it no component
    # is even looked for and the configure quietly turns USE_ROCM off.
    for name, component in list(found.items()):
        gate = re.compile(rf"\b{re.escape(name)}_FOUND\b", re.IGNORECASE)
        if not component.required and any(gate.search(other.condition)
                                          for other in found.values()):
            found[name] = RocmComponent(name=name, required=True, line=component.line,
                                        condition=component.condition,
                                        version=component.version, module=component.module)
    first = min(c.line for c in found.values())
    return _found(tuple(found.values()), LOADHIP, first)


# if(ROCM_VERSION_DEV_INT LESS 71400) message(FATAL_ERROR ...)  (major*10000 + minor*100 + patch)
# if(ROCM_VERSION_DEV VERSION_LESS "6.0") message(FATAL_ERROR ...)
_ROCM_FLOOR = re.compile(
    r"\bif\s*\(\s*ROCM_VERSION_DEV(?P<int>_INT)?\s+(?:VERSION_)?LESS\s+\"?(?P<v>[0-9.]+)\"?\s*\)"
    r"\s*message\s*\(\s*FATAL_ERROR", re.IGNORECASE)


def _rocm_minimum(files: _Files) -> TreeFact[str]:
    """The oldest ROCm LoadHIP.cmake accepts: the version of an `if(ROCM_VERSION_DEV... LESS
    ...)` whose body is a FATAL_ERROR (the ROCm version it reads is rocm-core's rocm_version.h,
    not HIP's)."""
    raw, bad = _read(files, LOADHIP)
    if bad:
        return _malformed(LOADHIP, bad)
    if raw is None:
        return _unknown(LOADHIP, "the tree does not say which ROCm it needs")
    text = _strip_cmake_comments(raw)
    found = _ROCM_FLOOR.search(text)
    if found is None:
        return _absent(LOADHIP, "no FATAL_ERROR below a ROCm version")
    value = found.group("v")
    if found.group("int"):
        if not value.isdigit():
            return _malformed(LOADHIP, f"ROCM_VERSION_DEV_INT compared with {value}",
                              _line_of(text, found.start()))
        number = int(value)
        major, minor, patch = number // 10000, number // 100 % 100, number % 100
        value = f"{major}.{minor}" + (f".{patch}" if patch else "")
    return _found(value, LOADHIP, _line_of(text, found.start()))


def _common_prefix(first: list[str], second: list[str]) -> list[str]:
    shared: list[str] = []
    for left, right in zip(first, second, strict=False):
        if left != right:
            break
        shared.append(left)
    return shared
