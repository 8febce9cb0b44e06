"""Check out a repository (PyTorch or Triton) at a ref, with its submodules, without losing work.

Owns: the pure planning of the git commands a checkout needs (`*_argv` functions, mirror config),
the parsing of git's answers (`parse_*`), and `checkout_tree`, which runs them through
`rocmforge.sources.git` and either finishes or leaves the tree as it found it. Must not: read
settings or the environment; tasks pass repo, ref, mirrors and the destination in.

Why `-c url.<mirror>.insteadOf=<url>` and not `git submodule set-url`: set-url edits `.gitmodules`,
a tracked file, so every mirrored checkout would be a dirty tree (and the lock file would describe
a tree that differs from upstream). `-c` changes nothing on disk, reaches every nested submodule
(git passes `-c` values down to the commands it spawns), and also rewrites the superproject URL,
so one map serves an air-gapped mirror of everything.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rocmforge.errors import RocmforgeError
from rocmforge.render import count
from rocmforge.sources.git import FULL_SHA, FetchFailed, GitFailed, GitResult, run_git
from rocmforge.sources.offline import offline_fix

_HEXISH = re.compile(r"^[0-9a-f]{4,39}$")

# Refspecs of a full fetch (fallback when the server refuses to send an unadvertised commit).
FULL_FETCH_REFSPECS = ("+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*")


class DirtyTree(RocmforgeError):
    """The checkout has local changes that a checkout of another ref would overwrite."""


class RefNotFound(RocmforgeError):
    """The ref names nothing on the remote."""


@dataclass(frozen=True, kw_only=True)
class ResolvedRef:
    """A ref the user gave, and what the remote (or the local repo) says it names."""

    ref: str
    kind: str  # "tag" | "branch" | "commit"
    commit: str  # 40-hex; for a commit given by sha, the sha itself
    refspec: str  # what `git fetch` asks for

    @property
    def local_name(self) -> str:
        """Where the fetched ref lands locally (FETCH_HEAD for a bare commit)."""
        if self.kind == "tag":
            return f"refs/tags/{self.ref}"
        if self.kind == "branch":
            return f"refs/remotes/origin/{self.ref}"
        return self.commit


@dataclass(frozen=True, kw_only=True)
class SubmoduleState:
    """One submodule as `git submodule status --recursive` reports it."""

    path: str
    commit: str
    flag: str  # " " checked out at the recorded commit, "-" not initialised, "+" differs, "U"


@dataclass(frozen=True, kw_only=True)
class SetAsideStash:
    """Local changes of one repository of the tree that `checkout_tree(set_aside=...)` stashed
    before moving: nothing is discarded, `git -C <tree>/<path> stash pop` brings them back."""

    path: str  # relative to the tree: "." for the tree itself, else the submodule's path
    paths: int  # lines of `git status --porcelain` (tracked and untracked) that were stashed
    stash: str  # the stash commit (refs/stash right after the push)


@dataclass(frozen=True, kw_only=True)
class CheckoutResult:
    """What `checkout_tree` left on disk."""

    path: Path
    repo: str
    ref: str
    commit: str
    changed: bool
    submodules: tuple[SubmoduleState, ...]
    log: tuple[str, ...]  # the git commands that ran, shlex-joined, for the report
    # What was stashed before the move (only with `set_aside`); submodules first, the tree last.
    set_aside: tuple[SetAsideStash, ...] = ()
    old_commit: str = ""  # HEAD before this call ("" for a fresh checkout)


# ---------------------------------------------------------------------------------- pure planning


def is_local_url(url: str) -> bool:
    """file:// URLs and plain paths (what an air-gapped mirror usually is)."""
    return url.startswith("file://") or url.startswith("/") or url.startswith(".")


