"""`inspect`'s exit status: 0 only when proven, 1 for a failed check, 2 for bad input (issue 15).

Real files throughout: host-only libraries built with gcc (a CPU-only build in miniature), the
real libtorch_cpu.so of the CPU torch wheel when it is installed, HIP libraries compiled with
clang-22 (tests/hip/*.hip) and damaged copies of them, wheels written with zipfile. Each test
runs the CLI (`python -m invoke inspect`, or the `rocmforge` script) and asserts its exit status
and message.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "hip"))
import build_fixtures  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CPU_ONLY = "no HIP device code: a CPU-only build"


def _env() -> dict[str, str]:
    return dict(os.environ, NO_COLOR="1", PYTHONPATH=str(REPO), HIP_PLATFORM="amd")


def invoke_inspect(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "invoke", "inspect", *args], cwd=REPO,
                          capture_output=True, text=True, env=_env())  # fmt: skip


def rocmforge(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The `rocmforge` console script of this checkout (a two-line launcher named like it)."""
    launcher = tmp_path / "rocmforge"
    launcher.write_text("from rocmforge.cli import program\nprogram.run()\n")
    return subprocess.run([sys.executable, str(launcher), *args], cwd=tmp_path,
                          capture_output=True, text=True, env=_env())  # fmt: skip


def host_only_so(folder: Path, name: str = "libhost.so") -> Path:
    """A real shared library with no device code: what a CPU-only build ships."""
    src = folder / "host.c"
    src.write_text("int host_function(void) { return 42; }\n")
    lib = folder / name
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return lib


@pytest.fixture(scope="module")
def hip_so(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A HIP library compiled by clang-22: two translation units, plain bundles, gfx90a+gfx942."""
    out = tmp_path_factory.mktemp("hip-so")
    objects = []
    for index, src in enumerate(("bare_add.hip", "bare_mul.hip")):
        obj = out / f"tu{index}.o"
        build_fixtures._clang22(src, ("gfx90a", "gfx942"), obj)
        objects.append(obj)
    lib = out / "libkernels.so"
    build_fixtures._link(lib, objects)
    return lib


def flip_in_entry_table(lib: Path, out: Path, needle: bytes, *, bundle: int) -> Path:
    """A copy of `lib` with one byte flipped in entry ID `needle` of bundle number `bundle`
    (0-based) of its .hip_fatbin: the ID's last character becomes non-ASCII."""
    from rocmforge.inspect import inspect_paths
    from rocmforge.inspect.elf import read_host_layout

    with open(lib, "rb") as handle:
        fatbin = read_host_layout(handle).hip_fatbin
    assert fatbin is not None
    (report,) = inspect_paths([lib]).libraries
    data = bytearray(lib.read_bytes())
    start = fatbin.offset + report.bundles[bundle].offset
    at = data.index(needle, start, start + 4096)
    data[at + len(needle) - 1] ^= 0x80
    out.write_bytes(bytes(data))
    return out


# --- item 1: a CPU-only build fails --expect -------------------------------------------------


@pytest.mark.needs_tool("gcc")
def test_cpu_only_wheel_with_expect_exits_1_naming_the_files(tmp_path: Path) -> None:
    lib = host_only_so(tmp_path)
    wheel = tmp_path / "torch-2.13.0+cpu-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(lib, "torch/lib/libtorch_cpu.so")
        archive.write(lib, "torch/lib/libc10.so")
        archive.writestr("torch/__init__.py", "")
    done = invoke_inspect(str(wheel), "--expect", "gfx1100")
    assert done.returncode == 1, done.stderr
    assert f"rocmforge: {CPU_ONLY}. None of the 2 ELF file(s) read" in done.stderr
    assert f"{wheel}!torch/lib/libtorch_cpu.so, {wheel}!torch/lib/libc10.so" in done.stderr
    # Without --expect nothing was asked: exit 0, but the note says what was (not) found.
    plain = invoke_inspect(str(wheel))
    assert plain.returncode == 0, plain.stderr
    assert f"rocmforge: {CPU_ONLY}? none of the 2 ELF file(s) read holds any" in plain.stderr


@pytest.mark.needs_tool("gcc")
def test_host_only_library_with_expect_exits_1(tmp_path: Path) -> None:
    lib = host_only_so(tmp_path, "libtorch_cpu.so")
    done = invoke_inspect(str(lib), "--expect", "gfx1100;gfx942", "--json")
    assert done.returncode == 1
    doc = json.loads(done.stdout)
    assert doc["verdict"]["exit_code"] == 1
    assert doc["verdict"]["problems"][0].startswith(f"{CPU_ONLY}. None of the 1 ELF file(s)")
    assert doc["libraries"][0]["status"] == "no-device-code"


def _installed_torch_lib() -> Path:
    spec = importlib.util.find_spec("torch")  # locates the package without importing it
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations))) / "lib"


