"""hipcc and hipconfig: the compiler wrapper cannot find its clang (a ROCM_PATH that is unset,
empty, or another install's), the build cannot find hipcc itself, Tensile's search for the ROCm
compiler stops on a HIP SDK folder without versions (Windows), or the ROCm compiler a build ran
is older than the device libraries it was handed (two installs mixed).

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import Alias, Groups, LineView, Reading, Rule, rx

# A ROCm root from a clang path (<root>/llvm/bin/clang) or a HIP script (<root>[/hip]/bin/hipcc).
_SCRIPT_ROOT = re.compile(r"(?P<root>/\S+?)/(?:llvm|hip)?/?bin/[^/]+$")
# AMD's own install roots (/opt/rocm, /opt/rocm-6.2.0): a distribution's layout (/usr/lib/hip)
# is hipcc's environment, not a second install.
_OPT_ROCM = re.compile(r"^/opt/rocm(?:-[\w.]+)?$")


def _hipcc_no_clang(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path") or match.group("path2")
    script = match.group("script") or ""
    wanted = _SCRIPT_ROOT.match(path)
    own = _SCRIPT_ROOT.match(script)
    if (wanted and own and wanted.group("root") != own.group("root")
            and all(_OPT_ROCM.match(m.group("root")) for m in (wanted, own))):
        # The script lives in one install and looks for clang in another root: hipvars.pm's
        # ROCM_PATH fell back to the fixed /opt/rocm (or the environment names another one).
        root, home = wanted.group("root"), own.group("root")
        tool = script.rsplit("/", 1)[-1]
        return Reading(
            subject=root,
            cause=f"{tool} from the ROCm install {home} looks for clang under {root}, which "
                  f"has none: its ROCM_PATH resolved to {root} (the environment's ROCM_PATH, or "
                  "the fixed /opt/rocm the HIP scripts fall back to when it is unset), not to "
                  "the install the script belongs to",
            fix=f"export ROCM_PATH={home} (and HIP_CLANG_PATH={home}/llvm/bin), or make {root} "
                f"the link to that install (`ln -s {home} {root}`)")
    if (wanted and own and wanted.group("root") == own.group("root")
            and own.group("root") != "/opt/rocm" and f"{own.group('root')}/llvm/bin/" in path):
        # The script looks for clang inside its own ROCm install (<root>/llvm/bin, any root),
        # not the fixed /opt/rocm fallback: that install has HIP but not its LLVM component.
        root, program = own.group("root"), path.rsplit("/", 1)[-1]
        tool = script.rsplit("/", 1)[-1]
        return Reading(
            subject=program,
            cause=f"{tool} of the ROCm install {root} runs its compiler {path}, which does "
                  f"not exist: {root} has HIP but not its LLVM/clang component (the "
                  "rocm-llvm / llvm-amdgpu package that a full ROCm install pulls in)",
            fix=f"install ROCm's LLVM package for this release into {root} (rocm-llvm, "
                "llvm-amdgpu on older releases; or the whole rocm-dev / rocm meta-package), "
                f"then check with `{tool} --version`")
    if path.startswith("/"):
        return Reading(
            subject="hipcc",
            cause=f"hipcc runs clang as {path}, which does not exist: hipcc takes the clang "
                  "folder from its environment (HIP_CLANG_PATH, ROCM_PATH, or the settings "
                  "a distribution installs for it, e.g. /etc/env.d), and those are not set for "
                  "this shell or point at another layout",
            fix="set HIP_CLANG_PATH to the ROCm LLVM's bin folder (and ROCM_PATH to the ROCm "
                "root) in the environment, or load the environment the ROCm packages install "
                "(log in again, or source /etc/profile); `hipcc --version` checks it")
    return Reading(
        subject="hipcc",
        cause=f"hipcc runs clang as the relative path {path}: it builds the compiler's path "
              "from ROCM_PATH, which is unset or empty, so it looks in the current folder",
        fix="export ROCM_PATH=<the ROCm root> (e.g. /opt/rocm; and HIP_CLANG_PATH=<rocm>/llvm/"
            "bin where the layout differs) before running hipcc")


def _hipcc_path_missing(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path")
    return Reading(
        subject="hipcc",
        cause=f"the build runs hipcc as {path}, which does not exist: the Makefile or script "
              "hard-codes a path of another ROCm layout (hipcc is <rocm>/bin/hipcc, e.g. "
              "/opt/rocm/bin/hipcc)",
        fix="point the build at the real hipcc (set HIPCC / ROCM_PATH, or edit the hard-coded "
            "path to $ROCM_PATH/bin/hipcc; unset a HIP_PATH left from the old <rocm>/hip "
            "layout), or put <rocm>/bin on PATH")


def _hipcc_relative(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="hipcc",
        cause=f"the build ran hipcc as the relative path {match.group('path')}: torch's "
              "cpp_extension joins ROCM_HOME with bin/hipcc, and ROCM_HOME was empty (it takes "
              "ROCM_HOME, else ROCM_PATH, as set: a ROCM_PATH set to '' gives an empty one; "
              "older torch releases with neither set and no hipcc on PATH kept the empty result "
              "of `which hipcc`), so the compile ran a hipcc that is not there",
        fix="export ROCM_HOME (and ROCM_PATH) as the ROCm root that holds bin/hipcc "
            "(`export ROCM_HOME=/opt/rocm`) in the shell that builds the extension, then "
            "rebuild it; `invoke doctor` shows the ROCm install the kit found")


def _hipcc_clang_missing(match: Groups, view: LineView) -> Reading | None:
    path = match.group("path")
    root = path.rsplit("/lib/llvm/bin/", 1)[0] if "/lib/llvm/bin/" in path else \
        path.rsplit("/bin/", 1)[0]
    return Reading(
        subject=path.rsplit("/", 1)[-1],
        cause=f"hipcc ran {path}, which does not exist: hipcc builds the path of its clang++ "
              f"from ROCM_PATH (HIP_PATH on Windows) unless HIP_CLANG_PATH names it, and "
              f"{root} is not the root of a ROCm install (no lib/llvm/bin there: the top "
              "folder of an unpacked tarball, or a ROCm that is not installed there)",
        fix="set ROCM_PATH to the folder that holds bin/hipcc and lib/llvm/bin/clang++ (check "
            "with `ls $ROCM_PATH/lib/llvm/bin/clang++`), or unset it so hipcc finds its own "
            "install; HIP_CLANG_PATH may name the clang folder directly; then compile again")


# LLVM's bitcode reader names the writer's and its own version when it cannot read a module
# ("... (Producer: 'LLVM19.0.0git' Reader: 'LLVM 18.0.0git')"): a compiler older than the
# device libraries it was handed. Tensile reports the compile that failed with the output
# first and then "Failed command: <launcher> <compiler> <flags>"
# (ROCm/Tensile@a164ed70df55ceb076f4a1f2fa2ea11f0f1384cc:Tensile/BuildCommands/
# SourceCommands.py); the output is often wrapped by the log viewer, so the lines before are
# read joined.
_BITCODE_VERSIONS = re.compile(r"Producer: 'LLVM ?(?P<producer>\d+)[\w.]*' Reader: 'LLVM "
                               r"?(?P<reader>\d+)")
_BITCODE_ROOT = re.compile(r"cannot open file '(?P<root>[^']+?)/amdgcn/bitcode/")
_LAUNCHERS = ("ccache", "sccache")


def _older_compiler_newer_bitcode(match: re.Match[str], view: LineView) -> Reading | None:
    joined = "".join(view.previous)
    versions = _BITCODE_VERSIONS.search(joined)
    if versions is None or int(versions.group("producer")) <= int(versions.group("reader")):
        return None
    words = match.group("cmd").split()
    while words and words[0].rsplit("/", 1)[-1] in _LAUNCHERS:
        words = words[1:]
    if not words or "/bin/" not in words[0]:
        return None
    compiler = words[0]
    root, name = compiler.rsplit("/bin/", 1)
    bitcode = _BITCODE_ROOT.search(joined)
    libs = bitcode.group("root") if bitcode else "the ROCm install the device libraries are from"
    return Reading(
        subject=root,
        cause=f"two ROCm installs are mixed: the build compiled with {compiler} (LLVM "
              f"{versions.group('reader')}, from {root}) against device libraries written by "
              f"LLVM {versions.group('producer')} ({libs}), and an older LLVM cannot read newer "
              "bitcode",
        fix=f"give the build the {name} of the install its device libraries come from "
            f"({libs}/bin/{name}; the library's compiler setting or CMAKE_CXX_COMPILER as a "
            f"full path), or take {root}/bin off PATH so the older {name} is not picked up")


# Tensile's toolchain search on Windows (rocBLAS' Tensile and hipBLASLt's tensilelite): when
# the HIP SDK's default folder exists, _windowsLatestRocmBin takes max() over its X.Y
# subfolders, and an empty one stops the build with CPython's "max() iterable argument is
# empty" (3.12+; "max() arg is an empty sequence" before).
_HIP_SDK_DEFAULT = "C:\\Program Files\\AMD\\ROCm"
# (A log may keep a prefix such as buildkit's "1.4<TAB>" before both lines.)
_LATEST_ROCM_FRAME = re.compile(r"(?:^|\s)File \"(?P<file>[^\"]+)\", line \d+, in "
                                r"_windowsLatestRocmBin$")


def _hip_sdk_folder_without_version(match: re.Match[str], view: LineView) -> Reading | None:
    frame = next((f for f in map(_LATEST_ROCM_FRAME.search, reversed(view.previous)) if f),
                 None)
    if frame is None:
        return None
    return Reading(
        subject=_HIP_SDK_DEFAULT,
        cause=f"the build's Tensile ({frame.group('file')}) looks for the ROCm compiler in the "
              f"HIP SDK's default folder {_HIP_SDK_DEFAULT} because it exists, and stops because "
              "the folder holds no X.Y version folder (a HIP SDK removed only in part, or an "
              "empty folder left behind)",
        fix=f"remove the leftover {_HIP_SDK_DEFAULT} folder (or repair the HIP SDK install so "
            "that it holds its X.Y folder), or build a Tensile with the guard for it "
            "(ROCm/hipBLASLt#2110, applied by ROCm/TheRock#688); HIP_PATH alone does not "
            "help, the default folder is searched too")


def _hipcc_unknown_platform(match: re.Match[str], view: LineView) -> Reading | None:
    platform = match.group("platform")
    return Reading(
        subject="HIP_PLATFORM",
        cause=f"hipcc stopped before compiling: the environment sets HIP_PLATFORM='{platform}', "
              "and hipcc knows only amd and nvidia (hcc and nvcc as their old names)",
        fix="export HIP_PLATFORM=amd for a ROCm build (or unset it: hipcc then picks amd "
            "where it finds clang), then compile again")


def _hipcc_on_nvcc(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="HIP_PLATFORM",
        cause=f"hipcc handed an AMD GPU option ({match.group('opt')}) to CUDA's nvcc: it "
              "compiled for the nvidia platform (HIP_PLATFORM=nvidia, or unset where hipcc "
              "found nvcc and no clang++ of ROCm's)",
        fix="export HIP_PLATFORM=amd (and ROCM_PATH to the ROCm install) in the shell that "
            "builds, so hipcc runs ROCm's clang; `hipconfig --platform` shows the platform it "
            "picks")


RULES: tuple[Rule, ...] = (
    Rule(id="tensile-hip-sdk-folder-without-version", klass="rocm-install",
         triggers=("max() ",),
         pattern=rx(r"(?:^|\s)ValueError: max\(\) (?:iterable argument is empty|arg is an "
                    r"empty sequence)$"),
         read=_hip_sdk_folder_without_version,
         source="ROCm/Tensile@a164ed70df55ceb076f4a1f2fa2ea11f0f1384cc:Tensile/Utilities/"
                "Toolchain.py (_windowsLatestRocmBin, _windowsSearchPaths, "
                "DEFAULT_ROCM_BIN_PATH_WINDOWS = C:/Program Files/AMD/ROCm); hipBLASLt's "
                "tensilelite copy as TheRock@03cd82480 patches/amd-mainline/hipBLASLt/0001 "
                "quotes it (Validators.py); ROCm/TheRock#688"),
    Rule(id="older-compiler-newer-device-bitcode", klass="rocm-install",
         triggers=("Failed command: ",),
         pattern=rx(r"Failed command: (?P<cmd>\S+(?: \S+)?)"),
         read=_older_compiler_newer_bitcode,
         source="ROCm/Tensile@a164ed70df55ceb076f4a1f2fa2ea11f0f1384cc:Tensile/BuildCommands/"
                "SourceCommands.py ('Error compiling source object file: <output>\\nFailed "
                "command: <args>'); LLVM's bitcode reader error suffix '(Producer: ... "
                "Reader: ...)' (llvm/lib/Bitcode/Reader/BitcodeReader.cpp, not read here: "
                "unverified); spack/spack-packages#3917, #380"),
    Rule(id="hipcc-no-clang", klass="rocm-install",
         triggers=("Can't exec", "failed to execute:"),
         pattern=rx(r"^Can't exec \"(?P<path>\S*clang(?:\+\+)?)\": No such file or directory at "
                     r"(?P<script>\S*hip(?:cc|config)(?:\.pl)?) line \d+"
                     r"|^failed to execute:\s*(?P<path2>(?:llvm|bin)/\S*clang(?:\+\+)?) "),
         read=_hipcc_no_clang, source="hipcc (perl: \"Can't exec\"; hipcc.bin's "
         "hipBin_amd.h builds the clang path from ROCM_PATH; hipconfig and hipcc read ROCM_PATH "
         "from bin/hipvars.pm, which falls back to the fixed /opt/rocm: ROCm/HIP hipvars.pm, "
         "stored copy, commit not established); justxi/rocm#131, ROCm/HIPCC#103, "
         "ROCm/ROCm#1231"),
    Rule(id="hipcc-path-missing", klass="rocm-install",
         triggers=("hipcc",),
         pattern=rx(r"^(?:make(?:\[\d+\])?|\S*sh): (?:\d+: )?(?P<path>/\S*/hipcc): "
                     r"(?:No such file or directory|not found)"),
         read=_hipcc_path_missing, source="make's and the shell's errors for a missing "
         "program; broncotc/bitsandbytes-rocm#5"),
    Rule(id="hipcc-relative-rocm-home", klass="rocm-install",
         triggers=("bin/hipcc: ",),
         # bash: "<sh>: line N: <cmd>: <strerror>", "line" and strerror in the UI language;
         # dash: "<sh>: N: <cmd>: not found".
         pattern=rx(r"^\S*sh: (?:[^:]{1,24} \d+: |\d+: )?(?P<path>(?:\./)?bin/hipcc): \S"),
         read=_hipcc_relative, source="torch.utils.cpp_extension (torch 2.13 here: "
         "_find_rocm_home takes ROCM_HOME or ROCM_PATH as set; _join_rocm_home('bin', "
         "'hipcc') joins an empty one to the relative bin/hipcc); bash's and dash's "
         "command-not-found forms (reproduced: make/rocm_home_empty.sh, "
         "make/extension_setup.sh); rocm-arch/rocm-arch#865"),
    Rule(id="hipcc-clang-missing", klass="rocm-install",
         triggers=(": not found", "Can't exec \""),
         pattern=rx(r"^(?:/bin/)?(?:da|ba)?sh: (?:line )?\d+: (?P<path>/\S*/bin/clang(?:\+\+|"
                    r"-\d+)?): (?:command )?not found$|^Can't exec \"(?P<path2>/\S*/bin/clang"
                    r"(?:\+\+|-\d+)?)\": No such file or directory at \S*hipcc(?:\.pl)? line"),
         requires=rx(r"^failed to execute:\s*/\S*/bin/clang\S*\s|hipcc(?:\.pl)? line \d+"),
         read=lambda m, v: _hipcc_clang_missing(Alias(m, path="path2"), v),
         source="ROCm/HIPCC@fd8e1efcd3dcc39b021c3bae4600a1a980ab27ef:src/hipBin_amd.h "
         "(constructCompilerPath: clang++'s folder from ROCM_PATH, HIP_PATH on Windows, unless "
         "HIP_CLANG_PATH; executeHipCCCmd prints 'failed to execute:<CMD>' after any non-zero "
         "exit, so only the shell's 'not found' for that clang++ proves the path; newer hipcc "
         "in ROCm/llvm-project uses <rocm>/lib/llvm/bin, not read); bin/hipcc.pl (Perl: "
         "'Can't exec \"<clang>\": No such file or directory at …hipcc.pl line N', reproduced "
         "with Debian 12's hipcc 5.2 and ROCM_PATH at a folder without clang, make/devbt3.sh); "
         "ROCm/legacy-rocm-build#5773"),
    Rule(id="hipcc-unknown-platform", klass="rocm-install",
         triggers=("unknown HIP_PLATFORM",),
         pattern=rx(r"^error: unknown HIP_PLATFORM = '(?P<platform>[^']*)'"),
         read=_hipcc_unknown_platform,
         source="hipcc.pl of Debian 12's hipcc 5.2.3 (/usr/bin/hipcc.pl: printf of 'error: "
         "unknown HIP_PLATFORM', then exit(-1); hipvars.pm maps hcc/nvcc to amd/nvidia), run by "
         "make/devtr.sh; ROCm/HIPCC@30f4e3f16cf1563a06e9d72664ed39dcafb4558c is a README only "
         "(moved to ROCm/llvm-project amd/hipcc, whose wording was not read: unverified)"),
    # nvcc's own wording; only an AMD target in the option proves hipcc chose the wrong platform
    # (a CUDA build's unknown option is that build's own mistake).
    Rule(id="hipcc-on-nvcc", klass="rocm-install",
         triggers=("nvcc fatal",),
         pattern=rx(r"^nvcc fatal\s*: Unknown option '(?P<opt>-{1,2}(?:offload-arch|"
                    r"amdgpu-target|cuda-gpu-arch)=gfx[0-9a-f]{3,4}\S*?)'"),
         read=_hipcc_on_nvcc,
         source="hipvars.pm of Debian 12's hipcc 5.2.3 (HIP_PLATFORM unset: amd where "
         "clang++ runs, else nvidia where nvcc runs); nvcc 13.0's 'nvcc fatal : Unknown option', "
         "run here by make/devtr.sh"),
)
