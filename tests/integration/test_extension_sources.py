"""Issue 39 items 1-3: every `--with` source form builds, every word is resolved before any
step (bad input: exit 2, nothing written), and each extension is its own unit of the steps.

Through the CLI (`invoke build`), on fixtures: real git remotes made here (fakepytorch v2.8.0,
fakeflashattn v2.8.3, copies of fakeext under other package names), real `git ls-remote`,
clang-22 compiling each extension's HIP kernel, real pip.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import tomllib
from gitfixtures import git
from test_build_companions import env_for, fixture_remote, invoke
from test_build_extensions import build_argv

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "tests" / "fixtures"

pytestmark = [pytest.mark.slow, pytest.mark.needs_tool("clang-22", "clang-offload-bundler-22",
                                                       "git", "cmake")]


def make_ext(dest: Path, package: str) -> Path:
    """fakeext as another package (its own wheel name), in `dest`."""
    shutil.copytree(FIXTURES / "fakeext", dest)
    (dest / "rfext").rename(dest / package)
    setup = dest / "setup.py"
    setup.write_text(setup.read_text().replace('"rfext"', f'"{package}"'))
    return dest


def as_repo(folder: Path, tag: str = "") -> Path:
    git("init", "-q", cwd=folder)
    git("add", "-A", cwd=folder)
    git("commit", "-q", "-m", "fixture", cwd=folder)
    if tag:
        git("tag", tag, cwd=folder)
    return folder


@pytest.fixture(scope="module")
def remotes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sources")
    return {"pytorch": fixture_remote(FIXTURES / "fakepytorch", root / "pytorch", "v2.8.0"),
            "flash-attention": fixture_remote(FIXTURES / "fakeflashattn", root / "fa",
                                              "v2.8.3"),
            "alpha-ext": as_repo(make_ext(root / "alpha-ext", "alphaext"), "v0.1.0")}


def _env(remotes: dict[str, Path]) -> dict[str, str]:
    return env_for({"flash-attention": remotes["flash-attention"]})


def ran_steps(output: str) -> list[str]:
    """The steps a build ran ("==> [3/20] name: why"), in order."""
    return re.findall(r"^==> \[\d+/\d+\] ([\w.-]+): (?!re-check)", output, re.MULTILINE)


def snapshot(root: Path) -> dict[str, bytes]:
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"<dir>"
            for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize(("word", "start"), [
    ("flash-attention@nosuch", "rocmforge: 'nosuch' is no tag or branch of "),
    ("./no-such-folder", "rocmforge: './no-such-folder' (--with) names no folder: "),
    ("{empty}", "rocmforge: {empty} (--with) has no setup.py or pyproject.toml."),
    ("git+github.com/acme/ops.git", "rocmforge: 'git+github.com/acme/ops.git' (--with) is no "
     "git URL."),
    ("git+file:///no/such/repo@v1", "rocmforge: file:///no/such/repo (--with "
     "git+file:///no/such/repo@v1, for repo) does not exist."),
    ("git+{alpha}@v9.9", "rocmforge: 'v9.9' is no tag or branch of "),
    ("git+{alpha},{alpha_folder}", "rocmforge: alpha-ext is named twice in --with "),
])
def test_bad_with_input_stops_before_any_step_and_writes_nothing(
        remotes: dict[str, Path], tmp_path: Path, word: str, start: str) -> None:
    """Exit 2, one paragraph, no traceback; an earlier build's work dir (dist/ and its
    manifest, the state) is left byte for byte as it was."""
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "README.md").write_text("no build here\n")
    alpha_folder = tmp_path / "x" / "alpha-ext"
    make_ext(alpha_folder, "alphaext")
    fields = {"empty": str(empty), "alpha": remotes["alpha-ext"].as_uri(),
              "alpha_folder": str(alpha_folder)}
    word, start = word.format(**fields), start.format(**fields)
    work = tmp_path / "work"
    (work / "dist").mkdir(parents=True)
    (work / "dist" / "manifest.json").write_text('{"schema": "an earlier build"}\n')
    (work / "state").mkdir()
    before = snapshot(work)
    done = invoke(build_argv("build", work, remotes["pytorch"], "gfx942", word), _env(remotes))
    assert done.returncode == 2, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stderr.startswith(start), done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert snapshot(work) == before


def test_every_source_form_builds_and_each_extension_is_its_own_unit(
        remotes: dict[str, Path], tmp_path: Path) -> None:
    """A recipe at a tag, git+URL without a ref (its default branch), a plain folder whose path
    has a space: one build. Then a git folder is added: only its own steps run (and the
    shared collect and install); then the plain folder is dropped: it leaves dist/, the
    manifest and the lock, and nothing is rebuilt."""
    work = tmp_path / "work"
    folder = make_ext(tmp_path / "my sources" / "gamma-ext", "gammaext")
    default = git("symbolic-ref", "--short", "HEAD", cwd=remotes["alpha-ext"])
    words = f"flash-attention@v2.8.3,git+{remotes['alpha-ext'].as_uri()},{folder}"
    first = invoke(build_argv("build", work, remotes["pytorch"], "gfx942", words),
                   _env(remotes))
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-4000:]
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    built = manifest["companions"]
    assert list(built) == ["flash-attention", "alpha-ext", "gamma-ext"]
    alpha_head = git("rev-parse", "HEAD", cwd=remotes["alpha-ext"])
    assert (built["alpha-ext"]["ref"], built["alpha-ext"]["commit"]) == (default, alpha_head)
    gamma = built["gamma-ext"]
    assert gamma["version"].startswith("sha256:") and gamma["commit"] == ""
    assert gamma["repo"] == str(folder) and gamma["wheel"].startswith("gammaext-0.1.0-")
    lock = (work / "rocmforge.lock").read_text()
    assert f'version = "{gamma["version"]}"' in lock and 'name = "alpha-ext"' in lock
    # The lock's versions are the manifest's: the git URL's wheel version (0.1.0) too.
    assert {c["name"]: c["version"] for c in tomllib.loads(lock)["companions"]} == {
        name: entry["version"] for name, entry in built.items()}
    assert built["alpha-ext"]["version"] == "0.1.0"
    assert not (folder / "build").exists()  # the build ran in the work dir's copy

    beta = as_repo(make_ext(tmp_path / "my sources" / "beta-ext", "betaext"))
    second = invoke(build_argv("build", work, remotes["pytorch"], "gfx942",
                               f"{words},{beta}"), _env(remotes))
    assert second.returncode == 0, second.stdout[-4000:] + second.stderr[-4000:]
    assert ran_steps(second.stdout) == ["beta-ext-checkout", "beta-ext-pairing",
                                        "beta-ext-patches", "beta-ext-build",
                                        "companions-collect", "companions-install"]
    entry = json.loads((work / "dist" / "manifest.json").read_text())["companions"]["beta-ext"]
    assert entry["commit"] == entry["ref"] == git("rev-parse", "HEAD", cwd=beta)

    # The lock reproduces all four forms in a fresh work dir: the recipe, the git URL and the
    # git folder (git+file:///...@commit) at their commits, the plain folder from its path (its
    # digest is its version there).
    built = json.loads((work / "dist" / "manifest.json").read_text())["companions"]
    again = tmp_path / "again"
    argv = build_argv("build", again, remotes["pytorch"], "gfx942", words)
    argv = argv[:argv.index("--with")] + ["--lock", str(work / "rocmforge.lock")]
    locked = invoke(argv, _env(remotes))
    assert locked.returncode == 0, locked.stdout[-4000:] + locked.stderr[-4000:]
    rebuilt = json.loads((again / "dist" / "manifest.json").read_text())["companions"]
    assert list(rebuilt) == ["flash-attention", "alpha-ext", "gamma-ext", "beta-ext"]
    assert {n: (e["commit"], e["version"]) for n, e in rebuilt.items()} == {
        n: (e["commit"], e["version"]) for n, e in built.items()}

    # ... but not from a folder whose files changed since: exit 2, both digests named.
    marker = folder / "gammaext" / "extra.py"
    marker.write_text("CHANGED = True\n")
    changed = invoke(argv, _env(remotes))
    assert changed.returncode == 2, changed.stdout[-3000:] + changed.stderr[-3000:]
    assert changed.stderr.startswith(f"rocmforge: {folder} is not the folder "
                                     f"{work / 'rocmforge.lock'} locks: its files' digest is ")
    marker.unlink()

    # Bump one: a file of the plain folder edited. Its steps run last, and alone.
    source = folder / "gammaext" / "__init__.py"
    source.write_text(source.read_text() + "# edited\n")
    edited = invoke(build_argv("build", work, remotes["pytorch"], "gfx942",
                               f"{words},{beta}"), _env(remotes))
    assert edited.returncode == 0, edited.stdout[-4000:] + edited.stderr[-4000:]
    assert ran_steps(edited.stdout) == ["gamma-ext-checkout", "gamma-ext-pairing",
                                        "gamma-ext-patches", "gamma-ext-build",
                                        "companions-collect", "companions-install"]
    assert json.loads((work / "dist" / "manifest.json").read_text())["companions"][
        "gamma-ext"]["version"] != gamma["version"]

    third = invoke(build_argv("build", work, remotes["pytorch"], "gfx942",
                              f"flash-attention@v2.8.3,git+{remotes['alpha-ext'].as_uri()},"
                              f"{beta}"), _env(remotes))
    assert third.returncode == 0, third.stdout[-4000:] + third.stderr[-4000:]
    assert ran_steps(third.stdout) == ["companions-collect", "companions-install"]
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    assert list(manifest["companions"]) == ["flash-attention", "alpha-ext", "beta-ext"]
    # The settings record what this build asked for (torch's collect, which writes them, did
    # not run): the same three, not the earlier build's.
    assert [c["name"] for c in manifest["settings"]["companions"]] == list(manifest["companions"])
    assert not list((work / "dist").glob("gammaext-*.whl"))
    assert "gamma-ext" not in (work / "rocmforge.lock").read_text()


def test_an_explicit_source_wins_over_companion_repos_and_the_plan_says_so(
        remotes: dict[str, Path], tmp_path: Path) -> None:
    """A fork of flash-attention named by git+URL: the companion_repos entry for
    flash-attention (the env's mirror) is not used, and `invoke plan` says so."""
    fork = fixture_remote(FIXTURES / "fakeflashattn", tmp_path / "forks" / "flash-attention",
                          "v2.8.3-fork")
    word = f"git+{fork.as_uri()}@v2.8.3-fork"
    done = invoke(build_argv("plan", tmp_path / "work", remotes["pytorch"], "gfx942", word)
                  + ["--json"], _env(remotes))
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    chosen = next(c for c in plan["settings"]["companions"] if c["name"] == "flash-attention")
    assert (chosen["repo"], chosen["ref"], chosen["form"]) == (fork.as_uri(), "v2.8.3-fork",
                                                               "git")
    assert chosen["commit"] == git("rev-parse", "HEAD", cwd=fork)
    assert (f"flash-attention: built from {fork.as_uri()}, which --with names; the "
            f"companion_repos entry flash-attention={remotes['flash-attention'].as_uri()} is "
            "not used") in plan["notes"]
    checkout = next(s for s in plan["steps"] if s["name"] == "flash-attention-checkout")
    assert checkout["inputs"]["repo"] == fork.as_uri()


def test_a_tree_that_no_longer_reads_the_recipes_variable_is_refused_before_any_step(
        remotes: dict[str, Path], tmp_path: Path) -> None:
    """Issue 39 item 6: the recipe sets GPU_ARCHS; a flash-attention tree whose setup.py reads
    its targets from another variable would build for what that one says (or natively). Read
    at the ref before any step: exit 2, nothing written."""
    fa = fixture_remote(FIXTURES / "fakeflashattn", tmp_path / "fa", "v2.8.3")
    setup = fa / "setup.py"
    setup.write_text(setup.read_text().replace("GPU_ARCHS", "FA_TARGETS"))
    git("commit", "-q", "-am", "another variable", cwd=fa)
    git("tag", "v2.9.0", cwd=fa)
    work = tmp_path / "work"
    done = invoke(build_argv("build", work, remotes["pytorch"], "gfx942",
                             "flash-attention@v2.9.0"), env_for({"flash-attention": fa}))
    assert done.returncode == 2, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stderr.startswith(
        "rocmforge: flash-attention at v2.9.0 reads no GPU_ARCHS in setup.py.")
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert not (work / "src").exists() and not (work / "state" / "stamps").exists()


@pytest.mark.parametrize(("word", "repos", "fix"), [
    ("flash-attention@nosuch-tag", "flash-attention=http://127.0.0.1:1/x.git",
     "pass the companion_repos setting (ROCMFORGE_COMPANION_REPOS=flash-attention="
     "/srv/git/flash-attention.git, "),
    ("git+http://127.0.0.1:1/x.git@v1.0", "",
     "pass --with git+file:///srv/git/x.git@REF, "),
])
def test_an_unreachable_extension_remote_stops_before_any_step(
        remotes: dict[str, Path], tmp_path: Path, word: str, repos: str, fix: str) -> None:
    """Issue 39 item 2: a recipe pointed (companion_repos) at a port nothing listens on, and a
    git URL there, are resolved in the plan: exit 3 before the torch steps, one paragraph
    naming the remote and the offline ways (a mirror, a folder), nothing written."""
    env = _env(remotes)
    env["ROCMFORGE_COMPANION_REPOS"] = repos
    work = tmp_path / "work"
    done = invoke(build_argv("build", work, remotes["pytorch"], "gfx942", word), env)
    assert done.returncode == 3, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stderr.startswith(
        f"rocmforge: Cannot reach http://127.0.0.1:1/x.git to find its ref "
        f"{word.rpartition('@')[2]} for --with {word}; no step ran."), done.stderr
    assert fix in done.stderr and "(--with ./" in done.stderr and "`mirrors` setting" in \
        done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert ran_steps(done.stdout) == [] and not (work / "src").exists()
    assert not (work / "state" / "stamps").exists()
