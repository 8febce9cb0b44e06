"""The cross-check of a code object's ELF header against its bundle entry ID.

Owns: `check_code_object` (processor from EF_AMDGPU_MACH through the arch table, xnack and
sramecc from e_flags for code object v4+, and, for deep walks, the section header table within
the entry's bytes) and the two fixed checks a walk records without reading (`DAMAGED_SPAN`,
`NOT_READ`). Pure. Must not: read bytes (the walk hands it the 64-byte header) or raise.
"""

from __future__ import annotations

from rocmforge.inspect.bundle_records import CodeObjectCheck, EntryId, MachName
from rocmforge.inspect.elf import EM_AMDGPU, ElfReadError, decode_code_object_header

CODE_OBJECT_HEADER = 64  # bytes of an ELF64 header: what a check reads of each code object

DAMAGED_SPAN = CodeObjectCheck(
    status="damaged", detail="its bytes run past the end of the bundle's data"
)
NOT_READ = CodeObjectCheck(
    status="not-checked",
    detail="not read: the first code objects of each entry ID are (--deep reads every one)",
)


def check_code_object(
    entry_id: EntryId, header_bytes: bytes | None, mach_name: MachName, size: int = 0
) -> CodeObjectCheck:
    """Compare an entry's code-object ELF header with its ID (pure; the walk caches it).

    With `size` (deep walks) the code object's section header table must also end within the
    entry's `size` bytes: a code object cut short is "damaged".
    """
    if entry_id.is_host:
        return CodeObjectCheck(status="host")
    if header_bytes is None:
        return CodeObjectCheck(
            status="not-checked", detail="code object lies beyond the decompressed prefix"
        )
    if not entry_id.is_amdgpu:
        return CodeObjectCheck(status="not-checked", detail="not an AMDGPU entry")
    try:
        header = decode_code_object_header(header_bytes)
    except ElfReadError as exc:
        return CodeObjectCheck(status="mismatch", detail=f"code object: {exc.what}")
    version = header.code_object_version
    base = CodeObjectCheck(status="ok", code_object_version=version, e_flags=header.e_flags)
    if size and header.extent is not None and header.extent > size:
        return CodeObjectCheck(
            status="damaged",
            detail=f"its ELF section headers end at byte {header.extent}, past the entry's "
            f"{size} bytes (a cut or overwritten code object)",
            code_object_version=version,
            e_flags=header.e_flags,
        )
    problems: list[str] = []
    if header.e_machine != EM_AMDGPU:
        problems.append(f"e_machine is {header.e_machine}, not EM_AMDGPU ({EM_AMDGPU})")
    else:
        name = mach_name(header.mach)
        if name is None:
            return CodeObjectCheck(
                status="not-checked",
                detail=f"EF_AMDGPU_MACH {header.mach:#x} is not in the arch table",
                code_object_version=version,
                e_flags=header.e_flags,
            )
        if name != entry_id.processor:
            problems.append(
                f"ID says {entry_id.processor}, e_flags mach {header.mach:#x} is {name}"
            )
        if (version or 0) >= 4:
            for feature, value in (("xnack", header.xnack), ("sramecc", header.sramecc)):
                wanted = {"+": ("on",), "-": ("off",), "": ("any", "unsupported")}[
                    entry_id.feature(feature)
                ]
                if value not in wanted:
                    problems.append(
                        f"ID says {feature}{entry_id.feature(feature) or ' any'}, "
                        f"e_flags say {feature} {value}"
                    )
    if problems:
        return CodeObjectCheck(
            status="mismatch",
            detail="; ".join(problems),
            code_object_version=version,
            e_flags=header.e_flags,
        )
    return base
