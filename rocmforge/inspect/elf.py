"""ELF reading for `invoke inspect`: the only module that looks at ELF structures.

Owns: (1) the host-file layout through pyelftools, reduced to the few sections the inspector
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
    kpack_ref: bool
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


def read_host_layout(stream: IO[bytes]) -> HostLayout:
    """Read section headers only. `stream` must be seekable; it is not read past the headers."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    stream.seek(0)
    if stream.read(4) != ELF_MAGIC:
        raise ElfReadError("not an ELF file (no \\x7fELF magic)")
    try:
        elf = ELFFile(stream)
        machine = str(elf["e_machine"])
        fatbin: SectionSpan | None = None
        offloading: SectionSpan | None = None
        rdc: list[SectionSpan] = []
        data: list[SectionSpan] = []
        kpack = False
        for section in elf.iter_sections():
            name = section.name
            if name == HIP_FATBIN:
                fatbin = _span(section)
            elif name.startswith(RDC_BUNDLE_PREFIX):
                rdc.append(_span(section))
            elif name == LLVM_OFFLOADING:
                offloading = _span(section)
            elif name == KPACK_REF:
                kpack = True
            elif _is_data(section):
                data.append(_span(section))
    # pyelftools reports malformed tables with its own error, construct's errors, or plain
    # struct/Unicode/index errors depending on where the damage is.
    except (ELFError, ValueError, struct.error, IndexError, KeyError, OSError) as exc:
        raise ElfReadError(f"malformed ELF headers ({type(exc).__name__}: {exc})") from None
    except Exception as exc:  # noqa: BLE001 - construct raises its own hierarchy
        if type(exc).__module__.startswith(("construct", "elftools")):
            raise ElfReadError(f"malformed ELF headers ({type(exc).__name__}: {exc})") from None
        raise
    return HostLayout(
        machine=machine,
        hip_fatbin=fatbin,
        rdc_sections=tuple(rdc),
        llvm_offloading=offloading,
        kpack_ref=kpack,
        data_sections=tuple(sorted(data, key=lambda span: span.offset)),
    )


def _is_data(section: object) -> bool:
    header = section.header  # type: ignore[attr-defined]
    flags = int(header["sh_flags"])
    return (
        header["sh_type"] == "SHT_PROGBITS"
        and flags & _SHF_ALLOC != 0
        and flags & _SHF_EXECINSTR == 0
        and int(header["sh_size"]) >= 64
        and section.name not in _NOT_DATA  # type: ignore[attr-defined]
    )


def _span(section: object) -> SectionSpan:
    header = section.header  # type: ignore[attr-defined]
    return SectionSpan(
        name=section.name,  # type: ignore[attr-defined]
        offset=int(header["sh_offset"]),
        size=int(header["sh_size"]),
        nobits=header["sh_type"] == "SHT_NOBITS",
    )
