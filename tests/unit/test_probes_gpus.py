"""GPU probe: fake KFD sysfs trees and captured/fake tool outputs (the AMD boundary)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmforge.probes import RunResult
from rocmforge.probes.gpus import (
    decode_gfx_target_version,
    find_gpus,
    hsa_overrides,
    parse_agent_enumerator,
    parse_offload_arch,
    parse_rocminfo,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "rocminfo"


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (90010, "gfx90a"),
        (90012, "gfx90c"),
        (90008, "gfx908"),
        (90402, "gfx942"),
        (90500, "gfx950"),
        (100300, "gfx1030"),
        (100306, "gfx1036"),
        (110000, "gfx1100"),
        (110003, "gfx1103"),
        (110501, "gfx1151"),
        (120001, "gfx1201"),
        (120500, "gfx1250"),
        (0, ""),
    ],
)
def test_decode_gfx_target_version(value: int, name: str) -> None:
    assert decode_gfx_target_version(value) == name


def fake_kfd(root: Path, versions: list[int]) -> None:
    """A fake KFD topology: node 0 is the CPU (gfx_target_version 0)."""
    for index, version in enumerate([0, *versions]):
        node = root / "sys/class/kfd/kfd/topology/nodes" / str(index)
        node.mkdir(parents=True)
        node.joinpath("properties").write_text(
            f"cpu_cores_count {0 if version else 16}\nsimd_count {304 if version else 0}\n"
            f"gfx_target_version {version}\nvendor_id 4098\n"
        )


def refuse_to_run(argv, **_):  # noqa: ANN001
    raise AssertionError(f"no tool may run when sysfs answers: {argv}")


def test_kfd_sysfs_wins_and_skips_cpu_nodes(tmp_path: Path) -> None:
    fake_kfd(tmp_path, [90402, 90402, 110000])
    scan = find_gpus(root=tmp_path, environ={"PATH": ""}, run=refuse_to_run)
    assert scan.source == "kfd sysfs"
    assert [(a.target, a.node) for a in scan.agents] == [
        ("gfx942", 1),
        ("gfx942", 2),
        ("gfx1100", 3),
    ]
    assert scan.targets == ("gfx942", "gfx1100")


def test_rocminfo_fake_output() -> None:
    agents = parse_rocminfo((FIXTURES / "fake_mi300x_rx7900_rocminfo.txt").read_text())
    assert [(a.target, a.product, a.node) for a in agents] == [
        ("gfx942", "AMD Instinct MI300X", 1),
        ("gfx942", "AMD Instinct MI300X", 2),
        ("gfx1100", "AMD Radeon RX 7900 XTX", 3),
    ]


def test_rocminfo_real_no_gpu_output_has_no_agents() -> None:
    text = (FIXTURES / "real_debian12_rocminfo_5.2.3_no_gpu.txt").read_text()
    assert "ROCk module is NOT loaded" in text
    assert parse_rocminfo(text) == ()


def test_agent_enumerator_drops_gfx000_and_tracebacks() -> None:
    assert parse_agent_enumerator("gfx000\ngfx1100\ngfx942\n") == ("gfx1100", "gfx942")
    assert parse_agent_enumerator("gfx90a:sramecc+:xnack-\n") == ("gfx90a",)
    traceback = 'Traceback (most recent call last):\n  File "x", line 1\nFileNotFoundError: nodes\n'
    assert parse_agent_enumerator(traceback) == ()


def test_offload_arch_empty_means_none() -> None:
    assert parse_offload_arch("") == ()
    assert parse_offload_arch("gfx1100\ngfx1100\n") == ("gfx1100", "gfx1100")


def test_tools_are_asked_in_order_when_sysfs_is_absent(tmp_path: Path) -> None:
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev/kfd").write_text("")  # fake device node: the driver is there, sysfs is not
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("offload-arch", "rocm_agent_enumerator", "rocminfo"):
        tool = bin_dir / name
        tool.write_text("#!/bin/sh\n")
        tool.chmod(0o755)
    calls: list[str] = []
    rocminfo = (FIXTURES / "fake_mi300x_rx7900_rocminfo.txt").read_text()

    def fake_run(argv, **_):  # noqa: ANN001
        name = Path(argv[0]).name
        calls.append(name)
        outputs = {
            "offload-arch": ("", 0),
            "rocm_agent_enumerator": ("Traceback\n", 1),
            "rocminfo": (rocminfo, 0),
        }
        out, rc = outputs[name]
        return RunResult(argv=tuple(argv), returncode=rc, stdout=out, stderr="")

    scan = find_gpus(root=tmp_path, environ={"PATH": str(bin_dir)}, run=fake_run)
    assert calls == ["offload-arch", "rocm_agent_enumerator", "rocminfo"]
    assert scan.source == "rocminfo"
    assert scan.targets == ("gfx942", "gfx1100")
    assert scan.tried[0].startswith("kfd sysfs: absent")


def test_hsa_override_is_reported() -> None:
    environ = {
        "HSA_OVERRIDE_GFX_VERSION": "11.0.0",
        "HSA_OVERRIDE_GFX_VERSION_1": "10.3.0",
        "HSA_OTHER": "x",
    }
    assert hsa_overrides(environ) == (
        ("HSA_OVERRIDE_GFX_VERSION", "11.0.0"),
        ("HSA_OVERRIDE_GFX_VERSION_1", "10.3.0"),
    )


@pytest.mark.needs_tool("rocminfo")
def test_real_machine_without_gpu_finds_none() -> None:
    """This CI machine has no amdgpu driver: every source must say none, none may crash us."""
    if Path("/sys/class/kfd").exists():
        pytest.skip("this machine has a KFD driver")
    import os

    scan = find_gpus(environ=dict(os.environ))
    assert scan.agents == ()
    assert scan.tried[-1] == "tools: skipped (no /dev/kfd and no KFD sysfs)"


def test_without_kfd_no_tool_runs(tmp_path: Path) -> None:
    scan = find_gpus(root=tmp_path, environ={"PATH": "/usr/bin"}, run=refuse_to_run)
    assert (scan.agents, scan.source) == ((), "")
