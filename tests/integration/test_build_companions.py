"""`invoke build --with torchvision,torchaudio` end to end (issue 19, build side).

Three real git remotes made here: the fixture torch (tests/fixtures/fakepytorch, tag v2.8.0),
the fixture torchvision (tests/fixtures/fakevision, tags v0.23.0 and v0.24.0, and a branch whose
version.txt says 0.24) and the fixture torchaudio (tests/fixtures/fakeaudio, tag v2.8.0). Each
companion's setup.py imports the fixture torch installed in the build venv and compiles one HIP
kernel with clang-22 per target in PYTORCH_ROCM_ARCH into a real wheel; the test reads the
offload bundles back with clang-offload-bundler-22 and `invoke inspect`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import pytest
from buildhelpers import assert_manifest_describes_wheel, wheel_so_targets
from gitfixtures import git, make_patch

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "tests" / "fixtures"
LLVM22 = Path("/usr/lib/llvm-22/bin")
TARGETS = "gfx1100;gfx942"

pytestmark = [pytest.mark.slow, pytest.mark.needs_tool("clang-22", "clang-offload-bundler-22",
                                                       "git")]


def fixture_remote(source: Path, dest: Path, tag: str) -> Path:
    """A git repository of `source`'s files, committed and tagged `tag`."""
    shutil.copytree(source, dest)
    git("init", "-q", cwd=dest)
    git("add", "-A", cwd=dest)
    git("commit", "-q", "-m", f"fixture {tag}", cwd=dest)
    git("tag", tag, cwd=dest)
    return dest


def head_of(repo: Path, ref: str) -> str:
    return git("rev-parse", f"{ref}^{{commit}}", cwd=repo)


def argv(task: str, work: Path, repo: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "invoke", task, "--arch", TARGETS, "--work-dir", str(work),
            "--repo", str(repo), "--ref", "v2.8.0", "--clang", "22", "--triton", "skip",
            "--skip-preflight", "--system-site-packages", *extra]


def env_for(remotes: dict[str, Path]) -> dict[str, str]:
    env = dict(os.environ)
    env["ROCMFORGE_BUILD_ENV"] = f"HIP_CLANG_PATH={LLVM22}"
    env["ROCMFORGE_COMPANION_REPOS"] = ";".join(f"{name}={path.as_uri()}"
                                                for name, path in remotes.items())
    env["HIP_PLATFORM"] = "amd"
    env["NO_COLOR"] = "1"
    return env


def invoke(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=400)


@pytest.fixture(scope="module")
def remotes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("companions")
    torch = fixture_remote(FIXTURES / "fakepytorch", root / "pytorch", "v2.8.0")
    vision = fixture_remote(FIXTURES / "fakevision", root / "vision", "v0.23.0")
    # A later torchvision: a release tag (v0.24.0) and a branch that names no version.
    (vision / "version.txt").write_text("0.24.0a0\n")
    git("checkout", "-q", "-b", "next", cwd=vision)
    git("commit", "-q", "-am", "0.24", cwd=vision)
    git("tag", "v0.24.0", cwd=vision)
    # A maintenance branch of 0.23 (pairs with torch 2.8): another commit to move to.
    git("checkout", "-q", "-b", "maint", "v0.23.0", cwd=vision)
    (vision / "MAINT").write_text("0.23 maintenance\n")
    git("add", "MAINT", cwd=vision)
    git("commit", "-q", "-m", "maint", cwd=vision)
    git("checkout", "-q", "v0.23.0", cwd=vision)
    audio = fixture_remote(FIXTURES / "fakeaudio", root / "audio", "v2.8.0")
    return {"pytorch": torch, "torchvision": vision, "torchaudio": audio}


@pytest.fixture(scope="module")
def built(remotes: dict[str, Path],
          tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, float]:
    work = tmp_path_factory.mktemp("work") / "w"
    companions = {k: v for k, v in remotes.items() if k != "pytorch"}
    started = time.monotonic()
    done = invoke(argv("build", work, remotes["pytorch"], "--with", "torchvision,torchaudio"),
                  env_for(companions))
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return work, done.stdout + done.stderr, seconds


