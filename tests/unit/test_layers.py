"""The package's imports run one way (docs/architecture.md): a layer imports only layers below
it, at module level and in function bodies alike; only `if TYPE_CHECKING:` imports (types, no
runtime edge) may name a layer above. And no circle at any scale: between the modules of one
folder (or anywhere in the package) no chain of imports leads back to where it started, of any
length, counting imports inside function bodies (lazy imports stay allowed for start-up speed,
but they are edges of the graph) and type-only imports (a circle of types is still a circle a
reader has to follow). Read from the source with ast, so a new upward import or a new circle
fails here with the files and lines."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "rocmforge"

# Bottom to top. A module may import its own layer and any lower one.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"errors", "versions", "fsutil", "render", "__init__"}),
    frozenset({"workdir", "process"}),
    frozenset({"knowledge"}),
    frozenset({"inspect", "triage"}),
    frozenset({"probes"}),
    frozenset({"settings"}),
    frozenset({"sources", "toolchain", "verify"}),
    frozenset({"execute"}),
    frozenset({"plan", "steps", "sessions"}),
    frozenset({"tasks"}),
    frozenset({"cli"}),
)
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def _layer(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _runtime_imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            type_only.update(id(n) for n in ast.walk(node))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "rocmforge":
                found += [(node.lineno, alias.name) for alias in node.names]
            elif node.module.startswith("rocmforge."):
                found.append((node.lineno, node.module.split(".")[1]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name.split(".")[1]) for a in node.names
                      if a.name.startswith("rocmforge.")]
    return found


def test_every_module_belongs_to_a_layer() -> None:
    layers = {_layer(p) for p in PACKAGE.rglob("*.py")}
    assert layers <= set(RANK), sorted(layers - set(RANK))


def test_imports_run_one_way() -> None:
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        mine = RANK[_layer(path)]
        for line, target in _runtime_imports(path):
            if target == "__version__":
                continue
            if RANK.get(target, -1) > mine:
                upward.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    assert upward == []


def test_the_top_level_holds_at_most_eight_modules() -> None:
    top = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")
    assert len(top) <= 8, top


def test_the_runner_knows_no_step() -> None:
    """The executor gets its action table from the task; it imports no step and no planner."""
    for path in (PACKAGE / "execute").glob("*.py"):
        targets = {t for _, t in _runtime_imports(path)}
        assert not targets & {"steps", "plan", "tasks"}, path


# --- circles ------------------------------------------------------------------------------------


def _module(path: Path) -> str:
    """rocmforge/plan/doctor.py -> rocmforge.plan.doctor; a package's __init__ is the package."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p): p for p in PACKAGE.rglob("*.py")}


def _imported_modules(path: Path) -> dict[str, int]:
    """Every rocmforge module `path` imports, anywhere in its body (functions, TYPE_CHECKING
    blocks), with the first line that does: `from rocmforge.x import y` names module x.y
    when y is a module, else x itself."""
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES
                     else node.module for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            if name in MODULES and name != _module(path):
                found[name] = min(found.get(name, node.lineno), node.lineno)
    return found


GRAPH = {module: _imported_modules(path) for module, path in MODULES.items()}


def _strongly_connected(graph: dict[str, dict[str, int]]) -> Iterator[list[str]]:
    """Tarjan's components with more than one member (iterative: no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, {})))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    yield sorted(members)


def _circles(graph: dict[str, dict[str, int]], path_of: dict[str, Path]) -> list[str]:
    """Each circle as its members and the import lines that close it, for the failure text."""
    found = []
    for members in _strongly_connected(graph):
        inside = set(members)
        lines = [f"{path_of[m].relative_to(PACKAGE.parent)}:{line} imports {target}"
                 for m in members for target, line in sorted(graph[m].items())
                 if target in inside]
        found.append(" <-> ".join(members) + "\n    " + "\n    ".join(lines))
    return found


def test_the_circle_finder_finds_a_circle_of_any_length() -> None:
    """The checker itself: a chain a -> b -> c -> a is one circle, a tail into it is not in it."""
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}, "e": {}}
    assert list(_strongly_connected(graph)) == [["a", "b", "c"]]
    assert list(_strongly_connected({"a": {"b": 1}, "b": {}})) == []


def test_the_graph_sees_lazy_and_type_only_imports() -> None:
    """The edges this test stands on: a function-body import and a TYPE_CHECKING import count."""
    doctor = GRAPH["rocmforge.plan.doctor"]
    assert "rocmforge.plan.hazard_rows" in doctor  # imported inside _hazard_rows()
    assert "rocmforge.settings" in doctor  # imported under TYPE_CHECKING


def test_imports_are_absolute() -> None:
    """The graph reads `from rocmforge.x import y`; a relative import would be an edge it misses."""
    relative = [f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
                for path in MODULES.values()
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.ImportFrom) and node.level > 0]
    assert relative == []


def test_no_circle_between_the_modules_of_a_folder() -> None:
    """Within each folder (rocmforge/plan/, rocmforge/inspect/, ...), at any length."""
    circles = []
    for folder in sorted({p.parent for p in MODULES.values()}):
        local = {m for m, p in MODULES.items() if p.parent == folder}
        graph = {m: {t: line for t, line in GRAPH[m].items() if t in local} for m in local}
        circles += _circles(graph, MODULES)
    assert circles == [], "\n".join(circles)


def test_no_circle_in_the_package() -> None:
    """Across folders too (layers of the same rank may import each other): no module reaches
    itself again through any chain of imports."""
    circles = _circles(GRAPH, MODULES)
    assert circles == [], "\n".join(circles)


def test_no_circle_between_folders() -> None:
    """The folders' own graph (plan -> steps, steps -> plan would be one circle)."""
    def folder(module: str) -> str:
        return module.split(".")[1] if module.count(".") else module

    graph: dict[str, dict[str, int]] = {}
    for module, targets in GRAPH.items():
        for target, line in targets.items():
            if folder(target) != folder(module):
                graph.setdefault(folder(module), {})[folder(target)] = line
    assert list(_strongly_connected(graph)) == []
