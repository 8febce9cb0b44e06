"""Issue 38 items 4 and 5: every fix names the package of the install's own layout (legacy apt,
ROCm >= 7.14 amdrocm-*, Debian, the pip SDK's extras), and the ROCm floor of a PyTorch tree
comes from its LoadHIP.cmake, not from the releases wheels are built for. The installs are
constructed records (no ROCm >= 6 here); the Debian /usr install in the last test is real."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from test_doctor import ROCM, facts, row

from rocmforge.knowledge.arches import load_arch_table
from rocmforge.knowledge.components import (
    components_for,
    device_code_hint,
    install_command,
    install_fix,
    layout_kind,
    load_components,
)
from rocmforge.knowledge.releases import pytorch_release_for
from rocmforge.knowledge.targets import parse_targets
from rocmforge.plan.doctor import diagnose
from rocmforge.plan.hazard_rows import hazard_rows
from rocmforge.plan.kernel_rows import kernel_rows
from rocmforge.probes.hazards import Hazards
from rocmforge.probes.library_code import LibraryCode
from rocmforge.probes.rocm_components import ComponentFound
from rocmforge.probes.tree import read_tree_facts
from rocmforge.settings import Settings

KIT = Path(__file__).resolve().parents[2]
TABLE = {c.name: c for c in load_components()}


@pytest.mark.parametrize(("layout", "kind"), [
    ("legacy /opt/rocm-6.4.1", "legacy"), ("TheRock /opt/rocm/core-10.0", "amdrocm"),
    ("distro /usr", "distro"), ("pip SDK", "sdk"), ("other", ""), ("", "")])
def test_layout_words_map_to_package_kinds(layout: str, kind: str) -> None:
    assert layout_kind(layout) == kind


def test_each_layout_gets_its_own_package_name() -> None:
    rocblas, hiprand = TABLE["rocblas"], TABLE["hiprand"]
    assert rocblas.install_hint("legacy /opt/rocm-6.4.1") == "rocblas-dev (ROCm repositories)"
    assert rocblas.install_hint("TheRock /opt/rocm/core-10.0") == (
        "amdrocm-blas-devel (ROCm >= 7.14 packages)")
    assert hiprand.install_hint("distro /usr") == "libhiprand-dev (Debian)"
    assert rocblas.install_hint("pip SDK") == '"rocm[libraries,devel]" (pip ROCm SDK)'
    # hipFile and libhipcxx exist only from ROCm 7.14 / 10: no legacy package to send anyone to.
    assert TABLE["hipfile"].install_hint("legacy /opt/rocm-7.2.1") == (
        "no package in the legacy ROCm repositories: hipfile ships with ROCm >= 7.14 as "
        "amdrocm-hipfile-devel")
    assert TABLE["hipfile"].install_hint() == (
        'amdrocm-hipfile-devel (ROCm >= 7.14 packages) or "rocm[libraries,devel]" (pip ROCm SDK)')
    assert TABLE["libhipcxx"].install_hint("TheRock /opt/rocm/core-10.0") == (
        "amdrocm-ccl-devel (ROCm >= 7.14 packages)")


def test_every_component_has_a_native_package_and_a_tree_only_one_keeps_none() -> None:
    assert all(c.amdrocm_package.startswith("amdrocm-") for c in TABLE.values())
    (picked,) = components_for([("rocblas", True, "tree: cmake/public/LoadHIP.cmake:80")])
    assert picked.amdrocm_package == "amdrocm-blas-devel"
    assert TABLE["rocm_smi"].required  # REQUIRED where LoadHIP looks for it


def test_device_code_comes_per_target_where_the_layout_has_such_packages() -> None:
    assert device_code_hint("pip SDK", ["gfx1100", "gfx1151"]) == (
        'pip install "rocm[device-gfx1100]" "rocm[device-gfx1151]"')
    assert device_code_hint("TheRock /opt/rocm/core-10.0", ["gfx942"]) == (
        "`sudo apt install amdrocm-gfx942` (or dnf)")
    assert device_code_hint("legacy /opt/rocm-6.4.1", ["gfx942"]) == ""


def _rocblas_without(target: str, layout: str) -> str:
    from rocmforge.knowledge.kernels import load_kernel_libraries

    (library,) = [lib for lib in load_kernel_libraries() if lib.name == "rocblas"]
    code = LibraryCode(library=library, targets=("gfx942",), where=("/r/lib/librocblas.so",),
                       from_folder=False)
    targets = parse_targets(target, load_arch_table())
    (found,) = kernel_rows([code], targets, load_arch_table(), layout)
    assert found.status == "FAIL"
    return found.fix


def test_kernel_rows_name_the_device_packages_of_the_layout() -> None:
    assert _rocblas_without("gfx1100", "pip SDK") == (
        'install the kernels for gfx1100: pip install "rocm[device-gfx1100]"')
    assert _rocblas_without("gfx1100", "TheRock /opt/rocm/core-10.0") == (
        "install the kernels for gfx1100: `sudo apt install amdrocm-gfx1100` (or dnf)")
    assert _rocblas_without("gfx1100", "legacy /opt/rocm-6.4.1").startswith(
        "install a ROCm whose rocblas ships gfx1100 code")


def test_doctor_component_fix_follows_the_install_layout() -> None:
    therock = dataclasses.replace(ROCM, root=Path("/opt/rocm/core-10.0"), version="10.0.0",
                                  layout="TheRock /opt/rocm/core-10.0")
    missing = [(TABLE["rocblas"], ComponentFound(name="rocblas", config=None, version=""))]
    rows = diagnose(facts(rocm=therock, rocm_installs=(therock,), hipcc_owner=therock), (),
                    Settings(), release=pytorch_release_for("v2.15.0"), components=missing)
    assert row(rows, "ROCm components").fix == (
        "install rocblas: amdrocm-blas-devel (ROCm >= 7.14 packages); "
        "`sudo apt install amdrocm-blas-devel` (or dnf)")


# hip and hiprtc share a package in every layout that packages hiprtc; Debian lacks three.
SEVERAL = ("hip", "hiprtc", "rocblas", "hipblas", "hiprand")


@pytest.mark.parametrize(("layout", "command"), [
    ("legacy /opt/rocm-6.4.1", "`sudo apt install hip-dev rocblas-dev hipblas-dev hiprand-dev`"),
    ("TheRock /opt/rocm/core-10.0", "`sudo apt install amdrocm-runtime-devel amdrocm-blas-devel` "
     "and `sudo apt install amdrocm-rand-devel` (or dnf)"),
    ("distro /usr", "Debian packages no hiprtc, rocblas, hipblas: a separate ROCm from AMD's "
     "repositories under /opt/rocm (then pass --rocm-path): `sudo apt install hip-dev "
     "rocblas-dev hipblas-dev hiprand-dev`"),
    ("pip SDK", "`pip install 'rocm[libraries,devel]'`"),
    ("other", ""),
], ids=["legacy", "amdrocm", "debian", "sdk", "unknown"])
def test_one_command_installs_every_missing_component_each_package_once(
        layout: str, command: str) -> None:
    """Issue: one install line per component; a user wants one command for them all."""
    assert install_command([TABLE[n] for n in SEVERAL], layout) == command


def test_the_fix_keeps_each_component_and_adds_the_one_command() -> None:
    picked = [TABLE["rocblas"], TABLE["hipblas"]]
    assert install_fix(picked, "legacy /opt/rocm-6.4.1") == (
        "install rocblas: rocblas-dev (ROCm repositories); hipblas: hipblas-dev (ROCm "
        "repositories); all of them: `sudo apt install rocblas-dev hipblas-dev`")
    # Debian packages neither: the one command is AMD's.
    assert install_fix(picked, "distro /usr").endswith(
        "; all of them: Debian packages no rocblas, hipblas: a separate ROCm from AMD's "
        "repositories under /opt/rocm (then pass --rocm-path): `sudo apt install rocblas-dev "
        "hipblas-dev`")
    # Moving to AMD's /opt/rocm: what /usr already has comes along, or the build misses it.
    assert install_fix(picked, "distro /usr", found=[TABLE["hip"], TABLE["hiprand"]]).endswith(
        "`sudo apt install rocblas-dev hipblas-dev hip-dev hiprand-dev`")
    # Debian packages both: Debian's command alone.
    assert install_command([TABLE["hip"], TABLE["hiprand"]], "distro /usr") == (
        "`sudo apt install libamdhip64-dev libhiprand-dev`")
    # A layout without one package manager: every name, and no command to guess.
    assert install_fix(picked, "") == (
        'install rocblas: rocblas-dev (ROCm repositories) or amdrocm-blas-devel (ROCm >= 7.14 '
        'packages) or "rocm[libraries,devel]" (pip ROCm SDK); hipblas: hipblas-dev (ROCm '
        'repositories) or amdrocm-blas-devel (ROCm >= 7.14 packages) or "rocm[libraries,devel]" '
        "(pip ROCm SDK)")
    # hipFile has no legacy package: its entry says so, and the command leaves it out.
    assert install_fix([TABLE["hipfile"], TABLE["rocblas"]], "legacy /opt/rocm-7.2.1") == (
        "install hipfile: no package in the legacy ROCm repositories: hipfile ships with ROCm "
        ">= 7.14 as amdrocm-hipfile-devel; rocblas: rocblas-dev (ROCm repositories); all of "
        "them: `sudo apt install rocblas-dev`")


def test_thrust_hazard_names_the_layout_packages() -> None:
    hazards = Hazards(cuda_thrust=(), rocthrust=None)
    assert hazard_rows(hazards, cmake_version="3.31", cmake_policy_minimum="",
                       venv="/v") == []
    from rocmforge.probes.hazards import Found

    cuda = Hazards(cuda_thrust=(Found(path=Path("/usr/include/thrust"),
                                      via="system include folder"),), rocthrust=None)
    (thrust,) = [r for r in hazard_rows(cuda, cmake_version="3.31", cmake_policy_minimum="",
                                        venv="/v", layout="TheRock /opt/rocm/core-10.0")
                 if r.check == "thrust"]
    assert thrust.fix.startswith("install rocThrust and hipCUB in the ROCm install "
                                 "(amdrocm-ccl-devel (ROCm >= 7.14 packages)), ")


# --- the ROCm floor a tree's LoadHIP.cmake states ------------------------------------------

# The statements of pytorch/pytorch's LoadHIP.cmake of the ROCm 7.14 era around its floor
# (rocm_version.h's numbers as ROCM_VERSION_DEV_INT = major*10000 + minor*100 + patch).
LOADHIP_FLOOR = """\
set(PYTORCH_FOUND_HIP TRUE)
find_package_and_print_version(hip REQUIRED CONFIG)
if(PYTORCH_FOUND_HIP)
  if(ROCM_VERSION_DEV_INT LESS 71400)
    message(FATAL_ERROR "PyTorch needs ROCm 7.14 or above, but found ${ROCM_VERSION_DEV}.")
  endif()
  find_package_and_print_version(rocblas REQUIRED)
  if(UNIX)
    find_package_and_print_version(rccl)
    find_package_and_print_version(rocm_smi REQUIRED)
  endif()
