"""ELF reading for `invoke inspect`: the only module that looks at ELF structures.

Owns: (1) the host-file layout (section headers decoded with `struct` when the file is
well formed, through pyelftools otherwise), reduced to the few sections the inspector
cares about (`.hip_fatbin`, `-fgpu-rdc` bundle sections, `.llvm.offloading`, TheRock's
`.rocm_kpack_ref`) and the data sections that may hold raw code objects, with their file offsets
and sizes so callers can seek instead of loading a section; (2) decoding the first 64 bytes of an
AMDGPU code object (e_machine, EI_ABIVERSION, e_flags, where its section header table ends) with
`struct`, per AMDGPUUsage (reference rocm-arch-toolchain.md §1.2).
Must not: read section contents (`Section.data()` would pull a 1 GB `.hip_fatbin` into memory),
open files, or know about bundles.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import IO

from rocmforge.errors import RocmforgeError

ELF_MAGIC = b"\x7fELF"
EM_AMDGPU = 224
ELFOSABI_AMDGPU_HSA = 64
HIP_FATBIN = ".hip_fatbin"
RDC_BUNDLE_PREFIX = "__CLANG_OFFLOAD_BUNDLE__"
LLVM_OFFLOADING = ".llvm.offloading"
KPACK_REF = ".rocm_kpack_ref"
# Sections that are allocated data but never hold a code object handed to hipModuleLoadData
# (linker and runtime tables); everything else that is SHF_ALLOC, PROGBITS and not executable
# is searched for raw code objects.
_NOT_DATA = frozenset(
    {".eh_frame", ".eh_frame_hdr", ".gcc_except_table", ".init_array", ".fini_array",
     ".preinit_array", ".dynamic", ".got", ".got.plt", ".interp", ".tm_clone_table", ".ctors",
     ".dtors", ".jcr"}
)  # fmt: skip
_SHF_ALLOC = 0x2
_SHF_EXECINSTR = 0x4

# e_flags bit fields for code object V4+ (AMDGPUUsage, reference §1.2).
EF_AMDGPU_MACH = 0xFF
_XNACK_V4 = {0x000: "unsupported", 0x100: "any", 0x200: "off", 0x300: "on"}
_SRAMECC_V4 = {0x000: "unsupported", 0x400: "any", 0x800: "off", 0xC00: "on"}
# Code object V3 had only on/off bits (AMDGPUUsage "EF_AMDGPU_FEATURE_*_V3").
_XNACK_V3_ON = 0x100
_SRAMECC_V3_ON = 0x200


class ElfReadError(RocmforgeError):
    """A host file that is not an ELF we can read (not ELF, truncated headers, odd tables)."""


@dataclass(frozen=True, kw_only=True)
class SectionSpan:
    """Where a section's bytes are in the file; `nobits` means it has no bytes (stripped)."""

    name: str
    offset: int
    size: int
    nobits: bool


@dataclass(frozen=True, kw_only=True)
class HostLayout:
    """The offload-related facts of one host ELF file (executable, .so or .o)."""

    machine: str
    hip_fatbin: SectionSpan | None
    rdc_sections: tuple[SectionSpan, ...]
    llvm_offloading: SectionSpan | None
    kpack_ref: SectionSpan | None  # TheRock's kpack marker (device code split out)
    # Allocated, non-executable PROGBITS sections other than the offload ones (.rodata, .data,
    # .data.rel.ro, ...), in file order: where raw code objects are embedded.
    data_sections: tuple[SectionSpan, ...] = ()


@dataclass(frozen=True, kw_only=True)
class CodeObjectHeader:
    """The identity an AMDGPU code object's ELF header declares."""

    e_machine: int
    osabi: int
    abi_version: int
    e_flags: int
    # Where the section header table ends (e_shoff + e_shnum * e_shentsize), from the code
    # object's start; None when the header bytes are too short to say (ELF64 needs 64).
    extent: int | None = None

    @property
    def mach(self) -> int:
        return self.e_flags & EF_AMDGPU_MACH

    @property
    def code_object_version(self) -> int | None:
        """HSA ABI version 0..4 means code object V2..V6; other OS ABIs carry no version."""
        if self.osabi != ELFOSABI_AMDGPU_HSA:
            return None
        return self.abi_version + 2

    @property
    def xnack(self) -> str:
        """'on', 'off', 'any' or 'unsupported' as the flags encode it for this version."""
        version = self.code_object_version or 0
        if version >= 4:
            return _XNACK_V4[self.e_flags & 0x300]
        return "on" if self.e_flags & _XNACK_V3_ON else "off"

    @property
    def sramecc(self) -> str:
        version = self.code_object_version or 0
        if version >= 4:
            return _SRAMECC_V4[self.e_flags & 0xC00]
        return "on" if self.e_flags & _SRAMECC_V3_ON else "off"

    @property
    def generic_version(self) -> int:
        """Bits 24-31 of e_flags in V6 generic code objects (0 for concrete targets)."""
        if (self.code_object_version or 0) >= 6:
            return (self.e_flags >> 24) & 0xFF
        return 0


