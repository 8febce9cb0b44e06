"""Doctor rows for failures that can be known before the build (issue 29 item 4), each with the
real parts that make them: CUDA's thrust from Debian's libthrust-dev (unpacked by .ci/run into
/opt/rf-thrust) and hipcc compiling against it, the real libamdhip64 copied onto the loader
path, CMake 4 from the index on a tree with an old cmake_minimum_required, setuptools 82 in a
real venv, a CUDA `triton` in a real venv, and hipcc with -D_GLIBCXX_ASSERTIONS in CXXFLAGS."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import missing_real_part

from rocmforge.plan.hazard_rows import hazard_rows
from rocmforge.probes.hazards import (
    Hazards,
    cmake_floors,
    cuda_thrust_folders,
    pkg_resources_users,
    probe_hazards,
    runtime_copies,
    venv_foreign,
)
from rocmforge.triage import explain_text

CUDA_THRUST = Path("/opt/rf-thrust/usr/include")
CMAKE4 = Path("/opt/rf-cmake4/bin/cmake")
HIP_RUNTIME = Path("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5")


def _rows(hazards: Hazards, **kw: str) -> dict[str, tuple[str, str, str]]:
    args = {"cmake_version": "3.25.1", "cmake_policy_minimum": "3.5", "venv": "/w/venv", **kw}
    return {r.check: (r.status, r.detail, r.fix) for r in hazard_rows(hazards, **args)}


def _need(path: Path, why: str) -> None:
    if not path.exists():
        missing_real_part(f"{path} is missing ({why}; see .ci/run)")


@pytest.mark.needs_tool("hipcc")
def test_cuda_thrust_on_cpath_fails_doctor_as_the_build_would(tmp_path: Path) -> None:
    _need(CUDA_THRUST / "thrust" / "version.h", "Debian's libthrust-dev, unpacked")
    environ = {"CPATH": str(CUDA_THRUST)}
    found = list(cuda_thrust_folders(environ, Path("/")))
    assert [(f.path, f.via) for f in found] == [(CUDA_THRUST / "thrust", "CPATH")]
    # Debian's ROCm 5.2 at /usr has no rocThrust: the row stops the build.
    hazards = probe_hazards(rocm_root=Path("/usr"), checkout=None, sources=None, venv=None,
                            environ=environ)
    status, detail, fix = _rows(hazards)["thrust"]
    assert status == "FAIL"
    assert f"{CUDA_THRUST / 'thrust'} (via CPATH)" in detail
    assert "rocthrust-dev" in fix and "libthrust-dev" in fix
    # What the build would have shown: hipcc really takes CUDA's thrust and stops, and the
    # log's triage names the same cause.
    source = tmp_path / "k.hip"
    source.write_text("#include <hip/hip_runtime.h>\n#include <thrust/complex.h>\n"
                      "__global__ void k(float* x) "
                      "{ x[0] = thrust::complex<float>(x[0]).real(); }\n")
    done = subprocess.run(["hipcc", "--offload-arch=gfx1030", "-std=c++17", "-c", str(source),
                           "-o", str(tmp_path / "k.o")], capture_output=True, text=True,
                          env={**os.environ, "HIP_PLATFORM": "amd", **environ}, timeout=300)
    assert done.returncode != 0
    assert "thrust/system/cuda/config.h" in done.stderr
    said = explain_text(done.stderr, "build")
    assert (said.klass, said.subject) == ("rocm-install", "thrust")


def test_no_row_without_cuda_thrust_and_a_warning_when_rocthrust_is_there(tmp_path: Path) -> None:
    assert _rows(Hazards()) == {}
    thrust = tmp_path / "cuda" / "include"
    (thrust / "thrust" / "system" / "cuda").mkdir(parents=True)
    (thrust / "thrust" / "version.h").write_text("#define THRUST_VERSION 101702\n")
    rocm = tmp_path / "rocm"
    (rocm / "include" / "thrust" / "system" / "hip").mkdir(parents=True)
    hazards = probe_hazards(rocm_root=rocm, checkout=None, sources=None, venv=None,
                            environ={"CPLUS_INCLUDE_PATH": str(thrust)}, root=tmp_path)
    assert hazards.rocthrust == rocm / "include" / "thrust"
    status, _detail, fix = _rows(hazards)["thrust"]
    assert (status, fix) == ("WARN", "take the CUDA folder off CPLUS_INCLUDE_PATH")


def test_a_second_hip_runtime_on_the_loader_path_is_named(tmp_path: Path) -> None:
    _need(HIP_RUNTIME, "Debian's libamdhip64-5")
    other = tmp_path / "opt" / "rocm-6.2.0" / "lib"
    other.mkdir(parents=True)
    shutil.copy2(HIP_RUNTIME.resolve(), other / "libamdhip64.so.6")
    conf = tmp_path / "etc" / "ld.so.conf.d"
    conf.mkdir(parents=True)
    (tmp_path / "etc" / "ld.so.conf").write_text("include /etc/ld.so.conf.d/*.conf\n")
    (conf / "rocm.conf").write_text("/opt/rocm-6.2.0/lib\n")
    # Through ld.so.conf (root is the stand-in /), and through LD_LIBRARY_PATH.
    found = list(runtime_copies(Path("/usr"), {}, tmp_path))
    assert [(f.path, f.via) for f in found] == [
        (other / "libamdhip64.so.6", "ld.so.conf (etc/ld.so.conf.d/rocm.conf)")]
    found = list(runtime_copies(Path("/usr"), {"LD_LIBRARY_PATH": str(other)}, Path("/")))
    assert [(f.path, f.via) for f in found] == [(other / "libamdhip64.so.6", "LD_LIBRARY_PATH")]
    # The install's own copy is no second runtime.
    assert list(runtime_copies(Path("/usr"), {"LD_LIBRARY_PATH": str(HIP_RUNTIME.parent)},
                               Path("/"))) == []
    hazards = Hazards(runtime_copies=tuple(found))
    status, detail, _fix = _rows(hazards)["HIP runtime copies"]
    assert status == "WARN" and f"{other / 'libamdhip64.so.6'} (via LD_LIBRARY_PATH)" in detail


def _old_cmake_tree(root: Path) -> Path:
    (root / "third_party" / "oldlib").mkdir(parents=True)
    (root / "third_party" / "oldlib" / "tests").mkdir()
    (root / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18 FATAL_ERROR)\nproject(Torch C)\n"
        "add_subdirectory(third_party/oldlib)\n")
    (root / "third_party" / "oldlib" / "CMakeLists.txt").write_text(
        "CMAKE_MINIMUM_REQUIRED(VERSION 3.4)\nproject(oldlib C)\n"
        "add_library(oldlib STATIC oldlib.c)\n")
    (root / "third_party" / "oldlib" / "oldlib.c").write_text("int oldlib(void) { return 0; }\n")
    # A test folder a build never configures: not reported.
    (root / "third_party" / "oldlib" / "tests" / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 2.8)\n")
    return root


def test_cmake_floors_are_read_from_the_tree_and_the_remedy_makes_cmake_4_configure(
        tmp_path: Path) -> None:
    tree = _old_cmake_tree(tmp_path / "pytorch")
    assert list(cmake_floors(tree)) == [("third_party/oldlib/CMakeLists.txt", "3.4")]
    hazards = probe_hazards(rocm_root=None, checkout=tree, sources=None, venv=None, environ={})
    status, detail, _ = _rows(hazards)["cmake policy"]
    assert status == "OK" and "CMAKE_POLICY_VERSION_MINIMUM=3.5" in detail
    rows = _rows(hazards, cmake_policy_minimum="", cmake_version="4.1.0")
    status, detail, fix = rows["cmake policy"]
    assert status == "FAIL" and "cmake here is 4.1.0" in detail and "'cmake<4'" in fix
    _need(CMAKE4, "CMake 4 from the index in a venv")
    env = {k: v for k, v in os.environ.items() if k != "CMAKE_POLICY_VERSION_MINIMUM"}

    def configure(build: str, extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(CMAKE4), "-S", str(tree), "-B", str(tmp_path / build)],
                              capture_output=True, text=True, env={**env, **extra}, timeout=300)

    refused = configure("b1", {})
    assert refused.returncode != 0
    said = explain_text(refused.stdout + refused.stderr, "configure")
    assert (said.klass, said.rule) == ("cmake", "cmake-4-policy")
    assert configure("b2", {"CMAKE_POLICY_VERSION_MINIMUM": "3.5"}).returncode == 0


def test_the_remedy_is_in_the_build_environment_and_can_be_turned_off() -> None:
    from rocmforge.errors import UsageError
    from rocmforge.plan.environment import build_environment
    from rocmforge.probes.facts import gather_facts
    from rocmforge.settings import Settings

    facts = gather_facts(Settings())
    if facts.rocm is None:
        missing_real_part("no ROCm install (hipcc from Debian)")
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.knowledge.targets import parse_targets

    targets = parse_targets("gfx1030", load_arch_table())
    env = build_environment(Settings(), facts, targets).as_dict()
    assert env["CMAKE_POLICY_VERSION_MINIMUM"] == "3.5"
    off = build_environment(Settings(cmake_policy_minimum=""), facts, targets).as_dict()
    assert "CMAKE_POLICY_VERSION_MINIMUM" not in off
    with pytest.raises(UsageError, match="not a CMake version"):
        build_environment(Settings(cmake_policy_minimum="three"), facts, targets)


@pytest.fixture(scope="module")
def setuptools_82_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("st") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                           "setuptools==82.0.0"], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        missing_real_part(f"setuptools 82.0.0 from the index: {done.stderr[-300:]}")
    return venv


# (setup.py source, whether it imports pkg_resources where its absence stops it)
PKG_RESOURCES_SHAPES = [
    ("import os, pkg_resources\n", True),
    ("import pkg_resources.extern\n", True),
    ("from pkg_resources import get_distribution\n", True),
    ("def version():\n    import pkg_resources\n    return 1\nversion()\n", True),
    ("try:\n    import pkg_resources\nexcept ImportError:\n    pkg_resources = None\n", False),
    ("try:\n    from pkg_resources import get_distribution\n"
     "except (ModuleNotFoundError, OSError):\n    get_distribution = None\n", False),
    ("try:\n    import pkg_resources\nexcept Exception:\n    pass\n", False),
    # A try that catches something else does not guard it.
    ("try:\n    import pkg_resources\nexcept KeyError:\n    pass\n", True),
    ("try:\n    import pkg_resources\nexcept ImportError:\n    pass\n"
     "else:\n    pass\nimport pkg_resources\n", True),
    ("import setuptools  # pkg_resources is not imported here\n", False),
]


@pytest.mark.parametrize("source, stops", PKG_RESOURCES_SHAPES)
def test_pkg_resources_imports_as_python_runs_them(tmp_path: Path, setuptools_82_venv: Path,
                                                    source: str, stops: bool) -> None:
    """The verdict of the scan is what setuptools 82's Python does with the file: the imports
    it missed (`import os, pkg_resources`) and the guarded ones it warned about."""
    from rocmforge.probes.hazards import imports_pkg_resources

    assert imports_pkg_resources(source) is stops
    (tmp_path / "setup.py").write_text(source)
    ran = subprocess.run([str(setuptools_82_venv / "bin" / "python"), "setup.py"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert (ran.returncode != 0) is stops, ran.stderr
    if stops:
        assert "No module named 'pkg_resources'" in ran.stderr
    src = tmp_path / "src"
    (src / "vision").mkdir(parents=True)
    (src / "vision" / "setup.py").write_text(source)
    assert list(pkg_resources_users(src)) == (["vision/setup.py"] if stops else [])


def test_setup_py_importing_pkg_resources_fails_with_setuptools_82(
        tmp_path: Path, setuptools_82_venv: Path) -> None:
    src = tmp_path / "src"
    (src / "vision").mkdir(parents=True)
    (src / "pytorch").mkdir()
    (src / "vision" / "setup.py").write_text(
        "import os\nfrom pkg_resources import DistributionNotFound, get_distribution\n")
    (src / "pytorch" / "setup.py").write_text("import setuptools\n")
    assert list(pkg_resources_users(src)) == ["vision/setup.py"]
    hazards = probe_hazards(rocm_root=None, checkout=None, sources=src, venv=setuptools_82_venv,
                            environ={})
    assert hazards.venv_setuptools == "82.0.0"
    status, detail, fix = _rows(hazards)["setuptools"]
    assert status == "FAIL" and "vision/setup.py import pkg_resources" in detail
    assert "'setuptools<82'" in fix
    # The real failure the row predicts, explained by triage.
    done = subprocess.run([str(setuptools_82_venv / "bin" / "python"), "setup.py"],
                          cwd=src / "vision", capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    said = explain_text(done.stderr, "torchvision-build")
    assert (said.klass, said.subject) == ("python-packaging", "pkg_resources")
    # No venv yet: a warning that the newest setuptools is coming.
    status, detail, _ = _rows(Hazards(pkg_resources=("vision/setup.py",)))["setuptools"]
    assert status == "WARN" and "will get the newest setuptools" in detail


def test_a_cuda_triton_in_the_build_venv_is_named() -> None:
    python = os.environ.get("TEST_TRITON_PYTHON", "")
    if not python or not Path(python).exists():
        missing_real_part("TEST_TRITON_PYTHON: a venv with PyPI's triton (see .ci/run)")
    venv = Path(python).parent.parent
    found = list(venv_foreign(venv))
    assert any(f.startswith("triton 3.") for f in found)
    status, _detail, fix = _rows(Hazards(venv_foreign=tuple(found)))["build venv"]
    assert status == "WARN" and fix == "/w/venv/bin/python -m pip uninstall -y triton"


@pytest.mark.needs_tool("hipcc")
def test_the_compile_probe_uses_cxxflags_and_explains_libstdcxx_assertions() -> None:
    """Distributions' default CXXFLAGS carry -D_GLIBCXX_ASSERTIONS: hipcc with GCC 12's
    libstdc++ then fails on std::array in device code; the probe sees it before the build."""
    from rocmforge.probes.compile_probe import host_macro_flags, probe_install_targets
    from rocmforge.probes.facts import gather_facts
    from rocmforge.settings import Settings

    assert host_macro_flags({"CXXFLAGS": "-O2 -D_GLIBCXX_ASSERTIONS -Wall",
                             "CPPFLAGS": "-UNDEBUG"}) == ("-UNDEBUG", "-D_GLIBCXX_ASSERTIONS")
    rocm = gather_facts(Settings()).rocm
    assert rocm is not None
    environ = {**os.environ, "HIP_PLATFORM": "amd"}
    clean = probe_install_targets(rocm, ["gfx1030"], environ=environ)[0]
    assert clean.compiles, clean.compile_reason
    broken = probe_install_targets(rocm, ["gfx1030"], environ={
        **environ, "CXXFLAGS": "-O2 -D_GLIBCXX_ASSERTIONS"})[0]
    assert not broken.compiles
    assert "-D_GLIBCXX_ASSERTIONS" in broken.argv
    assert broken.compile_reason.startswith(
        "device code calls the host-only function __glibcxx_assert_fail")
    assert "-D_GLIBCXX_ASSERTIONS" in broken.compile_fix


def test_a_venv_whose_torch_is_not_the_built_one_is_a_warning(tmp_path: Path) -> None:
    """Issue 33 item 3: doctor warns when the build venv's torch is not the one the manifest
    names (a later `pip install` replaced it), read from the venv's own dist-info."""
    venv = tmp_path / "venv"
    (venv / "lib/python3.11/site-packages/torch-2.7.0.dist-info").mkdir(parents=True)
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "manifest.json").write_text(
        '{"wheels": {"torch": "torch-2.8.0a0+rocm7.14.1-cp311-cp311-linux_x86_64.whl"}}')
    hazards = probe_hazards(rocm_root=None, checkout=None, sources=None, venv=venv,
                            environ={}, root=tmp_path, dist=dist)
    assert (hazards.venv_torch, hazards.built_torch) == ("2.7.0", "2.8.0a0+rocm7.14.1")
    status, detail, fix = _rows(hazards, venv=str(venv))["venv torch"]
    assert status == "WARN"
    assert "has torch 2.7.0, but the finished build's dist/manifest.json names torch " \
        "2.8.0a0+rocm7.14.1" in detail
    assert fix.startswith(f"invoke install --python {venv}/bin/python")
    same = probe_hazards(rocm_root=None, checkout=None, sources=None, venv=venv, environ={},
                         root=tmp_path, dist=tmp_path / "nodist")
    assert "venv torch" not in _rows(same, venv=str(venv))


