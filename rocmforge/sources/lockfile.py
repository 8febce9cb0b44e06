"""`rocmforge.lock`: the exact sources of a build, written after checkout, read to reproduce it.

Owns: the lock file's schema (version 1; [[companions]] is optional, so a lock without it reads as
one without companions), its TOML text (written by hand: small, every string
quoted by `toml_string`; read with stdlib tomllib), and the atomic write (temp file in the same
folder + os.replace, so a crash never leaves half a lock). Must not: run git; the checkout module
collects the commits and the task decides when to write.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocmforge.errors import RocmforgeError
from rocmforge.fsutil import write_atomic
from rocmforge.sources.git import FULL_SHA

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

LOCK_SCHEMA = 1
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
FIX_STATES = ("applied", "absorbed")


class LockError(RocmforgeError):
    """A lock file that cannot be read, or a tree that does not match it."""


@dataclass(frozen=True, kw_only=True)
class LockedSubmodule:
    path: str
    commit: str


@dataclass(frozen=True, kw_only=True)
class LockedPatch:
    project: str
    file: str  # relative to the kit's patches/ folder, e.g. pytorch/0001-x.patch
    sha256: str


@dataclass(frozen=True, kw_only=True)
class LockedFix:
    """An upstream commit (config/upstream_fixes.toml) the patches step put in the tree, or
    found already there ("absorbed"); `sha256` is that of the diff applied ("" when absorbed)."""

    id: str
    sha: str  # the commit on pytorch/pytorch
    state: str  # "applied" or "absorbed"
    sha256: str = ""


@dataclass(frozen=True, kw_only=True)
class LockedCompanion:
    """A companion (torchvision, torchaudio) as built: its source and the kit patches applied."""

    name: str
    repo: str
    ref: str
    commit: str
    version: str = ""
    patches: tuple[LockedPatch, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Lock:
    pytorch_repo: str
    pytorch_ref: str
    pytorch_commit: str
    submodules: tuple[LockedSubmodule, ...] = ()
    triton_repo: str = ""
    triton_commit: str = ""
    triton_version: str = ""
    patches: tuple[LockedPatch, ...] = ()
    # Written by each companion's patches step after torch's checkout wrote the rest; a lock
    # without the section (older kits, or a build without --with) reads as ().
    companions: tuple[LockedCompanion, ...] = ()
    # Written by the patches step (after checkout wrote the rest): the upstream fixes of this
    # build's conditions; a lock without the section reads as ().
    upstream_fixes: tuple[LockedFix, ...] = ()

    def all_patches(self) -> tuple[LockedPatch, ...]:
        """Torch's and Triton's patches, then each companion's."""
        return self.patches + tuple(p for c in self.companions for p in c.patches)

    def with_companion(self, entry: LockedCompanion, keep: tuple[str, ...]) -> Lock:
        """This lock with `entry` recorded (in place of an earlier one of that name) and only
        the companions named in `keep` (the ones this build makes) otherwise."""
        names = [c.name for c in self.companions if c.name in keep]
        if entry.name not in names:
            names.append(entry.name)
        by_name = {c.name: c for c in self.companions} | {entry.name: entry}
        return dataclasses.replace(self, companions=tuple(by_name[n] for n in names))


def toml_string(value: str) -> str:
    """A TOML basic string: backslash, quote and control characters escaped."""
    out = ['"']
    for ch in value:
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def render_lock(lock: Lock) -> str:
    """The lock as TOML text (stable order, so two locks of one tree are byte-identical)."""
    q = toml_string
    lines = [
        "# rocmforge.lock: the exact sources of a build. Written by `invoke checkout`;",
        "# `invoke checkout --lock FILE` reproduces this tree. Do not edit by hand.",
        f"schema = {LOCK_SCHEMA}",
        "",
        "[pytorch]",
        f"repo = {q(lock.pytorch_repo)}",
        f"ref = {q(lock.pytorch_ref)}",
        f"commit = {q(lock.pytorch_commit)}",
    ]
    for sub in lock.submodules:
        lines += [
            "",
            "[[pytorch.submodules]]",
            f"path = {q(sub.path)}",
            f"commit = {q(sub.commit)}",
        ]
    if lock.triton_commit:
        lines += [
            "",
            "[triton]",
            f"repo = {q(lock.triton_repo)}",
            f"commit = {q(lock.triton_commit)}",
            f"version = {q(lock.triton_version)}",
        ]
    for patch in lock.patches:
        lines += [
            "",
            "[[patches]]",
            f"project = {q(patch.project)}",
            f"file = {q(patch.file)}",
            f"sha256 = {q(patch.sha256)}",
        ]
    for fix in lock.upstream_fixes:
        lines += [
            "",
            "[[upstream_fixes]]",
            f"id = {q(fix.id)}",
            f"sha = {q(fix.sha)}",
            f"state = {q(fix.state)}",
            f"sha256 = {q(fix.sha256)}",
        ]
    for comp in lock.companions:
        lines += [
            "",
            "[[companions]]",
            f"name = {q(comp.name)}",
            f"repo = {q(comp.repo)}",
            f"ref = {q(comp.ref)}",
            f"commit = {q(comp.commit)}",
            f"version = {q(comp.version)}",
        ]
        for patch in comp.patches:
            lines += [
                "",
                "[[companions.patches]]",
                f"project = {q(patch.project)}",
                f"file = {q(patch.file)}",
                f"sha256 = {q(patch.sha256)}",
            ]
    return "\n".join(lines) + "\n"


