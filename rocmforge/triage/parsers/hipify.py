"""hipify: the step that fails, its module missing, runaway recursion, and CUDA types
that hipified sources still name.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _hipify_fail(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject=match.group("file"), cause="hipify could not rewrite a CUDA source "
                   "for HIP", fix="run hipify on a clean checkout (`invoke checkout` restores "
                   "it; sources hipified by another PyTorch release confuse it), then rerun")


def _hipified_unknown_type(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("file").replace("\\", "/")
    source = path.rsplit("/", 1)[-1]
    name = match.group("type")
    if match.group("folder") and (not name.lower().startswith("cu") or
                                  "/include/hip/" in path):
        return None  # a hip* name, or ROCm's own include/hip headers: not a hipify leftover
    if re.search(r"(?:^|/)(?:caffe2|aten/src|torch/csrc|c10)/", path):
        return Reading(
            subject=source,
            cause=f"PyTorch's own hipified source {source} uses {name}, a CUDA name its hipify "
                  "does not map: this PyTorch revision's CUDA source has no ROCm path for it",
            fix="build a PyTorch revision whose source keeps a ROCm path there (the fix is "
                "upstream, or carry it as a patch), then hipify a clean checkout again")
    how = ("hipify left this CUDA name as it was (this torch's hipify has no mapping for it)"
           if name.lower().startswith("cu") else "the HIP headers do not declare it")
    return Reading(
        subject=source, cause=f"the hipified source {source} uses {name}: {how}; torch's "
        "hipify maps CUDA names differently in this release (PyTorch 2.1 moved cuBLAS from "
        "rocBLAS to hipBLAS names) than the sources were written for",
        fix="build the extension release (or branch) written for this PyTorch's hipify "
            "mapping (e.g. ROCm/apex's branch for torch >= 2.1), or a PyTorch the sources "
            "match")


def _cuda_name_left(match: re.Match[str], view: LineView) -> Reading | None:
    name, space, hint = match.group("name"), match.group("ns"), match.group("hint")
    spelled = re.sub("(?i)cuda", lambda m: "HIP" if m.group(0).isupper() else (
        "Hip" if m.group(0)[0].isupper() else "hip"), name)
    if "hip" not in space.lower() or hint != spelled:
        return None  # not a CUDA name whose HIP spelling the compiler itself suggests
    source = re.split(r"[\\/]", match.group("file"))[-1]
    return Reading(
        subject=source,
        cause=f"the hipified source {source} calls {name} in namespace {space}, where HIP "
              f"has {hint}: the hipify that produced it has no mapping for {name} and left "
              "the CUDA name as it was",
        fix=f"add the mapping {name} -> {hint} to the cuda_to_hip_mappings.py of the hipify "
            "the project runs (torch.utils.hipify for a torch extension; the project's "
            "hipify_torch submodule, ROCm/hipify_torch, where it hipifies with that), or use "
            "a release of it that has the mapping, then hipify a clean checkout again")


def _hipify_argument(match: re.Match[str], view: LineView) -> Reading | None:
    arg = match.group("arg")
    return Reading(
        subject="hipify_python",
        cause=f"the project's build calls torch.utils.hipify's hipify() with {arg}, an "
              "argument the installed torch's hipify_python does not take: this PyTorch is "
              "older than the build code expects",
        fix=f"build against a PyTorch whose hipify takes {arg} (a newer release, or a ROCm "
            "PyTorch branch that carries that hipify change), or use the project's release "
            "written for this torch's hipify")


_FRAME = re.compile(r'^File "(?P<file>[^"]+)", line \d+')


def _cuda_home_none(match: re.Match[str], view: LineView) -> Reading | None:
    lines = view.previous
    if not any("hipify" in line for line in lines):
        return None  # not in the hipify step: the extension family's (extension_setup)
    at = next((i for i in range(len(lines) - 1, -1, -1) if "CUDA_HOME" in lines[i]
               and not _FRAME.match(lines[i])), None)
    if at is None:
        return None
    frame = next((_FRAME.match(lines[i]) for i in range(at - 1, -1, -1)
                  if _FRAME.match(lines[i])), None)
    where = re.split(r"[\\/]", frame.group("file"))[-1] if frame else "the build script"
    return Reading(
        subject=where,
        cause=f"{where} joins torch.utils.cpp_extension.CUDA_HOME into a path while the "
              "project hipifies its sources, and on a ROCm PyTorch CUDA_HOME is None (it is "
              "set only for a CUDA build of torch): os.path.join gets None",
        fix="on a ROCm PyTorch the build code must take torch.utils.cpp_extension.ROCM_HOME "
            "(when torch.version.hip is set) instead of CUDA_HOME: use the project's release "
            "that does, or patch that line")


def _hipify_source_missing(match: re.Match[str], view: LineView) -> Reading | None:
    if not any("open(fin_path" in line for line in view.previous[-3:]):
        return None  # another open(): not hipify reading the extension's sources
    path = match.group("path")
    name = re.split(r"[\\/]", path)[-1]
    sdist = re.search(r"pip-(?:install|req-build)-", path) is not None
    how = (" (pip unpacked a source distribution that leaves it out)" if sdist else "")
    return Reading(
        subject=name,
        cause=f"hipify (torch.utils.hipify) could not read {name}, a source the project's "
              f"setup lists for its extension: the file is not in the tree being built{how}",
        fix="build from the project's full source tree (a git clone with `git submodule "
            "update --init --recursive`, then `pip install --no-build-isolation .` against "
            "the ROCm torch) rather than a package that lacks the file")


def _hipify_not_written(match: re.Match[str], view: LineView) -> Reading | None:
    out, err, src = match.group("out"), match.group("err"), match.group("src")
    name = re.split(r"[\\/]", src)[-1]
    return Reading(
        subject=name,
        cause=f"hipify could not write {out} ({err}) and left {name} as it was, CUDA "
              "source: the build then compiles the unconverted file (CUDA headers and calls "
              "a HIP build lacks), although hipify reports success",
        fix="make the source tree writable for the user that builds (not a tree owned by "
            "root or mounted read-only; chown it, or build from a copy you own), remove "
            f"{out} if a stale file or link is in its place, and rerun the build")


_SOURCE_AT = re.compile(r"(?P<file>[\w./\\+-]+\.(?:h|hpp|cuh|cpp|cc|cu|hip))(?::\d+)+")


def _cuda_call_left(match: re.Match[str], view: LineView) -> Reading | None:
    name, hint = match.group("name"), match.group("hint")
    if hint != "hip" + name[len("cuda"):]:
        return None  # the compiler suggests some other name: not the HIP spelling of this one
    where = match.group("file") or next(
        (m.group("file") for m in map(_SOURCE_AT.search, reversed(view.previous[-1:])) if m),
        "")
    source = re.split(r"[\\/]", where)[-1] if where else name
    return Reading(
        subject=source,
        cause=f"a HIP compile of {where or 'a source'} calls the CUDA runtime function {name}, "
              f"whose HIP counterpart {hint} the compiler found: the hipify pass that "
              f"produced the source left {name} untranslated (its hipify, or the hipify of "
              "that ROCm release, has no mapping for it)",
        fix=f"use a hipify that maps {name} (a newer ROCm's hipify-perl/hipify-clang, or "
            "the project release whose hipify step knows it), or patch the CUDA source to "
            f"call {hint} under HIP; then delete the build folder so the project's build "
            "hipifies the sources again (a CMake-driven hipify rewrites them when it "
            "configures)")


# nvcc's options that ROCm's clang (hipcc) rejects as errors: the first four are
# torch.utils.cpp_extension's COMMON_NVCC_FLAGS (torch 2.13 installed here, given to nvcc only,
# not in COMMON_HIPCC_FLAGS) and flash-attention's nvcc_flags
# (Dao-AILab/flash-attention@0251105a2fb19d2957484b7f023cd8c115286ced:setup.py); hipcc 5.2's
# clang here answers each with "unsupported option" and clang 22 with "unknown argument"
# (make/devbt4.sh). -lineinfo and -Xptxas only warn: not in the list.
_NVCC_ONLY = r"--expt-relaxed-constexpr|--expt-extended-lambda|--use_fast_math|--ptxas-options\S*"


def _hipify_result_missing(match: re.Match[str], view: LineView) -> Reading | None:
    # The KeyError must come out of hipify's own lookup: the two lines before it are the
    # frame in hipify_python.py and its source line indexing HIPIFY_FINAL_RESULT.
    if not any("HIPIFY_FINAL_RESULT[" in line for line in view.previous[-2:]) or \
            not any("hipify_python.py" in line for line in view.previous[-3:]):
        return None
    header = match.group("path")
    return Reading(
        subject="hipify_python.py",
        cause=f"torch.utils.hipify looked the included header {header} up in "
              "HIPIFY_FINAL_RESULT (the headers it has hipified) and it was not there: this "
              "PyTorch's hipify rewrites every #include it can resolve through the include "
              "folders, also headers outside the project that it never hipified (a system "
              "header such as /usr/include/...), and its lookup then raises KeyError",
        fix="build the extension with a PyTorch whose hipify skips headers it has no result "
            "for (later releases check `header_filepath in HIPIFY_FINAL_RESULT` first), or "
            "keep system include folders out of the extension's include_dirs so hipify does "
            "not resolve them")


def _nvcc_flag(match: re.Match[str], view: LineView) -> Reading | None:
    option = match.group("opt").rstrip("'")
    return Reading(
        subject=option.split("=", 1)[0],
        cause=f"the build passes {option}, an option of NVIDIA's nvcc, to the HIP compiler "
              "(hipcc, ROCm's clang), which rejects it: the project's build script gives its "
              "CUDA (nvcc) flags to the ROCm compile unchanged instead of choosing flags for "
              "the ROCm toolchain",
        fix=f"drop {option} (and nvcc's other options) from the extension's compile flags when "
            "building for ROCm: the project's setup.py / CMakeLists must pass them only when "
            "torch.version.hip is None (a release that does, or patch the flags list); "
            "torch.utils.cpp_extension itself gives nvcc flags to nvcc only")


RULES: tuple[Rule, ...] = (
    Rule(id="hipify-cuda-call-left", klass="hipify",
         triggers=("use of undeclared identifier 'cuda",),
         pattern=rx(r"(?:^(?P<file>\S+?)(?::\d+)+: error: |^)use of undeclared identifier "
                    r"'(?P<name>cuda\w+)'; did you mean '(?P<hint>hip\w+)'\?"),
         read=_cuda_call_left, source="clang's err_undeclared_var_use_suggest ('use of "
         "undeclared identifier %0; did you mean %1?'), reproduced with hipcc 5.2 here on a "
         "call of cudaThreadExchangeStreamCaptureMode (make/devbt4.sh); ROCm/rccl#672"),
    Rule(id="nvcc-flag-to-hipcc", klass="hipify",
         triggers=("unsupported option '--", "unknown argument: '--"),
         pattern=rx(r"^\S*clang\S*: error: (?:unsupported option|unknown argument:) '"
                    r"(?P<opt>" + _NVCC_ONLY + r")'"),
         requires=rx(r"hipcc|/opt/rocm|--offload-arch=gfx|when compiling for gfx|-x hip\b"),
         read=_nvcc_flag, source="torch.utils.cpp_extension COMMON_NVCC_FLAGS (torch 2.13); "
         "Dao-AILab/flash-attention@0251105a2fb19d2957484b7f023cd8c115286ced:setup.py; hipcc "
         "5.2 and clang 22 here (make/devbt4.sh); ModelCloud/GPTQModel#1222"),
    Rule(id="hipify-result-keyerror", klass="hipify",
         triggers=("KeyError: ",),
         pattern=rx(r"^KeyError: '(?P<path>[^']+)'$"),
         read=_hipify_result_missing,
         source="pytorch/pytorch:torch/utils/hipify/hipify_python.py, stored copies read with "
         "find_string: older releases' repl() does `value = HIPIFY_FINAL_RESULT[header_filepath]"
         "[\"hipified_path\"]` unguarded, later ones `elif header_filepath in "
         "HIPIFY_FINAL_RESULT:`; pytorch/pytorch#51453"),
    Rule(id="hipify-failed", klass="hipify",
         triggers=("hipify",),
         pattern=rx(r"(?i)hipify\S*: (?:error|fatal)[^:]*: "
                     r".*?(?P<file>[\w./-]+\.(?:cu|cuh|h|cpp))"),
         read=_hipify_fail, source="hipify-perl / hipify-clang"),
    Rule(id="hipified-unknown-type", klass="hipify",
         triggers=("unknown type name '", "use of undeclared identifier '"),
         pattern=rx(r"(?P<file>[\w./\\+-]+_hip\.(?:hip|cpp|cu|h)|[\w./\\+-]+\.hip"
                     r"|(?P<folder>[\w./\\+-]*[/\\]hip[/\\])[\w.+-]+\.(?:h|hpp|cuh|cpp))"
                     r"(?::\d+)+:"
                     r" error: "
                     r"(?:unknown type name|use of undeclared identifier) "
                     r"'(?P<type>(?:hip|cu|CU)\w+)'"),
         read=_hipified_unknown_type, source="torch/utils/hipify/hipify_python.py "
         "get_hip_file_path (torch 2.13 as installed here: a directory component named cuda "
         "becomes hip, c10/cuda -> c10/hip), so a CUDA name undeclared in a hip/ folder's "
         "file is one hipify left; pytorch/pytorch#63280; ROCm/apex#115 (hipblasOperation_t after "
         "PyTorch 2.1's hipify change); pytorch/pytorch#97640 (a CUDA name hipify does not "
         "map, left in caffe2's math_gpu.hip)"),
    Rule(id="hipify-cuda-name-left", klass="hipify",
         triggers=("did you mean '",),
         pattern=rx(r"^(?P<file>\S+?)(?::\d+)+: error: no member named '(?P<name>\w*(?i:cuda)\w*)'"
                     r" in namespace '(?P<ns>[\w:]+)'; did you mean '(?P<hint>\w+)'\?"),
         read=_cuda_name_left, source="clang's err_no_member_suggest ('no member named %0 in "
         "%1; did you mean %2?'); torch/utils/hipify/cuda_to_hip_mappings.py (torch 2.13 as "
         "installed here) and ROCm/hipify_torch@1a75130f30fc5afc116c79627afbf99e160d6d10:"
         "hipify/cuda_to_hip_mappings.py, the tables a name must be in to be rewritten; "
         "pytorch/FBGEMM#4705"),
    Rule(id="hipify-unknown-argument", klass="hipify",
         triggers=("hipify() got an unexpected keyword argument",),
         pattern=rx(r"TypeError: hipify\(\) got an unexpected keyword argument '(?P<arg>\w+)'"),
         read=_hipify_argument, source="torch/utils/hipify/hipify_python.py def hipify(...) "
         "(torch 2.13 as installed here takes hipify_extra_files_only; older releases did "
         "not); deepspeedai/DeepSpeed#1816"),
    Rule(id="hipify-cuda-home-none", klass="hipify",
         triggers=("not NoneType",),
         pattern=rx(r"^TypeError: expected str, bytes or os\.PathLike object, not NoneType"),
         read=_cuda_home_none, source="torch/utils/cpp_extension.py (torch 2.13 as installed "
         "here: CUDA_HOME = _find_cuda_home() if torch.version.cuda else None, ROCM_HOME for "
         "a HIP build); deepspeedai/DeepSpeed#7224"),
    Rule(id="hipify-source-missing", klass="hipify",
         triggers=("No such file or directory: '",),
         pattern=rx(r"^FileNotFoundError: \[Errno 2\] No such file or directory: "
                     r"'(?P<path>[^']+\.(?:c|cc|cpp|cu|cuh|h|hpp))'"),
         read=_hipify_source_missing, source="torch/utils/hipify/hipify_python.py "
         "preprocessor (torch 2.13 as installed here: `with open(fin_path, "
         "encoding='utf-8') as fin:` for each source it rewrites); state-spaces/mamba#412"),
    Rule(id="hipify-output-not-written", klass="hipify",
         triggers=("Failed to save ",),
         pattern=rx(r"Failed to save (?P<out>[^\s{}]+) with \"(?P<err>[^\"{}]+)\", "
                    r"leaving (?P<src>[^\s{}]+) unchanged\."),
         read=_hipify_not_written, source="torch/utils/hipify/hipify_python.py "
         "preprocessor (torch 2.13 as installed here: the OSError of writing fout_path is "
         "printed as this warning and fin_path is kept as the file to build); reproduced by "
         "make/devpt6.sh"),
)
