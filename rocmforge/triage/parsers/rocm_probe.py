"""ROCm's Python-side probes failing at import or test time: vLLM's platform check that finds
no ROCm, amdsmi's lookup of its native library, and `rocm-sdk test` loading a library of
TheRock's Python wheels.

Owns: the parsers (rules) for these messages; each reads its values (module, library, wheel)
out of the line and declines where the line alone does not prove the cause. Must not: read
files, run programs or pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _vllm_no_rocm_module(match: re.Match[str], view: LineView) -> Reading | None:
    module = match.group("mod").split(".")[0]
    return Reading(
        subject=module,
        cause=f"vLLM's ROCm platform check imports {module} and the import failed (no module "
              f"named '{module}' in this environment), so vLLM found no platform at all: "
              "the GPU is not the problem, the Python package vLLM probes it with is missing",
        fix=f"install the {module} Python package of the ROCm torch uses (ROCm ships it in "
            f"<rocm>/share/amd_smi: `pip install <rocm>/share/amd_smi`; with TheRock's wheels "
            f"the folder is _rocm_sdk_core/share/amd_smi), then check with `python -c 'import "
            f"{module}'`")


def _amdsmi_library(match: re.Match[str], view: LineView) -> Reading | None:
    library = match.group("lib")
    if library == "amdsmi":
        library = "libamd_smi.so"  # older amdsmi printed its package name, not the file's
    return Reading(
        subject=library,
        cause=f"the amdsmi Python package (imported by torch and vLLM on ROCm) could not load "
              f"its native library {library}: it looks where its loader knows (the ROCm install, "
              "its own folder, the working directory), and the ROCm that holds it is elsewhere "
              "(TheRock's wheels keep it in _rocm_sdk_core) or not installed",
        fix="install the amdsmi Python package from the same ROCm that holds "
            f"{library} (`pip install <rocm>/share/amd_smi`, TheRock's wheels: "
            "_rocm_sdk_core/share/amd_smi) or the amd-smi-lib package of the system ROCm, "
            "and keep one ROCm on ROCM_PATH / LD_LIBRARY_PATH")


def _sdk_library_load(match: re.Match[str], view: LineView) -> Reading | None:
    if match.group("kind") != "Windows":
        # On Linux the wheels' libraries find their siblings through RPATH ($ORIGIN), so a
        # failed load there is some other missing dependency: the OSError line of the
        # traceback names it (cannot-open-so reads that line), this line alone does not.
        return None
    path = match.group("path").replace("\\", "/")
    library = path.rsplit("/", 1)[-1]
    wheel = re.search(r"/(?P<pkg>_rocm_sdk_\w+)/", path)
    where = f" of {wheel.group('pkg')}" if wheel else ""
    return Reading(
        subject=library,
        cause=f"`rocm-sdk test` could not load {library}{where}: the library or one it "
              "depends on did not load; its dependencies sit in the other rocm-sdk wheels "
              "(rocm-sdk-core: amdhip64, amd_comgr, hiprtc), which the loader does not search "
              "unless they are loaded first, or come from another version of the wheels",
        fix=f"install rocm-sdk-core and the rocm-sdk libraries of one version from one index; "
            f"a program that loads {library} must preload the rocm-sdk libraries it depends on "
            "first (rocm_sdk.initialize_process / preload_libraries, as torch's _rocm_init "
            "does); the traceback's last line names the library that failed")


RULES: tuple[Rule, ...] = (
    Rule(id="vllm-rocm-probe-import", klass="python-packaging",
         triggers=("ROCm platform is not available because",),
         pattern=rx(r"ROCm platform is not available because: No module named "
                     r"'(?P<mod>[\w.]+)'"),
         read=_vllm_no_rocm_module, source="vllm-project/vllm vllm/platforms/__init__.py "
         "(rocm_platform_plugin: logger.debug('ROCm platform is not available because: %s'); "
         "commit not read); vllm-project/vllm#24576, #11602"),
    Rule(id="amdsmi-library", klass="import", tier=0,
         triggers=("try installing amd-smi-lib",),
         pattern=rx(r"Unable to find (?P<lib>[\w.+-]+) library try installing amd-smi-lib"),
         read=_amdsmi_library, source="ROCm/amdsmi py-interface generator ('Unable to find "
         "{library_name} library try installing amd-smi-lib from your package manager'; "
         "commit not read); pytorch/pytorch#188724"),
    Rule(id="rocm-sdk-test-library-load", klass="import",
         triggers=("testSharedLibrariesLoad",),
         pattern=rx(r"^ERROR: testSharedLibrariesLoad \(rocm_sdk\.tests\.[\w.]+\) \[Check shared "
                     r"library loads\] \(so_path=(?P<kind>\w*)Path\('(?P<path>[^']+)'\)\)"),
         read=_sdk_library_load, source="ROCm/TheRock@89553ce3:build_tools/packaging/python/"
         "templates/rocm/src/rocm_sdk/tests/{core,devel,libraries}_test.py (subTest 'Check "
         "shared library loads'; the preload of sibling wheels is for Windows, on Linux "
         "RPATH resolves them: libraries_test.py's comment); "
         "ROCm/TheRock#980"),
)
