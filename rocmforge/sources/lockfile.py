"""`rocmforge.lock`: the exact sources of a build, written after checkout, read to reproduce it.

Owns: the lock file's schema (version 1), its TOML text (written by hand: small, every string
quoted by `toml_string`; read with stdlib tomllib), and the atomic write (temp file in the same
folder + os.replace, so a crash never leaves half a lock). Must not: run git; the checkout module
collects the commits and the task decides when to write.
"""

from __future__ import annotations

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
class Lock:
    pytorch_repo: str
    pytorch_ref: str
    pytorch_commit: str
    submodules: tuple[LockedSubmodule, ...] = ()
    triton_repo: str = ""
    triton_commit: str = ""
    triton_version: str = ""
    patches: tuple[LockedPatch, ...] = ()


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
    return Lock(
        pytorch_repo=_text(torch, "repo", path, "pytorch"),
        pytorch_ref=_text(torch, "ref", path, "pytorch", required=False),
        pytorch_commit=_text(torch, "commit", path, "pytorch", pattern=FULL_SHA),
        submodules=subs,
        triton_repo=_text(triton, "repo", path, "triton", required=False),
        triton_commit=_text(triton, "commit", path, "triton", pattern=FULL_SHA, required=False),
        triton_version=_text(triton, "version", path, "triton", required=False),
        patches=patches,
    )
