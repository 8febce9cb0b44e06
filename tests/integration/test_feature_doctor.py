"""Doctor rows per optional part: the ROCm components each chosen part needs, found (with the
version and CMake config the install has) or missing (with the package that provides it).

Real parts: Debian 12's ROCm development packages installed here (librocprim-dev,
libhipsparse-dev, librocrand-dev; see .ci/run) found by the real component probe in /usr, and
`invoke doctor` run as a user runs it. hipBLASLt and RCCL are not packaged by Debian 12, so they
are really missing here.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rocmforge.knowledge.components import load_components
from rocmforge.knowledge.features import load_aotriton_table, load_features
from rocmforge.plan.features import AotritonState, plan_features
from rocmforge.probes.rocm_components import find_components

REPO_ROOT = Path(__file__).resolve().parents[2]
DEBIAN = {"rocprim": "librocprim-dev", "hipsparse": "libhipsparse-dev",
          "rocrand": "librocrand-dev"}


def _stated_version(package: str, name: str) -> tuple[Path, str]:
    """The config file dpkg installed for `name` and the version it states."""
    listed = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True,
                            check=True).stdout.split()
    (path,) = [p for p in listed if p.endswith(f"/cmake/{name}/{name}-config-version.cmake")]
    stated = re.search(r'set\(PACKAGE_VERSION "([^"]+)"\)', Path(path).read_text())
    assert stated is not None
    return Path(path), stated.group(1)


def _installed(names: list[str]):
    """(Component, ComponentFound) pairs as gather.component_report makes them, from /usr."""
    table = {c.name: c for c in load_components()}
    return list(zip([table[n] for n in names], find_components(Path("/usr"), names), strict=True))


def _spec(components: tuple[str, ...]):
    """The distributed part, made to need these components (the rows do not depend on which
    part it is; the real table's parts need hipblaslt and rccl, which Debian lacks)."""
    (distributed,) = [s for s in load_features() if s.name == "distributed"]
    return dataclasses.replace(distributed, components=components)


def _plan(components: tuple[str, ...], requested: dict[str, str] | None = None):
    state = AotritonState(release=None, table=load_aotriton_table(), fetch=None, prefix=None)
    return plan_features([_spec(components)], requested or {}, ["gfx942"],
                         _installed(list(components)), state, rocm_version="5.2",
                         layout="distro /usr")


@pytest.mark.needs_tool("dpkg")
def test_a_chosen_part_lists_each_component_found_with_its_version_and_config() -> None:
    plan = _plan(("rocprim", "hipsparse", "rocrand"))
    assert plan.built == {"distributed": True}
    (row,) = plan.rows
    expected = ", ".join(f"{name} {version} ({config})" for name, (config, version) in
                         ((n, _stated_version(p, n)) for n, p in DEBIAN.items()))
    assert (row.check, row.status) == ("feature distributed", "OK")
    assert row.detail == f"distributed (torch.distributed, Gloo) needs {expected}: found"


@pytest.mark.needs_tool("dpkg")
def test_a_missing_component_leaves_the_part_out_with_a_warning_or_fails_when_asked() -> None:
    done = subprocess.run(["dpkg", "-s", "hipblaslt-dev"], capture_output=True, check=False)
    assert done.returncode != 0  # not installed here: the row below is about a real absence
    auto = _plan(("rocprim", "hipblaslt"))
    (row,) = auto.rows
    assert (row.status, auto.env) == ("WARN", {"USE_DISTRIBUTED": "0"})
    assert row.detail == ("distributed (torch.distributed, Gloo) is left out of this build: the "
                          "ROCm component hipblaslt is not installed")
    # The components are Debian's /usr: the fix says Debian has no hipblaslt and names AMD's.
    assert row.fix == ("install hipblaslt: not packaged by Debian: AMD's hipblaslt-dev installs "
                       "it under /opt/rocm, a separate install (pass --rocm-path); Debian packages "
                       "no hipblaslt: a separate ROCm from AMD's repositories under /opt/rocm "
                       "(then pass --rocm-path): `sudo apt install hipblaslt-dev` to build it, "
                       "or set features distributed=off to leave it out on purpose")
    asked = _plan(("rocprim", "hipblaslt"), {"distributed": "on"})
    (fail,) = asked.rows
    assert fail.status == "FAIL"
    assert fail.detail.endswith("cannot be built: the ROCm component hipblaslt is not installed")
    assert fail.fix.startswith("install hipblaslt: not packaged by Debian: AMD's hipblaslt-dev "
                               "installs it under /opt/rocm, a separate install (pass "
                               "--rocm-path); Debian packages no hipblaslt: a separate ROCm "
                               "from AMD's repositories under /opt/rocm (then pass --rocm-path): "
                               "`sudo apt install hipblaslt-dev`, or set features distributed=auto")


def test_a_part_turned_off_needs_nothing_and_raises_no_row() -> None:
    plan = _plan(("hipblaslt",), {"distributed": "off"})
    assert plan.rows == () and plan.env == {"USE_DISTRIBUTED": "0"}


@pytest.mark.needs_tool("dpkg")
def test_invoke_doctor_shows_the_feature_rows_of_this_machine() -> None:
    env = dict(os.environ, NO_COLOR="1", HIP_PLATFORM="amd", ROCM_PATH="/usr")
    done = subprocess.run([sys.executable, "-m", "invoke", "doctor", "--arch", "gfx942",
                           "--rocm-path", "/usr", "--json"], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    rows = {r["check"]: r for r in json.loads(done.stdout)["rows"]}
    assert done.returncode == 1  # Debian's ROCm 5.2 is not enough for PyTorch: FAIL rows
    # hipBLASLt has no build switch and configure requires it: its absence is the "ROCm
    # components" row's FAIL, not a second one.
    assert "feature hipblaslt" not in rows
    assert rows["ROCm components"]["status"] == "FAIL"
    assert "hipblaslt" in rows["ROCm components"]["detail"]
    assert rows["feature rccl"]["status"] == "WARN"
    assert rows["feature rccl"]["detail"] == (
        "RCCL (the nccl backend of torch.distributed on ROCm) is left out of this build: the "
        "ROCm component rccl is not installed")
    # Parts that need no ROCm component raise no row.
    assert not any(check in rows for check in ("feature flash_attention", "feature magma"))
