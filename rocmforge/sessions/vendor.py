"""Copying the kit into another repository (`invoke vendor --into DIR`).

Owns: the pure plan of which files go where (`plan_vendor`), and applying it (`apply_vendor`)
without ever overwriting a file the other repo owns. The kit lands under one prefix folder
(default `third_party/rocmforge/`), so it cannot collide with that repo's own `config/` or
`patches/`; two small adapter files at the repo root (`rocm_tasks.py`, `rocm_nox.py`) make the
tasks and sessions reachable. A record of what was copied (`.rocmforge-vendor.json` under the
prefix) lets `--update` show the diff first and leave locally edited files alone.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from rocmforge import __version__
from rocmforge.errors import VENDOR_RECORD, UsageError
from rocmforge.fsutil import write_atomic
from rocmforge.knowledge.toml_files import kit_data_dir

RECORD_NAME = VENDOR_RECORD
RECORD_SCHEMA = "rocmforge.vendor/1"
# What `pip install <kit>` needs (nox's build and verify sessions install the copy): the
# package, its data, pyproject.toml, and setup.py (it packs config/ and patches/ into the wheel).
KIT_PARTS = ("rocmforge", "config", "patches", "pyproject.toml", "setup.py", "README.md")
_SKIP_DIRS = {"__pycache__", ".mypy_cache", ".pytest_cache"}
_SKIP_SUFFIXES = (".pyc", ".pyo")


@dataclass(frozen=True, kw_only=True)
class FileCopy:
    """One file of the vendoring plan. `action`: create, update, same, keep-local, conflict."""

    rel: str  # path relative to the destination repo
    content: bytes
    action: str
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class VendorPlan:
    dest: Path
    prefix: str
    copies: tuple[FileCopy, ...]
    instructions: tuple[str, ...]
    # "rocm." when the tasks are added to their tasks.py as the `rocm` collection (rocm_tasks.py),
    # "" when the kit's tasks.py is the repo's own (`invoke build`).
    task_prefix: str = "rocm."

    def writes(self) -> tuple[FileCopy, ...]:
        return tuple(c for c in self.copies if c.action in ("create", "update"))


def kit_root() -> Path:
    """The folder holding the package, config/ and patches/ (a checkout or a vendored copy)."""
    return Path(__file__).resolve().parents[2]


def kit_files(root: Path) -> dict[str, bytes]:
    """Every file the kit needs, keyed by its path relative to the kit root."""
    files: dict[str, bytes] = {}
    for part in KIT_PARTS:
        path = root / part
        if part in ("config", "patches") and not path.is_dir():
            path = kit_data_dir(part)  # an installed wheel keeps them inside the package
        if path.is_file():
            files[part] = path.read_bytes()
            continue
        if not path.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(
                d
                for d in dirnames
                if d not in _SKIP_DIRS and not d.endswith(".egg-info") and d != "_kit"
            )
            for name in sorted(filenames):
                if name.endswith(_SKIP_SUFFIXES):
                    continue
                full = Path(dirpath) / name
                files[f"{part}/{full.relative_to(path).as_posix()}"] = full.read_bytes()
    return files


def checked_prefix(prefix: str) -> str:
    """The prefix as a clean relative folder ("third_party/rocmforge"); UsageError otherwise.

    The kit must land inside the other repository: an absolute path, an empty one or one with
    `..` would write outside it (or over its root files), so those are refused before any write.
    """
    text = prefix.strip().replace("\\", "/")
    parts = [part for part in PurePosixPath(text).parts if part not in ("", ".")]
    if not text or text.startswith("/") or not parts or ".." in parts:
        raise UsageError(
            f"--prefix {prefix!r} is not a folder inside the repository",
            "the kit is copied under one relative folder of the other repository, never above "
            "it or over its root",
            "pass a relative path without '..', e.g. --prefix third_party/rocmforge",
        )
    return "/".join(parts)


def tasks_adapter(prefix: str) -> str:
    return (
        '"""rocmforge tasks, vendored by `invoke vendor`; adds the kit under '
        f'{prefix}/ to the import path."""\n\n'
        "import sys\n"
        "from pathlib import Path\n\n"
        f"sys.path.insert(0, str(Path(__file__).resolve().parent / {prefix!r}))\n\n"
        "from rocmforge.tasks import mount, ns  # noqa: E402\n\n"
        '__all__ = ["mount", "ns"]\n'
    )


# The line a noxfile needs before `import rocm_nox`: nox does not add the noxfile's folder to
# sys.path, so the adapter beside it is not importable otherwise.
NOXFILE_PATH_LINE = (
    "import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))"
)


