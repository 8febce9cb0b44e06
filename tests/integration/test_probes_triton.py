"""The Triton target probe: real compiles with real Triton wheels, the kit's ELF decoder on their
code objects, and the SKIP/FAIL paths (no triton, no ld.lld, a time limit, a crash).

Pythons with Triton come from the environment (.ci/run makes them):
- TEST_TRITON_PYTHON: Triton 3.6.0 (and torch, for the verify check); this Python
  itself when it imports triton;
- TEST_TRITON_LLD_PYTHON: a Triton before 3.5 (3.4.0), which links with an external
  ld.lld, for the ld.lld paths.
Without them these tests skip, except under CI=true, where they fail. The only fake is the
sleeping "python" for the time limit (it stands for a compile that hangs).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rocmforge.knowledge.arches import load_arch_table
from rocmforge.plan.triton_probe_rows import triton_probe_rows
from rocmforge.probes import RunResult
from rocmforge.probes.triton_codegen import version_tuple
from rocmforge.probes.triton_targets import (
    CODEGEN_SCRIPT,
    LLD_FIX,
    ProbeRequest,
    TritonProbeReport,
    TritonTargetResult,
    absorb_run,
    check_code_object,
    codegen_argv,
    find_lld,
    gap_error,
    plan_targets,
    probe_environment,
    probe_triton_targets,
)
from rocmforge.verify.checks.triton_targets import verdict

ROOT = Path(__file__).resolve().parents[2]
TRITON_PYTHON_ENV = "TEST_TRITON_PYTHON"
LLD_TRITON_PYTHON_ENV = "TEST_TRITON_LLD_PYTHON"
TABLE = load_arch_table()


def triton_version(python: str) -> str:
    done = subprocess.run([python, "-c", "import triton; print(triton.__version__)"],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def need_python(env_name: str, what: str, *, self_ok: bool) -> tuple[str, str]:
    """(python, triton version) or skip (fail under CI) saying how to provide it."""
    candidates = [os.environ.get(env_name, "")]
    if self_ok:
        candidates.append(sys.executable)
    for python in filter(None, candidates):
        version = triton_version(python)
        if version:
            return python, version
    message = (f"no Python with {what}: set {env_name} to one "
               f"(python3 -m venv DIR && DIR/bin/pip install triton==X; .ci/run does)")
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def triton36() -> tuple[str, str]:
    return need_python(TRITON_PYTHON_ENV, "Triton 3.6.0", self_ok=True)


@pytest.fixture(scope="module")
def lld_triton() -> tuple[str, str]:
    python, version = need_python(LLD_TRITON_PYTHON_ENV, "a Triton before 3.5 (3.4.0)",
                                  self_ok=False)
    if version_tuple(version) >= (3, 5):
        pytest.fail(f"{LLD_TRITON_PYTHON_ENV} has Triton {version}, which links in-process; "
                    "the ld.lld tests need 3.0-3.4")
    return python, version


def by_target(report: TritonProbeReport) -> dict[str, TritonTargetResult]:
    return {r.target: r for r in report.results}


# --- pure parts -------------------------------------------------------------------------------


def test_plan_drops_features_and_duplicates_and_skips_generic_and_unknown() -> None:
    requests, decided = plan_targets(
        ["gfx90a:xnack-", "gfx90a", "GFX1100", "gfx11-generic", "gfx9999"], TABLE)
    assert [(r.target, r.wave, r.expected_mach) for r in requests] == [
        ("gfx90a", 64, 0x03F), ("gfx1100", 32, 0x041)]
    assert [(r.target, r.status, r.cause) for r in decided] == [
        ("gfx11-generic", "SKIP", "not_a_triton_target"),
        ("gfx9999", "SKIP", "not_a_triton_target")]
    assert decided[0].reason.startswith("Triton compiles for the GPU it runs on, never for a "
                                        "generic target; probe a member instead (gfx1100, ")
    assert decided[1].reason == ("gfx9999 is not in the kit's arch table (no wave size or mach "
                                 "to check)")


def test_codegen_command_line() -> None:
    requests, _ = plan_targets(["gfx942", "gfx1100"], TABLE)
    assert codegen_argv("/venv/bin/python", Path("/tmp/x/run1"), requests,
                        ["/usr/lib/llvm-22/bin/ld.lld"]) == [
        "/venv/bin/python", str(ROOT / "rocmforge/probes/triton_codegen.py"),
        "--out", "/tmp/x/run1", "--lld-candidate", "/usr/lib/llvm-22/bin/ld.lld",
        "gfx942:64", "gfx1100:32"]


def test_find_lld_looks_at_rocm_path_then_path_then_newest_llvm(tmp_path: Path) -> None:
    def lld(*parts: str) -> str:
        path = tmp_path.joinpath(*parts, "ld.lld")
        path.parent.mkdir(parents=True)
        path.write_text("")
        path.chmod(0o755)
        return str(path)

    rocm = lld("rocm", "llvm", "bin")
    llvm17 = lld("lib", "llvm-17", "bin")
    llvm22 = lld("lib", "llvm-22", "bin")
    on_path = lld("bin")
    search = find_lld({"ROCM_PATH": str(tmp_path / "rocm"), "PATH": str(tmp_path / "bin")},
                      roots=(tmp_path / "lib",))
    assert search.found == (rocm, on_path, llvm22, llvm17)
    assert search.looked_at == (
        rocm,
        str(tmp_path / "lib" / "llvm" / "bin" / "ld.lld"),
        f"ld.lld on PATH ({tmp_path / 'bin'})",
        str(tmp_path / "lib" / "llvm-*" / "bin" / "ld.lld"),
    )
    assert find_lld({"PATH": ""}, roots=()).found == ()


def test_probe_environment_keeps_triton_out_of_home(tmp_path: Path) -> None:
    env = probe_environment({"HOME": "/home/u", "TRITON_ALWAYS_COMPILE": "1", "PATH": "/bin"},
                            tmp_path)
    assert env == {
        "HOME": "/home/u",
        "PATH": "/bin",
        "TRITON_HOME": str(tmp_path / "home"),
        "TRITON_CACHE_DIR": str(tmp_path / "cache"),
        "TRITON_DUMP_DIR": str(tmp_path / "dump"),
        "TRITON_OVERRIDE_DIR": str(tmp_path / "override"),
    }


def test_a_crash_fails_that_target_and_hands_back_the_rest(tmp_path: Path) -> None:
    pending = [ProbeRequest(target="gfx90a", wave=64, expected_mach=0x03F),
               ProbeRequest(target="gfx942", wave=64, expected_mach=0x04C)]
    events: list[dict[str, object]] = [
        {"event": "triton", "version": "3.6.0", "api": "constexprs", "location": "/x"},
        {"event": "lld", "needed": False},
        {"event": "begin", "target": "gfx90a", "wave": 64},
    ]
    done = RunResult(argv=("/venv/bin/python",), returncode=-11, stdout="",
                     stderr="LLVM ERROR: Cannot select: intrinsic\n")
    results: dict[str, TritonTargetResult] = {}
    info: dict[str, object] = {}
    left = absorb_run(done, events, pending, results, info, tmp_path, TABLE,
                   find_lld({"PATH": ""}, ()), 60.0)
    assert left == [pending[1]]
    assert results["gfx90a"].status == "FAIL"
    assert results["gfx90a"].cause == "crash"
    assert results["gfx90a"].reason == ("Triton crashed compiling for gfx90a (exit -11: LLVM "
                                        "ERROR: Cannot select: intrinsic)")
    assert info == {"version": "3.6.0", "location": "/x", "api": "constexprs", "lld": "",
                    "lld_source": ""}


@pytest.mark.needs_tool("clang-22")
def test_mach_mismatch_and_unreadable_code_objects_fail(tmp_path: Path) -> None:
    obj = tmp_path / "gfx942.o"
    subprocess.run(["clang-22", "-x", "hip", "--offload-arch=gfx942", "--cuda-device-only",
                    "--no-gpu-bundle-output", "-nogpuinc", "-nogpulib", "-c",
                    str(ROOT / "tests/hip/bare_add.hip"), "-o", str(obj)], check=True)
    data = obj.read_bytes()
    gfx942 = ProbeRequest(target="gfx942", wave=64, expected_mach=0x04C)
    gfx90a = ProbeRequest(target="gfx90a", wave=64, expected_mach=0x03F)
    assert check_code_object(gfx942, data, 0.1, TABLE).status == "OK"
    wrong = check_code_object(gfx90a, data, 0.1, TABLE)
    assert (wrong.status, wrong.cause, wrong.mach) == ("FAIL", "mach", 0x04C)
    assert wrong.reason == ("Triton produced code for gfx942 (EF_AMDGPU_MACH 0x04c), not for "
                            "gfx90a (0x03f)")
    junk = check_code_object(gfx942, b"not an elf at all" * 4, 0.1, TABLE)
    assert junk.status == "FAIL"
    assert junk.reason == ("Triton's code object is unreadable: code object starts with "
                           "6e6f7420, not the ELF magic.")


def test_doctor_rows_fail_only_for_the_pinned_version() -> None:
    report = TritonProbeReport(
        python="/venv/bin/python", triton_version="3.6.0",
        results=(
            TritonTargetResult(target="gfx942", status="OK", reason="6176-byte code object, "
                               "EF_AMDGPU_MACH 0x04c = gfx942"),
            TritonTargetResult(target="gfx906", status="FAIL",
                               reason="error: unsupported target: 'gfx906'"),
            TritonTargetResult(target="gfx1100", status="SKIP", reason="no ld.lld", cause="no_lld"),
        ))
    pinned = triton_probe_rows(report, pin_version="3.6.0+git9844da95")
    assert [(r.check, r.status) for r in pinned] == [
        ("triton codegen gfx942", "OK"), ("triton codegen gfx906", "FAIL"),
        ("triton codegen gfx1100", "WARN")]
    assert pinned[1].detail == ("Triton 3.6.0 (/venv/bin/python) cannot generate code for gfx906: "
                                "error: unsupported target: 'gfx906'; it is the version this "
                                "PyTorch pins, so the build would install it")
    assert pinned[1].fix == ("choose a PyTorch ref whose Triton pin supports gfx906, or drop "
                             "gfx906 from --arch")
    assert pinned[2].fix == LLD_FIX
    other = triton_probe_rows(report, pin_version="3.5.1")
    assert [r.status for r in other] == ["OK", "WARN", "WARN"]
    assert other[1].detail.endswith("the build installs PyTorch's pinned Triton and probes that "
                                     "one")
    assert triton_probe_rows(TritonProbeReport(python="/p", triton_version="")) == ()


def test_gap_error_names_targets_and_the_three_ways_on() -> None:
    report = TritonProbeReport(python="/p", triton_version="3.6.0", results=(
        TritonTargetResult(target="gfx906", status="FAIL",
                           reason="error: unsupported target: 'gfx906'"),
        TritonTargetResult(target="gfx942", status="OK", reason="ok")))
    error = gap_error(report, pin="3.6.0")
    assert error is not None and error.exit_code == 1
    assert str(error) == (
        "Triton 3.6.0 (PyTorch's pin 3.6.0) cannot generate code for gfx906 (gfx906: error: "
        "unsupported target: 'gfx906'). Every torch.compile and Triton-backed kernel would fail "
        "on that GPU at run time, after an hour-long build. Fix: build a PyTorch ref whose "
        "Triton pin supports gfx906, drop gfx906 from --arch, or pass --allow-triton-gap to "
        "build anyway (recorded in the manifest).")
    assert gap_error(TritonProbeReport(python="/p", triton_version="3.6.0")) is None


def test_verify_verdict_from_probe_json() -> None:
    probe = {"triton_version": "3.6.0", "results": [
        {"target": "gfx942", "status": "OK", "reason": "ok", "seconds": 0.5},
        {"target": "gfx1100", "status": "SKIP", "reason": "time", "seconds": 0.0}]}
    status, reason, rows = verdict(probe)
    assert (status.value, reason) == ("SKIP", "not proven for gfx1100: time")
    assert [(r["name"], r["status"]) for r in rows] == [("gfx942", "PASS"), ("gfx1100", "SKIP")]


# --- without triton: a bare venv, a hanging "python" -----------------------------------------


@pytest.mark.slow
def test_python_without_triton_skips_every_target(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")],
                   check=True)
    python = str(tmp_path / "bare" / "bin" / "python")
    report = probe_triton_targets(python, ["gfx942", "gfx1100"], table=TABLE)
    assert report.triton_version == ""
    assert [(r.target, r.status, r.cause) for r in report.results] == [
        ("gfx942", "SKIP", "no_triton"), ("gfx1100", "SKIP", "no_triton")]
    assert report.results[0].reason == (
        f"no triton in {python} (ModuleNotFoundError: No module named 'triton')")
    assert triton_probe_rows(report) == ()


class CountingRunner:
    """The real runner, counting the programs it starts."""

    def __init__(self) -> None:
        self.argvs: list[list[str]] = []

    def __call__(self, argv: list[str], **kwargs: object) -> RunResult:
        from rocmforge.probes import run_command

        self.argvs.append(list(argv))
        return run_command(argv, **kwargs)  # type: ignore[arg-type]


@pytest.mark.slow
def test_this_python_without_triton_answers_without_a_child(tmp_path: Path) -> None:
    """Asked (as doctor asks) about this very interpreter, which cannot find a triton, the
    probe gives the child's answer without starting it; the same interpreter by another path,
    with another PYTHONPATH, or for a caller that does not allow it (a build), is asked the
    usual way and answers the same."""
    import importlib.util

    here_has_triton = importlib.util.find_spec("triton") is not None
    targets = ["gfx942", "gfx1100"]
    runner = CountingRunner()
    here = probe_triton_targets(sys.executable, targets, table=TABLE, run=runner,
                                answer_here=True)
    assert len(runner.argvs) == (1 if here_has_triton else 0)
    if here_has_triton:
        return  # the child answered; nothing else to compare
    link = tmp_path / "python"
    link.symlink_to(sys.executable)
    by_link = probe_triton_targets(str(link), targets, table=TABLE, run=runner,
                                   answer_here=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    environ = {**os.environ, "PYTHONPATH": str(empty)}
    other_path = probe_triton_targets(sys.executable, targets, table=TABLE, run=runner,
                                      environ=environ, answer_here=True)
    not_allowed = probe_triton_targets(sys.executable, targets, table=TABLE, run=runner)
    assert [argv[0] for argv in runner.argvs] == [str(link), sys.executable, sys.executable]
    for report, python in ((by_link, str(link)), (other_path, sys.executable),
                           (not_allowed, sys.executable)):
        assert [(r.target, r.status, r.cause, r.reason) for r in report.results] == [
            (r.target, r.status, r.cause, r.reason.replace(sys.executable, python))
            for r in here.results]
    assert [(r.status, r.cause) for r in here.results] == [("SKIP", "no_triton")] * 2
    assert here.results[0].reason == (
        f"no triton in {sys.executable} (ModuleNotFoundError: No module named 'triton')")
    assert (here.triton_version, here.argv) == ("", ())


def test_time_limit_skips_what_did_not_finish(tmp_path: Path) -> None:
    # Fake at the boundary: a "python" that hangs like a stuck compile (exec: no orphan child).
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexec sleep 60\n")
    fake.chmod(0o755)
    started = time.monotonic()
    report = probe_triton_targets(str(fake), ["gfx942", "gfx90a"], table=TABLE, timeout_s=1.0)
    assert time.monotonic() - started < 10
    assert [(r.status, r.cause) for r in report.results] == [("SKIP", "time_limit")] * 2
    assert report.results[0].reason == ("not probed: the probe's time limit (1 s) ran out before "
                                        "Triton finished")


def test_missing_python_is_a_skip_with_the_error(tmp_path: Path) -> None:
    report = probe_triton_targets(str(tmp_path / "nope" / "python"), ["gfx942"], table=TABLE)
    only = report.results[0]
    assert (only.status, only.cause) == ("SKIP", "cannot_run")
    assert only.reason == (f"cannot run {tmp_path / 'nope' / 'python'}: No such file or "
                           "directory")


# --- real Triton 3.6.0 -----------------------------------------------------------------------


@pytest.mark.slow
def test_real_compiles_produce_code_objects_for_each_target(triton36: tuple[str, str]) -> None:
    python, version = triton36
    targets = ["gfx90a", "gfx942", "gfx1100", "gfx1201"]
    report = probe_triton_targets(python, targets, table=TABLE)
    assert report.triton_version == version
    assert report.api == "constexprs"
    assert [r.target for r in report.results] == targets
    for result in report.results:
        arch = TABLE.arches[result.target]
        assert (result.status, result.mach, result.wave) == ("OK", arch.mach, arch.wavefront)
        assert 1000 < result.code_object_size < 100_000
        assert result.reason == (f"{result.code_object_size}-byte code object, EF_AMDGPU_MACH "
                                 f"{arch.mach:#05x} = {result.target}")
    assert report.failed() == ()
    assert gap_error(report) is None


@pytest.mark.slow
def test_gfx906_fails_with_tritons_first_error_line(triton36: tuple[str, str]) -> None:
    python, version = triton36
    if not (3, 0) <= version_tuple(version) < (3, 8):
        pytest.skip(f"Triton {version} compiles for gfx906 (3.8.0 added it back)")
    report = probe_triton_targets(python, ["gfx906", "gfx942"], table=TABLE)
    results = by_target(report)
    assert (results["gfx906"].status, results["gfx906"].cause) == ("FAIL", "")
    assert results["gfx906"].reason == "error: unsupported target: 'gfx906'"
    assert results["gfx906"].mach is None
    assert results["gfx942"].status == "OK"
    assert [r.target for r in report.failed()] == ["gfx906"]


@pytest.mark.slow
def test_users_triton_home_is_untouched(triton36: tuple[str, str], tmp_path: Path) -> None:
    python, _ = triton36
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}
    for name in ("TRITON_HOME", "TRITON_CACHE_DIR"):
        env.pop(name, None)
    report = probe_triton_targets(python, ["gfx942"], table=TABLE, environ=env)
    assert report.results[0].status == "OK"
    assert list(home.iterdir()) == []
    # The control: the same compile without the probe's environment writes ~/.triton.
    subprocess.run([python, str(CODEGEN_SCRIPT), "--out", str(tmp_path / "out"), "gfx942:64"],
                   env=env, check=True, capture_output=True)
    assert (home / ".triton" / "cache").is_dir()


@pytest.mark.slow
def test_verify_check_shows_a_row_per_target(triton36: tuple[str, str], tmp_path: Path) -> None:
    python, version = triton36
    if subprocess.run([python, "-c", "import torch"], capture_output=True).returncode != 0:
        pytest.skip(f"{python} has no torch for the verify suite")
    report = tmp_path / "verify.json"
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [python, "-m", "rocmforge.verify", "--device", "cpu", "--only", "triton_targets",
         "--expect", "gfx942;gfx1100", "--json", str(report)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    check = json.loads(report.read_text())["checks"][0]
    assert check["status"] == "PASS"
    assert check["reason"] == (f"Triton {version} generated code for gfx942, gfx1100 "
                               "(EF_AMDGPU_MACH checked)")
    assert [(r["name"], r["status"]) for r in check["figures"]["rows"]] == [
        ("gfx942", "PASS"), ("gfx1100", "PASS")]
    table = done.stdout.splitlines()[3:6]
    assert [line.split()[:2] for line in table] == [
        ["triton_targets", "PASS"], ["gfx942", "PASS"], ["gfx1100", "PASS"]]
    assert table[1].startswith("  gfx942 ")
    assert table[1].endswith("EF_AMDGPU_MACH 0x04c = gfx942")


# --- a Triton that links with an external ld.lld (3.0-3.4) -----------------------------------


@pytest.mark.slow
def test_no_lld_anywhere_skips_and_says_where_it_looked(lld_triton: tuple[str, str]) -> None:
    python, version = lld_triton
    if any(Path(p).exists() for p in ("/usr/bin/ld.lld", "/opt/rocm/llvm/bin/ld.lld")):
        pytest.skip("Triton's own search finds an ld.lld on this machine")
    report = probe_triton_targets(python, ["gfx942"], table=TABLE,
                                  environ={"PATH": ""}, lld_roots=())
    only = report.results[0]
    assert (only.status, only.cause) == ("SKIP", "no_lld")
    assert only.reason == (
        f"no ld.lld for Triton {version}, which links code objects with an external ld.lld (3.5 "
        "and later link in-process) (Triton's own search: ROCm linker "
        "/opt/rocm/llvm/bin/ld.lld not found. Set 'TRITON_HIP_LLD_PATH' to its path; the kit "
        f"looked at ld.lld on PATH (empty)); fix: {LLD_FIX}")


@pytest.mark.slow
def test_lld_path_pointing_nowhere_is_reported(lld_triton: tuple[str, str],
                                               tmp_path: Path) -> None:
    python, _ = lld_triton
    nowhere = str(tmp_path / "no" / "ld.lld")
    report = probe_triton_targets(python, ["gfx942"], table=TABLE,
                                  environ={"PATH": "", "TRITON_HIP_LLD_PATH": nowhere})
    assert report.results[0].cause == "no_lld"
    assert f"(TRITON_HIP_LLD_PATH={nowhere} is not a file); fix: " in report.results[0].reason


@pytest.mark.slow
@pytest.mark.needs_tool("ld.lld-22")
def test_kit_offers_debian_lld_and_respects_the_users_choice(
        lld_triton: tuple[str, str]) -> None:
    python, _ = lld_triton
    debian = "/usr/lib/llvm-22/bin/ld.lld"
    env = {"PATH": os.environ.get("PATH", "")}
    if shutil.which("ld.lld", path=env["PATH"]):
        pytest.skip("an unversioned ld.lld on PATH comes before Debian's llvm-22 one")
    found = probe_triton_targets(python, ["gfx942", "gfx1100"], table=TABLE, environ=env)
    assert (found.lld, found.lld_source) == (debian, "kit")
    assert [r.status for r in found.results] == ["OK", "OK"]
    chosen = probe_triton_targets(python, ["gfx942"], table=TABLE,
                                  environ={**env, "TRITON_HIP_LLD_PATH": debian})
    assert (chosen.lld, chosen.lld_source) == (debian, "TRITON_HIP_LLD_PATH")
    assert chosen.results[0].status == "OK"


@pytest.mark.slow
def test_cli_prints_the_report_and_exits_1_on_a_fail(triton36: tuple[str, str]) -> None:
    python, version = triton36
    if not (3, 0) <= version_tuple(version) < (3, 8):
        pytest.skip(f"Triton {version} compiles for gfx906")
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from rocmforge.probes.triton_targets import main; "
         "sys.exit(main())", "--python", python, "gfx906", "gfx942:sramecc+"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
        check=False)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["schema"] == "rocmforge.triton-probe/1"
    assert report["triton_version"] == version
    assert [(r["target"], r["status"], r["mach"]) for r in report["results"]] == [
        ("gfx906", "FAIL", None), ("gfx942", "OK", "0x04c")]


@pytest.mark.slow
@pytest.mark.needs_tool("hipcc")
def test_doctor_probes_the_chosen_pythons_triton_per_target(triton36: tuple[str, str]) -> None:
    """`invoke doctor` runs the probe with the Triton of the chosen Python (settings python):
    a row per target, gfx906 a WARN (3.6.0 is not the pin of v2.9.1, whose Triton the build
    installs and probes again), the others OK with the mach the kit's ELF reader saw."""
    python, _ = triton36
    env = {**os.environ, "ROCMFORGE_PYTHON": python, "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "invoke", "doctor", "--json", "--arch",
                           "gfx942;gfx906"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    rows = {r["check"]: r for r in json.loads(done.stdout)["rows"]}
    assert rows["triton codegen gfx942"]["status"] == "OK"
    assert "EF_AMDGPU_MACH 0x04c = gfx942" in rows["triton codegen gfx942"]["detail"]
    assert rows["triton codegen gfx906"]["status"] == "WARN"
    assert "error: unsupported target: 'gfx906'" in rows["triton codegen gfx906"]["detail"]


def _triton_targets_step(python: str, arch: str, tmp_path: Path, *, allow_gap: bool = False):
    """The build's own triton-targets step (the plan made by prepare_build for `arch`, the
    action table of steps/), run by the real runner with the venv's Python replaced by one
    that has Triton 3.6.0 installed (the fixture build's venv has only a stub Triton)."""
    import dataclasses

    from invoke import Config, Context

    from rocmforge.execute.action_args import InVenv
    from rocmforge.execute.model import Plan
    from rocmforge.execute.runner import StepRunner
    from rocmforge.plan.gather import prepare_build
    from rocmforge.settings import defaults_from_config, resolve
    from rocmforge.steps import build_actions

    tmp_path.mkdir(parents=True, exist_ok=True)  # the kit makes its work dir, not those above
    settings = resolve(defaults=defaults_from_config(), environ={}, flags={
        "arch": arch, "work_dir": str(tmp_path / "work"), "allow_triton_gap": allow_gap})
    prepared = prepare_build(settings, with_preflight=False)
    step = next(s for s in prepared.plan.steps if s.name == "triton-targets")
    step = dataclasses.replace(step, argv=(), args=InVenv(action="triton-targets", python=python))
    plan = Plan(settings=prepared.plan.settings, targets=prepared.plan.targets, steps=(step,))
    console = io.StringIO()
    runner = StepRunner(Context(Config()), plan, prepared.inputs.workdir,
                        actions=build_actions(prepared), console=console,
                        resume_hint="run the build again")
    return runner, console


@pytest.mark.slow
@pytest.mark.needs_tool("hipcc")
def test_the_build_stops_after_triton_when_it_cannot_target_a_gpu(
    triton36: tuple[str, str], tmp_path: Path
) -> None:
    """Issue 22's done-when, at the build's own step: gfx906 with Triton 3.6.0 stops the build
    right after the Triton step with Triton's reason and the three ways on; gfx942 passes; with
    allow_triton_gap the build goes on and the step records the gap."""
    from rocmforge.errors import StepFailed

    python, _ = triton36
    runner, console = _triton_targets_step(python, "gfx906", tmp_path / "a")
    with pytest.raises(StepFailed) as failed:
        runner.execute()
    paragraph = failed.value.paragraph()
    assert "Triton 3.6.0 cannot generate code for gfx906 (gfx906: error: unsupported target: " \
        "'gfx906')" in paragraph
    assert "pass --allow-triton-gap to build anyway (recorded in the manifest)" in paragraph
    assert "FAIL gfx906: error: unsupported target: 'gfx906'" in console.getvalue()

    runner, console = _triton_targets_step(python, "gfx942", tmp_path / "b")
    (result,) = runner.execute()
    assert result.status == "ran" and result.details["gap"] == []
    # A step that passes keeps its per-target lines in its log (the console stays quiet).
    assert "OK   gfx942:" in (runner.workdir.logs / "triton-targets.log").read_text()

    runner, _ = _triton_targets_step(python, "gfx906", tmp_path / "c", allow_gap=True)
    (result,) = runner.execute()
    assert result.details["gap"] == ["gfx906"] and result.details["allowed_gap"] is True
