"""System probe: parsers on real-format text, real cmake/ninja, a real dist-info for triton."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rocmforge.probes.system import (
    free_disk,
    memory_gib,
    parse_meminfo,
    parse_os_release,
    parse_tool_version,
    triton_distributions,
)


def test_parse_meminfo() -> None:
    total, available = parse_meminfo(
        "MemTotal:       33554432 kB\nMemFree: 1 kB\nMemAvailable:   16777216 kB\n"
    )
    assert (total, available) == (32.0, 16.0)


def test_cgroup_limit_caps_memory(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/meminfo").write_text("MemTotal: 67108864 kB\nMemAvailable: 67108864 kB\n")
    (tmp_path / "sys/fs/cgroup").mkdir(parents=True)
    (tmp_path / "sys/fs/cgroup/memory.max").write_text(str(8 * 1024**3) + "\n")
    assert memory_gib(tmp_path) == (8.0, 8.0)
    (tmp_path / "sys/fs/cgroup/memory.max").write_text("max\n")
    assert memory_gib(tmp_path) == (64.0, 64.0)


def test_parse_os_release_and_versions() -> None:
    assert parse_os_release('ID=debian\nVERSION_ID="12"\n# c\n') == {
        "ID": "debian",
        "VERSION_ID": "12",
    }
    assert parse_tool_version("cmake version 3.25.1\n\nCMake suite") == "3.25.1"
    assert parse_tool_version("1.11.1\n") == "1.11.1"


def test_free_disk_of_a_work_dir_not_created_yet(tmp_path: Path) -> None:
    checked, free = free_disk(tmp_path / "a" / "b")
    assert checked == tmp_path
    stat = os.statvfs(tmp_path)
    assert free == pytest.approx(stat.f_bavail * stat.f_frsize / 2**30, abs=0.5)


def test_cuda_triton_is_seen(tmp_path: Path) -> None:
    info = tmp_path / "triton-3.1.0.dist-info"
    info.mkdir()
    info.joinpath("METADATA").write_text("Metadata-Version: 2.1\nName: triton\nVersion: 3.1.0\n")
    rocm = tmp_path / "pytorch_triton_rocm-3.1.0.dist-info"
    rocm.mkdir()
    rocm.joinpath("METADATA").write_text(
        "Metadata-Version: 2.1\nName: pytorch-triton-rocm\nVersion: 3.1.0\n"
    )
    found = {(d.name, d.version) for d in triton_distributions([str(tmp_path)])}
    assert found == {("triton", "3.1.0"), ("pytorch-triton-rocm", "3.1.0")}
    assert triton_distributions([str(tmp_path / "nothing")]) == ()


def test_triton_rocm_is_a_provider(tmp_path: Path) -> None:
    # Drift bug: the probe's own list lacked triton-rocm, the ROCm wheel's name from PyTorch 2.10.
    info = tmp_path / "triton_rocm-3.6.0+git5f1ad2d8.dist-info"
    info.mkdir()
    info.joinpath("METADATA").write_text(
        "Metadata-Version: 2.1\nName: triton_rocm\nVersion: 3.6.0+git5f1ad2d8\n"
    )
    found = [(d.name, d.version) for d in triton_distributions([str(tmp_path)])]
    assert found == [("triton-rocm", "3.6.0+git5f1ad2d8")]


def test_triton_providers_are_found_by_folder_name_in_path_order(tmp_path: Path) -> None:
    # Found by a name-filtered search (folder names), not by reading every METADATA: a
    # capitalised dist-info, a legacy egg-info, and sys.path order deciding which comes first.
    first, second = tmp_path / "a", tmp_path / "b"
    (first / "Triton-3.1.0.dist-info").mkdir(parents=True)
    (first / "Triton-3.1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: Triton\nVersion: 3.1.0\n")
    egg = second / "pytorch_triton_rocm-3.2.0-py3.11.egg-info"
    egg.mkdir(parents=True)
    egg.joinpath("PKG-INFO").write_text(
        "Metadata-Version: 2.1\nName: pytorch-triton-rocm\nVersion: 3.2.0\n")
    (second / "numpy-2.0.0.dist-info").mkdir()
    (second / "numpy-2.0.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: numpy\nVersion: 2.0.0\n")
    found = [(d.name, d.version, Path(d.location).name)
             for d in triton_distributions([str(second), str(first)])]
    assert found == [("pytorch-triton-rocm", "3.2.0", egg.name),
                     ("triton", "3.1.0", "Triton-3.1.0.dist-info")]
    assert [d.name for d in triton_distributions([str(first), str(second)])] == [
        "triton", "pytorch-triton-rocm"]
