"""Known fixes applied as data: config/upstream_fixes.toml, which entries a build needs, and the
fetch of each needed commit by its SHA.

Owns: the table's schema, the pure decision per entry (the tree's version, the ROCm version, the
targets and the compiler family against the entry's conditions, each reason in words), the
digest inputs of the patches step, and turning a needed commit into a diff file in the work dir
(`git fetch <remote> <sha>`, `git diff <sha>^ <sha>`) that the patch series applies with our own
patches (rocmforge.sources.patches, all or nothing). Must not: apply anything itself, or fetch a
commit whose SHA the table marks unverified.

Why a diff through `git apply` and not `git cherry-pick --no-commit`: a cherry-pick that
conflicts leaves markers in the tree and an index in a merge state, which breaks the series'
all-or-nothing promise; `git apply` of the commit's diff is checked first and then applied with
our patches in one call, so a conflict changes nothing and `invoke patch --revert` undoes it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from rocmforge.errors import ConfigError
from rocmforge.knowledge.toml_files import check_keys, config_dir, expect_type, read_toml
from rocmforge.sources.git import FULL_SHA, run_git
from rocmforge.sources.patches import Patch, PatchHeader

FIXES_FILE = "upstream_fixes.toml"
COMPILER_FAMILIES = ("", "clang", "gcc")
PLATFORMS = ("", "linux", "windows")
_ID = re.compile(r"^[a-z0-9][a-z0-9.-]*$")
_KEYS = ("id", "sha", "sha_source", "verified", "pytorch", "rocm", "targets", "compiler",
         "platform", "title", "why", "thread")

# How an entry's diff is known to the patch series: "upstream/<id>" beside "pytorch/0001-x".
FIX_PROJECT = "upstream"


@dataclass(frozen=True, kw_only=True)
class UpstreamFix:
    """One row of config/upstream_fixes.toml."""

    id: str
    sha: str
    sha_source: str
    verified: bool
    pytorch: SpecifierSet
    rocm: SpecifierSet | None  # None = any ROCm
    targets: tuple[str, ...]  # () = any target
    compiler: str  # "" = any compiler
    platform: str  # "linux", "windows", or "" = any
    title: str
    why: str
    thread: str

    @property
    def url(self) -> str:
        return f"https://github.com/pytorch/pytorch/commit/{self.sha}"


@dataclass(frozen=True, kw_only=True)
class BuildConditions:
    """What the entries' conditions are compared with; "" / () where the plan does not know."""

    pytorch_version: str = ""  # version.txt of the checkout; "" before it exists
    rocm_version: str = ""
    targets: tuple[str, ...] = ()
    compiler: str = ""  # family of the C++ compiler the build uses: "clang", "gcc" or ""
    platform: str = "linux"  # the kit builds on Linux; "windows" where a build runs there


@dataclass(frozen=True, kw_only=True)
class FixDecision:
    """Whether a build needs an entry, and why (one line for `invoke plan`)."""

    fix: UpstreamFix
    needed: bool  # every condition holds: the patches step fetches and applies it
    reason: str
    pending: bool = False  # the build conditions hold, the tree's version is not known yet
    # ROCm, targets, compiler and platform hold (the tree's version aside): what the digest
    # keys on, so that reading version.txt after the checkout never changes it
    conditions_hold: bool = False


# ------------------------------------------------------------------------------------- the table


def _spec(value: str, where: str) -> SpecifierSet:
    try:
        spec = SpecifierSet(value)
    except InvalidSpecifier:
        raise ConfigError(
            f"{where} = {value!r} is not a version specifier",
            "each upstream fix names the versions it is for, e.g. >=2.7,<2.8",
            f"write {where} as a packaging specifier",
        ) from None
    return spec