def write_lock(path: Path, lock: Lock) -> None:
    """Write atomically (rocmforge.fsutil.write_atomic): a crash never leaves half a lock."""
    write_atomic(path, render_lock(lock))


def _bad(path: Path, problem: str) -> LockError:
    return LockError(
        f"Lock file {path} is not usable: {problem}",
        "a lock file names exact commits; the kit does not guess missing ones",
        "write it again with `invoke checkout` (or fix the named entry)",
    )


def _text(
    table: dict[str, Any],
    key: str,
    path: Path,
    where: str,
    *,
    pattern: re.Pattern[str] | None = None,
    required: bool = True,
) -> str:
    value = table.get(key, "")
    if not isinstance(value, str) or (required and not value):
        raise _bad(path, f"{where}.{key} is missing or not a string")
    if pattern is not None and value and not pattern.match(value):
        raise _bad(path, f"{where}.{key} = {value!r} is not a full hash")
    return value


def read_lock(path: Path) -> Lock:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LockError(
            f"Cannot read lock file {path}: {exc.strerror}",
            "`--lock` names the file to reproduce",
            "check the path",
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise _bad(path, f"not valid TOML ({exc})") from None
    if data.get("schema") != LOCK_SCHEMA:
        raise _bad(path, f"schema is {data.get('schema')!r}, this kit reads {LOCK_SCHEMA}")
    torch = data.get("pytorch")
    if not isinstance(torch, dict):
        raise _bad(path, "no [pytorch] table")
    subs = tuple(
        LockedSubmodule(
            path=_text(s, "path", path, "pytorch.submodules"),
            commit=_text(s, "commit", path, "pytorch.submodules", pattern=FULL_SHA),
        )
        for s in torch.get("submodules", [])
    )
    triton = data.get("triton", {})
    patches = tuple(
        LockedPatch(
            project=_text(p, "project", path, "patches"),
            file=_text(p, "file", path, "patches"),
            sha256=_text(p, "sha256", path, "patches", pattern=_SHA256),
        )
        for p in data.get("patches", [])
    )
    companions = tuple(_companion(c, path) for c in data.get("companions", []))
    fixes = tuple(_fix(f, path) for f in data.get("upstream_fixes", []))
    if len({c.name for c in companions}) != len(companions):
        raise _bad(path, "a companion is named twice in [[companions]]")
    return Lock(
        pytorch_repo=_text(torch, "repo", path, "pytorch"),
        pytorch_ref=_text(torch, "ref", path, "pytorch", required=False),
        pytorch_commit=_text(torch, "commit", path, "pytorch", pattern=FULL_SHA),
        submodules=subs,
        triton_repo=_text(triton, "repo", path, "triton", required=False),
        triton_commit=_text(triton, "commit", path, "triton", pattern=FULL_SHA, required=False),
        triton_version=_text(triton, "version", path, "triton", required=False),
        patches=patches,
        companions=companions,
        upstream_fixes=fixes,
    )


def _fix(table: object, path: Path) -> LockedFix:
    if not isinstance(table, dict):
        raise _bad(path, "[[upstream_fixes]] holds something that is not a table")
    where = "upstream_fixes"
    state = _text(table, "state", path, where)
    if state not in FIX_STATES:
        raise _bad(path, f"{where}.state = {state!r} is not one of {', '.join(FIX_STATES)}")
    return LockedFix(
        id=_text(table, "id", path, where),
        sha=_text(table, "sha", path, where, pattern=FULL_SHA),
        state=state,
        sha256=_text(table, "sha256", path, where, pattern=_SHA256, required=False),
    )


def _companion(table: object, path: Path) -> LockedCompanion:
    if not isinstance(table, dict):
        raise _bad(path, "[[companions]] holds something that is not a table")
    where = "companions"
    version = _text(table, "version", path, where, required=False)
    # A plain folder (an extension --with names by its path) has no commit: its version is
    # the digest of its files.
    folder = version.startswith("sha256:") and not table.get("commit")
    return LockedCompanion(
        name=_text(table, "name", path, where),
        repo=_text(table, "repo", path, where),
        ref=_text(table, "ref", path, where, required=False),
        commit="" if folder else _text(table, "commit", path, where, pattern=FULL_SHA),
        version=version,
        patches=tuple(
            LockedPatch(
                project=_text(p, "project", path, f"{where}.patches"),
                file=_text(p, "file", path, f"{where}.patches"),
                sha256=_text(p, "sha256", path, f"{where}.patches", pattern=_SHA256),
            )
            for p in table.get("patches", [])
        ),
    )
