"""The package's imports run one way (docs/architecture.md): a layer imports only layers below
it, at module level and in function bodies alike; only `if TYPE_CHECKING:` imports (types, no
runtime edge) may name a layer above. Read from the source with ast, so a new upward import
fails here with the file and line."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rocmforge"

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
