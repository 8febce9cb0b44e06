"""The patch series: headers, selection by version, and all-or-nothing apply / revert.

Owns: the header format of `patches/<project>/NNNN-name.patch` (see patches/README.md), choosing
the patches whose `Applies-To` range contains the tree's version, telling apart a patch that
applies, one already applied (by us), one upstream absorbed, and a stale one, and applying or
reverting the selection in one `git apply` call after every patch was checked. Must not: edit a
tree when any selected patch is malformed or stale.

Why plain `git apply` and not `--3way` or `git am`: `git am` commits, so HEAD would no longer be
the upstream commit the lock file, `torch.version.git_version` and the "same ref = no-op" rule
rely on. `--3way` implies `--index` and, when the merge conflicts, leaves conflict markers in the
tree, which breaks all-or-nothing; and a patch that only applies by three-way merge has drifted,
which is exactly what this series must report ("stale") instead of papering over.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from rocmforge.errors import RocmforgeError
from rocmforge.sources.git import run_git

PATCH_NAME = re.compile(r"^\d{4}-[A-Za-z0-9][A-Za-z0-9._-]*\.patch$")
HEADER_KEYS = ("Applies-To", "Why", "Upstream")
UPSTREAM_STATES = ("local", "pending", "submitted", "merged")
_NEEDS_URL = ("submitted", "merged")
_HEADER_LINE = re.compile(r"^(Applies-To|Why|Upstream):[ \t]*(.*)$")

# Patch states, as `invoke patch --check` prints them.
APPLIES = "applies"  # not applied yet, applies cleanly
APPLIED = "applied"  # our change is in the work tree (reverse-applies; HEAD lacks it)
ABSORBED = "absorbed"  # the commit itself already contains it: upstream took it
STALE = "stale"  # neither applies nor reverse-applies


class PatchError(RocmforgeError):
    """A patch file is malformed, stale, or does not apply; the tree was not changed."""


@dataclass(frozen=True, kw_only=True)
class PatchHeader:
    applies_to: SpecifierSet
    why: str
    upstream_status: str
    upstream_url: str


@dataclass(frozen=True, kw_only=True)
class Patch:
    path: Path
    project: str
    header: PatchHeader
    sha256: str

    @property
    def name(self) -> str:
        return self.path.name


@dataclass(frozen=True, kw_only=True)
class PatchStatus:
    patch: Patch
    state: str


@dataclass(frozen=True, kw_only=True)
class PatchReport:
    """What `apply_series` / `revert_series` found and did."""

    tree: Path
    version: str
    statuses: tuple[PatchStatus, ...]
    changed: tuple[str, ...]  # names applied (or reverted) by this call


# ------------------------------------------------------------------------------------ pure parsing


def _preamble(text: str) -> list[str]:
    """The lines before the diff (the mail header and commit message of a format-patch file)."""
    out: list[str] = []
    for line in text.splitlines():
        if line.startswith("diff --git ") or line == "---" or line.startswith("--- "):
            break
        out.append(line)
    return out


def parse_header(text: str, *, source: str) -> PatchHeader:
    """The three header fields of a patch; PatchError naming the problem otherwise."""

    def bad(problem: str) -> PatchError:
        return PatchError(
            f"Malformed patch header in {source}: {problem}",
            "every patch declares Applies-To (a packaging specifier such as >=2.9,<2.11), Why, "
            "and Upstream (local | pending | submitted <URL> | merged <URL>) so it cannot drift",
            "fix the header as patches/README.md describes",
        )

    if "diff --git " not in text:
        raise bad("no `diff --git` section (not a git patch)")
    found: dict[str, str] = {}
    for line in _preamble(text):
        match = _HEADER_LINE.match(line.strip())
        if not match:
            continue
        key, value = match.group(1), match.group(2).strip()
        if key in found:
            raise bad(f"{key} appears twice")
        found[key] = value
    missing = [k for k in HEADER_KEYS if not found.get(k)]
    if missing:
        raise bad(f"missing or empty {', '.join(missing)}")
    try:
        spec = SpecifierSet(found["Applies-To"])
    except InvalidSpecifier:
        raise bad(f"Applies-To {found['Applies-To']!r} is not a version specifier") from None
    if not str(spec):
        raise bad("Applies-To is empty")
    status, _, url = found["Upstream"].partition(" ")
    url = url.strip()
    if status not in UPSTREAM_STATES:
        raise bad(f"Upstream status {status!r} is not one of {', '.join(UPSTREAM_STATES)}")
    if status in _NEEDS_URL and not url.startswith(("https://", "http://")):
        raise bad(f"Upstream {status} needs the URL of the upstream change")
    return PatchHeader(applies_to=spec, why=found["Why"], upstream_status=status, upstream_url=url)


def load_series(patches_root: Path, project: str) -> tuple[Patch, ...]:
    """Every patch of `patches/<project>/`, parsed, in filename order (malformed -> PatchError)."""
    folder = patches_root / project
    if not folder.is_dir():
        return ()
    series: list[Patch] = []
    for path in sorted(folder.iterdir()):
        if path.suffix != ".patch":
            continue
        if not PATCH_NAME.match(path.name):
            raise PatchError(
                f"Patch file name {path.name!r} in {folder} does not follow NNNN-name.patch",
                "the four-digit prefix fixes the order in which the series applies",
                f"rename it, e.g. 0001-{path.stem.lower()}.patch",
            )
        data = path.read_bytes()
        header = parse_header(data.decode("utf-8", errors="replace"), source=str(path))
        series.append(
            Patch(
                path=path, project=project, header=header, sha256=hashlib.sha256(data).hexdigest()
            )
        )
    return tuple(series)


def select(series: Sequence[Patch], version: str) -> tuple[Patch, ...]:
    """Patches whose range contains `version`; pre-release trees (2.10.0a0) count as 2.10.0."""
    try:
        base = Version(Version(version).base_version)
    except InvalidVersion:
        raise PatchError(
            f"Cannot choose patches: the tree's version {version!r} is not a version",
            "each patch's Applies-To range is compared with the tree's version",
            "check version.txt in the PyTorch tree (or the Triton version of the pin)",
        ) from None
    return tuple(p for p in series if p.header.applies_to.contains(base, prereleases=True))


# -------------------------------------------------------------------------------------- execution


def _check(
    tree: Path,
    paths: Sequence[Path],
    *,
    reverse: bool = False,
    env: dict | None = None,
    cached: bool = False,
) -> bool:
    args = ["apply", "--check"]
    if reverse:
        args.append("--reverse")
    if cached:
        args.append("--cached")
    result = run_git([*args, *map(str, paths)], cwd=tree, env=env, check=False)
    return result.ok


def classify(tree: Path, patches: Sequence[Patch]) -> tuple[PatchStatus, ...]:
    """Each patch's state against the work tree (and HEAD's tree for 'absorbed'); read-only."""
    statuses: list[PatchStatus] = []
    with tempfile.TemporaryDirectory(prefix="rocmforge-index-") as tmp:
        index_env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        run_git(("read-tree", "HEAD"), cwd=tree, env=index_env)
        for patch in patches:
            if _check(tree, [patch.path]):
                state = APPLIES
            elif _check(tree, [patch.path], reverse=True):
                in_head = _check(tree, [patch.path], reverse=True, cached=True, env=index_env)
                state = ABSORBED if in_head else APPLIED
            else:
                state = STALE
            statuses.append(PatchStatus(patch=patch, state=state))
    return tuple(statuses)


def _stale_error(tree: Path, statuses: Sequence[PatchStatus], action: str) -> PatchError:
    upstream = [s.patch for s in statuses if s.state == STALE and s.patch.project == "upstream"]
    if upstream:  # a commit of config/upstream_fixes.toml (rocmforge.sources.upstream_fixes)
        names = "; ".join(f"{p.path.stem} ({p.header.upstream_url})" for p in upstream)
        return PatchError(
            f"Not {action} any patch in {tree}: the upstream fix {names} conflicts with this "
            "tree",
            "its diff neither applies nor is already in the tree: the release changed those "
            "lines since (a backport by hand is needed) or another patch touches them",
            "narrow the entry's pytorch range in config/upstream_fixes.toml, or carry a rebased "
            "copy in patches/pytorch/; nothing in the tree was changed",
        )
    lines = "; ".join(
        f"stale: {s.patch.name} ({s.patch.header.why})" for s in statuses if s.state == STALE
    )
    return PatchError(
        f"Not {action} any patch in {tree}: {lines}",
        "a stale patch neither applies nor is already applied: upstream changed those lines (or "
        "took a different fix), or the tree has local edits there",
        "rebase the patch on this version, or narrow its Applies-To range; nothing was changed",
    )


def apply_series(
    tree: Path, patches: Sequence[Patch], *, version: str, check_only: bool = False
) -> PatchReport:
    """Apply the patches that are not applied yet, all in one `git apply`, or none of them."""
    statuses = classify(tree, patches)
    if any(s.state == STALE for s in statuses):
        raise _stale_error(tree, statuses, "applying")
    todo = [s.patch.path for s in statuses if s.state == APPLIES]
    if todo and not _check(tree, todo):
        raise PatchError(
            f"The patches {', '.join(p.name for p in todo)} apply one by one but not together "
            f"in {tree}",
            "two patches of the series touch the same lines",
            "merge them into one patch or rebase the later one on the earlier; nothing was changed",
        )
    return _apply(tree, version, statuses, todo, ["--whitespace=nowarn"], check_only)


def _apply(tree: Path, version: str, statuses: Sequence[PatchStatus], todo: Sequence[Path],
           flags: Sequence[str], check_only: bool) -> PatchReport:
    """`git apply <flags> <todo>` in one call (all or nothing), unless check_only."""
    if todo and not check_only:
        run_git(["apply", *flags, *map(str, todo)], cwd=tree,
                what=f"git apply {' '.join(flags)} failed in {tree}")
    changed = tuple(p.name for p in todo) if not check_only else ()
    return PatchReport(tree=tree, version=version, statuses=tuple(statuses), changed=changed)


def revert_series(
    tree: Path, patches: Sequence[Patch], *, version: str, check_only: bool = False
) -> PatchReport:
    """Reverse-apply the patches we applied (not the absorbed ones), last first, all or none."""
    statuses = classify(tree, patches)
    if any(s.state == STALE for s in statuses):
        raise _stale_error(tree, statuses, "reverting")
    todo = [s.patch.path for s in reversed(statuses) if s.state == APPLIED]
    if todo and not _check(tree, todo, reverse=True):
        raise PatchError(
            f"The applied patches {', '.join(p.name for p in todo)} cannot be reverted together "
            f"in {tree}",
            "the files they touch were edited after the patches were applied",
            "discard the later edits (git -C <tree> diff shows them); nothing was changed",
        )
    return _apply(tree, version, statuses, todo, ["--reverse"], check_only)