def nox_adapter(prefix: str) -> str:
    return (
        '"""rocmforge nox sessions (build, verify), vendored by `invoke vendor`."""\n\n'
        "import sys\n"
        "from pathlib import Path\n\n"
        f"sys.path.insert(0, str(Path(__file__).resolve().parent / {prefix!r}))\n\n"
        "from rocmforge.sessions.definitions import *  # noqa: E402,F401,F403  (the sessions)\n"
    )


# The lines a tasks.py needs at its end to reach the kit as `invoke rocm.<task>`: its own tasks
# stay (rocmforge.tasks.mount keeps an explicit `ns`, or collects its @task functions).
TASKS_LINES = ("import rocm_tasks  # at the end of tasks.py", "ns = rocm_tasks.mount(globals())")


def plan_vendor(
    *,
    dest: Path,
    files: Mapping[str, bytes],
    prefix: str = "third_party/rocmforge",
    update: bool = False,
    record: Mapping[str, str] | None = None,
    existing: Mapping[str, bytes | None],
) -> VendorPlan:
    """Decide, without touching the disk, what vendoring into `dest` would write.

    `existing` maps each destination path to its current bytes (None = absent); `record` is the
    sha256 of each file as last vendored. A file that exists and was not written by us is never
    overwritten; under --update a file whose bytes differ from the record was edited locally and
    is kept.
    """
    prefix = checked_prefix(prefix)
    wanted: dict[str, bytes] = {f"{prefix}/{rel}": data for rel, data in files.items()}
    root_tasks = "tasks.py"
    tasks_name = "rocm_tasks.py" if existing.get(root_tasks) is not None else root_tasks
    wanted[tasks_name] = tasks_adapter(prefix).encode()
    wanted["rocm_nox.py"] = nox_adapter(prefix).encode()
    copies: list[FileCopy] = []
    record = record or {}
    for rel in sorted(wanted):
        data = wanted[rel]
        current = existing.get(rel)
        if current is None:
            copies.append(FileCopy(rel=rel, content=data, action="create"))
        elif current == data:
            copies.append(FileCopy(rel=rel, content=data, action="same"))
        elif update and record.get(rel) == _sha256(current):
            copies.append(FileCopy(rel=rel, content=data, action="update"))
        elif update and rel in record:
            copies.append(
                FileCopy(
                    rel=rel, content=data, action="keep-local", reason="edited since vendoring"
                )
            )
        else:
            copies.append(
                FileCopy(rel=rel, content=data, action="conflict", reason="exists, not ours")
            )
    conflicts = [c for c in copies if c.action == "conflict"]
    if conflicts and not update:
        names = ", ".join(c.rel for c in conflicts[:5])
        more = f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else ""
        raise UsageError(
            f"Vendoring into {dest} would overwrite files that are already there: {names}{more}",
            "the kit never overwrites a file another repository owns",
            "choose another folder with --prefix, or, if these came from an earlier "
            "`invoke vendor`, run it again with --update to see the diff first",
        )
    instructions: list[str] = []
    their_tasks = (existing.get(root_tasks) or b"").decode("utf-8", "replace")
    their_noxfile = (existing.get("noxfile.py") or b"").decode("utf-8", "replace")
    # Lines already in their files (an earlier vendoring, --update) are not asked for again.
    if tasks_name == "rocm_tasks.py" and "rocm_tasks" not in their_tasks:
        # At the end of tasks.py, whether it has an explicit `ns` or only @task functions.
        instructions += list(TASKS_LINES)
    # nox imports the noxfile without putting its folder on sys.path (unlike Invoke with
    # tasks.py), so a bare `import rocm_nox` fails there: the printed lines add the folder first.
    if "rocm_nox" not in their_noxfile:
        instructions += [
            NOXFILE_PATH_LINE + "  # in noxfile.py",
            "import rocm_nox  # noqa: E402,F401  (in noxfile.py: adds build and verify)",
        ]
    return VendorPlan(
        dest=dest, prefix=prefix, copies=tuple(copies), instructions=tuple(instructions),
        task_prefix="rocm." if tasks_name == "rocm_tasks.py" else "",
    )


