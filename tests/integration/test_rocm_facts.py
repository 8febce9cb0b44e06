"""Issue 31: the ROCm install's own facts first (version, layout, LLVM, targets, components), the
config/rocm.toml row second, each with its source; an install newer than every row is planned
from what it says. The Debian install under /usr is real; the ROCm 7.14 / 10.x trees are fakes
(no TheRock install on this machine), shaped as TheRock lays them out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_probes_rocm import make_fake_rocm

from rocmforge.knowledge.releases import load_rocm_releases, rocm_release_for
from rocmforge.plan.rocm_facts import newest_row, rocm_facts, rocm_facts_for
from rocmforge.probes.rocm import (
    find_rocm_installs,
    install_layout,
    parse_sdk_targets,
    targets_of_device_libs,
)
from rocmforge.probes.rocm_components import find_components

KIT = Path(__file__).resolve().parents[2]


def _therock_tree(root: Path, stream: str, version: str, llvm: int,
                  targets: tuple[str, ...]) -> Path:
    """/opt/rocm/core-<stream> with .info/version, lib/llvm/lib/clang/<llvm>, a device library
    per target and a hip-config-version.cmake (fake: no TheRock install here)."""
    stage = make_fake_rocm(root / "stage", version, llvm_major=llvm)
    bitcode = stage / "lib/llvm/amdgcn/bitcode"
    for old in bitcode.iterdir():
        old.unlink()
    for target in targets:
        (bitcode / f"oclc_isa_version_{target[3:]}.bc").write_bytes(b"BC")
    cmake = stage / "lib/cmake/hip"
    cmake.mkdir(parents=True)
    (cmake / "hip-config-version.cmake").write_text(f'set(PACKAGE_VERSION "{version}")\n')
    tree = root / "opt/rocm" / f"core-{stream}"
    tree.parent.mkdir(parents=True, exist_ok=True)
    stage.rename(tree)
    return tree


def test_device_library_names_and_sdk_output_give_targets() -> None:
    assert targets_of_device_libs(["oclc_isa_version_1100.bc", "oclc_isa_version_90a.bc",
                                   "oclc_isa_version_942.bc", "oclc_abi_version_500.bc",
                                   "oclc_isa_version_1100.bc"]) == ("gfx90a", "gfx942", "gfx1100")
    assert parse_sdk_targets("gfx1100;gfx1101;gfx1102\n") == ("gfx1100", "gfx1101", "gfx1102")
    assert parse_sdk_targets("gfx942, gfx950") == ("gfx942", "gfx950")
    assert parse_sdk_targets("") == ()


def test_layouts(tmp_path: Path) -> None:
    legacy = make_fake_rocm(tmp_path, "6.4.1")
    core = _therock_tree(tmp_path, "10.0", "10.0.0", 23, ("gfx1100",))
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert install_layout(legacy, "/opt/rocm*") == f"legacy {legacy}"
    assert install_layout(core, "/opt/rocm*") == f"TheRock {tmp_path}/opt/rocm/core-10.0"
    assert install_layout(Path("/usr"), "distro /usr") == "distro /usr"
    assert install_layout(tmp_path / "site/_rocm_sdk_devel", "pip rocm-sdk") == "pip SDK"
    assert install_layout(other, "ROCM_PATH") == "other"


@pytest.mark.needs_tool("hipcc")
def test_real_debian_install_says_its_own_targets() -> None:
    """Debian 12's ROCm 5.2: the device libraries name gfx600 .. gfx1036 and no gfx11."""
    installs = find_rocm_installs(Path("/"), {"PATH": os.environ["PATH"]}, python_paths=[])
    usr = next(i for i in installs if i.root == Path("/usr"))
    assert (usr.layout, usr.llvm_source) == ("distro /usr", "hipcc --version")
    assert {"gfx90a", "gfx1030", "gfx803"} <= set(usr.targets)
    assert not any(t.startswith("gfx11") for t in usr.targets)
    assert usr.targets_source == "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode/oclc_isa_version_*.bc"
    facts = rocm_facts_for(usr, find_components(usr.root, ["hip", "rocrand"]))
    assert facts.table_row == "5.2"
    assert (facts["llvm_major"].value, facts["llvm_major"].source) == (
        "15", "install: hipcc --version")
    assert facts["components"].value.startswith("hip 5.2.0, rocrand ")
    assert facts["released"].source == "table: config/rocm.toml 5.2"