@pytest.mark.needs_import("torch")
def test_real_cpu_torch_libtorch_cpu_with_expect_exits_1() -> None:
    lib_dir = _installed_torch_lib()
    if (lib_dir / "libtorch_hip.so").exists():
        pytest.skip("the installed torch is a ROCm build; this test reads the CPU one")
    done = invoke_inspect(str(lib_dir / "libtorch_cpu.so"), "--expect", "gfx1100", "--json")
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    (lib,) = doc["libraries"]
    assert (lib["status"], lib["targets"], lib["raw_code_objects"]) == ("no-device-code", [], [])
    assert doc["verdict"]["problems"][0].startswith(f"{CPU_ONLY}. None of the 1 ELF file(s)")


# --- item 2: any FAIL row exits 1 ------------------------------------------------------------


@pytest.mark.needs_tool("clang-22", "clang-offload-bundler-22", "gcc")
def test_damaged_entry_table_exits_1_even_when_expected_targets_are_present(
    hip_so: Path, tmp_path: Path
) -> None:
    # The second bundle's gfx942 ID gets a non-ASCII byte; the first bundle proves both targets.
    bad = flip_in_entry_table(hip_so, tmp_path / "libbad.so", b"amdgcn-amd-amdhsa--gfx942",
                              bundle=1)
    good = invoke_inspect(str(hip_so), "--expect", "gfx90a;gfx942")
    assert good.returncode == 0, good.stderr
    done = invoke_inspect(f"{hip_so} {bad}", "--expect", "gfx90a;gfx942")
    assert done.returncode == 1
    assert "FAIL" in done.stdout and str(bad) in done.stdout
    assert (f"rocmforge: 1 of 2 libraries could not be read completely (FAIL rows above): "
            f"{bad}: bundle 2 at .hip_fatbin offset 0x") in done.stderr  # fmt: skip
    assert "has a non-ASCII ID" in done.stderr
    # Without --expect too: a FAIL row is never a pass.
    assert invoke_inspect(str(bad)).returncode == 1


@pytest.mark.needs_tool("gcc")
def test_damaged_wheel_is_a_failed_check_not_bad_input(tmp_path: Path) -> None:
    fake = tmp_path / "broken-0-py3-none-any.whl"
    fake.write_bytes(b"PK\x03\x04 not really a zip")
    done = invoke_inspect(str(fake), "--expect", "gfx90a")
    assert done.returncode == 1
    assert f"{fake}: not a readable zip" in done.stderr


# --- bad input: exit 2 before anything is read ------------------------------------------------


@pytest.mark.needs_tool("gcc")
def test_a_path_that_does_not_exist_is_bad_input(tmp_path: Path) -> None:
    lib = host_only_so(tmp_path)
    done = invoke_inspect(f"{lib} {tmp_path / 'nope.so'}")
    assert done.returncode == 2
    assert f"rocmforge: cannot inspect {tmp_path / 'nope.so'}: No such file or directory." in (
        done.stderr
    )
    assert done.stdout == "" and "Traceback" not in done.stderr


# --- item 7: --help, and a wheel without libraries -------------------------------------------


@pytest.mark.parametrize("word", ["--help", "-h"])
def test_invoke_inspect_help_prints_the_task_help(word: str) -> None:
    done = invoke_inspect(word)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: invoke [--core-opts] inspect [--options]")
    assert "--deep" in done.stdout and "-e STRING, --expect=STRING" in done.stdout
    assert done.stderr == ""


def test_rocmforge_inspect_h_prints_the_task_help(tmp_path: Path) -> None:
    done = rocmforge(tmp_path, "inspect", "-h")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: rocmforge [--core-opts] inspect [--options]")


def test_wheel_without_elf_files_says_so_and_exits_0(tmp_path: Path) -> None:
    wheel = tmp_path / "pure-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("pure/__init__.py", "x = 1\n")
        archive.writestr("pure/data.bin", b"\x00\x01 not elf")
        archive.writestr("pure-1.0.dist-info/METADATA", "Name: pure\n")
    done = invoke_inspect(str(wheel))
    assert done.returncode == 0, done.stderr
    assert "Offload bundles per library" not in done.stdout  # no empty table
    assert "libraries read    0 of 0 (3 non-ELF files skipped)" in done.stdout
    assert done.stderr == (
        f"rocmforge: {wheel} was read: it holds no ELF files (3 members, none a library or "
        "executable), so there is no device code in it to report.\n"
    )
    expected = invoke_inspect(str(wheel), "--expect", "gfx90a")
    assert expected.returncode == 1
    assert f"rocmforge: {CPU_ONLY}? {wheel} hold(s) no ELF files at all" in expected.stderr