def parse_fixes(table: Mapping[str, object], *, source: str) -> tuple[UpstreamFix, ...]:
    """The entries of one upstream_fixes.toml document; ConfigError (exit 2) naming the problem."""
    check_keys(table, where=source, optional=("fix",))
    rows = expect_type(table.get("fix", []), list, where=f"{source} [[fix]]")
    fixes: list[UpstreamFix] = []
    for index, raw in enumerate(rows):
        where = f"{source} [[fix]] #{index + 1}"
        row = expect_type(raw, dict, where=where)
        check_keys(row, where=where, required=_KEYS)
        text = {k: expect_type(row[k], str, where=f"{where}.{k}").strip()
                for k in _KEYS if k not in ("verified", "targets")}
        if not _ID.match(text["id"]):
            raise ConfigError(f"{where}.id = {text['id']!r} is not a short lower-case name",
                              "the id names the fetched diff file and the lock entry",
                              "use letters, digits, '.' and '-', e.g. warpsize-host")
        if not FULL_SHA.match(text["sha"]):
            raise ConfigError(f"{where}.sha = {text['sha']!r} is not a full commit hash",
                              "the kit fetches the commit by its SHA; a short or symbolic name "
                              "could name another commit tomorrow",
                              "write the 40-hex-digit SHA of the commit on pytorch/pytorch")
        if text["compiler"] not in COMPILER_FAMILIES:
            raise ConfigError(f"{where}.compiler = {text['compiler']!r} is not a compiler family",
                              "the condition compares the family of the build's C++ compiler",
                              f"use one of: {', '.join(repr(c) for c in COMPILER_FAMILIES)}")
        if text["platform"] not in PLATFORMS:
            raise ConfigError(f"{where}.platform = {text['platform']!r} is not a platform",
                              "the condition compares the system the build runs on",
                              f"use one of: {', '.join(repr(p) for p in PLATFORMS)}")
        for key in ("sha_source", "title", "why", "thread"):
            if not text[key]:
                raise ConfigError(f"{where}.{key} is empty",
                                  "every fix says where it comes from and what it fixes",
                                  f"fill in {key}")
        targets = expect_type(row["targets"], list, where=f"{where}.targets")
        fixes.append(UpstreamFix(
            id=text["id"], sha=text["sha"], sha_source=text["sha_source"],
            verified=expect_type(row["verified"], bool, where=f"{where}.verified"),
            pytorch=_spec(text["pytorch"], f"{where}.pytorch"),
            rocm=_spec(text["rocm"], f"{where}.rocm") if text["rocm"] else None,
            targets=tuple(expect_type(t, str, where=f"{where}.targets") for t in targets),
            compiler=text["compiler"], platform=text["platform"], title=text["title"],
            why=text["why"],
            thread=text["thread"]))
    ids = [f.id for f in fixes]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{source}: an id appears twice",
                          "the id names the fetched diff and the lock entry",
                          "give each [[fix]] its own id")
    return tuple(fixes)


def load_fixes(config: Path | None = None) -> tuple[UpstreamFix, ...]:
    """config/upstream_fixes.toml (or the file in `config`, a folder); () when it is absent."""
    path = (config or config_dir()) / FIXES_FILE
    if not path.is_file():
        return ()
    return parse_fixes(read_toml(path), source=str(path))


# ------------------------------------------------------------------------------------- decisions


def compiler_family(compiler: str) -> str:
    """'clang' or 'gcc' from an executable's name (clang++-22, amdclang++, hipcc, g++-12)."""
    name = Path(compiler).name.lower()
    if "clang" in name or name.startswith("hipcc"):  # hipcc drives ROCm's clang
        return "clang"
    if name.startswith(("g++", "gcc", "c++")) or name.endswith(("-g++", "-gcc")):
        return "gcc"
    return ""


def _base(version: str) -> Version | None:
    try:
        return Version(Version(version).base_version)
    except InvalidVersion:
        return None


def _build_conditions(fix: UpstreamFix, cond: BuildConditions) -> tuple[bool, list[str]]:
    """Whether the conditions other than the tree's version hold, with each one said."""
    said: list[str] = []
    if fix.platform and fix.platform != cond.platform:
        return False, [f"fails on {fix.platform} only, not {cond.platform}"]
    if fix.rocm is not None:
        rocm = _base(cond.rocm_version) if cond.rocm_version else None
        if rocm is None:
            return False, [f"ROCm {fix.rocm} needed, the build's ROCm is unknown"]
        if not fix.rocm.contains(rocm, prereleases=True):
            return False, [f"ROCm {cond.rocm_version} is not {fix.rocm}"]
        said.append(f"ROCm {cond.rocm_version} is {fix.rocm}")
    if fix.targets:
        hit = sorted(set(fix.targets) & set(cond.targets))
        if not hit:
            return False, [f"needs a target of {', '.join(fix.targets)}"]
        said.append(f"targets {', '.join(hit)}")
    if fix.compiler:
        if cond.compiler != fix.compiler:
            return False, [f"needs {fix.compiler}, the build uses {cond.compiler or 'unknown'}"]
        said.append(f"compiler {fix.compiler}")
    return True, said


