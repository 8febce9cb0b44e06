"""The other ROCm math libraries (hipBLASLt, MIOpen, rocSOLVER, …): no code object for
the GPU, targets a library was not built for, modules that do not load and BLAS status errors.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import posixpath
import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _blaslt_arch(match: re.Match[str], view: LineView) -> Reading | None:
    if "Overriding blas backend" in view.text:
        return None  # torch's notice that it fell back to hipBLAS: a warning, nothing failed
    return Reading(subject="hipblaslt", cause="hipBLASLt does not support "
                   "{device}: it has no kernels for it, so the matmuls that use it fail",
                   fix="use rocBLAS for this GPU (`export TORCH_BLAS_PREFER_HIPBLASLT=0`), or "
                   "install a ROCm whose hipBLASLt supports the target")


_MATH = r"(?:hipblaslt|rocblas|MIOpen|rocsparse|hipsparselt|rocfft|rocsolver|hipblas|rocrand)"


def _math_bundle(match: re.Match[str], view: LineView) -> Reading | None:
    library = match.group("lib")
    name = library.removeprefix("lib").split(".")[0].lower()
    arch = match.group("arch")
    return Reading(
        subject=name,
        cause=f"the HIP runtime found no code object for {arch} in {library}: that {name} was "
              f"built without kernels for {arch} (a wheel's or install's {name} covers only "
              "some targets)",
        fix=f"use a {name} built for {arch} (a ROCm install or wheel whose {name} lists it, "
            f"or build it with {arch}); or keep torch off {name} on this GPU"
            + (" (TORCH_BLAS_PREFER_HIPBLASLT=0 uses rocBLAS)" if name == "hipblaslt" else ""))


def _math_build_target(match: re.Match[str], view: LineView) -> Reading | None:
    arch = match.group("arch")
    library = match.group("lib").lower()
    return Reading(
        subject=library, cause=f"{library}'s build produced no kernels for {arch} (the "
        f"generated object for {arch} does not exist): this {library} release does not support "
        f"{arch}",
        fix=f"build {library} without {arch} (its GPU_TARGETS), or use a {library} release that "
            f"supports {arch}; the torch build can go on without {library} for that target")


def _math_module_load(match: re.Match[str], view: LineView) -> Reading | None:
    library, arch = match.group("lib").lower(), match.group("arch")
    return Reading(
        subject=library, cause=f"{library} could not load its kernels for {arch} ({library}'s "
        f"code object files for {arch} are not in the install or wheel)",
        fix=f"install a {library} whose library folder holds {arch}'s kernels (the ROCm packages "
            f"or wheels for your GPU family, at a nightly that ships them); until then keep "
            f"torch off {library} for this GPU"
            + (" (TORCH_BLAS_PREFER_HIPBLASLT=0)" if library == "hipblaslt" else ""))


_MATH_NAMES = ("hipsparselt", "hipblaslt", "rocblas", "miopen", "rocsparse", "rocfft",
               "composable_kernel")


_CHECK_FILE = re.compile(r"CMake Error at \S*?(?P<file>[\w.-]+\.cmake):\d+")


def _unsupported_target(match: re.Match[str], view: LineView) -> Reading | None:
    arch = match.group("arch")
    context = " ".join((*view.previous[-4:], view.label, view.text)).lower()
    library = next((name for name in _MATH_NAMES if name in context), "")
    if not library and "tensilelite" in context:
        library = "hipblaslt"  # TensileLite is hipBLASLt's kernel generator, its target check
    if not library:
        return None
    checks = [m.group("file") for line in view.previous[-4:] if (m := _CHECK_FILE.search(line))]
    where = f" in {checks[-1]}" if checks else ""
    return Reading(
        subject=library, cause=f"{library} does not support {arch}: its configure checks the "
        f"target list against the targets it has kernels for{where}",
        fix=f"exclude {arch} from {library}'s targets (build it only for the targets it "
            f"lists{where}), or configure it without device kernels where it offers that; "
            f"torch builds without {library} for that target")


def _no_conv_solver(match: re.Match[str], view: LineView) -> Reading | None:
    # The bare message ends MIOpen's search whatever made every solver inapplicable (a layout,
    # a dilation, a data type, a missing kernel database): alone it proves no cause (ROCm/
    # TheRock#724, a negative). MIOpen's own warning just above it that a solver needed a
    # workspace and was handed none (size 0) shows why the solvers that fit were dropped.
    starved = [m for line in view.previous if (m := _NO_WORKSPACE.search(line))]
    if not starved:
        return None
    solver, needed = starved[-1].group("solver"), starved[-1].group("bytes")
    return Reading(
        subject="miopen",
        cause=f"MIOpen found no solver it could run for this convolution: the one that fits "
              f"({solver}) needs a {needed}-byte workspace and was handed none (size 0), so "
              "it was dropped and no other solver applies (this MIOpen build lacks the "
              "solvers that work without a workspace for the GPU's target)",
        fix="use a newer MIOpen (the ROCm or torch wheel of a later release) that ships "
            "solvers for the GPU's target; meanwhile MIOPEN_DEBUG_CONV_DIRECT_NAIVE_CONV_FWD=1 "
            "(slow naive kernels) or torch.backends.cudnn.enabled = False keeps MIOpen's "
            "missing solvers out of the way")


# MIOpen's warning when a solver's workspace is larger than the one provided.
_NO_WORKSPACE = re.compile(r"MIOpen\(HIP\): Warning \[IsEnoughWorkspace\].*?Solver "
                           r"<(?P<solver>\w+)>, workspace required: (?P<bytes>\d+), provided "
                           r"ptr: \S+ size: 0\b")


def _rocwmma_arch(match: re.Match[str], view: LineView) -> Reading | None:
    # rocWMMA's config.hpp stops any device compile for a target it has no matrix-core path
    # for. Inside rocWMMA's own source tree (…/rocwmma/library/include/…) the library is being
    # built for that target; an installed header (…/include/rocwmma/…) is an application's
    # device compile that includes rocWMMA for a target the installed release lacks.
    path = match.group("path").replace("\\", "/")
    own = "/library/include/rocwmma/" in path
    if own:
        return Reading(
            subject="rocwmma",
            cause="rocWMMA does not support {device}: its config.hpp stops the device compile "
                  "for a target it has no matrix-core (WMMA/MFMA) path for, and the build "
                  "compiles rocWMMA for that target",
            fix="leave rocWMMA out of the build for {device} (TheRock: its excluded-projects "
                "list for the target or family), or build rocWMMA only for targets it lists")
    named = {m.group(1) for line in view.previous
             for m in re.finditer(r"\b(gfx[0-9a-f]{3,4})\b", line)}
    target = named.pop() if len(named) == 1 else "{device}"
    return Reading(
        subject=target, klass="gpu-target",
        cause="the installed rocWMMA (" + path.split("/rocwmma/")[0] + "/rocwmma) does not "
              f"support {target}: its config.hpp stops the device compile for a target it has "
              "no matrix-core path for, and this build compiles code that includes rocWMMA for "
              f"{target}",
        fix=f"build without the rocWMMA code path for {target} (the project's rocWMMA option, "
            "e.g. GGML_HIP_ROCWMMA_FATTN=OFF), or install a rocWMMA release that supports it")


# rocWMMA's public API (rocwmma.hpp): the calls an application makes on fragments.
_ROCWMMA_CALL = (r"error: no matching function for call to '(?:rocwmma::)?(?:mma_sync|"
                 r"load_matrix_sync|store_matrix_sync|fill_fragment|synchronize_workgroup)'")


def _rocwmma_fragment(match: re.Match[str], view: LineView) -> Reading | None:
    # clang's "candidate template ignored: substitution failure" means the arguments were
    # deduced (block sizes and types agree with the call) but rocWMMA's own mma_sync is
    # ill-formed with them when compiled for the target: the installed release does not
    # provide that (target, block, type) combination. For the basic 16x16x16 block with a
    # 16-bit input and a 16-bit or float accumulator, which every target rocWMMA supports
    # has, that is the release failing the target, not the application's choice.
    block = (match.group("m"), match.group("n"), match.group("k"))
    basic = (match.group("in") in _BASIC_INPUTS
             and match.group("acc") in _BASIC_INPUTS | {"float"})
    if block != ("16", "16", "16") or not basic:
        return None  # another block or type: an application's choice, not proven the target
    if re.search(r"\bLayout[AB] = void\b", view.text):
        return None  # an input fragment without a layout: the application's own mistake
    root = posixpath.normpath(match.group("path").replace("\\", "/")).split("/rocwmma/")[0]
    kind = f"16x16x16 {match.group('in')} -> {match.group('acc')}"
    return Reading(
        subject="rocwmma",
        cause="the installed rocWMMA (" + root + "/rocwmma) does not provide mma_sync for "
              "the basic " + kind + " block on {device}: clang set its own template aside "
              "(substitution failure) although the call's sizes and types agree with it, so "
              "this rocWMMA release does not support that target",
        fix="build without the project's rocWMMA code path (llama.cpp: "
            "GGML_HIP_ROCWMMA_FATTN=OFF) for {device}, or use a rocWMMA release that "
            "supports the target (for gfx12: the rocWMMA of ROCm 7.0 or later)")


_BASIC_INPUTS = frozenset({"__half", "_Float16", "rocwmma::float16_t", "rocwmma::hfloat16_t",
                           "__hip_bfloat16", "rocwmma::bfloat16_t", "hip_bfloat16"})


_MIOPEN_DEVICE = re.compile(r"MIOpen\(HIP\): \w+ \[get_device_name\] Raw device name: "
                            r"(?P<arch>gfx[0-9a-f]{3,4})")


def _miopen_inline_asm(match: re.Match[str], view: LineView) -> Reading | None:
    # An assembler error in "<inline asm>" has no file of its own: it belongs to a kernel
    # compiled at run time. MIOpen's own lines just above it (its logging, MIOPEN_LOG_LEVEL)
    # say whose: MIOpen's runtime build through comgr. Without them, claim nothing.
    if not any(line.startswith("MIOpen(HIP):") for line in view.previous):
        return None
    named = [m.group("arch") for line in view.previous if (m := _MIOPEN_DEVICE.search(line))]
    target = named[-1] if named else "{device}"
    return Reading(
        subject="miopen",
        cause=f"MIOpen compiled one of its kernels for {target} at run time and the assembler "
              f"rejected its inline assembly ({match.group('msg')}): that kernel's source uses "
              f"instructions or modifiers {target}'s ISA does not have, in this MIOpen release",
        fix=f"use an MIOpen release whose kernels support {target} (a newer ROCm or torch "
            "wheel), or keep the failing op off MIOpen (torch.backends.cudnn.enabled = False)")


def _miopen_std_conversion(match: re.Match[str], view: LineView) -> Reading | None:
    func = match.group("func")
    return Reading(
        subject="miopen",
        cause=f"MIOpen failed inside itself: std::{func} threw (the C++ library's conversion "
              "of text to a number, whose message is only the function's name), so MIOpen "
              "read a text it expected to be a number (from its databases, a device or "
              "kernel name, or an environment variable) and the call returned "
              "miopenStatusUnknownError; the ROCm install and PyTorch are not at fault",
        fix="report it to MIOpen with the GPU target and the MIOPEN_LOG_LEVEL=6 log; remove "
            "MIOpen's user databases (~/.config/miopen, ~/.cache/miopen) in case a stored "
            "entry is what it read; until fixed, torch.backends.cudnn.enabled = False makes "
            "PyTorch skip MIOpen for convolutions and batch norm")


def _miopen_sqlite_column(match: re.Match[str], view: LineView) -> Reading | None:
    column = match.group("col")
    return Reading(
        subject="MIOpen",
        cause=f"MIOpen's SQLite performance database has no column '{column}' that its query "
              "asks for: the table was made with another schema than this code reads (a user "
              "database left by another MIOpen release, or an MIOpen built with its SQLite "
              "perf DB, whose one table schema does not fit every problem type)",
        fix="remove MIOpen's user databases (~/.config/miopen/*.udb, or $MIOPEN_USER_DB_PATH) "
            "so this release recreates them; if a fresh one fails the same way, rebuild MIOpen "
            "with -DMIOPEN_USE_SQLITE_PERFDB=OFF (its text perf DB) or use a release that "
            "fixes the schema")


def _rocblas_hip_error(match: re.Match[str], view: LineView) -> Reading | None:
    error = match.group("err")
    if error not in ("hipErrorInvalidDeviceFunction", "hipErrorNoBinaryForGpu"):
        return None  # out of memory, a launch failure, …: not a missing kernel
    return Reading(
        subject="rocBLAS",
        cause=f"a HIP call inside rocBLAS failed with {error}: rocBLAS holds no kernel the "
              "GPU can run for this call ({device}): the installed rocBLAS release was built "
              "without (or with broken) kernels for that target",
        fix="use a rocBLAS (ROCm release, wheel or the application's bundle) whose kernels "
            "cover the GPU's target: another release of it, or build it for the target; "
            "check `ls <rocm>/lib/rocblas/library/*<gfx>*` (bin\\rocblas\\library on Windows)")


def _blas_status(match: re.Match[str], view: LineView) -> Reading | None:
    call = match.group("call") or match.group("call2")
    status = match.group("status") or match.group("status2")
    library = "hipblaslt" if call.lower().startswith("hipblaslt") else "rocblas"
    return Reading(
        subject=library,
        cause=f"the GPU's first BLAS call ({call}) failed inside {library} "
              f"({status}): most often {library} has no kernels (Tensile "
              "library) for this GPU's target, so the call cannot run",
        fix=f"check that {library} ships kernels for the GPU's gfx target (`ls "
            f"$ROCM_PATH/lib/{library}/library/` lists one file set per gfx target); use a "
            "ROCm or torch build that has them, or present the GPU as a supported target of "
            "its family (HSA_OVERRIDE_GFX_VERSION=10.3.0 for RDNA2, 11.0.0 for RDNA3)")


def _hipblaslt_attribute_removed(match: re.Match[str], view: LineView) -> Reading | None:
    # The text is the macro's body as clang echoes it under its note in hipblaslt.h.
    if not any("hipblaslt.h" in line and "expanded from macro" in line
               for line in view.previous[-2:]):
        return None  # the text quoted elsewhere (a header listing, a diff), not a compile
    old, new = match.group("old"), match.group("new")
    return Reading(
        subject="hipblaslt",
        cause=f"the source uses the hipBLASLt attribute {old}, which the installed hipBLASLt "
              "(of the ROCm the build compiles against) no longer supports: its hipblaslt.h "
              "now defines the name as a static_assert(false, ...), so every use stops the "
              "compile; the source was written for an older ROCm's hipBLASLt",
        fix=f"build against the ROCm release the source was written for (an older ROCm), or "
            f"use a release of the source that sets {new} instead of {old} (PyTorch keeps "
            "the old attribute to the ROCm releases that have it)")


RULES: tuple[Rule, ...] = (
    Rule(id="hipblaslt-attribute-removed", klass="math-library",
         triggers=("is deprecated and not supported. Please set",),
         pattern=rx(r"static_assert\(false, \"(?P<old>HIPBLASLT_\w+) is deprecated and not "
                    r"supported\. Please set (?P<new>HIPBLASLT_\w+)"),
         read=_hipblaslt_attribute_removed,
         source="ROCm hipBLASLt's hipblaslt.h (stored copy read with find_string): `#define "
         "HIPBLASLT_MATMUL_DESC_A_SCALE_POINTER_VEC_EXT static_assert(false, \"... is "
         "deprecated and not supported. Please set HIPBLASLT_MATMUL_DESC_A_SCALE_MODE as "
         "HIPBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F instead.\")`, the same for B; "
         "pytorch/ao#2578 (rocm 7.0.0)"),
    Rule(id="hipblaslt-arch", klass="math-library",
         triggers=("hipBLASLt", "hipblaslt", "HIPBLASLT"),
         pattern=rx(r"(?i)hipblaslt.*(?:unsupported (?:gpu )?arch|not supported on this arch"
                     r"|does not support)"),
         read=_blaslt_arch, source="pytorch/pytorch#179865"),
    Rule(id="math-library-no-code-object", klass="math-library",
         triggers=("Cannot find CO in the bundle",),
         pattern=rx(r"Cannot find CO in the bundle \S*?(?P<lib>lib" + _MATH +
                     r"[\w.]*\.so[\w.]*) for ISA: amdgcn-amd-amdhsa--(?P<arch>gfx[0-9a-f]+)"),
         read=_math_bundle, source="HIP runtime hip_fatbin.cpp 'Cannot find CO in the bundle'; "
         "pytorch/pytorch#127169"),
    Rule(id="math-library-target-objects", klass="math-library",
         triggers=("no such file or directory",),
         pattern=rx(r"no such file or directory: '\S*?/(?P<lib>hipBLASLt|rocBLAS|hipblaslt|"
                     r"rocblas)/\S*_(?P<arch>gfx[0-9a-f]{3,4})\.(?:o|co|hsaco)'"),
         read=_math_build_target, source="ROCm/TheRock#154 (hipBLASLt extops for gfx1151)"),
    Rule(id="math-library-module-load", klass="math-library",
         triggers=("hipModuleLoad failed",),
         pattern=rx(r"hipModuleLoad failed: \S*?[/\\](?P<lib>hipblaslt|rocblas|hipsparselt)"
                     r"[/\\]library[/\\]\S*?(?P<arch>gfx[0-9a-f]{3,4})"),
         read=_math_module_load, source="ROCm/TheRock#2847, #6641 (lazy Tensile kernels "
         "missing from a wheel or build)"),
    Rule(id="library-unsupported-target", klass="math-library",
         triggers=("Unsupported GPU target",),
         pattern=rx(r"Unsupported GPU target: (?P<arch>gfx[0-9a-f]{3,4})"),
         read=_unsupported_target, source="hipSPARSELt's cmake/hipsparselt_supported_"
         "architectures.cmake; ROCm/TheRock#2042; ROCm/rocm-libraries@b21709c573433d75ed66964a"
         "34bfd579d77d04d3:projects/hipblaslt/cmake/tensilelite_supported_architectures.cmake "
         "(tensilelite_validate_gpu_targets: \"Unsupported GPU target: ${target}\"); "
         "ROCm/TheRock#2221"),
    Rule(id="miopen-no-solver", klass="math-library",
         triggers=("No suitable algorithm was found",),
         pattern=rx(r"MIOpen Error: \S*: No suitable algorithm was found to execute the "
                     r"required convolution"),
         read=_no_conv_solver, source="MIOpen src/ocl/convolutionocl.cpp (MIOPEN_THROW when "
         "no solver applies; source not read here) with MIOpen's IsEnoughWorkspace warning "
         "above it (workspace size 0), as logged in ROCm/TheRock#749; ROCm/TheRock#724 (the "
         "bare message: a negative)"),
    Rule(id="blas-status-at-call", klass="math-library",
         triggers=("HIPBLAS_STATUS_", "rocblas_status_"),
         pattern=rx(r"(?P<status>HIPBLAS_STATUS_(?:INTERNAL_ERROR|NOT_SUPPORTED|ARCH_MISMATCH|"
                     r"EXECUTION_FAILED)) when calling `(?P<call>hipblas\w+)"
                     r"|(?P<status2>rocblas_status_(?:internal_error|not_implemented|"
                     r"arch_mismatch)) when calling `?(?P<call2>rocblas_\w+)"),
         read=_blas_status, source="torch's TORCH_CUDABLAS_CHECK message (\"... when calling "
         "`hipblas...`\"); ROCm/rocm-libraries#8539"),
    Rule(id="rocblas-hip-error", klass="math-library",
         triggers=("rocBLAS error from hip error code",),
         pattern=rx(r"rocBLAS error from hip error code: '(?P<err>hipError\w+)'"),
         read=_rocblas_hip_error, source="rocBLAS's report of a failed HIP call inside it "
         "(\"rocBLAS error from hip error code: '<hipError name>':<code>\"), text as printed in "
         "lemonade-sdk/lemonade#3409; rocBLAS's source of the text not read (unverified)"),
    Rule(id="rocwmma-unsupported-arch", klass="math-library",
         triggers=("Unsupported architecture",),
         pattern=rx(r"(?P<path>\S*rocwmma[/\\]internal[/\\]config\.hpp):\d+:\d+: error: "
                     r"static assertion failed: Unsupported architecture"),
         read=_rocwmma_arch, source="rocWMMA's include/rocwmma/internal/config.hpp "
         "(static_assert(0, \"Unsupported architecture\") for a target without its "
         "matrix-core path), the source line as the compiler quotes it in ROCm/TheRock#2127 "
         "and ROCm/rocm-libraries#4618; the file itself not read here"),
    Rule(id="miopen-inline-asm", klass="math-library",
         triggers=("<inline asm>",),
         pattern=rx(r"^<inline asm>:\d+:\d+: error: (?P<msg>not a valid operand|invalid "
                     r"operand for instruction|instruction not supported on this GPU)"),
         read=_miopen_inline_asm, source="MIOpen's run-time kernel build (comgr) of kernels "
         "with inline assembly, after its own 'MIOpen(HIP): Info [get_device_name] Raw device "
         "name' logging, as in ROCm/MIOpen#1528 (row_bcast on gfx1031) and #3796; MIOpen's "
         "source not read here"),
    Rule(id="miopen-std-conversion", klass="math-library",
         triggers=("MIOpen Error: sto",),
         pattern=rx(r"^MIOpen Error: (?P<func>sto(?:i|l|ul|ll|ull|f|d|ld))\s*$"),
         read=_miopen_std_conversion, source="MIOpen's report of a C++ exception caught at "
         "its API (\"MIOpen Error: \" + what(), without the file:line its own MIOPEN_THROW "
         "adds; MIOpen's source not read here: unverified); libstdc++'s std::sto* throw with "
         "the bare function name as what() (g++ 12 here, make/devrt7.sh); "
         "ROCm/pytorch#2837 (gfx1151)"),
    Rule(id="miopen-sqlite-column", klass="math-library",
         triggers=("no such column",),
         pattern=rx(r"MIOpen Error: \S*sqlite_db\.cpp:\d+: SQLite \w+ error: .*no such "
                     r"column: (?P<col>\w+)"),
         read=_miopen_sqlite_column, source="MIOpen src/sqlite_db.cpp ('SQLite prepare "
         "error: ' + sqlite3_errmsg, as logged in ROCm/rocm-libraries#5452; source not read); "
         "sqlite3's 'no such column: X' for a query naming a column the table lacks"),
    Rule(id="rocwmma-fragment-substitution", klass="math-library",
         triggers=("candidate template ignored: substitution failure",),
         pattern=rx(r"^(?P<path>(?:[A-Za-z]:[/\\][^:\n]*?|\S*)[/\\]include[/\\]rocwmma[/\\]"
                    r"[^:\s]+?\.hpp):\d+:\d+: note: "
                    r"candidate template ignored: substitution failure \[with BlockM = "
                    r"(?P<m>\d+), BlockN = (?P<n>\d+), BlockK = (?P<k>\d+), "
                    r"InputT = (?P<in>[\w:]+), ComputeT = (?P<acc>[\w:]+)"),
         requires=rx(_ROCWMMA_CALL.replace("error: ", r"\d+:\d+: error: ")),
         read=_rocwmma_fragment,
         source="ROCm/rocWMMA@fa7e8ee6f1ad43261fe5a66abddfe7c4ef8e7d6e: library/include/rocwmma/"
         "rocwmma_impl.hpp (mma_sync templated on BlockM, BlockN, BlockK, InputT, ComputeT and "
         "the fragment layouts) and internal/wmma_impl.hpp, config.hpp (per-target paths; "
         "this 1.6.0 snapshot already has gfx12 f16 WMMA, the 1.7.0 of ROCm 6.4 still failed "
         "in the threads: the mechanism is not read here); clang's 'candidate template "
         "ignored: substitution failure [with ...]' note; "
         "ggml-org/llama.cpp#13110, #14193, #14202 (no released rocWMMA before ROCm 7.0 "
         "supports gfx12, the maintainer's word)"),
)
