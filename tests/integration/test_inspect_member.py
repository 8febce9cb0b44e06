"""Deflated wheel members are inflated once, by the fastest inflater (issue 21 item 1).

The library in each wheel is compiled by clang-22 from tests/hip/*.hip (plain and compressed
bundles) and linked with gcc, plus raw code objects embedded by `.incbin`; the wheel is written
with zipfile. The one-pass result must equal the result for the same file on disk, the member
must be inflated exactly once, and a damaged member must fail.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest

from rocmforge.inspect import inspect_paths
from rocmforge.inspect.member import INFLATERS, inflater

sys.path.insert(0, str(Path(__file__).parents[1] / "hip"))
import build_fixtures  # noqa: E402

pytestmark = pytest.mark.needs_tool("clang-22", "clang-offload-bundler-22", "ld.lld-22", "gcc")

KERNEL = "__attribute__((amdgpu_kernel)) void k(float* x) { x[0] = 1.0f; }\n"


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two HIP translation units (one compressed) and a raw gfx942 code object in .rodata."""
    out = tmp_path_factory.mktemp("member")
    plain, packed = out / "plain.o", out / "packed.o"
    build_fixtures._clang22("bare_add.hip", ("gfx90a", "gfx1100"), plain)
    build_fixtures._clang22("bare_mul.hip", ("gfx90a", "gfx1100"), packed, "--offload-compress")
    kernel = out / "k.c"
    kernel.write_text(KERNEL)
    hsaco = out / "k.hsaco"
    subprocess.run(["clang-22", "--target=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-nogpulib",
                    str(kernel), "-o", str(hsaco)], check=True)  # fmt: skip
    embed = out / "embed.c"
    embed.write_text(
        f'__asm__(".section .rodata\\n.balign 16\\n.incbin \\"{hsaco}\\"\\n.text\\n");\n'
    )
    embed_o = out / "embed.o"
    subprocess.run(["gcc", "-fPIC", "-c", str(embed), "-o", str(embed_o)], check=True)
    lib = out / "libmixed.so"
    build_fixtures._link(lib, [plain, packed, embed_o])
    return lib


def wheel_of(lib: Path, folder: Path, level: int = 6) -> Path:
    wheel = folder / "mixed-0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as archive:
        archive.writestr("mixed/__init__.py", "")
        archive.write(lib, "mixed/lib/libmixed.so")
    return wheel


def summary(lib) -> tuple:
    return (lib.status, lib.targets, [(b.offset, b.container, b.rows) for b in lib.bundles],
            [(r.section, r.offset, r.size) for r in lib.raw_code_objects])  # fmt: skip


def test_one_pass_agrees_with_the_file_on_disk_and_opens_nothing_twice(
    library: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (on_disk,) = inspect_paths([library]).libraries
    assert on_disk.containers == ("ccob-v3/zstd", "plain", "raw")
    wheel = wheel_of(library, tmp_path)
    # The two-pass path opens the member through zipfile; the one-pass path never does.
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the member was opened for a second pass")

    monkeypatch.setattr(zipfile.ZipFile, "open", refuse)
    (member,) = inspect_paths([wheel]).libraries
    assert member.path.endswith("!mixed/lib/libmixed.so")
    assert summary(member) == summary(on_disk)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("isal.isal_zlib", marks=pytest.mark.needs_import("isal")),
        pytest.param("zlib_ng.zlib_ng", marks=pytest.mark.needs_import("zlib_ng")),
        "zlib",
    ],
)
def test_every_inflater_gives_the_same_answer(library: Path, tmp_path: Path, name: str) -> None:
    assert name in INFLATERS
    assert inflater(name).__name__ == name
    (on_disk,) = inspect_paths([library]).libraries
    (member,) = inspect_paths([wheel_of(library, tmp_path)], inflater=name).libraries
    assert summary(member) == summary(on_disk)


def test_a_missing_inflater_falls_back_to_zlib() -> None:
    assert inflater("no_such_inflater_module") is zlib


