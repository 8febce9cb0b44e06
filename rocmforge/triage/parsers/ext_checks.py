"""Extension builds' own preconditions: what an extension's setup.py (flash-attention, xformers,
DeepSpeed), vLLM's CMake and torch.utils.cpp_extension's JIT build stop on before compiling
anything, when the source tree, the C++ compiler, a supported Python or torch is not there.

Owns: the rules for those raised messages, each read from the program's source and reproduced
by tests/failures/make/devext6.sh. Must not: hold the GPU-target and ROCm-root checks
(extension_setup.py), the ABI of an installed extension (extension_abi.py), cpp_extension's own
messages with a fixed answer (config/diagnostics.toml: ninja missing, CUDA_HOME), or the
compilers' and linkers' own messages.
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

FLASH_ATTENTION_SETUP = ("Dao-AILab/flash-attention@0251105a2fb19d2957484b7f023cd8c115286ced:"
                         "setup.py")
XFORMERS_SETUP = "facebookresearch/xformers@ca6d2aa0d43241fc8a8dcd872debc2406160160d:setup.py"
DEEPSPEED = "deepspeedai/DeepSpeed@edaa7221267243c7be7fb49c5d5f5c4fb97b4641"
VLLM_UTILS = "ROCm/vllm@f8c9a385233a8e1f724411785a1c326006640df5:cmake/utils.cmake"
CPP_EXTENSION = ("pytorch/pytorch@cf30153c4c131c8164ee7798e5022d810682e2cb:"
                 "torch/utils/cpp_extension.py")

_SUBMODULE_FIX = ("in a git clone, fetch its submodules (`git submodule update --init "
                  "--recursive`, or clone again with `git clone --recursive`); an archive of the "
                  "repository (a GitHub tarball, `git archive`) carries no submodules, so build "
                  "from a clone or from the project's source distribution (sdist) instead")


def _submodule(match: re.Match[str], view: LineView) -> Reading | None:
    """xformers' "<NAME> submodule not found [at <path>]" and flash-attention's "<path> is
    missing, please use source distribution or git clone": the folder names the submodule."""
    path = (match.group("path") or match.group("spath") or "").rstrip("/")
    name = match.group("name") or path.rsplit("/", 1)[-1]
    if not name:
        return None
    where = f" ({path})" if path else ""
    return Reading(
        subject=name.lower(),
        cause=f"the extension's setup.py checks for its vendored {name} sources{where} before "
              f"building and they are not in the source tree: {name} is a git submodule that "
              "was not checked out (a clone without --recursive, or an unpacked archive, which "
              "never carries submodules)",
        fix=_SUBMODULE_FIX)


def _deepspeed_no_torch(match: re.Match[str], view: LineView) -> Reading | None:
    op = match.group("op")
    what = f"the {op} op" if op else "its ops"
    return Reading(
        subject="torch",
        cause=f"DeepSpeed's setup.py was asked to pre-compile {what} (DS_BUILD_OPS=1 or a "
              "DS_BUILD_<OP>=1) and could not import torch in the Python that ran it: pip "
              "built DeepSpeed in an isolated environment without your torch (build "
              "isolation), or torch is not installed in this Python",
        fix="install your ROCm torch first, then build DeepSpeed against it without isolation "
            "(`DS_BUILD_OPS=1 pip install --no-build-isolation deepspeed`, or `pip install "
            "--no-build-isolation .` in its source tree)")


def _jit_compiler_missing(match: re.Match[str], view: LineView) -> Reading | None:
    # ninja's `FAILED: <object>` and the command it ran, then the shell's word on that command.
    tool = match.group("tool")
    if len(view.previous) < 2 or not view.previous[-2].startswith("FAILED: ") \
            or not view.previous[-1].startswith(f"{tool} "):
        return None
    return Reading(
        subject=tool,
        cause=f"torch.utils.cpp_extension built the extension with ninja, which ran the C++ "
              f"compiler `{tool}` (cpp_extension's default, or the CXX variable), and the shell "
              "found no program of that name on PATH: no C++ compiler is installed here, or "
              "PATH does not reach it",
        fix=f"install a C++ compiler (Debian/Ubuntu: `apt install g++`; Fedora: `dnf install "
            f"gcc-c++`), or set CXX to one that is installed (CXX=g++-12); `{tool} --version` "
            "must work in the shell that runs the build")