endif()
"""


def _tree(tmp_path: Path, loadhip: str) -> Path:
    (tmp_path / "cmake/public").mkdir(parents=True)
    (tmp_path / "cmake/public/LoadHIP.cmake").write_text(loadhip)
    return tmp_path


def test_the_floor_is_read_from_loadhip_in_both_forms(tmp_path: Path) -> None:
    tree = read_tree_facts(_tree(tmp_path / "int", LOADHIP_FLOOR))
    assert (tree.rocm_minimum.value, tree.rocm_minimum.source) == (
        "7.14", "tree: cmake/public/LoadHIP.cmake:4")
    smi = [c for c in tree.rocm_components.value if c.name == "rocm_smi"]
    assert [(c.required, c.condition) for c in smi] == [(True, "PYTORCH_FOUND_HIP AND UNIX")]
    dotted = LOADHIP_FLOOR.replace("ROCM_VERSION_DEV_INT LESS 71400",
                                   'ROCM_VERSION_DEV VERSION_LESS "6.2.1"')
    assert read_tree_facts(_tree(tmp_path / "dotted", dotted)).rocm_minimum.value == "6.2.1"
    none = read_tree_facts(_tree(tmp_path / "none", LOADHIP_FLOOR.replace("FATAL_ERROR",
                                                                          "WARNING")))
    assert (none.rocm_minimum.status, none.rocm_minimum.value) == ("absent", None)


def _release_with_floor(floor: str):  # noqa: ANN202
    return dataclasses.replace(pytorch_release_for("v2.15.0"), rocm_min=floor,
                               rocm_min_source="tree: cmake/public/LoadHIP.cmake:5")


@pytest.mark.parametrize(("version", "status"), [("7.2.1", "FAIL"), ("7.14.1", "OK"),
                                                 ("10.0.0", "OK")])
def test_doctor_judges_by_the_trees_floor(version: str, status: str) -> None:
    install = dataclasses.replace(ROCM, version=version)
    rows = diagnose(facts(rocm=install, rocm_installs=(install,), hipcc_owner=install), (),
                    Settings(), release=_release_with_floor("7.14"))
    found = row(rows, "ROCm for PyTorch")
    assert found.status == status
    if status == "FAIL":
        assert found.detail == ("PyTorch 2.15.0's LoadHIP.cmake stops below ROCm 7.14 (tree: "
                                "cmake/public/LoadHIP.cmake:5); ROCm 7.2.1 at /opt/rocm-7.0.2")


def test_a_floor_below_the_wheel_releases_makes_an_older_rocm_a_warning() -> None:
    install = dataclasses.replace(ROCM, version="7.2.1")
    rows = diagnose(facts(rocm=install, rocm_installs=(install,), hipcc_owner=install), (),
                    Settings(), release=_release_with_floor("7.0"))
    found = row(rows, "ROCm for PyTorch")
    assert found.status == "WARN"
    assert "accepted by PyTorch 2.15.0's LoadHIP.cmake (ROCm >= 7.0" in found.detail


def test_a_long_package_list_is_whole_commands_that_fit_a_fix_line() -> None:
    """Eleven packages are one 140-character apt line, which an 80-column terminal cannot show
    whole (commands are never split): they become several whole commands of at most 70."""
    from rocmforge.knowledge.components import COMMAND_WIDTH, install_command, load_components

    every = [c for c in load_components() if c.rocm_package]
    shown = install_command(every, "legacy /opt/rocm-6.4.1")
    commands = shown.strip("`").split("` and `")
    assert len(commands) > 1
    assert all(c.startswith("sudo apt install ") and len(c) <= COMMAND_WIDTH for c in commands)
    packages = [p for c in commands for p in c.split()[3:]]
    assert packages == list(dict.fromkeys(c.rocm_package for c in every))
