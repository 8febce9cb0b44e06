"""The Windows (COFF) linkers, MSVC's link.exe and lld-link: the checks that inputs agree
(/failifmismatch and LNK2038, where one input was built Debug and another Release or with
another C runtime; LNK1112 and lld-link's machine type conflict), and a file they cannot open
(LNK1104, lld-link's "could not open"), read by what the file is; and a torch function
imported from torch's DLLs that its import library does not export (link.py asks).

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Must not: read files, run programs or pick between findings
(the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import Alias, LineView, Reading, Rule, rx
from rocmforge.triage.symbols import symbol_name

_MISMATCH_HEAD = re.compile(r"/failifmismatch: mismatch detected for '(?P<key>[^']+)':$")
_MISMATCH_SIDE = re.compile(r"(?:^|\s)(?:>>> )?(?P<input>\S+) has value (?P<value>\S*)$")
_ARCHIVE_MEMBER = re.compile(r"^(?P<lib>[^()]+\.lib)\(")


def _fail_if_mismatch(match: re.Match[str], view: LineView) -> Reading | None:
    lines = [line for line in view.previous[-4:] if line]
    if len(lines) < 2:
        return None
    head, first = _MISMATCH_HEAD.search(lines[-2]), _MISMATCH_SIDE.search(lines[-1])
    if head is None or first is None:
        return None  # not the second input of lld-link's three-line message
    key = head.group("key")
    sides = ((first.group("input"), first.group("value")),
             (match.group("input"), match.group("value")))
    archives = [m.group("lib") for m in (_ARCHIVE_MEMBER.match(i) for i, _ in sides) if m]
    odd = archives[0] if len(archives) == 1 else sides[1][0]
    (a, va), (b, vb) = sides
    return Reading(
        subject=odd,
        cause=f"lld-link refuses to link objects that record different {key} values "
              f"({a}: {va}, {b}: {vb}): they were compiled with different MSVC settings "
              "(Debug against Release: iterator debug level, C runtime library), and "
              f"{odd} is the input built the other way",
        fix=f"build {odd} with the same build type and runtime library as the rest "
            "(CMAKE_BUILD_TYPE, CMAKE_MSVC_RUNTIME_LIBRARY; a bundled dependency such as "
            "googletest often keeps its own), then link again from a clean build folder")



def _lnk2038(match: re.Match[str], view: LineView) -> Reading | None:
    key, here, there = match.group("key"), match.group("input"), match.group("other")
    lib = _ARCHIVE_MEMBER.match(here)
    odd = lib.group("lib") if lib else here
    return Reading(
        subject=odd,
        cause=f"MSVC's linker refuses to link objects that record different {key} values "
              f"({here}: {match.group('v1')}, {there}: {match.group('v2')}, LNK2038): they "
              "were compiled with different settings (Debug against Release, /MT against /MD, "
              "or another compiler version)",
        fix=f"build {odd} with the same build type and runtime library as the rest "
            "(CMAKE_BUILD_TYPE, CMAKE_MSVC_RUNTIME_LIBRARY or /MD against /MT), then link again "
            "from a clean build folder")


def _machine_conflict(found: re.Match[str], view: LineView) -> Reading | None:
    match = Alias(found, input="input2", have="have2", want="want2")
    obj, have, want = match.group("input"), match.group("have"), match.group("want")
    lib = _ARCHIVE_MEMBER.match(obj)
    odd = lib.group("lib") if lib else obj
    return Reading(
        subject=odd,
        cause=f"{obj} was built for the {have} machine type but the link makes a binary for "
              f"{want}: objects or libraries of two architectures are mixed (a 32-bit "
              "compiler environment, a library built for another architecture)",
        fix=f"build from an environment for {want} (for x64: the x64 Native Tools prompt, or "
            f"`vcvarsall.bat x64`), rebuild {odd} for {want} from a clean build folder, or use "
            f"the {want} build of that library")


# Libraries of the MSVC toolset and of the Windows SDK: the link finds them through LIB, which
# vcvarsall.bat sets; a link that lacks them ran outside a developer environment.
_TOOLSET_LIBS = frozenset((
    "libcmt", "libcmtd", "msvcrt", "msvcrtd", "libcpmt", "libcpmtd", "msvcprt", "msvcprtd",
    "oldnames", "libvcruntime", "libvcruntimed", "vcruntime", "vcruntimed", "libucrt",
    "libucrtd", "ucrt", "ucrtd", "kernel32", "user32", "advapi32", "shell32", "ole32",
    "oleaut32", "uuid", "ws2_32", "gdi32", "comdlg32", "winspool", "dbghelp", "delayimp"))
# Unix libraries whose functions MSVC's C runtime holds: there is no <name>.lib to link.
_UNIX_LIBS = frozenset(("m", "dl", "pthread", "rt"))
_PYTHON_LIB = re.compile(r"^python3\d*(?:_d)?$", re.IGNORECASE)
_OUTPUT_SUFFIX = (".exe", ".dll", ".pyd", ".pdb", ".ilk", ".node")


def _cannot_open(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path") or match.group("path2")
    if match.group("why") and "no such file" not in match.group("why").lower():
        return None  # lld-link could not open it for another reason: not read
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    lower = name.lower()
    if lower.endswith(_OUTPUT_SUFFIX):
        if match.group("path2"):
            return None  # lld-link's input of that kind: no claim
        return Reading(
            subject=name,
            cause=f"MSVC's linker could not open {name}, a file it writes (LNK1104): the "
                  "previous build of it is still in use (a running program or Python process "
                  "that loaded it, a debugger) or a virus scanner holds it",
            fix=f"close what uses {name} (a Python that imported the extension, the program, "
                "the debugger), wait for or exclude the build folder from the virus scanner, "
                "then build again")
    if not lower.endswith(".lib"):
        return None
    stem = name[:-4]
    linker = "lld-link" if match.group("path2") else "MSVC's linker (LNK1104)"
    if stem.lower() in _TOOLSET_LIBS:
        return Reading(
            subject=stem,
            cause=f"{linker} cannot find {name}, a library of the MSVC toolset or the Windows "
                  "SDK: the link ran without the Visual C++ environment (LIB does not list "
                  "their folders), or those components are not installed",
            fix="run the build from the x64 Native Tools Command Prompt (or after `vcvarsall.bat "
                "x64`), with the Visual Studio C++ build tools and a Windows SDK installed "
                "(the Visual Studio Installer's 'Desktop development with C++')")
    if stem.lower() in _UNIX_LIBS:
        return Reading(
            subject=stem,
            cause=f"{linker} cannot find {name}: the build links the Unix library lib{stem} "
                  "(-l" + stem + "), which does not exist for MSVC: its functions are in the "
                  "C runtime; a build script written for Linux, or CMake finding a lib" + stem
                  + " of another toolchain on PATH (w64devkit, MSYS2), added it",
            fix=f"do not link {stem} on Windows (guard it with `if(NOT WIN32)` in CMake, or "
                "drop it from the extension's libraries), take other toolchains off PATH, and "
                "configure again from a clean build folder")
    if _PYTHON_LIB.match(stem):
        return Reading(
            subject=stem,
            cause=f"{linker} cannot find {name}, the import library of the Python the "
                  "extension is built for: that Python has no libs folder (an embeddable or "
                  "stripped install), or the link path does not name it",
            fix=f"build with a full Python install whose libs folder holds {name} (python.org's "
                "installer, conda), or add that folder to the link path (LIB, or "
                "`build_ext --library-dirs`)")
    return Reading(
        subject=stem,
        cause=f"{linker} cannot find {name} on its library path: the library was not built or "
              "installed, or its folder is not on the link path (LIB, /LIBPATH)",
        fix=f"build or install {stem} and add its folder to the link path (LIB, /LIBPATH:, or "
            "the target's link directories), then link again")


def _export_limit(match: re.Match[str], view: LineView) -> Reading | None:
    count = f" ({match.group('got')})" if match.group("got") else ""
    return Reading(
        subject="exports",
        cause=f"the DLL being linked exports more symbols{count} than the 65,535 a Windows "
              "import library and export table hold: the build exports every symbol of a "
              "large library (CMake's WINDOWS_EXPORT_ALL_SYMBOLS, a .def file made from all "
              "objects)",
        fix="export only the library's API (dllexport or an explicit .def instead of exporting "
            "all symbols), or split the library into several DLLs, then link again")


def _image_too_large(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="image-size",
        cause=f"the linked image would be {match.group('size')} bytes, more than the "
              f"{match.group('limit')} a Windows executable or DLL (PE format) may be",
        fix="make the binary smaller: in a ROCm build each GPU target's device code is "
            "embedded in the DLL, so build for the targets you use only (`invoke build --arch "
            "gfx1100`; PYTORCH_ROCM_ARCH), and drop debug information from the link (a Release "
            "build); or split the library into several DLLs")


def _bad_input(match: re.Match[str], view: LineView) -> Reading | None:
    path = (match.group("dll") or match.group("file") or match.group("file2")
            or match.group("file3") or "")
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    linker = "MSVC's linker (LNK1107)" if match.group("file") else "lld-link"
    if name.lower().endswith(".dll"):
        stem = name[:-4]
        return Reading(
            subject=stem,
            cause=f"{linker} was given the DLL {name} to link against: a link takes a DLL's "
                  f"import library ({stem}.lib), not the DLL itself",
            fix=f"link {stem}.lib instead (the SDK or package that ships {name} has it in its "
                f"lib folder); in CMake, an IMPORTED target's IMPORTED_IMPLIB names it")
    if match.group("file"):
        return Reading(
            subject=name,
            cause=f"{linker} could not read {name}: the file is cut short or damaged (a build "
                  "or download that stopped), or a file of another type was put on the link "
                  "line",
            fix=f"delete {name} and build it again from a clean build folder (or fetch it "
                "again); pass the linker only .obj, .lib and .res files")
    return Reading(
        subject=name,
        cause=f"lld-link does not recognize {name} as a Windows (COFF) object or library: it "
              "was built by another toolchain or for another system (an ELF object of a Linux "
              "build, a leftover of an earlier build in the same folder)",
        fix=f"rebuild {name} with the Windows compiler from a clean build folder, or use the "
            "library's Windows (MSVC) build")

_TORCH_NAMESPACES = ("c10::", "at::", "torch::", "caffe2::")


def torch_import(match: re.Match[str]) -> Reading | None:
    """A torch function the headers declare as imported from torch's DLLs (C10_API, TORCH_API:
    __declspec(dllimport), the __imp_ thunk) that torch's import library does not export, in
    MSVC's or lld-link's unresolved external (link.py's linker-undefined-symbol); None for any
    other symbol. ROCm/TheRock#2733 (dumpbin /linkermember of the ROCm wheel's c10.lib lacks
    c10::ValueError's constructor), #1687."""
    raw = (match.group("sym") or match.group("sym2") or "").strip()
    name = symbol_name(raw).removeprefix("__imp_")
    if not name.startswith(_TORCH_NAMESPACES) or not (
            "__declspec(dllimport)" in raw or "__imp_" in raw):
        return None
    linker = match.groupdict().get("linker") or "MSVC's link.exe"
    library = ("c10_hip.lib" if name.startswith("c10::hip::") else
               "c10.lib" if name.startswith("c10::") else
               "torch_cpu.lib or torch_hip.lib")
    return Reading(
        subject=name,
        cause=f"the linker ({linker}) found no export of {name} in torch's import libraries: "
              f"torch's headers declare it imported from torch's DLLs (__declspec(dllimport)), "
              f"but the {library} the extension links (torch/lib of the installed torch) does "
              "not export it: that torch build did not export it (its DLL exports "
              "differ from its headers), or the headers come from another torch than the "
              "libraries",
        fix=f"check the export (`dumpbin /exports <site-packages>/torch/lib/{library.split()[0]}"
            f"` lists what it has): if the installed torch lacks it, use a torch build whose "
            f"{library.split()[0]} exports it (another release or index; report it to the "
            "torch build's maintainers), or avoid calling it from the extension; build the "
            "extension against the headers of that same torch (no build isolation)")


RULES: tuple[Rule, ...] = (
    Rule(id="lld-link-failifmismatch", klass="link",
         triggers=(" has value ",),
         pattern=_MISMATCH_SIDE,
         read=_fail_if_mismatch, source="LLVM lld COFF /failifmismatch ('/failifmismatch: "
         "mismatch detected for '<key>':' then '>>> <input> has value <v>' for the input "
         "seen first and the one that disagrees; lld's source not read here): reproduced "
         "with clang-cl-22 #pragma detect_mismatch and lld-link-22 (make/devbt5.sh); "
         "ROCm/TheRock#358"),
    Rule(id="msvc-lnk2038-mismatch", klass="link",
         triggers=("LNK2038",),
         pattern=rx(r"^(?:\d+>)?(?P<input>\S.*?) : error LNK2038: mismatch detected for "
                     r"'(?P<key>[^']+)': value '(?P<v1>[^']*)' doesn't match value "
                     r"'(?P<v2>[^']*)' in (?P<other>\S+)"),
         read=_lnk2038, source="MicrosoftDocs/cpp-docs@a2e592a8fc391b6aff8d1323f5b58696abdc5d57:"
         "docs/error-messages/tool-errors/linker-tools-error-lnk2038.md (\"mismatch detected "
         "for '<name>': value '<v1>' doesn't match value '<v2>' in <file>.obj\")"),
    Rule(id="coff-machine-type-conflict", klass="link",
         triggers=("LNK1112", "conflicts with"),
         pattern=rx(r"^(?:\d+>)?(?P<input>\S+) : fatal error LNK1112: module machine type "
                     r"'(?P<have>\w+)' conflicts with target machine type '(?P<want>\w+)'"
                     r"|lld-link\S*: error: (?P<input2>\S+): machine type (?P<have2>\w+) "
                     r"conflicts with (?P<want2>\w+)$"),
         read=_machine_conflict,
         source="MicrosoftDocs/cpp-docs@a2e592a8fc391b6aff8d1323f5b58696abdc5d57:docs/"
         "error-messages/tool-errors/linker-tools-error-lnk1112.md; lld-link-22's \"<obj>: "
         "machine type x86 conflicts with x64\" reproduced in make/devwin.sh"),
    Rule(id="coff-cannot-open-file", klass="link",
         triggers=("LNK1104", "could not open '"),
         pattern=rx(r"fatal error LNK1104: cannot open file '(?P<path>[^']+)'"
                     r"|lld-link\S*: error: could not open '(?P<path2>[^']+)': (?P<why>.+)$"),
         read=_cannot_open, source="MicrosoftDocs/cpp-docs@a2e592a8fc391b6aff8d1323f5b58696abdc5"
         "d57:docs/error-messages/tool-errors/linker-tools-error-lnk1104.md (an output in use, "
         "a library path, the Windows SDK's libraries); ROCm/TheRock@89553ce3746eda74ade4255"
         "7470d25e37c91b6f0:docs/development/windows_support.md (\"lld-link: m.lib does not "
         "exist\": libm is the C runtime's on Windows); lld-link-22's \"could not open "
         "'<lib>': No such file or directory\" reproduced in make/devwin.sh"),
    Rule(id="coff-export-limit", klass="link",
         triggers=("too many exported symbols", "LNK1189"),
         pattern=rx(r"too many exported symbols \(got (?P<got>\d+), max 65535\)"
                     r"|LNK1189: library limit of \d+ objects exceeded"),
         read=_export_limit, source="MicrosoftDocs/cpp-docs@a2e592a8fc391b6aff8d1323f5b58696abdc5"
         "d57:docs/error-messages/tool-errors/linker-tools-error-lnk1189.md (the limit of 65535 "
         "objects); lld-link-22's \"too many exported symbols (got 65536, max 65535)\" "
         "reproduced in make/devwin.sh"),
    Rule(id="coff-image-too-large", klass="link",
         triggers=("exceeds maximum allowable size",),
         pattern=rx(r"image size \(?'?(?P<size>[0-9A-Fa-fx]+)'?\)? exceeds maximum allowable "
                     r"size \((?P<limit>[0-9A-Fa-fx]+)\)"),
         read=_image_too_large, source="MicrosoftDocs/cpp-docs@a2e592a8fc391b6aff8d1323f5b58696"
         "abdc5d57:docs/error-messages/tool-errors/linker-tools-error-lnk1248.md (\"image size "
         "('<output_size>') exceeds maximum allowable size (<maximum_size>)\"; lld-link's "
         "wording not read: unverified that it matches)"),
    Rule(id="coff-bad-input", klass="link",
         triggers=("Did you specify a DLL", "LNK1107", "unknown file type"),
         pattern=rx(r"lld-link\S*: error: (?P<dll>\S+): bad file type\. Did you specify a DLL "
                     r"instead of an import library\?"
                     r"|^(?:\d+>)?(?P<file>\S.*?) : fatal error LNK1107: invalid or corrupt file"
                     r"|lld-link\S*: error: (?:unknown file type: (?P<file2>\S+)$|"
                     r"(?P<file3>\S+): unknown file type$)"),
         read=_bad_input, source="MicrosoftDocs/cpp-docs@a2e592a8fc391b6aff8d1323f5b58696abdc5"
         "d57:docs/error-messages/tool-errors/linker-tools-error-lnk1107.md (a corrupt file, "
         "or a .dll passed to the linker); lld-link-22's \"bad file type. Did you specify a "
         "DLL instead of an import library?\" and \"unknown file type\" (an ELF object, "
         "alone or as an archive member) reproduced in make/devwin.sh"),
)
