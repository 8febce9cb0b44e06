"""Python packages that bind a ROCm library or ship one per GPU toolkit (amdsmi,
bitsandbytes): a package of another ROCm release than the install, or one with no ROCm build.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

# ROCm's releases are numbered below CUDA's (CUDA 8 shipped in 2016; ROCm is at 7): a "CUDA
# version" of 7 or less that a package read from torch is torch.version.hip.
_ROCM_MAJOR_MAX = 7

# amd-smi's CLI under any ROCm root: the traceback's quotes delimit the path (spaces too).
_ROCM_CLI = re.compile(r"File \"(?P<root>[^\"]+?)[/\\]libexec[/\\]amdsmi_cli[/\\]")
_ROOT_VERSION = re.compile(r"(?i)rocm[-/\\](?P<ver>\d+\.\d+(?:\.\d+)?)$")


def _amdsmi_init(match: re.Match[str], view: LineView) -> Reading | None:
    code = match.group("code")
    return Reading(
        subject="amdsmi",
        cause=f"torch could not initialise the amdsmi Python package (error code {code}) and "
              "its GPU initialisation then failed on what amdsmi should have answered: the "
              "amdsmi package in this environment does not match the ROCm install's amd-smi "
              "library (a pip-installed amdsmi of another release)",
        fix="remove the pip-installed amdsmi from this environment (`pip uninstall amdsmi`) so "
            "torch uses the ROCm install's own, or install the amdsmi of the installed ROCm "
            "release (ROCm ships it under <rocm>/share/amd_smi)")


def _amdsmi_cli_venv(match: re.Match[str], view: LineView) -> Reading | None:
    cli = next((m for line in reversed(view.previous) if (m := _ROCM_CLI.search(line))), None)
    if cli is None:
        return None
    site, root = match.group("site"), cli.group("root")
    if site.startswith(("/usr/", "/opt/rocm", root)) or root.startswith(site):
        return None  # a system Python's amdsmi (where ROCm's installer puts its own), the
        # root's own, or the site-packages that holds the root (TheRock's SDK venv)
    ver = _ROOT_VERSION.search(root)
    version = ver.group("ver") if ver else (view.rocm_roots[0] if view.rocm_roots else "")
    release = f"ROCm {version}" if version else "the installed ROCm"
    return Reading(
        subject="amdsmi",
        cause=f"{release}'s amd-smi ({root}) imported the amdsmi Python package "
              f"from {site}, not its own, and failed in it: that amdsmi is another release "
              f"than {release}'s amd-smi library",
        fix=f"install the amdsmi package of {release} in that environment (`pip install "
            f"amdsmi=={version or '<the ROCm version>'}`, or from <rocm>/share/amd_smi), or "
            "uninstall it there so the ROCm's own is used")


def _bnb_rocm_as_cuda(match: re.Match[str], view: LineView) -> Reading | None:
    version = match.group("ver")
    if int(version.split(".")[0]) > _ROCM_MAJOR_MAX:
        return None  # a real CUDA version: bitsandbytes' CUDA binaries, not this family
    return Reading(
        subject="bitsandbytes",
        cause=f"bitsandbytes took torch's ROCm version ({version}) for a CUDA version and found "
              "no binary for it: the installed bitsandbytes ships only CUDA binaries (no ROCm "
              "build)",
        fix=f"install a ROCm build of bitsandbytes for ROCm {version} (the ROCm wheels "
            "bitsandbytes publishes, or build it from source with the HIP backend against "
            "this ROCm) in place of the CUDA one")


RULES: tuple[Rule, ...] = (
    Rule(id="amdsmi-init", klass="python-packaging",
         triggers=("Can't initialize amdsmi",),
         pattern=rx(r"Can't initialize amdsmi - Error code: (?P<code>\d+)"),
         requires=rx(r"torch[/\\]cuda[/\\]__init__\.py\", line \d+, in _(?:lazy_init|"
                      r"check_capability)"),
         read=_amdsmi_init, source="torch/cuda/__init__.py's amdsmi warning; "
         "ROCm/flash-attention#79, pytorch/pytorch#133259"),
    Rule(id="amdsmi-cli-venv-package", klass="python-packaging",
         triggers=("amdsmi",),
         pattern=rx(r"File \"(?P<site>\S+[/\\]site-packages)[/\\]amdsmi[/\\][\w.]+\.py\", "
                     r"line \d+"),
         requires=rx(r"^Traceback \(most recent call last\)"),
         read=_amdsmi_cli_venv, source="amd-smi's CLI (libexec/amdsmi_cli) importing the "
         "amdsmi package; vllm-project/vllm#28680"),
    Rule(id="bitsandbytes-rocm-as-cuda", klass="python-packaging",
         triggers=("Detected PyTorch CUDA version",),
         pattern=rx(r"Detected PyTorch CUDA version:\s+(?P<ver>\d+\.\d+)"),
         read=_bnb_rocm_as_cuda, source="bitsandbytes' CUDA version mismatch banner "
         "(cextension.py); invoke-ai/InvokeAI#8084"),
)