def git_config_for(repo: str, mirrors: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """`-c` pairs for every git command of a checkout: mirror rewrites, and file transport.

    git >= 2.38.1 refuses file:// submodules by default (CVE-2022-39253: a hostile repo could
    point a submodule at a local path). We allow it only when the user configured a local repo or
    mirror themselves, which is the air-gapped use case.
    """
    pairs: list[tuple[str, str]] = []
    for original, mirror in sorted(mirrors.items()):
        pairs.append((f"url.{mirror}.insteadOf", original))
    if is_local_url(repo) or any(is_local_url(m) for m in mirrors.values()):
        pairs.append(("protocol.file.allow", "always"))
    return tuple(pairs)


# The tags a miss is answered with: PyTorch's releases are v<version> (v2.8.0, v2.9.0-rc1);
# listing only these keeps the thousands of other tags (ciflow/...) out of the answer.
RELEASE_TAGS = "refs/tags/v*"


def ls_remote_argv(url: str, ref: str) -> tuple[str, ...]:
    """One round trip: `ref` as a tag (peeled too: a pattern matches the "^{}" line only when
    it names it) or a branch, and the remote's release tags, named when `ref` is missing."""
    return ("ls-remote", "--", url, f"refs/tags/{ref}", f"refs/tags/{ref}^{{}}",
            f"refs/heads/{ref}", RELEASE_TAGS)


def listed_tags(output: str) -> tuple[str, ...]:
    """The tag names in `git ls-remote` output (peeled lines left out), in its order."""
    names = []
    for line in output.splitlines():
        sha, _, name = line.strip().partition("\t")
        if FULL_SHA.match(sha) and name.startswith("refs/tags/") and not name.endswith("^{}"):
            names.append(name.removeprefix("refs/tags/"))
    return tuple(names)


def nearest_tags(tags: Sequence[str], ref: str, most: int = 3) -> tuple[str, ...]:
    """The release tags closest to `ref`: by version when `ref` reads as one (the two below it
    and the one above, newest first), else the newest; release candidates only when the remote
    has no final release. () when `tags` holds no version tag."""
    from packaging.version import InvalidVersion, Version

    def parsed(text: str) -> Version | None:
        try:
            return Version(text)
        except InvalidVersion:
            return None

    versions = sorted(((v, t) for t in set(tags) if (v := parsed(t)) is not None),
                      key=lambda pair: pair[0])
    finals = [pair for pair in versions if not pair[0].is_prerelease] or versions
    if not finals:
        return ()
    wanted = parsed(ref)
    if wanted is None:
        return tuple(t for _, t in reversed(finals[-most:]))
    below = [pair for pair in finals if pair[0] < wanted]
    above = [pair for pair in finals if pair[0] > wanted]
    picked = above[:1] + below[-(most - min(1, len(above))):]
    if len(picked) < most:  # nothing below: more from above
        picked = above[:most - len(below[-most:])] + below[-most:]
    return tuple(t for _, t in sorted(picked, key=lambda pair: pair[0], reverse=True))


def ref_not_found(url: str, ref: str, tags: Sequence[str]) -> RefNotFound:
    """The one paragraph for a ref the remote lacks: the nearest release tags it does have
    (never a fixed example, which may itself be missing on a mirror or an old remote)."""
    hint = (" It looks like a short commit hash; give all 40 hex digits."
            if _HEXISH.match(ref) else "")
    near = nearest_tags(tags, ref)
    if near:
        have = f"it has {', '.join(near)}"
        fix = (f"pass an existing tag (e.g. {near[0]}), branch, or 40-hex commit with --ref "
               "(or the pytorch_ref setting)")
    else:
        have = "it has no release tag (v...)"
        fix = (f"pass a tag or branch that `git ls-remote {url}` lists, or a 40-hex commit, "
               "with --ref (or the pytorch_ref setting)")
    return RefNotFound(
        f"{ref!r} is not a tag, branch or full commit of {url}; {have}.{hint}",
        "the kit checks out only refs the remote really has",
        fix,
    )


def parse_ls_remote(output: str, ref: str) -> ResolvedRef | None:
    """The tag (peeled to its commit) or branch `ref` names, from `git ls-remote` output."""
    found: dict[str, str] = {}
    for line in output.splitlines():
        sha, _, name = line.strip().partition("\t")
        if FULL_SHA.match(sha):
            found[name] = sha
    tag = f"refs/tags/{ref}"
    if tag in found:
        commit = found.get(tag + "^{}", found[tag])
        return ResolvedRef(ref=ref, kind="tag", commit=commit, refspec=f"+{tag}:{tag}")
    head = f"refs/heads/{ref}"
    if head in found:
        return ResolvedRef(
            ref=ref, kind="branch", commit=found[head], refspec=f"+{head}:refs/remotes/origin/{ref}"
        )
    return None


def commit_ref(sha: str) -> ResolvedRef:
    return ResolvedRef(ref=sha, kind="commit", commit=sha, refspec=sha)


def fetch_argv(url: str, target: ResolvedRef, *, shallow: bool) -> tuple[str, ...]:
    """Fetch exactly one ref; `shallow` asks for depth 1 (servers may refuse it for a sha)."""
    depth = ("--depth", "1") if shallow else ()
    return ("fetch", "--quiet", "--no-tags", *depth, "--", url, target.refspec)


def full_fetch_argv(url: str, *, unshallow: bool) -> tuple[str, ...]:
    extra = ("--unshallow",) if unshallow else ()
    return ("fetch", "--quiet", *extra, "--", url, *FULL_FETCH_REFSPECS)


def submodule_update_argv(*, shallow: bool) -> tuple[str, ...]:
    depth = ("--depth", "1") if shallow else ()
    return ("submodule", "update", "--init", "--recursive", "--jobs", "4", *depth)


def status_argv() -> tuple[str, ...]:
    """Tracked changes, including inside submodules; untracked files are not 'dirty' because a
    checkout never overwrites them silently (git refuses instead)."""
    return ("status", "--porcelain", "--untracked-files=no", "--ignore-submodules=none")


def parse_submodule_status(output: str) -> tuple[SubmoduleState, ...]:
    """`git submodule status --recursive` lines: `<flag><sha> <path> (<describe>)`."""
    states: list[SubmoduleState] = []
    for line in output.splitlines():
        if len(line) < 43:
            continue
        flag, sha, rest = line[0], line[1:41], line[42:]
        path = re.sub(r" \([^()]*\)$", "", rest)
        states.append(SubmoduleState(path=path, commit=sha, flag=flag))
    return tuple(states)


def stash_push_argv(message: str) -> tuple[str, ...]:
    """Stash tracked and untracked changes (not ignored files: build dirs stay) under `message`."""
    return ("stash", "push", "--include-untracked", "-m", message)


def stash_status_argv() -> tuple[str, ...]:
    """What one repository of the tree would stash: its own tracked and untracked changes;
    submodules are separate repositories with their own stash, so they are left out here."""
    return ("status", "--porcelain", "--untracked-files=normal", "--ignore-submodules=all")


# A stash is a commit: git needs an identity, which a build machine may not have configured.
# The kit made the edits it sets aside, so the stash says so.
STASH_IDENTITY = (("user.name", "rocmforge"), ("user.email", "rocmforge@localhost"))


def discard_or_keep_fix(path: Path) -> str:
    """How to keep or discard local changes, as commands the user can paste."""
    p = shlex.quote(str(path))
    return (
        f"to keep them run `git -C {p} stash push -u` (and `git -C {p} submodule foreach "
        f"--recursive git stash push -u` for changes inside submodules); to discard them run "
        f"`git -C {p} reset --hard && git -C {p} clean -fd` (and `git -C {p} submodule foreach "
        f"--recursive git reset --hard` and `git -C {p} submodule foreach --recursive git clean "
        "-fd` for submodules); then run the task again"
    )


def read_tree_version(tree: Path) -> str:
    """PyTorch's version.txt at the tree root (e.g. `2.9.0a0`), "" when there is none."""
    try:
        return (tree / "version.txt").read_text(encoding="utf-8").strip()
    except OSError:
        return ""


# -------------------------------------------------------------------------------------- execution


class _Runner:
    """Runs git in one tree with the checkout's `-c` config and remembers what ran."""

    def __init__(self, cwd: Path, config: Sequence[tuple[str, str]]) -> None:
        self.cwd = cwd
        self.config = config
        self.log: list[str] = []

    def __call__(
        self,
        args: Sequence[str],
        *,
        check: bool = True,
        cwd: Path | None = None,
        config: Sequence[tuple[str, str]] = (),
        network: bool = False,
        **kw: str,
    ) -> GitResult:
        where = cwd or self.cwd
        result = run_git(args, cwd=where, config=(*self.config, *config), check=False)
        self.log.append(shlex.join(result.argv) + ("" if where == self.cwd else f"  (in {where})"))
        if check and not result.ok:
            raise (FetchFailed if network else GitFailed)(
                kw.get("what") or f"`{shlex.join(result.argv)}` failed in {where}",
                f"git said: {result.tail()}",
                kw.get("fix", ""),
            )
        return result


def head_commit(tree: Path) -> str:
    """HEAD's commit, or "" when `tree` is not a repository or has no commit yet."""
    if not (tree / ".git").exists():
        return ""
    result = run_git(("rev-parse", "--verify", "--quiet", "HEAD^{commit}"), cwd=tree, check=False)
    return result.stdout.strip() if result.ok else ""


def submodule_states(
    tree: Path, config: Sequence[tuple[str, str]] = ()
) -> tuple[SubmoduleState, ...]:
    result = run_git(("submodule", "status", "--recursive"), cwd=tree, config=config, check=False)
    return parse_submodule_status(result.stdout) if result.ok else ()


def local_changes(tree: Path) -> tuple[str, ...]:
    result = run_git(status_argv(), cwd=tree)
    return tuple(line for line in result.stdout.splitlines() if line.strip())


def resolve_ref(
    url: str, ref: str, *, tree: Path | None, config: Sequence[tuple[str, str]],
    name: str = "the repository",
) -> ResolvedRef:
    """Which commit `ref` names: a full sha as is, a tag known locally without network, else ask
    the remote with ls-remote (before anything changes, so a missing ref changes nothing)."""
    ref = ref.strip()
    if FULL_SHA.match(ref):
        return commit_ref(ref)
    if tree is not None and (tree / ".git").exists():
        local = run_git(
            ("rev-parse", "--verify", "--quiet", f"refs/tags/{ref}^{{commit}}"),
            cwd=tree,
            check=False,
        )
        if local.ok:
            tag = f"refs/tags/{ref}"
            return ResolvedRef(
                ref=ref, kind="tag", commit=local.stdout.strip(), refspec=f"+{tag}:{tag}"
            )
    listed = run_git(
        ls_remote_argv(url, ref),
        config=config,
        what=f"Cannot fetch from {url}: git could not reach it to resolve {ref!r}",
        fix=offline_fix(name, url),
        network=True,
    )
    resolved = parse_ls_remote(listed.stdout, ref)
    if resolved is None:
        raise ref_not_found(url, ref, listed_tags(listed.stdout))
    return resolved


def checkout_tree(
    *,
    dest: Path,
    repo: str,
    ref: str,
    mirrors: Mapping[str, str],
    name: str = "the repository",
    set_aside: str = "",
) -> CheckoutResult:
    """Put `dest` at `ref` of `repo`, submodules included; all or nothing.

    Same commit already checked out (and submodules in place) -> nothing runs that changes
    anything. Local changes -> DirtyTree before any fetch, unless `set_aside` (a stash message)
    is given and `ref` names another commit: then, after the fetch, every repository of the tree
    with changes (each submodule, then the tree) gets `git stash push --include-untracked -m
    <set_aside>`, and the result lists the stashes. Opt-in, for callers that know the changes are
    the kit's own (the build's patches and hipify); a user's `invoke checkout` never passes it.
    A failure after the work tree moved rolls back to the previous HEAD (or removes a directory
    this call created) and pops the stashes again.
    """
    config = git_config_for(repo, mirrors)
    existing = (dest / ".git").exists()
    if dest.exists() and not existing and any(dest.iterdir()):
        raise RocmforgeError(
            f"{dest} exists, is not empty and is not a git checkout",
            f"the kit checks {name} out there and never overwrites files it did not create",
            f"move {dest} away or choose another work dir (--work-dir)",
        )
    run = _Runner(dest, config)
    old_head = head_commit(dest) if existing else ""
    target = resolve_ref(repo, ref, tree=dest if existing else None, config=config,
                         name=name)

    if existing and old_head:
        subs = submodule_states(dest, config)
        if old_head == target.commit and all(s.flag == " " for s in subs):
            return CheckoutResult(
                path=dest,
                repo=repo,
                ref=ref,
                commit=old_head,
                changed=False,
                submodules=subs,
                log=tuple(run.log),
            )
        changes = local_changes(dest)
        if changes and not (set_aside and old_head != target.commit):
            shown = ", ".join(c[3:] for c in changes[:5]) + (" ..." if len(changes) > 5 else "")
            raise DirtyTree(
                f"{dest} has local changes ({count(len(changes), 'path')}: {shown}); not checking "
                f"out {ref}",
                "a checkout of another commit would overwrite them",
                discard_or_keep_fix(dest),
            )

    created = not dest.exists()
    old_symbolic = ""
    if existing:
        sym = run_git(("symbolic-ref", "--quiet", "HEAD"), cwd=dest, check=False)
        old_symbolic = sym.stdout.strip() if sym.ok else ""
    moved = False
    stashed: list[SetAsideStash] = []
    try:
        if not existing:
            dest.mkdir(parents=True, exist_ok=True)
            run(("init", "--quiet"))
        _fetch(run, repo, target, name)
        commit = run(("rev-parse", "--verify", f"{target.local_name}^{{commit}}")).stdout.strip()
        if commit != target.commit and target.kind != "commit":
            # The ref moved between ls-remote and fetch; use what was fetched.
            target = ResolvedRef(ref=ref, kind=target.kind, commit=commit, refspec=target.refspec)
        if commit != old_head:
            if set_aside and existing and old_head:
                stashed += _stash_changes(run, dest, set_aside, config)
            moved = True
            run(
                ("checkout", "--quiet", "--detach", commit),
                what=f"Cannot check out {ref} in {dest}",
            )
        run(("submodule", "sync", "--quiet", "--recursive"))
        if not run(submodule_update_argv(shallow=True), check=False).ok:
            run(
                submodule_update_argv(shallow=False),
                what=f"Cannot fetch the submodules of {name} at {ref}",
                fix="check the `mirrors` setting (each submodule URL -> a reachable mirror) and "
                "that the mirrors hold the submodule commits; " + offline_fix(name, repo),
                network=True,
            )
        has_origin = run(("remote", "get-url", "origin"), check=False)
        if not has_origin.ok:
            run(("remote", "add", "origin", repo))
        elif has_origin.stdout.strip() != repo:
            run(("remote", "set-url", "origin", repo))
    except RocmforgeError as error:
        if created:
            shutil.rmtree(dest, ignore_errors=True)
        elif not existing:
            _remove_git_dir(dest)
        elif moved:
            back = old_symbolic.removeprefix("refs/heads/") if old_symbolic else old_head
            run_git(("checkout", "--quiet", "--force", back), cwd=dest, check=False)
            run_git(
                ("submodule", "update", "--recursive", "--no-fetch", "--force"),
                cwd=dest,
                config=config,
                check=False,
            )
        if stashed:
            _restore_stashes(dest, stashed, error)
        raise
    return CheckoutResult(
        path=dest,
        repo=repo,
        ref=ref,
        commit=commit,
        changed=True,
        submodules=submodule_states(dest, config),
        log=tuple(run.log),
        set_aside=tuple(stashed),
        old_commit=old_head,
    )


def _stash_ref(repo: Path) -> str:
    result = run_git(("rev-parse", "--verify", "--quiet", "refs/stash"), cwd=repo, check=False)
    return result.stdout.strip() if result.ok else ""


def _stash_changes(
    run: _Runner, dest: Path, message: str, config: Sequence[tuple[str, str]]
) -> list[SetAsideStash]:
    """Stash the changes of each initialised submodule (deepest first) and then of the tree.

    Each push is checked: refs/stash must name a new commit afterwards, else the push saved
    nothing and the checkout would overwrite what it was meant to keep (GitFailed; the caller
    pops what was stashed so far)."""
    subs = [s.path for s in submodule_states(dest, config) if s.flag != "-"]
    order = sorted(subs, key=lambda p: (-p.count("/"), p)) + ["."]
    done: list[SetAsideStash] = []
    try:
        for rel in order:
            repo = dest if rel == "." else dest / rel
            status = run(stash_status_argv(), cwd=repo)
            lines = [line for line in status.stdout.splitlines() if line.strip()]
            if not lines:
                continue
            before = _stash_ref(repo)
            run(
                stash_push_argv(message),
                cwd=repo,
                config=STASH_IDENTITY,
                what=f"Cannot set the local changes of {repo} aside (git stash push)",
            )
            after = _stash_ref(repo)
            if not after or after == before:
                raise GitFailed(
                    f"`git stash push` in {repo} saved nothing, although there are changes in "
                    f"{count(len(lines), 'path')}",
                    "the kit moves a tree with local changes only after stashing them",
                    f"look at `git -C {shlex.quote(str(repo))} status`, then run the task again",
                )
            done.append(SetAsideStash(path=rel, paths=len(lines), stash=after))
    except RocmforgeError as error:
        _restore_stashes(dest, done, error)
        raise
    return done


def _restore_stashes(dest: Path, stashed: Sequence[SetAsideStash], error: RocmforgeError) -> None:
    """Pop what this call stashed (the tree first, then the submodules) after a rollback put
    HEAD back. A stash that does not come back is named in `error`'s fix: never lost."""
    left: list[str] = []
    for entry in reversed(stashed):
        repo = dest if entry.path == "." else dest / entry.path
        popped = (
            _stash_ref(repo) == entry.stash
            and run_git(("stash", "pop", "--index", "--quiet"), cwd=repo, check=False).ok
        )
        if not popped:
            left.append(f"`git -C {shlex.quote(str(repo))} stash pop` (stash {entry.stash})")
    if left:
        note = (
            "the local changes the kit set aside before the checkout could not be restored "
            "automatically; they are kept in git's stash: run " + ", ".join(left)
        )
        error.fix = f"{error.fix}; {note}" if error.fix else note
        error.args = (error.paragraph(),)


def _remove_git_dir(dest: Path) -> None:
    """Undo a `git init` in an empty directory that existed before (leave the directory)."""
    shutil.rmtree(dest / ".git", ignore_errors=True)
    for child in dest.iterdir():
        if child.is_dir():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


def _fetch(run: _Runner, url: str, target: ResolvedRef, name: str = "the repository") -> None:
    """Shallow fetch of exactly the ref; full fetch when the server refuses a bare commit."""
    if run(fetch_argv(url, target, shallow=True), check=False).ok:
        return
    if target.kind != "commit":
        run(fetch_argv(url, target, shallow=False), what=f"Cannot fetch {target.ref} from {url}",
            fix=offline_fix(name, url), network=True)
        return
    shallow = run(("rev-parse", "--is-shallow-repository"), check=False).stdout.strip() == "true"
    run(full_fetch_argv(url, unshallow=shallow), what=f"Cannot fetch from {url}",
        fix=offline_fix(name, url), network=True)
    if not run(("cat-file", "-e", f"{target.commit}^{{commit}}"), check=False).ok:
        raise RefNotFound(
            f"Commit {target.commit} is not in {url}",
            "the server refused to send it directly and no branch or tag of it contains it",
            "check the commit (and the mirror: a mirror must hold the commits the pins name)",
        )


def content_facts(path: Path) -> str:
    """What a local change holds, for telling edits apart: "blob:<git's blob id>" of a file
    (what `git hash-object` prints, so a `touch` or an edit undone to the same bytes is no
    change), "link:<target>" of a symlink, "gone" when nothing is there."""
    import hashlib
    import stat

    try:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            return f"link:{os.readlink(path)}"
        blob = hashlib.sha1(b"blob %d\0" % info.st_size)
        with path.open("rb") as stream:
            for chunk in iter(lambda: stream.read(1 << 20), b""):
                blob.update(chunk)
    except OSError:
        return "gone"
    return f"blob:{blob.hexdigest()}"


def tree_entries(tree: Path) -> tuple[tuple[str, str, str], ...]:
    """The local changes of a tree (tracked and untracked, in the tree and each initialised
    submodule) as (repository, `git status --porcelain` entry, `content_facts` of the path),
    the facts `tree_state` digests and the kit-edits record keeps to name a user's edit.
    () when `tree` is no git tree."""
    if not (tree / ".git").exists():
        return ()
    entries: list[tuple[str, str, str]] = []
    subs = [s.path for s in submodule_states(tree) if s.flag != "-"]
    for rel in [".", *sorted(subs)]:
        repo = tree if rel == "." else tree / rel
        result = run_git(("status", "--porcelain=v1", "-z", "--untracked-files=all",
                          "--ignore-submodules=all"), cwd=repo, check=False)
        for entry in result.stdout.split("\0"):
            if len(entry) < 4:
                continue
            entries.append((rel, entry, content_facts(repo / entry[3:])))
    return tuple(entries)


def tree_state(tree: Path) -> str:
    """A fingerprint of a tree's local changes (`tree_entries`: the paths git reports and each
    file's content). Equal after the kit's own edits and unchanged since (a `touch` changes
    nothing); different after `git reset --hard`, a user's edit or an added file. "" when
    `tree` is no git tree."""
    import hashlib

    if not (tree / ".git").exists():
        return ""
    digest = hashlib.sha256()
    for rel, entry, facts in tree_entries(tree):
        digest.update(f"{rel}\0{entry}\0{facts}\n".encode())
    return digest.hexdigest()


def set_aside_changes(tree: Path, message: str) -> tuple[SetAsideStash, ...]:
    """Stash the local changes (tracked and untracked) of each initialised submodule and of the
    tree under `message`, checked: nothing is discarded, `git stash list` shows them."""
    return tuple(_stash_changes(_Runner(tree, ()), tree, message, ()))
