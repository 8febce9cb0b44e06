"""Issue 33: extensions built against the new torch with `--with` (flash-attention,
bitsandbytes, vLLM, or any repository), end to end on fixtures.

Real git remotes made here from tests/fixtures (fakepytorch v2.8.0, fakeflashattn v2.8.3,
fakebnb 0.48.2, fakevllm v0.6.0); each extension's build reads the same variables as the real
one (config/extensions.toml cites them) and compiles a HIP kernel per target with clang-22 (the
flash-attention stand-in through the installed torch's cpp_extension, the bitsandbytes one
through a real CMake project); the wheels' offload bundles are read back with
clang-offload-bundler-22. pip, the constraint and the index (pytest-httpserver) are real.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from buildhelpers import assert_manifest_describes_wheel, make_wheel, wheel_so_targets
from test_build_companions import env_for, fixture_remote, invoke

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "tests" / "fixtures"

pytestmark = [pytest.mark.slow, pytest.mark.needs_tool("clang-22", "clang-offload-bundler-22",
                                                       "git", "cmake")]


def build_argv(task: str, work: Path, repo: Path, arch: str, with_: str) -> list[str]:
    return [sys.executable, "-m", "invoke", task, "--arch", arch, "--work-dir", str(work),
            "--repo", str(repo), "--ref", "v2.8.0", "--clang", "22", "--triton", "skip",
            "--skip-preflight", "--system-site-packages", "--with", with_]


@pytest.fixture(scope="module")
def remotes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("extensions")
    return {"pytorch": fixture_remote(FIXTURES / "fakepytorch", root / "pytorch", "v2.8.0"),
            "flash-attention": fixture_remote(FIXTURES / "fakeflashattn", root / "fa", "v2.8.3"),
            "bitsandbytes": fixture_remote(FIXTURES / "fakebnb", root / "bnb", "0.48.2"),
            "vllm": fixture_remote(FIXTURES / "fakevllm", root / "vllm", "v0.6.0"),
            "generic": fixture_remote(FIXTURES / "fakeext", root / "my-ext", "v0.1.0")}


def _env(remotes: dict[str, Path]) -> dict[str, str]:
    return env_for({k: v for k, v in remotes.items() if k not in ("pytorch", "generic")})


def test_gfx942_builds_flash_attention_ck_and_bitsandbytes_against_the_built_torch(
        remotes: dict[str, Path], tmp_path: Path) -> None:
    work = tmp_path / "work"
    done = invoke(build_argv("build", work, remotes["pytorch"], "gfx942",
                             "flash-attention@v2.8.3,bitsandbytes@0.48.2"), _env(remotes))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert_manifest_describes_wheel(work)
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    fa, bnb = manifest["companions"]["flash-attention"], manifest["companions"]["bitsandbytes"]
    assert (fa["kind"], fa["backend"], fa["version"], fa["module"]) == (
        "extension", "ck", "2.8.3", "flash_attn")
    assert fa["variables"]["GPU_ARCHS"] == "gfx942"
    assert fa["variables"]["BUILD_TARGET"] == "rocm"
    assert "FLASH_ATTENTION_TRITON_AMD_ENABLE" not in fa["variables"]
    assert (bnb["kind"], bnb["version"], bnb["variables"]["BNB_ROCM_ARCH"]) == (
        "extension", "0.48.2", "gfx942")
    # Built against the torch of this build (the build venv's), not one from an index.
    assert fa["torch"] == bnb["torch"] == "2.8.0a0"
    # The library is named by the ROCm short code the plan passed as -DROCM_VERSION (the
    # install's major.minor below ROCm 10; left out from 10 on, where HIP's differs).
    from rocmforge.plan.extensions import library_version_short

    planned = json.loads(invoke(build_argv("plan", work, remotes["pytorch"], "gfx942",
                                           "flash-attention@v2.8.3,bitsandbytes@0.48.2")
                                + ["--json"], _env(remotes)).stdout)
    short = library_version_short(planned["settings"]["rocm_version"])
    cmake_log = (work / "logs" / "bitsandbytes-prepare-1.log").read_text()
    assert (f"-DROCM_VERSION={short}" in cmake_log) == bool(short)
    for entry, member in ((fa, "flash_attn/flash_attn_2_cuda.so"),
                          (bnb, f"bitsandbytes/libbitsandbytes_rocm{short}.so")):
        assert wheel_so_targets(work / "dist" / entry["wheel"])[member] == ["gfx942"]
    # Installed into the build venv beside the torch it was built against, which the venv's
    # pip is now pinned to.
    python = work / "venv" / "bin" / "python"
    shown = subprocess.run([str(python), "-c", "import flash_attn, bitsandbytes, torch; "
                            "print(flash_attn.BACKEND, flash_attn.GPU_ARCHS, torch.__version__)"],
                           capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    assert shown.split() == ["ck", "gfx942", "2.8.0a0"]
    pinned = (work / "venv" / "rocmforge-constraints.txt").read_text()
    assert "torch==2.8.0a0" in pinned and "flash-attn==2.8.3" in pinned
    assert "bitsandbytes==0.48.2" in pinned
    # The console names each extension's backend and variables before any step ran.
    assert "extension flash-attention: v2.8.3" in done.stderr + done.stdout
    # verify, in the build venv, against the manifest: each imports at the version built, its
    # libraries hold gfx942 (the kit's inspect), and its op needs a device (SKIP here).
    report = tmp_path / "verify.json"
    subprocess.run([str(python), "-m", "rocmforge.verify", "--device", "cpu", "--only",
                    "extensions", "--manifest", str(work / "dist" / "manifest.json"), "--json",
                    str(report)], capture_output=True, text=True, cwd=REPO_ROOT, timeout=300)
    rows = {c["name"]: (c["status"], c["reason"]) for c in json.loads(report.read_text())["checks"]}
    assert rows["flash-attention"][0] == "PASS" and "flash_attn 2.8.3" in rows["flash-attention"][1]
    assert rows["flash-attention.targets"] == ("PASS", rows["flash-attention.targets"][1])
    assert "gfx942 present" in rows["flash-attention.targets"][1]
    assert rows["bitsandbytes.targets"][0] == "PASS"
    assert rows["flash-attention.op"] == ("SKIP", "--device cpu: this check needs a GPU")


def test_gfx1030_picks_flash_attentions_triton_backend(remotes: dict[str, Path],
                                                        tmp_path: Path) -> None:
    done = invoke(build_argv("plan", tmp_path / "work", remotes["pytorch"], "gfx1030",
                             "flash-attention@v2.8.3") + ["--json"], _env(remotes))
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    chosen = next(c for c in plan["settings"]["companions"] if c["name"] == "flash-attention")
    assert (chosen["kind"], chosen["backend"]) == ("extension", "triton")
    assert chosen["build_env"]["FLASH_ATTENTION_TRITON_AMD_ENABLE"] == "TRUE"
    assert chosen["build_env"]["GPU_ARCHS"] == "gfx1030"
    steps = [s["name"] for s in plan["steps"]]
    assert steps.index("flash-attention-pairing") < steps.index("flash-attention-build")


def test_the_targets_a_tree_accepts_are_read_from_it_at_the_ref(remotes: dict[str, Path],
                                                                 tmp_path: Path) -> None:
    """Issue 39 item 6: main's CK backend builds gfx1100 (the table, flash-attention#2400), so
    the plan picks it; the tree at v2.8.3 lists only gfx90a, gfx950 and gfx942 in its
    setup.py's allowed_archs, which the build reads at that ref before any step: exit 2."""
    work = tmp_path / "work"
    planned = invoke(build_argv("plan", work, remotes["pytorch"], "gfx1100",
                                "flash-attention@v2.8.3") + ["--json"], _env(remotes))
    assert planned.returncode == 0, planned.stderr
    chosen = next(c for c in json.loads(planned.stdout)["settings"]["companions"]
                  if c["name"] == "flash-attention")
    assert chosen["backend"] == "ck"
    done = invoke(build_argv("build", work, remotes["pytorch"], "gfx1100",
                             "flash-attention@v2.8.3"), _env(remotes))
    assert done.returncode == 2, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stderr.startswith(
        "rocmforge: flash-attention at v2.8.3 does not build for gfx1100: its setup.py accepts "
        "gfx90a, gfx950, gfx942.")
    assert not (work / "src").exists() and not (work / "state" / "stamps").exists()