def test_the_torch_the_kit_built_is_not_foreign_a_cuda_or_cpu_one_is(tmp_path: Path) -> None:
    """Defect 5 of the user review: after an ordinary build, doctor told the user to uninstall
    the torch just built (2.8.0a0 has no "rocm" in its version). Real pip installs real wheels
    into a real venv: the manifest's wheel from dist/ (pip's direct_url.json names it) is the
    kit's own; a +cpu torch from elsewhere is foreign and named with its uninstall."""
    from buildhelpers import make_wheel

    from rocmforge.knowledge.manifest import build_manifest, write_manifest

    dist = tmp_path / "dist"
    built = make_wheel(dist, "torch", "2.8.0a0", {"torch/__init__.py": ""})
    doc = build_manifest(targets=["gfx1100"], wheels={"torch": built.name, "triton": ""},
                         lock=None, toolchain={}, env={}, steps=[], plan_settings={},
                         created="t")
    write_manifest(dist / "manifest.json", doc)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index",
           "--no-deps", "--force-reinstall"]
    subprocess.run([*pip, str(built)], check=True, timeout=300)

    def probe() -> Hazards:
        return probe_hazards(rocm_root=None, checkout=None, sources=None, venv=venv,
                             environ={}, root=tmp_path, dist=dist)

    hazards = probe()
    assert hazards.venv_torch == hazards.built_torch == "2.8.0a0"
    assert hazards.venv_foreign == ()
    assert "build venv" not in _rows(hazards, venv=str(venv))
    # The same version from another folder is not the kit's, but nothing says it is a CUDA or
    # CPU build: not named (no claim without proof).
    other = make_wheel(tmp_path / "elsewhere", "torch", "2.8.0a0", {"torch/__init__.py": ""})
    subprocess.run([*pip, str(other)], check=True, timeout=300)
    assert probe().venv_foreign == ()
    # A CPU build from elsewhere is foreign, and so is one whose METADATA requires nvidia-*.
    cpu = make_wheel(tmp_path / "elsewhere", "torch", "2.8.0+cpu", {"torch/__init__.py": ""})
    subprocess.run([*pip, str(cpu)], check=True, timeout=300)
    status, detail, fix = _rows(probe(), venv=str(venv))["build venv"]
    assert status == "WARN" and f"the build venv ({venv}) holds torch 2.8.0+cpu" in detail
    assert fix == f"{venv}/bin/python -m pip uninstall -y torch"
    cuda = make_wheel(tmp_path / "cuda", "torch", "2.8.0",
                      {"torch/__init__.py": ""},
                      metadata='Requires-Dist: nvidia-nccl-cu12==2.27.3; '
                      'platform_system == "Linux"\n')
    subprocess.run([*pip, str(cuda)], check=True, timeout=300)
    assert probe().venv_foreign == ("torch 2.8.0",)


