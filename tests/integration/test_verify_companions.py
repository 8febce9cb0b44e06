"""The verify suite's `companions` check (torchvision, torchaudio), run for real.

- Pure parts: the torch requirement and its comparison, the release lines, the manifest's
  companions, the diagnosis text.
- The loader diagnosis on real libraries gcc builds here from tests/fixtures/companion_so/ (a
  needed library deleted after linking; an undefined C++ symbol), loaded in a child with torch.
- The real broken case: the index's torchvision 0.28.0 (a CUDA build) installed with `--no-deps`
  into a venv over the CPU torch 2.13.0, where `import torchvision` fails with "operator
  torchvision::nms does not exist"; the check must name libc10_cuda.so and the fix.
- torchaudio 2.11.0 (built on the stable ABI) and TorchCodec 0.17.0 from the package index,
  installed with `pip --target` beside that Python: lfilter PASS on the CPU, a WAV decoded
  through TorchCodec and the system's FFmpeg (Debian's libavcodec59 & co.), and decode SKIP
  with the reason without TorchCodec.
- The real PASS on the CPU: TEST_TORCHVISION_PYTHON (torch 2.14.1 + torchvision 0.29.1, CUDA
  builds that run on the CPU; .ci/run makes it at /opt/rf-tv-0.29.1): nms and roi_align PASS on
  the CPU against the references, the device part SKIPs with the reason.
Missing parts skip here and fail under CI=true (tests/conftest.py). No fakes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import missing_real_part

from rocmforge.verify.checks._companion_load import (
    LoadFailure,
    diagnosis,
    load_failures,
    native_libraries,
    stack_of,
)
from rocmforge.verify.checks._companion_pairing import (
    pairing,
    release_line,
    satisfies,
    torch_requirement,
)
from rocmforge.verify.checks._vision_ops import iou, nms_reference, roi_align_reference
from rocmforge.verify.checks.companions import expected_from_manifest
from rocmforge.verify.model import ExpectedCompanion

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "tests" / "fixtures" / "companion_so"
TORCHVISION_PYTHON_ENV = "TEST_TORCHVISION_PYTHON"
TORCHVISION_PYTHON_DEFAULT = "/opt/rf-tv-0.29.1/bin/python"
BROKEN_TORCHVISION = "torchvision==0.28.0"
AUDIO_PACKAGES = {"audio": "torchaudio==2.11.0", "codec": "torchcodec==0.17.0"}
FFMPEG_APT = ("libavcodec59 libavformat59 libavdevice59 libavfilter8 libswscale6 "
              "libswresample4 libavutil57")


# --- pure parts -------------------------------------------------------------------------------


def test_torch_requirement_from_real_metadata_lines() -> None:
    # torchvision 0.28.0's and 0.29.1's METADATA on the index, and a bare source-build one.
    assert torch_requirement(["numpy", "torch (==2.13.0)", "pillow (!=8.3.*,>=5.3.0)",
                              "scipy ; extra == 'scipy'"]) == "==2.13.0"
    assert torch_requirement(["numpy", "torch (>=2.14.0)"]) == ">=2.14.0"
    assert torch_requirement(["torch==2.11.0"]) == "==2.11.0"
    assert torch_requirement(["numpy", "torch"]) == ""
    assert torch_requirement(["numpy", "torchdata (>=0.1)"]) is None
    assert torch_requirement(["torch (>=2) ; extra == 'x'"]) is None
    assert torch_requirement(None) is None


@pytest.mark.parametrize(
    ("version", "spec", "expected"),
    [
        ("2.13.0+cpu", "==2.13.0", True),
        ("2.13.1", "==2.13.0", False),
        ("2.14.1+cu130", ">=2.14.0", True),
        ("2.13.0+cpu", ">=2.14.0", False),
        ("2.14.0a0+git1234", "==2.14.0a0+git1234", True),
        ("2.14.0a0+git1234", "==2.14.0a0+git9999", False),
        ("2.14.0a0+git1234", ">=2.14.0", False),  # a pre-release is before its release
        ("2.14.0", ">=2.14.0a0", True),
        ("2.14.0", "==2.14", True),
        ("2.13.5", "==2.13.*", True),
        ("2.14.0", "==2.13.*", False),
        ("2.11.3", "~=2.11.0", True),
        ("2.12.0", "~=2.11.0", False),
        ("2.11.0", ">=2.10,<2.12", True),
        ("2.12.0", ">=2.10,<2.12", False),
        ("2.11.0", "!=2.11.0", False),
        ("2.11.0", "@file", None),
        ("not-a-version", "==2.11.0", None),
    ],
)
def test_satisfies(version: str, spec: str, expected: bool | None) -> None:
    assert satisfies(version, spec) is expected


def test_release_lines() -> None:
    assert release_line("torchvision", "0.26.0") == (2, 11)  # the H200 machine's pair
    assert release_line("torchvision", "0.29.1+cu130") == (2, 14)
    assert release_line("torchaudio", "2.11.0") == (2, 11)
    assert release_line("torchvision", "1.0.0") is None
    assert release_line("other", "1.0") is None


def test_pairing_by_metadata_names_both_versions() -> None:
    ok = pairing("torchvision", "0.28.0", "2.13.0+cpu", ["torch (==2.13.0)"])
    assert (ok.ok, ok.requirement, ok.source) == (True, "torch==2.13.0", "metadata")
    assert ok.text == "torch 2.13.0+cpu meets torchvision 0.28.0's requirement torch==2.13.0"
    bad = pairing("torchvision", "0.28.0", "2.14.1+cu130", ["torch (==2.13.0)"])
    assert bad.ok is False
    assert bad.text == ("torch 2.14.1+cu130 does not meet torchvision 0.28.0's requirement "
                        "torch==2.13.0")


def test_pairing_falls_back_to_the_release_line_and_never_guesses() -> None:
    ok = pairing("torchvision", "0.26.0a0+abc", "2.11.0a0+git1", ["numpy", "torch"])
    assert (ok.ok, ok.requirement, ok.source) == (True, "torch 2.11.*", "release line")
    bad = pairing("torchaudio", "2.10.0", "2.11.0", [])
    assert bad.ok is False
    assert bad.text == ("torchaudio 2.10.0 declares no torch version; by the release lines it "
                        "belongs to torch 2.10, and torch 2.11.0 is not")
    # torchaudio 2.11.0's wheel declares no torch at all; it is built on the stable ABI.
    later = pairing("torchaudio", "2.11.0", "2.14.1+cu130", [])
    assert (later.ok, later.requirement) == (True, "torch>=2.11")
    assert later.text == ("torchaudio 2.11.0 declares no torch version; built against the "
                          "stable ABI, it supports torch 2.11 and later, and torch 2.14.1+cu130 "
                          "is one of them")
    assert pairing("torchaudio", "2.11.0", "2.10.0", []).ok is False
    unknown = pairing("torchvision", "weird", "2.13.0", None)
    assert unknown.ok is None
    assert "is not proven" in unknown.text


def test_companions_from_the_manifest() -> None:
    doc: dict[str, object] = {
        "wheels": {"torch": "torch-2.13.0.whl", "triton": "", "torchvision": "tv.whl",
                   "torchaudio": ""},
        "companions": {"torchvision": {"version": "0.28.0", "ref": "v0.28.0",
                                       "commit": "a" * 40, "repo": "r", "wheel": "tv.whl"},
                       "torchaudio": {"version": "2.13.0", "wheel": ""}},
    }
    assert expected_from_manifest(doc) == (
        ExpectedCompanion(name="torchvision", version="0.28.0", wheel="tv.whl",
                          commit="a" * 40),)
    # A companion named only in the section still counts; other shapes name nothing.
    only_section: dict[str, object] = {"companions": {"torchaudio": {"wheel": "ta.whl"}}}
    assert expected_from_manifest(only_section) == (
        ExpectedCompanion(name="torchaudio", wheel="ta.whl"),)
    assert expected_from_manifest({"wheels": ["x"], "companions": "y"}) == ()
    assert expected_from_manifest({}) == ()


def test_diagnosis_texts() -> None:
    assert stack_of("libc10_cuda.so") == "CUDA"
    assert stack_of("/x/libamdhip64.so.6") == "ROCm"
    assert stack_of("libfoo.so") == ""
    text = diagnosis(companion="torchvision", version="0.26.0", import_error="ImportError: x",
                     torch_version="2.11.0", torch_kind="ROCm 7.1",
                     failures=[LoadFailure(library="/v/torchvision/_C.so", error="…",
                                           undefined="_ZN3c104impl3fooEv")], unknown="")
    assert text == (
        "torchvision 0.26.0 does not import (ImportError: x): its native library _C.so cannot "
        "be loaded: it needs the symbol _ZN3c104impl3fooEv, which this torch 2.11.0 does not "
        "define, so it was built against another torch version (the C++ ABI differs). Fix: "
        "build torchvision against this torch with `invoke build --with torchvision` (its "
        "wheel lands in dist/ beside torch's and `nox -s verify` installs it), or install the "
        "torchvision wheel that was built with this torch.")
    clean = diagnosis(companion="torchaudio", version="2.11.0", import_error="ImportError: y",
                      torch_version="2.11.0", torch_kind="CPU-only build", failures=[],
                      unknown="")
    assert "its native libraries load with this torch" in clean


def test_nms_and_roi_align_references_on_hand_made_cases() -> None:
    assert iou([0, 0, 2, 2], [1, 1, 3, 3]) == pytest.approx(1 / 7)
    boxes = [[0.0, 0, 10, 10], [1.0, 1, 11, 11], [20.0, 20, 30, 30], [0.0, 0, 10, 9]]
    # IoU(0,1) = 81/119 > 0.45: 1 goes; 3 overlaps 0 by 0.9: goes; 2 is alone.
    assert nms_reference(boxes, [0.9, 0.8, 0.7, 0.95], 0.45) == [3, 2]
    # A constant feature map averages to the constant inside it; a ramp in x gives the
    # bin centres' x (aligned=True: no half-pixel offset left, scale 1).
    plane = [[5.0] * 8 for _ in range(8)]
    out = roi_align_reference([[plane]], [[0, 1.0, 1.0, 5.0, 5.0]], (2, 2), 1.0, 2, False)
    assert out == [[[[5.0, 5.0], [5.0, 5.0]]]]
    ramp = [[float(x) for x in range(8)] for _ in range(8)]
    out = roi_align_reference([[ramp]], [[0, 2.5, 2.5, 6.5, 6.5]], (2, 2), 1.0, 2, True)
    assert out == [[[[3.0, 5.0], [3.0, 5.0]]]]


# --- the loader diagnosis on real libraries ----------------------------------------------------


def gcc_shared(out: Path, source: str, *extra: str) -> Path:
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(SOURCES / source), *extra],
                   check=True, capture_output=True)
    return out


@pytest.mark.needs_tool("gcc")
@pytest.mark.needs_import("torch")
def test_loader_names_the_missing_library_and_the_undefined_symbol(tmp_path: Path) -> None:
    package = tmp_path / "fakecompanion_pkg"  # real libraries, built here; only the name is made up
    (package / "lib").mkdir(parents=True)
    gcc_shared(tmp_path / "libdep.so", "dep.c")
    needs = gcc_shared(package / "_C.so", "needs_dep.c", f"-L{tmp_path}", "-ldep")
    (tmp_path / "libdep.so").unlink()
    undefined = gcc_shared(package / "lib" / "_undef.so", "undefined_symbol.c")
    loads = gcc_shared(package / "lib" / "libloads.so", "loads.c")
    libraries = native_libraries(package)
    assert libraries == [loads, needs, undefined]  # lib* first: what the others may need
    failures, unknown = load_failures(libraries)
    assert unknown == ""
    by_name = {Path(f.library).name: f for f in failures}
    assert set(by_name) == {"_C.so", "_undef.so"}
    assert by_name["_C.so"].missing == "libdep.so"
    assert "libdep.so: cannot open shared object file" in by_name["_C.so"].error
    assert by_name["_undef.so"].undefined == "_ZN3c1016rfMissingSymbolEv"


# --- the real command line ---------------------------------------------------------------------


def run_verify(python: str, *args: str, timeout: float = 300, extra_path: tuple[str, ...] = ()
               ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": os.pathsep.join([str(ROOT), *extra_path])}
    return subprocess.run([python, "-m", "rocmforge.verify", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def rows(report: Path) -> dict[str, dict[str, Any]]:
    document = json.loads(report.read_text())
    return {check["name"]: check for check in document["checks"]}


@pytest.fixture(scope="module")
def broken_venv(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A venv over this Python's CPU torch with the index's torchvision 0.28.0 (a CUDA build),
    installed by name without its dependencies, as a user who runs `pip install torchvision`
    next to a self-built torch ends up with."""
    done = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        missing_real_part("torch is not installed in this Python (.ci/run installs 2.13.0)")
    venv = tmp_path_factory.mktemp("tv28") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, capture_output=True)
    python = str(venv / "bin" / "python")
    done = subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps",
                           BROKEN_TORCHVISION], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        missing_real_part(f"pip install {BROKEN_TORCHVISION} failed (the machine's package "
                          f"index has it): {done.stderr.strip()[-300:]}")
    return python


