"""rocBLAS' Tensile: kernel files missing for the GPU, a library folder that is empty or
cannot be loaded, errors its host code reports, and assembly of its generated kernels that a
distribution's clang rejects.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.knowledge.arches import load_arch_table
from rocmforge.triage.parsers.tensile_paths import folder_empty_reading, windows_generic_reading
from rocmforge.triage.rule import Alias, Groups, LineView, Reading, Rule, rx

# A path: space-free, or a Windows one (C:\Program Files\AMD\ROCm\…) up to the next colon
_PATH = r"(?:[A-Za-z]:[\\/][^:\n]*?|\S*?)"


def _tensile(match: Groups, view: LineView) -> Reading | None:
    # Proof that the target has no kernels: the library says which GPU arch it looked for, or
    # the target's own file is not there. "Cannot read …: No error" (a file that is there but
    # unreadable, another format) proves nothing about the kernels: no claim.
    if "rocblaslt error" in view.text:
        return None  # hipBLASLt's own loader: the hipblaslt-lazy-library rule reads it
    # rocBLAS tries TensileLibrary_lazy_<arch>.dat, then TensileLibrary_<arch>.dat, and only
    # then the generic TensileLibrary.dat (tensile_host.cpp): an error about the generic file
    # proves the target's own files are missing, whatever strerror(errno) says after it
    # ("Illegal seek" is a stale errno, ROCm/Tensile#1936).
    generic = re.search(rf"rocBLAS error: Cannot read {_PATH}[/\\]TensileLibrary\.(?:dat|yaml): ",
                        view.text) is not None
    if "GPU arch" not in view.text and "No such file" not in view.text and not generic:
        return None
    lower = view.text.lower()
    lib = next((name for name in ("hipsparselt", "hipblaslt") if name in lower), "rocblas")
    # The target's own file (TensileLibrary_lazy_<arch>.dat, TensileLibrary_<arch>.dat) names
    # the target the library looked for, where the line has no "for GPU arch" tail.
    named = re.search(r"TensileLibrary(?:_lazy)?_(gfx[0-9a-f]{3,4})\.(?:dat|yaml)\b", view.text)
    arch = match.groupdict().get("arch") or (named.group(1) if named else "{device}")
    # {device} reads "the GPU's target (the log does not name it)" when the log names none
    target = arch if arch == "{device}" else f"the GPU's target {arch}"
    known = load_arch_table().get(arch)
    igpu = (f"; {arch} is a CPU's integrated GPU: where the machine also has a discrete card, "
            "the library was asked for the iGPU's kernels, and hiding the iGPU lets the card "
            "run (HIP_VISIBLE_DEVICES=<the card's index>, or disable the iGPU in the BIOS / "
            "Device Manager)" if known is not None and known.apu else "")
    glob = f"*{arch}*" if arch != "{device}" else "*"
    windows = windows_generic_reading(view.text, lib, arch, target)
    if windows is not None:
        return windows
    return Reading(subject=lib, cause=f"{lib} has no kernels (TensileLibrary files) for "
                   f"{target}: the installed {lib} was built without it",
                   fix=f"install a ROCm whose {lib} ships kernels for {arch} (check "
                   f"`ls $ROCM_PATH/lib/{lib}/library/{glob}`: its TensileLibrary_lazy_{arch}.dat "
                   f"and kernel files), or build {lib} for it; "
                   "presenting the GPU as a supported target with HSA_OVERRIDE_GFX_VERSION works "
                   f"only within one family (e.g. 10.3.0 for RDNA2, 11.0.0 for RDNA3){igpu}")


def _tensile_host(match: re.Match[str], view: LineView) -> Reading | None:
    library = match.group("lib").lower()
    return Reading(
        subject=library,
        cause=f"{library}'s Tensile kernel loader failed ({match.group('err')}): the kernel "
              f"files of {library} for this GPU (TensileLibrary / .hsaco / .co) are missing "
              "from the install or wheel",
        fix=f"install a {library} (ROCm release or device wheel) that ships the kernel files "
            f"for this GPU's target; check {library}'s library folder for the target's files")


_ROOT_OF = re.compile(r"^(?P<root>.*?)[\\/]lib(?:64)?[\\/](?:rocblas|hipblaslt)[\\/]")


def _tensile_unloadable(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path")
    root = _ROOT_OF.match(path)
    where = root.group("root") if root else path.rsplit("/", 1)[0]
    return Reading(
        subject=where, klass="rocm-install",
        cause=f"rocBLAS found its kernel library {path.rsplit('/', 1)[-1]} but could not load "
              f"it: the file is another rocBLAS release's than the librocblas running (two ROCm "
              f"installs in one process, e.g. a torch wheel's bundled ROCm and the system "
              f"ROCm at {where})",
        fix="keep torch, its extensions and the system ROCm on one ROCm release (reinstall the "
            "extension built against the torch wheel's ROCm, or a torch for the system ROCm); "
            "unset LD_LIBRARY_PATH / ROCBLAS_TENSILE_LIBPATH entries that point at another "
            "ROCm; `ldd` on the extension shows which rocBLAS it loads")


def _tensile_arch_wrapped(match: re.Match[str], view: LineView) -> Reading | None:
    if not view.previous or not re.search(rf"Cannot read {_PATH}TensileLibrary", view.previous[-1]):
        return None
    arch = match.group("arch")
    lower = view.previous[-1].lower()
    library = next((n for n in ("hipsparselt", "hipblaslt") if n in lower), "rocblas")
    return Reading(
        subject=library,
        cause=f"{library} has no kernels (Tensile library files) for the GPU's target {arch}: "
              f"it looked for {arch}'s file and did not find it (the error after 'Cannot read' "
              "is a leftover errno), and the installed release was built without it",
        fix=f"use a ROCm (or torch wheel) whose {library} ships kernels for {arch} (`ls "
            f"$ROCM_PATH/lib/{library}/library/*{arch}*`), or build {library} for it; "
            "HSA_OVERRIDE_GFX_VERSION presents the GPU as a supported target of its family")


# The C++ library's text when std::filesystem::directory_iterator cannot open the folder: MSVC's
# "directory_iterator::directory_iterator: <OS message>: "<dir>"", libstdc++'s "filesystem
# error: directory iterator cannot open directory: <strerror> [<dir>]".
_SDK_PACKAGE = re.compile(r"[\\/](?P<pkg>_rocm_sdk_\w+)[\\/]")


def _tensile_folder_missing(match: re.Match[str], view: LineView) -> Reading | None:
    context = " ".join((*view.previous[-3:], view.text))
    if "Could not initialize Tensile host" not in context:
        return None  # another program's directory walk
    folder = match.group("dir") or match.group("dir2")
    lower = context.lower()
    library = next((n for n in ("hipsparselt", "hipblaslt") if n in lower), "rocblas")
    package = _SDK_PACKAGE.search(folder)
    where = package.group("pkg") if package else folder
    sdk = (f"; in TheRock's Python SDK the kernels are not in {where} but in the device "
           "package _rocm_sdk_libraries_<family> (its bin\\ or lib/ folder)"
           if package else "")
    return Reading(
        subject=where, klass="rocm-install",
        cause=f"{library} could not open its kernel library folder {folder} (it does not "
              f"exist, or cannot be opened): {library} looks there because "
              f"{library.upper()}_TENSILE_LIBPATH "
              f"(or the install's layout) points at a place that holds no {library}/library "
              f"folder{sdk}",
        fix=f"unset {library.upper()}_TENSILE_LIBPATH (or the application's setting that sets "
            f"it) so {library} finds the folder next to itself, or point it at the folder that "
            f"holds TensileLibrary files for the GPU's target")


def _hipblaslt_lazy(match: re.Match[str], view: LineView) -> Reading | None:
    # hipBLASLt prints "Cannot read <file>: <errno>" only when the file does not exist (the
    # errno after it is a leftover: "No error" on Windows), then "Could not load <file>". Alone
    # that is no failure (a caller may go on without hipBLASLt: llama.cpp, rocBLAS' fallback);
    # the rule needs a BLAS status error handed back to the caller in the same log, and the
    # path of the library folder it searched: a bare file name means hipBLASLt did not find
    # its folder at all (ROCm/TheRock#681, #754), which says nothing about the kernels.
    arch = match.group("arch")
    return Reading(
        subject="hipblaslt",
        cause=f"hipBLASLt has no kernels for the GPU's target {arch}: its library folder has "
              f"no TensileLibrary file for {arch} (this hipBLASLt release was built without "
              "that target), and nothing fell back to rocBLAS' own kernels",
        fix=f"keep torch off hipBLASLt on {arch} (TORCH_BLAS_PREFER_HIPBLASLT=0, or "
            f"ROCBLAS_USE_HIPBLASLT=0 for rocBLAS), or install a ROCm whose hipblaslt ships "
            f"{arch} kernels (`ls <rocm>/lib/hipblaslt/library/*{arch}*`)")

# A distribution's package build folder (rpmbuild/mock, openSUSE's OBS, Gentoo's portage,
# Debian's): such builds use the distribution's own LLVM, not the ROCm release's clang.
_DISTRO_BUILD = re.compile(r"/builddir/build/BUILD/|/rpmbuild/BUILD/|/usr/src/packages/BUILD/"
                           r"|/home/abuild/rpmbuild/|/var/tmp/portage/|/debian/tmp/")


def _distro_clang_asm(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path")
    distro = _DISTRO_BUILD.search(path)
    if distro is None:
        return None  # the ROCm release's own clang: a Tensile bug or a stale build, not this
    return Reading(
        subject="clang",
        cause=f"the assembler rejects an instruction Tensile generated ({match.group('msg')}) "
              f"in a distribution's package build ({distro.group(0).strip('/')}): it builds "
              "with the distribution's clang, not the ROCm release's AMD clang, and Tensile "
              "picks each instruction's syntax from the clang version it detects; a clang it "
              "does not recognise gets syntax this assembler does not accept",
        fix="build the library with the ROCm release's own clang (AMD's LLVM, "
            "$ROCM_PATH/lib/llvm/bin/clang++), or patch Tensile's clang version detection for "
            "the distribution's clang (distributions carry such a patch)")


# A traceback frame of Tensile's own scripts: which library's copy of Tensile it ran (rocBLAS
# vendors Tensile, hipBLASLt its TensileLite; both install a package named Tensile).
_TENSILE_FRAME = re.compile(r'File "(?P<path>[^"]*[/\\]Tensile[/\\][^"]*)", line \d+')


def _no_master_library(match: re.Match[str], view: LineView) -> Reading | None:
    frames = [f.group("path").lower() for line in view.previous
              if (f := _TENSILE_FRAME.search(line))]
    if not frames:
        return None  # not inside Tensile's TensileCreateLibrary: the line proves nothing
    where = frames[-1]
    lib = ("hipblaslt" if "hipblaslt" in where or "tensilelite" in where else
           "rocblas" if "rocblas" in where else "")
    if not lib:
        return None  # a Tensile of its own: which library it builds is not in the log
    return Reading(
        subject=lib,
        cause=f"{lib}'s TensileCreateLibrary found no logic files (tuned kernel tables) for "
              "the architecture it was asked to build, {device}, so its list of master "
              f"libraries is empty and it stops: {lib} has no kernels for that target",
        fix=f"build {lib} only for targets it has logic files for (drop {{gfx}} from its "
            "GPU_TARGETS/AMDGPU_TARGETS, or build without it: for torch, USE_HIPBLASLT=0 when "
            "the library is hipblaslt); a newer Tensile stops with a message instead of this "
            "traceback, the target is still unsupported")



def _tensile_no_code_objects(match: re.Match[str], view: LineView) -> Reading | None:
    # rocBLAS globs <library folder>/*<processor>*co for the running GPU's code objects and
    # warns once when nothing matches: the folder has no kernels for that target (a rocBLAS
    # built without it), or ROCBLAS_TENSILE_LIBPATH points elsewhere. Older releases glob a
    # bare "/*co" (no target named): that names no target and is not read here.
    arch, folder = match.group("arch"), match.group("dir")
    return Reading(
        subject="rocblas",
        cause=f"rocBLAS found no kernel code objects for the GPU's target {arch} in {folder} "
              f"(its glob *{arch}*co matched nothing): this rocBLAS was built without {arch}, "
              "so its first GEMM fails or crashes",
        fix=f"install or build a rocBLAS whose library folder holds {arch} kernels (its "
            f"targets list must include {arch}); check ROCBLAS_TENSILE_LIBPATH is unset or "
            "points at that folder; HSA_OVERRIDE_GFX_VERSION presents the GPU as a "
            "supported target of its family (e.g. 10.3.0 for RDNA2)")


def _tensile_manifest(match: re.Match[str], view: LineView) -> Reading | None:
    # Tensile's <PREFIX>_LIBRARY_TARGET runs TensileCreateLibrary --verify-manifest after the
    # library was generated (a failed generation fails its own edge first): its failure means
    # files the manifest lists were not generated, for some requested target.
    context = " ".join((*view.previous, view.text)).lower()
    library = next((n for n in ("hipsparselt", "hipblaslt", "rocblas") if n in context), "")
    if not library:
        return None
    return Reading(
        subject=library,
        cause=f"{library}'s Tensile kernel library is incomplete: TensileCreateLibrary's "
              "manifest check found files listed in TensileManifest.txt that were not "
              f"generated (Tensile could not produce kernels for every requested target)",
        fix=f"build {library} only for targets its Tensile supports (drop the others from "
            f"its GPU_TARGETS), or use a {library}/Tensile release that supports them; the "
            "lines above the check (TensileCreateLibrary's output) name the missing files")


def _tensile_listed_file(match: re.Match[str], view: LineView) -> Reading | None:
    # One line of rocBLAS' "List of available TensileLibrary Files" (each file quoted, as a
    # std::filesystem path prints): rocBLAS prints that list only after it found no file for
    # the GPU's target, then aborts. The heading and the "Cannot read" line above it may be cut
    # from the log; those, when there, are read by their own rules (a lower tier).
    found = match.group("arch")
    listed = sorted({m.group(1) for line in (*view.previous, view.text)
                     for m in re.finditer(r"TensileLibrary\w*?_(gfx[0-9a-f]{3,4})\.dat", line)})
    shown = ", ".join(listed) if listed else found
    return Reading(
        subject="rocblas",
        cause="rocBLAS found no TensileLibrary file for the GPU's target and listed the files "
              f"it has ({shown}, …) before aborting: this rocBLAS ships no kernels for the "
              "GPU's gfx target",
        fix="use a rocBLAS (a ROCm install, torch or application bundle) built with the GPU's "
            "target (its rocblas/library holds a TensileLibrary file for it), or build rocBLAS "
            "for it; a GPU of the same family as a listed target can run as that target "
            "(HSA_OVERRIDE_GFX_VERSION, e.g. 10.3.0 for RDNA2), at its own risk")


def _tensile_arch_rejected(match: re.Match[str], view: LineView) -> Reading | None:
    arch = match.group("arch")
    owner = match.group("owner") or view.label
    library = f"{owner}'s " if owner else "the math library's "
    table = load_arch_table()
    known = table.get(arch)
    removed = ""
    instead = ""
    if known is not None and known.removed_in_llvm:
        heirs = [a.name for a in table.arches.values()
                 if a.family == known.family and not a.removed_in_llvm and not a.generic]
        removed = f"; {arch} was removed from LLVM {known.removed_in_llvm} and the ROCm libraries"
        instead = f" and build {', '.join(heirs)} instead" if heirs else ""
    return Reading(
        subject=arch, klass="gpu-target",
        cause=f"{library}Tensile kernel generator stopped: Architecture {arch} not supported "
              f"(its table of targets has no {arch}, so no kernels can be made for it)"
              + removed,
        fix=f"remove {arch} from the GPU targets the build passes to {owner or 'the library'} "
            f"(PYTORCH_ROCM_ARCH / GPU_TARGETS / the TheRock family)"
            + (instead or f", or use a release of it that supports {arch}"))


RULES: tuple[Rule, ...] = (
    Rule(id="tensile-no-master-library", klass="math-library",
         triggers=("masterLibraries",),
         pattern=rx(r"theMasterLibrary = list\(masterLibraries\.values\(\)\)\[0\]"),
         read=_no_master_library,
         source="ROCm/Tensile and ROCm/hipBLASLt tensilelite Tensile/TensileCreateLibrary.py "
         "(the stored files; `theMasterLibrary = list(masterLibraries.values())[0]` with no "
         "guard, later releases add `and len(masterLibraries) > 0`; '# Architecture from "
         "TensileCreateLibrary: %s'); ROCm/hipBLASLt#648"),
    Rule(id="tensile-asm-distro-clang", klass="host-compiler",
         triggers=("error: ",),
         pattern=rx(r"^(?P<path>\S*[/\\](?i:tensile)[/\\]assembly[/\\]\S+\.s):\d+:\d+: error: "
                     r"(?P<msg>not a valid operand|invalid operand for instruction|instruction "
                     r"not supported on this GPU)"),
         read=_distro_clang_asm, source="Tensile's assembly step (build_tmp/TENSILE/assembly); "
         "ROCm/hipBLASLt#2060 (Fedora, openSUSE, Gentoo builds with their clang)"),
    Rule(id="tensile-library", klass="math-library",
         triggers=("TensileLibrary", "Tensile"),
         pattern=rx(r"Cannot read .*?TensileLibrary\S*(?:.*?GPU arch\s*:\s*(?P<arch>gfx\w+))?"
                     r"|TensileLibrary\S*?_(?P<arch2>gfx\w+?)\S*\.(?:dat|co|yaml)\S*: No such file"
                     r"|Could not (?:initialize|load) Tensile"),
         read=lambda m, v: _tensile(Alias(m, arch="arch2"), v),
         source="ROCm/rocBLAS#1339; pytorch/pytorch#179865; Windows: rocblas.dll's folder + "
         "/rocblas/library (ROCm/rocBLAS@b520bc83 library/src/tensile_host.cpp); the list of "
         "available files is std::regex fileMatcher(path + \"/TensileLibrary_lazy.*\") "
         "(ROCm/rocBLAS@b520bc83fa67045bed4544f33ba83ce3a7c39c44:library/src/tensile_host.cpp): "
         "empty for a Windows path; ollama-for-amd#7"),
    Rule(id="tensile-host-error", klass="math-library",
         triggers=("tensile_host",),
         pattern=rx(r"(?P<err>hipError\w+|rocblas_status_\w+)\s+at\s+(?P<lib>rocblas|hipblaslt)"
                     r"/\S*tensile_host"),
         read=_tensile_host, source="rocBLAS library/src/tensile_host.cpp; ROCm/TheRock#5976"),
    Rule(id="tensile-unloadable", klass="rocm-install",
         triggers=("Could not load",),
         pattern=rx(r"rocBLAS error: Could not load (?P<path>\S*TensileLibrary\S*)"),
         read=_tensile_unloadable, source="ROCm/rocBLAS library/src/tensile_host.cpp ('Could "
         "not load' when the file exists but Tensile cannot read it; 'Cannot read' when it "
         "does not exist); ROCm/pytorch#1340"),
    Rule(id="tensile-arch-wrapped", klass="math-library",
         triggers=("for GPU arch",),
         pattern=rx(r"^(?!.*Cannot read).*\bfor GPU arch\s*:\s*(?P<arch>gfx[0-9a-f]{3,4})"),
         read=_tensile_arch_wrapped, source="ROCm/rocBLAS library/src/tensile_host.cpp "
         "(\"Cannot read <path>: <errno> for GPU arch : <gfx>\" and the list of available "
         "files, the line wrapped); ROCm/legacy-rocm-build#6049"),
    Rule(id="tensile-folder-empty", klass="missing-component", tier=0,
         triggers=("List of available TensileLibrary Files",),
         pattern=rx(r"List of available TensileLibrary Files\s*:\s*$"),
         unless=rx(r"TensileLibrary_\w+\.(?:dat|co)|^\W*(?:\.\.\.\s*)?gfx[0-9a-f]{3,4}"
                    r"(?:\s+gfx[0-9a-f]{3,4})+|directory_iterator::directory_iterator: "
                    r"|directory iterator cannot open directory: "),
         read=folder_empty_reading, source="ROCm/rocBLAS library/src/tensile_host.cpp (the "
         "list of available files after 'Cannot read ... for GPU arch', matched by a regex made "
         "of the folder's path, so only a path without backslashes proves an empty folder); "
         "ROCm/TheRock#571"),
    Rule(id="tensile-folder-missing", klass="rocm-install", tier=0,
         triggers=("directory_iterator", "directory iterator cannot open"),
         pattern=rx(r"directory_iterator::directory_iterator: .*: \"(?P<dir>[^\"]+)\"\s*$"
                    r"|filesystem error: directory iterator cannot open directory: .*?"
                    r"\[(?P<dir2>[^\]]+)\]"),
         read=_tensile_folder_missing, source="rocBLAS's 'Could not initialize Tensile host:' "
         "followed by the exception's text (vladmandic/sdnext#4757, MSVC's directory_iterator "
         "text); libstdc++'s text for the same missing folder captured here with g++-12 "
         "(a std::filesystem::directory_iterator on a missing folder); rocBLAS's source not "
         "read (unverified)"),
    Rule(id="hipblaslt-lazy-library", klass="math-library",
         triggers=("rocblaslt error",),
         pattern=rx(r"\brocblaslt error: (?:Cannot read|Could not load) .*?[\\/]hipblaslt[\\/]+"
                     r"library[\\/]+TensileLibrary\w*?_(?P<arch>gfx[0-9a-f]{3,4})\.dat"),
         requires=rx(r"\b(?:HIP|CU)BLAS_STATUS_[A-Z_]+\b"),
         unless=rx(r"hipBlasLT failed, falling back to tensile"),
         read=_hipblaslt_lazy, source="ROCm/rocm-libraries projects/hipblaslt/library/src/"
         "amd_detail/rocblaslt/src/tensile_host.cpp ('Cannot read' when the file does not exist, "
         "as quoted in ROCm/TheRock#681); rocBLAS library/src/tensile_host.cpp ('hipBlasLT "
         "failed, falling back to tensile'; commit not read); vladmandic/sdnext#4574, "
         "lmstudio-ai/lmstudio-bug-tracker#1163 (negative)"),
    Rule(id="tensile-no-code-objects", klass="math-library",
         triggers=("No paths matched",),
         pattern=rx(r"rocBLAS warning: No paths matched (?P<dir>\S+?)[/\\]\*"
                    r"(?P<arch>gfx[0-9a-f]{3,4})\*co\b"),
         read=_tensile_no_code_objects, source="ROCm/rocBLAS@af09a29ff278bbb9f2b37437037937fd9"
         "78a3676:library/src/tensile_host.cpp (glob of path + \"/*\" + processor + \"*co\"; on "
         "GLOB_NOMATCH: \"rocBLAS warning: No paths matched <dir>. Make sure that "
         "ROCBLAS_TENSILE_LIBPATH is set correctly.\"; stored file); JuliaGPU/AMDGPU.jl#314"),
    Rule(id="tensile-manifest-incomplete", klass="math-library",
         triggers=("_LIBRARY_TARGET",),
         pattern=rx(r"FAILED: \S*CMakeFiles[/\\]\w+_LIBRARY_TARGET\b"),
         requires=rx(r"Verifying files in \S*TensileManifest\.txt were generated"),
         read=_tensile_manifest, source="ROCm/Tensile@01e776c331ba4c42a793d3392487731a183641e8:"
         "Tensile/cmake/TensileConfig.cmake (add_custom_target(${Tensile_VAR_PREFIX}_LIBRARY_"
         "TARGET ... --verify-manifest COMMENT \"Verifying files in ${Tensile_MANIFEST_FILE_"
         "PATH} were generated\"); ROCm/TheRock#1564"),
    Rule(id="tensile-listed-library-file", klass="math-library", tier=2,
         triggers=("TensileLibrary",),
         # Optionally behind a journal's "<host> <program>[<pid>]: " (a service's log).
         pattern=rx(r'^(?:\S+ [\w.-]+\[\d+\]: )?"\S*[/\\]rocblas[/\\]+library[/\\]+'
                    r'TensileLibrary\w*?_(?P<arch>gfx[0-9a-f]{3,4})\.dat"$'),
         read=_tensile_listed_file, source="ROCm/rocm-libraries projects/rocblas/library/src/"
         "tensile_host.cpp (stored file: after 'Cannot read … for GPU arch' it prints ' List of "
         "available TensileLibrary Files : ' and each matching directory entry, quoted, then "
         "rocblas_abort()); ollama/ollama#9455, ROCm/ROCm#4625"),
    Rule(id="tensile-architecture-not-supported", klass="gpu-target",
         triggers=("not supported",),
         pattern=rx(r"(?:\[(?P<owner>[\w.-]+)\] )?Tensile::FATAL: Architecture "
                    r"(?P<arch>gfx[0-9a-z]+)\S* not supported"),
         read=_tensile_arch_rejected, source="ROCm/rocm-libraries@a1a1f7bff7c0e9a5ad46dfb284cf3574"
         "07a1bd36:shared/tensile/Tensile/TensileCreateLibrary.py (printExit(\"Architecture %s "
         "not supported\") for a target not in architectureMap; printExit prints "
         "'Tensile::FATAL: '); ROCm/TheRock#202"),
)
