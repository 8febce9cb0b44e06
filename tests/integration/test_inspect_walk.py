"""Walking a section: resynchronising after damage, and the mapped and streamed paths agreeing.

Sections are built with rocmforge.inspect.synthetic and written to real files, then read through
`inspect_paths` (mmap of the file) and through a `StreamSource` (the path deflated wheel members
take), so both readers are held to the same answers.
"""

from __future__ import annotations

import io
import resource
import struct
import subprocess
import zipfile
from pathlib import Path

import pytest

from rocmforge.inspect import inspect_paths, to_json
from rocmforge.inspect.bundle_records import Limits
from rocmforge.inspect.bundles import BUNDLE_ALIGN, walk_fatbin
from rocmforge.inspect.byte_source import BytesSource, StreamSource
from rocmforge.inspect.synthetic import ccob, code_object_header, pad_to, plain_bundle

MACH = {0x3F: "gfx90a", 0x30: "gfx908", 0x41: "gfx1100", 0x4C: "gfx942"}
HOST = "host-x86_64-unknown-linux-gnu-"


def names(mach: int) -> str | None:
    return MACH.get(mach)


def bundle(*targets: tuple[str, int]) -> bytes:
    return plain_bundle(
        [(HOST, b"")]
        + [
            (f"hipv4-amdgcn-amd-amdhsa--{name}", code_object_header(mach=mach) + bytes(3000))
            for name, mach in targets
        ]
    )


GFX90A = bundle(("gfx90a", 0x3F))
GFX942 = bundle(("gfx942", 0x4C))
GFX1100 = bundle(("gfx1100", 0x41))


def damaged(data: bytes) -> bytes:
    """The same bundle with its entry count zeroed: unreadable, size unknown."""
    out = bytearray(data)
    struct.pack_into("<Q", out, 24, 0)
    return bytes(out)


def targets_of(scan) -> list[list[str]]:
    return [[e.entry_id.target for e in b.device_entries] for b in scan.bundles]


def test_walk_resumes_at_the_next_aligned_magic_and_reports_the_damage() -> None:
    first = pad_to(GFX90A)
    broken = pad_to(damaged(GFX942))
    data = first + broken + pad_to(GFX1100) + pad_to(ccob(GFX942))
    scan = walk_fatbin(BytesSource(data), len(data), names)
    assert targets_of(scan) == [["gfx90a"], ["gfx1100"], ["gfx942"]]
    (damage,) = scan.damage
    assert damage.offset == len(first)
    assert damage.resumed_at == len(first) + len(broken)
    assert "declares 0 entries" in damage.problem
    assert scan.problem_offset == len(first)


def test_magic_off_the_alignment_is_not_a_resync_point() -> None:
    # A magic at a non-4096 offset (inside the damaged bundle's data) must be stepped over.
    broken = bytearray(pad_to(damaged(GFX942)))
    broken[BUNDLE_ALIGN + 100 : BUNDLE_ALIGN + 100 + 4] = b"CCOB"
    data = bytes(broken) + pad_to(GFX1100)
    scan = walk_fatbin(BytesSource(data), len(data), names)
    assert targets_of(scan) == [["gfx1100"]]
    assert scan.damage[0].resumed_at == len(broken)


def test_damage_at_the_end_has_no_resume_point() -> None:
    data = pad_to(GFX90A) + damaged(GFX942)
    scan = walk_fatbin(BytesSource(data), len(data), names)
    assert targets_of(scan) == [["gfx90a"]]
    assert [(d.offset, d.resumed_at) for d in scan.damage] == [(len(pad_to(GFX90A)), None)]


def test_junk_in_the_padding_is_still_reported() -> None:
    compressed = ccob(GFX90A)  # not a multiple of 4096: zero padding follows it
    data = bytearray(pad_to(compressed) + GFX1100)
    data[len(compressed) + 10] = 0x55  # a non-zero byte where only zero padding belongs
    scan = walk_fatbin(BytesSource(bytes(data)), len(data), names)
    assert targets_of(scan) == [["gfx90a"], ["gfx1100"]]
    assert scan.damage[0].offset == len(compressed) + 10
    assert "start neither" in scan.damage[0].problem


