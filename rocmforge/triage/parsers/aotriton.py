"""AOTriton: its library missing, no kernels for the GPU target, and no runtime.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def aotriton_library(name: str) -> Reading:
    return Reading(subject="aotriton", cause=f"the AOTriton library ({name}) was not there to "
                   "link: its ExternalProject download or build failed earlier, or "
                   "AOTRITON_INSTALLED_PREFIX points at an incomplete prefix",
                   fix="run `invoke fetch` to download and check AOTriton for your ROCm and "
                   "targets (the build then uses AOTRITON_INSTALLED_PREFIX), or leave the "
                   "attention kernels out (features flash_attention=off, "
                   "mem_efficient_attention=off)")


def _aotriton_error(match: re.Match[str], view: LineView) -> Reading | None:
    return aotriton_library("aotriton")


def _aotriton_arch(match: re.Match[str], view: LineView) -> Reading | None:
    arch = match.group("arch")
    return Reading(subject="aotriton", cause=f"AOTriton has no kernels for {arch}: the "
                   "AOTriton release this tree pins supports only the targets "
                   "cmake/External/aotriton.cmake lists, so configuring flash and "
                   f"memory-efficient attention for {arch} stops", fix=f"drop {arch} from "
                   "--arch (`invoke plan --arch ...` shows which targets AOTriton supports per "
                   "release), use a PyTorch whose AOTriton supports it, or leave the attention "
                   "kernels out (features flash_attention=off, mem_efficient_attention=off, "
                   "USE_FLASH_ATTENTION=0 USE_MEM_EFF_ATTENTION=0)")


def _aotriton_no_runtime(match: re.Match[str], view: LineView) -> Reading | None:
    rocm = match.group("rocm")
    return Reading(subject="aotriton", cause=f"the tree's cmake/External/aotriton.cmake has no "
                   f"prebuilt AOTriton runtime for ROCm {rocm}: this PyTorch release does not "
                   "support that ROCm with AOTriton", fix="build against a ROCm this PyTorch "
                   "release names (`invoke doctor` shows the supported range), use a newer "
                   "PyTorch whose AOTriton has a runtime for it, or leave the attention "
                   "kernels out (features flash_attention=off, "
                   "mem_efficient_attention=off)")



def _aotriton_no_target(match: re.Match[str], view: LineView) -> Reading | None:
    # The empty list's own argparse error ("expected at least one argument") is the
    # aotriton-no-target signature; this reads the generator's command line and a bad choice.
    bad = match.group("bad") or ""
    asked = [m.group("arch") for line in view.previous
             if (m := re.search(r"AOTRITON_TARGET_ARCH (?P<arch>\S+)", line))]
    got = (f"was given {bad}, which is not one of the targets it knows" if bad else
           "was given no target at all: none of the build's GPU targets"
           + (f" ({asked[-1]})" if asked else "") + " is one AOTriton supports, so the "
           "list it passes is empty")
    return Reading(
        subject="aotriton",
        cause=f"AOTriton's kernel generator (v3python generate, --target_gpus) {got}; its usage "
              "message lists the targets it supports",
        fix="build for GPU targets AOTriton supports (the list after --target_gpus in its "
            "usage), or build torch without AOTriton for these targets (features "
            "flash_attention=off and mem_efficient_attention=off: USE_FLASH_ATTENTION=0 "
            "USE_MEM_EFF_ATTENTION=0)")


def _aotriton_header(match: re.Match[str], view: LineView) -> Reading | None:
    header = match.group("h") or match.group("h2")
    return Reading(
        subject="aotriton",
        cause=f"a source includes AOTriton's header {header}, which is not on the include "
              "path: AOTriton was not fetched, built or installed into this build (PyTorch "
              "provides it only while flash or memory-efficient attention is on), or its "
              "prefix is not the one the compile uses",
        fix="configure with AOTriton provided: keep USE_FLASH_ATTENTION / "
            "USE_MEM_EFF_ATTENTION on (features flash_attention and mem_efficient_attention), "
            "or point AOTRITON_INSTALLED_PREFIX at an AOTriton install, or use a tree that "
            "guards these includes when both are off; then rebuild from a clean build folder")


def _aotriton_head_dim(match: re.Match[str], view: LineView) -> Reading | None:
    way, most = match.group("way"), match.group("most")
    return Reading(
        subject="aotriton",
        cause=f"scaled_dot_product_attention ran its FlashAttention {way} kernel, which on a "
              f"ROCm torch is AOTriton's, with a head dimension above {most}: that AOTriton "
              f"supports head dimension at most {most}, and torch's backend choice sent the "
              "shape there instead of falling back to another attention backend",
        fix=f"keep the head dimension at most {most}, or choose another backend for such "
            "shapes (`with torch.nn.attention.sdpa_kernel([SDPBackend.MATH]):`); else use a "
            "torch whose dispatch or bundled AOTriton handles that head dimension")


RULES: tuple[Rule, ...] = (
    Rule(id="aotriton-error", klass="aotriton",
         triggers=("aotriton", "AOTriton"),
         # A file of AOTriton's that is not there (its library, its prefix): not any line that
         # names AOTriton and fails, which is also what a failed configure without output is.
         # A library is `.a`/`.so` as a whole suffix: AOTriton's own build dir holds kernel
         # images (gpu_kernel_image.attn_fwd/…hsaco) whose missing .hsaco proves no cause.
         pattern=rx(r"(?i)(?:no such file|not found|cannot find|missing and no known rule)"
                     r".*aotriton|aotriton\S*\.(?:a|so)(?!\w)\S*.*(?:missing|not found|no such "
                     r"file)"),
         read=_aotriton_error, tier=2, source="pytorch/pytorch cmake/External/aotriton.cmake"),
    Rule(id="aotriton-arch", klass="aotriton",
         triggers=("AOTriton: unsupported arch",),
         pattern=rx(r"AOTriton: unsupported arch '(?P<arch>[\w:+-]+)'"),
         read=_aotriton_arch,
         source="pytorch/pytorch cmake/External/aotriton.cmake; ROCm/TheRock#1254"),
    Rule(id="aotriton-no-runtime", klass="aotriton",
         triggers=("Cannot find AOTriton runtime",),
         pattern=rx(r"Cannot find AOTriton runtime for ROCM (?P<rocm>[\d.]+)"),
         read=_aotriton_no_runtime, source="pytorch/pytorch cmake/External/aotriton.cmake"),
    Rule(id="aotriton-no-supported-target", klass="aotriton",
         triggers=("target_gpus",),
         pattern=rx(r"generate\.py: error: argument --target_gpus: invalid choice: "
                    r"'(?P<bad>[^']+)'|v3python\.generate\W.*?--target_gpus['\"]?\s+['\"]?--"),
         requires=rx(r"usage: generate\.py |generate\.py: error: argument --target_gpus"),
         read=_aotriton_no_target, source="ROCm/aotriton@6dc2f9368f21e573318cb85e96398025ac32a1e8:"
         "v3python/generate.py (--target_gpus: nargs='+', choices=AOTRITON_SUPPORTED_GPUS: "
         "argparse's usage and error when the list is empty or holds an unknown target); "
         "ROCm/TheRock#1925"),
    Rule(id="aotriton-header-missing", klass="aotriton",
         triggers=("aotriton/",),
         pattern=rx(r"error: (?:(?P<h>aotriton/[\w/.-]+\.h(?:pp)?): No such file or directory"
                    r"|'(?P<h2>aotriton/[\w/.-]+\.h(?:pp)?)' file not found)"),
         read=_aotriton_header, source="GCC's and clang's missing-#include errors for "
         "AOTriton's headers; pytorch/pytorch cmake/External/aotriton.cmake (AOTriton "
         "installed from ExternalProject_Add or AOTRITON_INSTALLED_PREFIX; stored copy, commit "
         "not established); pytorch/pytorch#125230"),
    Rule(id="aotriton-head-dim-limit", klass="aotriton",
         triggers=("only supports head dimension at most",),
         # The flash-attention family's own check (Dao-AILab, ROCm/flash-attention, torch's
         # copies); CK's wording ("CK only supports", "CK FlashAttention") is not AOTriton's.
         # Only a log that names AOTriton proves the ROCm torch's own kernel; the flash_attn
         # package prints the same words on NVIDIA and on ROCm (its CK backend).
         pattern=rx(r"(?:Error: |^)FlashAttention (?P<way>forward|backward) only supports head "
                    r"dimension at most (?P<most>\d+)"),
         requires=rx(r"(?i)\baotriton|libaotriton"),
         unless=rx(r"flash_attn_(?:2_)?cuda|flash_attn_func|[/\\]flash_attn[/\\]"),
         read=_aotriton_head_dim, source="Dao-AILab/flash-attention@0251105a2fb19d2957484b7f02"
         "3cd8c115286ced:csrc/flash_attn/flash_api.cpp (TORCH_CHECK(head_size <= 256, "
         "\"FlashAttention forward only supports head dimension at most 256\")); ROCm/flash-"
         "attention@b3ae4966b2567811880db10d9e040a775b99c7d7:csrc/flash_attn_ck/mha_fwd.cpp "
         "(CK's own wording differs); torch's ROCm copy (aten/.../hip/flash_attn) not read "
         "here: unverified; pytorch/pytorch#148850"),
)
