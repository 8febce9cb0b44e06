"""Which folder rocBLAS (and hipBLASLt, its copy of the same host code) looked in for its
kernel files, and what its report proves about that folder: the list of available files after
"Cannot read", and its glob of code objects for the running target.

Owns: the readers of those reports (tensile.py's rules call the rocBLAS ones) and hipBLASLt's
own glob rule. Must not: read files, run programs or pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

# rocBLAS's last try, the generic TensileLibrary.dat, in a Windows folder (a drive letter or a
# backslash in the path): there its list of available files proves nothing (folder_empty_reading).
_WINDOWS_GENERIC = re.compile(r"Cannot read (?P<dir>[A-Za-z]:\\\S*?|\S*\\\S*?)[/\\]+"
                              r"TensileLibrary\.(?:dat|yaml): ")


def windows_generic_reading(text: str, lib: str, arch: str, target: str) -> Reading | None:
    """The reading of rocBLAS's 'Cannot read <folder>/TensileLibrary.dat' in a Windows folder,
    or None for another line."""
    windows = _WINDOWS_GENERIC.search(text)
    if windows is None:
        return None
    folder = windows.group("dir")
    return Reading(
        subject=lib,
        cause=f"{lib} found no kernel file for {target} in {folder} (neither "
              "TensileLibrary_lazy_<target>.dat nor TensileLibrary.dat); on Windows its "
              "list of available files is always empty (a regex made of the backslash "
              "path), so the log cannot tell a folder without this target's files from a "
              "folder that is not there",
        fix=f"look in {folder}: if it holds other targets' TensileLibrary_lazy_*.dat files, "
            f"use a {lib} built with kernels for {arch} (the application's own {lib} "
            f"package for that target); if the folder is missing, install {lib}'s "
            f"library folder next to {lib}.dll ({lib}\\library under its bin\\), or set "
            f"{lib.upper()}_TENSILE_LIBPATH to a folder that holds it")


def folder_empty_reading(match: re.Match[str], view: LineView) -> Reading | None:
    head = next((line for line in reversed(view.previous) if "Cannot read" in line), "")
    where = re.search(r"Cannot read (?P<path>\S+?)[\\/]?(?:TensileLibrary\S*?):", head)
    lower = head.lower()
    library = next((n for n in ("hipsparselt", "hipblaslt") if n in lower), "rocblas")
    folder = where.group("path") if where else f"{library}/library"
    if "\\" in folder:
        # rocBLAS lists the folder through a std::regex made of the folder's own path: a
        # Windows path's backslashes are regex escapes there (\d, \s, \b ...), so nothing ever
        # matches and the list is empty whatever the folder holds. No proof of an empty folder.
        return None
    return Reading(
        subject=library,
        cause=f"{library} found no TensileLibrary files at all in {folder} (its list of "
              "available files is empty): the kernel library folder is not installed where "
              f"the loaded {library} looks (next to the library: bin\\ on Windows, lib/ on "
              "Linux), not just one target's file",
        fix=f"install {library}'s kernel library folder ({library}/library, shipped with its "
            f"runtime package) where the loaded {library} looks, or point "
            f"{library.upper()}_TENSILE_LIBPATH at the folder that holds it")


def _hipblaslt_no_code_objects(match: re.Match[str], view: LineView) -> Reading | None:
    # hipBLASLt's non-lazy build globs <folder>/*<processor>*co and warns when nothing
    # matches; the warning alone is no failure (torch uses rocBLAS on targets hipBLASLt lacks):
    # the rule requires hipBLASLt's own client or a hipBLAS status error in the log.
    arch, folder = match.group("arch"), match.group("dir")
    return Reading(
        subject="hipblaslt",
        cause=f"hipBLASLt found no kernel code objects for the GPU's target {arch} in "
              f"{folder} (its glob *{arch}*co matched nothing): this hipBLASLt was built "
              f"without {arch} kernels, so its GEMMs fail or return garbage",
        fix=f"use a hipBLASLt built with {arch} kernels (only the targets of its release's "
            f"list have them), or check HIPBLASLT_TENSILE_LIBPATH is unset or points at "
            f"that folder; where hipBLASLt has no {arch} kernels, use rocBLAS for the GEMMs "
            "(TORCH_BLAS_PREFER_HIPBLASLT=0 in torch)")


RULES: tuple[Rule, ...] = (
    Rule(id="hipblaslt-no-code-objects", klass="math-library",
         triggers=("No paths matched",),
         pattern=rx(r"rocblaslt warning: No paths matched (?P<dir>\S+?)[/\\]\*"
                    r"(?P<arch>gfx[0-9a-f]{3,4})\*co\b"),
         requires=rx(r"hipblaslt-(?:bench|test)\b|\b(?:HIP|CU)BLAS_STATUS_[A-Z_]+\b"),
         read=_hipblaslt_no_code_objects,
         source="ROCm/hipBLASLt@7d9fb683db25941d38c5f89749a2c26acc493992:library/src/amd_detail/"
         "rocblaslt/src/tensile_host.cpp (when ROCBLASLT_TENSILE_LAZY_LOAD == 0: glob of path + "
         "\"/*\" + processor + \"*co\"; none: \"rocblaslt warning: No paths matched <dir>. "
         "Make sure that HIPBLASLT_TENSILE_LIBPATH is set correctly.\"); ROCm/hipBLASLt#251"),
)