def _so_with_section(tmp_path: Path, section: bytes, name: str = "libsynth.so") -> Path:
    src = tmp_path / "host.c"
    src.write_text("int host_function(void) { return 42; }\n")
    host = tmp_path / "libhost.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(host), str(src)], check=True)
    blob = tmp_path / "fatbin.bin"
    blob.write_bytes(section)
    lib = tmp_path / name
    subprocess.run(
        ["objcopy", "--add-section", f".hip_fatbin={blob}",
         "--set-section-alignment", ".hip_fatbin=4096", str(host), str(lib)],
        check=True,
    )  # fmt: skip
    return lib


@pytest.mark.needs_tool("gcc", "objcopy")
def test_partial_library_names_the_damage_and_keeps_later_targets(tmp_path: Path) -> None:
    section = pad_to(GFX90A) + pad_to(damaged(GFX942)) + pad_to(GFX1100)
    lib_path = _so_with_section(tmp_path, section)
    (lib,) = inspect_paths([lib_path], mach_name=names).libraries
    assert lib.status == "partial"
    assert lib.targets == ("gfx1100", "gfx90a")
    assert lib.error.startswith(f"bundle 2 at .hip_fatbin offset {len(pad_to(GFX90A)):#x}: ")
    assert "the walk resumed at the next bundle magic, offset 0x" in lib.error
    doc = to_json(inspect_paths([lib_path], mach_name=names))
    (damage,) = doc["libraries"][0]["damage"]
    assert damage["offset"] == len(pad_to(GFX90A))
    assert damage["resumed_at"] == len(pad_to(GFX90A)) * 2


@pytest.mark.needs_tool("gcc", "objcopy")
def test_mapped_stored_deflated_and_streamed_reads_agree(tmp_path: Path) -> None:
    section = b"".join(
        pad_to(part)
        for part in (
            GFX90A,
            ccob(GFX942, version=3),
            damaged(GFX942),
            ccob(GFX1100, version=2, method="zlib"),
            ccob(GFX90A, version=1),
            GFX1100,
        )
    )
    lib_path = _so_with_section(tmp_path, section)
    (mapped,) = inspect_paths([lib_path], mach_name=names).libraries
    wheel = tmp_path / "t-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.write(lib_path, "t/stored.so", compress_type=zipfile.ZIP_STORED)
        archive.write(lib_path, "t/deflated.so", compress_type=zipfile.ZIP_DEFLATED)
    stored, deflated = inspect_paths([wheel], mach_name=names).libraries
    streamed = walk_fatbin(
        StreamSource(io.BytesIO(section), 0, len(section)), len(section), names
    )  # a stream, not a buffer: the path deflated members take
    assert mapped.status == "partial"
    expected = [(b.offset, b.container, b.rows) for b in mapped.bundles]
    assert len(expected) == 5
    for other in (stored.bundles, deflated.bundles, streamed.bundles):
        assert [(b.offset, b.container, b.rows) for b in other] == expected
    assert stored.damage == deflated.damage == mapped.damage == streamed.damage