def decide(fixes: Sequence[UpstreamFix], cond: BuildConditions) -> tuple[FixDecision, ...]:
    """Each entry against the build: needed (all conditions hold), pending (the tree's version
    is not known yet), or not, with the reason."""
    out: list[FixDecision] = []
    for fix in fixes:
        holds, said = _build_conditions(fix, cond)
        if not holds:
            out.append(FixDecision(fix=fix, needed=False, reason=said[0]))
            continue
        version = _base(cond.pytorch_version) if cond.pytorch_version else None
        if version is None:
            out.append(FixDecision(fix=fix, needed=False, pending=True, conditions_hold=True,
                                   reason=(f"decided after the checkout: PyTorch {fix.pytorch} "
                                           + ("and " + ", ".join(said) if said
                                              else "on any ROCm"))))
            continue
        if not fix.pytorch.contains(version, prereleases=True):
            out.append(FixDecision(fix=fix, needed=False, conditions_hold=True,
                                   reason=f"PyTorch {cond.pytorch_version} is not {fix.pytorch}"))
            continue
        why = ", ".join([f"PyTorch {cond.pytorch_version} is {fix.pytorch}", *said])
        if not fix.verified:
            out.append(FixDecision(fix=fix, needed=False, conditions_hold=True, reason=(
                f"{why}, but its SHA is unverified ({fix.sha_source}): not applied")))
            continue
        out.append(FixDecision(fix=fix, needed=True, conditions_hold=True, reason=why))
    return tuple(out)


def digest_inputs(decisions: Sequence[FixDecision]) -> dict[str, str]:
    """The patches step's digest part: every verified entry whose ROCm, target, compiler and
    platform conditions hold for this build (its SHA and version range), whatever the tree's
    version, so the digest is the same before and after the checkout reads version.txt (the
    rule patch_digest_inputs follows); a new or edited entry reruns the build, an entry for
    another ROCm, target, compiler or platform leaves the digest alone."""
    return {f"fix:{d.fix.id}": f"{d.fix.sha} {d.fix.pytorch}"
            for d in decisions if d.conditions_hold and d.fix.verified}


def as_rows(decisions: Sequence[FixDecision]) -> list[dict[str, object]]:
    """The plan document's `upstream_fixes` list (JSON-able)."""
    return [{"id": d.fix.id, "sha": d.fix.sha, "title": d.fix.title, "thread": d.fix.thread,
             "verdict": "applies" if d.needed else ("after checkout" if d.pending else "skipped"),
             "reason": d.reason} for d in decisions]


# ----------------------------------------------------------------------------------- the fetch


def _has_commit(tree: Path, sha: str) -> bool:
    return run_git(("cat-file", "-e", f"{sha}^{{commit}}"), cwd=tree, check=False).ok


def in_history(tree: Path, sha: str) -> bool:
    """HEAD already contains the commit (it is an ancestor): nothing to fetch or apply."""
    return _has_commit(tree, sha) and run_git(
        ("merge-base", "--is-ancestor", sha, "HEAD"), cwd=tree, check=False).ok


def fetch_fix(tree: Path, fix: UpstreamFix, *, remote: str, dest: Path,
              config: Sequence[tuple[str, str]] = ()) -> Patch:
    """The commit's diff as a file in `dest`, fetched by SHA from `remote` when the tree lacks
    the commit (FetchFailed, exit 3, when the remote cannot give it); the Patch the series
    applies. `git fetch` only adds objects: the tree, its index and HEAD are untouched."""
    if not _has_commit(tree, fix.sha) or not _has_commit(tree, f"{fix.sha}^"):
        # depth 2: the commit and its parent, which the diff is taken against
        run_git(("fetch", "--no-tags", "--depth=2", "--", remote, fix.sha), cwd=tree,
                config=config, network=True,
                what=f"Cannot fetch the upstream fix {fix.id} (commit {fix.sha}) from {remote}",
                fix=("the fix is fetched by its SHA; GitHub serves any commit of pytorch/pytorch, "
                     "a mirror must allow it (uploadpack.allowReachableSHA1InWant) and hold "
                     "that commit; offline, or to build without it, remove the entry from "
                     f"config/{FIXES_FILE} (the build then fails as {fix.thread} shows)"))
    diff = run_git(("diff", "--binary", "--full-index", f"{fix.sha}^", fix.sha), cwd=tree).stdout
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / f"{fix.id}.patch"
    data = diff.encode()
    if not path.is_file() or path.read_bytes() != data:
        path.write_bytes(data)
    header = PatchHeader(applies_to=fix.pytorch, why=fix.why, upstream_status="merged",
                         upstream_url=fix.url)
    return Patch(path=path, project=FIX_PROJECT, header=header,
                 sha256=hashlib.sha256(data).hexdigest())