def test_build_with_companions_makes_three_wheels_and_a_manifest_naming_them(
        remotes: dict[str, Path], built: tuple[Path, str, float]) -> None:
    work, out, seconds = built
    print(f"fixture build with two companions: {seconds:.1f} s")
    dist = work / "dist"
    py = f"cp{sys.version_info.major}{sys.version_info.minor}"
    names = sorted(p.name for p in dist.glob("*.whl"))
    assert names == [f"torch-2.8.0a0-{py}-{py}-linux_x86_64.whl",
                     f"torchaudio-2.8.0a0-{py}-{py}-linux_x86_64.whl",
                     f"torchvision-0.23.0a0-{py}-{py}-linux_x86_64.whl"]
    manifest = json.loads((dist / "manifest.json").read_text())
    assert manifest["wheels"] == {"torch": names[0], "triton": "", "torchaudio": names[1],
                                  "torchvision": names[2]}
    vision, audio = manifest["companions"]["torchvision"], manifest["companions"]["torchaudio"]
    assert vision["commit"] == head_of(remotes["torchvision"], "v0.23.0")
    assert audio["commit"] == head_of(remotes["torchaudio"], "v2.8.0")
    assert (vision["ref"], vision["version"], vision["repo"]) == (
        "v0.23.0", "0.23.0a0", remotes["torchvision"].as_uri())
    assert (audio["ref"], audio["version"]) == ("v2.8.0", "2.8.0a0")
    assert vision["torch"] == audio["torch"] == "2.8.0a0"
    assert vision["requires"] == "==2.8.*" and vision["patches"] == []
    assert manifest["source"]["commit"] == head_of(remotes["pytorch"], "v2.8.0")
    # Same checks as every fixture build, companions included (wheel, commit, sha, targets).
    assert_manifest_describes_wheel(work)
    # The companion .so files carry the same targets as torch's, and were built against it.
    assert wheel_so_targets(dist / names[2]) == {"torchvision/_C.so": ["gfx1100", "gfx942"]}
    assert wheel_so_targets(dist / names[1]) == {
        "torchaudio/lib/libtorchaudio.so": ["gfx1100", "gfx942"]}
    with zipfile.ZipFile(dist / names[2]) as archive:
        assert "torch_version = '2.8.0a0'" in archive.read("torchvision/version.py").decode()
    # The companion steps ran after torch's install, in order, with their own logs.
    order = [line.split("] ", 1)[1].split(":", 1)[0] for line in out.splitlines()
             if line.startswith("==> [")]
    assert order[order.index("install"):] == [
        "install", "torchvision-checkout", "torchvision-pairing", "torchvision-patches",
        "torchvision-build", "torchaudio-checkout", "torchaudio-pairing", "torchaudio-patches",
        "torchaudio-build", "companions-collect", "companions-install"]
    build_log = (work / "logs" / "torchvision-build.log").read_text()
    assert "FORCE_CUDA=True" in build_log and "against torch 2.8.0a0" in build_log
    assert "--offload-arch=gfx1100 --offload-arch=gfx942" in build_log
    assert "USE_ROCM=True" in (work / "logs" / "torchaudio-build.log").read_text()
    pairing_log = (work / "logs" / "torchvision-pairing.log").read_text()
    assert (f"torchvision 0.23.0a0 (from {work / 'src' / 'torchvision' / 'version.txt'}) needs "
            "torch ==2.8.*; the build venv has torch 2.8.0a0") in pairing_log
    # The build venv has all three installed.
    listed = subprocess.run([str(work / "venv" / "bin" / "python"), "-m", "pip", "list",
                             "--format=json", "--disable-pip-version-check"],
                            capture_output=True, text=True, check=True).stdout
    versions = {d["name"].lower(): d["version"] for d in json.loads(listed)}
    assert (versions["torchvision"], versions["torchaudio"]) == ("0.23.0a0", "2.8.0a0")


