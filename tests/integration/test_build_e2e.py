"""`invoke build` end to end against a fixture "pytorch" repo (tests/fixtures/fakepytorch).

The fixture's build really compiles a HIP kernel with clang-22 (one --offload-arch per target in
PYTORCH_ROCM_ARCH) and packages a real wheel with setuptools; the test then reads the offload
bundle out of the .so with clang-offload-bundler-22. Hidden knobs used here: HIP_CLANG_PATH through
the build_env setting, --skip-preflight (no ROCm GPU here), --triton skip (except in the index
tests), and --system-site-packages (the venv finds setuptools/wheel offline).

Speed: one fixture repository and work dir are shared by the whole module (`shared`), built once;
each test then runs incremental builds in it, in file order. A change of targets or build_env
only redoes the steps from `environment` on (the venv, the checkout and Triton stay), so a test
costs seconds, not a full build with a fresh venv.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from buildhelpers import assert_manifest_describes_wheel, make_wheel, serve_index, sha256_of

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURE = REPO_ROOT / "tests" / "fixtures" / "fakepytorch"
LLVM22 = Path("/usr/lib/llvm-22/bin")

pytestmark = [pytest.mark.slow, pytest.mark.needs_tool("clang-22", "clang-offload-bundler-22",
                                                       "git")]


def make_fixture_repo(dest: Path, tag: str = "v2.8.0") -> Path:
    shutil.copytree(FIXTURE, dest)
    git = ["git", "-C", str(dest), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "fixture"], check=True)
    subprocess.run([*git, "tag", tag], check=True)
    return dest


def build_argv(work: Path, repo: Path | str, arch: str, triton: str = "skip",
               ref: str = "v2.8.0") -> list[str]:
    return [sys.executable, "-m", "invoke", "build", "--arch", arch, "--work-dir", str(work),
            "--repo", str(repo), "--ref", ref, "--clang", "22", "--triton", triton,
            "--skip-preflight", "--system-site-packages"]


def build_env(extra: str = "", **more: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(more)
    env["ROCMFORGE_BUILD_ENV"] = f"HIP_CLANG_PATH={LLVM22}" + (f";{extra}" if extra else "")
    env["HIP_PLATFORM"] = "amd"
    env["NO_COLOR"] = "1"
    return env


def run_build(work: Path, repo: Path | str, arch: str = "gfx1100", extra: str = "",
              triton: str = "skip", environ: dict[str, str] | None = None,
              ref: str = "v2.8.0", **kw) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(build_argv(work, repo, arch, triton, ref), cwd=REPO_ROOT,
                          env=build_env(extra, **(environ or {})),
                          capture_output=True, text=True, timeout=300, **kw)
    if done.returncode == 0 and (work / "dist" / "manifest.json").is_file():
        assert_manifest_describes_wheel(work, (environ or {}).get("ROCMFORGE_PATCHES_DIR"))
    return done


def bundled_targets(wheel: Path, tmp: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        so = tmp / "libtorch_hip.so"
        so.write_bytes(archive.read("torch/lib/libtorch_hip.so"))
    fatbin = tmp / "fatbin.bin"
    subprocess.run(["llvm-objcopy-22", "--dump-section", f".hip_fatbin={fatbin}", str(so)]
                   if shutil.which("llvm-objcopy-22") else
                   ["objcopy", "--dump-section", f".hip_fatbin={fatbin}", str(so)], check=True)
    listed = subprocess.run(["clang-offload-bundler-22", "--list", "--type=o",
                             f"--input={fatbin}"], capture_output=True, text=True, check=True)
    return sorted(line.split("--", 1)[1] for line in listed.stdout.split() if "amdgcn" in line)


def stamps(work: Path) -> set[str]:
    return {p.stem for p in (work / "state" / "stamps").glob("*.json")}


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """One fixture repo and one work dir for the module, built once for gfx1100."""
    root = tmp_path_factory.mktemp("e2e")
    repo = make_fixture_repo(root / "pytorch")
    work = root / "work"
    started = time.monotonic()
    first = run_build(work, repo)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    print(f"first fixture build: {time.monotonic() - started:.1f} s")
    return repo, work, first.stdout + first.stderr


def test_fixture_build_then_noop_then_target_change(shared, tmp_path: Path) -> None:
    repo, work, out = shared
    # Issue 18: the console gets the step lines (under 60 for the fixture); the steps' output
    # goes to their logs.
    assert len(out.splitlines()) < 60, out
    assert "Successfully preprocessed all matching files" not in out
    assert "Successfully preprocessed all matching files" in (work / "logs" / "hipify.log"
                                                              ).read_text()
    assert "export PYTORCH_ROCM_ARCH=gfx1100" in out
    assert "export USE_CUDA=0" in out
    assert f"export HIP_CLANG_PATH={LLVM22}" in out
    assert "/venv/bin/python setup.py bdist_wheel" in out
    assert "csrc/kernel.cu -> csrc/kernel.hip [ok]" in (work / "logs" / "hipify.log").read_text()
    assert "--   USE_ROCM              : ON" in (work / "logs" / "configure.log").read_text()
    wheels = sorted((work / "dist").glob("torch-*.whl"))
    assert [w.name for w in wheels] == [f"torch-2.8.0a0-cp{sys.version_info.major}"
                                        f"{sys.version_info.minor}-cp{sys.version_info.major}"
                                        f"{sys.version_info.minor}-linux_x86_64.whl"]
    assert bundled_targets(wheels[0], tmp_path) == ["gfx1100"]
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    assert manifest["schema"] == "rocmforge.manifest/1"
    assert manifest["targets"] == ["gfx1100"]
    assert manifest["wheels"] == {"torch": wheels[0].name, "triton": ""}
    assert manifest["env"]["PYTORCH_ROCM_ARCH"] == "gfx1100"
    assert "clang version 22" in manifest["toolchain"]["hip"]
    assert {s["name"] for s in manifest["steps"]} >= {"checkout", "hipify", "configure", "build"}
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    assert manifest["source"]["commit"] == head
    # The lock file written after checkout is in the work dir and in the manifest.
    assert (work / "rocmforge.lock").is_file()
    assert manifest["lock"]["pytorch"]["commit"] == head
    assert manifest["lock"]["triton"]["commit"] == "0123456789abcdef0123456789abcdef01234567"
    mtime = wheels[0].stat().st_mtime_ns
    # With a checkout, `invoke plan --json` shows the resolved commits and the Triton pin.
    plan_argv = [a if a != "build" else "plan" for a in build_argv(work, repo, "gfx1100")]
    planned = subprocess.run([*plan_argv, "--json"], cwd=REPO_ROOT, env=build_env(),
                             capture_output=True, text=True, timeout=120)
    assert planned.returncode == 0, planned.stderr
    sources = json.loads(planned.stdout)["settings"]["sources"]
    assert sources["pytorch"]["commit"] == head
    assert sources["triton"]["pin"]["commit"] == "0123456789abcdef0123456789abcdef01234567"
    assert {s["name"]: s for s in json.loads(planned.stdout)["steps"]}["hipify"]["env"][
        "PYTORCH_ROCM_ARCH"] == "gfx1100"

    second = run_build(work, repo)
    assert second.returncode == 0, second.stderr
    assert "every step is up to date; nothing to do" in second.stdout
    assert "==> [" not in second.stdout  # no step ran
    assert wheels[0].stat().st_mtime_ns == mtime

    third = run_build(work, repo, arch="gfx1100;gfx942")
    assert third.returncode == 0, third.stdout[-3000:] + third.stderr[-3000:]
    # A new target list keeps the checkout, the venv and Triton; it redoes from environment on.
    for kept in ("checkout", "venv", "build-requirements", "triton"):
        assert f"{kept}: done (stamp matches), skipped" in third.stdout
    assert "[9/16] environment ... " in third.stdout
    stale_log = (work / "logs" / "stale-check.log").read_text()
    assert "configured for gfx1100 but gfx1100;gfx942 was requested" in stale_log
    assert "removing the stale CMake build dir" in stale_log
    assert "Building PyTorch for GPU arch: gfx1100;gfx942" in (
        work / "logs" / "configure.log").read_text()
    assert bundled_targets(wheels[0], tmp_path) == ["gfx1100", "gfx942"]
    assert json.loads((work / "dist" / "manifest.json").read_text())["targets"] == [
        "gfx1100", "gfx942"]

    # A deleted dist/ is noticed (issue 14 item 6): collect and install run again, nothing else.
    shutil.rmtree(work / "dist")
    fourth = run_build(work, repo, arch="gfx1100;gfx942")
    assert fourth.returncode == 0, fourth.stdout[-3000:] + fourth.stderr[-3000:]
    assert (f"==> collect: its stamp matches, but {work / 'dist' / 'manifest.json'} is gone; it "
            "runs again, and so does every step after it") in fourth.stdout
    assert "rocmforge: 2 step(s) ran" in fourth.stdout
    assert json.loads((work / "dist" / "manifest.json").read_text())["targets"] == [
        "gfx1100", "gfx942"]


def _stamp_files(work: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted((work / "state" / "stamps").glob("*.json"))}


def test_the_logs_of_a_build_that_worked_claim_nothing(shared) -> None:
    """A claim on a log that shows no failure is a wrong answer (issue 40): every step log of
    the fixture build (real git, hipify, CMake 3.25, clang-22's HIP compile, pip) read with its
    own step's rules explains nothing."""
    from rocmforge.triage import explain_file

    _, work, _ = shared
    logs = sorted((work / "logs").glob("*.log"))
    assert {"configure.log", "build.log", "hipify.log"} <= {log.name for log in logs}
    claims = {log.name: explain_file(log, step=log.stem).rule for log in logs}
    assert {name: rule for name, rule in claims.items() if rule} == {}


def test_a_mistyped_ref_stops_before_any_step_and_the_next_build_resumes(shared) -> None:
    """Review defect: `--ref v9.9.9` after a finished build failed at the checkout step (exit 2,
    "nothing was changed") but had removed every stamp from the checkout on, so the next build
    with the good ref reran the whole build. The ref is now asked of the remote first."""
    repo, work, _ = shared
    assert run_build(work, repo).returncode == 0
    before = _stamp_files(work)
    assert {"checkout.json", "build.json", "install.json"} <= set(before)

    bad = run_build(work, repo, ref="v9.9.9")
    assert bad.returncode == 2, bad.stdout[-3000:] + bad.stderr[-3000:]
    assert "==> " not in bad.stdout  # before any step, even the skipped ones
    said = " ".join(bad.stderr.split())
    assert said == (f"rocmforge: 'v9.9.9' is not a tag, branch or full commit of {repo}; it has "
                    "v2.8.0. The kit checks out only refs the remote really has. Fix: pass an "
                    "existing tag (e.g. v2.8.0), branch, or 40-hex commit with --ref (or the "
                    "pytorch_ref setting)."), said
    assert _stamp_files(work) == before

    # A remote out of reach is the environment (exit 3), also before any step.
    gone = run_build(work, work.parent / "no-such-repo", ref="v9.9.9")
    assert gone.returncode == 3, gone.stdout[-3000:] + gone.stderr[-3000:]
    assert "==> " not in gone.stdout
    assert " ".join(gone.stderr.split()).startswith(
        f"rocmforge: Cannot fetch from {work.parent / 'no-such-repo'}: git could not reach it "
        "to resolve 'v9.9.9'"), gone.stderr
    assert _stamp_files(work) == before

    good = run_build(work, repo)
    assert good.returncode == 0, good.stdout[-3000:] + good.stderr[-3000:]
    assert "every step is up to date; nothing to do" in good.stdout
    assert "==> [" not in good.stdout


def test_a_step_that_fails_on_bad_input_leaves_the_other_stamps_valid(shared) -> None:
    """The checkout step itself refuses (DirtyTree, exit 2: a user's edit in the tree, and a
    ref that passes the pre-check): the stamps it removed before running come back, so once
    the edit is gone the build with the old ref has nothing to do."""
    repo, work, _ = shared
    assert run_build(work, repo).returncode == 0
    before = _stamp_files(work)
    tree = work / "src" / "pytorch"
    readme = tree / "README.md"
    original = readme.read_bytes()
    subprocess.run(["git", "-C", str(repo), "tag", "v2.7.9"], check=True)  # same commit
    try:
        readme.write_bytes(original + b"a user's edit\n")
        refused = run_build(work, repo, ref="v2.7.9")
        assert refused.returncode == 2, refused.stdout[-3000:] + refused.stderr[-3000:]
        assert "==> [3/16] checkout: PyTorch at v2.7.9" in refused.stdout
        assert "has local changes the kit did not make (1 path: README.md)" in " ".join(
            refused.stderr.split())
        assert _stamp_files(work) == before
    finally:
        readme.write_bytes(original)
        subprocess.run(["git", "-C", str(repo), "tag", "-d", "v2.7.9"], check=True,
                       capture_output=True)
    good = run_build(work, repo)
    assert good.returncode == 0, good.stdout[-3000:] + good.stderr[-3000:]
    assert "==> [" not in good.stdout, good.stdout


def _wait_for(path: Path, text: str, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            raise AssertionError(f"build ended early: {proc.communicate()}")
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared in {path}")


def test_interrupt_lock_and_sigkill_then_resume(shared, tmp_path: Path) -> None:
    repo, work, _ = shared
    hold = tmp_path / "hold"
    hold.write_text("")
    extra = f"RF_FIXTURE_HOLD={hold}"
    build_log = work / "logs" / "build.log"

    first = subprocess.Popen(build_argv(work, repo, "gfx1100"), cwd=REPO_ROOT,
                             env=build_env(extra), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    _wait_for(build_log, "holding while", first)
    # A second build in the same work dir is refused, naming the holder.
    second = run_build(work, repo, extra=extra)
    assert second.returncode == 3
    assert f"Another build (pid {first.pid}" in second.stderr
    # Ctrl-C: the step's process group ends, no stamp, a resume hint, exit 130.
    first.send_signal(signal.SIGINT)
    _, err = first.communicate(timeout=60)
    assert first.returncode == 130, err
    assert "Interrupted during step build" in err and "to resume, run `invoke" in err
    assert "build" not in stamps(work) and "configure" in stamps(work)
    assert not (work / "state" / "build.lock").exists()

    # SIGKILL leaves a lock with a dead pid and an orphaned step group.
    killed = subprocess.Popen(build_argv(work, repo, "gfx1100"), cwd=REPO_ROOT,
                              env=build_env(extra), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    build_log.unlink()
    _wait_for(build_log, "holding while", killed)
    killed.kill()
    killed.communicate(timeout=30)
    lock = json.loads((work / "state" / "build.lock").read_text())
    assert lock["pid"] == killed.pid and lock["step_pgid"] > 0
    assert "build" not in stamps(work)

    hold.unlink()
    resumed = run_build(work, repo, extra=extra)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert f"belongs to pid {killed.pid}" in resumed.stdout
    assert "taking it over" in resumed.stdout
    assert "configure: done (stamp matches), skipped" in resumed.stdout
    assert "build" in stamps(work)
    assert not list((work / "dist").glob(".*.tmp"))
    assert len(list((work / "dist").glob("torch-*.whl"))) == 1


def test_full_disk_leaves_no_half_wheel_or_stamp_and_resumes(shared) -> None:
    repo, work, _ = shared
    assert run_build(work, repo).returncode == 0
    shutil.rmtree(work / "dist")
    (work / "state" / "stamps" / "collect.json").unlink()

    def tiny_files() -> None:  # the OS refuses writes past 1 KiB with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    failed = run_build(work, repo, preexec_fn=tiny_files)
    # A disk that refuses the write: the environment failed (exit 3, issue 18 item 5c).
    assert failed.returncode == 3, failed.stdout[-2000:] + failed.stderr[-2000:]
    said = " ".join(failed.stderr.split())
    assert said.startswith("rocmforge: The disk refused a write to "), said  # the one message
    assert "step collect stopped and no stamp was written for it" in said
    assert "collect" not in stamps(work) and "install" not in stamps(work)
    leftovers = [p.name for p in (work / "dist").iterdir()] if (work / "dist").exists() else []
    assert leftovers == []

    ok = run_build(work, repo)
    assert ok.returncode == 0, ok.stderr
    assert "build: done (stamp matches), skipped" in ok.stdout
    assert len(list((work / "dist").glob("torch-*.whl"))) == 1
    assert (work / "dist" / "manifest.json").exists()


def test_failing_build_is_triaged_with_cause_fix_and_lines(shared) -> None:
    """clang-22 rejects an offload arch: the CLI names the signature, its cause and fix."""
    repo, work, _ = shared
    failed = run_build(work, repo, extra="RF_FIXTURE_EXTRA_ARCH=gfx9999")
    assert failed.returncode == 1, failed.stdout[-3000:] + failed.stderr[-3000:]
    err = failed.stderr
    assert "Step build failed" in err
    # the cause names the compiler the failing command ran (clang-22 here)
    assert "(the compiler that ran) does not know the offload target gfx9999" in err
    assert "(known failure `unsupported-offload-arch`)" in err
    assert "drop gfx9999 from --arch or use a newer ROCm/LLVM that supports it" in err
    shown = failed.stdout[failed.stdout.index("most relevant lines of"):]
    assert "error: unsupported HIP gpu architecture: gfx9999" in shown
    assert len(shown.splitlines()) <= 30 + 2
    assert "build" not in stamps(work)
    ok = run_build(work, repo)
    assert ok.returncode == 0, ok.stdout[-3000:] + ok.stderr[-3000:]


def _venv_dists(work: Path) -> dict[str, str]:
    done = subprocess.run([str(work / "venv" / "bin" / "python"), "-m", "pip", "list",
                           "--format=json", "--disable-pip-version-check"],
                          capture_output=True, text=True, check=True)
    return {d["name"].lower(): d["version"] for d in json.loads(done.stdout)}


def test_triton_wheel_from_index_wrong_then_right_sha256(shared, tmp_path: Path,
                                                          httpserver) -> None:
    repo, work, _ = shared
    pin = "0123456789abcdef0123456789abcdef01234567"
    wheel = make_wheel(tmp_path / "index", "pytorch-triton-rocm", f"3.4.0+git{pin[:8]}",
                       {"triton/__init__.py": "__version__ = '3.4.0'\nROCM = True\n"})
    # A CUDA `triton` from PyPI in the venv must be removed, and said so.
    cuda = make_wheel(tmp_path / "pypi", "triton", "3.4.0",
                      {"triton/__init__.py": "__version__ = '3.4.0'\nCUDA = True\n"})
    subprocess.run([str(work / "venv" / "bin" / "python"), "-m", "pip", "install", "--no-deps",
                    "-q", str(cuda)], check=True)

    # The index lists the wheel, whose server answers 500: exit 3, the message every file's
    # HTTP error has (README "Exit codes"; issue 41 item 9).
    httpserver.clear()
    index = httpserver.url_for("/simple")
    httpserver.expect_request("/simple/pytorch-triton-rocm/").respond_with_json(
        {"meta": {"api-version": "1.0"}, "name": "pytorch-triton-rocm",
         "files": [{"filename": wheel.name, "url": f"/files/{wheel.name}",
                    "hashes": {"sha256": sha256_of(wheel)}}]},
        content_type="application/vnd.pypi.simple.v1+json")
    httpserver.expect_request(f"/files/{wheel.name}").respond_with_data("down", status=500)
    refused = run_build(work, repo, triton="auto",
                        environ={"ROCMFORGE_TRITON_INDEX": index,
                                 "ROCMFORGE_ALLOW_TRITON_GAP": "true"})
    assert refused.returncode == 3, refused.stdout[-3000:] + refused.stderr[-3000:]
    assert (f"rocmforge: Cannot fetch {wheel.name} from {index.rsplit('/simple', 1)[0]}/files/"
            f"{wheel.name}: the server answered HTTP 500") in refused.stderr

    index = serve_index(httpserver, "pytorch-triton-rocm", wheel, "0" * 64)
    # The fixture Triton is a stub that cannot compile a kernel: the target probe FAILs it, and
    # allow_triton_gap lets the build go on (the gap is in the manifest).
    gap = {"ROCMFORGE_ALLOW_TRITON_GAP": "true"}
    bad = run_build(work, repo, triton="auto", environ={"ROCMFORGE_TRITON_INDEX": index, **gap})
    assert bad.returncode == 3, bad.stdout[-3000:] + bad.stderr[-3000:]  # README "Exit codes"
    assert "==> [8/17] triton:" in bad.stdout
    assert (f"rocmforge: The download of {wheel.name} from {index.rsplit('/simple', 1)[0]}"
            f"/files/{wheel.name} does not match its published sha256" in bad.stderr)
    assert "triton" not in stamps(work)
    assert [p.name for p in (work / "downloads").iterdir()] == []
    assert "pytorch-triton-rocm" not in _venv_dists(work)

    index = serve_index(httpserver, "pytorch-triton-rocm", wheel, sha256_of(wheel))
    good = run_build(work, repo, triton="auto", environ={"ROCMFORGE_TRITON_INDEX": index, **gap})
    assert good.returncode == 0, good.stdout[-3000:] + good.stderr[-3000:]
    assert "checkout: done (stamp matches), skipped" in good.stdout
    triton_log = (work / "logs" / "triton.log").read_text()
    assert "removing triton from the build venv" in triton_log
    assert f"downloaded {work / 'downloads' / wheel.name} (sha256 verified)" in triton_log
    dists = _venv_dists(work)
    assert dists["pytorch-triton-rocm"] == f"3.4.0+git{pin[:8]}" and "triton" not in dists
    assert (work / "dist" / wheel.name).read_bytes() == wheel.read_bytes()
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    assert manifest["wheels"]["triton"] == wheel.name

    # The verify sessions accept what the build wrote.
    from packaging.tags import sys_tags

    from rocmforge.sessions import support as nox_support

    dist = work / "dist"
    assert nox_support.session_targets(dist, {}, lambda: ()) == ["gfx1100"]
    session = nox_support.plan_session("gfx1100", dist=dist, environ={},
                                       supported_tags=sys_tags(), python="3")
    assert session.wheels.triton == dist / wheel.name
    assert session.wheels.torch.name == manifest["wheels"]["torch"]


def _tree_git(tree: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True,
                          check=True).stdout


def test_a_reset_tree_redoes_the_kits_edits_and_a_users_edit_is_named_as_theirs(
    shared, tmp_path: Path
) -> None:
    """Issue 14 items 5a and 10. `git reset --hard` of the tree undoes hipify under stamps that
    say it ran: the tree-facts re-check notices and the kit's edits and every later step run
    again. A user's edit found among the kit's edits stops the build, named (issue 41 item 3)."""
    repo, work, _ = shared
    tree = work / "src" / "pytorch"
    _tree_git(tree, "reset", "-q", "--hard")
    again = run_build(work, repo)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert ("the tree changed since the kit's patches and hipify (it has no local changes: "
            "reset to its commit): they and every later step run again") in again.stdout
    for redone in ("patches", "hipify", "build", "collect"):
        assert f"] {redone} ... " in again.stdout, redone
    assert "Successfully preprocessed" in (work / "logs" / "hipify.log").read_text()

    # Nothing changed since: a no-op again.
    quiet = run_build(work, repo)
    assert "every step is up to date; nothing to do" in quiet.stdout, quiet.stdout[-3000:]

    # A user edits a file the kit had hipified: the next build stops with the edit named (issue
    # 41 item 3: the wheel would be built without it), stashes nothing and leaves it in place.
    edited = next(p for p in (tree / "csrc").iterdir() if p.suffix in (".cu", ".hip"))
    edited.write_text(edited.read_text() + "// a user's own line\n")
    stashed_before = _tree_git(tree, "stash", "list")
    third = run_build(work, repo)
    assert third.returncode == 2, third.stdout[-3000:] + third.stderr[-3000:]
    said = " ".join(third.stderr.split())
    assert f"has local changes the kit did not make (1 path: csrc/{edited.name})" in said
    assert _tree_git(tree, "stash", "list") == stashed_before
    assert "a user's own line" in edited.read_text()
    # The "keep them" way out, as printed, lets the next build run.
    _tree_git(tree, "stash", "push", "-u")
    fourth = run_build(work, repo)
    assert fourth.returncode == 0, fourth.stdout[-3000:] + fourth.stderr[-3000:]


def test_the_patch_series_is_applied_to_the_pristine_tree_every_time(tmp_path: Path) -> None:
    """Issue 14 items 5b and 5c: an edited patch is applied in its new version (no "stale …
    rebase"), and a patch removed from the series does not stay applied, while the lock and the
    manifest list exactly what the tree holds. A real series in a folder of its own
    (`patches_dir`), real `git format-patch` files."""
    from gitfixtures import make_patch

    repo = make_fixture_repo(tmp_path / "pytorch")
    work = tmp_path / "work"
    series = tmp_path / "series"
    header = "Applies-To: >=2.8\nWhy: a note in the tree\nUpstream: local"

    def patch_with(text: str) -> str:
        made = make_patch(repo, "v2.8.0", {"NOTE.txt": text}, header,
                          tmp_path / "made" / f"{len(text)}.patch", work=tmp_path)
        target = series / "pytorch" / "0001-note.patch"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(made, target)
        return hashlib.sha256(target.read_bytes()).hexdigest()

    def manifest_patches() -> list[tuple[str, str]]:
        doc = json.loads((work / "dist" / "manifest.json").read_text())
        return [(p["file"], p["sha256"]) for p in doc["lock"].get("patches", [])]

    env = {"ROCMFORGE_PATCHES_DIR": str(series)}
    first_sha = patch_with("patched once\n")
    first = run_build(work, repo, environ=env)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    note = work / "src" / "pytorch" / "NOTE.txt"
    assert note.read_text() == "patched once\n"
    assert manifest_patches() == [("pytorch/0001-note.patch", first_sha)]

    second_sha = patch_with("patched twice, edited\n")
    second = run_build(work, repo, environ=env)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    assert "stale" not in second.stderr
    assert note.read_text() == "patched twice, edited\n"
    assert manifest_patches() == [("pytorch/0001-note.patch", second_sha)]

    (series / "pytorch" / "0001-note.patch").unlink()
    third = run_build(work, repo, environ=env)
    assert third.returncode == 0, third.stdout[-3000:] + third.stderr[-3000:]
    assert not note.exists()
    assert manifest_patches() == []
