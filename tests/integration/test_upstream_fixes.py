"""Known fixes applied as data (config/upstream_fixes.toml): the table, the decision per build,
and, with real git, the fetch by SHA over file:// from a remote whose fix commits are on
branches the checkout never saw, applied with our own patches all or nothing, absorbed, in
conflict, reverted, and recorded in the lock and the patches step's digest."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gitfixtures import FakeRemotes, build_remotes, commit_files, git, make_patch, tree_state

from rocmforge.errors import ConfigError
from rocmforge.execute.model import Step
from rocmforge.settings import Settings
from rocmforge.sources import (
    check_locked_fixes,
    checkout_pytorch,
    locked_fixes,
    patch_sources,
)
from rocmforge.sources.git import FetchFailed
from rocmforge.sources.lockfile import (
    Lock,
    LockedFix,
    LockError,
    read_lock,
    render_lock,
    write_lock,
)
from rocmforge.sources.patches import PatchError
from rocmforge.sources.upstream_fixes import (
    BuildConditions,
    FixDecision,
    compiler_family,
    decide,
    digest_inputs,
    load_fixes,
    parse_fixes,
)

A_PY = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"
ROCM7 = BuildConditions(rocm_version="7.0.2", targets=("gfx1100",), compiler="clang")


# ------------------------------------------------------------------------------------ the table


def test_the_kits_table_loads_with_its_sources() -> None:
    fixes = {f.id: f for f in load_fixes()}
    assert set(fixes) == {"warpsize-host", "aotriton-rocm70-sha256", "int4mm-memcpy-gfx90x"}
    warp = fixes["warpsize-host"]
    assert warp.sha == "04bd7e6850e8efec77994963ffee87549555b9c3"
    assert warp.verified and str(warp.pytorch) == "<2.8,>=2.7" and str(warp.rocm) == ">=7.0"
    assert "ROCm/TheRock@edc11168" in warp.sha_source
    assert warp.thread.startswith("ROCm/TheRock#1048; the PR: pytorch/pytorch#156979")
    assert not fixes["aotriton-rocm70-sha256"].verified
    int4 = fixes["int4mm-memcpy-gfx90x"]
    assert (int4.sha, int4.platform, int4.targets) == (
        "0f60458c8ecafe0168363347cfecefdfb7dd8489", "windows",
        ("gfx900", "gfx906", "gfx908", "gfx90a"))


def _row(**over: object) -> dict[str, object]:
    row: dict[str, object] = {
        "id": "x", "sha": "a" * 40, "sha_source": "s", "verified": True, "pytorch": ">=2.9",
        "rocm": "", "targets": [], "compiler": "", "platform": "", "title": "t", "why": "w",
        "thread": "o/r#1"}
    row.update(over)
    return row


@pytest.mark.parametrize(("over", "words"), [
    ({"sha": "04bd7e68"}, "is not a full commit hash"),
    ({"pytorch": "2.7 or so"}, "is not a version specifier"),
    ({"compiler": "msvc"}, "is not a compiler family"),
    ({"why": ""}, "why is empty"),
    ({"verified": "yes"}, "should be bool"),
    ({"platform": "darwin"}, "is not a platform"),
    ({"shaa": "x"}, 'Unknown key "shaa"'),
], ids=["short-sha", "bad-range", "compiler", "empty-why", "verified-type", "platform",
                                                   "typo"])
def test_a_malformed_entry_is_exit_2(over: dict[str, object], words: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_fixes({"fix": [_row(**over)]}, source="t.toml")
    assert words in err.value.paragraph() and err.value.exit_code == 2


# ---------------------------------------------------------------------------------- decisions


@pytest.mark.parametrize(("cond", "needed", "reason"), [
    (BuildConditions(pytorch_version="2.7.1", rocm_version="7.0.2"), True,
     "PyTorch 2.7.1 is <2.8,>=2.7, ROCm 7.0.2 is >=7.0"),
    (BuildConditions(pytorch_version="2.7.0a0", rocm_version="7.1.0"), True,
     "PyTorch 2.7.0a0 is <2.8,>=2.7, ROCm 7.1.0 is >=7.0"),
    (BuildConditions(pytorch_version="2.8.0", rocm_version="7.0.2"), False,
     "PyTorch 2.8.0 is not <2.8,>=2.7"),
    (BuildConditions(pytorch_version="2.7.1", rocm_version="6.4.3"), False,
     "ROCm 6.4.3 is not >=7.0"),
    (BuildConditions(pytorch_version="2.7.1"), False,
     "ROCm >=7.0 needed, the build's ROCm is unknown"),
    (BuildConditions(rocm_version="7.0.2"), False,
     "decided after the checkout: PyTorch <2.8,>=2.7 and ROCm 7.0.2 is >=7.0"),
], ids=["2.7-rocm7", "prerelease", "2.8", "rocm6", "no-rocm", "before-checkout"])
def test_warpsize_entry_against_builds(cond: BuildConditions, needed: bool, reason: str) -> None:
    (decision,) = [d for d in decide(load_fixes(), cond) if d.fix.id == "warpsize-host"]
    assert (decision.needed, decision.reason) == (needed, reason)


def test_an_unverified_sha_is_listed_never_applied() -> None:
    cond = BuildConditions(pytorch_version="2.8.0", rocm_version="7.0.2")
    (d,) = [d for d in decide(load_fixes(), cond) if d.fix.id == "aotriton-rocm70-sha256"]
    assert not d.needed
    assert d.reason.startswith("PyTorch 2.8.0 is <2.9,>=2.8, ROCm 7.0.2 is <7.1,>=7.0, but its "
                               "SHA is unverified (ROCm/TheRock@f7f0dab09")


def test_target_and_compiler_conditions() -> None:
    fixes = parse_fixes({"fix": [_row(targets=["gfx950"], compiler="gcc")]}, source="t")
    assert decide(fixes, BuildConditions(pytorch_version="2.9", targets=("gfx1100",)))[0].reason \
        == "needs a target of gfx950"
    assert decide(fixes, BuildConditions(pytorch_version="2.9", targets=("gfx950",),
                                         compiler="clang"))[0].reason \
        == "needs gcc, the build uses clang"
    ok = decide(fixes, BuildConditions(pytorch_version="2.9.1", targets=("gfx950", "gfx942"),
                                       compiler="gcc"))[0]
    assert ok.needed and ok.reason == "PyTorch 2.9.1 is >=2.9, targets gfx950, compiler gcc"


def test_a_windows_only_failure_is_skipped_on_linux() -> None:
    cond = BuildConditions(pytorch_version="2.10.0", rocm_version="7.13.0",
                           targets=("gfx90a", "gfx1100"))
    (d,) = [d for d in decide(load_fixes(), cond) if d.fix.id == "int4mm-memcpy-gfx90x"]
    assert (d.needed, d.reason) == (False, "fails on windows only, not linux")
    on_windows = decide(load_fixes(), dataclasses.replace(cond, platform="windows"))
    (w,) = [d for d in on_windows if d.fix.id == "int4mm-memcpy-gfx90x"]
    assert (w.needed, w.reason) == (True, "PyTorch 2.10.0 is <2.12,>=2.9, targets gfx90a")


@pytest.mark.parametrize(("exe", "family"), [
    ("/usr/bin/clang++-22", "clang"), ("/opt/rocm/llvm/bin/amdclang++", "clang"),
    ("hipcc", "clang"), ("/usr/bin/g++-12", "gcc"), ("x86_64-linux-gnu-g++", "gcc"),
    ("icpx", "")])
def test_compiler_family(exe: str, family: str) -> None:
    assert compiler_family(exe) == family


def test_digest_holds_entries_this_build_may_need() -> None:
    base = parse_fixes({"fix": [_row(id="a", rocm=">=7.0")]}, source="t")
    more = parse_fixes({"fix": [_row(id="a", rocm=">=7.0"), _row(id="b", sha="b" * 40)]},
                       source="t")
    other_rocm = parse_fixes({"fix": [_row(id="a", rocm=">=7.0"), _row(id="c", rocm="<6")]},
                             source="t")
    cond = BuildConditions(rocm_version="7.0.2")  # before the checkout: the version is unknown
    assert digest_inputs(decide(base, cond)) == {"fix:a": f"{'a' * 40} >=2.9"}
    assert digest_inputs(decide(more, cond)) == {"fix:a": f"{'a' * 40} >=2.9",
                                                 "fix:b": f"{'b' * 40} >=2.9"}
    assert digest_inputs(decide(other_rocm, cond)) == digest_inputs(decide(base, cond))
    # Reading version.txt after the checkout changes no digest, whichever range it falls in.
    for version in ("2.9.1", "2.7.0"):
        after = decide(more, dataclasses.replace(cond, pytorch_version=version))
        assert digest_inputs(after) == digest_inputs(decide(more, cond))
    unverified = parse_fixes({"fix": [_row(id="u", verified=False)]}, source="t")
    assert digest_inputs(decide(unverified, cond)) == {}


def test_lock_round_trip(tmp_path: Path) -> None:
    lock = Lock(pytorch_repo="r", pytorch_ref="v", pytorch_commit="c" * 40, upstream_fixes=(
        LockedFix(id="warpsize-host", sha="04bd7e6850e8efec77994963ffee87549555b9c3",
                  state="applied", sha256="d" * 64),
        LockedFix(id="y", sha="e" * 40, state="absorbed")))
    write_lock(tmp_path / "rocmforge.lock", lock)
    text = (tmp_path / "rocmforge.lock").read_text()
    assert ('[[upstream_fixes]]\nid = "warpsize-host"\n'
            'sha = "04bd7e6850e8efec77994963ffee87549555b9c3"\nstate = "applied"\n'
            f'sha256 = "{"d" * 64}"\n') in text
    assert read_lock(tmp_path / "rocmforge.lock") == lock
    assert render_lock(read_lock(tmp_path / "rocmforge.lock")) == text


def test_a_locked_build_needs_the_fixes_its_lock_records() -> None:
    fixes = parse_fixes({"fix": [_row(id="a"), _row(id="b", sha="b" * 40, rocm=">=7.0")]},
                        source="t")
    lock = Lock(pytorch_repo="r", pytorch_ref="v", pytorch_commit="c" * 40, upstream_fixes=(
        LockedFix(id="a", sha="a" * 40, state="applied", sha256="d" * 64),
        LockedFix(id="b", sha="b" * 40, state="absorbed")))
    rocm7 = BuildConditions(pytorch_version="2.9.1", rocm_version="7.0.2")
    check_locked_fixes(lock, Path("my.lock"), decide(fixes, rocm7))  # the same two: fine
    rocm6 = BuildConditions(pytorch_version="2.9.1", rocm_version="6.4.3")
    with pytest.raises(LockError) as err:
        check_locked_fixes(lock, Path("my.lock"), decide(fixes, rocm6))
    assert err.value.exit_code == 2
    assert err.value.paragraph().startswith(
        "The upstream fixes this build needs differ from my.lock: b bbbbbbbbbbbb.")


# ------------------------------------------------------------------------- real git, file://


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> tuple[FakeRemotes, dict[str, str]]:
    """build_remotes' pytorch plus fix commits on side branches the checkout of v2.9.1 does not
    fetch; the remote serves any SHA (uploadpack.allowAnySHA1InWant), as GitHub does."""
    remotes = build_remotes(tmp_path_factory.mktemp("fixremotes"))
    repo = remotes.pytorch
    shas: dict[str, str] = {}
    git("checkout", "-q", "-b", "fix-f", remotes.tags["v2.9.1"], cwd=repo)
    shas["f"] = commit_files(repo, {"src/a.py": A_PY.replace("1", "10")}, "f returns 10")
    git("checkout", "-q", "-b", "drifted", remotes.main_commit, cwd=repo)
    commit_files(repo, {"src/a.py": A_PY.replace("1", "5")}, "f returns 5")
    shas["conflict"] = commit_files(repo, {"src/a.py": A_PY.replace("1", "50")}, "5 -> 50")
    git("checkout", "-q", "-b", "same-change", remotes.tags["v2.8.0"], cwd=repo)
    shas["equivalent"] = commit_files(repo, {"version.txt": "2.9.1\n"}, "bump, as 2.9.1 did")
    git("checkout", "-q", "main", cwd=repo)
    git("config", "uploadpack.allowAnySHA1InWant", "true", cwd=repo)
    shas["ancestor"] = remotes.tags["v2.8.0"]
    return remotes, shas


def _table(folder: Path, entries: dict[str, str]) -> Path:
    """A config/ folder whose upstream_fixes.toml lists `entries` (id -> sha) for 2.9.x."""
    folder.mkdir(parents=True, exist_ok=True)
    body = "".join(
        f'[[fix]]\nid = "{fid}"\nsha = "{sha}"\nsha_source = "test fixture"\nverified = true\n'
        f'pytorch = ">=2.9,<2.10"\nrocm = ">=7.0"\ntargets = []\ncompiler = ""\nplatform = ""\n'
        f'title = "{fid}"\nwhy = "{fid} breaks"\nthread = "o/r#{i}"\n\n'
        for i, (fid, sha) in enumerate(entries.items()))
    (folder / "upstream_fixes.toml").write_text(body)
    return folder


@pytest.fixture
def checkout(remote: tuple[FakeRemotes, dict[str, str]], tmp_path: Path
             ) -> tuple[Settings, Path]:
    remotes, _ = remote
    s = Settings(work_dir=str(tmp_path / "w"), pytorch_repo=remotes.pytorch_url,
                 pytorch_ref="v2.9.1", mirrors=remotes.mirrors)
    checkout_pytorch(s, patches_root=tmp_path / "none")
    return s, tmp_path / "w" / "src" / "pytorch"


def _use(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, entries: dict[str, str]) -> None:
    monkeypatch.setenv("ROCMFORGE_CONFIG_DIR", str(_table(tmp_path / "cfg", entries)))


@pytest.mark.slow
def test_fix_fetched_by_sha_applied_recorded_and_reverted(
    remote: tuple[FakeRemotes, dict[str, str]], checkout: tuple[Settings, Path],
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, shas = remote
    settings, tree = checkout
    head = git("rev-parse", "HEAD", cwd=tree)
    assert shas["f"] not in git("rev-list", "--all", cwd=tree)  # not in the checkout's history
    _use(monkeypatch, tmp_path, {"fix-f": shas["f"]})
    (report,) = patch_sources(settings, patches_root=tmp_path / "none", conditions=ROCM7)
    assert (tree / "src/a.py").read_text() == A_PY.replace("1", "10")
    assert git("rev-parse", "HEAD", cwd=tree) == head  # applied, never committed
    assert [(s.patch.project, s.patch.name, s.state) for s in report.statuses] == [
        ("upstream", "fix-f.patch", "applies")]
    assert report.changed == ("fix-f.patch",)
    diff = tmp_path / "w" / "state" / "upstream-fixes" / "fix-f.patch"
    assert git("diff", "--full-index", f"{shas['f']}^", shas["f"], cwd=tree) + "\n" \
        == diff.read_text()
    fixes = locked_fixes((report,))
    assert [(f.id, f.sha, f.state) for f in fixes] == [("fix-f", shas["f"], "applied")]
    assert fixes[0].sha256 == hashlib.sha256(diff.read_bytes()).hexdigest()
    (again,) = patch_sources(settings, patches_root=tmp_path / "none", conditions=ROCM7)
    assert [s.state for s in again.statuses] == ["applied"] and again.changed == ()
    (back,) = patch_sources(settings, patches_root=tmp_path / "none", revert=True)
    assert back.changed == ("fix-f.patch",)
    assert (tree / "src/a.py").read_text() == A_PY
    assert git("status", "--porcelain", cwd=tree) == ""


@pytest.mark.slow
@pytest.mark.parametrize("which", ["ancestor", "equivalent"])
def test_absorbed_when_the_tree_already_has_it(
    which: str, remote: tuple[FakeRemotes, dict[str, str]], checkout: tuple[Settings, Path],
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, shas = remote
    settings, tree = checkout
    if which == "ancestor":  # history is only known in a full clone (the kit's is shallow)
        git("fetch", "-q", "--unshallow", "origin", cwd=tree)
        assert shas["ancestor"] in git("rev-list", "HEAD", cwd=tree)
    before = tree_state(tree)
    _use(monkeypatch, tmp_path, {"already": shas[which]})
    (report,) = patch_sources(settings, patches_root=tmp_path / "none", conditions=ROCM7)
    assert [(s.patch.name, s.state) for s in report.statuses] == [("already.patch", "absorbed")]
    assert report.changed == () and tree_state(tree) == before
    assert [(f.state, f.sha256) for f in locked_fixes((report,))] == [("absorbed", "")]


@pytest.mark.slow
def test_conflict_stops_with_our_patches_untouched(
    remote: tuple[FakeRemotes, dict[str, str]], checkout: tuple[Settings, Path],
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    remotes, shas = remote
    settings, tree = checkout
    own = tmp_path / "patches" / "pytorch" / "0001-g.patch"
    make_patch(remotes.pytorch, "v2.9.1", {"src/a.py": A_PY.replace("2", "20")},
               "Applies-To: >=2.9\nWhy: g must return 20\nUpstream: local", own,
               work=tmp_path)
    before = tree_state(tree)
    _use(monkeypatch, tmp_path, {"drifted": shas["conflict"]})
    with pytest.raises(PatchError) as err:
        patch_sources(settings, patches_root=tmp_path / "patches", conditions=ROCM7)
    text = err.value.paragraph()
    assert err.value.exit_code == 2
    assert (f"the upstream fix drifted (https://github.com/pytorch/pytorch/commit/"
            f"{shas['conflict']}) conflicts with this tree") in text
    assert "nothing in the tree was changed" in text
    assert tree_state(tree) == before  # our own patch 0001-g did not go in either


@pytest.mark.slow
def test_a_commit_the_remote_lacks_is_exit_3(
    checkout: tuple[Settings, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings, tree = checkout
    before = tree_state(tree)
    _use(monkeypatch, tmp_path, {"gone": "0123456789abcdef0123456789abcdef01234567"})
    with pytest.raises(FetchFailed) as err:
        patch_sources(settings, patches_root=tmp_path / "none", conditions=ROCM7)
    assert err.value.exit_code == 3
    assert err.value.paragraph().startswith(
        "Cannot fetch the upstream fix gone (commit 0123456789abcdef0123456789abcdef01234567) "
        "from file://")
    assert tree_state(tree) == before


@pytest.mark.slow
def test_not_needed_fixes_are_not_fetched(
    remote: tuple[FakeRemotes, dict[str, str]], checkout: tuple[Settings, Path],
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, shas = remote
    settings, tree = checkout
    _use(monkeypatch, tmp_path, {"fix-f": shas["f"]})
    rocm6 = BuildConditions(rocm_version="6.4.3")
    (report,) = patch_sources(settings, patches_root=tmp_path / "none", conditions=rocm6)
    assert report.statuses == ()
    assert shas["f"] not in git("rev-list", "--all", cwd=tree)


@pytest.mark.slow
@pytest.mark.needs_tool("hipcc")
def test_invoke_plan_lists_each_fix_with_its_reason(tmp_path: Path) -> None:
    """This machine's ROCm (Debian's 5.2) meets neither entry's ROCm range: both are listed,
    skipped, with the condition that failed."""
    kit = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(kit), "NO_COLOR": "1", "HIP_PLATFORM": "amd"}
    done = subprocess.run([sys.executable, "-m", "invoke", "plan", "--arch", "gfx90a",
                           "--work-dir", str(tmp_path / "w")], cwd=kit, env=env,
                          capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    start = lines.index("upstream fixes (config/upstream_fixes.toml)")
    assert lines[start + 1].split() == ["fix", "commit", "verdict", "why"]
    assert [line.split(None, 3) for line in lines[start + 3:start + 6]] == [
        ["warpsize-host", "04bd7e6850e8", "skipped", "ROCm 5.2 is not >=7.0"],
        ["aotriton-rocm70-sha256", "06a67a8948da", "skipped", "ROCm 5.2 is not <7.1,>=7.0"],
        ["int4mm-memcpy-gfx90x", "0f60458c8eca", "skipped",
         "fails on windows only, not linux"]]
    assert all(len(line) <= 80 for line in lines[start:start + 6])


def _patches_step(decisions: tuple[FixDecision, ...]) -> Step:
    """The patches step of a pure plan (tests/unit/test_build_plan.py's minimal inputs)."""
    from types import SimpleNamespace

    from rocmforge.plan.build_plan import plan_build
    from rocmforge.workdir import workdir_for

    settings = SimpleNamespace(
        pytorch_repo="https://github.com/pytorch/pytorch.git", pytorch_ref="v2.7.1", mirrors={},
        triton_index="https://i/rocm{rocm}", triton_repo="", origins={}, triton_mode="auto",
        skip_preflight=False, venv_system_site_packages=False)
    facts = SimpleNamespace(rocm=SimpleNamespace(root=Path("/opt/rocm-7.0.2"), version="7.0.2"))
    plan = plan_build(settings, facts, ("gfx1100",), workdir=workdir_for("/w"),  # type: ignore[arg-type]
                      env={"PYTORCH_ROCM_ARCH": "gfx1100"}, compilers={"cxx": "/usr/bin/g++"},
                      upstream_fixes=decisions)
    return next(s for s in plan.steps if s.name == "patches")


def test_plan_digest_is_the_same_before_and_after_the_checkout() -> None:
    fixes = load_fixes()
    before = _patches_step(decide(fixes, ROCM7))
    on_27 = _patches_step(decide(fixes, dataclasses.replace(ROCM7, pytorch_version="2.7.1")))
    on_29 = _patches_step(decide(fixes, dataclasses.replace(ROCM7, pytorch_version="2.9.1")))
    assert before.digest() == on_27.digest() == on_29.digest()
    assert before.inputs["fix:warpsize-host"] == (
        "04bd7e6850e8efec77994963ffee87549555b9c3 <2.8,>=2.7")
    assert "fix:aotriton-rocm70-sha256" not in before.inputs  # unverified: never fetched
    rocm6 = _patches_step(decide(fixes, BuildConditions(rocm_version="6.4.3")))
    assert rocm6.digest() != before.digest()
    assert not any(k.startswith("fix:") for k in rocm6.inputs)
