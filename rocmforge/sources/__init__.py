"""Sources: PyTorch at a ref, Triton at the commit that ref pins, the patch series, the known
upstream fixes, the lock file.

Owns: the few entry points the tasks and the build planner call (`checkout_pytorch`,
`resolve_pytorch_ref`, `checkout_triton`, `patch_sources`, `describe_sources`,
`patch_digest_inputs`, and for the upstream fixes `fix_decisions`, `locked_fixes`,
`check_locked_fixes`); they combine the modules below. `git.py` is the only module here that
runs git; `checkout.py`, `patches.py`, `upstream_fixes.py` plan argv lists and call it;
`triton_pin.py` and `lockfile.py` parse and write files. Must not: build, install, or write
outside the kit's work dir (the patch series is read from patches/).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet

from rocmforge.errors import RocmforgeError
from rocmforge.knowledge.toml_files import kit_data_dir
from rocmforge.sources.checkout import (
    CheckoutResult,
    ResolvedRef,
    checkout_tree,
    head_commit,
    read_tree_version,
)
from rocmforge.sources.lockfile import (
    Lock,
    LockedFix,
    LockedPatch,
    LockedSubmodule,
    LockError,
    read_lock,
    write_lock,
)
from rocmforge.sources.patches import (
    ABSORBED,
    APPLIED,
    APPLIES,
    Patch,
    PatchError,
    PatchHeader,
    PatchReport,
    PatchStatus,
    apply_series,
    classify,
    load_series,
    revert_series,
    select,
)
from rocmforge.sources.triton_pin import PinError, TritonPin, read_pin_from_tree
from rocmforge.workdir import WorkDir, mark_work_dir, workdir_for

if TYPE_CHECKING:
    from rocmforge.fsutil import JSONDoc
    from rocmforge.settings import Settings
    from rocmforge.sources.upstream_fixes import BuildConditions, FixDecision

# The kit's own patch folder (the repository root's patches/).
PATCHES_ROOT = kit_data_dir("patches")
PROJECTS = ("pytorch", "triton")

__all__ = [
    "PATCHES_ROOT",
    "SourcesSummary",
    "check_locked_fixes",
    "checkout_pytorch",
    "checkout_triton",
    "describe_sources",
    "fix_decisions",
    "locked_fixes",
    "patch_sources",
    "patch_digest_inputs",
    "series_root",
]


@dataclass(frozen=True, kw_only=True)
class SourcesSummary:
    """What the work dir holds now, read without network: for `invoke plan` and reports."""

    pytorch_repo: str
    pytorch_ref: str
    pytorch_path: Path
    pytorch_commit: str  # HEAD of the checkout, "" when there is none
    pytorch_version: str  # version.txt, "" without a checkout
    pin: TritonPin | None  # read from the checkout; None without one
    pin_problem: str  # why `pin` is None although a checkout exists
    triton_repo: str
    triton_path: Path
    triton_commit: str  # HEAD of the Triton checkout, "" when there is none
    patches: tuple[PatchStatus, ...]  # the pytorch series selected for pytorch_version, with state

    def as_dict(self) -> JSONDoc:
        return {
            "pytorch": {
                "repo": self.pytorch_repo,
                "ref": self.pytorch_ref,
                "path": str(self.pytorch_path),
                "commit": self.pytorch_commit,
                "version": self.pytorch_version,
            },
            "triton": {
                "pin": self.pin.as_dict() if self.pin else None,
                "pin_problem": self.pin_problem,
                "repo": self.triton_repo,
                "path": str(self.triton_path),
                "commit": self.triton_commit,
            },
            "patches": [
                {
                    "file": f"{s.patch.project}/{s.patch.name}",
                    "sha256": s.patch.sha256,
                    "state": s.state,
                }
                for s in self.patches
            ],
        }


def _relative_patch(patch: Patch, root: Path) -> str:
    try:
        return patch.path.relative_to(root).as_posix()
    except ValueError:
        return patch.path.as_posix()


def _series_for(root: Path, project: str, version: str) -> tuple[Patch, ...]:
    series = load_series(root, project)
    return select(series, version) if series and version else ()


def build_lock(
    *, repo: str, ref: str, result: CheckoutResult, triton_repo: str, patches_root: Path
) -> Lock:
    """The lock of a fresh PyTorch checkout (Triton from its pin, patches selected by version)."""
    pin: TritonPin | None
    try:
        pin = read_pin_from_tree(result.path)
    except PinError:
        pin = None
    version = read_tree_version(result.path)
    patches = list(_series_for(patches_root, "pytorch", version))
    if pin is not None and pin.version:
        patches += _series_for(patches_root, "triton", pin.version)
    return Lock(
        pytorch_repo=repo,
        pytorch_ref=ref,
        pytorch_commit=result.commit,
        submodules=tuple(LockedSubmodule(path=s.path, commit=s.commit) for s in result.submodules),
        triton_repo=(triton_repo or pin.repo) if pin else "",
        triton_commit=pin.commit if pin else "",
        triton_version=pin.version if pin else "",
        patches=tuple(
            LockedPatch(project=p.project, file=_relative_patch(p, patches_root), sha256=p.sha256)
            for p in patches
        ),
    )


def check_locked_patches(lock: Lock, lock_path: Path, patches_root: Path) -> None:
    """Before anything changes: each locked patch exists with the same sha256."""
    import hashlib

    for entry in lock.all_patches():
        path = patches_root / entry.file
        if not path.is_file():
            raise LockError(
                f"Lock file {lock_path} names the patch {entry.file}, "
                f"which is not in {patches_root}",
                "the lock reproduces a patched tree; without the same patch it cannot",
                "restore the patch (same kit version as the lock), or write a new lock",
            )
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != entry.sha256:
            raise LockError(
                f"Patch {entry.file} changed since {lock_path} was written "
                f"(sha256 {digest[:12]}..., lock says {entry.sha256[:12]}...)",
                "the lock reproduces exactly the tree it describes",
                "use the kit version that wrote the lock, or write a new lock with "
                "`invoke checkout`",
            )


def resolve_pytorch_ref(settings: Settings) -> ResolvedRef | None:
    """What the build's checkout step will check out, asked before any step runs: a full commit
    (or a lock file's) as is, a tag the work dir's checkout already has without network, else
    one `git ls-remote` round trip. FetchFailed (exit 3) when the remote cannot be reached,
    RefNotFound (exit 2, naming the nearest release tags the remote has) when it lacks the ref;
    either way no step has run and no stamp was touched. None when no ref is set (the checkout
    step says that)."""
    from rocmforge.sources.checkout import git_config_for, resolve_ref

    if settings.lock_file:
        return None  # the lock's commits: checked against the lock by the checkout step
    repo, ref = str(settings.pytorch_repo), settings.pytorch_ref.strip()
    if not repo or not ref:
        return None
    tree = workdir_for(settings.work_dir).pytorch
    return resolve_ref(repo, ref, tree=tree if (tree / ".git").exists() else None,
                       config=git_config_for(repo, settings.mirrors), name="PyTorch")


def checkout_pytorch(
    settings: Settings,
    *,
    ref: str = "",
    repo: str = "",
    lock_path: Path | None = None,
    patches_root: Path | None = None,
    write: bool = True,
    set_aside: str = "",
) -> tuple[CheckoutResult, Lock, Path]:
    """PyTorch into the work dir at `ref` (or at a lock file's commits); then write the lock.

    Returns the checkout, the lock written and its path. With `lock_path` (default: the
    lock_file setting), the commits come from that file and every submodule commit and patch
    hash is checked against it. `set_aside` (a
    stash message) lets a move to another commit stash local changes instead of stopping with
    DirtyTree (see `checkout_tree`); only the build passes it, for the kit's own edits.
    """
    work = workdir_for(settings.work_dir)
    patches_root = patches_root or series_root(settings)
    mirrors: Mapping[str, str] = settings.mirrors
    locked: Lock | None = None
    if lock_path is None and settings.lock_file:
        lock_path = Path(settings.lock_file)
    if lock_path is not None:
        locked = read_lock(lock_path)
        check_locked_patches(locked, lock_path, patches_root)
        repo = repo or locked.pytorch_repo
        ref = locked.pytorch_commit
    repo = repo or settings.pytorch_repo
    ref = ref or settings.pytorch_ref
    if not repo or not ref:
        raise RocmforgeError(
            "No PyTorch repository or ref to check out",
            "settings pytorch_repo and pytorch_ref are empty",
            "pass --repo and --ref, or set them in invoke.yaml (rocm:)",
        )
    result = checkout_tree(
        dest=work.pytorch, repo=repo, ref=ref, mirrors=mirrors, name="PyTorch", set_aside=set_aside
    )
    lock = build_lock(
        repo=repo,
        ref=locked.pytorch_ref if locked else ref,
        result=result,
        triton_repo=settings.triton_repo,
        patches_root=patches_root,
    )
    if locked is not None:
        _compare_with_lock(locked, lock, lock_path or Path())
        lock = locked
    else:
        lock = _kept_fixes(work.lock_file, lock)
    if write:
        mark_work_dir(work.state)  # the kit made this work dir: `invoke clean` may clean it
        write_lock(work.lock_file, lock)
    return result, lock, work.lock_file


def _kept_fixes(path: Path, lock: Lock) -> Lock:
    """`lock` with the [[upstream_fixes]] the work dir's lock records for the same commit: the
    patches step wrote them, and a checkout that stays on that commit (the build's re-check of
    a branch or tag) leaves its tree, fixes applied, as it is. Another commit: none."""
    try:
        earlier = read_lock(path) if path.is_file() else None
    except LockError:
        return lock
    if earlier is None or earlier.pytorch_commit != lock.pytorch_commit:
        return lock
    return dataclasses.replace(lock, upstream_fixes=earlier.upstream_fixes)


def _compare_with_lock(locked: Lock, found: Lock, lock_path: Path) -> None:
    want = {(s.path, s.commit) for s in locked.submodules}
    have = {(s.path, s.commit) for s in found.submodules}
    if want != have:
        diff = sorted(want ^ have)[:4]
        raise LockError(
            f"The checkout's submodules differ from {lock_path}: {diff}",
            "submodule commits follow from the PyTorch commit, so the lock file was edited or "
            "written for another repository",
            "write a new lock with `invoke checkout`",
        )
    if locked.triton_commit and found.triton_commit and locked.triton_commit != found.triton_commit:
        raise LockError(
            f"The checkout pins Triton {found.triton_commit}, "
            f"{lock_path} says {locked.triton_commit}",
            "the Triton pin is read from the PyTorch tree",
            "write a new lock with `invoke checkout`",
        )


def pin_of_checkout(work: WorkDir) -> TritonPin:
    if not head_commit(work.pytorch):
        raise PinError(
            f"There is no PyTorch checkout in {work.pytorch}",
            "the Triton pin is read from the PyTorch tree",
            "run `invoke checkout` first (or `invoke triton.pin --ref <tag>` to read it over HTTP)",
        )
    return read_pin_from_tree(work.pytorch)


def checkout_triton(settings: Settings) -> tuple[CheckoutResult, TritonPin]:
    """Triton into the work dir at exactly the commit the PyTorch checkout pins."""
    work = workdir_for(settings.work_dir)
    pin = pin_of_checkout(work)
    repo = settings.triton_repo or pin.repo
    result = checkout_tree(
        dest=work.triton, repo=repo, ref=pin.commit, mirrors=settings.mirrors, name="Triton"
    )
    mark_work_dir(work.state)
    return result, pin


# Where the patches step keeps the diffs of the upstream fixes it fetched (per work dir).
FIXES_DIR = "upstream-fixes"


def _upstream_patches(settings: Settings, work: WorkDir, tree: Path,
                      decisions: Sequence[FixDecision]) -> tuple[list[Patch], list[PatchStatus]]:
    """The diffs of the needed fixes the tree lacks (fetched by SHA), and a status for each
    fix whose commit HEAD already contains (absorbed, nothing fetched)."""
    from rocmforge.sources.checkout import git_config_for
    from rocmforge.sources.upstream_fixes import FIX_PROJECT, fetch_fix, in_history

    patches: list[Patch] = []
    absorbed: list[PatchStatus] = []
    config = git_config_for(str(settings.pytorch_repo), settings.mirrors)
    for decision in decisions:
        if not decision.needed:
            continue
        fix = decision.fix
        if in_history(tree, fix.sha):
            header = PatchHeader(applies_to=fix.pytorch, why=fix.why, upstream_status="merged",
                                 upstream_url=fix.url)
            ghost = Patch(path=work.state / FIXES_DIR / f"{fix.id}.patch", project=FIX_PROJECT,
                          header=header, sha256="")
            absorbed.append(PatchStatus(patch=ghost, state=ABSORBED))
            continue
        patches.append(fetch_fix(tree, fix, remote=str(settings.pytorch_repo),
                                 dest=work.state / FIXES_DIR, config=config))
    return patches, absorbed


def _fetched_patches(work: WorkDir) -> list[Patch]:
    """Every upstream-fix diff an earlier patches step left (for --revert)."""
    from rocmforge.sources.upstream_fixes import FIX_PROJECT, load_fixes

    by_id = {f.id: f for f in load_fixes()}
    found: list[Patch] = []
    folder = work.state / FIXES_DIR
    for path in sorted(folder.glob("*.patch")) if folder.is_dir() else ():
        fix = by_id.get(path.stem)
        header = PatchHeader(applies_to=fix.pytorch if fix else SpecifierSet(),
                             why=fix.why if fix else "an upstream fix", upstream_status="merged",
                             upstream_url=fix.url if fix else "")
        data = path.read_bytes()
        found.append(Patch(path=path, project=FIX_PROJECT, header=header,
                           sha256=hashlib.sha256(data).hexdigest()))
    return found


def patch_sources(
    settings: Settings,
    *,
    check_only: bool = False,
    revert: bool = False,
    patches_root: Path | None = None,
    conditions: BuildConditions | None = None,
) -> tuple[PatchReport, ...]:
    """Apply (or revert) the series of each checked-out project; every series is parsed and
    checked before any tree changes. With `conditions` (the build's ROCm, targets, compiler),
    the upstream fixes of config/upstream_fixes.toml that this tree and build need are fetched
    by SHA and go into the PyTorch tree with our own patches, in the same all-or-nothing
    apply; their statuses have project "upstream". A revert also reverses fetched fixes."""
    work = workdir_for(settings.work_dir)
    patches_root = patches_root or series_root(settings)
    jobs: list[tuple[Path, tuple[Patch, ...], str]] = []
    if not head_commit(work.pytorch):
        raise PatchError(
            f"There is no PyTorch checkout in {work.pytorch}",
            "patches apply to the checked-out tree",
            "run `invoke checkout` first",
        )
    version = read_tree_version(work.pytorch)
    absorbed: list[PatchStatus] = []
    extra: list[Patch] = []
    if revert:
        extra = _fetched_patches(work)
    elif conditions is not None:
        extra, absorbed = _upstream_patches(settings, work, work.pytorch,
                                            fix_decisions(conditions, version))
    jobs.append((work.pytorch, _series_for(patches_root, "pytorch", version) + tuple(extra),
                 version))
    if head_commit(work.triton):
        pin = read_pin_from_tree(work.pytorch)
        jobs.append((work.triton, _series_for(patches_root, "triton", pin.version), pin.version))
    action = revert_series if revert else apply_series
    # Dry pass over every tree first: a stale patch in the second series changes nothing.
    for tree, patches, ver in jobs:
        action(tree, patches, version=ver, check_only=True)
    reports = [action(t, p, version=v, check_only=check_only) for t, p, v in jobs]
    if absorbed:
        first = reports[0]
        reports[0] = dataclasses.replace(first, statuses=first.statuses + tuple(absorbed))
    return tuple(reports)


def fix_decisions(conditions: BuildConditions, version: str) -> tuple[FixDecision, ...]:
    """config/upstream_fixes.toml decided for this build and the tree's version."""
    from rocmforge.sources.upstream_fixes import decide, load_fixes

    return decide(load_fixes(), dataclasses.replace(conditions, pytorch_version=version))


def check_locked_fixes(lock: Lock, lock_path: Path, decisions: Sequence[FixDecision]) -> None:
    """A build of a lock that records upstream fixes needs exactly those (id and commit) before
    anything changes; otherwise the kit's table or the build's conditions changed since."""
    want = {(f.id, f.sha) for f in lock.upstream_fixes}
    have = {(d.fix.id, d.fix.sha) for d in decisions if d.needed}
    if want == have:
        return
    names = ", ".join(sorted(f"{i} {s[:12]}" for i, s in want ^ have))
    raise LockError(
        f"The upstream fixes this build needs differ from {lock_path}: {names}",
        "the lock reproduces exactly the tree it describes, fixes included; "
        "config/upstream_fixes.toml or the build's ROCm, targets or compiler changed since",
        "build with the kit version and conditions that wrote the lock, or write a new lock "
        "with `invoke checkout`",
    )


def locked_fixes(reports: Sequence[PatchReport]) -> tuple[LockedFix, ...]:
    """What the lock records of the upstream fixes after an apply: applied (by this call or an
    earlier one) with the diff's sha256, or absorbed (the tree had it)."""
    from rocmforge.sources.upstream_fixes import FIX_PROJECT, load_fixes

    shas = {f.id: f.sha for f in load_fixes()}
    out: list[LockedFix] = []
    for report in reports:
        for status in report.statuses:
            if status.patch.project != FIX_PROJECT:
                continue
            fix_id = status.patch.path.stem
            state = "applied" if status.state in (APPLIES, APPLIED) else "absorbed"
            out.append(LockedFix(id=fix_id, sha=shas.get(fix_id, ""), state=state,
                                 sha256=status.patch.sha256 if state == "applied" else ""))
    return tuple(out)


def describe_sources(settings: Settings, *,
                     patches_root: Path | None = None) -> SourcesSummary:
    """Read-only: what the work dir holds (HEADs, pin, patch states), no network, no writes."""
    work = workdir_for(settings.work_dir)
    patches_root = patches_root or series_root(settings)
    commit = head_commit(work.pytorch)
    version = read_tree_version(work.pytorch) if commit else ""
    pin: TritonPin | None = None
    problem = ""
    statuses: tuple[PatchStatus, ...] = ()
    if commit:
        try:
            pin = read_pin_from_tree(work.pytorch)
        except PinError as exc:
            problem = exc.paragraph()
        try:
            statuses = classify(work.pytorch, _series_for(patches_root, "pytorch", version))
        except RocmforgeError as exc:
            problem = (problem + " " + exc.paragraph()).strip()
    return SourcesSummary(
        pytorch_repo=settings.pytorch_repo,
        pytorch_ref=settings.pytorch_ref,
        pytorch_path=work.pytorch,
        pytorch_commit=commit,
        pytorch_version=version,
        pin=pin,
        pin_problem=problem,
        triton_repo=settings.triton_repo or (pin.repo if pin else ""),
        triton_path=work.triton,
        triton_commit=head_commit(work.triton),
        patches=statuses,
    )


def series_root(settings: Settings) -> Path:
    """The patch series of this build: the `patches_dir` setting, else the kit's patches/."""
    return Path(settings.patches_dir) if settings.patches_dir else PATCHES_ROOT


def patch_digest_inputs(patches_root: Path | None = None) -> dict[str, str]:
    """sha256 of every patch in the kit's series (pytorch and triton), for the patches step's
    digest. The whole series, not the selection for one version: the selection depends on the
    checked-out tree's version.txt, which a first build cannot read before its checkout, and a
    digest that changed after checkout would redo every later step on the second run."""
    root = patches_root or PATCHES_ROOT
    found: dict[str, str] = {}
    for project in ("pytorch", "triton"):
        for patch in load_series(root, project):
            found[f"patch:{project}/{patch.path.name}"] = patch.sha256
    return found
