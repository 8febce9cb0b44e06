"""Extension builds' own checks: what an extension's setup.py (and the torch.utils.cpp_extension
it builds with) prints when it refuses a ROCm build.

Owns: the rules for those messages, each read from the program's source (flash-attention's
GPU_ARCHS check; cpp_extension's ROCm root). Must not: hold a message whose answer is fixed text
(config/diagnostics.toml, "Extension builds and TheRock's pip SDK"), or the compilers' and
linkers' messages (their own families).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")
FLASH_ATTENTION_SETUP = ("Dao-AILab/flash-attention@0251105a2fb19d2957484b7f023cd8c115286ced:"
                         "setup.py")
XFORMERS_CPP_LIB = ("facebookresearch/xformers@ca6d2aa0d43241fc8a8dcd872debc2406160160d:"
                    "xformers/_cpp_lib.py")
CPP_EXTENSION = ("pytorch/pytorch@cf30153c4c131c8164ee7798e5022d810682e2cb:"
                 "torch/utils/cpp_extension.py")


def _names(listed: str) -> list[str]:
    """The items of a Python list as repr() printed it (['gfx1030', 'native'])."""
    return [m.group(1) if m.group(1) is not None else m.group(2)
            for m in _QUOTED.finditer(listed)]


def _flash_attention_invalid(match: re.Match[str], view: LineView) -> Reading | None:
    allowed = set(_names(match.group("allowed")))
    refused = [arch for arch in _names(match.group("archs")) if arch not in allowed]
    if not refused or not allowed:
        return None
    arch = refused[0]
    return Reading(
        subject=arch.split(":")[0],
        cause=f"flash-attention's setup.py (its ROCm Composable Kernel backend) builds only for "
              f"the targets it lists, and GPU_ARCHS asked for {', '.join(refused)}, which is not "
              f"one of them: the CK kernels of this flash-attention are not built for {arch}",
        fix=f"set GPU_ARCHS to targets from the list the message prints (GPU_ARCHS=gfx1100; "
            f"'native' takes the GPU's own), or, for {arch}, build the Triton backend instead "
            f"(FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE), whose setup path does not check targets")


def _xformers_other_torch(match: re.Match[str], view: LineView) -> Reading | None:
    built, have = match.group("built"), match.group("have").strip()
    if built == have or not any("xFormers was built for" in line for line in view.previous):
        return None
    return Reading(
        subject="xformers",
        cause=f"the installed xformers was built for torch {built} (CUDA "
              f"{match.group('cuda')}) and this torch is {have}: its C++/HIP operators do not "
              "load, so its attention kernels are missing (PyPI's xformers is a CUDA build for "
              "one torch release)",
        fix="install the xformers built for this torch: for a ROCm torch from PyTorch's index "
            "the wheel from the same index (`pip install -U xformers --index-url "
            "https://download.pytorch.org/whl/rocmX.Y`), for a torch built from source build "
            "xformers against it (`pip install --no-build-isolation -v ./xformers` with "
            "PYTORCH_ROCM_ARCH set); `python -m xformers.info` shows what loaded")



def _cuda_home_unset(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="USE_ROCM",
        cause="torch.utils.cpp_extension built the extension on its CUDA path and found no "
              "CUDA (CUDA_HOME unset): it takes the ROCm path only when the torch in this "
              "Python is a ROCm build (torch.version.hip set) and it finds a ROCm root "
              "(ROCM_HOME or ROCM_PATH, TheRock's _rocm_sdk_core, hipcc on PATH, /opt/rocm); "
              "one of the two was missing",
        fix="in the Python that builds, check `python -c 'import torch; "
            "print(torch.version.hip)'`: None means a CPU or CUDA torch (or pip's build "
            "isolation pulled one): install the ROCm torch and build with `pip install "
            "--no-build-isolation .`; else set ROCM_HOME to the ROCm root (/opt/rocm), then "
            "rebuild")


RULES: tuple[Rule, ...] = (
    Rule(id="flash-attention-invalid-archs", klass="gpu-target",
         triggers=("Invalid archs:",),
         pattern=rx(r"Invalid archs: (?P<archs>\[[^\]]*\])\. Allowed: (?P<allowed>\[[^\]]*\])"),
         read=_flash_attention_invalid,
         source=f"{FLASH_ATTENTION_SETUP} (validate_and_update_archs: the assert on "
                "allowed_archs, GPU_ARCHS read in the ROCm CK branch)"),
    # xformers' xFormersInvalidLibException, logged as WARNING[XFORMERS] at import: a claim only
    # when an operator it should have provided was then missing.
    Rule(id="xformers-built-for-other-torch", klass="python-packaging",
         triggers=("(you have ",),
         pattern=rx(r"^PyTorch (?P<built>\S+) with CUDA (?P<cuda>\S+) \(you have "
                     r"(?P<have>[^)]+)\)"),
         requires=rx(r"No operator found for `|operator wasn't built"),
         read=_xformers_other_torch,
         source=f"{XFORMERS_CPP_LIB} (xFormersInvalidLibException: 'xFormers was built for: / "
                "PyTorch … with CUDA … (you have …)'); xformers/ops/fmha/dispatch.py "
                "(_run_priority_list: 'No operator found for …')"),
    # The fixed-text entry cuda-path-with-rocm-torch (tier 1) answers when the log shows a
    # ROCm torch; without that, either of the two conditions may be the one that failed.
    Rule(id="cpp-extension-cuda-home-unset", klass="rocm-disabled", tier=2,
         triggers=("CUDA_HOME environment variable is not set",),
         pattern=rx(r"^(?:OSError: )?CUDA_HOME environment variable is not set\. Please set "
                    r"it to your CUDA install root"),
         read=_cuda_home_unset,
         source=f"{CPP_EXTENSION} (_join_cuda_home's OSError; ROCM_HOME = _find_rocm_home() "
                "only for a torch with torch.version.hip; IS_HIP_EXTENSION); read in torch "
                "2.13.0's copy installed here; reproduced: make/devpy.sh"),
)
