"""Helpers of the build tests: real wheels made at test time, and a PEP 691 index for them.

`make_wheel` writes a valid pure-Python wheel (zip with dist-info METADATA, WHEEL and a RECORD
with sha256 entries) that pip really installs; `serve_index` makes a pytest-httpserver serve a
PEP 691 JSON project page listing it with the sha256 a test chooses (right or wrong).
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path
from typing import Any


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest},{len(data)}"


def make_wheel(folder: Path, project: str, version: str, files: dict[str, str | bytes],
               *, metadata: str = "", entry_points: str = "") -> Path:
    """A py3-none-any wheel of `project` at `version` holding `files` (path -> text or bytes);
    `metadata` adds METADATA lines (Requires-Dist, Provides-Extra), `entry_points` the
    entry_points.txt text (console scripts)."""
    dist = project.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    entries = dict(files)
    entries[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\n{metadata}"
    )
    if entry_points:
        entries[f"{info}/entry_points.txt"] = entry_points
    entries[f"{info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: rocmforge-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = [f"{name},{_record_hash(text if isinstance(text, bytes) else text.encode())}"
              for name, text in entries.items()]
    record.append(f"{info}/RECORD,,")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in entries.items():
            archive.writestr(name, text)
        archive.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return path


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def serve_index(httpserver: Any, project: str, wheel: Path, sha256: str) -> str:
    """Serve /simple/<project>/ (PEP 691 JSON) and the wheel file; return the index URL."""
    httpserver.clear()
    file_url = f"/files/{wheel.name}"
    doc = {
        "meta": {"api-version": "1.0"},
        "name": project,
        "files": [{"filename": wheel.name, "url": file_url, "hashes": {"sha256": sha256}}],
    }
    httpserver.expect_request(f"/simple/{project}/").respond_with_json(
        doc, content_type="application/vnd.pypi.simple.v1+json")
    httpserver.expect_request(file_url).respond_with_data(
        wheel.read_bytes(), content_type="application/octet-stream")
    return httpserver.url_for("/simple")


def assert_manifest_describes_wheel(work: Path, patches: str | None = None) -> None:
    """The manifest never lies (issue 14): after a finished build, dist/manifest.json names the
    targets the torch wheel's device code really holds (read with the real
    clang-offload-bundler), the commit the tree is at, the patches the lock lists with their
    sha256 as the files are now, the build variables the steps ran with, and the version the
    tree's version.txt states. Called after every successful fixture build in the suite."""
    import json
    import shutil
    import subprocess
    import tempfile

    dist = work / "dist"
    manifest = json.loads((dist / "manifest.json").read_text())
    wheel = dist / manifest["wheels"]["torch"]
    assert wheel.is_file(), f"the manifest names {wheel.name}, which is not in {dist}"
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel) as archive:
        so = Path(tmp) / "libtorch_hip.so"
        so.write_bytes(archive.read("torch/lib/libtorch_hip.so"))
        fatbin = Path(tmp) / "fatbin.bin"
        objcopy = shutil.which("llvm-objcopy-22") or "objcopy"
        subprocess.run([objcopy, "--dump-section", f".hip_fatbin={fatbin}", str(so)], check=True)
        listed = subprocess.run(["clang-offload-bundler-22", "--list", "--type=o",
                                 f"--input={fatbin}"], capture_output=True, text=True,
                                check=True).stdout
        version_in_wheel = archive.read("torch/version.txt").decode().strip()
    in_wheel = sorted(line.split("--", 1)[1] for line in listed.split() if "amdgcn" in line)
    assert sorted(manifest["targets"]) == in_wheel, (manifest["targets"], in_wheel)
    assert sorted(manifest["env"]["PYTORCH_ROCM_ARCH"].split(";")) == in_wheel
    tree = work / "src" / "pytorch"
    head = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert manifest["source"]["commit"] == head
    assert manifest["lock"]["pytorch"]["commit"] == head
    kit_patches = Path(patches) if patches else Path(__file__).resolve().parents[1] / "patches"
    for entry in manifest["lock"].get("patches", []):
        assert hashlib.sha256((kit_patches / entry["file"]).read_bytes()).hexdigest() == \
            entry["sha256"], entry
    facts = manifest.get("pytorch", {})
    if facts:
        assert facts["version"] == (tree / "version.txt").read_text().strip()
        assert version_in_wheel.startswith(facts["version"].split("+")[0])
    assert_manifest_describes_companions(work, manifest, kit_patches)


def assert_manifest_describes_companions(work: Path, manifest: dict[str, Any],
                                         kit_patches: Path) -> None:
    """Each companion the manifest names (issue 19): its wheel is in dist/ under the name both
    sections give (and its sha256 when recorded), its commit is the checkout's HEAD, its
    version is the checkout's version.txt, the patches it lists have those sha256s, and every
    .so of its wheel with device code holds exactly the manifest's targets; a wheel key of a
    companion has its section and the other way round."""
    import subprocess

    companions = manifest.get("companions", {})
    wheels = manifest["wheels"]
    assert set(companions) == set(wheels) - {"torch", "triton"}, (companions, wheels)
    for name, entry in companions.items():
        wheel = work / "dist" / entry["wheel"]
        assert wheels[name] == entry["wheel"] and wheel.is_file(), (name, entry, wheels)
        if entry.get("sha256"):
            assert sha256_of(wheel) == entry["sha256"], name
        tree = work / "src" / name
        head = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        assert entry["commit"] == head, (name, entry["commit"], head)
        if entry.get("kind") == "extension":  # its version is the one its wheel carries
            assert entry["version"] == wheel.name.split("-")[1], (name, entry["version"])
        else:
            assert entry["version"] == (tree / "version.txt").read_text().strip()
        for patch in entry.get("patches", []):
            assert sha256_of(kit_patches / patch["file"]) == patch["sha256"], patch
        with_code = {member: targets for member, targets in wheel_so_targets(wheel).items()
                     if targets}
        if entry.get("backend") == "triton":  # kernels compiled at run time: no device code
            assert not with_code, (wheel.name, with_code)
            continue
        assert with_code, f"{wheel.name} has no .so with device code"
        for member, targets in with_code.items():
            assert targets == sorted(manifest["targets"]), (wheel.name, member, targets)


def wheel_so_targets(wheel: Path) -> dict[str, list[str]]:
    """member -> the amdgcn targets of its .hip_fatbin (read with the real
    clang-offload-bundler-22), for every .so in the wheel; [] for a .so without device code."""
    import shutil
    import subprocess
    import tempfile

    found: dict[str, list[str]] = {}
    objcopy = shutil.which("llvm-objcopy-22") or "objcopy"
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if not member.endswith(".so"):
                continue
            so = Path(tmp) / "lib.so"
            so.write_bytes(archive.read(member))
            fatbin = Path(tmp) / "fatbin.bin"
            fatbin.unlink(missing_ok=True)
            dumped = subprocess.run([objcopy, "--dump-section", f".hip_fatbin={fatbin}",
                                     str(so)], capture_output=True, text=True)
            if dumped.returncode != 0 or not fatbin.is_file():
                found[member] = []
                continue
            listed = subprocess.run(["clang-offload-bundler-22", "--list", "--type=o",
                                     f"--input={fatbin}"], capture_output=True, text=True,
                                    check=True).stdout
            found[member] = sorted(line.split("--", 1)[1] for line in listed.split()
                                   if "amdgcn" in line)
    return found
