"""`invoke build --triton source|auto`: Triton built from the pinned checkout, end to end.

A fixture "triton" git repository is generated in tmp: a root `setup.py` (Triton 3.4 layout; the
fixture PyTorch 2.8 pins Triton 3.4.0, and the kit looks for `<triton>/setup.py` first) that, like
upstream Triton's, names the distribution after TRITON_WHEEL_NAME and appends `+git<8 hex>` of
HEAD to the version; the package lives in `python/triton/`. The pinned commit is not a branch tip
(a later commit moves `main` on), so the checkout must fetch exactly the pin. The fixture PyTorch
repository (tests/fixtures/fakepytorch, via test_build_e2e.make_fixture_repo) gets one more
commit that pins it, and its tag moves there. The PyTorch build itself is the e2e fixture's (a HIP
kernel compiled with clang-22), with the same hidden knobs (--skip-preflight,
--system-site-packages, HIP_CLANG_PATH through ROCMFORGE_BUILD_ENV).

Speed: one work dir for the module; the `auto` test reuses it (a new Triton mode redoes the
triton step and the steps after it, not the venv or the checkout).
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from buildhelpers import assert_manifest_describes_wheel
from gitfixtures import commit_files, git, new_repo
from test_build_e2e import REPO_ROOT, build_argv, build_env, make_fixture_repo

pytestmark = [pytest.mark.slow, pytest.mark.needs_tool("clang-22", "clang-offload-bundler-22",
                                                       "git")]

PINS = ".ci/docker/ci_commit_pins/triton.txt"
VERSION_FILE = ".ci/docker/triton_version.txt"
WHEEL_PROJECT = "pytorch-triton-rocm"  # config/pytorch.toml [release."2.8"] triton_wheel

# Upstream Triton's setup.py in miniature: name from TRITON_WHEEL_NAME (default `triton`),
# version from the package plus get_git_version_suffix() (reference pytorch-rocm-build.md §3.4).
TRITON_SETUP = '''\
import os
import re
import subprocess

from setuptools import setup


def git_version_suffix():
    branch = subprocess.run(["git", "rev-parse", "--abbrev-ref", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()
    if branch.startswith("release"):
        return ""
    short = subprocess.run(["git", "rev-parse", "--short=8", "HEAD"], capture_output=True,
                           text=True, check=True).stdout.strip()
    return "+git" + short


init = open(os.path.join("python", "triton", "__init__.py")).read()
version = re.search(r"__version__ = '([^']+)'", init).group(1)
print("fixture triton: building", os.environ.get("TRITON_WHEEL_NAME", "triton"), version)
setup(
    name=os.environ.get("TRITON_WHEEL_NAME", "triton"),
    version=version + git_version_suffix() + os.environ.get("TRITON_WHEEL_VERSION_SUFFIX", ""),
    packages=["triton"],
    package_dir={"triton": "python/triton"},
)
'''


def make_triton_repo(root: Path) -> tuple[Path, str, str]:
    """The fixture Triton remote: (path, pinned commit, later main tip)."""
    repo = new_repo(root / "triton")
    pinned = commit_files(repo, {
        "setup.py": TRITON_SETUP,
        "python/triton/__init__.py": "__version__ = '3.4.0'\nBACKEND = 'fixture-rocm'\n",
        ".gitignore": "build/\n*.egg-info/\n",
    }, "triton 3.4.0 (the pinned commit)")
    tip = commit_files(repo, {"python/triton/__init__.py": "__version__ = '3.5.0'\n"},
                       "main moves on past the pin")
    return repo, pinned, tip


def pin_pytorch_to(repo: Path, commit: str, version: str) -> None:
    """Point the fixture PyTorch's pin files at `commit` and move its v2.8.0 tag there."""
    commit_files(repo, {PINS: commit + "\n", VERSION_FILE: version + "\n"}, "pin fixture triton")
    git("tag", "-f", "v2.8.0", cwd=repo)