def test_pypis_cuda_torch_in_a_real_venv_is_foreign() -> None:
    """PyPI's Linux torch has no local version; its METADATA requires nvidia-* packages (the
    torchvision venv .ci/run makes holds one)."""
    venv = Path("/opt/rf-tv-0.29.1")
    infos = sorted(venv.glob("lib/python3*/site-packages/torch-*.dist-info"))
    if not infos or "Requires-Dist: nvidia-" not in (infos[0] / "METADATA").read_text():
        missing_real_part("/opt/rf-tv-0.29.1: a venv with PyPI's CUDA torch (see .ci/run)")
    version = infos[0].name.removesuffix(".dist-info").partition("-")[2]
    assert "+" not in version
    assert f"torch {version}" in list(venv_foreign(venv))


def test_the_build_pins_setuptools_for_a_checkout_that_imports_pkg_resources(
        tmp_path: Path, setuptools_82_venv: Path) -> None:
    """ROCm/TheRock#3311: PyTorch's setup.py loads tools/setup_helpers/env.py, which imported
    pkg_resources; with setuptools 82 in the build venv the build stopped. The kit's
    build-requirements step installs 'setuptools<82' with the checkout's requirements (real
    pip, real venv), and doctor says so instead of warning."""
    import io

    from rocmforge.execute.action_args import InVenv
    from rocmforge.execute.actions import ActionContext
    from rocmforge.execute.model import Step
    from rocmforge.knowledge.steps import STEP
    from rocmforge.steps.venv import install_requirements
    from rocmforge.workdir import workdir_for

    venv = tmp_path / "venv"
    shutil.copytree(setuptools_82_venv, venv, symlinks=True)
    python = str(venv / "bin" / "python")
    tree = tmp_path / "src" / "pytorch"
    (tree / "tools" / "setup_helpers").mkdir(parents=True)
    (tree / "setup.py").write_text("from tools.setup_helpers.env import check_env\n")
    (tree / "tools" / "__init__.py").write_text("")
    (tree / "tools" / "setup_helpers" / "__init__.py").write_text("")
    (tree / "tools" / "setup_helpers" / "env.py").write_text(
        "import pkg_resources\n\ndef check_env():\n    return pkg_resources\n")
    (tree / "requirements.txt").write_text("")
    hazards = probe_hazards(rocm_root=None, checkout=tree, sources=tree.parent, venv=venv,
                            environ={})
    assert hazards.checkout_pkg_resources == (
        "pytorch/tools/setup_helpers/env.py (setup.py imports it)",)
    assert hazards.pkg_resources == ()  # PyTorch's own checkout is judged apart
    status, detail, _ = _rows(hazards)["setuptools"]
    assert status == "OK" and "installs 'setuptools<82'" in detail

    ran: list[list[str]] = []

    def run_argv(argv, *, cwd, env, log):  # type: ignore[no-untyped-def]
        ran.append(list(argv))
        done = subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True, timeout=600)
        return done.returncode, done.stdout + done.stderr

    step = Step(name=STEP.build_requirements, why="w", kind="python", cwd=str(tree),
                args=InVenv(action="build-requirements", python=python))
    ctx = ActionContext(step=step, workdir=workdir_for(str(tmp_path)), results=(),
                        log=io.StringIO(), run_argv=run_argv)
    details = install_requirements(ctx, tree, python)
    assert ran == [[python, "-m", "pip", "install", "-r", "requirements.txt", "setuptools<82"]]
    assert details == {"files": ["requirements.txt"], "pins": ["setuptools<82"]}
    # setup.py runs now in the venv that setuptools 82 had broken.
    done = subprocess.run([python, "setup.py", "--version"], cwd=tree, capture_output=True,
                          text=True, timeout=120)
    assert "No module named 'pkg_resources'" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
