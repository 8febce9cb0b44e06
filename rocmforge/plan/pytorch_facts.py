"""The PyTorch facts a build uses, each with where it came from: the tree first, the table second.

Owns: merging what a checkout states (`rocmforge.probes.tree.TreeFacts`) with the row of
config/pytorch.toml (`PytorchRelease`) into one frozen `PytorchFacts`: every fact has a value
and a source ("tree: CMakeLists.txt:1", "ref: v2.9.1", "table: config/pytorch.toml 2.12",
"default: ..."), the tree wins wherever it answers, and every place where table and tree differ
is listed as a `Disagreement`. Also `facts_for()`, which picks the table row from the tree's own
version.txt. Must not: read files, run anything, or judge the machine (doctor and
compiler_policy use these facts; they do not live here).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from packaging.version import InvalidVersion, Version

from rocmforge.errors import UsageError
from rocmforge.knowledge.releases import PytorchRelease, pytorch_release_for
from rocmforge.probes.tree import ABSENT, FOUND, MALFORMED, SCIKIT_BUILD_CORE_BACKEND

if TYPE_CHECKING:
    from rocmforge.probes.tree import RocmComponent, TreeFact, TreeFacts

SCHEMA: Final = "rocmforge.pytorch_facts/1"
TABLE_FILE: Final = "config/pytorch.toml"
SETUPTOOLS_BACKEND: Final = "setuptools.build_meta"

TREE: Final = "tree"
REF: Final = "ref"
TABLE: Final = "table"
DEFAULT: Final = "default"
UNKNOWN: Final = "unknown"

FACT_NAMES: Final = (
    "version", "triton_pin", "triton_pin_file", "triton_version", "cmake_min", "cmake_pin",
    "cxx_std", "gcc_min", "clang_min", "build_backend", "build_style", "python",
    "rocm_components", "rocm_min",
)
"""Every fact, in the order reports show them."""


@dataclass(frozen=True, kw_only=True)
class Fact:
    """One fact as the build uses it. `value` "" with origin "tree" means the tree states there
    is none (no Clang check, an unpinned cmake); with origin "unknown" nobody says."""

    name: str
    value: str
    origin: str
    """"tree", "ref" (a release tag's own name), "table", "default" or "unknown"."""
    source: str
    table_value: str = ""
    """What the table row says, shown beside the fact ("" when the row has no such fact)."""
    table_source: str = ""
    tree_problem: str = ""
    """Why the tree's own file could not be used (a MALFORMED fact), "" otherwise."""

    def as_dict(self) -> dict[str, str]:
        return {"value": self.value, "origin": self.origin, "source": self.source,
                "table_value": self.table_value, "table_source": self.table_source,
                "tree_problem": self.tree_problem}


@dataclass(frozen=True, kw_only=True)
class Disagreement:
    """A fact where the table row and the tree say different things (the tree wins)."""

    fact: str
    tree_value: str
    tree_source: str
    table_value: str
    table_source: str

    def sentence(self) -> str:
        shown = self.tree_value or "none"
        return (f"{self.fact}: the tree says {shown} ({self.tree_source}), the table says "
                f"{self.table_value} ({self.table_source}); the tree's value is used")

    def as_dict(self) -> dict[str, str]:
        return {"fact": self.fact, "tree_value": self.tree_value, "tree_source": self.tree_source,
                "table_value": self.table_value, "table_source": self.table_source}


@dataclass(frozen=True, kw_only=True)
class PytorchFacts:
    """What the kit knows about one PyTorch, fact by fact, and where each came from."""

    facts: Mapping[str, Fact]
    """By name, in FACT_NAMES order."""
    table_row: str
    """The config/pytorch.toml row used ("2.12"), "" when none applies."""
    row_is_estimate: bool
    """The row was mapped, not named: main, a commit, a branch, or a version newer than the
    table (PytorchRelease.tracks_main)."""
    tree_root: str
    """The checkout the tree facts were read from, "" before there is one."""
    rocm_components: tuple[RocmComponent, ...]
    disagreements: tuple[Disagreement, ...]
    problems: tuple[str, ...]
    """Tree files that are there but could not be understood, and similar notes."""

    def __getitem__(self, name: str) -> Fact:
        return self.facts[name]

    @property
    def version(self) -> str:
        """The PyTorch version ("2.9.1", "2.10.0a0"), "" when only a checkout can tell."""
        return self.facts["version"].value

    @property
    def cmake_minimum(self) -> str:
        return self.facts["cmake_min"].value

    @property
    def rocm_minimum(self) -> str:
        """The oldest ROCm the tree's LoadHIP.cmake accepts ("7.14"); "" when it has no such
        check or nobody read one (facts["rocm_min"].origin says which)."""
        return self.facts["rocm_min"].value

    @property
    def cxx_standard(self) -> int:
        value = self.facts["cxx_std"].value
        return int(value) if value.isdigit() else 0

    @property
    def gcc_minimum(self) -> str:
        """"" when no GCC check applies (or nobody knows: see facts["gcc_min"].origin)."""
        return self.facts["gcc_min"].value

    @property
    def clang_minimum(self) -> int:
        """Major of the Clang floor; 0 when there is no configure-time Clang check."""
        value = self.facts["clang_min"].value
        return int(value.split(".")[0]) if value.split(".")[0].isdigit() else 0

    @property
    def python(self) -> str:
        """Supported interpreters as a PEP 440 specifier set, "" when unknown."""
        return self.facts["python"].value

    @property
    def scikit_build_core(self) -> bool:
        return self.facts["build_backend"].value == SCIKIT_BUILD_CORE_BACKEND

    @property
    def build_style(self) -> str:
        """"setup.py" (python setup.py bdist_wheel) or "build" (python -m build)."""
        return self.facts["build_style"].value

    def as_dict(self) -> dict[str, object]:
        """The versioned JSON document (rocmforge.pytorch_facts/1)."""
        return {
            "schema": SCHEMA,
            "tree": self.tree_root,
            "table_row": self.table_row,
            "row_is_estimate": self.row_is_estimate,
            "facts": {name: fact.as_dict() for name, fact in self.facts.items()},
            "rocm_components": [
                {"name": c.name, "required": c.required, "line": c.line, "condition": c.condition}
                for c in self.rocm_components
            ],
            "disagreements": [d.as_dict() for d in self.disagreements],
            "problems": list(self.problems),
        }


# ------------------------------------------------------------------------------------ merge


def table_source(row: PytorchRelease) -> str:
    """How a fact from this row is cited: "table: config/pytorch.toml 2.12"."""
    estimate = " (estimate: the newest row)" if row.tracks_main else ""
    return f"table: {TABLE_FILE} {row.version}{estimate}"


def pytorch_facts(tree: TreeFacts | None, row: PytorchRelease | None) -> PytorchFacts:
    """Merge a tree's facts (None before the checkout) with a table row (None when no row
    applies): the tree wins wherever it answers; the table fills the rest."""
    builder = _Merge(tree, row)
    facts = {name: getattr(builder, name)() for name in FACT_NAMES}
    problems = list(tree.problems) if tree is not None else []
    return PytorchFacts(
        facts=facts,
        table_row=row.version if row is not None else "",
        row_is_estimate=bool(row is not None and row.tracks_main),
        tree_root=str(tree.root) if tree is not None else "",
        rocm_components=tuple(tree.rocm_components.value or ())
        if tree is not None and tree.rocm_components.status == FOUND else (),
        disagreements=tuple(builder.disagreements),
        problems=tuple(problems + builder.notes),
    )


def facts_for(
    ref: str,
    tree: TreeFacts | None = None,
    directory: str | Path | None = None,
) -> PytorchFacts:
    """The facts of PyTorch at `ref`: the row is chosen by the tree's version.txt when there is
    a tree (whatever the ref is called), else by the ref (a release tag names its row; main, a
    commit or a branch get the newest row as an estimate and no version)."""
    stated = tree.version.value if tree is not None and tree.version.status == FOUND else ""
    try:
        row: PytorchRelease | None = pytorch_release_for(ref, directory, tree_version=stated or "")
    except UsageError as exc:
        if tree is None:
            raise
        merged = pytorch_facts(tree, None)
        return _with_note(merged, f"no table row applies: {exc.what}")
    return pytorch_facts(tree, row)


def _with_note(facts: PytorchFacts, note: str) -> PytorchFacts:
    from dataclasses import replace

    return replace(facts, problems=(*facts.problems, note))


class _Merge:
    """One method per fact name; each returns the Fact and records any disagreement."""

    def __init__(self, tree: TreeFacts | None, row: PytorchRelease | None) -> None:
        self.tree = tree
        self.row = row
        self.table = table_source(row) if row is not None else ""
        self.disagreements: list[Disagreement] = []
        self.notes: list[str] = []

    # -- helpers

    def _pick(
        self,
        name: str,
        fact: TreeFact[object] | None,
        tree_value: str | None,
        table_value: str,
        *,
        same: bool | None = None,
        absent_answers: bool = False,
    ) -> Fact:
        """The tree's value when the tree answers, else the table's; a disagreement when both
        answer and `same` (or plain equality) says no. ABSENT answers ("none": no Clang check,
        an unpinned cmake) only where `absent_answers`; elsewhere (a CMakeLists.txt without
        cmake_minimum_required) the table fills it."""
        problem = fact.detail if fact is not None and fact.status == MALFORMED else ""
        answers = (FOUND, ABSENT) if absent_answers else (FOUND,)
        if fact is not None and fact.status in answers:
            value = tree_value if tree_value is not None and fact.status == FOUND else ""
            source = fact.source if fact.status == FOUND else f"{fact.source} ({fact.detail})"
            if table_value and self.row is not None:
                agree = same if same is not None else value == table_value
                if not agree:
                    self.disagreements.append(Disagreement(
                        fact=name, tree_value=value, tree_source=source,
                        table_value=table_value, table_source=self.table))
            return Fact(name=name, value=value, origin=TREE, source=source,
                        table_value=table_value, table_source=self.table if table_value else "")
        if table_value and self.row is not None:
            return Fact(name=name, value=table_value, origin=TABLE, source=self.table,
                        table_value=table_value, table_source=self.table, tree_problem=problem)
        why = fact.detail if fact is not None else "no checkout has been read"
        return Fact(name=name, value="", origin=UNKNOWN, source=f"unknown: {why}",
                    tree_problem=problem)

    def _tree_fact(self, attr: str) -> TreeFact[object] | None:
        return getattr(self.tree, attr) if self.tree is not None else None

    # -- facts

    def version(self) -> Fact:
        fact = self._tree_fact("version")
        row = self.row
        table_value = row.version if row is not None and not row.tracks_main else ""
        if fact is not None and fact.status == FOUND:
            value = str(fact.value)
            same = _minor(value) == table_value if table_value else True
            return self._pick("version", fact, value, table_value, same=same)
        if row is not None and row.ref_version:
            newer = " (a release newer than the table)" if row.tracks_main else ""
            return Fact(name="version", value=row.ref_version, origin=REF,
                        source=f"ref: {row.requested}{newer}", table_value=table_value,
                        table_source=self.table if table_value else "",
                        tree_problem=fact.detail if fact is not None else "")
        if row is not None and row.tracks_main:
            why = (f"{row.requested!r} names no release: its version.txt decides once it is "
                   "checked out")
            return Fact(name="version", value="", origin=UNKNOWN, source=f"unknown: {why}",
                        table_value="", tree_problem=fact.detail if fact is not None else "")
        return self._pick("version", fact, None, table_value)

    def triton_pin(self) -> Fact:
        fact = self._tree_fact("triton_pin")
        return self._pick("triton_pin", fact, str(fact.value) if fact and fact.value else None, "")

    def triton_pin_file(self) -> Fact:
        fact = self._tree_fact("triton_pin_file")
        files = self.row.triton_pin_files if self.row is not None else ()
        value = str(fact.value) if fact is not None and fact.value else None
        same = value in files if value is not None and files else True
        return self._pick("triton_pin_file", fact, value, files[0] if files else "", same=same)

    def triton_version(self) -> Fact:
        fact = self._tree_fact("triton_version")
        table_value = self.row.triton_version if self.row is not None else ""
        value = str(fact.value) if fact is not None and fact.value else None
        return self._pick("triton_version", fact, value, table_value)

    def cmake_min(self) -> Fact:
        fact = self._tree_fact("cmake_minimum")
        table_value = self.row.cmake_min if self.row is not None else ""
        value = str(fact.value) if fact is not None and fact.value else None
        same = _same_version(value, table_value) if value and table_value else None
        return self._pick("cmake_min", fact, value, table_value, same=same)

    def cmake_pin(self) -> Fact:
        fact = self._tree_fact("cmake_pin")
        value = str(fact.value) if fact is not None and fact.value else None
        return self._pick("cmake_pin", fact, value, "", absent_answers=True)

    def cxx_std(self) -> Fact:
        fact = self._tree_fact("cxx_standard")
        table_value = str(self.row.cxx_std) if self.row is not None else ""
        value = str(fact.value) if fact is not None and fact.value is not None else None
        return self._pick("cxx_std", fact, value, table_value)

    def gcc_min(self) -> Fact:
        fact = self._tree_fact("gcc_minimum")
        table_value = self.row.gcc_min if self.row is not None else ""
        value = str(fact.value) if fact is not None and fact.value else None
        same = _same_version(value or "", table_value) if table_value else None
        return self._pick("gcc_min", fact, value, table_value, same=same, absent_answers=True)

    def clang_min(self) -> Fact:
        fact = self._tree_fact("clang_minimum")
        row = self.row
        table_value = str(row.clang_min) if row is not None and row.clang_min else ""
        value = str(fact.value) if fact is not None and fact.value else None
        # The table writes "no check" as 0; the tree states it as ABSENT (value "").
        if fact is not None and fact.status in (FOUND, ABSENT) and row is not None \
                and not row.clang_min:
            tree_has = fact.status == FOUND
            if tree_has:
                self.disagreements.append(Disagreement(
                    fact="clang_min", tree_value=value or "", tree_source=fact.source,
                    table_value="none", table_source=self.table))
            return Fact(name="clang_min", value=value or "", origin=TREE,
                        source=fact.source if tree_has else f"{fact.source} ({fact.detail})",
                        table_value="none", table_source=self.table)
        same = _same_version(value or "", table_value) if table_value else None
        return self._pick("clang_min", fact, value, table_value, same=same, absent_answers=True)

    def build_backend(self) -> Fact:
        fact = self._tree_fact("build_backend")
        row = self.row
        table_value = ((SCIKIT_BUILD_CORE_BACKEND if row.scikit_build_core else SETUPTOOLS_BACKEND)
                       if row is not None else "")
        value = str(fact.value) if fact is not None and fact.value else None
        same = ((value == SCIKIT_BUILD_CORE_BACKEND) == (table_value == SCIKIT_BUILD_CORE_BACKEND)
                if value and table_value else None)
        return self._pick("build_backend", fact, value, table_value, same=same)

    def build_style(self) -> Fact:
        row = self.row
        table_value = row.build_style if row is not None else ""
        tree = self.tree
        if tree is not None and tree.build_backend.status == FOUND:
            only_build = (tree.build_backend.value == SCIKIT_BUILD_CORE_BACKEND
                          or not tree.has_setup_py)
            if only_build:
                why = ("scikit-build-core backend" if tree.build_backend.value ==
                       SCIKIT_BUILD_CORE_BACKEND else "no setup.py")
                source = f"tree: {why}: only python -m build can build it"
                if table_value and table_value != "build":
                    self.disagreements.append(Disagreement(
                        fact="build_style", tree_value="build", tree_source=source,
                        table_value=table_value, table_source=self.table))
                return Fact(name="build_style", value="build", origin=TREE, source=source,
                            table_value=table_value,
                            table_source=self.table if table_value else "")
        if table_value:
            return Fact(name="build_style", value=table_value, origin=TABLE, source=self.table,
                        table_value=table_value, table_source=self.table)
        return Fact(name="build_style", value="build", origin=DEFAULT,
                    source="default: python -m build works with every build backend")

    def python(self) -> Fact:
        tree = self.tree
        table_value = self.row.python if self.row is not None else ""
        if tree is not None and tree.requires_python.status == FOUND:
            value = str(tree.requires_python.value)
            source = tree.requires_python.source
            if tree.python_max.status == FOUND and tree.python_max.value:
                major, minor = str(tree.python_max.value).split(".")[:2]
                value = f"{value},<{major}.{int(minor) + 1}"
                source = f"{source} + {tree.python_max.source}"
            same = _same_python(value, table_value) if table_value else True
            if table_value and self.row is not None and not same:
                self.disagreements.append(Disagreement(
                    fact="python", tree_value=value, tree_source=source,
                    table_value=table_value, table_source=self.table))
            return Fact(name="python", value=value, origin=TREE, source=source,
                        table_value=table_value, table_source=self.table if table_value else "")
        fact = self._tree_fact("requires_python")
        return self._pick("python", fact, None, table_value)

    def rocm_components(self) -> Fact:
        fact = self._tree_fact("rocm_components")
        value = None
        if fact is not None and fact.status == FOUND and isinstance(fact.value, tuple):
            value = " ".join(
                f"{c.name}{'' if c.required else '(optional)'}" for c in fact.value)
        return self._pick("rocm_components", fact, value, "")

    def rocm_min(self) -> Fact:
        """LoadHIP.cmake's own ROCm floor (a FATAL_ERROR below it); the table has no such fact:
        the ROCm releases it lists are the ones wheels are built for, not the oldest that
        configures."""
        fact = self._tree_fact("rocm_minimum")
        value = str(fact.value) if fact is not None and fact.value else None
        return self._pick("rocm_min", fact, value, "", absent_answers=True)


def _minor(version: str) -> str:
    parts = version.split(".")
    return f"{parts[0]}.{''.join(ch for ch in parts[1] if ch.isdigit())}" if len(parts) > 1 \
        else version


def _same_version(left: str, right: str) -> bool:
    try:
        return Version(left) == Version(right)
    except InvalidVersion:
        return left == right


def _bounds(spec: str) -> dict[str, Version]:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        specs = SpecifierSet(spec)
    except InvalidSpecifier:
        return {}
    found: dict[str, Version] = {}
    for item in specs:
        try:
            found[item.operator] = Version(item.version)
        except InvalidVersion:
            continue
    return found


def _same_python(tree_spec: str, table_spec: str) -> bool:
    """Same lower bound, and the same upper bound where both state one."""
    tree, table = _bounds(tree_spec), _bounds(table_spec)
    return all(tree[op] == table[op] for op in (">=", "<") if op in tree and op in table)


def effective_release(facts: PytorchFacts, row: PytorchRelease) -> PytorchRelease:
    """The table row with every fact the tree states put in its place: what doctor, the
    compiler policy and the planner judge by. Without a tree it is the row itself (an estimate
    for a branch or commit)."""
    from dataclasses import replace

    if not facts.tree_root:
        return row
    changes: dict[str, object] = {
        "build_style": facts.build_style or row.build_style,
        "scikit_build_core": facts.scikit_build_core,
        "ref_version": facts.version or row.ref_version,
    }
    if facts.python:
        changes["python"] = facts.python
    if facts.cxx_standard:
        changes["cxx_std"] = facts.cxx_standard
    if facts.cmake_minimum:
        changes["cmake_min"] = facts.cmake_minimum
    if facts["gcc_min"].origin == TREE:
        changes["gcc_min"] = facts.gcc_minimum
    if facts["clang_min"].origin == TREE:
        changes["clang_min"] = facts.clang_minimum
    if facts["triton_version"].origin == TREE:
        changes["triton_version"] = facts["triton_version"].value
    if facts["rocm_min"].origin == TREE:
        changes["rocm_min"] = facts.rocm_minimum
        changes["rocm_min_source"] = facts["rocm_min"].source
    return replace(row, **changes)  # type: ignore[arg-type]
