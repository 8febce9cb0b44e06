"""Which torch a companion (torchvision, torchaudio) was made for, compared with the running one.

Owns: reading a companion's torch requirement from its installed metadata (`Requires-Dist: torch
(==2.13.0)` or a range such as `torch (>=2.14.0)`), a small PEP 440 comparison good enough for
release, pre-release and local versions, the release-line rule used when the metadata names no
torch version (a source build made without PYTORCH_VERSION declares a bare `torch`), and the
verdict. Pure: strings in, a `Pairing` out.
Must not: import torch or anything outside the standard library (it runs in the target venv).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Release lines, upstream: torchvision's README "Installation" table (pytorch/vision, README.md:
# torch 2.N pairs with torchvision 0.(N+15), e.g. 2.9 / 0.24) and torchaudio's "Compatibility
# Matrix" (pytorch/audio docs/source/installation.rst: torch 2.N pairs with torchaudio 2.N).
MINOR_OFFSET = {"torchvision": 15, "torchaudio": 0}
# From this release on, the companion is built against libtorch's stable ABI and supports that
# torch and every later one. Upstream: pytorch/audio docs/source/installation.rst (PR #4212,
# "clarify torchaudio 2.11 supports torch>=2.11"): "TorchAudio 2.11 is built against PyTorch's
# stable ABI and therefore supports PyTorch 2.11 and all later versions"; its 2.11.0 wheel
# declares no torch requirement at all. torchvision says so in its metadata (0.29.1:
# `torch (>=2.14.0)`), which is read first.
STABLE_ABI_FROM = {"torchaudio": (2, 11)}

# "torch (==2.13.0)", "torch>=2.14.0", "torch[opt] (>=2) ; python_version >= '3.10'", "torch".
_REQUIREMENT = re.compile(r"^\s*torch(?![A-Za-z0-9._-])\s*(?:\[[^\]]*\])?"
                          r"\s*\(?\s*([^;)]*?)\s*\)?\s*(?:;.*)?$", re.IGNORECASE)
_VERSION = re.compile(r"^v?(\d+(?:\.\d+)*)(?:[-_.]?(a|b|rc|alpha|beta|c)[-_.]?(\d*))?"
                      r"(?:[-_.]?(post|dev)[-_.]?(\d*))?(?:\+.*)?$", re.IGNORECASE)
_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2}
_OPERATORS = ("===", "~=", "==", "!=", "<=", ">=", "<", ">")


@dataclass(frozen=True, kw_only=True)
class Pairing:
    """The verdict: `ok` None when nothing could be compared (no requirement, no rule match)."""

    ok: bool | None
    requirement: str  # "torch==2.13.0", "torch>=2.14.0", or "" when none was declared
    source: str  # "metadata" or "release line"
    text: str


def torch_requirement(requires: list[str] | None) -> str | None:
    """The specifier of the unconditional `torch` requirement ("==2.13.0", ">=2.14.0", "" for a
    bare `torch`), None when torch is not required at all."""
    for line in requires or []:
        if ";" in line and "extra" in line.split(";", 1)[1]:
            continue
        match = _REQUIREMENT.match(line)
        if match:
            return match.group(1).replace(" ", "")
    return None


def version_key(version: str) -> tuple[tuple[int, ...], int, int, int, int] | None:
    """Sortable key of a PEP 440 version (local part ignored); None when it is not one."""
    match = _VERSION.match(version.strip())
    if not match:
        return None
    release = tuple(int(p) for p in match.group(1).split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    pre, pre_n, post, post_n = match.group(2), match.group(3), match.group(4), match.group(5)
    pre_rank = _PRE_RANK[pre.lower()] if pre else 3
    if post and post.lower() == "dev" and not pre:
        pre_rank = -1  # 2.14.0.dev1 sorts before 2.14.0a0
    post_rank = int(post_n or 0) if post and post.lower() == "post" else -1
    return release, pre_rank, int(pre_n or 0), post_rank, 0


def release_of(version: str) -> tuple[int, ...]:
    match = re.match(r"^v?(\d+(?:\.\d+)*)", version.strip())
    return tuple(int(p) for p in match.group(1).split(".")) if match else ()


def satisfies(version: str, specifier: str) -> bool | None:
    """Whether `version` meets a comma-separated specifier; None when one clause is not
    understood. `==X` without a local part matches X+anything, as pip does."""
    key = version_key(version)
    if key is None:
        return None
    for clause in filter(None, specifier.split(",")):
        op = next((o for o in _OPERATORS if clause.startswith(o)), "")
        wanted = clause[len(op):]
        if not op:
            return None
        if op == "===" or (op in ("==", "!=") and "+" in wanted):
            equal = version.strip() == wanted
            if equal != (op != "!="):
                return False
            continue
        if wanted.endswith(".*"):
            prefix = release_of(wanted[:-2])
            equal = release_of(version)[:len(prefix)] == prefix
            if op not in ("==", "!=") or equal != (op == "=="):
                return False if op in ("==", "!=") else None
            continue
        other = version_key(wanted)
        if other is None:
            return None
        if op == "~=":
            prefix = release_of(wanted)[:-1]
            if key < other or release_of(version)[:len(prefix)] != prefix:
                return False
            continue
        if not {"==": key == other, "!=": key != other, "<=": key <= other, ">=": key >= other,
                "<": key < other, ">": key > other}[op]:
            return False
    return True


def release_line(companion: str, version: str) -> tuple[int, int] | None:
    """The torch (major, minor) a companion release belongs to, by its release line."""
    offset = MINOR_OFFSET.get(companion)
    parts = release_of(version)
    if offset is None or len(parts) < 2:
        return None
    if companion == "torchvision":
        return (2, parts[1] - offset) if parts[0] == 0 and parts[1] >= offset else None
    return parts[0], parts[1]


def pairing(companion: str, companion_version: str, torch_version: str,
            requires: list[str] | None) -> Pairing:
    """The companion's torch requirement (its metadata first, its release line second) checked
    against the running torch."""
    spec = torch_requirement(requires)
    if spec:
        shown = f"torch{spec}"
        ok = satisfies(torch_version, spec)
        if ok is None:
            return Pairing(ok=None, requirement=shown, source="metadata",
                           text=f"{companion} {companion_version} requires {shown}, which the "
                           f"kit cannot compare with torch {torch_version}")
        verb = "meets" if ok else "does not meet"
        return Pairing(ok=ok, requirement=shown, source="metadata",
                       text=f"torch {torch_version} {verb} {companion} {companion_version}'s "
                       f"requirement {shown}")
    line = release_line(companion, companion_version)
    running = release_of(torch_version)[:2]
    if line is None or len(running) < 2:
        return Pairing(ok=None, requirement="", source="release line",
                       text=f"{companion} {companion_version} declares no torch version and is "
                       "not on a known release line, so its pairing with torch "
                       f"{torch_version} is not proven")
    want = f"{line[0]}.{line[1]}"
    stable = STABLE_ABI_FROM.get(companion)
    if stable is not None and line >= stable:
        ok = running >= line
        verb = "is" if ok else "is not"
        return Pairing(ok=ok, requirement=f"torch>={want}", source="release line",
                       text=f"{companion} {companion_version} declares no torch version; built "
                       f"against the stable ABI, it supports torch {want} and later, and torch "
                       f"{torch_version} {verb} one of them")
    ok = running == line
    verb = "is" if ok else "is not"
    return Pairing(ok=ok, requirement=f"torch {want}.*", source="release line",
                   text=f"{companion} {companion_version} declares no torch version; by the "
                   f"release lines it belongs to torch {want}, and torch {torch_version} {verb}")
