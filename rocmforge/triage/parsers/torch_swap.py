"""A ROCm torch in the environment replaced by another build of torch: an installer's
resolver swapping the +rocm wheel for PyPI's, or a launcher that reinstalls the CUDA build
its requirements pin over a working ROCm torch.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Must not: read files, run programs or pick between findings
(the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

_TORCH = r"(?P<pkg>torch|torchvision|torchaudio)"
# A ROCm torch named in one of the few lines before: `torch 2.1.2+rocm5.6`, `torch==…+rocm…`,
# pip's `torch-2.1.2+rocm5.6`.
_ROCM_TORCH = re.compile(r"\btorch(?:==|-|\s+)(?P<ver>\d[\w.]*\+rocm[\w.]*)")

_FIX = ("keep the +rocm build: install the other packages with torch pinned to the installed "
        "ROCm version (a constraints file, `pip install --no-deps`, or uv's `--index-url` of "
        "the ROCm index for torch), or reinstall torch, torchvision and torchaudio from the "
        "ROCm index afterwards; `python -c 'import torch; print(torch.version.hip)'` must "
        "print a version")


def _uv_swap(match: re.Match[str], view: LineView) -> Reading | None:
    # uv's change summary lists a replaced package twice, in a row: ` - name==old` then
    # ` + name==new`.
    package, new = match.group("pkg"), match.group("ver")
    if "+rocm" in new or not view.previous:
        return None
    old = re.fullmatch(rf"- {package}==(?P<old>\S+\+rocm\S*)", view.previous[-1])
    if old is None:
        return None
    return Reading(
        subject=package,
        cause=f"the installer's resolver replaced {package} {old.group('old')} (the ROCm "
              f"build) with {package} {new}, a build without ROCm (PyPI's): another package's "
              f"requirement made it pick a torch the ROCm index does not serve, so the ROCm "
              f"{package} is gone from the environment",
        fix=_FIX)


def _pip_swap(match: re.Match[str], view: LineView) -> Reading | None:
    new = match.group("ver")
    if "+rocm" in new:
        return None
    # The rule's `requires` proves a ROCm torch was uninstalled in this log; its version is
    # named when the line is among the few before.
    old = next((found.group("ver") for line in reversed(view.previous)
                if line.startswith("Successfully uninstalled torch-")
                and (found := _ROCM_TORCH.search(line))), "")
    return Reading(
        subject="torch",
        cause=f"pip uninstalled torch {old}{' ' if old else ''}(the ROCm build) and installed "
              f"torch {new}, a build without ROCm: another package's requirement made the resolver "
              "replace the ROCm torch",
        fix=_FIX)


def _cuda_over_rocm(match: re.Match[str], view: LineView) -> Reading | None:
    # The line asks for the CUDA build (+cuNNN) of torch; a line just before showed the ROCm
    # build in this environment. A log that names only CUDA builds (an NVIDIA machine) is
    # not read.
    old = next((found for line in reversed(view.previous)
                if (found := _ROCM_TORCH.search(line))), None)
    if old is None:
        return None
    want = match.group("ver")
    return Reading(
        subject="torch",
        cause=f"the program's requirements pin the CUDA build torch {want}, so it treats the "
              f"installed ROCm torch {old.group('ver')} as the wrong version and installs the "
              f"{want.split('+', 1)[1]} wheels over it: the requirements it checks are for "
              "NVIDIA GPUs only",
        fix="use the program's ROCm requirements (or edit the pins to the +rocm version "
            "installed) so it keeps the ROCm torch; then reinstall torch, torchvision and "
            "torchaudio from the ROCm index")


RULES: tuple[Rule, ...] = (
    Rule(id="uv-replaces-rocm-torch", klass="python-packaging",
         triggers=("+ torch",),
         pattern=rx(rf"^\+ {_TORCH}==(?P<ver>\S+)$"),
         read=_uv_swap, source="astral-sh/uv's change summary after an install (\" - name=="
         "version\" for each removed, \" + name==version\" for each added, sorted by name; "
         "uv's source not read here: the shape as its users post it); unslothai/unsloth#7275"),
    Rule(id="pip-replaces-rocm-torch", klass="python-packaging",
         triggers=("Successfully installed",),
         pattern=rx(r"^Successfully installed (?:\S+ )*torch-(?P<ver>\d\S*)"),
         requires=rx(r"^Successfully uninstalled torch-\d[\w.]*\+rocm"),
         read=_pip_swap, source="pypa/pip@6d309205789d368b2749d93fd6193d584811efd5:src/pip/"
         "_internal/req/req_uninstall.py (\"Successfully uninstalled %s\", name-version) and "
         "src/pip/_internal/commands/install.py (\"Successfully installed \" + name-version "
         "joined by blanks)"),
    Rule(id="cuda-torch-over-rocm-torch", klass="python-packaging",
         triggers=("torch==",),
         pattern=rx(r"\b[Ii]nstall\w*\b.*\btorch==(?P<ver>\d[\w.]*\+cu\d+)"),
         read=_cuda_over_rocm, source="bmaltais/kohya_ss#2228 (a launcher's requirements "
         "check reinstalling torch==2.1.2+cu118 over torch 2.1.2+rocm5.6); the local version "
         "label of PyTorch's wheels (+cuNNN, +rocmX.Y) names the GPU toolkit"),
)
