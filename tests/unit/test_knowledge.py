"""The facts in config/*.toml as loaded: exact values, and strict rejection of malformed files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rocmforge.errors import ConfigError, UsageError
from rocmforge.knowledge.arches import load_arch_table
from rocmforge.knowledge.products import find_product, load_products
from rocmforge.knowledge.releases import (
    load_pytorch_releases,
    load_rocm_releases,
    pytorch_release_for,
    rocm_release_for,
)
from rocmforge.knowledge.toml_files import config_dir

CONFIG = config_dir()
KNOWLEDGE_FILES = ("arches.toml", "aliases.toml", "products.toml", "rocm.toml", "pytorch.toml")


@pytest.fixture(scope="module")
def table():
    return load_arch_table()


# ------------------------------------------------------------------------------------ arches


def test_every_target_from_gfx900_to_gfx1310_and_the_generics(table):
    expected = {
        "gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a", "gfx90c",
        "gfx940", "gfx941", "gfx942", "gfx950",
        "gfx1010", "gfx1011", "gfx1012", "gfx1013",
        "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036",
        "gfx1100", "gfx1101", "gfx1102", "gfx1103",
        "gfx1150", "gfx1151", "gfx1152", "gfx1153", "gfx1154",
        "gfx1170", "gfx1171", "gfx1172",
        "gfx1200", "gfx1201", "gfx1250", "gfx1251", "gfx1310",
        "gfx9-generic", "gfx9-4-generic", "gfx10-1-generic", "gfx10-3-generic",
        "gfx11-generic", "gfx11-7-generic", "gfx12-generic", "gfx12-5-generic", "gfx13-generic",
    }
    assert set(table.names()) == expected


@pytest.mark.parametrize(
    ("name", "mach"),
    [
        # reference §1.2 (clang-22 e_flags on Debian 12)
        ("gfx900", 0x2C), ("gfx906", 0x2F), ("gfx908", 0x30), ("gfx90a", 0x3F),
        ("gfx90c", 0x32), ("gfx942", 0x4C), ("gfx950", 0x4F), ("gfx1010", 0x33),
        ("gfx1030", 0x36), ("gfx1031", 0x37), ("gfx1032", 0x38), ("gfx1034", 0x3E),
        ("gfx1035", 0x3D), ("gfx1036", 0x45), ("gfx1100", 0x41), ("gfx1101", 0x46),
        ("gfx1102", 0x47), ("gfx1103", 0x44), ("gfx1150", 0x43), ("gfx1151", 0x4A),
        ("gfx1152", 0x55), ("gfx1153", 0x58), ("gfx1200", 0x48), ("gfx1201", 0x4E),
        ("gfx1250", 0x49), ("gfx1251", 0x5A),
        ("gfx9-generic", 0x51), ("gfx9-4-generic", 0x5F), ("gfx10-1-generic", 0x52),
        ("gfx10-3-generic", 0x53), ("gfx11-generic", 0x54), ("gfx12-generic", 0x59),
        # LLVM ELF.h values for the rest
        ("gfx902", 0x2D), ("gfx904", 0x2E), ("gfx909", 0x31), ("gfx940", 0x40),
        ("gfx941", 0x4B), ("gfx1011", 0x34), ("gfx1012", 0x35), ("gfx1013", 0x42),
        ("gfx1033", 0x39),
        # LLVM 23 (llvm/test/CodeGen/AMDGPU/elf-header-flags-mach.ll, config/arches.toml)
        ("gfx1154", 0x57), ("gfx1170", 0x5D), ("gfx1171", 0x5E), ("gfx1172", 0x5C),
        ("gfx1310", 0x50), ("gfx11-7-generic", 0x62), ("gfx12-5-generic", 0x5B),
        ("gfx13-generic", 0x63),
    ],
)
def test_mach_values(name, mach, table):
    assert table.get(name).mach == mach
    assert table.by_mach(mach).name == name


def test_by_mach_uses_only_the_low_byte(table):
    assert table.by_mach(0x63F).name == "gfx90a"  # gfx90a:xnack- e_flags from clang-15
    assert table.by_mach(0x1000054).name == "gfx11-generic"
    assert table.by_mach(0x4D) is None


def test_gfx1100_facts(table):
    arch = table.get("GFX1100")
    assert (arch.family, arch.wavefront, arch.llvm_min, arch.rocm_min) == ("rdna3", 32, 15, "6.0")
    assert (arch.xnack, arch.sramecc, arch.generic, arch.removed_in_llvm) == (
        False, False, False, 0)
    assert "Radeon RX 7900 XTX" in arch.products


@pytest.mark.parametrize(
    ("name", "family", "wave", "llvm_min", "rocm_min", "xnack", "sramecc"),
    [
        ("gfx90a", "cdna2", 64, 13, "6.0", True, True),
        ("gfx942", "cdna3", 64, 17, "6.0", True, True),
        ("gfx950", "cdna4", 64, 20, "7.0", True, True),
        ("gfx906", "gcn5.1", 64, 9, "", True, True),
        ("gfx1010", "rdna1", 32, 9, "", True, False),
        ("gfx1030", "rdna2", 32, 11, "6.0", False, False),
        ("gfx1101", "rdna3", 32, 15, "6.4.1", False, False),
        ("gfx1151", "rdna3.5", 32, 17, "", False, False),
        ("gfx1201", "rdna4", 32, 18, "6.4.1", False, False),
        ("gfx1250", "cdna5", 32, 21, "", False, False),  # clang-22 takes no :xnack/:sramecc
    ],
)
def test_arch_rows(name, family, wave, llvm_min, rocm_min, xnack, sramecc, table):
    arch = table.get(name)
    assert (arch.family, arch.wavefront, arch.llvm_min, arch.rocm_min, arch.xnack,
            arch.sramecc) == (family, wave, llvm_min, rocm_min, xnack, sramecc)


def test_removed_and_generic_targets(table):
    assert table.get("gfx940").removed_in_llvm == 21
    assert table.get("gfx941").removed_in_llvm == 21
    assert not table.get("gfx940").accepted_by_llvm(21)
    assert table.get("gfx940").accepted_by_llvm(20)
    assert not table.get("gfx942").accepted_by_llvm(15)
    generic = table.get("gfx11-generic")
    assert generic.generic and generic.llvm_min == 19
    assert generic.generic_members == (
        "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153")
    assert table.get("gfx9-4-generic").llvm_min == 20


def test_aliases_expand_case_insensitively(table):
    assert table.alias("mi300") == ("gfx942",)
    assert table.alias("MI300X") == ("gfx942",)
    assert table.alias("Strix_Halo") == ("gfx1151",)
    assert table.alias("RDNA3.5") == ("gfx1150", "gfx1151", "gfx1152", "gfx1153")
    assert table.alias("navi31") == ("gfx1100",)
    assert table.alias("nope") is None
    assert "strix-halo" in table.alias_names()


def test_table_is_cached_per_directory():
    assert load_arch_table() is load_arch_table(CONFIG)


# ------------------------------------------------------------------------------------ products


def test_products_dense_peaks():
    by_name = {product.name: product for product in load_products()}
    mi300x = by_name["AMD Instinct MI300X"]
    assert (mi300x.arch, mi300x.bf16_tflops, mi300x.bandwidth_gbs, mi300x.estimate) == (
        "gfx942", 1307.4, 5300.0, True)
    h200 = by_name["NVIDIA H200"]
    assert (h200.arch, h200.fp16_tflops, h200.bf16_tflops, h200.bandwidth_gbs, h200.estimate) == (
        "sm_90", 989.5, 989.5, 4800.0, False)
    for name in ("AMD Instinct MI325X", "AMD Instinct MI250X", "AMD Instinct MI210",
                 "AMD Instinct MI100", "AMD Radeon RX 7900 XTX", "AMD Radeon PRO W7900",
                 "AMD Radeon RX 9070 XT", "AMD Strix Halo (Radeon 8060S)"):
        assert name in by_name
    assert all(product.source for product in by_name.values())


@pytest.mark.parametrize(
    ("device", "arch", "expected"),
    [
        ("AMD Instinct MI300X", "", "AMD Instinct MI300X"),
        ("AMD Instinct MI300X", "gfx942:sramecc+:xnack-", "AMD Instinct MI300X"),
        ("AMD Instinct MI325X", "", "AMD Instinct MI325X"),
        ("AMD Instinct MI250X / MI250", "", "AMD Instinct MI250X"),
        ("AMD Instinct MI210", "gfx90a", "AMD Instinct MI210"),
        ("Radeon RX 7900 XTX", "gfx1100", "AMD Radeon RX 7900 XTX"),
        ("AMD Radeon PRO W7900", "", "AMD Radeon PRO W7900"),
        ("AMD Radeon Graphics", "gfx1151", "AMD Strix Halo (Radeon 8060S)"),
        ("NVIDIA H200", "", "NVIDIA H200"),
        ("NVIDIA H200", "sm_90", "NVIDIA H200"),
        ("AMD Radeon RX 9070", "gfx1201", None),  # the 56-CU card is not the XT
        ("AMD Radeon Graphics", "gfx942", None),  # several gfx942 products: no guess
        ("AMD Instinct MI300X", "gfx90a", None),  # name and arch disagree
        ("Intel Arc A770", "", None),
    ],
)
def test_find_product(device, arch, expected):
    found = find_product(device, arch)
    assert (found.name if found else None) == expected


def test_mi250x_per_device_is_one_gcd():
    product = find_product("AMD Instinct MI250X / MI250")
    assert product.devices == 2
    one = product.per_device()
    assert (one.bf16_tflops, one.bandwidth_gbs, one.devices) == (191.5, 1600.0, 1)
    h200 = find_product("NVIDIA H200")
    assert h200.per_device() is h200


# ------------------------------------------------------------------------------------ releases


@pytest.mark.parametrize(
    ("version", "row", "llvm", "approximate"),
    [
        ("5.2.3", "5.2", 15, False),
        ("6.0", "6.0", 17, False),
        ("6.2.4", "6.2", 18, False),
        ("6.4.43483-a187df25", "6.4", 19, False),
        ("7.0.2", "7.0", 20, False),
        ("7.1.1", "7.1", 20, False),
        ("7.2", "7.2", 22, False),
        ("5.7.1", "5.2", 15, True),
        ("7.2.4", "7.2", 22, False),
        ("7.13.0", "7.2", 22, True),
        ("7.14.0", "7.14", 23, False),
        ("10.1.0", "10.1", 0, False),  # its own row; its LLVM is in no cited source
        ("10.2.0", "10.1", 0, True),
    ],
)
def test_rocm_release_for(version, row, llvm, approximate):
    release = rocm_release_for(version)
    assert (release.version, release.llvm_major, release.approximate, release.requested) == (
        row, llvm, approximate, version)


def test_rocm_release_rows():
    releases = load_rocm_releases()
    assert list(releases) == ["5.2", "6.0", "6.1", "6.2", "6.3", "6.4", "7.0", "7.1", "7.2",
                              "7.14", "10.0", "10.1"]
    assert (releases["10.0"].released, releases["10.1"].released) == ("2026-08-26", "2026-10-05")
    seven = releases["7.0"]
    assert (seven.released, seven.gcc_recommended, seven.clang_recommended,
            seven.gcc_warn_from, seven.llvm_version) == (
        "2025-09-16", (11,), (15,), 12, "20.0.0.25314")


@pytest.mark.parametrize(("text", "fragment"), [
    ("4.5", "ROCm 4.5 is older than any release the kit knows (5.2)"),
    ("abc", '"abc" is not a ROCm version'),
])
def test_rocm_release_refusals(text, fragment):
    with pytest.raises(UsageError) as info:
        rocm_release_for(text)
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    ("ref", "row", "tracks_main"),
    [
        ("v2.9.1", "2.9", False),
        ("2.9.1", "2.9", False),
        ("release/2.9", "2.9", False),
        ("v2.13.0-rc2", "2.13", False),
        ("2.4", "2.4", False),
        ("main", "2.17", True),
        ("nightly", "2.17", True),
        ("0123456789abcdef0123456789abcdef01234567", "2.17", True),
        ("v2.15.0", "2.15", False),
        ("v2.17.0", "2.17", False),
        ("v2.18.0", "2.17", True),
    ],
)
def test_pytorch_release_for(ref, row, tracks_main):
    release = pytorch_release_for(ref)
    assert (release.version, release.tracks_main, release.requested) == (row, tracks_main, ref)


def test_pytorch_release_too_old():
    with pytest.raises(UsageError) as info:
        pytorch_release_for("v2.3.1")
    assert "PyTorch 2.3 (from 'v2.3.1') is older than the kit supports" in str(info.value)


def test_pytorch_rows():
    releases = load_pytorch_releases()
    assert list(releases) == [f"2.{minor}" for minor in range(4, 18)]
    r24, r29, r210, r213, r214 = (releases[v] for v in ("2.4", "2.9", "2.10", "2.13", "2.14"))
    assert r24.triton_pin_files == (".ci/docker/ci_commit_pins/triton-rocm.txt",
                                    ".ci/docker/ci_commit_pins/triton.txt")
    assert r29.triton_pin_files == (".ci/docker/ci_commit_pins/triton.txt",)
    assert (r24.build_style, r29.build_style, r214.build_style) == ("setup.py", "build", "build")
    assert (r213.scikit_build_core, r214.scikit_build_core) == (False, True)
    assert (r29.triton_wheel, r210.triton_wheel) == ("pytorch-triton-rocm", "triton-rocm")
    assert r29.rocm == ("6.3", "6.4") and r210.rocm == ("7.0", "7.1")
    assert (r29.cxx_std, r213.cxx_std) == (17, 20)
    assert (r29.gcc_min, r29.clang_min, r213.gcc_min, r213.clang_min) == ("9.3", 0, "11.3", 16)
    assert (r29.cmake_min, r210.cmake_min) == ("3.18", "3.27")
    assert r29.python_specifier.contains("3.14.2") and not r29.python_specifier.contains("3.9")
    assert r213.python_specifier.contains("3.15.0")
    assert r29.triton_version_file == ".ci/docker/triton_version.txt"
    assert r29.triton_repo == "https://github.com/triton-lang/triton.git"


# ------------------------------------------------------------------------------------ loaders


@pytest.fixture()
def config_copy(tmp_path: Path) -> Path:
    for name in KNOWLEDGE_FILES:
        shutil.copy(CONFIG / name, tmp_path / name)
    return tmp_path


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_copy_loads_like_the_original(config_copy):
    assert load_arch_table(config_copy).names() == load_arch_table().names()


@pytest.mark.parametrize(
    ("file", "old", "new", "fragments"),
    [
        ("arches.toml", "wavefront = 32\nllvm_min = 15", "wavefrnt = 32\nllvm_min = 15",
         ['Unknown key "wavefrnt"', 'Did you mean "wavefront"?']),
        ("arches.toml", "mach = 0x041", 'mach = "0x41"', ["mach should be int"]),
        ("arches.toml", "mach = 0x041", "mach = 0x03f", ["gfx1100 and gfx90a share mach 0x03f"]),
        ("arches.toml", "[arch.gfx1100]", "[arch.GFX1100]", ["is not an LLVM AMDGPU processor"]),
        ("aliases.toml", 'mi300 = ["gfx942"]', 'mi300 = ["gfx9420"]', ["not in arches.toml"]),
        ("aliases.toml", 'mi300 = ["gfx942"]', 'mi300 = ["gfx942"]\nMI_300 = ["gfx942"]',
         ["same alias as 'mi300'"]),
        ("products.toml", "bandwidth_gbs = 5300.0", "bandwith_gbs = 5300.0",
         ['Unknown key "bandwith_gbs"', 'Did you mean "bandwidth_gbs"?']),
        ("products.toml", 'match = ["mi300x"]', 'match = ["MI300X"]', ["write it as 'mi300x'"]),
        ("rocm.toml", "llvm_major = 20\nllvm_version = \"20.0.0.25314\"",
         "llvm_majr = 20\nllvm_version = \"20.0.0.25314\"",
         ['Unknown key "llvm_majr"', 'Did you mean "llvm_major"?']),
        ("pytorch.toml", 'build_style = "build"', 'build_style = "make"',
         ['build_style is "make"']),
        ("pytorch.toml", 'python = ">=3.10,<3.15"', 'python = ">=three"',
         ["not a PEP 440 specifier set"]),
    ],
)
def test_loaders_reject_malformed_config(config_copy, file, old, new, fragments):
    _edit(config_copy / file, old, new)
    loaders = {
        "arches.toml": load_arch_table,
        "aliases.toml": load_arch_table,
        "products.toml": load_products,
        "rocm.toml": load_rocm_releases,
        "pytorch.toml": load_pytorch_releases,
    }
    with pytest.raises(ConfigError) as info:
        loaders[file](config_copy)
    message = str(info.value)
    assert info.value.exit_code == 2
    for fragment in fragments:
        assert fragment in message


def test_products_module_imports_only_stdlib_and_kit_basics():
    """The verify suite imports products.py in a bare venv: no third-party imports allowed."""
    import ast

    source = Path(__import__("rocmforge.knowledge.products", fromlist=["x"]).__file__).read_text()
    allowed_kit = {"rocmforge.errors", "rocmforge.knowledge.toml_files"}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("rocmforge"):
                assert node.module in allowed_kit
            else:
                assert node.module.split(".")[0] in {"__future__", "dataclasses", "functools",
                                                     "re", "pathlib", "typing"}
        elif isinstance(node, ast.Import):
            for alias in node.names:
                assert alias.name in {"dataclasses", "functools", "re"}
