"""Damaged inputs keep what can be read and never pass (issue 15 items 3, 4, 5).

Item 3: a bad entry keeps the entries before it (and, when only an ID is bad, the ones after).
Item 4: a file whose section table is lost is scanned byte by byte for bundle headers.
Item 5: `--deep` decompresses every compressed bundle whole, checks the CCOB hash against the
real clang-22 output, and cross-checks every code object.
Libraries are compiled by clang-22 from tests/hip/*.hip; shapes no compiler writes come from
rocmforge.inspect.synthetic inside a real gcc-built .so.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from rocmforge.inspect import inspect_paths, walk_fatbin
from rocmforge.inspect.byte_source import BytesSource
from rocmforge.inspect.elf import read_host_layout
from rocmforge.inspect.synthetic import ccob, code_object_header, pad_to, plain_bundle

sys.path.insert(0, str(Path(__file__).parents[1] / "hip"))
import build_fixtures  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
MACH = {0x3F: "gfx90a", 0x4C: "gfx942", 0x41: "gfx1100"}
HOST = "host-x86_64-unknown-linux-gnu-"
CLANG = ("clang-22", "clang-offload-bundler-22", "gcc")


def names(mach: int) -> str | None:
    return MACH.get(mach)


def co(mach: int, size: int = 3000) -> bytes:
    return code_object_header(mach=mach) + bytes(size)


FOUR = plain_bundle([
    (HOST, b""),
    ("hipv4-amdgcn-amd-amdhsa--gfx90a", co(0x3F)),
    ("hipv4-amdgcn-amd-amdhsa--gfx942", co(0x4C)),
    ("hipv4-amdgcn-amd-amdhsa--gfx1100", co(0x41)),
])  # fmt: skip
NEXT = plain_bundle([(HOST, b""), ("hipv4-amdgcn-amd-amdhsa--gfx1100", co(0x41))])


def invoke_inspect(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(REPO), HIP_PLATFORM="amd")
    return subprocess.run([sys.executable, "-m", "invoke", "inspect", *args], cwd=REPO,
                          capture_output=True, text=True, env=env)  # fmt: skip


def so_with_section(folder: Path, section: bytes, name: str = "libsynth.so") -> Path:
    src = folder / "host.c"
    src.write_text("int host_function(void) { return 42; }\n")
    host = folder / "libhost.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(host), str(src)], check=True)
    blob = folder / f"{name}.bin"
    blob.write_bytes(section)
    lib = folder / name
    subprocess.run(["objcopy", "--add-section", f".hip_fatbin={blob}",
                    "--set-section-alignment", ".hip_fatbin=4096", str(host), str(lib)],
                   check=True)  # fmt: skip
    return lib


def clang_so(folder: Path, name: str, *extra: str, targets: tuple[str, ...] = ("gfx90a", "gfx942"),
             env: dict[str, str] | None = None) -> Path:  # fmt: skip
    """A HIP library compiled by clang-22 from two translation units."""
    objects = []
    for index, src in enumerate(("bare_add.hip", "bare_mul.hip")):
        obj = folder / f"{name}-{index}.o"
        build_fixtures._clang22(src, targets, obj, *extra, env=env)
        objects.append(obj)
    lib = folder / f"lib{name}.so"
    build_fixtures._link(lib, objects)
    return lib


def fatbin_offset(lib: Path) -> int:
    with open(lib, "rb") as handle:
        fatbin = read_host_layout(handle).hip_fatbin
    assert fatbin is not None
    return fatbin.offset


def device_targets(bundle) -> list[str]:
    return [e.entry_id.target for e in bundle.device_entries]


# --- item 3: one bad entry no longer drops its bundle -----------------------------------------


def test_a_bad_id_keeps_every_other_entry_and_the_walk_steps_on() -> None:
    data = bytearray(pad_to(FOUR) + NEXT)
    at = data.index(b"gfx942")
    data[at] = 0xE7  # one byte of entry 2's ID flipped to non-ASCII
    scan = walk_fatbin(BytesSource(bytes(data)), len(data), names)
    first, second = scan.bundles
    assert device_targets(first) == ["gfx90a", "gfx1100"]
    assert first.problem.startswith("entry 2 of the bundle at 0x0 has a non-ASCII ID")
    assert first.problem.endswith(": 3 of 4 entries read intact")
    assert first.size_known and first.declared_entries == 4
    assert device_targets(second) == ["gfx1100"]
    (damage,) = scan.damage
    assert (damage.offset, damage.entries_kept, damage.resumed_at) == (0, 3, len(pad_to(FOUR)))


def test_a_lying_id_length_keeps_the_entries_before_it() -> None:
    data = bytearray(pad_to(FOUR) + NEXT)
    third = 32 + (24 + len(HOST)) + (24 + len("hipv4-amdgcn-amd-amdhsa--gfx90a"))
    struct.pack_into("<Q", data, third + 16, 1 << 20)  # entry 2's ID length
    scan = walk_fatbin(BytesSource(bytes(data)), len(data), names)
    first, second = scan.bundles
    assert device_targets(first) == ["gfx90a"]
    assert [e.check.status for e in first.entries] == ["host", "ok"]
    assert "entry 2 of the bundle at 0x0 has an ID length of 1048576" in first.problem
    assert not first.size_known  # the table broke off: the next bundle is found by its magic
    assert device_targets(second) == ["gfx1100"]
    assert scan.damage[0].resumed_at == len(pad_to(FOUR))


def test_a_damaged_table_inside_a_compressed_bundle_keeps_its_entries() -> None:
    inner = bytearray(FOUR)
    inner[inner.index(b"gfx1100")] = 0xE7
    data = pad_to(ccob(bytes(inner))) + ccob(NEXT, version=2, method="zlib")
    scan = walk_fatbin(BytesSource(data), len(data), names)
    first, second = scan.bundles
    assert device_targets(first) == ["gfx90a", "gfx942"]
    assert first.problem.startswith("CCOB v3 at 0x0: entry 3 of the bundle at 0x0 has a non-ASCII")
    assert device_targets(second) == ["gfx1100"]


@pytest.mark.needs_tool(*CLANG)
def test_flipped_id_in_a_real_library_reports_what_was_read(tmp_path: Path) -> None:
    lib = clang_so(tmp_path, "real", targets=("gfx90a", "gfx942", "gfx1100"))
    data = bytearray(lib.read_bytes())
    start = fatbin_offset(lib)
    at = data.index(b"amdgcn-amd-amdhsa--gfx942", start, start + 4096)  # first bundle's table
    data[at + 20] ^= 0x80
    bad = tmp_path / "libbad.so"
    bad.write_bytes(bytes(data))
    (lib_report,) = inspect_paths([bad]).libraries
    assert lib_report.status == "partial"
    first = lib_report.bundles[0]
    assert sorted(device_targets(first)) == ["gfx1100", "gfx90a"]
    assert first.declared_entries == 4 and first.problem.endswith(": 3 of 4 entries read intact")
    assert lib_report.targets == ("gfx1100", "gfx90a", "gfx942")  # bundle 2 is whole
    done = invoke_inspect(str(bad), "--json")
    assert done.returncode == 1
    (doc_lib,) = json.loads(done.stdout)["libraries"]
    assert doc_lib["damage"][0]["entries_kept"] == 3
    assert doc_lib["bundles"][0]["problem"] == first.problem


# --- item 4: the section table is lost ---------------------------------------------------------


@pytest.mark.needs_tool(*CLANG)
def test_a_library_cut_inside_hip_fatbin_is_read_from_its_raw_bytes(tmp_path: Path) -> None:
    lib = clang_so(tmp_path, "cut", targets=("gfx90a", "gfx942", "gfx1100"))
    (whole,) = inspect_paths([lib]).libraries
    second = whole.bundles[1]
    start = fatbin_offset(lib)
    # Cut in the middle of the second bundle's last code object: its table survives.
    last = max(second.entries, key=lambda e: e.offset)
    cut_at = start + second.offset + last.offset + last.size // 2
    cut = tmp_path / "libcut.so"
    cut.write_bytes(lib.read_bytes()[:cut_at])
    (lib_report,) = inspect_paths([cut]).libraries
    assert (lib_report.status, lib_report.raw_scan) == ("partial", True)
    assert [b.offset for b in lib_report.bundles] == [start + b.offset for b in whole.bundles]
    assert lib_report.bundles[0].rows == whole.bundles[0].rows  # the first bundle is whole
    damaged = [e for e in lib_report.bundles[1].entries if e.check.status == "damaged"]
    assert [e.entry_id.text for e in damaged] == [last.entry_id.text]
    assert lib_report.error.startswith("malformed ELF headers")
    assert "the file's raw bytes were scanned for bundle headers: 2 bundle(s) found" in (
        lib_report.error
    )
    assert "This result comes from a damaged file" in lib_report.error
    # The cut code object proves nothing, and the file as a whole fails.
    done = invoke_inspect(str(cut), "--expect", "gfx90a")
    assert done.returncode == 1
    assert "This result comes from a damaged file" in done.stderr


@pytest.mark.needs_tool("gcc", "objcopy")
def test_a_section_that_runs_past_the_end_of_the_file_reads_what_is_there(tmp_path: Path) -> None:
    lib = so_with_section(tmp_path, pad_to(FOUR) + pad_to(NEXT))
    data = bytearray(lib.read_bytes())
    with open(lib, "rb") as handle:
        from elftools.elf.elffile import ELFFile

        elf = ELFFile(handle)
        index = next(i for i, s in enumerate(elf.iter_sections()) if s.name == ".hip_fatbin")
        header_at = elf["e_shoff"] + index * elf["e_shentsize"]
    struct.pack_into("<Q", data, header_at + 32, len(data))  # sh_size: past the end of file
    lied = tmp_path / "liblied.so"
    lied.write_bytes(bytes(data))
    (report,) = inspect_paths([lied], mach_name=names).libraries
    assert report.status == "partial"
    assert [device_targets(b) for b in report.bundles] == [["gfx90a", "gfx942", "gfx1100"],
                                                           ["gfx1100"]]  # fmt: skip
    assert "runs past the end of the file" in report.error


# --- item 5: --deep ------------------------------------------------------------------------------


def big_plain(*targets: tuple[str, int], size: int = 200_000) -> bytes:
    body = os.urandom(size)  # incompressible: the second code object is far past the prefix
    return plain_bundle([(HOST, b"")] + [
        (f"hipv4-amdgcn-amd-amdhsa--{name}", code_object_header(mach=mach) + body)
        for name, mach in targets
    ])  # fmt: skip


def test_deep_finds_damage_past_the_decompressed_prefix() -> None:
    plain = big_plain(("gfx90a", 0x3F), ("gfx942", 0x4C))
    damaged = bytearray(ccob(plain, level=1))
    damaged[len(damaged) - 5000] ^= 0xFF  # inside the second code object's compressed bytes
    data = bytes(damaged)
    fast = walk_fatbin(BytesSource(data), len(data), names)
    assert fast.damage == ()
    assert [e.check.status for e in fast.bundles[0].device_entries] == ["ok", "not-checked"]
    deep = walk_fatbin(BytesSource(data), len(data), names, deep=True)
    (bundle,) = deep.bundles
    assert not bundle.verified
    assert deep.damage[0].entries_kept == 3
    assert "CCOB v3 at 0x0" in bundle.problem
    assert "does not decompress" in bundle.problem or "MD5" in bundle.problem


@pytest.mark.parametrize(
    ("version", "method"), [(1, "zlib"), (2, "zlib"), (2, "zstd"), (3, "zstd")]
)
def test_deep_checks_every_code_object_and_the_hash(version: int, method: str) -> None:
    plain = big_plain(("gfx90a", 0x3F), ("gfx942", 0x4C), ("gfx1100", 0x41), size=100_000)
    data = pad_to(ccob(plain, version=version, method=method)) + ccob(NEXT)
    deep = walk_fatbin(BytesSource(data), len(data), names, deep=True)
    assert deep.damage == ()
    assert all(b.verified for b in deep.bundles)
    assert {e.check.status for b in deep.bundles for e in b.device_entries} == {"ok"}
    wrong_hash = ccob(plain, version=version, method=method, digest=b"\x11" * 8)
    (bundle,) = walk_fatbin(BytesSource(wrong_hash), len(wrong_hash), names, deep=True).bundles
    assert bundle.problem.endswith("the header records 1111111111111111 (the payload is damaged)")


def test_deep_sees_a_wrong_code_object_past_the_prefix() -> None:
    body = os.urandom(200_000)
    plain = plain_bundle([
        (HOST, b""),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a", code_object_header(mach=0x3F) + body),
        ("hipv4-amdgcn-amd-amdhsa--gfx942", code_object_header(mach=0x41) + body),  # gfx1100!
    ])  # fmt: skip
    data = ccob(plain)
    (fast,) = walk_fatbin(BytesSource(data), len(data), names).bundles
    (deep,) = walk_fatbin(BytesSource(data), len(data), names, deep=True).bundles
    assert [e.check.status for e in fast.device_entries] == ["ok", "not-checked"]
    assert [e.check.detail for e in deep.device_entries] == [
        "", "ID says gfx942, e_flags mach 0x41 is gfx1100"]  # fmt: skip
    assert deep.verified  # the payload is what the header says; the table lies about it


def test_deep_sees_a_payload_longer_than_declared() -> None:
    plain = big_plain(("gfx90a", 0x3F), size=10_000)
    data = ccob(plain + bytes(5000), uncompressed=len(plain), method="zlib", version=2)
    (bundle,) = walk_fatbin(BytesSource(data), len(data), names, deep=True).bundles
    assert "holds more than the" in bundle.problem


@pytest.mark.needs_tool(*CLANG)
def test_deep_on_real_compressed_bundles_verifies_clangs_hash(tmp_path: Path) -> None:
    lib = clang_so(tmp_path, "ccob", "--offload-compress",
                   targets=("gfx90a", "gfx942", "gfx1100", "gfx1201"))  # fmt: skip
    (report,) = inspect_paths([lib], deep=True).libraries
    assert report.status == "ok", report.error
    assert report.containers == ("ccob-v3/zstd",)
    assert report.verified_bundles == len(report.bundles) == 2
    assert {e.check.status for b in report.bundles for e in b.device_entries} == {"ok"}
    done = invoke_inspect(str(lib), "--deep", "--expect", "gfx1201")
    assert done.returncode == 0, done.stderr
    assert "--deep: 2 of 2 compressed bundle(s) decompressed whole" in done.stdout


@pytest.mark.needs_tool(*CLANG)
def test_deep_sees_a_code_object_cut_short_in_a_plain_bundle(tmp_path: Path) -> None:
    lib = clang_so(tmp_path, "short", targets=("gfx90a", "gfx942"))
    data = bytearray(lib.read_bytes())
    start = fatbin_offset(lib)
    (whole,) = inspect_paths([lib]).libraries
    entry = min(whole.bundles[0].device_entries, key=lambda e: e.offset)  # not the last one
    # Shrink the entry's size in the table: the code object's section headers now lie past it,
    # and the bundle still ends where its last code object ends (no junk for the walk to see).
    table = start + whole.bundles[0].offset
    id_at = data.index(entry.entry_id.text.encode(), table, table + 4096)
    struct.pack_into("<Q", data, id_at - 16, entry.size - 512)
    short = tmp_path / "libshort.so"
    short.write_bytes(bytes(data))
    (fast,) = inspect_paths([short]).libraries
    assert fast.status == "ok"
    (deep,) = inspect_paths([short], deep=True).libraries
    check = next(e.check for e in deep.bundles[0].device_entries if e.offset == entry.offset)
    assert check.status == "damaged"
    assert f"past the entry's {entry.size - 512} bytes" in check.detail
    assert deep.status == "partial"
    assert f"({entry.entry_id.text}) of the bundle at 0x0: its ELF section headers end" in (
        deep.bundles[0].problem
    )
    target = entry.entry_id.target
    assert invoke_inspect(str(short), "--expect", target).returncode == 0
    done = invoke_inspect(str(short), "--deep", "--expect", target)
    assert done.returncode == 1
    assert "1 of 1 libraries could not be read completely" in done.stderr


@pytest.mark.needs_tool("gcc", "objcopy")
def test_cli_deep_exit_codes_on_damage_past_the_prefix(tmp_path: Path) -> None:
    plain = big_plain(("gfx90a", 0x3F), ("gfx942", 0x4C))
    damaged = bytearray(ccob(plain, level=1))
    damaged[len(damaged) - 5000] ^= 0xFF
    lib = so_with_section(tmp_path, pad_to(bytes(damaged)))
    fast = invoke_inspect(str(lib), "--expect", "gfx90a")
    assert fast.returncode == 0, fast.stderr  # the default reads the table and a prefix only
    deep = invoke_inspect(str(lib), "--expect", "gfx90a", "--deep")
    assert deep.returncode == 1
    assert "could not be read completely" in deep.stderr and "CCOB v3 at 0x0" in deep.stderr


# --- issue 21 item 3: plain bundles leave most payload pages untouched ------------------------


def test_plain_walk_reads_the_first_code_objects_of_each_id_and_deep_reads_all() -> None:
    from rocmforge.inspect.bundle_records import Limits

    lying = plain_bundle([(HOST, b""), ("hipv4-amdgcn-amd-amdhsa--gfx90a", co(0x4C))])  # gfx942
    data = pad_to(FOUR) * 20 + pad_to(lying) + pad_to(FOUR)
    fast = walk_fatbin(BytesSource(data), len(data), names, Limits(checks_per_id=16))
    statuses = [[e.check.status for e in b.device_entries] for b in fast.bundles]
    assert statuses[:16] == [["ok", "ok", "ok"]] * 16
    assert statuses[16:] == [["not-checked"] * 3] * 4 + [["not-checked"]] + [["not-checked"] * 3]
    assert fast.bundles[-1].device_entries[0].check.detail.startswith(
        "not read: the first code objects of each entry ID are (--deep reads every one)"
    )
    deep = walk_fatbin(BytesSource(data), len(data), names, deep=True)
    assert [e.check.status for e in deep.bundles[20].device_entries] == ["mismatch"]
    assert {e.check.status for b in deep.bundles if b is not deep.bundles[20]
            for e in b.device_entries} == {"ok"}  # fmt: skip


@pytest.mark.parametrize("cut_at", [6_000, 10_000], ids=["inside-first-read", "after-it"])
def test_a_compressed_stream_cut_after_its_table_keeps_the_table_and_is_reported(
    cut_at: int,
) -> None:
    # The zlib stream ends 6 or 10 KiB into a bundle that declares 40 KiB (the first read asks
    # for 8 KiB): the table and the first code object's header were decompressed, the rest never
    # arrives. The entries are kept, the cut is damage (no clean pass), and the walk steps on
    # by the header's total size.
    plain = plain_bundle([
        (HOST, b""),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a", code_object_header(mach=0x3F) + os.urandom(16000)),
        ("hipv4-amdgcn-amd-amdhsa--gfx942", code_object_header(mach=0x4C) + os.urandom(16000)),
    ])  # fmt: skip
    import zlib

    cut = zlib.compress(plain, 6)[:cut_at]
    data = pad_to(ccob(plain, method="zlib", payload=cut)) + ccob(NEXT, version=2, method="zlib")
    scan = walk_fatbin(BytesSource(data), len(data), names)
    first, second = scan.bundles
    assert [(e.entry_id.processor, e.check.status) for e in first.device_entries] == [
        ("gfx90a", "ok"), ("gfx942", "not-checked")]  # fmt: skip
    assert first.problem.startswith("CCOB v3 at 0x0: the zlib payload ends after ")
    assert f"the header declares {len(plain)}" in first.problem
    assert [(d.offset, d.entries_kept) for d in scan.damage] == [(0, 3)]
    assert scan.damage[0].resumed_at == len(pad_to(ccob(plain, method="zlib", payload=cut)))
    assert device_targets(second) == ["gfx1100"]