def summary_rows(plan: VendorPlan) -> list[tuple[str, str, str]]:
    """(action, path, note) per folder of the kit and per adapter file: a vendoring writes
    about a hundred files, and one row per file hides the few that matter (conflicts, kept
    local edits, the adapters). Files that are already the same are left out."""
    groups: dict[tuple[str, str], list[FileCopy]] = {}
    for copy in plan.copies:
        if copy.action == "same":
            continue
        inside = copy.rel[len(plan.prefix) + 1:] if copy.rel.startswith(plan.prefix + "/") \
            else ""
        head = inside.split("/", 1)[0] if "/" in inside else ""
        key = (copy.action, f"{plan.prefix}/{head}/" if head else copy.rel)
        groups.setdefault(key, []).append(copy)
    rows = []
    for (action, path), copies in groups.items():
        if action in ("conflict", "keep-local") or len(copies) == 1:
            rows += [(c.action, c.rel, c.reason) for c in copies]
        else:
            rows.append((action, path, f"{len(copies)} files"))
    return rows


def kit_requirements(files: Mapping[str, bytes]) -> tuple[str, ...]:
    """The kit's runtime dependencies, from the pyproject.toml being copied."""
    from rocmforge.knowledge.toml_files import tomllib

    data = files.get("pyproject.toml")
    if data is None:
        return ()
    try:
        project = tomllib.loads(data.decode("utf-8")).get("project", {})
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ()
    return tuple(str(r) for r in project.get("dependencies", []))


def setup_hints(plan: VendorPlan, files: Mapping[str, bytes]) -> tuple[tuple[str, str], ...]:
    """What the other repository needs besides the copied files, each as (what, the command):
    the kit's dependencies in the environment that runs `invoke rocm.*` (nox's sessions install
    them themselves), and its work dir (a PyTorch clone and a venv) kept out of git. The
    command is one line to paste whole."""
    hints = []
    requirements = kit_requirements(files)
    if requirements:
        hints.append((f"install the kit's dependencies where you run `invoke {plan.task_prefix}*`",
                      " ".join(["python -m pip install", *map(_sh_word, requirements)])))
    if not _ignores_work_dir(plan.dest / ".gitignore"):
        hints.append(("keep the work dir (a PyTorch clone, a venv, wheels) out of git",
                      "echo '.rocmforge/' >> .gitignore"))
    return tuple(hints)


def _sh_word(word: str) -> str:
    """`word` quoted for a POSIX shell, in double quotes where that needs no escapes (a
    requirement's marker holds single quotes: 'CPython' reads better than '"'"'CPython'"'"')."""
    import re
    import shlex

    if re.fullmatch(r'[^"$`\\!]*', word):
        return f'"{word}"' if re.search(r"[^\w@%+=:,./-]", word) else word
    return shlex.quote(word)


def _ignores_work_dir(gitignore: Path) -> bool:
    """The repository's .gitignore already has a line for the default work dir."""
    try:
        lines = gitignore.read_text(errors="replace").splitlines()
    except OSError:
        return False
    return any(line.strip().strip("/") == ".rocmforge" for line in lines)


def read_existing(dest: Path, rels: Iterable[str]) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for rel in rels:
        path = dest / rel
        out[rel] = path.read_bytes() if path.is_file() else None
    return out


def read_record(dest: Path, prefix: str) -> dict[str, str]:
    path = dest / checked_prefix(prefix) / RECORD_NAME
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
        return {str(k): str(v) for k, v in data.get("files", {}).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def diff_text(plan: VendorPlan, existing: Mapping[str, bytes | None]) -> str:
    """A unified diff of every file --update would change (text files only)."""
    chunks: list[str] = []
    for copy in plan.copies:
        if copy.action not in ("update", "keep-local"):
            continue
        old = (existing.get(copy.rel) or b"").decode("utf-8", "replace").splitlines(keepends=True)
        new = copy.content.decode("utf-8", "replace").splitlines(keepends=True)
        chunks.extend(difflib.unified_diff(old, new, f"a/{copy.rel}", f"b/{copy.rel}"))
    return "".join(chunks)


def apply_vendor(plan: VendorPlan) -> None:
    """Write the plan's creates and updates, each atomically, then the record."""
    if not plan.dest.is_dir():
        raise UsageError(
            f"{plan.dest} is not a directory",
            "vendoring copies the kit into an existing repository",
            "create the folder (or clone the repository) first",
        )
    for copy in plan.writes():
        write_atomic(plan.dest / copy.rel, copy.content)
    record = {
        "schema": RECORD_SCHEMA,
        "kit_version": __version__,
        "task_prefix": plan.task_prefix,
        "files": {c.rel: _sha256(c.content) for c in plan.copies if c.action != "keep-local"},
    }
    write_atomic(
        plan.dest / plan.prefix / RECORD_NAME, (json.dumps(record, indent=2) + "\n").encode()
    )


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