@pytest.mark.slow
def test_a_torchvision_for_another_stack_fails_with_its_cause(broken_venv: str,
                                                               tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_verify(broken_venv, "--only", "companions", "--json", str(report))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    found = rows(report)
    assert list(found) == ["torchvision", "torchvision.ops(cpu)", "torchvision.ops(gpu)",
                           "torchaudio"]
    row = found["torchvision"]
    assert row["status"] == "FAIL"
    torch_version = row["reason"].split("this torch ")[1].split(" ")[0]
    assert torch_version.startswith("2.13.0")
    assert row["reason"] == (
        "torchvision 0.28.0 does not import (RuntimeError: operator torchvision::nms does not "
        "exist): its native library _C.so cannot be loaded: it needs libc10_cuda.so, which "
        f"this torch {torch_version} (CPU-only build) does not have, so it was built against a "
        "CUDA build of torch, not this one, and its operators were never registered. Fix: "
        "build torchvision against this torch with `invoke build --with torchvision` (its "
        "wheel lands in dist/ beside torch's and `nox -s verify` installs it), or install the "
        "torchvision wheel that was built with this torch.")
    assert row["figures"]["missing"] == ["libc10_cuda.so"]
    assert [Path(p).name for p in row["figures"]["libraries"]] == ["_C.so", "image.so"]
    for name in ("torchvision.ops(cpu)", "torchvision.ops(gpu)"):
        assert found[name]["status"] == "SKIP"
        assert found[name]["reason"] == "torchvision does not import (see the torchvision row)"
    assert found["torchaudio"] == {**found["torchaudio"], "status": "SKIP",
                                   "reason": "torchaudio is not installed (no --manifest given)"}
    assert any(line.split()[:2] == ["torchvision", "FAIL"] for line in done.stdout.splitlines())


@pytest.mark.slow
def test_a_companion_the_manifest_names_must_be_installed(broken_venv: str,
                                                          tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({
        "schema": "rocmforge.manifest/1", "targets": ["gfx1100"],
        "wheels": {"torch": "torch.whl", "triton": "", "torchvision": "tv.whl",
                   "torchaudio": "torchaudio-2.13.0-cp311-cp311-linux_x86_64.whl"},
        "companions": {"torchaudio": {"version": "2.13.0", "commit": "b" * 40,
                                      "wheel": "torchaudio-2.13.0-cp311-cp311-linux_x86_64.whl"}},
    }))
    report = tmp_path / "report.json"
    done = run_verify(broken_venv, "--only", "companions", "--manifest", str(manifest),
                      "--json", str(report))
    assert done.returncode == 1, done.stderr
    audio = rows(report)["torchaudio"]
    assert audio["status"] == "FAIL"
    assert audio["reason"] == (
        "the build's manifest names torchaudio 2.13.0 (torchaudio-2.13.0-cp311-cp311-linux_"
        "x86_64.whl), but it is not installed in this environment "
        f"({broken_venv}). Fix: install the built wheel (pip install "
        "--no-deps dist/torchaudio-2.13.0-cp311-cp311-linux_x86_64.whl); `nox -s verify` "
        "installs it with torch's")


@pytest.fixture(scope="module")
def torchvision_python() -> tuple[str, str]:
    """(python, torchvision version) of TEST_TORCHVISION_PYTHON."""
    python = os.environ.get(TORCHVISION_PYTHON_ENV, "") or TORCHVISION_PYTHON_DEFAULT
    done = subprocess.run([python, "-c", "import torchvision; print(torchvision.__version__)"],
                          capture_output=True, text=True, check=False) \
        if Path(python).exists() else None
    if done is None or done.returncode != 0:
        missing_real_part(f"no Python with a torchvision that imports at {python}: set "
                          f"{TORCHVISION_PYTHON_ENV} (.ci/run makes /opt/rf-tv-0.29.1 with "
                          "pip install torch==2.14.1 torchvision==0.29.1)")
    assert done is not None
    return python, done.stdout.strip()


@pytest.mark.slow
def test_torchvision_ops_pass_on_the_cpu_and_the_device_part_skips(
        torchvision_python: tuple[str, str], tmp_path: Path) -> None:
    python, version = torchvision_python
    report = tmp_path / "report.json"
    done = run_verify(python, "--only", "companions", "--json", str(report))
    assert done.returncode == 0, done.stdout + done.stderr
    found = rows(report)
    assert list(found) == ["torchvision", "torchvision.ops(cpu)", "torchvision.ops(gpu)",
                           "torchaudio"]
    ident = found["torchvision"]
    assert ident["status"] == "PASS", ident
    release = version.split("+")[0]
    assert ident["reason"].startswith(f"torchvision {release} imports; torch ")
    assert ident["figures"]["pairing_source"] == "metadata"
    assert ident["figures"]["requirement"].startswith("torch")
    cpu = found["torchvision.ops(cpu)"]
    assert cpu["status"] == "PASS", cpu
    assert cpu["reason"] == "nms and roi_align on the CPU match the float64 references"
    figures = cpu["figures"]
    assert figures["nms_boxes"] == 300 and 0 < figures["nms_kept"] < 300
    assert set(figures["roi_align_relative_error"]) == {"aligned=False", "aligned=True"}
    assert all(0 <= e <= 1e-5 for e in figures["roi_align_relative_error"].values())
    gpu = found["torchvision.ops(gpu)"]
    assert gpu["status"] == "SKIP"
    assert gpu["reason"] == ("not run: no GPU visible to torch (torch.cuda.is_available() is "
                             "False); the CPU part ran")
    assert "2 passed, 0 warned, 0 failed, 2 skipped" in done.stdout


@pytest.mark.slow
def test_the_manifest_version_and_commit_are_checked(torchvision_python: tuple[str, str],
                                                     tmp_path: Path) -> None:
    python, version = torchvision_python
    commit = subprocess.run([python, "-c", "import torchvision.version as v; "
                             "print(v.git_version)"], capture_output=True, text=True,
                            check=True).stdout.strip()
    release = version.split("+")[0]

    def verify_with(companion: dict[str, str]) -> dict[str, Any]:
        manifest = tmp_path / "manifest.json"
        manifest.write_text(json.dumps({"schema": "rocmforge.manifest/1", "targets": ["gfx1100"],
                                        "wheels": {"torch": "t.whl", "torchvision": "tv.whl"},
                                        "companions": {"torchvision": companion}}))
        report = tmp_path / "report.json"
        run_verify(python, "--only", "companions", "--manifest", str(manifest),
                   "--json", str(report))
        return rows(report)["torchvision"]

    same = verify_with({"version": release, "commit": commit, "wheel": "tv.whl"})
    assert same["status"] == "PASS", same
    assert same["reason"].startswith(f"torchvision {release} (the version the manifest names) "
                                     "imports; ")
    other = verify_with({"version": "0.28.0", "commit": commit, "wheel": "tv.whl"})
    assert other["status"] == "FAIL"
    assert other["reason"] == (
        f"the build's manifest names torchvision 0.28.0 (tv.whl), but {release} is installed: "
        "reinstall the built wheel (pip install --force-reinstall --no-deps dist/tv.whl)")
    if commit and commit != "Unknown":
        moved = verify_with({"version": release, "commit": "0" * 40, "wheel": "tv.whl"})
        assert moved["status"] == "FAIL"
        assert moved["reason"] == (f"the installed torchvision was built from commit "
                                   f"{commit[:12]}, the manifest's from 000000000000")


@pytest.mark.slow
@pytest.mark.needs_import("torch")
def test_without_companions_the_check_is_one_skip(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_verify(sys.executable, "--only", "companions", "--json", str(report))
    found = rows(report)
    if "torchvision" in found:  # pragma: no cover - a developer's Python with torchvision
        pytest.skip("this Python has a companion installed")
    assert done.returncode == 0
    assert found == {"companions": {**found["companions"], "status": "SKIP",
                                    "reason": "no companion installed (torchvision, torchaudio) "
                                              "and no --manifest names one"}}


def test_the_companion_modules_import_only_the_standard_library() -> None:
    code = (
        "import sys, rocmforge.verify.checks.companions, rocmforge.verify.checks._audio_ops, "
        "rocmforge.verify.checks._vision_ops\n"
        "bad = [m for m in ('torch', 'torchvision', 'torchaudio', 'invoke', 'rich', 'elftools', "
        "'packaging') if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.stdout.strip() == ""


@pytest.fixture(scope="module")
def audio_paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """{"audio": dir with torchaudio 2.11.0, "codec": dir with torchcodec 0.17.0}, each
    installed from the package index with `pip install --target --no-deps`."""
    base = tmp_path_factory.mktemp("audio")
    found = {}
    for key, requirement in AUDIO_PACKAGES.items():
        target = base / key
        done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                               "--target", str(target), requirement],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            missing_real_part(f"pip install {requirement} failed: {done.stderr.strip()[-300:]}")
        found[key] = str(target)
    return found


@pytest.mark.slow
def test_torchaudio_transform_and_decoding_on_the_cpu(torchvision_python: tuple[str, str],
                                                      audio_paths: dict[str, str],
                                                      tmp_path: Path) -> None:
    import ctypes.util

    if ctypes.util.find_library("avcodec") is None:
        missing_real_part(f"no FFmpeg libraries for TorchCodec (apt-get install {FFMPEG_APT})")
    python, _ = torchvision_python
    report = tmp_path / "with-codec.json"
    done = run_verify(python, "--only", "companions", "--json", str(report),
                      extra_path=(audio_paths["audio"], audio_paths["codec"]))
    assert done.returncode == 0, done.stdout + done.stderr
    found = rows(report)
    assert [n for n in found if n.startswith("torchaudio")] == [
        "torchaudio", "torchaudio.ops(cpu)", "torchaudio.ops(gpu)", "torchaudio.decode"]
    ident = found["torchaudio"]
    assert ident["status"] == "PASS", ident
    assert ident["reason"].startswith("torchaudio 2.11.0 imports; torchaudio 2.11.0 declares no "
                                      "torch version; built against the stable ABI, it "
                                      "supports torch 2.11 and later, and torch 2.14")
    assert ident["figures"]["requirement"] == "torch>=2.11"
    cpu = found["torchaudio.ops(cpu)"]
    assert cpu["status"] == "PASS", cpu
    # float32 against float64: a real, small difference, so the reference is independent.
    assert 0 < cpu["figures"]["lfilter_relative_error"] <= 1e-4
    assert found["torchaudio.ops(gpu)"]["status"] == "SKIP"
    decode = found["torchaudio.decode"]
    assert decode["status"] == "PASS", decode
    assert decode["figures"] == {"frames": 1600, "rate": 8000}

    report = tmp_path / "without-codec.json"
    done = run_verify(python, "--only", "companions", "--json", str(report),
                      extra_path=(audio_paths["audio"],))
    assert done.returncode == 0, done.stdout + done.stderr
    decode = rows(report)["torchaudio.decode"]
    assert decode["status"] == "SKIP"
    assert decode["reason"] == (
        "not run: torchaudio 2.11.0 decodes through TorchCodec (torchaudio.load is "
        "load_with_torchcodec since 2.9), and torchcodec is not installed")
