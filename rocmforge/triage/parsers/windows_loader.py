"""Windows' DLL loader as Python and torch report it: LoadLibrary's WinError codes (126 a DLL
or its dependency missing, 127 a function missing, 193 a DLL of another architecture, 1114 its
initialization failed) with torch's 'Error loading "<dll>"', and CPython's "DLL load failed
while importing".

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Must not: read files, run programs or pick between findings
(the engine does). The Linux loader (dlopen's errors) is loader.py's.
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _windows_torch_dll(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject=match.group("dll"), cause=f"Windows could not load {match.group('dll')} or a "
        "DLL it needs (the HIP runtime amdhip64_N.dll of the rocm_sdk packages): another "
        "amdhip64 (the display driver's, in System32) was loaded first, or the rocm_sdk "
        "packages that match torch are not installed",
        fix="import torch before any package that loads HIP itself (triton, for one): torch "
            "sets up the rocm_sdk DLL folders on import; and install the rocm[libraries] "
            "packages torch was built with")


# What LoadLibrary's error code says about the DLL torch (or a package) named, by the code:
# Python prints the system's text in the UI language ("[WinError 1114] 动态链接库(DLL)初始化例程
# 失败。", "[WinError 127] La procédure spécifiée est introuvable."), torch appends its English
# 'Error loading "<dll>" or one of its dependencies.' A log can cut the "[WinError N]" prefix;
# then only the English text tells the code.
_WINDOWS_CODE_TEXT = {"126": "The specified module could not be found.",
                      "127": "The specified procedure could not be found.",
                      "193": "is not a valid Win32 application.",
                      "1114": "A dynamic link library (DLL) initialization routine failed.",
                      "1455": "The paging file is too small for this operation to complete."}


def _windows_dll(match: re.Match[str], view: LineView) -> Reading | None:
    dll = match.group("dll")
    code = match.group("code") or next(
        (key for key, text in _WINDOWS_CODE_TEXT.items() if text in match.group(0)), "126")
    if code == "126" and dll.lower() in ("torch_hip.dll", "c10_hip.dll"):
        return None  # the windows-torch-dll rule names the Triton/driver cause for these
    if code == "1114" and _GPU_DLL.search(dll):
        # The initializer of a GPU backend DLL (torch's c10_hip/torch_hip, the HIP runtime)
        # runs that backend's own start-up code: its failure is not the MSVC runtime's that
        # the known 1114 reports (c10.dll, a CPU DLL) show, and the line names no other
        # cause (a static-initialization bug of that torch build did it in TheRock#1155).
        return None
    return _by_code(dll, code)


# A DLL whose initializer starts a GPU backend: torch's *_hip / *_cuda DLLs, the HIP runtime.
_GPU_DLL = re.compile(r"(?:_hip|_cuda|^amdhip\d*)\.dll$", re.IGNORECASE)


def _llvm_cannot_open(match: re.Match[str], view: LineView) -> Reading | None:
    # LLVM's DynamicLibrary on Windows: "<file>: Can't open" + MakeErrMsg's ": <system text>
    # (0x<GetLastError() in hex>)". The code, not the text (the UI language), says what failed;
    # without the code (an LLVM that does not append it), only the English text tells it.
    hexcode = match.group("hex")
    code = (str(int(hexcode, 16)) if hexcode else
            next((key for key, text in _WINDOWS_CODE_TEXT.items()
                  if text.rstrip(".") in match.group(0)), ""))
    if code not in _WINDOWS_CODE_TEXT:
        return None  # another error (access denied, a path too long): no claim
    return _by_code(match.group("dll"), code)


def _ctypes_not_found(match: re.Match[str], view: LineView) -> Reading | None:
    # CPython's ctypes on Windows raises this FileNotFoundError for ERROR_MOD_NOT_FOUND (126)
    # only; the name is what the program passed (a bare name or a full path).
    full = match.group("name").replace("/", "\\")
    name = full.rsplit("\\", 1)[-1]
    if not name.lower().endswith(".dll"):
        return None  # a module named without its file (ctypes.util lookups): not read
    release = _release_dll(name, full, view.text)
    return release if release is not None else _by_code(name, "126")


# The HIP SDK for Windows names its runtime compiler DLL by release, hiprtc0<major><minor 2
# digits>.dll (hiprtc0507.dll for 5.7, hiprtc0605.dll for 6.5), and installs into
# <Program Files>\AMD\ROCm\<major>.<minor>\bin.
_HIPRTC_RELEASE = re.compile(r"^hiprtc0(?P<major>\d)(?P<minor>\d\d)\.dll$", re.IGNORECASE)
_SDK_FOLDER = re.compile(r"\\ROCm\\(?P<major>\d+)\.(?P<minor>\d+)\\bin\\", re.IGNORECASE)


def _release_dll(name: str, full: str, text: str) -> Reading | None:
    wanted, folder = _HIPRTC_RELEASE.match(name), _SDK_FOLDER.search(full)
    if wanted is None or folder is None:
        return None
    want = f"{int(wanted.group('major'))}.{int(wanted.group('minor'))}"
    have = f"{int(folder.group('major'))}.{int(folder.group('minor'))}"
    if want == have:
        return None  # the right release's folder lacks its own DLL: the plain reading
    program = "ZLUDA" if "ZLUDA" in text else "the program that loads it"
    return Reading(
        subject=name,
        cause=f"{program} was built for HIP SDK {want} and loads that release's runtime "
              f"compiler {name}, but it looks in the folder of HIP SDK {have}, which ships "
              f"only its own release's hiprtc DLL: the build and the installed HIP SDK are "
              "of different releases",
        fix=f"use the build of {program} made for HIP SDK {have} (for ZLUDA, the release "
            f"built for HIP SDK {folder.group('major')}.x; delete the old copy it keeps, such "
            f"as a .zluda folder, so it is fetched again), or install HIP SDK {want} next to it")


def _by_code(dll: str, code: str) -> Reading:
    if code == "127":
        return Reading(
            subject=dll,
            cause=f"Windows found {dll} and its DLLs, but one of them lacks a function it "
                  "imports (WinError 127): two builds are mixed, an older DLL of the same name "
                  "found first on the search path (another torch or ROCm install, an old copy "
                  "left in the package folder, an old MSVC runtime)",
            fix="uninstall the package, delete what is left of its folder (torch\\lib), and "
                "reinstall it in a clean environment; install the latest Visual C++ "
                "redistributable; `where <name>.dll` shows which copy Windows finds first")
    if code == "193":
        return Reading(
            subject=dll,
            cause=f"{dll} or a DLL it loads is not a 64-bit Windows DLL this Python can load "
                  "(WinError 193): a 32-bit Python, a DLL for another architecture, or a file "
                  "cut short by a broken download",
            fix="use a 64-bit (x64) Python and reinstall the package in it (`python -c \"import "
                "struct; print(struct.calcsize('P') * 8)\"` prints 64)")
    if code == "1455":
        # ERROR_COMMITMENT_LIMIT (winerror.h, 0x5AF): the system's commit charge (RAM plus
        # page file) is spent; torch's DLLs are large, and each DataLoader worker or extra
        # process maps them again.
        return Reading(
            subject="memory", klass="out-of-memory",
            cause=f"Windows ran out of committable memory while loading {dll} (WinError 1455: "
                  "the page file is too small): RAM plus page file cannot back the large torch "
                  "and ROCm DLLs once more, often because several processes (DataLoader "
                  "workers, a second UI) each load them",
            fix="let Windows manage the page file size, or enlarge it (System > Advanced > "
                "Performance > Virtual memory) on a drive with free space, then restart; "
                "fewer processes loading torch (num_workers=0 or a lower value) need less")
    if code == "1114":
        return Reading(
            subject=dll,
            cause=f"Windows loaded {dll} but its initialization failed (WinError 1114): the "
                  "MSVC runtime (vcruntime140/msvcp140) Windows found is older than the one "
                  "the wheel was built with, or a DLL it starts (OpenMP, the GPU runtime) "
                  "failed to start",
            fix="install the latest Visual C++ redistributable "
                "(https://aka.ms/vs/17/release/vc_redist.x64.exe), restart the shell, and "
                "import torch first, before other packages that bring their own runtime DLLs")
    return Reading(
        subject=dll,
        cause=f"Windows could not load {dll} or a DLL it depends on (WinError 126): a "
              "dependency is missing from the DLL search path (the ROCm/HIP runtime DLLs, "
              "the MSVC runtime) or comes from another install than the one it was built with",
        fix="install the MSVC runtime the wheel was built with (the latest Visual C++ "
            "redistributable; a DLL that needs OpenMP's libomp140 takes it from the MSVC build "
            "tools) and the ROCm runtime the wheel was built for (TheRock's rocm wheels in the "
            "same venv; with AMD's HIP SDK, its bin folder such as C:\\Program Files\\AMD\\"
            "ROCm\\<version>\\bin on PATH, then a new shell), then import torch before other "
            "packages; `where amdhip64*.dll` shows which runtime Windows finds first")


_IMPORT_FRAME = re.compile(r"^(?:from (?P<mod>[\w.]+) import |import (?P<mod2>[\w.]+)\s*$)")


def _dll_load_failed(match: re.Match[str], view: LineView) -> Reading | None:
    module = match.group("mod")
    if not module:
        # Python before 3.8 says "DLL load failed: <text>" without the module: the import
        # statement the traceback shows above it names it
        for line in reversed(view.previous):
            frame = _IMPORT_FRAME.match(line)
            if frame:
                module = frame.group("mod") or frame.group("mod2")
                break
        else:
            return None
    return Reading(
        subject=module,
        cause=f"Windows could not load the extension module {module} or a DLL it depends on: "
              "a dependency (the ROCm/HIP runtime DLLs, the MSVC runtime, torch's own DLLs) "
              "is missing from the DLL search path or is another build's",
        fix="install the Visual C++ redistributable and the ROCm runtime the package was built "
            "for in the same environment, import torch first, and reinstall the package built "
            "for this torch")


# Node's process.dlopen on Windows appends the file it was asked to load, as a namespaced path
# ("\\?\C:\...\x.node"), to the system's text of LoadLibrary's error; the text ends in a
# line break, so the path stands alone on the next line. ERROR_MOD_NOT_FOUND's English text
# before it: the .node file, or a DLL it links, could not be found.
def _node_addon_not_found(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path")
    if "The specified module could not be found." not in " ".join((*view.previous[-1:],
                                                                    view.text)):
        return None  # another error code's text, or none: not read
    folder, _, name = path.rpartition("\\")
    return Reading(
        subject=name,
        cause=f"Windows could not load the native module {name} (error 126, the specified "
              "module could not be found): the file, or a DLL it links (for a ROCm engine, "
              "the HIP runtime and math-library DLLs shipped beside it), is missing or "
              "incomplete",
        fix=f"install again what put {folder} there (delete that folder, or the "
            "application's downloaded runtime, and let the application download it again); "
            f"`dumpbin /dependents {name}` (or the Dependencies tool) names the DLL it "
            "cannot find")


RULES: tuple[Rule, ...] = (
    Rule(id="windows-torch-dll", klass="import",
         triggers=("WinError 126",),
         pattern=rx(r"WinError 126\].*Error loading \"\S*?(?P<dll>torch_hip\.dll|c10_hip\.dll)"),
         read=_windows_torch_dll, source="torch/__init__.py _load_dll_libraries; "
         "triton-lang/triton-windows#35"),
    Rule(id="windows-dll-load", klass="import",
         triggers=("WinError 126", "WinError 127", "WinError 193", "WinError 1114",
                   "WinError 1455", "The paging file is too small",
                   "The specified module could not be found",
                   "The specified procedure could not be found",
                   "is not a valid Win32 application",
                   "A dynamic link library (DLL) initialization routine failed"),
         pattern=rx(r"(?:WinError (?P<code>126|127|193|1114|1455)\]"
                     r"|^(?:The specified (?:module|procedure) could not be found\."
                     r"|The paging file is too small for this operation to complete\."
                     r"|%1 is not a valid Win32 application\."
                     r"|A dynamic link library \(DLL\) initialization routine failed\.)) ?.*"
                     r"Error loading \"[^\"]*?(?P<dll>[\w.+-]+\.dll)\""),
         read=_windows_dll, source="torch/__init__.py _load_dll_libraries (\"Error loading "
         "... or one of its dependencies\" appended to ctypes.WinError's text, read by code: "
         "the text is in the UI language); WinError 126: pytorch/pytorch#129568, 127: "
         "guoyww/AnimateDiff#374, bmaltais/kohya_ss#486 (French), 193: pytorch/pytorch#46592, "
         "1455: ERROR_COMMITMENT_LIMIT in Microsoft's system error code list (stored copy), "
         "patrickloeber/pytorch-chatbot#10, 1114: nagadomi/nunif#701, "
         "666ghj/BettaFish#124 (Chinese)"),
    Rule(id="windows-dll-cannot-open", klass="import",
         triggers=("Can't open: ",),
         pattern=rx(r"(?P<dll>[\w.+-]+\.dll): Can't open: .*?(?:\(0x(?P<hex>[0-9A-Fa-f]{1,8})\)"
                     r"|$)"),
         read=_llvm_cannot_open, source="llvm/llvm-project llvm/lib/Support/Windows/"
         "DynamicLibrary.inc (\"<file>: Can't open\") and WindowsSupport.h MakeErrMsg (\": "
         "<FormatMessage text> (0x<GetLastError() hex>)\"; stored copies, commit not read); "
         "ROCm/TheRock#1552 (amdhip64.dll, 0x7E)"),
    Rule(id="ctypes-dll-not-found", klass="import",
         triggers=("Could not find module '",),
         pattern=rx(r"Could not find module '(?P<name>[^']+)' \(or one of its dependencies\)"),
         read=_ctypes_not_found, source="CPython Modules/_ctypes/callproc.c load_library "
         "(FileNotFoundError \"Could not find module '%.500S' (or one of its dependencies). Try "
         "using the full path with constructor syntax.\" for ERROR_MOD_NOT_FOUND; stored copy, "
         "commit not read); ROCm/amdsmi#12, ROCm/legacy-rocm-build#2662; a hiprtc DLL of "
         "another HIP SDK release: the names hiprtc0<MMNN>.dll in ROCm/TheRock@89553ce3:"
         "build_tools/packaging/python/templates/rocm/src/rocm_sdk/_dist_info.py ('hiprtc0*."
         "dll') and math-libs/CMakeLists.txt (hiprtc0605.dll), Nerogar/OneTrainer#911"),
    Rule(id="node-addon-not-found", klass="import",
         triggers=("\\\\?\\",),
         pattern=rx(r"(?:^|could not be found\.\s*)\\\\\?\\(?P<path>[A-Za-z]:\\\S+?\.node)\s*$"),
         read=_node_addon_not_found, source="nodejs/node src/node_binding.cc DLOpen (on "
         "_WIN32 the error is the loader's text with the file name appended: \"Windows needs "
         "to add the filename into the error message\"; stored copies, commit not "
         "established); lmstudio-ai/lmstudio-bug-tracker#711"),
    Rule(id="dll-load-failed", klass="import",
         triggers=("DLL load failed",),
         pattern=rx(r"DLL load failed while importing (?P<mod>[\w.]+)|ImportError: DLL load "
                     r"failed: "),
         read=_dll_load_failed, source="CPython's Windows extension loader "
         "(Python/dynload_win.c; before 3.8 \"DLL load failed: <text>\" without the module: "
         "pytorch/pytorch#9263), the module then read from the traceback's import line"),
)
