"""The inspector on real compiler output: Debian hipcc (clang-15) and clang-22, .so/.o/wheels.

Fixtures are compiled once per session by tests/hip/build_fixtures.py into a temp dir; the
reader's targets are compared with the targets each translation unit was compiled for, and with
roc-obj-ls (Debian's hipcc package ships it) where it can read the file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from rocmforge.inspect import inspect_paths, missing_targets
from rocmforge.inspect.reader import default_mach_name

sys.path.insert(0, str(Path(__file__).parents[1] / "hip"))
import build_fixtures  # noqa: E402
from conftest import missing_real_part  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow,
              pytest.mark.needs_tool("hipcc", "clang-22", "clang-offload-bundler-22", "gcc")]


@pytest.fixture(scope="session")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, build_fixtures.Fixture]:
    if not (shutil.which("hipcc") and shutil.which("clang-22")):
        missing_real_part("hipcc and clang-22 are needed to compile the fixtures")
    return build_fixtures.build_all(tmp_path_factory.mktemp("hip-fixtures"))


def _one(path: Path):
    (lib,) = inspect_paths([path]).libraries
    return lib


@pytest.mark.parametrize("name", ["deb", "deb_obj", "c22_plain", "c22_v3", "c22_v2"])
def test_bundles_match_the_compiled_targets(fixtures, name: str) -> None:
    fixture = fixtures[name]
    lib = _one(fixture.path)
    assert lib.status == "ok", lib.error
    per_bundle = tuple(
        tuple(sorted(e.entry_id.target for e in b.device_entries)) for b in lib.bundles
    )
    assert per_bundle == tuple(tuple(sorted(tu)) for tu in fixture.bundles)
    assert lib.containers == (fixture.container,)
    assert lib.mismatches == ()
    assert lib.code_object_versions == ((4,) if name.startswith("deb") else (6,))
    assert all(b.entries[0].entry_id.is_host for b in lib.bundles)


def test_every_code_object_is_cross_checked_in_small_bundles(fixtures) -> None:
    for name in ("deb", "c22_plain", "c22_v3", "c22_v2"):
        lib = _one(fixtures[name].path)
        statuses = {e.check.status for b in lib.bundles for e in b.device_entries}
        assert statuses == {"ok"}, (name, statuses)


def test_host_entry_spellings_of_both_compilers(fixtures) -> None:
    deb = _one(fixtures["deb"].path).bundles[0].entries[0].entry_id.text
    c22 = _one(fixtures["c22_plain"].path).bundles[0].entries[0].entry_id.text
    assert (deb, c22) == ("host-x86_64-unknown-linux", "host-x86_64-unknown-linux-gnu-")


def test_rdc_new_driver_and_stripped_files_say_so(fixtures) -> None:
    rdc = _one(fixtures["deb_rdc"].path)
    assert (rdc.status, rdc.targets) == ("rdc", ("gfx90a",))
    assert "-fgpu-rdc object" in rdc.notes[-1]
    new = _one(fixtures["c22_newdriver"].path)
    assert new.status == "rdc" and ".llvm.offloading section" in new.notes[0]
    stripped = _one(fixtures["deb_stripped"].path)
    assert stripped.status == "stripped"
    assert stripped.notes[0].startswith(".hip_fatbin is stripped (NOBITS or empty)")


def test_wheel_members_are_read_in_place(fixtures, tmp_path: Path) -> None:
    wheel = fixtures["wheel"].path
    before = set(os.listdir(tmp_path))
    report = inspect_paths([wheel])
    by_member = {lib.path.split("!")[1]: lib for lib in report.libraries}
    assert set(by_member) == {
        "fake_torch/lib/libdeb.so",
        "fake_torch/lib/libc22_v3.so",
        "fake_torch/lib/libc22_plain.so",
    }
    assert by_member["fake_torch/lib/libdeb.so"].targets == fixtures["deb"].targets
    assert by_member["fake_torch/lib/libc22_v3.so"].targets == fixtures["c22_v3"].targets
    assert by_member["fake_torch/lib/libc22_plain.so"].targets == fixtures["c22_plain"].targets
    assert set(os.listdir(tmp_path)) == before


def test_missing_targets_against_expectations(fixtures) -> None:
    report = inspect_paths([fixtures["deb"].path, fixtures["c22_v3"].path])
    assert report.common_targets == ("gfx90a:xnack+",)
    missing = missing_targets(report, ["gfx90a:xnack+", "gfx942"])
    assert [(m.target, Path(m.path).name) for m in missing] == [("gfx942", "libdeb.so")]
    # gfx90a:xnack- code does not load on an xnack+ device; Any would.
    plain = inspect_paths([fixtures["c22_v2"].path])
    assert [m.target for m in missing_targets(plain, ["gfx90a:xnack+"])] == ["gfx90a:xnack+"]


def test_arch_table_names_every_fixture_mach(fixtures) -> None:
    name = default_mach_name()
    lib = _one(fixtures["c22_v3"].path)
    for entry in (e for b in lib.bundles for e in b.device_entries):
        assert name(entry.check.e_flags & 0xFF) == entry.entry_id.processor


def test_patched_e_flags_are_reported_as_mismatch(fixtures, tmp_path: Path) -> None:
    from rocmforge.inspect.elf import read_host_layout

    src = fixtures["deb"].path
    bad = tmp_path / "libbad.so"
    shutil.copyfile(src, bad)
    lib = _one(src)
    entry = next(e for e in lib.bundles[0].device_entries if e.entry_id.processor == "gfx1030")
    with open(bad, "r+b") as handle:
        fatbin = read_host_layout(handle).hip_fatbin
        assert fatbin is not None
        handle.seek(fatbin.offset + lib.bundles[0].offset + entry.offset + 48)
        handle.write(bytes([0x30]))  # EF_AMDGPU_MACH of gfx908
    patched = _one(bad)
    assert patched.mismatches == (
        "bundle at 0x0, hipv4-amdgcn-amd-amdhsa--gfx1030: "
        "ID says gfx1030, e_flags mach 0x30 is gfx908",
    )


def test_truncated_and_mixed_inputs_report_per_file(fixtures, tmp_path: Path) -> None:
    data = fixtures["deb"].path.read_bytes()
    cut = tmp_path / "libcut.so"
    cut.write_bytes(data[: len(data) // 2])
    text = tmp_path / "README.txt"
    text.write_text("not elf")
    report = inspect_paths([cut, text, fixtures["c22_v2"].path, tmp_path / "absent.so"])
    errors = {Path(lib.path).name: lib.error for lib in report.libraries if lib.status == "error"}
    assert set(errors) == {"README.txt", "absent.so"}
    assert errors["README.txt"] == "not an ELF file (no \\x7fELF magic)"
    assert errors["absent.so"] == "cannot read it (No such file or directory)"
    # The cut file lost its section table; its first bundle is found in the raw bytes.
    cut_lib = report.libraries[0]
    assert (cut_lib.status, cut_lib.raw_scan) == ("partial", True)
    assert cut_lib.error.startswith("malformed ELF headers")
    assert "This result comes from a damaged file" in cut_lib.error
    assert [Path(lib.path).name for lib in report.readable] == ["libcut.so", "libc22_v2.so"]


def test_directory_with_thousands_of_files(fixtures, tmp_path: Path) -> None:
    for index in range(3000):
        (tmp_path / f"f{index:04}.py").write_text("x = 1\n")
    shutil.copyfile(fixtures["c22_v3"].path, tmp_path / "libk.so")
    report = inspect_paths([tmp_path])
    assert report.skipped_files == 3000
    assert [Path(lib.path).name for lib in report.libraries] == ["libk.so"]


@pytest.mark.needs_tool("roc-obj-ls")
@pytest.mark.parametrize("name", ["deb", "c22_plain"])
def test_agrees_with_roc_obj_ls_on_plain_bundles(fixtures, name: str) -> None:
    path = fixtures[name].path
    out = subprocess.run(["roc-obj-ls", "-v", str(path)], capture_output=True, text=True)
    theirs = sorted(
        (int(line.split()[0]), line.split()[1])
        for line in out.stdout.splitlines()
        if line[:1].isdigit()
    )
    lib = _one(path)
    ours = sorted((i + 1, e.entry_id.text) for i, b in enumerate(lib.bundles) for e in b.entries)
    assert ours == theirs and len(ours) > 2


@pytest.mark.needs_tool("roc-obj-ls")
def test_roc_obj_ls_cannot_read_ccob_but_we_can(fixtures) -> None:
    path = fixtures["c22_v3"].path
    out = subprocess.run(["roc-obj-ls", "-v", str(path)], capture_output=True, text=True)
    assert not [line for line in out.stdout.splitlines() if line[:1].isdigit()]
    assert len(_one(path).bundles) == 2


def _invoke(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "invoke", "inspect", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
    )


def test_cli_expect_exit_1_names_target_file_and_cause(fixtures) -> None:
    done = _invoke(str(fixtures["wheel"].path), "--expect", "gfx1100;gfx90a")
    assert done.returncode == 1, done.stderr
    assert "libdeb.so" in done.stdout and "Expected targets missing" in done.stdout
    assert "expected gfx1100 not found in 1 of 3 libraries" in done.stderr
    assert "PYTORCH_ROCM_ARCH" in done.stderr


def test_cli_json_document(fixtures) -> None:
    done = _invoke(f"{fixtures['c22_v2'].path} {fixtures['deb'].path}", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["schema"] == "rocmforge.inspect/1"
    assert doc["summary"]["common_targets"] == ["gfx1030", "gfx90a:xnack-"]
    assert [lib["storage"] for lib in doc["libraries"]] == [["ccob-v2/zstd"], ["plain"]]


def test_cli_repeated_path_flags_add_to_the_positional_path(fixtures) -> None:
    done = _invoke(
        str(fixtures["c22_v2"].path),
        "--path", str(fixtures["deb"].path),
        "--path", str(fixtures["c22_v3"].path),
        "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert [Path(lib["path"]).name for lib in doc["libraries"]] == [
        "libc22_v2.so",
        "libdeb.so",
        "libc22_v3.so",
    ]


def test_cli_quoted_and_flag_forms_mix(fixtures, tmp_path: Path) -> None:
    spaced = tmp_path / "dir with space"
    spaced.mkdir()
    shutil.copyfile(fixtures["deb"].path, spaced / "libdeb.so")
    # A --path value is taken whole (no splitting); the positional may hold a quoted list.
    done = _invoke(
        f"{fixtures['c22_v2'].path} {fixtures['c22_plain'].path}", "--path", str(spaced), "--json"
    )
    assert done.returncode == 0, done.stderr
    names = [Path(lib["path"]).name for lib in json.loads(done.stdout)["libraries"]]
    assert names == ["libc22_v2.so", "libc22_plain.so", "libdeb.so"]


def test_cli_a_file_that_is_not_elf_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("hi")
    done = _invoke(str(tmp_path / "x.txt"))
    assert done.returncode == 2
    assert (f"cannot inspect {tmp_path / 'x.txt'}: not a wheel, directory, ELF file or kpack "
            "archive") in done.stderr
    assert "Traceback" not in done.stderr


def test_cli_bad_expect_exits_2_without_reading(fixtures) -> None:
    done = _invoke(str(fixtures["deb"].path), "--expect", "gfx9999")
    assert done.returncode == 2
    assert '"gfx9999" is not a GPU target the kit knows' in done.stderr


def test_zip_that_is_not_a_zip(tmp_path: Path) -> None:
    fake = tmp_path / "broken.whl"
    fake.write_bytes(b"PK\x03\x04 nope")
    (lib,) = inspect_paths([fake]).libraries
    assert lib.status == "error" and lib.error.startswith("not a readable zip")
    assert zipfile.is_zipfile(fake) is False
