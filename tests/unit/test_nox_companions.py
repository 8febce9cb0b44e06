"""`nox -s verify` installs the companion wheels (torchvision, torchaudio) the manifest names:
the install list rocmforge.sessions.support computes, from a real dist/ folder and a manifest
written by the kit's own writer. The wheels are real files with real wheel names and distinct
contents (their sha256 is what is checked); the planner reads names and bytes, never installs."""

from __future__ import annotations

import hashlib
import platform
import sys
from pathlib import Path

import pytest
from packaging.tags import sys_tags

from rocmforge.errors import UsageError
from rocmforge.knowledge.manifest import build_manifest, file_record, write_manifest
from rocmforge.sessions import support as ns
from rocmforge.verify.model import CHECK_NAMES

PY = f"cp{sys.version_info.major}{sys.version_info.minor}"
TORCH = f"torch-2.9.1+rocm6.4-{PY}-{PY}-linux_x86_64.whl"
TRITON = f"pytorch_triton_rocm-3.4.0+gitf7888497-{PY}-{PY}-linux_x86_64.whl"
VISION = f"torchvision-0.24.1+rocm6.4-{PY}-{PY}-linux_x86_64.whl"
AUDIO = f"torchaudio-2.9.1+rocm6.4-{PY}-{PY}-linux_x86_64.whl"


def make_dist(tmp_path: Path, *, triton: bool = True, audio: bool = True,
              hashes: dict[str, str] | None = None, in_wheels: bool = True) -> Path:
    """dist/ with the wheels and a manifest naming them, as a `--with torchvision,torchaudio`
    build leaves it (companions section: version, ref, commit, repo, wheel, sha256)."""
    dist = tmp_path / "dist"
    dist.mkdir(parents=True)
    names = [TORCH, VISION] + ([TRITON] if triton else []) + ([AUDIO] if audio else [])
    for name in names:
        (dist / name).write_bytes(f"contents of {name}\n".encode())
    wheels = {"torch": TORCH, "triton": TRITON if triton else ""}
    doc = build_manifest(targets=["gfx1100"], wheels=wheels, lock=None, toolchain={}, env={},
                         steps=[], plan_settings={}, created="2026-12-03T12:00:00+0000")
    companions: dict[str, dict[str, str]] = {
        "torchvision": {"version": "0.24.1", "ref": "v0.24.1", "commit": "a" * 40,
                        "repo": "https://github.com/pytorch/vision.git", "wheel": VISION}}
    if audio:
        companions["torchaudio"] = {"version": "2.9.1", "ref": "v2.9.1", "commit": "b" * 40,
                                    "repo": "https://github.com/pytorch/audio.git",
                                    "wheel": AUDIO}
    for name, sha in (hashes or {}).items():
        companions[name]["sha256"] = sha
    if in_wheels:
        doc["wheels"] = {**wheels, "torchvision": VISION, "torchaudio": AUDIO if audio else ""}
    doc["companions"] = companions
    # "files" for the wheels written above, as the collect steps record them.
    doc["files"] = {name: file_record(dist / name) for name in names}
    write_manifest(dist / "manifest.json", doc)
    return dist


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def plan(dist: Path) -> ns.VerifySession:
    return ns.plan_session("gfx1100", dist=dist, environ={}, supported_tags=sys_tags(),
                           python=platform.python_version())


def test_the_install_list_holds_the_companions_the_manifest_names(tmp_path: Path) -> None:
    dist = make_dist(tmp_path)
    hashes = {"torchvision": sha(dist / VISION), "torchaudio": sha(dist / AUDIO).upper()}
    dist = make_dist(tmp_path / "hashed", hashes=hashes)
    session = plan(dist)
    assert session.wheels.paths == (dist / TORCH, dist / TRITON, dist / VISION, dist / AUDIO)
    assert session.wheels.companions == (dist / VISION, dist / AUDIO)
    assert session.verify_argv("python")[-2:] == ["--manifest", str(dist / "manifest.json")]


def test_only_what_was_built_and_only_those_files(tmp_path: Path) -> None:
    dist = make_dist(tmp_path, audio=False)
    assert plan(dist).wheels.paths == (dist / TORCH, dist / TRITON, dist / VISION)
    # A stray companion wheel in dist/ that the manifest does not list: refused, as `invoke
    # install` refuses it (issue 39 item 5: one record), not silently left out.
    (dist / AUDIO).write_bytes(b"left over from another build\n")
    with pytest.raises(UsageError) as info:
        plan(dist)
    assert info.value.what == (f"dist/ and its manifest disagree: {dist / AUDIO} is in dist/ "
                               "but manifest.json does not list it")


def test_a_companion_named_only_in_the_companions_section(tmp_path: Path) -> None:
    dist = make_dist(tmp_path, in_wheels=False)
    assert plan(dist).wheels.companions == (dist / VISION, dist / AUDIO)


def test_without_triton_the_companions_are_still_installed_and_checked(tmp_path: Path) -> None:
    dist = make_dist(tmp_path, triton=False)
    session = plan(dist)
    assert session.wheels.paths == (dist / TORCH, dist / VISION, dist / AUDIO)
    argv = session.verify_argv("python")
    only = argv[argv.index("--only") + 1].split(",")
    assert "companions" in only and "triton" not in only
    assert only == [n for n in CHECK_NAMES if n not in ("triton", "triton_targets")]


def test_a_wheel_that_does_not_hash_to_the_manifest_is_refused(tmp_path: Path) -> None:
    dist = make_dist(tmp_path, hashes={"torchvision": "0" * 64})
    with pytest.raises(UsageError) as info:
        plan(dist)
    assert info.value.exit_code == 2
    assert info.value.what == ("dist/ and its manifest disagree: manifest.json records two "
                               f"sha256 for {VISION} (companions.torchvision and files)")
    assert "invoke build" in info.value.paragraph()


def test_a_named_companion_wheel_that_is_gone(tmp_path: Path) -> None:
    dist = make_dist(tmp_path)
    (dist / AUDIO).unlink()
    with pytest.raises(UsageError) as info:
        plan(dist)
    assert info.value.what == (f"dist/ and its manifest disagree: {dist / AUDIO} (listed in "
                               "manifest.json) is gone")


def test_a_companion_wheel_for_another_python_is_refused_before_install(tmp_path: Path) -> None:
    dist = make_dist(tmp_path, audio=False)
    other = "torchvision-0.24.1-cp39-cp39-linux_x86_64.whl"
    (dist / VISION).rename(dist / other)
    manifest = dist / "manifest.json"
    manifest.write_text(manifest.read_text().replace(VISION, other))
    with pytest.raises(UsageError, match=f"{other} is built for cp39-cp39-linux_x86_64"):
        plan(dist)
