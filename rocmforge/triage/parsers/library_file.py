"""A shared library the loader finds but cannot use as it was built: a LOAD segment glibc's
loader refuses (its file offset damaged by a tool that rewrote the file, or aligned for a
smaller page than the kernel's), and an under-linked library that needs a function of its own
namespace no library defines (loader.py's undefined-symbol asks this module).

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Must not: read files, run programs or pick between findings
(the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx
from rocmforge.triage.symbols import symbol_name

# lib<name>.so[.<version>]: the name a library's own C++ namespace usually has.
_LIBRARY_STEM = re.compile(r"^lib(?P<stem>[A-Za-z]\w*)\.so(?:\.[\d.]+)?$")


def own_namespace(library: str, symbol: str) -> Reading | None:
    """lib<name>.so needs a symbol of its own namespace <name>:: that nothing exports: the
    library was linked without the object that defines it (an under-linked library, which
    a shared-library link accepts unless -Wl,--no-undefined / -z defs), so it fails when loaded."""
    found = _LIBRARY_STEM.match(library)
    name = symbol_name(symbol)
    if found is None or "::" not in name:
        return None
    stem = found.group("stem")
    if name.split("::", 1)[0].lower() != stem.lower():
        return None
    return Reading(
        subject=library,
        cause=f"{library} needs {name}, a function of its own namespace {stem}::, and no "
              f"loaded library defines it: {library} was linked without the object (source) "
              "that defines it, so it links (a shared library may keep undefined symbols) but "
              "fails when it is loaded",
        fix=f"add the source that defines {name} to the {stem} library's target (or link the "
            f"{stem} library that holds it) and rebuild; linking {library} with "
            "-Wl,--no-undefined (-z defs) makes such a gap a link error; until then, build "
            f"without the {stem} library until its link is fixed")


def _load_segment(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("lib")
    library = path.rsplit("/", 1)[-1]
    if match.group("align"):
        return Reading(
            subject=library,
            cause=f"the loader refuses {path}: its LOAD segments are aligned for a smaller "
                  "memory page than this kernel uses (a library linked for 4 KiB pages on a "
                  "kernel with 16 or 64 KiB pages, as on some ARM64 systems)",
            fix=f"use a build of {library} linked for this page size (relink it with "
                "-Wl,-z,max-page-size=65536, which also loads on 4 KiB kernels), or run a "
                "kernel with 4 KiB pages; `readelf -lW <file>` shows each LOAD's Align and "
                "`getconf PAGESIZE` the kernel's")
    return Reading(
        subject=library,
        cause=f"the loader refuses {path}: a LOAD segment's file offset and address do not "
              "agree modulo the page size, so the file's layout is broken: a tool that "
              "rewrote it after the link (strip, objcopy, patchelf, a packager's strip "
              "step) damaged it; the library is there but corrupt",
        fix=f"reinstall or rebuild an intact {library} (compare `readelf -lW` of the installed "
            "file with the build's copy), and stop the step that rewrote it: package it "
            "unstripped, or strip it with a tool release that keeps the segment layout "
            "(a newer llvm-strip / objcopy)")


RULES: tuple[Rule, ...] = (
    Rule(id="elf-load-segment-misaligned", klass="import",
         triggers=("ELF load command",),
         pattern=rx(r"(?P<lib>[\w./+-]+\.so[\w.]*): ELF load command (?:address/offset not "
                    r"(?:page-aligned|properly aligned)|(?P<align>alignment not page-aligned))"),
         read=_load_segment,
         source="glibc elf/dl-load.c (_dl_map_object_from_fd, PT_LOAD checks: 'ELF load "
         "command alignment not page-aligned' when p_align is no multiple of the page size, "
         "'ELF load command address/offset not properly aligned' or, newer, 'not "
         "page-aligned' when p_vaddr - p_offset is not; stored copies read, commit not "
         "established); glibc 2.36's words reproduced here on a library whose LOAD offset was "
         "shifted (make/devbt8.sh); ROCm/TheRock#3932 (llvm-strip 18 broke libunwind.so.99)"),
)