def test_inspect_of_dist_shows_the_companion_targets(built: tuple[Path, str, float]) -> None:
    work, _, _ = built
    done = subprocess.run([sys.executable, "-m", "invoke", "inspect", str(work / "dist"),
                           "--expect", TARGETS, "--json"], cwd=REPO_ROOT,
                          env={**os.environ, "NO_COLOR": "1"}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    doc = json.loads(done.stdout)
    by_path = {lib["path"]: lib for lib in doc["libraries"]}
    for member in ("torchvision/_C.so", "torchaudio/lib/libtorchaudio.so",
                   "torch/lib/libtorch_hip.so"):
        found = [lib for path, lib in by_path.items() if path.endswith(member)]
        assert len(found) == 1, (member, sorted(by_path))
        assert sorted(found[0]["targets"]) == ["gfx1100", "gfx942"], found[0]


def test_rerun_is_a_noop_and_plan_shows_the_companion_steps(
        remotes: dict[str, Path], built: tuple[Path, str, float]) -> None:
    work, _, _ = built
    env = env_for({k: v for k, v in remotes.items() if k != "pytorch"})
    again = invoke(argv("build", work, remotes["pytorch"], "--with", "torchvision,torchaudio"),
                   env)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert "every step is up to date; nothing to do" in again.stdout
    planned = invoke(argv("plan", work, remotes["pytorch"], "--with", "torchvision,torchaudio",
                          "--json"), env)
    assert planned.returncode == 0, planned.stderr
    doc = json.loads(planned.stdout)
    steps = {s["name"]: s for s in doc["steps"]}
    build = steps["torchvision-build"]
    assert build["argv"] == [str(work / "venv" / "bin" / "python"), "-m", "pip", "wheel",
                             "--verbose", "--no-build-isolation", "--no-deps", "--wheel-dir",
                             str(work / "src" / "torchvision" / "dist"), "."]
    assert build["env"]["FORCE_CUDA"] == "1" and build["env"]["PYTORCH_ROCM_ARCH"] == TARGETS
    assert steps["torchaudio-build"]["env"]["USE_ROCM"] == "1"
    assert steps["torchvision-checkout"]["inputs"]["ref"] == "v0.23.0"
    assert [c["ref"] for c in doc["settings"]["companions"]] == ["v0.23.0", "v2.8.0"]
    dry = subprocess.run([sys.executable, "-m", "invoke", "--dry",
                          *argv("build", work, remotes["pytorch"], "--with",
                                "torchvision")[3:]],
                         cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=200)
    assert dry.returncode == 0, dry.stderr
    assert "torchvision-pairing: done (stamp matches), would skip" in dry.stdout
    assert "torchaudio" not in dry.stdout.split("==>", 1)[1]


def test_a_stray_wheel_in_dist_reruns_only_the_collect_steps_then_install_works(
        remotes: dict[str, Path], built: tuple[Path, str, float]) -> None:
    """A wheel put into dist/ by hand: `invoke install` refuses it (exit 2); `invoke build`
    runs only the two collect steps (no build), removes the wheel and says so in one line;
    `invoke install` then installs the three recorded wheels (defect 4 of the user review)."""
    from buildhelpers import make_wheel

    work, _, _ = built
    env = env_for({k: v for k, v in remotes.items() if k != "pytorch"})
    stray = make_wheel(work / "dist", "stray", "1.0", {"stray/__init__.py": ""})
    listed = sorted(p.name for p in (work / "dist").glob("*.whl") if p != stray)
    install = [sys.executable, "-m", "invoke", "install", "--work-dir", str(work)]
    refused = invoke(install, env)
    assert refused.returncode == 2, refused.stdout[-2000:] + refused.stderr[-2000:]
    assert f"{stray} is in dist/ but manifest.json does not list it" in \
        " ".join(refused.stderr.split())
    dry = invoke([sys.executable, "-m", "invoke", "--dry",
                  *argv("build", work, remotes["pytorch"], "--with",
                        "torchvision,torchaudio")[3:]], env)
    assert dry.returncode == 0, dry.stderr
    would = [line.split("] ", 1)[1] for line in dry.stdout.splitlines()
             if line.startswith("==> [") and "would run" in line]
    assert would == [f"{name}: stamp matches, would run again (dist/ holds a wheel the manifest "
                     "does not list)" for name in ("collect", "companions-collect")]
    assert stray.exists()
    again = invoke(argv("build", work, remotes["pytorch"], "--with", "torchvision,torchaudio"),
                   env)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    ran = [line.split("] ", 1)[1].split(":", 1)[0] for line in again.stdout.splitlines()
           if line.startswith("==> [")]
    assert ran == ["collect", "companions-collect"], again.stdout[-3000:]
    assert (f"==> dist/ holds {stray.name}, which its manifest does not list: collect, "
            "companions-collect run again, the builds stay done") in again.stdout
    removed = [line for line in again.stdout.splitlines() if "removed " in line]
    assert removed == [f"    removed {stray}: no build listed it (dist/ holds only the kit's "
                       "wheels)"], again.stdout[-3000:]
    assert "every other step is up to date." in again.stdout
    assert not stray.exists()
    assert sorted(p.name for p in (work / "dist").glob("*.whl")) == listed
    assert_manifest_describes_wheel(work)
    # The next build has nothing to do; install takes the three recorded wheels.
    noop = invoke(argv("build", work, remotes["pytorch"], "--with", "torchvision,torchaudio"),
                  env)
    assert "every step is up to date; nothing to do" in noop.stdout, noop.stdout[-2000:]
    done = invoke(install, env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.startswith(f"+ {work / 'venv' / 'bin' / 'python'} -m pip install "
                                  "--no-deps --force-reinstall ")
    assert sorted(Path(w).name for w in done.stdout.splitlines()[0].split()[7:]) == listed


def test_a_branch_of_another_torch_is_refused_before_any_step(
        remotes: dict[str, Path], built: tuple[Path, str, float]) -> None:
    """A branch names no version: the build reads the version.txt the branch holds (a shallow
    fetch into a scratch repository) before torch's first step, and refuses it with both
    versions named; nothing in the finished build changes."""
    work, _, _ = built
    env = env_for({k: v for k, v in remotes.items() if k != "pytorch"})
    wheels_before = sorted(p.name for p in (work / "dist").glob("*.whl"))
    stamps_before = sorted(p.name for p in (work / "state" / "stamps").iterdir())
    head_before = git("rev-parse", "HEAD", cwd=work / "src" / "torchvision")
    refused = invoke(argv("build", work, remotes["pytorch"], "--with", "torchvision@next"), env)
    assert refused.returncode == 2, refused.stdout[-3000:] + refused.stderr[-3000:]
    err = " ".join(refused.stderr.split())
    assert ("torchvision 0.24.0a0 (the ref next, whose version.txt says 0.24.0a0) needs torch "
            "==2.9.*, but this build makes torch 2.8.0") in err
    assert "==>" not in refused.stdout and "Traceback" not in refused.stderr
    assert sorted(p.name for p in (work / "dist").glob("*.whl")) == wheels_before
    assert sorted(p.name for p in (work / "state" / "stamps").iterdir()) == stamps_before
    assert git("rev-parse", "HEAD", cwd=work / "src" / "torchvision") == head_before
    # The pairing release still builds: nothing to do.
    back = invoke(argv("build", work, remotes["pytorch"], "--with", "torchvision,torchaudio"),
                  env)
    assert back.returncode == 0, back.stdout[-3000:] + back.stderr[-3000:]
    assert "torchvision-build: done (stamp matches), skipped" in back.stdout
    assert_manifest_describes_wheel(work)


def test_local_changes_in_a_companion_tree_are_never_overwritten(
        remotes: dict[str, Path], built: tuple[Path, str, float]) -> None:
    """No patch of the kit applies to the fixture torchvision, so an edit there is the user's:
    a move to another ref stops (exit 2, DirtyTree) and the edit stays."""
    work, _, _ = built
    env = env_for({k: v for k, v in remotes.items() if k != "pytorch"})
    edited = work / "src" / "torchvision" / "README.md"
    edited.write_text(edited.read_text() + "my note\n")
    head = git("rev-parse", "HEAD", cwd=work / "src" / "torchvision")
    refused = invoke(argv("build", work, remotes["pytorch"], "--with", "torchvision@maint"),
                     env)
    assert refused.returncode == 2, refused.stdout[-3000:] + refused.stderr[-3000:]
    err = " ".join(refused.stderr.split())
    assert f"{work / 'src' / 'torchvision'} has local changes (1 path: README.md)" in err
    assert "not checking out maint" in err
    assert edited.read_text().endswith("my note\n")
    assert git("rev-parse", "HEAD", cwd=work / "src" / "torchvision") == head
    git("checkout", "--", "README.md", cwd=work / "src" / "torchvision")


def test_a_companion_patch_is_applied_listed_and_set_aside_when_the_ref_moves(
        remotes: dict[str, Path], built: tuple[Path, str, float], tmp_path: Path) -> None:
    work, _, _ = built
    tree = work / "src" / "torchvision"
    series = tmp_path / "series"
    patch = make_patch(remotes["torchvision"], "v0.23.0", {"README.md": "patched by the kit\n"},
                       "Applies-To: >=0.23,<0.24\nWhy: fixture edit\nUpstream: local",
                       series / "torchvision" / "0001-readme.patch", work=tmp_path)
    env = {**env_for({k: v for k, v in remotes.items() if k != "pytorch"}),
           "ROCMFORGE_PATCHES_DIR": str(series)}
    done = invoke(argv("build", work, remotes["pytorch"], "--with", "torchvision,torchaudio"),
                  env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (tree / "README.md").read_text() == "patched by the kit\n"
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    assert manifest["companions"]["torchvision"]["patches"] == [
        {"file": "torchvision/0001-readme.patch",
         "sha256": hashlib.sha256(patch.read_bytes()).hexdigest()}]
    assert manifest["companions"]["torchaudio"]["patches"] == []
    assert_manifest_describes_wheel(work, str(series))
    # The kit's patch is set aside (stashed, not lost) when the ref moves, and the series is
    # applied again to the new tree (0.23 maintenance: the same Applies-To range).
    moved = invoke(argv("build", work, remotes["pytorch"], "--with", "torchvision@maint"), env)
    assert moved.returncode == 0, moved.stdout[-3000:] + moved.stderr[-3000:]
    assert "set aside the kit's patches of" in moved.stdout + moved.stderr
    assert "kit patches of torchvision" in git("stash", "list", cwd=tree)
    assert (tree / "MAINT").is_file() and (tree / "README.md").read_text() == \
        "patched by the kit\n"
    moved_doc = json.loads((work / "dist" / "manifest.json").read_text())
    assert moved_doc["companions"]["torchvision"]["ref"] == "maint"
    assert moved_doc["companions"]["torchvision"]["commit"] == head_of(remotes["torchvision"],
                                                                        "maint")
    back = invoke(argv("build", work, remotes["pytorch"], "--with", "torchvision,torchaudio"),
                  env)
    assert back.returncode == 0, back.stdout[-3000:] + back.stderr[-3000:]
    assert (tree / "README.md").read_text() == "patched by the kit\n"
    assert_manifest_describes_wheel(work, str(series))


def test_mismatched_companion_tag_is_refused_before_any_step(
        remotes: dict[str, Path], tmp_path: Path) -> None:
    work = tmp_path / "work"
    env = env_for({k: v for k, v in remotes.items() if k != "pytorch"})
    for task in ("build", "plan"):
        refused = invoke(argv(task, work, remotes["pytorch"], "--with",
                              "torchvision@v0.24.0,torchaudio"), env)
        assert refused.returncode == 2, refused.stdout[-3000:] + refused.stderr[-3000:]
        err = " ".join(refused.stderr.split())
        assert ("torchvision 0.24.0 (the ref v0.24.0) needs torch ==2.9.*, but this build "
                "makes torch 2.8.0") in err
        assert "Traceback" not in refused.stderr and "==>" not in refused.stdout
        assert not (work / "dist").exists() and not (work / "state" / "stamps").exists()
        assert not (work / "src").exists()


def test_unknown_companion_is_one_paragraph_exit_2(remotes: dict[str, Path],
                                                   tmp_path: Path) -> None:
    refused = invoke(argv("plan", tmp_path / "w", remotes["pytorch"], "--with",
                          "torchvison"), env_for({}))
    assert refused.returncode == 2
    err = " ".join(refused.stderr.split())
    assert ("'torchvison' (--with / setting companions) is no companion or extension the kit "
            "builds.") in err
    assert 'Did you mean "torchvision"?' in err
    assert "Traceback" not in refused.stderr


def test_the_lock_records_the_companion_and_a_locked_build_gets_its_commit(
        remotes: dict[str, Path], built: tuple[Path, str, float], tmp_path: Path) -> None:
    """Issue 19 follow-up: the lock records each built companion; after the companion's tag
    moves upstream, `build --lock` builds the locked commit, and a --with that asks for other
    companions than the lock is refused. Last in this file: it moves the shared remote's tag
    (and puts it back)."""
    work, _, _ = built
    vision = remotes["torchvision"]
    env = env_for({k: v for k, v in remotes.items() if k != "pytorch"})
    first = invoke(argv("build", work, remotes["pytorch"], "--with", "torchvision"), env)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    # torchaudio, built by the earlier --with torchvision,torchaudio, leaves dist/ and the manifest
    assert not list((work / "dist").glob("torchaudio-*.whl"))
    assert "torchaudio" not in json.loads((work / "dist" / "manifest.json").read_text())["wheels"]
    locked_commit = head_of(vision, "v0.23.0")
    lock_doc = tomllib.loads((work / "rocmforge.lock").read_text())
    assert lock_doc["companions"] == [{"name": "torchvision", "repo": vision.as_uri(),
                                       "ref": "v0.23.0", "commit": locked_commit,
                                       "version": "0.23.0a0"}]
    lock = tmp_path / "rocmforge.lock"
    shutil.copyfile(work / "rocmforge.lock", lock)
    # The tag moves upstream to a new commit (same version.txt, so it would pair too).
    git("checkout", "-q", "-b", "moved", "v0.23.0", cwd=vision)
    (vision / "moved.txt").write_text("after the lock\n")
    git("add", "moved.txt", cwd=vision)
    git("commit", "-q", "-m", "moved", cwd=vision)
    git("tag", "-f", "v0.23.0", cwd=vision)
    moved = head_of(vision, "v0.23.0")
    assert moved != locked_commit
    try:
        refused = invoke(argv("plan", work, remotes["pytorch"], "--lock", str(lock), "--with",
                              "torchaudio"), env)
        assert refused.returncode == 2, refused.stdout[-3000:] + refused.stderr[-3000:]
        err = " ".join(refused.stderr.split())
        assert (f"--with torchaudio is not what {lock} locks (torchvision "
                f"{locked_commit[:12]}); it differs in torchaudio, torchvision.") in err
        assert "Traceback" not in refused.stderr
        planned = invoke(argv("plan", work, remotes["pytorch"], "--lock", str(lock), "--with",
                              "torchvision"), env)
        assert planned.returncode == 0, planned.stderr
        assert (f"torchvision {locked_commit} (v0.23.0 of {vision.as_uri()}), 0 patches, as "
                "locked") in " ".join(planned.stderr.split())
        done = invoke(argv("build", work, remotes["pytorch"], "--lock", str(lock)), env)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert "torchvision-checkout" in done.stdout  # the companion was checked out again
        tree = work / "src" / "torchvision"
        assert git("rev-parse", "HEAD", cwd=tree) == locked_commit
        assert not (tree / "moved.txt").exists()
        manifest = json.loads((work / "dist" / "manifest.json").read_text())
        assert manifest["companions"]["torchvision"]["commit"] == locked_commit
        assert manifest["companions"]["torchvision"]["ref"] == locked_commit
        assert manifest["lock"]["companions"] == lock_doc["companions"]
        # The lock the locked build wrote is the lock it was given (the tag kept as the ref).
        assert (work / "rocmforge.lock").read_text() == lock.read_text()
        assert_manifest_describes_wheel(work)
    finally:
        git("tag", "-f", "v0.23.0", locked_commit, cwd=vision)
        git("checkout", "-q", "--detach", "v0.23.0", cwd=vision)


def test_a_build_without_companions_takes_the_earlier_ones_out_of_dist(
        remotes: dict[str, Path], built: tuple[Path, str, float]) -> None:
    """The manifest describes only what this build made: after a `--with` build, a build
    without it removes the companion wheels from dist/, the manifest and the lock (once: the
    next plan has no such step), and a later `--with` adds them back."""
    work, _, _ = built
    env = env_for({k: v for k, v in remotes.items() if k != "pytorch"})
    assert list((work / "dist").glob("torchvision-*.whl"))
    plain = invoke(argv("build", work, remotes["pytorch"]), env)
    assert plain.returncode == 0, plain.stdout[-3000:] + plain.stderr[-3000:]
    assert "companions-clear" in plain.stdout
    assert not list((work / "dist").glob("torchvision-*.whl"))
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    assert "companions" not in manifest and "torchvision" not in manifest["wheels"]
    assert "companions" not in manifest["settings"]  # this build asked for none
    assert "companions" not in tomllib.loads((work / "rocmforge.lock").read_text())
    assert_manifest_describes_wheel(work)
    again = invoke(argv("plan", work, remotes["pytorch"]), env)
    assert again.returncode == 0 and "companions-clear" not in again.stdout
    back = invoke(argv("build", work, remotes["pytorch"], "--with", "torchvision"), env)
    assert back.returncode == 0, back.stdout[-3000:] + back.stderr[-3000:]
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    assert manifest["companions"]["torchvision"]["wheel"] in manifest["wheels"].values()
    assert [c["name"] for c in manifest["settings"]["companions"]] == ["torchvision"]
    assert (work / "dist" / manifest["wheels"]["torchvision"]).is_file()
    assert_manifest_describes_wheel(work)