def test_rocm_10_1_install_is_planned_from_its_own_facts(tmp_path: Path) -> None:
    tree = _therock_tree(tmp_path, "10.0", "10.1.0", 23, ("gfx942", "gfx1100", "gfx1151"))
    (install,) = find_rocm_installs(tmp_path, {"PATH": ""}, python_paths=[])
    facts = rocm_facts_for(install, find_components(tree, ["hip", "rocblas"]))
    assert (facts.table_row, facts.row_is_estimate, facts.notes) == ("10.1", False, ())
    assert facts["version"].source == f"install: {tree}/.info/version"
    assert facts["layout"].value == f"TheRock {tmp_path}/opt/rocm/core-10.0"
    # The 10.1 row does not know its LLVM (0): the install's clang says 23, and says where.
    assert (facts["llvm_major"].value, facts["llvm_major"].origin,
            facts["llvm_major"].source) == ("23", "install", "install: lib/llvm/lib/clang/23")
    assert facts["targets"].value == "gfx942 gfx1100 gfx1151"
    assert facts["components"].value == "hip 10.1.0"
    assert facts["released"].value == "2026-10-05"


def test_install_newer_than_every_row_says_so(tmp_path: Path) -> None:
    make_fake_rocm(tmp_path, "11.2.0", llvm_major=24)
    (install,) = find_rocm_installs(tmp_path, {"PATH": ""}, python_paths=[])
    newest = newest_row(load_rocm_releases())
    facts = rocm_facts(install, rocm_release_for(install.version), newest_row=newest)
    assert facts.row_is_estimate
    assert facts.notes == (
        f"ROCm 11.2.0 is newer than every row of config/rocm.toml (newest {newest}): it is "
        "planned from what the install says (version, LLVM, targets, components); only the "
        f"host-compiler advice comes from the {newest} row, as an estimate",)
    assert (facts["llvm_major"].value, facts["llvm_major"].origin) == ("24", "install")
    assert facts["host_compilers"].source == f"table: config/rocm.toml {newest} (estimate)"


def _sdk_cli(bin_dir: Path, root: Path) -> Path:
    """A `rocm-sdk` command in the shape of TheRock's (a real executable run by the probe)."""
    bin_dir.mkdir(parents=True)
    cli = bin_dir / "rocm-sdk"
    cli.write_text(
        "#!/bin/sh\n"
        'case "$1 $2" in\n'
        f'  "path --root") echo "{root}" ;;\n'
        '  "version "*) echo "7.14.1" ;;\n'
        '  "targets "*) echo "gfx1100;gfx1101;gfx1102;gfx1103" ;;\n'
        '  *) echo "usage: rocm-sdk {path,version,targets}" >&2; exit 2 ;;\n'
        "esac\n")
    cli.chmod(0o755)
    return cli


def test_pip_sdk_found_through_its_rocm_sdk_command(tmp_path: Path) -> None:
    sdk = tmp_path / "venv/lib/python3.12/site-packages/_rocm_sdk_devel"
    (sdk / "lib/llvm/bin").mkdir(parents=True)
    (sdk / "lib/llvm/bin/clang++").write_text("")
    (sdk / "lib/llvm/bin/clang").write_text("")
    (sdk / "lib/llvm/lib/clang/23").mkdir(parents=True)
    _sdk_cli(tmp_path / "venv/bin", sdk)
    (install,) = find_rocm_installs(tmp_path / "empty", {"PATH": str(tmp_path / "venv/bin")},
                                    python_paths=[])
    assert (install.root, install.source, install.layout) == (sdk, "pip rocm-sdk", "pip SDK")
    assert (install.version, install.version_source) == ("7.14.1", "rocm-sdk version")
    assert install.targets == ("gfx1100", "gfx1101", "gfx1102", "gfx1103")
    assert install.targets_source == "rocm-sdk targets"
    facts = rocm_facts_for(install)
    assert facts["version"].source == "install: rocm-sdk version"
    assert facts.table_row == "7.14"


def test_invoke_knowledge_shows_a_rocm_10_install(tmp_path: Path) -> None:
    tree = _therock_tree(tmp_path, "10.0", "10.1.0", 23, ("gfx1100",))
    env = {**os.environ, "PYTHONPATH": str(KIT), "NO_COLOR": "1", "HIP_PLATFORM": "amd"}
    done = subprocess.run([sys.executable, "-m", "invoke", "knowledge", "-o", str(tree), "-w",
                           str(tmp_path / "w")], cwd=KIT, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"ROCm facts of {tree} (its own first, config/rocm.toml 10.1 second)"
    rows = {line.split()[0]: line.split() for line in lines[3:]}
    assert rows["llvm_major"] == ["llvm_major", "23", "install:", "lib/llvm/lib/clang/23"]
    assert rows["targets"][:2] == ["targets", "gfx1100"]
