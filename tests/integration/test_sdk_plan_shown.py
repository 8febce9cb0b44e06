"""What `invoke plan` shows of a pip ROCm SDK build before the rocm-sdk step has run: every
value of the SDK row said (no blank `family=` or `root=`), and the optional parts whose
components come with the SDK (hipBLASLt, RCCL: TheRock's rocm-sdk-libraries holds
libhipblaslt and librccl, ROCm/TheRock@89553ce3:build_tools/packaging/python/templates/rocm/src/
rocm_sdk/_dist_info.py) planned as coming from that step, not "off: not installed".

Real parts: `invoke plan` as a user runs it, against a local PEP 691 index (pytest-httpserver)
that lists the release; the pure parts (the row's text, the feature decision) are checked too.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

from rocmforge.knowledge.components import load_components
from rocmforge.knowledge.features import load_aotriton_table, load_features
from rocmforge.knowledge.rocm_sdk import load_sdk_table
from rocmforge.plan.features import AotritonState, plan_features
from rocmforge.plan.rocm_sdk import sdk_plan, shown
from rocmforge.probes.rocm_components import ComponentFound
from rocmforge.settings import Settings

REPO_ROOT = Path(__file__).resolve().parents[2]
MULTI = "10.1.0a20260811"


def test_the_sdk_row_says_each_empty_value_in_words() -> None:
    multi = sdk_plan(Settings(rocm_sdk="https://mirror.example/whl/", rocm_sdk_version=MULTI),
                     ["gfx1100"], load_sdk_table(), None)
    assert multi is not None
    assert shown(multi.as_dict()) == (
        "route=multi-arch; index=https://mirror.example/whl/; family=none (the multi-arch "
        f"index serves every family); version={MULTI}; "
        f"requirement=rocm[libraries,devel,device-gfx1100]=={MULTI}; "
        f"wheel_requires=rocm[libraries,device-gfx1100]=={MULTI}; "
        "device_packages=rocm-sdk-device-gfx1100; root=from the rocm-sdk step (not installed "
        "yet)")
    family = sdk_plan(Settings(rocm_sdk_version="7.12.0a20260202"), ["gfx1101"],
                      load_sdk_table(), None)
    assert family is not None
    assert shown(family.as_dict()) == (
        "route=per-family; index=https://rocm.nightlies.amd.com/v2/gfx110X-all/; "
        "family=gfx110X-all; version=7.12.0a20260202; "
        "requirement=rocm[libraries,devel]==7.12.0a20260202; "
        "wheel_requires=rocm[libraries]==7.12.0a20260202; device_packages=none (the family's "
        "rocm-sdk-libraries package holds its targets' code); root=from the rocm-sdk step (not "
        "installed yet)")


def _features(sdk_to_come: str) -> dict[str, tuple[bool, str]]:
    """hipblaslt and rccl not found in the (empty) build venv, as before the rocm-sdk step."""
    table = {c.name: c for c in load_components()}
    missing = [(table[n], ComponentFound(name=n, config=None, version=""))
               for n in ("hipblaslt", "rccl")]
    state = AotritonState(release=None, table=load_aotriton_table(), fetch=None, prefix=None)
    plan = plan_features(load_features(), {}, ["gfx1100"], missing, state,
                         rocm_version=MULTI, layout="pip SDK (installed by the rocm-sdk step)",
                         sdk_to_come=sdk_to_come)
    return {f.name: (f.on, f.why) for f in plan.features if f.name in ("hipblaslt", "rccl")}


def test_components_the_sdk_step_brings_do_not_leave_a_part_out() -> None:
    assert _features("rocm[libraries,devel]") == {
        "hipblaslt": (True, "on by default; hipblaslt comes with the rocm-sdk step "
                            "(rocm[libraries,devel]); listed for gfx1100 "
                            "(pytorch/pytorch:aten/src/ATen/cuda/detail/CUDAHooks.cpp)"),
        "rccl": (True, "on by default; rccl comes with the rocm-sdk step (rocm[libraries,devel])"),
    }
    # An install that is there and lacks them: still left out, as before.
    assert _features("")["rccl"] == (False, "off: the ROCm component rccl is not installed")


def test_plan_before_the_sdk_step_shows_what_the_sdk_will_provide(
        tmp_path: Path, httpserver) -> None:  # noqa: ANN001
    for project, name in (("rocm", f"rocm-{MULTI}.tar.gz"),
                          ("rocm-sdk-device-gfx1100",
                           f"rocm_sdk_device_gfx1100-{MULTI}-py3-none-linux_x86_64.whl")):
        httpserver.expect_request(f"/whl/{project}/").respond_with_json(
            {"meta": {"api-version": "1.0"}, "name": project,
             "files": [{"filename": name, "url": f"/files/{name}", "hashes": {}}]},
            content_type="application/vnd.pypi.simple.v1+json")
    index = httpserver.url_for("/whl/")
    done = subprocess.run(
        [sys.executable, "-m", "invoke", "plan", "-w", str(tmp_path / "w"), "--arch", "gfx1100",
         "--rocm-sdk", index, "--rocm-sdk-version", MULTI], cwd=REPO_ROOT, capture_output=True,
        text=True, timeout=300, env={**os.environ, "HIP_PLATFORM": "amd", "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split(None, 1)[1] for line in done.stdout.splitlines()
            if len(line.split()) > 1}
    assert rows["rocm_sdk"] == (
        f"route=multi-arch; index={index}; family=none (the multi-arch index serves every "
        f"family); version={MULTI}; requirement=rocm[libraries,devel,device-gfx1100]=={MULTI}; "
        f"wheel_requires=rocm[libraries,device-gfx1100]=={MULTI}; "
        "device_packages=rocm-sdk-device-gfx1100; root=from the rocm-sdk step (not installed "
        "yet)")
    assert " ".join(rows["rccl"].split()) == (
        "on on by default; rccl comes with the rocm-sdk step (rocm[libraries,devel]) "
        "(PyTorch's default)")
    assert rows["hipblaslt"].split()[0] == "on"
    assert "is not installed" not in done.stdout  # the claim made before the step ran
    assert not (tmp_path / "w").exists()


def test_an_installed_sdk_is_judged_as_any_install() -> None:
    """Once the rocm-sdk step ran (the probes find the venv's SDK: layout "pip SDK"), its
    components are found or not like any install's; without the SDK settings nothing comes."""
    from test_doctor import ROCM, facts

    from rocmforge.plan.prepare_features import sdk_to_come

    settings = Settings(rocm_sdk_version=MULTI)
    installed = dataclasses.replace(ROCM, root=Path("/w/venv"), version=MULTI, layout="pip SDK")
    to_come = dataclasses.replace(installed, layout="pip SDK (installed by the rocm-sdk step)")
    assert sdk_to_come(settings, facts(rocm=installed)) == ""
    assert sdk_to_come(settings, facts(rocm=to_come)) == "rocm[libraries,devel]"
    assert sdk_to_come(Settings(), facts(rocm=to_come)) == ""
    # doctor with the SDK settings judges the machine's install as it is (its rows say so).
    assert sdk_to_come(settings, facts(rocm=ROCM)) == ""