def decode_code_object_header(data: bytes) -> CodeObjectHeader:
    """Decode an ELF header prefix (52+ bytes). Raises ElfReadError when it is not an ELF."""
    if len(data) < 52:
        raise ElfReadError(f"only {len(data)} bytes where a 52-byte ELF header was expected")
    if data[:4] != ELF_MAGIC:
        raise ElfReadError(f"code object starts with {data[:4].hex()}, not the ELF magic")
    elf_class, elf_data = data[4], data[5]
    if elf_class not in (1, 2) or elf_data not in (1, 2):
        raise ElfReadError(f"ELF class {elf_class} / data encoding {elf_data} is not valid")
    order = "<" if elf_data == 1 else ">"
    (e_machine,) = struct.unpack_from(order + "H", data, 18)
    flags_at = 48 if elf_class == 2 else 36
    (e_flags,) = struct.unpack_from(order + "I", data, flags_at)
    extent: int | None = None
    if elf_class == 2 and len(data) >= 64:
        (shoff,) = struct.unpack_from(order + "Q", data, 40)
        shentsize, shnum = struct.unpack_from(order + "HH", data, 58)
        extent = shoff + shentsize * shnum if shoff else 64
    elif elf_class == 1:
        (shoff,) = struct.unpack_from(order + "I", data, 32)
        shentsize, shnum = struct.unpack_from(order + "HH", data, 46)
        extent = shoff + shentsize * shnum if shoff else 52
    return CodeObjectHeader(
        e_machine=e_machine, osabi=data[7], abi_version=data[8], e_flags=e_flags, extent=extent
    )


# One section header as the layout needs it: name, sh_type (SHT_PROGBITS, SHT_NOBITS or -1 for
# any other), sh_flags, sh_offset, sh_size.
_Header = tuple[str, int, int, int, int]
_SHT_PROGBITS = 1
_SHT_NOBITS = 8
# e_machine values the direct reader names as pyelftools does; any other goes to pyelftools.
_MACHINES = {3: "EM_386", 62: "EM_X86_64", 183: "EM_AARCH64", 224: "EM_AMDGPU",
             21: "EM_PPC64", 243: "EM_RISCV", 40: "EM_ARM"}  # fmt: skip
# (class, data) -> the ELF header after e_ident, and one section header (System V gABI).
_EHDR = {(2, 1): struct.Struct("<HHIQQQIHHHHHH"), (2, 2): struct.Struct(">HHIQQQIHHHHHH"),
         (1, 1): struct.Struct("<HHIIIIIHHHHHH"), (1, 2): struct.Struct(">HHIIIIIHHHHHH")}
_SHDR = {(2, 1): struct.Struct("<IIQQQQIIQQ"), (2, 2): struct.Struct(">IIQQQQIIQQ"),
         (1, 1): struct.Struct("<IIIIIIIIII"), (1, 2): struct.Struct(">IIIIIIIIII")}  # fmt: skip


