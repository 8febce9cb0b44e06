"""The host file's section headers: the direct decoder agrees with pyelftools (issue 21).

`read_host_layout` decodes a well-formed file's headers itself (no pyelftools import) and hands
anything unusual to pyelftools. Both readers are run on real compiler output of each ELF class
and byte order the compilers here write, and must return the same headers.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rocmforge.inspect.elf import (
    ElfReadError,
    _direct_headers,
    _pyelftools_headers,
    read_host_layout,
)

SOURCE = "int host_function(void) { return 42; }\nconst char table[200] = \"host data\";\n"
# (id, compiler argv before `-c SRC -o OUT`, the direct decoder reads it, pyelftools' machine)
CASES = [
    ("x86_64-lsb64", ["gcc", "-fPIC"], True, "EM_X86_64"),
    ("i386-lsb32", ["gcc", "-m32"], True, "EM_386"),
    ("ppc64-msb64", ["clang-22", "--target=powerpc64-linux-gnu"], True, "EM_PPC64"),
    ("amdgpu-code-object", ["clang-22", "--target=amdgcn-amd-amdhsa", "-mcpu=gfx90a",
                            "-nogpulib"], True, "EM_AMDGPU"),
    # A machine the direct decoder does not name: pyelftools reads the file.
    ("ppc-msb32", ["clang-22", "--target=powerpc-linux-gnu"], False, "EM_PPC"),
]  # fmt: skip


def _object(tmp_path: Path, compiler: list[str]) -> Path:
    src = tmp_path / "host.c"
    src.write_text(SOURCE)
    out = tmp_path / "host.o"
    subprocess.run([*compiler, "-c", str(src), "-o", str(out)], check=True)
    return out


@pytest.mark.needs_tool("gcc", "clang-22")
@pytest.mark.parametrize(("compiler", "direct", "machine"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_direct_headers_match_pyelftools(
    tmp_path: Path, compiler: list[str], direct: bool, machine: str
) -> None:
    obj = _object(tmp_path, compiler)
    with open(obj, "rb") as handle:
        fast = _direct_headers(handle)
        slow = _pyelftools_headers(handle)
        layout = read_host_layout(handle)
    assert slow[0] == machine
    assert (fast is not None) == direct
    if fast is not None:
        assert fast == slow
    names = [name for name, *_ in slow[1]]
    assert ".text" in names and ".rodata" in names
    assert layout.machine == machine
    assert [span.name for span in layout.data_sections] == [".rodata"]


@pytest.mark.needs_tool("gcc", "objcopy")
def test_a_linked_library_with_a_fatbin_reads_the_same_both_ways(tmp_path: Path) -> None:
    src = tmp_path / "host.c"
    src.write_text(SOURCE)
    host = tmp_path / "libhost.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(host), str(src)], check=True)
    blob = tmp_path / "fatbin.bin"
    blob.write_bytes(b"\x01" * 10_000)
    lib = tmp_path / "libfat.so"
    subprocess.run(["objcopy", "--add-section", f".hip_fatbin={blob}",
                    "--set-section-alignment", ".hip_fatbin=4096", str(host), str(lib)],
                   check=True)  # fmt: skip
    with open(lib, "rb") as handle:
        fast = _direct_headers(handle)
        assert fast is not None
        assert fast == _pyelftools_headers(handle)
        layout = read_host_layout(handle)
    assert layout.hip_fatbin is not None
    assert layout.hip_fatbin.size == 10_000
    assert lib.read_bytes()[layout.hip_fatbin.offset : layout.hip_fatbin.offset + 4] == b"\x01" * 4


@pytest.mark.needs_tool("gcc")
def test_a_section_table_cut_off_goes_to_pyelftools_and_is_an_error(tmp_path: Path) -> None:
    obj = _object(tmp_path, ["gcc", "-fPIC"])
    data = obj.read_bytes()
    shoff = int.from_bytes(data[40:48], "little")
    cut = tmp_path / "cut.o"
    cut.write_bytes(data[: shoff + 100])  # the table starts, then the file ends
    with open(cut, "rb") as handle:
        assert _direct_headers(handle) is None
        with pytest.raises(ElfReadError, match="malformed ELF headers"):
            read_host_layout(handle)