@pytest.mark.needs_tool("gcc", "objcopy")
def test_mapped_pages_are_handed_back_during_the_walk(tmp_path: Path) -> None:
    # 96 MiB of bundles: without madvise(DONTNEED) the touched pages (and their fault-around
    # neighbours) would stay in this process's RSS. Measured in a child for a clean peak.
    big = plain_bundle(
        [(HOST, b"")]
        + [
            (f"hipv4-amdgcn-amd-amdhsa--{n}", code_object_header(mach=m) + bytes(60_000))
            for n, m in (("gfx90a", 0x3F), ("gfx942", 0x4C), ("gfx1100", 0x41))
        ]
    )
    section = pad_to(big) * ((96 << 20) // len(pad_to(big)))
    lib_path = _so_with_section(tmp_path, section)
    child = (
        "import resource, sys\n"
        "from pathlib import Path\n"
        "from rocmforge.inspect import inspect_paths\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "(lib,) = inspect_paths([Path(sys.argv[1])]).libraries\n"
        "assert lib.status == 'ok', lib.error\n"
        "print(len(lib.bundles), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n"
    )
    done = subprocess.run(
        ["python3", "-c", child, str(lib_path)], capture_output=True, text=True, check=True
    )
    count, grown_kib = map(int, done.stdout.split())
    assert count == len(section) // len(pad_to(big))
    assert grown_kib < 64 << 10, f"RSS grew by {grown_kib} KiB over a 96 MiB section"
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 0


def _layout_of(scan) -> list[tuple]:
    """Everything a walk decides about each bundle except the code-object checks."""
    return [(b.offset, b.stored_size, b.problem, b.size_known,
             [(row[0].text, row[1], row[2]) for row in b.rows]) for b in scan.bundles]  # fmt: skip


def test_a_table_of_a_shape_seen_before_is_read_as_carefully_as_the_first() -> None:
    # After 16 bundles per ID a table of a known shape is read in one unpack: it must still
    # see a different ID of the same length, a device entry too short to be a code object,
    # and an entry running past the section's end, exactly as the entry-by-entry loop does.
    usual = pad_to(bundle(("gfx90a", 0x3F), ("gfx1100", 0x41)))
    other_id = pad_to(bundle(("gfx90a", 0x3F), ("gfx1101", 0x41)))  # same ID lengths
    short = pad_to(plain_bundle([(HOST, b""), ("hipv4-amdgcn-amd-amdhsa--gfx90a",
                                               code_object_header(mach=0x3F) + bytes(3000)),
                                 ("hipv4-amdgcn-amd-amdhsa--gfx1100", bytes(40))]))  # fmt: skip
    past = bytearray(usual)
    struct.pack_into("<Q", past, 32 + 24 + 30 + 24 + 31 + 8, len(usual))  # gfx1100's size
    data = usual * 20 + other_id + usual + short + usual * 3 + bytes(past)
    scan = walk_fatbin(BytesSource(data), len(data), names)
    # The same section with sampling never finished: every table goes through the loop.
    loop = walk_fatbin(BytesSource(data), len(data), names, Limits(checks_per_id=10**9))
    assert _layout_of(scan) == _layout_of(loop)
    assert targets_of(scan)[20] == ["gfx90a", "gfx1101"]
    assert scan.bundles[22].rows[2][3] == loop.bundles[22].rows[2][3]  # too short: one verdict
    assert scan.bundles[22].rows[2][3].status != "not-checked"
    assert "past the end of its data" in scan.bundles[-1].problem
    # Sampling still holds: the 17th and later code objects of an ID are not read.
    assert [row[3].status for row in scan.bundles[19].rows] == ["host", "not-checked",
                                                                 "not-checked"]  # fmt: skip
    assert [row[3].status for row in loop.bundles[19].rows] == ["host", "ok", "ok"]


class _ReadsOnly:
    """A ByteSource that only answers `read_at`, as a stream does: the walk cannot slice it,
    so every compressed bundle goes through the general (streaming) path."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def read_at(self, offset: int, size: int) -> bytes:
        return self._data[offset : offset + size]


def test_mapped_zstd_bundles_read_in_one_pass_agree_with_the_streaming_path() -> None:
    two = bundle(("gfx90a", 0x3F), ("gfx1100", 0x41))
    tiny = plain_bundle([(HOST, b""), ("hipv4-amdgcn-amd-amdhsa--gfx942",
                                       code_object_header(mach=0x4C) + bytes(36))])  # fmt: skip
    # The second code object's header lies past the first 8 KiB but inside the check budget:
    # the one-pass read must hand this bundle to the path that decompresses further.
    far = plain_bundle([(HOST, b""),
                        ("hipv4-amdgcn-amd-amdhsa--gfx90a", code_object_header(mach=0x3F)
                         + bytes(10000)),
                        ("hipv4-amdgcn-amd-amdhsa--gfx942", code_object_header(mach=0x4C)
                         + bytes(100))])  # fmt: skip
    lying = ccob(two, uncompressed=len(two) + 1)  # the frame's own size disagrees
    data = b"".join(pad_to(part) for part in (
        ccob(two), ccob(tiny), ccob(far), ccob(two, version=2), lying, ccob(two, method="zlib"),
        ccob(two)))  # fmt: skip
    mapped = walk_fatbin(BytesSource(data), len(data), names)
    streamed = walk_fatbin(_ReadsOnly(data), len(data), names)
    assert _layout_of(mapped) == _layout_of(streamed)
    assert [[row[3] for row in b.rows] for b in mapped.bundles] == [
        [row[3] for row in b.rows] for b in streamed.bundles]  # fmt: skip
    assert mapped.damage == streamed.damage
    assert [row[3].status for row in mapped.bundles[2].rows] == ["host", "ok", "ok"]
    assert [b.container for b in mapped.bundles] == ["ccob-v3", "ccob-v3", "ccob-v3", "ccob-v2",
                                                     "ccob-v3", "ccob-v3"]  # fmt: skip
    assert "its zstd frame holds" in mapped.damage[0].problem