def run_build(work: Path, repo: Path, triton: str, environ: dict[str, str], ref: str = "v2.8.0"
              ) -> subprocess.CompletedProcess[str]:
    argv = [a if a != "v2.8.0" else ref for a in build_argv(work, repo, "gfx1100", triton)]
    done = subprocess.run(argv, cwd=REPO_ROOT, env=build_env(**environ), capture_output=True,
                          text=True, timeout=300)
    if done.returncode == 0 and (work / "dist" / "manifest.json").is_file():
        assert_manifest_describes_wheel(work)
    return done


def venv_dists(work: Path) -> dict[str, str]:
    done = subprocess.run([str(work / "venv" / "bin" / "python"), "-m", "pip", "list",
                           "--format=json", "--disable-pip-version-check"],
                          capture_output=True, text=True, check=True)
    return {d["name"].lower(): d["version"] for d in json.loads(done.stdout)}


def triton_providers(work: Path) -> dict[str, str]:
    providers = {"triton", "pytorch-triton", "pytorch-triton-rocm", "triton-rocm"}
    return {name: v for name, v in venv_dists(work).items() if name in providers}


def imported_triton(work: Path) -> str:
    done = subprocess.run([str(work / "venv" / "bin" / "python"), "-c",
                           "import triton; print(triton.__version__, triton.BACKEND)"],
                          capture_output=True, text=True, check=True, cwd=work)
    return done.stdout.strip()


@dataclass(frozen=True, kw_only=True)
class SourceBuild:
    """The module's fixture repositories and work dir after a first `--triton source` build."""

    repo: Path
    triton_repo: Path
    work: Path
    pinned: str
    tip: str
    out: str
    environ: dict[str, str]


@pytest.fixture(scope="module")
def source_build(tmp_path_factory: pytest.TempPathFactory) -> SourceBuild:
    root = tmp_path_factory.mktemp("triton-src")
    triton_repo, pinned, tip = make_triton_repo(root)
    repo = make_fixture_repo(root / "pytorch")
    pin_pytorch_to(repo, pinned, "3.4.0")
    work = root / "work"
    # The fixture Triton is a stub that cannot compile a kernel: allow_triton_gap lets the build
    # go on past the target probe (the gap is in the manifest).
    environ = {"ROCMFORGE_TRITON_REPO": triton_repo.as_uri(), "ROCMFORGE_ALLOW_TRITON_GAP": "true"}
    started = time.monotonic()
    first = run_build(work, repo, "source", environ)
    seconds = time.monotonic() - started
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-3000:]
    print(f"first build with a Triton source build: {seconds:.1f} s")
    return SourceBuild(repo=repo, triton_repo=triton_repo, work=work, pinned=pinned, tip=tip,
                       out=first.stdout, environ=environ)


def test_source_build_at_the_pin_lands_in_dist_manifest_and_venv(
        source_build: SourceBuild) -> None:
    work = source_build.work
    pinned = source_build.pinned
    out = source_build.out
    checkout = work / "src" / "triton"
    assert git("rev-parse", "HEAD", cwd=checkout) == pinned
    assert git("rev-parse", "HEAD", cwd=checkout) != source_build.tip
    assert "==> [8/17] triton:" in out
    log = (work / "logs" / "triton.log").read_text()
    assert f"Triton pin: {pinned} ({WHEEL_PROJECT} 3.4.0) from {PINS}" in log
    assert f"fixture triton: building {WHEEL_PROJECT} 3.4.0" in log
    wheel_name = f"pytorch_triton_rocm-3.4.0+git{pinned[:8]}-py3-none-any.whl"
    assert (work / "dist" / wheel_name).is_file()
    assert [p.name for p in (work / "dist").glob("*triton*.whl")] == [wheel_name]
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    assert manifest["wheels"]["triton"] == wheel_name
    assert manifest["lock"]["triton"]["commit"] == pinned
    stamp = json.loads((work / "state" / "stamps" / "triton.json").read_text())
    assert stamp["details"]["origin"] == "source"
    assert imported_triton(work) == "3.4.0 fixture-rocm"
    assert triton_providers(work) == {WHEEL_PROJECT: f"3.4.0+git{pinned[:8]}"}

    again = run_build(work, source_build.repo, "source", source_build.environ)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert "every step is up to date; nothing to do" in again.stdout
    assert "==> [" not in again.stdout


