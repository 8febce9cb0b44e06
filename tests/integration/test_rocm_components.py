"""ROCm components (issue 15 item 9): what PyTorch's CMake looks for, found or missing in a real
install with versions from each component's own <name>-config-version.cmake, and doctor's rows.
The Debian ROCm packages .ci/run installs are the real install; dpkg says which file each
package installed, so the probe is checked against the package manager, not against itself."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rocmforge.knowledge.components import components_for, load_components
from rocmforge.probes.rocm_components import find_components

REPO_ROOT = Path(__file__).resolve().parents[2]
DEBIAN = {"rocprim": "librocprim-dev", "rocrand": "librocrand-dev",
          "hipsparse": "libhipsparse-dev", "hip": "libamdhip64-dev"}


def _installed_config(package: str, name: str) -> Path:
    listed = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True,
                            check=True).stdout.split()
    (path,) = [p for p in listed if p.endswith(f"/cmake/{name}/{name}-config-version.cmake")]
    return Path(path)


@pytest.mark.needs_tool("dpkg")
def test_debian_components_are_found_where_dpkg_installed_them() -> None:
    found = {f.name: f for f in find_components(Path("/usr"), list(DEBIAN))}
    for name, package in DEBIAN.items():
        config = _installed_config(package, name)
        assert found[name].config == config
        stated = re.search(r'set\(PACKAGE_VERSION "([^"]+)"\)', config.read_text()).group(1)
        assert found[name].version == stated


@pytest.mark.needs_tool("dpkg")
def test_a_component_debian_did_not_install_is_missing() -> None:
    # rocblas and hipblaslt are not in Debian 12; libhiprand-dev is, but .ci/run leaves it out.
    done = subprocess.run(["dpkg", "-s", "libhiprand-dev"], capture_output=True, check=False)
    assert done.returncode != 0
    found = {f.name: f for f in find_components(Path("/usr"), ["rocblas", "hiprand"])}
    assert not found["rocblas"].found and not found["hiprand"].found


def test_rocm_prefix_layouts_and_a_file_without_a_version(tmp_path: Path) -> None:
    (tmp_path / "lib/cmake/rocblas").mkdir(parents=True)
    (tmp_path / "lib/cmake/rocblas/rocblas-config-version.cmake").write_text(
        'set(PACKAGE_VERSION "4.4.0")\n')
    (tmp_path / "lib64/cmake/miopen").mkdir(parents=True)
    (tmp_path / "lib64/cmake/miopen/miopen-config-version.cmake").write_text("# no version\n")
    found = {f.name: f for f in find_components(tmp_path, ["rocblas", "miopen", "rccl"])}
    assert (found["rocblas"].found, found["rocblas"].version) == (True, "4.4.0")
    assert (found["miopen"].found, found["miopen"].version) == (True, "")
    assert not found["rccl"].found


def test_the_tree_list_wins_and_the_table_gives_the_packages() -> None:
    table = {c.name: c for c in load_components()}
    assert table["rocblas"].required and not table["rccl"].required
    # No layout known (a log from elsewhere): every layout's name.
    assert table["rocprim"].install_hint() == (
        'rocprim-dev (ROCm repositories) or amdrocm-ccl-devel (ROCm >= 7.14 packages) or '
        'librocprim-dev (Debian) or "rocm[libraries,devel]" (pip ROCm SDK)')
    picked = components_for([("rocblas", True, "tree: cmake/public/LoadHIP.cmake:80"),
                             ("hipdnn", True, "tree: cmake/public/LoadHIP.cmake:99")])
    assert [c.name for c in picked] == ["rocblas", "hipdnn"]
    assert picked[0].rocm_package == "rocblas-dev"
    assert picked[1].rocm_package == "" and picked[1].source.endswith(":99")
    assert "hipdnn's CMake config" in picked[1].install_hint()


@pytest.mark.needs_tool("hipcc")
def test_doctor_fails_an_old_rocm_and_names_each_missing_component() -> None:
    """This machine's only ROCm is Debian's 5.2: PyTorch 2.9's range is 6.3-6.4, and most
    components are not packaged. Doctor said 0 FAIL for this before (issue 15 item 9)."""
    done = subprocess.run([sys.executable, "-m", "invoke", "doctor", "--json", "--arch",
                           "gfx90a"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 1
    rows = {r["check"]: r for r in json.loads(done.stdout)["rows"]}
    assert rows["ROCm for PyTorch"]["status"] == "FAIL"
    assert ("ships wheels for ROCm 6.3-6.4 (config/pytorch.toml, from RELEASE.md); ROCm 5.2 at "
            "/usr is older than the oldest of them") in rows["ROCm for PyTorch"]["detail"]
    components = rows["ROCm components"]
    assert components["status"] == "FAIL"
    assert "rocblas" in components["detail"] and "rocprim" not in components["detail"].split(
        "(found")[0]
    # The install is Debian's /usr: Debian's names, and AMD's for what Debian lacks.
    assert ("rocblas: not packaged by Debian: AMD's rocblas-dev installs it under /opt/rocm, "
            "a separate install (pass --rocm-path)") in components["fix"]
    assert "hiprand: libhiprand-dev (Debian);" in components["fix"]


@pytest.mark.needs_tool("hipcc")
def test_plan_says_in_one_line_that_preflight_would_stop_the_build(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "invoke", "plan", "--arch", "gfx90a",
                           "--work-dir", str(tmp_path / "w")], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    # Notes are narration: they go to stderr, so stdout stays the tables.
    notes = [line for line in done.stderr.splitlines() if line.startswith("note: preflight")]
    assert notes == ["note: preflight would stop this build: 2 FAIL (ROCm for PyTorch, ROCm "
                     "components); the verdict line's doctor command shows each fix; the "
                     "per-target compile checks are not run by plan (the build's preflight and "
                     "`invoke doctor` run them), so it may find more"]
    assert not (tmp_path / "w").exists()
