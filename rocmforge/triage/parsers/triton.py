"""Triton at build and at run time: missing, the CUDA backend or driver chosen on ROCm,
its launcher that does not build, lld it cannot find, APIs a newer Triton removed, and a
relative <PACKAGE>_SYSPATH its setup.py cannot resolve.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _triton_import(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="triton", cause=f"torch imports {match.group('name')} from Triton, "
                   "which this Triton does not have: the installed Triton is not the one this "
                   "PyTorch commit pins", fix="install the Triton the PyTorch checkout pins "
                   "(`invoke triton.pin` names it; the build installs it; `pip install "
                   "pytorch-triton-rocm==<version>` from the ROCm index), never a PyPI `triton`")


# A fixed answer, yet a parser: its line is also the link family's `cannot find -lX`, and a
# parser tried before the link family wins that tie (a table entry, tried after every parser,
# would lose it: the triton-cuda-triton-shadows-rocm case).
def _triton_cuda_lib(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="triton", cause="Triton compiled its launcher for the CUDA backend "
                   "(it links -lcuda, from triton/third_party/cuda or backends/nvidia): the "
                   "`triton` installed is PyPI's CUDA build, which shadows the ROCm Triton "
                   "(pytorch-triton-rocm) torch needs", fix="remove the CUDA one and install the "
                   "Triton your torch pins (`pip uninstall -y triton` then `invoke install`, or "
                   "`pip install pytorch-triton-rocm==<pin>` from the ROCm index); `invoke "
                   "doctor` warns about a shadowing triton")


def _lld_missing(match: re.Match[str], view: LineView) -> Reading | None:
    where = match.group("path")
    return Reading(subject="triton", cause=f"Triton's AMD backend links its kernels with ROCm's "
                   f"ld.lld and did not find it at {where}: ROCm is not under /opt/rocm here (a "
                   "pip or TheRock SDK, a distro install), so the path it assumes is empty",
                   fix="export TRITON_HIP_LLD_PATH=<the ld.lld of your ROCm's LLVM> (for example "
                   "$(rocm-sdk path --root)/lib/llvm/bin/ld.lld, or a distro's "
                   "/usr/lib/llvm-N/bin/ld.lld), then run again")


def _triton_module_gone(match: re.Match[str], view: LineView) -> Reading | None:
    module = match.group("mod")
    user = ""
    for line in reversed(view.previous):
        found = re.search(r"(?:site|dist)-packages/(?P<pkg>[\w-]+)/", line)
        if found and found.group("pkg") != "triton":
            user = found.group("pkg")
            break
    who = user or "the package that imports it"
    return Reading(
        subject="triton", cause=f"{who} imports {module}, which the installed Triton no longer "
        "has (Triton 3.2 removed triton.ops): the package is older than the Triton that "
        "torch brings", fix=f"upgrade {who} to a release that works with the installed Triton "
        "(or pin the Triton that torch's release names)")


def _triton_ops_frame(match: re.Match[str], view: LineView) -> Reading | None:
    # The source line of a traceback frame (the log was cut before the exception line): the
    # frame above it must be a package's own file, not Triton's.
    if not view.previous or not view.previous[-1].startswith("File "):
        return None
    if re.search(r"(?:site|dist)-packages[/\\]triton[/\\]", view.previous[-1]):
        return None
    return _triton_module_gone(match, view)


_TRITON_FIX = ("install the Triton the installed torch pins (`pip install "
               "pytorch-triton-rocm==<pin>` from the torch's ROCm index; `invoke triton.pin` "
               "names the pin), never PyPI's CUDA `triton`; `pip list | grep -i triton` "
               "shows what is installed")


# xformers logs this warning with the ImportError's traceback (exc_info=True) and runs
# without its Triton kernels: facebookresearch/xformers@ca6d2aa0d43241fc8a8dcd872debc2406160160d:
# xformers/__init__.py (_is_triton_available).
_XFORMERS_OPTIONAL = "A matching Triton is not available, some optimizations will not be enabled"


def _triton_missing(match: re.Match[str], view: LineView) -> Reading | None:
    if "warning" in view.text.lower() or any(_XFORMERS_OPTIONAL in line for line in
                                             view.previous):
        return None  # an optional import that the program carries on without
    return Reading(
        subject="triton",
        cause="torch's compiler (inductor, torch.compile) needs Triton and no working Triton "
              "is installed in this Python (not installed, or too old for this torch)",
        fix=_TRITON_FIX + "; where no Triton exists for this platform (native Windows has no "
            "upstream Triton wheel), run the model eager (without torch.compile), or set "
            "torch._dynamo.config.suppress_errors = True to fall back to eager")


def _triton_attribute(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="triton",
        cause=f"code uses {match.group('mod')}.{match.group('name')}, which the installed "
              "Triton does not have: the Triton is another release than the one this torch "
              "(or package) was written for",
        fix=_TRITON_FIX)



def _triton_isa_probe(match: re.Match[str], view: LineView) -> Reading | None:
    error = match.group("err").strip()
    return Reading(
        subject="triton",
        cause="the installed Triton could not read the GPU's ISA (" + (error or "no details")
              + "): only the old ROCm fork's HIP backend (pytorch-triton-rocm 2.0/2.1 era, "
              "get_amdgpu_arch_fulldetails) prints this, so this triton is older than the one "
              "torch was built with and does not match it",
        fix=_TRITON_FIX + "; remove the old triton first (another package may pull it in "
            "again: `pip uninstall -y pytorch-triton-rocm triton`)")


# A traceback frame of a Triton source file (an installed one or a checkout's python/triton):
# the rightmost `triton/` folder starts the module path (…/triton/python/triton/backends/…).
_TRITON_FRAME = re.compile(r"^File \"(?:[^\"]*[/\\])?(?P<mod>triton[/\\](?:(?!triton[/\\])"
                           r"[^\"])+\.py)\", line \d+, in (?P<func>\w+)$")


def _bytes_warning(match: re.Match[str], view: LineView) -> Reading | None:
    # CPython turns str(bytes) (an f-string of a bytes value too) into a BytesWarning, and
    # `python -bb` into an error; the last frame of the traceback is the code that did it.
    # Only a frame in Triton's own sources makes this Triton's failure.
    frames = [line for line in view.previous if line.startswith("File ")]
    if not frames:
        return None
    frame = _TRITON_FRAME.match(frames[-1])
    if frame is None:
        return None
    module = frame.group("mod").replace("\\", "/")
    kind = match.group("kind")
    return Reading(
        subject=module,
        cause=f"Triton's {module} ({frame.group('func')}) formats a {kind} value as text; "
              f"Python run with -bb (PyTorch's test runner does) makes that BytesWarning an "
              f"error, so every Triton compile fails there",
        fix="use a triton release whose code decodes the value first (the AMD backend's hash() "
            "reads the lld version as text since triton-lang/triton#3428), or run Python "
            "without -bb")


def _relative_syspath(match: re.Match[str], view: LineView) -> Reading | None:
    # Triton's setup.py keeps each third-party package (LLVM, pybind11, json) in
    # <TRITON_HOME or HOME>/.triton/<package>/<name>, or in the folder <PACKAGE>_SYSPATH names,
    # and writes or reads version.txt there. A relative folder can only come from the
    # variable (the cache folder is built from the home folder); it resolves against the
    # directory setup.py runs in, not the one the user was in.
    folder = match.group("dir")
    if ".triton" in folder:
        return None  # the cache folder under a relative TRITON_HOME: not this variable
    llvm = "llvm" in folder.lower()
    variable = "LLVM_SYSPATH" if llvm else "the <PACKAGE>_SYSPATH variable"
    what = ("the LLVM build or install of the commit in Triton's cmake/llvm-hash.txt, with "
            "LLVM_INCLUDE_DIRS and LLVM_LIBRARY_DIR absolute too" if llvm else
            "the package's folder (PYBIND11_SYSPATH, JSON_SYSPATH)")
    return Reading(
        subject="triton",
        cause=f"Triton's setup.py looked for {folder}/version.txt, a relative folder given in "
              f"{variable}: setup.py runs in another directory (python/, or pip's build "
              "folder), where that path does not exist",
        fix=f"give {variable} as an absolute path (`realpath {folder}` prints it) to "
            f"{what}, then build again")


def _hip_symbol_missing(match: re.Match[str], view: LineView) -> Reading | None:
    # Triton's AMD launcher (hip_utils) resolves each HIP function it uses from the
    # libamdhip64.so it loaded, by dlsym (older releases) or hipGetProcAddress (newer): a name
    # it cannot resolve means that HIP runtime is older than the Triton, or not AMD's.
    name = match.group("sym") or match.group("sym2")
    return Reading(
        subject="triton",
        cause=f"Triton's AMD launcher could not find {name} in the libamdhip64.so it loaded: "
              "that HIP runtime is older than this Triton expects (or not AMD's own), so "
              "Triton and the ROCm runtime do not match",
        fix="install the Triton that the installed torch pins (pytorch-triton-rocm of the "
            "same torch release, from the same ROCm index), not a newer PyPI `triton` pulled "
            f"in by another package; or use a ROCm whose HIP runtime has {name} "
            "(TRITON_LIBHIP_PATH names the libamdhip64.so Triton loads)")


RULES: tuple[Rule, ...] = (
    Rule(id="triton-relative-syspath", klass="triton",
         triggers=("version.txt",),
         pattern=rx(r"No such file or directory: '(?P<dir>(?![/\\~]|[A-Za-z]:)[^']+?)[/\\]"
                    r"version\.txt'"),
         requires=rx(r"syspath_var_name=|oaitriton\.blob\.core\.windows\.net"),
         read=_relative_syspath, source="triton-lang/triton@e179241f81c5d92f5fa1dd7eb89beff7e"
         "3d8c41b:python/setup.py (get_thirdparty_packages: package_dir is "
         "os.environ[<PACKAGE>_SYSPATH] when set, else <home>/.triton/<package>/<name>; "
         "version.txt read and written there); "
         "triton-lang/triton#4463, #4464"),
    Rule(id="triton-cuda-backend", klass="triton",
         triggers=("cannot find -lcuda",),
         pattern=rx(r"cannot find -lcuda\b(?!\w)"),
         requires=rx(r"triton/(?:third_party/cuda|backends/nvidia)"),
         read=_triton_cuda_lib, source="ROCm/pytorch#1251"),
    Rule(id="triton-import", klass="triton",
         triggers=("from 'triton",),
         pattern=rx(r"cannot import name '(?P<name>\w+)' from 'triton[\w.]*'"),
         read=_triton_import, source="PyTorch's Triton pin"),
    Rule(id="triton-lld-missing", klass="triton",
         triggers=("TRITON_HIP_LLD_PATH",),
         pattern=rx(r"ROCm linker (?P<path>\S+) not found\. Set 'TRITON_HIP_LLD_PATH'"),
         read=_lld_missing, source="triton-lang/triton third_party/amd/backend/compiler.py "
         "(path_to_rocm_lld); ROCm/TheRock#2006"),
    Rule(id="triton-module-removed", klass="triton",
         triggers=("No module named 'triton.",),
         pattern=rx(r"No module named '(?P<mod>triton\.[\w.]+)'"),
         read=_triton_module_gone, source="pytorch/pytorch#143718 (triton.ops removed in "
         "Triton 3.2)"),
    Rule(id="triton-ops-import-frame", klass="triton",
         triggers=("triton.ops",),
         pattern=rx(r"^(?:from|import) (?P<mod>triton\.ops)\b"),
         requires=rx(r"^Traceback \(most recent call last\):"),
         unless=rx(r"(?:site|dist)-packages[/\\]triton[/\\]"),
         read=_triton_ops_frame, source="the Triton 3.4.0 wheel installed here "
         "(/opt/rf-triton-3.4.0) has no triton/ops; pytorch/pytorch#143718 (triton.ops "
         "removed in Triton 3.2); lamikr/rocm_sdk_builder#202 (the frame, cut before the "
         "exception)"),
    Rule(id="triton-missing", klass="triton",
         triggers=("No module named 'triton'", "Cannot find a working triton installation"),
         pattern=rx(r"No module named 'triton'\s*$|Cannot find a working triton installation"),
         read=_triton_missing, source="torch._inductor.exc.TritonMissing (\"Cannot find a "
         "working triton installation\"); Python's import error"),
    Rule(id="triton-attribute", klass="triton",
         triggers=("module 'triton",),
         pattern=rx(r"module '(?P<mod>triton(?:\.\w+)*)' has no attribute '(?P<name>\w+)'"),
         read=_triton_attribute, source="Python's AttributeError on a Triton module (a "
         "Triton/torch release mismatch)"),
    Rule(id="triton-bytes-warning", klass="triton",
         triggers=("BytesWarning",),
         pattern=rx(r"^BytesWarning: str\(\) on a (?P<kind>bytes|bytearray) instance$"),
         read=_bytes_warning, source="CPython Objects/bytesobject.c and bytearrayobject.c "
         "(\"str() on a bytes instance\", \"str() on a bytearray instance\"; reproduced "
         "here: `python3 -bb -c \"v=b'1'; f'{v}'\"` prints it); ROCm/triton@4a7afd262352be86c"
         "f2a10ef379469febaccf1bf:third_party/amd/backend/compiler.py (hash() now runs lld "
         "--version with encoding='utf-8'); triton-lang/triton#3428"),
    Rule(id="triton-hip-symbol-missing", klass="triton",
         triggers=("from libamdhip64.so",),
         pattern=rx(r"cannot get address for '(?P<sym>\w+)' from libamdhip64\.so"
                    r"|cannot query '?(?P<sym2>hip\w+)'? from libamdhip64\.so"),
         read=_hip_symbol_missing, source="ROCm/triton@4a7afd262352be86cf2a10ef379469febacc"
         "f1bf:third_party/amd/backend/driver.c (initSymbolTable: dlsym each HIP function, "
         "\"cannot query <name> from libamdhip64.so\"); triton-lang/triton "
         "third_party/amd/backend/driver.c (stored copy, commit not established: "
         "hipGetProcAddress each, \"cannot get address for '<name>' from libamdhip64.so\", "
         "and \"cannot query 'hipGetProcAddress' from libamdhip64.so\"); hiyouga/LlamaFactory"
         "#10511; TRITON_LIBHIP_PATH: ROCm/triton@4a7afd26:third_party/amd/backend/driver.py"),
    Rule(id="triton-rocm-isa-probe", klass="triton",
         triggers=("Attempting to get amgpu ISA Details",),
         pattern=rx(r"Error: Attempting to get amgpu ISA Details(?P<err>.*)$"),
         read=_triton_isa_probe, source="triton-lang/triton@fa401cf02cee4a70a70cb5891084f4c097c2"
         "27c7:python/triton/third_party/hip/hip_backend.py (get_amdgpu_arch_fulldetails: "
         "print(\"Error: Attempting to get amgpu ISA Details {}\") on any exception, then "
         "None); pytorch/pytorch#101137"),
)
