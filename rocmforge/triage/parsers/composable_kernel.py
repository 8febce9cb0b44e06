"""Composable Kernel: its compile errors and the targets it cannot compile for.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def ck_reading(where: str, why: str = "") -> Reading:
    return Reading(subject="composable_kernel", klass="composable-kernel",
                   cause="a Composable Kernel (CK, composable_kernel) source failed to "
                   f"compile for {{device}} ({where}){why}: CK's kernels are written for the "
                   "targets and ROCm release CK supports (its MFMA/WMMA paths: CDNA gfx90a, "
                   "gfx942, gfx950), and other targets or a CK submodule at another commit "
                   "fail like this",
                   fix="leave Composable Kernel out for {gfx} (`USE_ROCM_CK_GEMM=0 "
                   "USE_ROCM_CK_SDPA=0`, features ck=off), or build only for targets "
                   "composable_kernel supports with the ROCm release the PyTorch release "
                   "names; the CK submodule must be at the commit the tree pins (`git "
                   "submodule update --init --recursive`)")


_TARGET_MACRO = re.compile(r"undeclared identifier [\u2018\u2019'\"]CK_BUFFER_RESOURCE_3RD_DWORD")


def _ck_error(match: re.Match[str], view: LineView) -> Reading | None:
    why = ""
    said = (match.group("msg") or "").strip()
    if said and "static assertion failed" not in said and len(said) <= 120:
        why = f": '{said}'"  # the compiler's own words, when short enough to quote
    if _TARGET_MACRO.search(said):
        # ck.hpp defines the buffer descriptor word per GPU family, with no #else: a target
        # this CK copy was not written for leaves it undeclared.
        why = ("; its ck.hpp defines CK_BUFFER_RESOURCE_3RD_DWORD only for the GPU families "
               "that CK copy knows, and this target is not one of them")
    if "needs target feature" in view.text:
        why = "; it uses instructions (" + view.text.rsplit("needs target feature", 1)[1].strip() \
            + ") this target does not have"
    reading = ck_reading(match.group("file").rsplit("/", 1)[-1], why)
    if "flash_attn" in match.group("file") or "flash-attention" in match.group("file"):
        # flash-attention's own CK backend: on other targets its Triton backend builds.
        return Reading(subject=reading.subject, klass=reading.klass, cause=reading.cause,
                       fix="build flash-attention with its Triton backend on this target "
                           "(FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE): its CK backend (the "
                           "composable_kernel submodule) builds only for the CDNA targets CK "
                           "supports (GPU_ARCHS=gfx90a;gfx942)")
    return reading


_MI_TARGETS = ("gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950")


def _ck_target_errors(match: re.Match[str], view: LineView) -> Reading | None:
    arch = match.group("arch")
    if arch in _MI_TARGETS:
        return None  # a supported target: the errors are the sources' own
    return Reading(
        subject=arch,
        cause=f"the sources fail to compile for {arch}: the project's Composable Kernel "
              "attention kernels use MFMA instructions of the MI-series targets (gfx90a, "
              f"gfx942, gfx950) and do not support {arch}",
        fix="build for a target the project supports (gfx90a, gfx942 or gfx950: "
            "PYTORCH_ROCM_ARCH / GPU_ARCHS), or on this GPU use an attention path without "
            "these kernels (PyTorch's SDPA, flash-attention's Triton backend)")


def _ck_undefined(match: re.Match[str], view: LineView) -> Reading | None:
    symbol, name = match.group("sym").strip(), match.group("fn")
    return Reading(
        subject="composable_kernel",
        cause=f"the link found no definition of {symbol}: the Composable Kernel (CK) function "
              f"{name} is declared in the CK headers this build uses but defined there for none "
              "of these types, so the calling code expects another CK release than the one "
              "it is built against",
        fix="build against the CK commit the calling project pins (`git submodule update "
            "--init --recursive`), or a CK release that defines it for these types; then "
            "rebuild from a clean build folder")


_REJECTED_OPERAND = re.compile(r"(?P<file>\S*(?:composable_kernel|/ck/|/ck_tile/)\S*?):\d+:\d+: "
                               r"error: not a valid operand\.")


def _ck_dpp8(match: re.Match[str], view: LineView) -> Reading | None:
    error = next((m for m in map(_REJECTED_OPERAND.search, reversed(view.previous[-4:]))
                  if m), None)
    if error is None:
        return None  # the operand was not the one the assembler rejected
    where = error.group("file").rsplit("/", 1)[-1]
    return Reading(
        subject="composable_kernel",
        cause=f"Composable Kernel's inline assembly in {where} uses the DPP8 modifier "
              "(dpp8:[...]), which only GFX10 and later targets have: the AMDGPU assembler "
              "rejects it for {device} ('not a valid operand.'): targets before GFX10 (gfx8, "
              "gfx9 up to gfx950) have the DPP16 forms only; CK's DPP GEMM instances are "
              "written for gfx10/gfx11, and an "
              "optimized build (CK's default -O3) deletes the unused instruction before it "
              "reaches the assembler",
        fix="keep Composable Kernel's default optimization flags (do not override "
            "CMAKE_CXX_FLAGS / CMAKE_BUILD_TYPE to build without -O3), or leave the _dpp "
            "instances out for targets before gfx10 (build them for gfx10/gfx11 only, as "
            "proposed in ROCm/composable_kernel#1761)")


def _ck_imported_missing(match: re.Match[str], view: LineView) -> Reading | None:
    library = match.group("lib")
    return Reading(
        subject="composable_kernel",
        cause=f"the installed Composable Kernel (composable_kernel) package exports the target "
              f"composable_kernel::{library}, but its library file (lib{library}.a) is not in "
              "the install: that CK was built or packaged without this instance library (a "
              "build for a subset of GPU targets, or of selected instances, that did not "
              "produce it) or its install is incomplete, so every project that "
              "find_package()s CK (MIOpen, hipTensor, PyTorch) stops at configure",
        fix=f"rebuild and reinstall composable_kernel so that it produces lib{library}.a for "
            "the targets you build for (its full instance set for those GPU_TARGETS), or "
            "reinstall the ROCm composable_kernel development package whole; then configure "
            "again")


# A clang error line, and its quoted CK entity on the same line or wrapped onto the next.
_ERROR_LINE = re.compile(r"(?:^|: )error: (?P<msg>.+?)\s*$")
_CK_ENTITY = re.compile(r"[\u2018'](?P<name>(?P<ns>ck(?:_tile)?)::[^'\u2019]+)['\u2019]")


def _ck_named_error(match: re.Match[str], view: LineView) -> Reading | None:
    said = _ERROR_LINE.search(view.text)
    if said is None and view.indented and view.previous and \
            match.group(0) == view.text:  # the name alone, wrapped from the error line
        said = _ERROR_LINE.search(view.previous[-1])
    if said is None:
        return None  # a note, a warning or a command line that names CK: nothing failed here
    name, space = match.group("name"), match.group("ns")
    message = said.group("msg")
    if name in message:  # the error's own words, without the name quoted at its end
        message = message[:message.index(name) - 1]
    message = message.rstrip(" '\u2018\u2019:")
    return Reading(
        subject="composable_kernel",
        cause=f"clang rejects Composable Kernel (CK) code in {name} ('{message}'): this CK "
              "commit does not compile with this clang (a newer clang is stricter than the "
              "CK code the tree pins, also in the HIP host pass) or for this target",
        fix=f"build with the CK ({space}) commit the tree pins and the ROCm (clang) its "
            f"release names, or a newer CK whose {space} code carries the fix; or leave "
            "Composable Kernel out (`USE_ROCM_CK_SDPA=0 USE_ROCM_CK_GEMM=0`, features "
            "ck=off)")


RULES: tuple[Rule, ...] = (
    Rule(id="ck-error-named", klass="composable-kernel",
         triggers=("ck::", "ck_tile::"),
         pattern=_CK_ENTITY, read=_ck_named_error,
         source="clang's error lines that quote the declaration they are about (e.g. "
         "err_reference_to_local_in_enclosing_context, 'reference to local variable %2 "
         "declared in enclosing function %3', as the cited log prints it; clang's source not "
         "read), the name wrapped onto the next line by a log; CK's namespaces ck:: and "
         "ck_tile:: (ROCm/composable_kernel include/ck, include/ck_tile); pytorch/pytorch#192650 "
         "(ck_tile FastGeluAsm in the host pass with clang 23)"),
    Rule(id="ck-imported-library-missing", klass="composable-kernel",
         triggers=("The imported target \"composable_kernel::",),
         pattern=rx(r'The imported target "composable_kernel::(?P<lib>[\w.+-]+)" references'),
         read=_ck_imported_missing,
         source="CMake's export file check of an installed package (\"The imported target "
         "\"<ns>::<name>\" references the file … but this file does not exist.\"), reproduced "
         "with cmake 3.25.1 (make/devbt4.sh); NixOS/nixpkgs#367695"),
    Rule(id="ck-dpp8-not-on-target", klass="composable-kernel", tier=0,
         triggers=("dpp8:[",),
         pattern=rx(r"^\d+\s*\|.*\bdpp8:\["),
         read=_ck_dpp8, source="LLVM's AMDGPU assembler (clang 22 here: `llvm-mc-22 "
         "-mcpu=gfx900…gfx950` rejects dpp8:[…] with 'not a valid operand.', gfx1010…gfx1201 "
         "accept it; make/devbt4.sh); ROCm/composable_kernel#1759, #1761 (inner_product_dpp8.hpp "
         "on gfx908 without -O3)"),
    Rule(id="ck-error", klass="composable-kernel",
         # CK's headers sit under include/ck/ (its tree, /opt/rocm/include/ck): a user's own
         # folder named ck (/home/ck/src/main.cpp, make/rv11.sh) is not CK's.
         triggers=("composable_kernel", "/include/ck/", "/ck_tile/"),
         pattern=rx(r"(?P<file>\S*(?:composable_kernel|/include/ck/|/ck_tile/)\S*?):\d+(?::\d+)?: "
                     r"(?:fatal )?error:(?P<msg>.*)"),
         read=_ck_error, source="pytorch/pytorch third_party/composable_kernel; an undeclared "
         "CK_BUFFER_RESOURCE_3RD_DWORD: composable_kernel include/ck/ck.hpp defines it in an "
         "#if/#elif chain per GPU family with no #else (stored copies read with find_string; "
         "ROCm/composable_kernel#775, gfx1103; ROCm/TheRock#5910, gfx1250)"),
    Rule(id="ck-target-compile-errors", klass="gpu-target", tier=2,
         triggers=("generated when compiling for",),
         pattern=rx(r"\d+ errors? generated when compiling for (?P<arch>gfx[0-9a-f]{3,4})"),
         requires=rx(r"hip_fmha|ck_tile|composable_kernel|csrc/attention/hip"),
         read=_ck_target_errors, source="clang's error count per offload target; "
         "facebookresearch/xformers#1222 (CK tiled FMHA on gfx1100)"),
    Rule(id="ck-undefined-symbol", klass="composable-kernel",
         triggers=("undefined hidden symbol: ", "undefined symbol: "),
         pattern=rx(r"\blld\S*: error: undefined (?:hidden )?symbol: (?P<sym>(?:[^(]*?[\s*&<])?"
                    r"ck(?:_tile)?::(?P<fn>\w+).*)$"),
         read=_ck_undefined, source="ld.lld's 'undefined (hidden) symbol: <demangled>' for a "
         "ck:: / ck_tile:: function; ROCm/composable_kernel#2471, #1773"),
)