def _vllm_python(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block != "error":
        return None
    version = match.group("ver")
    return Reading(
        subject="python",
        cause=f"vLLM's CMake (find_python_from_executable) builds only for the Python versions "
              f"its CMakeLists lists, and the Python it was given (VLLM_PYTHON_EXECUTABLE, the "
              f"interpreter that runs its setup.py) is {version}, which is not one of them",
        fix="build with a Python from the list the message prints: make the venv with it "
            "(`python3.12 -m venv`), install the ROCm torch into that venv and build vLLM from "
            f"there; or use a vLLM release whose CMakeLists lists Python {version}")


RULES: tuple[Rule, ...] = (
    # The raised exception only: the same words in a script's echo or a comment prove nothing.
    Rule(id="extension-submodule-missing", klass="missing-component",
         triggers=("submodule not found", "is missing, please use source distribution"),
         pattern=rx(r"^\s*(?:RuntimeError|AssertionError): (?:(?P<name>[\w.-]+) submodule not "
                    r"found(?: at (?P<spath>\S+?))?\.? Did you forget to run .?git submodule "
                    r"update|(?P<path>[\w./-]+) is missing, please use source distribution or "
                    r"git clone)"),
         read=_submodule,
         source=f"{XFORMERS_SETUP} (get_extensions: 'CUTLASS submodule not found at …', "
                f"'flashattention submodule not found'); {FLASH_ATTENTION_SETUP} (the asserts "
                "'csrc/cutlass is missing, please use source distribution or git clone', the "
                "same for csrc/composable_kernel and third_party/aiter)"),
    # Only inside cpp_extension's build (its "Error building extension" after): the shell's
    # generic "not found" is build_tools.py's, which leaves compilers to their own families.
    Rule(id="extension-jit-compiler-missing", klass="host-compiler",
         triggers=(": not found",),
         pattern=rx(r"^(?:/(?:usr/)?bin/)?sh: (?:\d+: )?(?P<tool>c\+\+|g\+\+(?:-\d+)?|"
                    r"clang\+\+(?:-\d+)?): not found$"),
         requires=rx(r"Error building extension '"),
         read=_jit_compiler_missing,
         source=f"{CPP_EXTENSION} (get_cxx_compiler: os.environ.get('CXX', "
                "'c++'); _run_ninja_build: \"Error building extension '…'\"); dash's '<sh>: "
                "<n>: <prog>: not found' (Debian 12, reproduced)"),
    Rule(id="vllm-python-version-unsupported", klass="python-packaging",
         triggers=("is not one of the supported versions",),
         pattern=rx(r"^Python version \((?P<ver>\d+\.\d+)\) is not one of the supported "
                    r"versions"),
         read=_vllm_python,
         source=f"{VLLM_UTILS} (find_python_from_executable: 'Python version (…) is not one of "
                "the supported versions: …'); its CMakeLists' PYTHON_SUPPORTED_VERSIONS"),
    Rule(id="deepspeed-precompile-without-torch", klass="python-packaging",
         triggers=("Unable to pre-compile",),
         pattern=rx(r"^\s*AssertionError: Unable to pre-compile (?:ops without torch installed|"
                    r"(?P<op>\w+), please first install torch)"),
         read=_deepspeed_no_torch,
         source=f"{DEEPSPEED}:setup.py (the asserts on torch_available under DS_BUILD_OPS: "
                "'Unable to pre-compile ops without torch installed', 'Unable to pre-compile "
                "{op_name}, please first install torch')"),
)

