"""The ROCm install: its tools, runtime or compiler missing, two installs mixed, a fixed
ROCm path that does not exist, unquoted Windows paths, a ROCm package's CMake files naming a
library it lacks, and a stray HIP runtime's output taken for a GPU target. The kernel driver,
KFD and WSL's thunk are rocm_driver.py's.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _mixed_hcc(match: re.Match[str], view: LineView) -> Reading | None:
    used = match.group("used")
    root = re.match(r"/opt/rocm[^/]*", used)
    return Reading(subject=root.group(0) if root else used, cause=f"two ROCm installs are "
                   f"mixed: HIP from {match.group('hip')} was built with another hcc than the "
                   f"one in use ({used})", fix="use one ROCm install for everything: set "
                   "ROCM_PATH, HIP_PATH and HCC_HOME (old releases) to the same /opt/rocm-X.Y, "
                   "remove the other from PATH, and rebuild from a clean build folder")


_ROOT_LABEL = re.compile(r"ROCm root directory:\s*(\S+)\s*$")


def _hip_lang_missing(match: re.Match[str], view: LineView) -> Reading | None:
    root = ""
    for line in reversed(view.previous):
        # The root on a line of its own (CMake's layout) or after the label (a pasted log
        # whose lines were joined).
        same_line = _ROOT_LABEL.search(line)
        if same_line:
            root = same_line.group(1)
            break
        if line.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", line):
            root = line.strip()
            break
    if not root:
        return None
    name = root.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1]
    subject = name if name.startswith("_rocm_sdk") else root
    what = ("a distribution's ROCm under the system prefix, whose HIP development package is "
            "not installed or keeps hip-lang in another library folder (Debian's multiarch "
            "lib/<triplet>/cmake), or a ROCM_PATH forced to the system prefix"
            if root.rstrip("/") in ("/usr", "/usr/local") else
            "a runtime-only part of the install (TheRock's _rocm_sdk_core) or not a ROCm root "
            "at all")
    return Reading(
        subject=subject, cause=f"CMake's HIP language setup was given the ROCm root {root}, "
        f"which holds no hip-lang CMake package: it is {what}",
        fix="point ROCM_PATH / HIP_PATH / CMAKE_HIP_COMPILER_ROCM_ROOT at the development root "
            "(TheRock wheels: the devel package, `rocm-sdk path --root`, after `pip install "
            "rocm[devel]`), or install ROCm's HIP development files there")


def _hip_lang_lib_only(match: re.Match[str], view: LineView) -> Reading | None:
    # The first path of CMake's "expected at one of:" list; the rule is void when the list
    # also names a lib64 folder (a CMake that searches it: then the package is really absent).
    if not any("does not contain the HIP runtime CMake package" in line
               for line in view.previous[-2:]):
        return None
    root = match.group("root")
    return Reading(
        subject="cmake", klass="cmake",
        cause=f"this CMake's HIP language setup looks for hip-lang-config.cmake only under "
              f"{root}/lib/cmake, while a distribution ROCm under {root} (Fedora, openSUSE) "
              f"installs it under {root}/lib64/cmake: the CMake release does not search lib64",
        fix="use a CMake release whose HIP detection also searches lib64 (upgrade cmake, e.g. "
            "`pip install -U cmake`), then configure again from a clean build folder")


def _torch_runtime_rejects_code(match: re.Match[str], view: LineView) -> Reading | None:
    version, rocm = match.group("ver"), match.group("rocm")
    return Reading(
        subject="torch",
        cause=f"torch {version} brings its own ROCm {rocm} runtime, and that runtime could not "
              "load the GPU code of the package that failed (hipErrorSharedObjectInitFailed): "
              f"the package's kernels were compiled by another ROCm than {rocm} (the system's, "
              "when it was built from source) in a code object format that runtime does not "
              "load",
        fix=f"keep torch and the package on one ROCm: build the package with ROCm {rocm} "
            f"(ROCM_HOME at that release), or install a torch built for the ROCm the package "
            "was compiled with (the torch index of that ROCm release), then rebuild the "
            "package against that torch")


def _fixed_rocm_path(match: re.Match[str], view: LineView) -> Reading | None:
    prefix = match.group("prefix")
    return Reading(
        subject=prefix, cause=f"the build needs {match.group('path')}, a path some CMake "
        f"config (often torch's own, from its wheel) names literally, and ROCm is not at "
        f"{prefix} on this machine",
        fix=f"make {prefix} resolve to the ROCm install (a symlink, or install ROCm there), or "
            "use a torch whose CMake config takes the ROCm path from ROCM_PATH (a newer "
            "release), then configure again")


def _mixed_roots(match: re.Match[str], view: LineView) -> Reading | None:
    version = match.group("ver")
    others = [v for v in view.rocm_roots if v != version]
    if not others:
        return None
    where, library = match.group("where"), match.group("lib")
    return Reading(
        subject=library, cause=f"two ROCm installs are mixed: {where} comes from "
        f"/opt/rocm-{version} while the same program also runs from /opt/rocm-{others[0]}, so "
        f"a component of one release loads the other release's {library}",
        fix=f"use one ROCm install: remove /opt/rocm-{version} (or /opt/rocm-{others[0]}) and "
            "whatever still points at it (a Python package left in site-packages, an "
            "ld.so.conf.d file, LD_LIBRARY_PATH); `invoke doctor` lists the installs it finds")


_ROCM_TOOL = re.compile(r"^(?:hipconfig|rocminfo|rocm_agent_enumerator|rocm-smi|amd-smi|"
                        r"amdclang\+\+|amdclang|clang\+\+|clang|offload-arch|roc-obj-ls|"
                        r"hipify-perl|llvm-link|ld\.lld)$")


def _rocm_tool_missing(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path")
    tool = path.rsplit("/", 1)[-1]
    if not _ROCM_TOOL.match(tool) or "/hip/bin/" in path:
        return None  # hipcc, and the old <rocm>/hip layout, are the table's (a stale HIP_PATH)
    root = match.group("root")
    return Reading(
        subject=tool,
        cause=f"{path} does not exist: the ROCm install at {root} lacks {tool} (a partial "
              "install, a runtime-only package set, or a ROCm path that points at another "
              "layout than the one installed)",
        fix=f"install the ROCm package that provides {tool} in {root}, or point ROCM_PATH / "
            "HIP_PATH (`invoke build --rocm-path`) at the ROCm install that has it; `invoke "
            "doctor` shows each install and what it holds")


def _windows_compiler_missing(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path")
    program = re.split(r"[\\/]", path)[-1]
    return Reading(
        subject="hipcc",
        cause=f"hipcc ran {program} as {path}, which Windows cannot find: hipcc looks for the "
              "compiler next to itself, and this ROCm layout keeps it elsewhere (TheRock: "
              "lib\\llvm\\bin), or HIP_PATH / HIP_CLANG_PATH point at another install",
        fix="point hipcc at its clang++ (HIP_CLANG_PATH=<rocm>\\lib\\llvm\\bin, HIP_PATH="
            "<rocm>), or use a ROCm release whose hipcc knows the layout")


def _hip_platform_unexpected(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block != "error" and "CMake Error" not in " ".join(view.previous[-2:]):
        return None
    value = (match.group("value") or "").strip()
    what = (f"HIP_PLATFORM is '{value}', a value this hip-config.cmake does not accept"
            if value else "hip-config.cmake could not tell the platform: HIP_PLATFORM is "
            "empty because its probe (asking hipconfig for the platform) failed or is not "
            "shipped (a rocm-sdk wheel or TheRock tarball; on Windows hipconfig is a Perl "
            "script)")
    return Reading(
        subject="HIP_PLATFORM",
        cause=f"find_package(hip) stopped: {what}",
        fix="configure with -DHIP_PLATFORM=amd (or export HIP_PLATFORM=amd) before "
            "find_package(hip); a sub-build (AOTriton's runtime, an extension) needs it passed "
            "on too")


def _clang_wrapper_types(match: re.Match[str], view: LineView) -> Reading | None:
    root = match.group("root")
    return Reading(
        subject=root,
        cause=f"clang's own HIP wrapper header under {root} does not compile: the build mixes "
              f"that install's clang resource headers with another toolchain or standard "
              "library, usually a second ROCm on the include path or in the compiler search "
              "(the component is not at fault)",
        fix=f"build with one ROCm: take {root} off the include paths, CMAKE_PREFIX_PATH, PATH "
            "and ROCM_PATH/HIP_PATH (or remove the stray install) so the build uses its own "
            "toolchain's headers; `invoke doctor` lists the ROCm installs it sees")


# The LLVM programs clang's driver runs itself for a GPU compile or link (not the host's).
# LLVM 22 renamed clang-offload-packager to llvm-offload-binary (clang-22 here installs
# clang-offload-packager as a link to it) and its driver spawns it for every offload compile
# with the new driver (make/devpk5.sh).
_DRIVER_TOOLS = re.compile(r"^(?:ld\.lld|lld|llvm-link|llvm-objcopy|clang-offload-bundler|"
                           r"clang-offload-packager|llvm-offload-binary|clang-linker-wrapper|"
                           r"llvm-mc|opt|llc)"
                           r"(?:-\d+)?(?:\.exe)?$")


# clang's driver after a spawn of a program it did not find (LLVM 22: posix_spawn).
_SPAWN_MISSING = re.compile(r"unable to execute command: (?:posix_spawn failed: No such file or "
                            r"directory|Executable \"[^\"]+\" doesn't exist!)")


def _driver_tool_missing(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path") or match.group("tool") or ""
    if match.group("tool") and not (view.previous and _SPAWN_MISSING.search(view.previous[-1])):
        return None  # the tool ran and failed: its own errors are above, not a missing tool
    tool = re.split(r"[\\/]", path)[-1]
    if not _DRIVER_TOOLS.match(tool):
        return None
    return Reading(
        subject=tool,
        cause=f"{match.group('driver')} could not run {tool}, which is not there: the "
              f"compiler driver looks for {tool} next to itself and on PATH, and the LLVM "
              "toolchain it belongs to was installed without it",
        fix=f"install the package that provides {tool} for that compiler (ROCm's llvm "
            "package for ROCm's clang; a distro's lld / llvm package of the same version for "
            f"its clang), or put its directory on PATH, then rebuild; `{tool} --version` "
            "must run")


# "\a" of "...\system32\amdhip64_7.dll" passed through a C or Python string is BEL: a log shows
# it as a control character, as "<U+0007>" or drops it.
_HIP_DLL = re.compile(r"(?:a|\x07|<U\+0007>)?(?P<rest>mdhip64(?:_\d+)?\.dll)", re.IGNORECASE)


def _stray_hip_library_path(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path").replace("<U+0007>", "\\a").replace("\x07", "\\a")
    dll = _HIP_DLL.search(match.group("path"))
    name = f"a{dll.group('rest')}" if dll else "amdhip64"
    where = ("the display driver's copy in System32, which Windows loads ahead of the ROCm "
             "install's" if "system32" in path.lower() else f"the copy at {path}")
    return Reading(
        subject=name,
        cause=f"the GPU target handed to the compiler is a log line, 'HIP Library Path: "
              f"{path}': the tool that reported the target (offload-arch) loaded a HIP "
              f"runtime that prints that line on stdout ({name}, {where}), and the script "
              "passed the whole output to --offload-arch",
        fix=f"make the tool load the ROCm install's {name} (update the AMD display driver so "
            "System32's copy is current, or run the ROCm bin folder's tools with that folder "
            "first), and take only the gfx line of offload-arch's output (or name the target "
            "yourself, --offload-arch=gfxNNNN)")


_TARGETS_FILE = re.compile(r"^CMake Error at (?P<file>\S+?-targets\.cmake):\d+")


def _imported_target_missing(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block == "warning":
        return None
    namespace, target = match.group("ns"), match.group("target")
    where = next((f.group("file") for f in map(_TARGETS_FILE.match, reversed(view.previous))
                  if f), f"the {namespace} package's targets file")
    language = (" For the HIP language (hip-lang::), `find_package(hip)` with hip::host / "
                "hip::device avoids the broken file until a fixed release is installed."
                if namespace == "hip-lang" else "")
    return Reading(
        subject=target,
        cause=f"the ROCm install's CMake package ({where}) declares the imported target "
              f"{namespace}::{target} with a library file that does not exist on this machine: "
              "the component's library is not installed (a package split off or removed), or "
              "the CMake files were generated for another prefix (a path of the machine that "
              "built the install)",
        fix=f"install the ROCm package that ships {target}'s library (the same release as the "
            "rest), or reinstall the ROCm / HIP SDK so find_package loads CMake files that "
            f"match its files; a release with fixed package files is the lasting fix.{language}")


# A ROCm library's own headers that build on rocPRIM (hipCUB's rocprim backend, rocThrust):
# clang's "no template named 'radix_key_codec' in namespace 'rocprim'" there means the
# rocPRIM found is another release than the one those headers were written for (rocPRIM adds
# and retires names between releases: ROCm/rocPRIM@0ce43c037bd90b88b90ac15ebf697307ca5a932d:
# CHANGELOG.md, rocPRIM-3.2.0 for ROCm 6.2.0 added the public rocprim::radix_key_codec).
def _rocprim_name_missing(match: re.Match[str], view: LineView) -> Reading | None:
    user = match.group("user")
    name = match.group("name")
    return Reading(
        subject="rocprim",
        cause=f"{user}'s headers use rocprim::{name}, which the rocPRIM headers found by the "
              f"compile do not declare: {user} and rocPRIM are from different releases (the "
              "rocPRIM found is older than the one this source expects, or newer and has "
              "retired the name)",
        fix=f"build {user} against the rocPRIM of its own release: the same ROCm release "
            "for both (one ROCm install, or matching rocPRIM and "
            f"{user} commits in a source tree), and remove any other rocPRIM from the "
            "include path; then rebuild from a clean build folder")


RULES: tuple[Rule, ...] = (
    Rule(id="rocprim-name-missing", klass="rocm-install",
         triggers=("in namespace 'rocprim",),
         pattern=rx(r"/(?P<user>hipcub|thrust)/\S+?:\d+(?::\d+)?: error: no (?:template|member|"
                    r"type) named '(?P<name>\w+)' in namespace '(?:::)?rocprim(?:::\w+)*'"),
         read=_rocprim_name_missing,
         source="clang's err_no_template/err_no_member ('no template named 'X' in namespace "
         "'rocprim''; clang++-22 here, make/devbt9.sh) in hipCUB's or rocThrust's own "
         "headers; ROCm/rocPRIM@0ce43c037bd90b88b90ac15ebf697307ca5a932d:CHANGELOG.md; "
         "ROCm/hipCUB#486"),
    Rule(id="mixed-hcc", klass="rocm-install",
         triggers=("was built using hcc",),
         pattern=rx(r"HIP \((?P<hip>[^)]+)\) was built using hcc .*?but you are using "
                     r"(?P<used>\S+)"),
         read=_mixed_hcc, source="hipcc's HCC version check; ROCm/pytorch#581"),
    Rule(id="hip-lang-missing", klass="rocm-install",
         triggers=("does not contain the HIP runtime CMake package",),
         pattern=rx(r"does not contain the HIP runtime CMake package"),
         read=_hip_lang_missing, source="Kitware/CMake Modules/CMakeDetermineHIPCompiler.cmake; "
         "ROCm/TheRock#1880"),
    Rule(id="hip-lang-lib-only", klass="rocm-install", tier=0,
         triggers=("/lib/cmake/hip-lang/hip-lang-config.cmake",),
         pattern=rx(r"^(?P<root>/usr(?:/local)?)/lib/cmake/hip-lang/hip-lang-config\.cmake$"),
         unless=rx(r"/lib64/cmake/hip-lang/hip-lang-config\.cmake"),
         read=_hip_lang_lib_only, source="Kitware/CMake Modules/CMakeDetermineHIPCompiler.cmake "
         "(the 'expected at one of' list); gitlab.kitware.com/cmake/cmake#25050"),
    Rule(id="torch-runtime-rejects-code", klass="rocm-install",
         triggers=("+rocm",),
         pattern=rx(r"^torch(?:==|\s+)(?P<ver>\d[\w.]*\+rocm(?P<rocm>\d+\.\d+(?:\.\d+)?))\s*$"),
         requires=rx(r"shared object initialization failed|hipErrorSharedObjectInitFailed"),
         read=_torch_runtime_rejects_code, source="HIP's hipErrorSharedObjectInitFailed (a "
         "code object its runtime cannot load); Dao-AILab/flash-attention#1652"),
    Rule(id="fixed-rocm-path", klass="rocm-install",
         triggers=("No rule to make target", "missing and no known rule"),
         pattern=rx(r"(?:No rule to make target|')\s*'?(?P<path>(?P<prefix>/opt/rocm[\w.-]*)/"
                     r"lib\w*/lib[\w.+-]+\.so[\w.]*)', needed by"),
         read=_fixed_rocm_path, source="make's / ninja's missing-input error; "
         "vllm-project/vllm#8042 (pytorch/pytorch#131701)"),
    Rule(id="mixed-rocm-installs", klass="rocm-install", tier=0,
         triggers=("/opt/rocm-",),
         pattern=rx(r"(?P<where>/opt/rocm-(?P<ver>\d+\.\d+(?:\.\d+)?)/\S*?(?P<lib>lib[\w+-]+)"
                     r"\.so[\w.]*): (?:undefined symbol|cannot open shared object)"),
         read=_mixed_roots, source="ROCm/amdsmi#186 (the 7.1.1 CLI loading 7.0.1's "
         "libamd_smi.so)"),
    Rule(id="rocm-tool-missing", klass="rocm-install",
         triggers=("/opt/rocm",),
         pattern=rx(r"(?:No such file or directory: '|: )(?P<path>(?P<root>/opt/rocm[\w.-]*)"
                     r"/\S*?bin/[\w.+-]+)(?:'|: (?:command )?not found|: No such file or "
                     r"directory)"),
         read=_rocm_tool_missing, source="the shell's and Python's errors for a missing "
         "program under a ROCm root"),
    Rule(id="windows-hip-compiler-missing", klass="rocm-install",
         triggers=("is not recognized as an internal or external command",),
         pattern=rx(r"^'(?P<path>[^']*[\\/](?:clang\+\+|clang|lld-link|ld\.lld)(?:\.exe)?)' "
                     r"is not recognized as an internal or external command"),
         requires=rx(r"(?i)hipcc"),
         read=_windows_compiler_missing, source="cmd.exe's error for a missing program; "
         "ROCm/TheRock#410"),
    Rule(id="hip-platform-unexpected", klass="rocm-install",
         triggers=("Unexpected HIP_PLATFORM",),
         pattern=rx(r"^Unexpected HIP_PLATFORM:\s*(?P<value>\S*)\s*$"),
         read=_hip_platform_unexpected, source="ROCm/TheRock#1402 (hip-config.cmake infers "
         "HIP_PLATFORM by running hipconfig; HIP_INSTALLS_HIPCC is OFF in rocm-sdk wheels), "
         "#1408; lhl/strix-halo-testing#3"),
    Rule(id="clang-resource-header-types", klass="rocm-install",
         triggers=("__clang_hip_",),
         pattern=rx(r"(?P<root>[A-Za-z]:[\\/][^:\n]*?|/\S*?)(?:[\\/]lib)?[\\/]llvm[\\/]lib[\\/]"
                    r"clang[\\/]\d+[\\/]include[\\/]__clang_hip_\w+\.h"
                     r":\d+(?::\d+)?: error: unknown type name 'u?int\w*_t'"),
         read=_clang_wrapper_types, source="ROCm/TheRock#950 (a rocBLAS build broken by another "
         "install in /opt/rocm)"),
    Rule(id="driver-tool-missing", klass="rocm-install",
         triggers=("doesn't exist!", " command failed with exit code 1"),
         pattern=rx(r"^(?P<driver>\S*clang[\w.+-]*|hipcc|amdclang\S*): error: (?:unable to "
                     r"execute command: Executable \"(?P<path>[^\"]+)\" doesn't exist!"
                     r"|(?P<tool>[\w.+-]+) command failed with exit code 1(?: |$))"),
         read=_driver_tool_missing, source="llvm/llvm-project llvm/lib/Support/Program.cpp "
         "(older releases: 'Executable \"<program>\" doesn't exist!'; LLVM 22 here: "
         "'posix_spawn failed: No such file or directory', then '<tool> command failed with "
         "exit code 1') under clang's err_drv_command_failure ('unable to execute command: "
         "%0'); both reproduced or read: clang-22 here (make/build_shapes_d6.sh; "
         "llvm-offload-binary: make/devpk5.sh); the line may end after the exit code, as "
         "ROCm/TheRock#2787's amd-llvm prints it; rocm-arch/rocm-arch#876"),
    Rule(id="rocm-imported-target-file-missing", klass="rocm-install",
         triggers=("references the file",),
         pattern=rx(r"^The imported target \"(?P<ns>hip-lang|hip|roc|rocm\w*|MIOpen|miopen|"
                     r"rccl|composable_kernel)::(?P<target>[\w.+-]+)\" references the file"),
         read=_imported_target_missing, source="CMake's export file template (the generated "
         "<pkg>-targets.cmake checks each imported file: 'The imported target \"<t>\" "
         "references the file \"<f>\" but this file does not exist.'; reproduced with "
         "cmake here, make/devpk4.sh); ROCm/hip#3434 (hip-lang::amdhip64), "
         "rocm-arch/python-pytorch-rocm#35 (hip::hipfft), ROCm/TheRock#558 "
         "(roc::hipblaslt-bench)"),
    Rule(id="offload-arch-stray-hip-library-path", klass="rocm-install",
         triggers=("--offload-arch=HIP Library Path: ",),
         pattern=rx(r"--offload-arch=HIP Library Path: (?P<path>[^'\"\s]+)"),
         requires=rx(r"error: no such file or directory: 'Path:'"),
         read=_stray_hip_library_path, source="ROCm/TheRock@89553ce3:tests/test_rocm_sanity.py "
         "(test_hip_printf: 'some ROCm releases contained stray \"HIP Library Path\" logging' "
         "in offload-arch's output; system32 DLLs take precedence, TheRock#3257, #3260); "
         "ROCm/TheRock#1118, #3262"),
)
