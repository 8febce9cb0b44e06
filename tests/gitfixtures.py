"""Builders of small real git repositories that stand in for the PyTorch and Triton remotes.

Everything is real git over file:// URLs in temp dirs. The "pytorch" remote has tags v2.4.0
(annotated; triton-rocm.txt + triton.txt), v2.8.0 (lightweight; triton.txt) and v2.9.1
(annotated; triton.txt pinning a Triton commit that is at no branch tip), a submodule whose
.gitmodules URL is a fake https URL that only the `mirrors` setting can reach, and a `main` branch
one commit ahead (version 2.10.0a0).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

SUB_URL = "https://example.invalid/third-party/sub.git"
ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, **ENV}
    proc = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode:
        raise AssertionError(f"git {args} failed: {proc.stderr}")
    return proc.stdout.strip()


def commit_files(repo: Path, files: dict[str, str | None], message: str) -> str:
    for rel, text in files.items():
        path = repo / rel
        if text is None:
            git("rm", "-q", rel, cwd=repo)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        git("add", rel, cwd=repo)
    git("commit", "-q", "-m", message, cwd=repo)
    return git("rev-parse", "HEAD", cwd=repo)


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git("init", "-q", cwd=path)
    return path


def url(path: Path) -> str:
    return path.as_uri()


@dataclass(frozen=True, kw_only=True)
class FakeRemotes:
    pytorch: Path
    sub: Path
    triton: Path
    tags: dict[str, str]  # tag -> commit
    sub_commits: dict[str, str]  # tag -> submodule commit recorded there
    triton_commits: tuple[str, str, str]  # t1, t2 (pinned by v2.9.1, not a tip), t3 (main tip)
    main_commit: str

    @property
    def pytorch_url(self) -> str:
        return url(self.pytorch)

    @property
    def mirrors(self) -> dict[str, str]:
        return {SUB_URL: url(self.sub)}


def _set_gitlink(repo: Path, path: str, commit: str) -> None:
    git("update-index", "--add", "--cacheinfo", f"160000,{commit},{path}", cwd=repo)


def build_remotes(root: Path) -> FakeRemotes:
    sub = new_repo(root / "sub")
    s1 = commit_files(sub, {"sub.c": "int one;\n"}, "sub 1")
    s2 = commit_files(sub, {"sub.c": "int two;\n"}, "sub 2")

    triton = new_repo(root / "triton")
    t1 = commit_files(triton, {"python/triton/__init__.py": "__version__ = '3.0.0'\n"}, "t1")
    t2 = commit_files(triton, {"python/triton/__init__.py": "__version__ = '3.5.1'\n"}, "t2")
    t3 = commit_files(triton, {"python/triton/__init__.py": "__version__ = '3.6.0'\n"}, "t3")

    torch = new_repo(root / "pytorch")
    pins = ".ci/docker/ci_commit_pins"
    gitmodules = f'[submodule "sub"]\n\tpath = third_party/sub\n\turl = {SUB_URL}\n'
    tags: dict[str, str] = {}
    (torch / ".gitmodules").write_text(gitmodules)
    git("add", ".gitmodules", cwd=torch)
    _set_gitlink(torch, "third_party/sub", s1)
    tags["v2.4.0"] = commit_files(
        torch,
        {
            "version.txt": "2.4.0a0\n",
            "src/a.py": "def f():\n    return 1\n\n\ndef g():\n    return 2\n",
            f"{pins}/triton-rocm.txt": t1 + "\n",
            f"{pins}/triton.txt": t3 + "\n",
            ".ci/docker/triton_version.txt": "3.0.0\n",
        },
        "2.4",
    )
    git("tag", "-a", "v2.4.0", "-m", "v2.4.0", cwd=torch)
    tags["v2.8.0"] = commit_files(
        torch,
        {
            "version.txt": "2.8.0a0\n",
            f"{pins}/triton-rocm.txt": None,
            f"{pins}/triton.txt": t1 + "\n",
            ".ci/docker/triton_version.txt": "3.4.0\n",
        },
        "2.8",
    )
    git("tag", "v2.8.0", cwd=torch)
    _set_gitlink(torch, "third_party/sub", s2)
    tags["v2.9.1"] = commit_files(
        torch,
        {
            "version.txt": "2.9.1\n",
            f"{pins}/triton.txt": t2 + "\n",
            ".ci/docker/triton_version.txt": "3.5.1\n",
        },
        "2.9.1",
    )
    git("tag", "-a", "v2.9.1", "-m", "v2.9.1", cwd=torch)
    main = commit_files(torch, {"version.txt": "2.10.0a0\n"}, "main moves on")
    return FakeRemotes(
        pytorch=torch,
        sub=sub,
        triton=triton,
        tags=tags,
        sub_commits={"v2.4.0": s1, "v2.8.0": s1, "v2.9.1": s2},
        triton_commits=(t1, t2, t3),
        main_commit=main,
    )


def make_patch(
    base_repo: Path, ref: str, files: dict[str, str], header: str, out: Path, *, work: Path
) -> Path:
    """A `git format-patch` file changing `files` on top of `ref`, with `header` in the message."""
    clone = work / f"patch-src-{out.stem}"
    git("clone", "-q", url(base_repo), str(clone), cwd=work)
    git("checkout", "-q", "--detach", ref, cwd=clone)
    commit_files(clone, files, f"{out.stem}\n\n{header}")
    produced = git("format-patch", "-1", "-o", str(work / "fp"), "HEAD", cwd=clone).splitlines()[-1]
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(produced).rename(out)
    return out


def tree_state(tree: Path) -> tuple[str, str, str]:
    """HEAD, `git status --porcelain` (untracked too) and submodule status: 'tree as it was'."""
    return (
        git("rev-parse", "HEAD", cwd=tree),
        git("status", "--porcelain", "--ignore-submodules=none", cwd=tree),
        git("submodule", "status", "--recursive", cwd=tree),
    )
