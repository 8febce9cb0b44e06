"""Python packaging and Triton families of r14's misses, read by shape (issue 40, devpk6):
each text is what the program prints (CPython's BytesWarning under -bb in a Triton frame, pip's
"HTTP error <code> while getting", uv's wrapped platform-tag report and change summary, pip's
uninstall and install lines, CPython's ModuleNotFoundError at run time), with values other
than the r14 cases', and the look-alikes that must claim nothing."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

_BYTES = ("Traceback (most recent call last):\n"
          "  File \"/venv/lib/python3.10/site-packages/torch/_inductor/runtime/"
          "triton_heuristics.py\", line 400, in precompile\n"
          "    binary = triton.compile(*args)\n"
          "  File \"{path}\", line 88, in {func}\n"
          "    return f'{{version}}-{{self.target}}'\n"
          "BytesWarning: str() on a {kind} instance")

_HTTP = ("ERROR: HTTP error {code} while getting https://download.pytorch.org/whl/nightly/"
         "{variant}/{wheel} (from https://download.pytorch.org/whl/nightly/{variant}/"
         "{project}/)")

_UV_WRAPPED = ("  ╰─▶ Because {req} has no wheels with a matching platform\n"
               "      tag (e.g., `{tag}`) and you require {req}, we can\n"
               "      conclude that your requirements are unsatisfiable.")

_PIP_SWAP = ("Installing collected packages: torch, studio\n"
             "  Attempting uninstall: torch\n"
             "    Found existing installation: torch {old}\n"
             "    Uninstalling torch-{old}:\n"
             "      Successfully uninstalled torch-{old}\n"
             "Successfully installed studio-1.0 torch-{new}")

_RUNTIME = ("Traceback (most recent call last):\n"
            "  File \"<string>\", line 1, in <module>\n"
            "  File \"/venv/lib/python3.12/site-packages/{pkg}/__init__.py\", line 3, in "
            "<module>\n"
            "    import {module}\n"
            "ModuleNotFoundError: No module named '{module}'")


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words", "step"), [
    # CPython's BytesWarning raised under -bb: the module path from the rightmost triton/
    (_BYTES.format(path="/root/triton/python/triton/backends/amd/compiler.py", func="hash",
                   kind="bytes"), "triton", "triton/backends/amd/compiler.py",
     "triton-bytes-warning", ("-bb", "(hash)", "bytes value"), "verify"),
    (_BYTES.format(path="/venv/lib/python3.12/site-packages/triton/runtime/cache.py",
                   func="get_file", kind="bytearray"), "triton", "triton/runtime/cache.py",
     "triton-bytes-warning", ("(get_file)", "bytearray value"), "verify"),
    # pip's 403 on a dated nightly wheel of PyTorch's nightly index
    (_HTTP.format(code=403, variant="rocm6.0", project="torchvision",
                  wheel="torchvision-0.18.0.dev20240101%2Brocm6.0-cp311-cp311-linux_x86_64.whl"),
     "python-packaging", "torchvision", "pip-http-403-stale-nightly",
     ("nightly torchvision 0.18.0.dev20240101+rocm6.0", "20240101",
      "https://download.pytorch.org/whl/rocm6.0"), "venv"),
    # uv's report wrapped after "platform": the package and the tag from two lines
    (_UV_WRAPPED.format(req="torchaudio==2.8.0+rocm6.4", tag="macosx_14_0_arm64"),
     "python-packaging", "torchaudio", "no-platform-wheel-wrapped",
     ("torchaudio 2.8.0+rocm6.4", "(macosx_14_0_arm64)"), "venv"),
    # the same report on one line also names its tag now
    ("Because vllm==0.9.0+rocm700 has no wheels with a matching platform tag (e.g., "
     "`win_amd64`) and you require vllm==0.9.0+rocm700, we can conclude that your "
     "requirements are unsatisfiable.", "python-packaging", "vllm", "no-platform-wheel",
     ("vllm 0.9.0+rocm700", "(win_amd64)"), "venv"),
    # uv's change summary: a +rocm build out, a plain one in
    (" - torchvision==0.24.0+rocm6.4\n + torchvision==0.24.1", "python-packaging",
     "torchvision", "uv-replaces-rocm-torch", ("0.24.0+rocm6.4", "torchvision 0.24.1",
                                               "+rocm build"), "venv"),
    # pip's uninstall and install lines
    (_PIP_SWAP.format(old="2.6.0+rocm6.2.4", new="2.7.1"), "python-packaging", "torch",
     "pip-replaces-rocm-torch", ("torch 2.6.0+rocm6.2.4", "torch 2.7.1"), "venv"),
    # a launcher installing the CUDA pin over the ROCm torch it just named
    ("torch 2.3.1+rocm6.0 found, requirements want 2.3.1+cu121\n"
     "Installing torch==2.3.1+cu121 torchvision==0.18.1+cu121", "python-packaging", "torch",
     "cuda-torch-over-rocm-torch", ("torch 2.3.1+cu121", "2.3.1+rocm6.0", "cu121 wheels"),
     "venv"),
    # a run-time import of an undeclared dependency; a module pip names otherwise
    (_RUNTIME.format(pkg="aiter", module="packaging"), "python-packaging", "packaging",
     "runtime-module-missing", ("aiter imports it", "pip install packaging"), "verify"),
    (_RUNTIME.format(pkg="mypkg", module="yaml"), "python-packaging", "yaml",
     "runtime-module-missing", ("pip install pyyaml",), "verify"),
    # inductor's TritonMissing: eager is the way out where no Triton exists
    ("RuntimeError: Cannot find a working triton installation. Either the package is not "
     "installed or it is too old.", "triton", "triton", "triton-missing",
     ("suppress_errors", "eager"), "verify"),
])
def test_family_reads_its_value(text: str, klass: str, subject: str, rule: str,
                                words: tuple[str, ...], step: str) -> None:
    assert_reads(text, klass, subject, rule, words, step=step)


@pytest.mark.parametrize(("text", "step"), [
    # BytesWarning in the user's own code, or only a warning printed (no -bb)
    (_BYTES.format(path="/home/me/bench/cache_key.py", func="key", kind="bytes"), "verify"),
    ("/root/triton/python/triton/backends/amd/compiler.py:231: BytesWarning: str() on a bytes "
     "instance", "verify"),
    # a 403 that is not a dated PyTorch nightly (a private index wanting credentials)
    ("ERROR: HTTP error 403 while getting https://pkgs.example.com/simple/torch/"
     "torch-2.4.0%2Brocm6.1-cp310-cp310-linux_x86_64.whl (from https://pkgs.example.com/"
     "simple/torch/)", "venv"),
    (_HTTP.format(code=403, variant="rocm6.2", project="torch",
                  wheel="torch-2.5.1%2Brocm6.2-cp310-cp310-linux_x86_64.whl"), "venv"),
    # uv's wrapped continuation without its first half
    ("      tag (e.g., `win_amd64`) and you require torch, we can", "venv"),
    # uv swapping versions within ROCm builds, or a plain package swap
    (" - torch==2.7.0+rocm6.3\n + torch==2.7.1+rocm6.3", "venv"),
    (" - numpy==2.2.0\n + numpy==1.26.4", "venv"),
    # pip replacing a CUDA torch (an NVIDIA machine), or a ROCm torch with a ROCm torch
    (_PIP_SWAP.format(old="2.6.0+cu124", new="2.7.1"), "venv"),
    (_PIP_SWAP.format(old="2.6.0+rocm6.2.4", new="2.7.1+rocm6.3"), "venv"),
    # a CUDA install line on a machine with no ROCm torch
    ("Installing torch==2.3.1+cu121 torchvision==0.18.1+cu121", "venv"),
    # a package's own compiled part missing, a private module, a dotted submodule
    (_RUNTIME.format(pkg="flash_attn", module="flash_attn_2_cuda"), "verify"),
    (_RUNTIME.format(pkg="mypkg", module="_mypkg_ext"), "verify"),
    ("DEBUG ROCm platform probe: No module named 'libtpu'", "verify"),
])
def test_look_alike_claims_nothing(text: str, step: str) -> None:
    assert explain_text(text, step=step).klass is None