# --- item 8: several paths --------------------------------------------------------------------


@pytest.mark.needs_tool("clang-22", "clang-offload-bundler-22", "gcc")
def test_rocmforge_inspect_takes_every_path_a_shell_glob_gives(
    hip_so: Path, tmp_path: Path
) -> None:
    host = host_only_so(tmp_path, "libb.so")
    done = rocmforge(tmp_path, "inspect", str(hip_so), str(host), "--expect", "gfx942",
                     str(hip_so.parent), "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert [s["path"] for s in doc["sources"]] == [str(hip_so), str(host), str(hip_so.parent)]
    assert doc["expected"] == ["gfx942"]


def test_spread_paths_turns_later_words_into_path_flags() -> None:
    from rocmforge.tasks.inspect import spread_paths

    argv = ["rocmforge", "--echo", "inspect", "a.whl", "b.so", "-e", "gfx90a", "c", "--json",
            "--expect=gfx942", "d"]  # fmt: skip
    assert spread_paths(argv) == ["rocmforge", "--echo", "inspect", "a.whl", "--path", "b.so",
                                  "-e", "gfx90a", "--path", "c", "--json", "--expect=gfx942",
                                  "--path", "d"]  # fmt: skip
    assert spread_paths(["rocmforge", "inspect", "--paths", "a", "b"]) == [
        "rocmforge", "inspect", "--paths", "a", "--path", "b"]  # fmt: skip
    assert spread_paths(["rocmforge", "doctor", "x"]) == ["rocmforge", "doctor", "x"]


# --- the verdict as a pure function --------------------------------------------------------------


def test_judge_each_case() -> None:
    from rocmforge.inspect.bundle_records import parse_entry_id
    from rocmforge.inspect.report import InspectReport, LibraryReport, SourceRead
    from rocmforge.inspect.verdict import judge

    host = LibraryReport(path="libc10.so", status="no-device-code")
    gfx942 = parse_entry_id("hipv4-amdgcn-amd-amdhsa--gfx942")
    hip = LibraryReport(path="libtorch_hip.so", status="rdc", rdc_entries=(gfx942,))
    broken = LibraryReport(path="libx.so", status="error", error="malformed ELF headers")
    ok = InspectReport(libraries=(host, hip))
    assert judge(ok, ["gfx942"], ()).exit_code == 0
    cpu = judge(InspectReport(libraries=(host,)), ["gfx942"], ())
    assert cpu.exit_code == 1 and cpu.problems[0].startswith(f"{CPU_ONLY}. None of the 1 ")
    failed = judge(InspectReport(libraries=(host, hip, broken)), [], ())
    assert failed.exit_code == 1
    assert failed.problems[0].startswith(
        "1 of 3 libraries could not be read completely (FAIL rows above): libx.so: malformed"
    )
    empty = judge(InspectReport(libraries=(), sources=(
        SourceRead(path="p.whl", kind="wheel", files=4, elf_files=0),)), [], ())  # fmt: skip
    assert (empty.exit_code, empty.notes[0][:40]) == (0, "p.whl was read: it holds no ELF files (4")


@pytest.mark.needs_tool("gcc", "objcopy")
def test_a_target_only_named_by_entries_whose_code_object_disagrees_is_not_proven(
    tmp_path: Path,
) -> None:
    from rocmforge.inspect.synthetic import code_object_header, plain_bundle

    section = plain_bundle([
        ("host-x86_64-unknown-linux-gnu-", b""),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a", code_object_header(mach=0x3F) + bytes(3000)),
        # The table says gfx942; the code object's e_flags say gfx1100 (mach 0x41).
        ("hipv4-amdgcn-amd-amdhsa--gfx942", code_object_header(mach=0x41) + bytes(3000)),
    ])  # fmt: skip
    blob = tmp_path / "fatbin.bin"
    blob.write_bytes(section)
    lib = tmp_path / "liblies.so"
    subprocess.run(["objcopy", "--add-section", f".hip_fatbin={blob}",
                    str(host_only_so(tmp_path)), str(lib)], check=True)  # fmt: skip
    assert invoke_inspect(str(lib), "--expect", "gfx90a").returncode == 0
    done = invoke_inspect(str(lib), "--expect", "gfx942")
    assert done.returncode == 1
    assert "WARN" in done.stdout and "gfx942 (listed, unproven)" in done.stdout
    assert (f"expected gfx942 is listed in {lib}, but only in entries that are damaged or whose "
            "code object names another target, so nothing proves it") in done.stderr  # fmt: skip