def test_a_vllm_ref_pinned_to_another_torch_is_refused_before_any_step(
        remotes: dict[str, Path], tmp_path: Path) -> None:
    work = tmp_path / "work"
    done = invoke(build_argv("build", work, remotes["pytorch"], "gfx942", "vllm@v0.6.0"),
                  _env(remotes))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(
        "rocmforge: vllm at v0.6.0 pins torch==2.5.1 (requirements/rocm-build.txt), but this "
        "build makes torch 2.8.0")
    assert "Traceback" not in done.stderr
    assert not (work / "src").exists() and not (work / "state" / "stamps").exists()


def test_no_backend_for_the_targets_is_refused_by_the_plan(remotes: dict[str, Path],
                                                           tmp_path: Path) -> None:
    """A recipe whose backends do not cover a target: one paragraph, exit 2, before any step
    (here a table of the test's own, as no shipped recipe has such a gap)."""
    table = tmp_path / "config"
    table.mkdir()
    for name in (REPO_ROOT / "config").iterdir():
        (table / name.name).write_text(name.read_text())
    text = (table / "extensions.toml").read_text().replace(
        'name = "triton"\ntargets = []', 'name = "triton"\ntargets = ["gfx1100"]')
    (table / "extensions.toml").write_text(text)
    env = {**_env(remotes), "ROCMFORGE_CONFIG_DIR": str(table)}
    done = invoke(build_argv("build", tmp_path / "w", remotes["pytorch"], "gfx1030",
                             "flash-attention@v2.8.3"), env)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("rocmforge: flash-attention has no backend for gfx1030.")
    assert not (tmp_path / "w").exists()


