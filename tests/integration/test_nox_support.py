"""nox -s verify's decisions (rocmforge.sessions.support), tested directly, plus nox itself run on
the real noxfile for the listing and one bad input. Wheels are empty files with real wheel names:
the planner reads names, never contents, and every bad input stops before an install."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.tags import sys_tags

from rocmforge.errors import ConfigError, TargetError, UsageError
from rocmforge.knowledge.manifest import MANIFEST_SCHEMA, manifest_in
from rocmforge.sessions import support as ns

ROOT = Path(__file__).resolve().parents[2]
PY = f"cp{sys.version_info.major}{sys.version_info.minor}"
TORCH = f"torch-2.9.1+rocm6.4-{PY}-{PY}-linux_x86_64.whl"
TRITON = f"pytorch_triton_rocm-3.4.0+gitf7888497-{PY}-{PY}-linux_x86_64.whl"


def make_dist(tmp_path: Path, wheels: list[str], manifest: object | None) -> Path:
    dist = tmp_path / "dist"
    dist.mkdir(parents=True)
    for name in wheels:
        (dist / name).write_bytes(b"")
    if manifest is not None:
        text = manifest if isinstance(manifest, str) else json.dumps(manifest)
        (dist / "manifest.json").write_text(text)
    return dist


EMPTY = {"sha256": hashlib.sha256(b"").hexdigest(), "size": 0}  # make_dist's empty wheels


def good_manifest(targets: list[str] | None = None) -> dict[str, object]:
    return {"schema": MANIFEST_SCHEMA, "targets": targets or ["gfx1100", "gfx942"],
            "wheels": {"torch": TORCH, "triton": TRITON},
            "files": {TORCH: EMPTY, TRITON: EMPTY}}


def plan(target: str, dist: Path, environ: dict[str, str] | None = None) -> ns.VerifySession:
    return ns.plan_session(target, dist=dist, environ=environ or {},
                           supported_tags=sys_tags(), python=platform.python_version())


def test_targets_come_from_the_manifest(tmp_path: Path) -> None:
    dist = make_dist(tmp_path, [TORCH, TRITON], good_manifest())
    assert ns.session_targets(dist, {}, lambda: ()) == ["gfx1100", "gfx942"]


def test_targets_from_config_or_an_explicit_list_when_asked(tmp_path: Path) -> None:
    dist = make_dist(tmp_path, [], None)
    env = {ns.TARGETS_ENV: "config"}
    assert ns.session_targets(dist, env, lambda: ("gfx90a",)) == ["gfx90a"]
    assert ns.session_targets(dist, {ns.TARGETS_ENV: "gfx1100; gfx942,gfx1100"},
                              lambda: ()) == ["gfx1100", "gfx942"]
    assert ns.config_targets({"ROCMFORGE_ARCH": "gfx1100;gfx1151"}) == ("gfx1100", "gfx1151")


def test_no_manifest_and_no_config_lists_one_failing_session(tmp_path: Path) -> None:
    dist = make_dist(tmp_path, [TORCH, TRITON], None)
    assert ns.session_targets(dist, {}, lambda: ()) == [ns.NO_TARGETS]
    with pytest.raises(UsageError, match="nothing to verify: no manifest.json in") as info:
        plan(ns.NO_TARGETS, dist)
    assert "ROCMFORGE_VERIFY_TARGETS=config" in info.value.paragraph()


def test_a_bad_manifest_never_breaks_collection_and_fails_its_session(tmp_path: Path) -> None:
    dist = make_dist(tmp_path, [TORCH, TRITON], "{not json")
    assert ns.session_targets(dist, {}, lambda: ()) == [ns.BAD_MANIFEST]
    with pytest.raises(ConfigError, match="is not readable JSON"):
        plan(ns.BAD_MANIFEST, dist)


def test_manifest_of_another_schema(tmp_path: Path) -> None:
    dist = make_dist(tmp_path, [], {"schema": "other/2", "targets": ["gfx1100"]})
    with pytest.raises(ConfigError, match="has schema 'other/2', expected 'rocmforge.manifest/1'"):
        manifest_in(dist)


def test_plan_of_a_good_session(tmp_path: Path) -> None:
    dist = make_dist(tmp_path, [TORCH, TRITON], good_manifest())
    session = plan("gfx942", dist)
    assert session.wheels.torch == dist / TORCH
    assert session.wheels.triton == dist / TRITON
    assert session.wheels.triton_version == "3.4.0+gitf7888497"
    assert session.verify_argv("python") == [
        "python", "-m", "rocmforge.verify", "--expect", "gfx942", "--when-device", "gfx942",
        "--triton-pin", "3.4.0+gitf7888497", "--json", str(dist / "verify" / "gfx942.json"),
        "--manifest", str(dist / "manifest.json")]


def test_target_not_in_the_manifest(tmp_path: Path) -> None:
    dist = make_dist(tmp_path, [TORCH, TRITON], good_manifest(["gfx1100"]))
    with pytest.raises(TargetError) as info:
        plan("gfx942", dist)
    text = info.value.paragraph()
    assert "gfx942 is not a target of the build in" in text
    assert "(built for: gfx1100)" in text
    assert 'invoke build --arch "gfx1100;gfx942"' in text
    assert info.value.exit_code == 2


def test_two_torch_wheels_without_manifest_wheels(tmp_path: Path) -> None:
    other = f"torch-2.8.0+rocm6.3-{PY}-{PY}-linux_x86_64.whl"
    dist = make_dist(tmp_path, [TORCH, other, TRITON],
                     {"schema": MANIFEST_SCHEMA, "targets": ["gfx1100"], "wheels": {}})
    with pytest.raises(UsageError, match="holds 2 torch wheels") as info:
        plan("gfx1100", dist)
    assert other in str(info.value) and TORCH in str(info.value)


def test_missing_triton_wheel(tmp_path: Path) -> None:
    dist = make_dist(tmp_path, [TORCH], None)
    with pytest.raises(UsageError, match="no Triton wheel next to torch-2.9.1"):
        ns.find_wheels(dist, None)
    dist2 = make_dist(tmp_path / "b", [TORCH], {"schema": MANIFEST_SCHEMA,
                                                "targets": ["gfx1100"],
                                                "wheels": {"torch": TORCH, "triton": TRITON}})
    with pytest.raises(UsageError, match="names wheels that are not in") as info:
        plan("gfx1100", dist2)
    assert f"triton: {TRITON}" in str(info.value)


@pytest.mark.parametrize("triton", [
    TRITON,
    f"triton_rocm-3.6.0+git5f1ad2d8-{PY}-{PY}-linux_x86_64.whl",  # the name from PyTorch 2.10
    f"triton-3.5.1-{PY}-{PY}-linux_x86_64.whl",
    f"pytorch_triton-3.5.0+git1234abcd-{PY}-{PY}-linux_x86_64.whl",
])
def test_every_triton_provider_is_found_without_a_manifest(tmp_path: Path, triton: str) -> None:
    # Drift bug: the session's own provider list lacked triton-rocm (config/pytorch.toml's
    # wheel name from 2.10), so a triton_rocm wheel was "no Triton wheel".
    dist = make_dist(tmp_path, [TORCH, triton, "not_triton-1.0-py3-none-any.whl"], None)
    found = ns.find_wheels(dist, None)
    assert (found.torch, found.triton) == (dist / TORCH, dist / triton)
    assert found.triton_version == triton.split("-")[1]


def test_wheel_for_another_python(tmp_path: Path) -> None:
    foreign = "torch-2.9.1+rocm6.4-cp39-cp39-linux_x86_64.whl"
    dist = make_dist(tmp_path, [foreign, TRITON], None)
    with pytest.raises(UsageError) as info:
        plan("gfx1100", dist, {ns.TARGETS_ENV: "gfx1100"})
    text = info.value.paragraph()
    assert f"{foreign} is built for cp39-cp39-linux_x86_64, which Python " in text
    assert "cannot install" in text
    assert "nox --force-python" in text


def test_report_exit_code(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    assert ns.read_report_exit(report) is None
    report.write_text(json.dumps({"schema": "rocmforge.verify/1", "exit_code": 1}))
    assert ns.read_report_exit(report) == 1


def run_nox(*args: str, env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"),
         "--envdir", str(tmp_path / "envs"), *args],
        cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=180)


def test_nox_lists_one_verify_session_per_manifest_target(tmp_path: Path) -> None:
    dist = make_dist(tmp_path, [TORCH, TRITON], good_manifest())
    done = run_nox("-l", "--json", "-s", "verify", env={ns.DIST_ENV: str(dist)},
                   tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [s["session"] for s in listed] == ["verify(gfx1100)", "verify(gfx942)"]
    assert [s["call_spec"] for s in listed] == [{"target": "gfx1100"}, {"target": "gfx942"}]


@pytest.mark.slow
def test_nox_bad_input_is_exit_2_without_traceback(tmp_path: Path) -> None:
    dist = make_dist(tmp_path, [TORCH, f"torch-2.8.0-{PY}-{PY}-linux_x86_64.whl", TRITON],
                     None)
    done = run_nox("-s", "verify(gfx1100)", env={ns.DIST_ENV: str(dist),
                                                 ns.TARGETS_ENV: "gfx1100"}, tmp_path=tmp_path)
    assert done.returncode == 2
    assert "rocmforge: " in done.stderr and "holds 2 torch wheels" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_verify_targets_named_without_wheels_make_no_venv(tmp_path: Path) -> None:
    """Issue 32 item 9: ROCMFORGE_VERIFY_TARGETS with an empty dist/ says there is no wheel
    before nox makes a virtualenv (it used to build the venv, then say so)."""
    env = {**os.environ, "ROCMFORGE_WORK_DIR": str(tmp_path / "w"),
           "ROCMFORGE_VERIFY_TARGETS": "gfx1100", "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "nox", "-s", "verify", "--envdir",
                           str(tmp_path / "nox")], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0
    assert f"no torch wheel in {tmp_path / 'w' / 'dist'}" in done.stderr
    assert "Creating virtual environment" not in done.stderr
    assert not (tmp_path / "nox").exists() or not any((tmp_path / "nox").iterdir())