def read_host_layout(stream: IO[bytes]) -> HostLayout:
    """Read section headers only. `stream` must be seekable; it is not read past the headers.

    A well-formed file's headers are decoded directly (three reads, no pyelftools import:
    that import is most of what inspecting a small file costs); anything unusual (extended
    section numbering, an unknown machine, a table that runs off the file) goes to pyelftools,
    which reads it or says what is malformed.
    """
    stream.seek(0)
    if stream.read(4) != ELF_MAGIC:
        raise ElfReadError("not an ELF file (no \\x7fELF magic)")
    direct = _direct_headers(stream)
    machine, headers = direct if direct is not None else _pyelftools_headers(stream)
    fatbin: SectionSpan | None = None
    offloading: SectionSpan | None = None
    rdc: list[SectionSpan] = []
    data: list[SectionSpan] = []
    kpack: SectionSpan | None = None
    for name, sh_type, flags, offset, size in headers:
        span = SectionSpan(name=name, offset=offset, size=size, nobits=sh_type == _SHT_NOBITS)
        if name == HIP_FATBIN:
            fatbin = span
        elif name.startswith(RDC_BUNDLE_PREFIX):
            rdc.append(span)
        elif name == LLVM_OFFLOADING:
            offloading = span
        elif name == KPACK_REF:
            kpack = span
        elif (sh_type == _SHT_PROGBITS and flags & _SHF_ALLOC and not flags & _SHF_EXECINSTR
              and size >= 64 and name not in _NOT_DATA):  # fmt: skip
            data.append(span)
    return HostLayout(
        machine=machine,
        hip_fatbin=fatbin,
        rdc_sections=tuple(rdc),
        llvm_offloading=offloading,
        kpack_ref=kpack,
        data_sections=tuple(sorted(data, key=lambda span: span.offset)),
    )


def _direct_headers(stream: IO[bytes]) -> tuple[str, list[_Header]] | None:
    """(machine, section headers) of a well-formed file, or None to let pyelftools decide."""
    stream.seek(0)
    ident = stream.read(64)
    if len(ident) < 52:
        return None
    key = (ident[4], ident[5])
    ehdr, shdr = _EHDR.get(key), _SHDR.get(key)
    if ehdr is None or shdr is None or len(ident) < 16 + ehdr.size:
        return None
    fields = ehdr.unpack_from(ident, 16)
    machine = _MACHINES.get(fields[1])
    shoff, shentsize, shnum, shstrndx = fields[5], fields[10], fields[11], fields[12]
    if machine is None or shentsize != shdr.size:
        return None
    if shoff == 0:
        return machine, []
    if shnum == 0 or not 0 < shstrndx < shnum:
        return None  # extended numbering (SHN_XINDEX) or no name table
    stream.seek(shoff)
    table = stream.read(shnum * shentsize)
    if len(table) < shnum * shentsize:
        return None
    raw = [shdr.unpack_from(table, i * shentsize) for i in range(shnum)]
    names_type, names_at, names_size = raw[shstrndx][1], raw[shstrndx][4], raw[shstrndx][5]
    if names_type == _SHT_NOBITS:
        return None
    stream.seek(names_at)
    names = stream.read(names_size)
    if len(names) < names_size:
        return None
    out: list[_Header] = []
    for sh_name, sh_type, flags, _addr, offset, size, *_rest in raw:
        end = names.find(b"\0", sh_name)
        if end < 0:
            return None
        name = names[sh_name:end].decode("utf-8", errors="replace")
        kind = sh_type if sh_type in (_SHT_PROGBITS, _SHT_NOBITS) else -1
        out.append((name, kind, flags, offset, size))
    return machine, out


def _pyelftools_headers(stream: IO[bytes]) -> tuple[str, list[_Header]]:
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    stream.seek(0)
    try:
        elf = ELFFile(stream)
        machine = str(elf["e_machine"])
        headers: list[_Header] = []
        for section in elf.iter_sections():
            header = section.header
            kind = header["sh_type"]
            code = {"SHT_PROGBITS": _SHT_PROGBITS, "SHT_NOBITS": _SHT_NOBITS}.get(kind, -1)
            headers.append((section.name, code, int(header["sh_flags"]),
                            int(header["sh_offset"]), int(header["sh_size"])))  # fmt: skip
    # pyelftools reports malformed tables with its own error, construct's errors, or plain
    # struct/Unicode/index errors depending on where the damage is.
    except (ELFError, ValueError, struct.error, IndexError, KeyError, OSError) as exc:
        raise ElfReadError(f"malformed ELF headers ({type(exc).__name__}: {exc})") from None
    except Exception as exc:  # noqa: BLE001 - construct raises its own hierarchy
        if type(exc).__module__.startswith(("construct", "elftools")):
            raise ElfReadError(f"malformed ELF headers ({type(exc).__name__}: {exc})") from None
        raise
    return machine, headers