def test_auto_without_a_wheel_on_the_index_builds_from_source(
        source_build: SourceBuild, httpserver) -> None:
    work = source_build.work
    pinned = source_build.pinned
    httpserver.expect_request(f"/simple/{WHEEL_PROJECT}/").respond_with_data(
        "not here", status=404)
    index = httpserver.url_for("/simple")
    environ = {**source_build.environ, "ROCMFORGE_TRITON_INDEX": index}
    started = time.monotonic()
    done = run_build(work, source_build.repo, "auto", environ)
    print(f"auto build falling back to source: {time.monotonic() - started:.1f} s")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-3000:]
    assert "checkout: done (stamp matches), skipped" in done.stdout
    assert "==> [8/17] triton:" in done.stdout
    assert (f"no prebuilt Triton wheel (The index {index} has no project {WHEEL_PROJECT}"
            in (work / "logs" / "triton.log").read_text())
    assert "building from source" in (work / "logs" / "triton.log").read_text()
    wheel_name = f"pytorch_triton_rocm-3.4.0+git{pinned[:8]}-py3-none-any.whl"
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    assert manifest["wheels"]["triton"] == wheel_name
    stamp = json.loads((work / "state" / "stamps" / "triton.json").read_text())
    assert stamp["details"]["origin"] == "source"
    assert triton_providers(work) == {WHEEL_PROJECT: f"3.4.0+git{pinned[:8]}"}
    assert [request.path for request, _ in httpserver.log] == [f"/simple/{WHEEL_PROJECT}/"]


def test_new_pin_whose_setup_ignores_the_wheel_name_replaces_the_old_triton(
        source_build: SourceBuild) -> None:
    """A re-pinned ref (new tag v2.8.1) at a Triton whose setup.py names the wheel `triton`
    regardless of TRITON_WHEEL_NAME: the new wheel replaces pytorch-triton-rocm in the venv, and
    dist/ keeps only the wheels of the new manifest."""
    work = source_build.work
    repo = source_build.repo
    triton_repo = source_build.triton_repo
    old_wheel = f"pytorch_triton_rocm-3.4.0+git{source_build.pinned[:8]}-py3-none-any.whl"
    assert (work / "dist" / old_wheel).is_file()
    git("checkout", "-q", "-b", "fixed-name", source_build.pinned, cwd=triton_repo)
    setup = (triton_repo / "setup.py").read_text().replace(
        'name=os.environ.get("TRITON_WHEEL_NAME", "triton")', 'name="triton"')
    repinned = commit_files(triton_repo, {"setup.py": setup}, "setup.py names the wheel triton")
    git("checkout", "-q", "main", cwd=triton_repo)
    commit_files(repo, {PINS: repinned + "\n"}, "re-pin triton")
    git("tag", "v2.8.1", cwd=repo)

    started = time.monotonic()
    done = run_build(work, repo, "source", source_build.environ, ref="v2.8.1")
    print(f"re-pinned build: {time.monotonic() - started:.1f} s")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-3000:]
    assert git("rev-parse", "HEAD", cwd=work / "src" / "triton") == repinned
    new_wheel = f"triton-3.4.0+git{repinned[:8]}-py3-none-any.whl"
    log = (work / "logs" / "triton.log").read_text()
    assert (f"note: the wheel is named triton, not {WHEEL_PROJECT} (its setup.py does not read "
            "TRITON_WHEEL_NAME)") in log
    assert f"removing {WHEEL_PROJECT} from the build venv" in log
    assert triton_providers(work) == {"triton": f"3.4.0+git{repinned[:8]}"}
    assert [p.name for p in (work / "downloads" / "triton-build").iterdir()] == [new_wheel]
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    assert manifest["wheels"]["triton"] == new_wheel
    assert manifest["lock"]["triton"]["commit"] == repinned
    assert sorted(p.name for p in (work / "dist").glob("*.whl")) == sorted(
        [new_wheel, manifest["wheels"]["torch"]])
    assert (f"removed {work / 'dist' / old_wheel}: an earlier build's wheel"
            in (work / "logs" / "collect.log").read_text())