def test_a_damaged_member_fails(library: Path, tmp_path: Path) -> None:
    wheel = wheel_of(library, tmp_path, level=0)  # stored blocks: a flipped byte stays local
    data = bytearray(wheel.read_bytes())
    at = data.index(b"__CLANG_OFFLOAD_BUNDLE__") + 4096 + 100  # inside a code object
    data[at] ^= 0xFF
    wheel.write_bytes(bytes(data))
    (member,) = inspect_paths([wheel]).libraries
    assert member.status == "error"
    assert member.error.startswith("cannot read the member (Bad CRC-32")


def test_large_members_are_read_in_parallel_threads_in_wheel_order(
    library: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from rocmforge.inspect import reader

    wheel = tmp_path / "many-0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for index in range(5):
            archive.write(library, f"many/lib/lib{index}.so",
                          compress_type=zipfile.ZIP_STORED if index == 2 else None)  # fmt: skip
        archive.writestr("many/__init__.py", "")
    sequential = inspect_paths([wheel]).libraries
    seen: list[str] = []
    original = reader._inspect_member

    def spy(*args: object, **kwargs: object):
        seen.append(threading.current_thread().name)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(reader, "_PARALLEL_BYTES", 0)
    monkeypatch.setattr(reader.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(reader, "_inspect_member", spy)
    parallel = inspect_paths([wheel]).libraries
    assert [lib.path.rsplit("!", 1)[1] for lib in parallel] == [
        f"many/lib/lib{index}.so" for index in range(5)]  # fmt: skip
    assert [summary(lib) for lib in parallel] == [summary(lib) for lib in sequential]
    assert len(seen) == 5 and all(name != "MainThread" for name in seen)


def test_forward_reader_reads_behind_its_window_by_inflating_again() -> None:
    import os

    from rocmforge.inspect.byte_source import BytesSource
    from rocmforge.inspect.member import BLOCK, ForwardMember, Rewind

    data = os.urandom(BLOCK * 3) + bytes(BLOCK * 9)  # 12 blocks, the last 9 compress well
    packer = zlib.compressobj(6, zlib.DEFLATED, -15)
    packed = packer.compress(data) + packer.flush()
    member = ForwardMember(BytesSource(packed), len(packed), len(data), module=zlib, window=2)
    assert member.read_at(10 * BLOCK + 5, 100) == data[10 * BLOCK + 5 : 10 * BLOCK + 105]
    assert member.read_at(BLOCK + 7, 2 * BLOCK) == data[BLOCK + 7 : 3 * BLOCK + 7]  # restart 1
    assert member.read_at(11 * BLOCK, 10) == data[11 * BLOCK : 11 * BLOCK + 10]
    member.finish(zlib.crc32(data))  # checksummed once, on the first pass
    assert member.read_at(2 * BLOCK, 4) == data[2 * BLOCK : 2 * BLOCK + 4]  # restart 2
    assert member.read_at(11 * BLOCK, 4) == data[11 * BLOCK : 11 * BLOCK + 4]
    with pytest.raises(Rewind):
        member.read_at(BLOCK, 4)  # a third one: the caller reads the member the two-pass way
    damaged = ForwardMember(BytesSource(packed), len(packed), len(data), module=zlib)
    with pytest.raises(zipfile.BadZipFile, match="Bad CRC-32"):
        damaged.finish(zlib.crc32(data) ^ 1)


def test_a_member_the_one_pass_cannot_read_is_read_in_two(
    library: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rocmforge.inspect import member
    from rocmforge.inspect.elf import ElfReadError

    (on_disk,) = inspect_paths([library]).libraries
    wheel = wheel_of(library, tmp_path)

    def layout_read_behind_the_window(stream: member.ForwardMember) -> None:
        # What pyelftools does with a Rewind raised under it: its own parse error.
        stream.gave_up = True
        raise ElfReadError("malformed ELF headers (ELFParseError: block 3 is behind the window)")

    monkeypatch.setattr(member, "read_host_layout", layout_read_behind_the_window)
    (read,) = inspect_paths([wheel]).libraries
    assert summary(read) == summary(on_disk)  # read the two-pass way, not reported as damaged