def test_pip_cannot_replace_the_built_torch_in_a_protected_venv(tmp_path: Path,
                                                                httpserver) -> None:  # noqa: ANN001
    """Issue 33 item 3: in a venv pinned to dist/'s wheels, `pip install` of a wheel that needs
    another torch stops on the constraint, and torch stays the one built (real pip, a real
    index serving the other torch and the wheel that wants it)."""
    from rocmforge.sources.constraints import protect_venv

    built = make_wheel(tmp_path / "dist", "torch", "2.8.0a0+rocm7.14.1",
                       {"torch/__init__.py": "__version__ = '2.8.0a0+rocm7.14.1'\n"})
    other = make_wheel(tmp_path / "index", "torch", "2.7.0",
                       {"torch/__init__.py": "__version__ = '2.7.0'\n"})
    wants = make_wheel(tmp_path / "index", "wants-old-torch", "1.0",
                       {"wants_old_torch/__init__.py": ""},
                       metadata="Requires-Dist: torch==2.7.0\n")
    from sdkhelpers import serve_wheels

    index = serve_wheels(httpserver, [other, wants])
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    protect_venv(venv, [built.name])
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(built)],
                   check=True, capture_output=True)
    refused = subprocess.run([python, "-m", "pip", "install", "--index-url", index,
                              "wants-old-torch"], capture_output=True, text=True)
    assert refused.returncode != 0
    assert "torch==2.7.0" in refused.stdout + refused.stderr
    # The constraint (pip joins it with a machine's own, e.g. "torch<=2.14.1,==2.8.0a0+...").
    assert "==2.8.0a0+rocm7.14.1" in refused.stdout + refused.stderr
    still = subprocess.run([python, "-c", "import torch; print(torch.__version__)"],
                           capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    assert still.strip() == "2.8.0a0+rocm7.14.1"
    with zipfile.ZipFile(built) as archive:
        assert "torch/__init__.py" in archive.namelist()


def test_any_extension_from_a_git_url_is_built_for_the_targets(remotes: dict[str, Path],
                                                               tmp_path: Path) -> None:
    """`--with git+URL@ref`: a repository no recipe knows, built with PYTORCH_ROCM_ARCH in the
    build venv; its wheel holds the targets and the manifest names it."""
    work = tmp_path / "work"
    url = f"git+{remotes['generic'].as_uri()}@v0.1.0"
    done = invoke(build_argv("build", work, remotes["pytorch"], "gfx1100;gfx942", url),
                  _env(remotes))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    manifest = json.loads((work / "dist" / "manifest.json").read_text())
    entry = manifest["companions"]["my-ext"]
    assert (entry["kind"], entry["version"], entry["ref"]) == ("extension", "0.1.0", "v0.1.0")
    assert entry["variables"] == {"PYTORCH_ROCM_ARCH": "gfx1100;gfx942"}
    assert wheel_so_targets(work / "dist" / entry["wheel"])["rfext/_C.so"] == [
        "gfx1100", "gfx942"]
