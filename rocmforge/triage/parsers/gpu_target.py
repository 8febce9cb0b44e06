"""GPU targets (gfx…): a target the compiler, a library or a kernel set does not support,
an empty or rejected target list, and a target that cannot be detected.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.knowledge.arches import load_arch_table
from rocmforge.triage.parsers.compiler_flags import cmake_check_probe
from rocmforge.triage.rule import Alias, Groups, LineView, Reading, Rule, rx

_LIST_SEPARATOR = re.compile(r"[;, ]")
# clang's driver prefixes its diagnostics with its own file name (clang-14, clang++-22).
_DRIVER = re.compile(r"^(?:.*/)?(?P<drv>clang(?:\+\+)?(?:-\d+)?): error: ")


def _unsupported_arch(match: Groups, view: LineView) -> Reading | None:
    if cmake_check_probe(view.previous):
        # A CMake probe of one target (CK's rocm_check_target_ids keeps the targets the
        # compiler takes): "no" is its answer, recorded and left out (make/rv11.sh).
        return None
    arch = match.group("arch").strip()
    first = _LIST_SEPARATOR.split(arch)[0].split(":")[0]
    if _LIST_SEPARATOR.search(arch):
        # clang-22 here: --offload-arch='gfx1100;gfx90a' -> "unsupported HIP gpu architecture:
        # gfx1100;gfx90a": a list reached the driver as one value (a CMake list quoted, a
        # setup.py that did not split PYTORCH_ROCM_ARCH).
        return Reading(
            subject=first,
            cause=f"a list of targets reached the compiler as one offload target ({arch}): "
                  "each target needs its own --offload-arch, and the build joined them into "
                  "one value (a CMake list passed quoted, or a build script that did not split "
                  "PYTORCH_ROCM_ARCH / GPU_TARGETS)",
            fix="pass one --offload-arch=<gfx> per target: set PYTORCH_ROCM_ARCH / GPU_TARGETS "
                "as a ';'-separated list the build script splits (CMake: an unquoted list "
                "variable), or build for one target (`invoke build --arch "
                f"{first}`)")
    if "invalid target ID" in view.text and ":" in arch:
        # Without a feature the same message is an older clang that does not know the
        # processor (clang-14 on gfx1100, rocm-arch#881): the reading below.
        # clang-22 here rejects gfx1100:xnack+ and gfx1030:xnack- and takes gfx90a:xnack+,
        # gfx942:sramecc+:xnack-, gfx906:xnack+:sramecc+; gfx90a:xnack (no sign) is rejected.
        return Reading(
            subject=first,
            cause=f"{arch} is not a valid target ID: each feature needs a + or - sign "
                  "(gfx90a:xnack+), and only processors that have the feature take it (xnack "
                  "and sramecc exist on GCN/CDNA parts such as gfx906, gfx90a, gfx942; RDNA "
                  "targets such as gfx1030, gfx1100, gfx1201 take neither)",
            fix=f"use the plain processor name ({first}) or a feature it has, with its sign; "
                f"`invoke doctor --arch {first}` compiles a kernel for it")
    # clang's err_drv_bad_target_id ("invalid target ID '<id>'; format is …") for a bare name
    # it does not know: the same cause, in the words the log shows.
    said = " (invalid target ID)" if "invalid target ID" in view.text else ""
    # The driver names itself at the line's start ("clang-14: error: …", its resolved binary):
    # which compiler rejected the target is the lead (a system clang picked instead of ROCm's,
    # rocm-arch#870 and #881, the same line).
    driver = _DRIVER.match(view.text)
    who = f"{driver.group('drv')} (the compiler that ran)" if driver else "the compiler"
    return Reading(subject=first, cause=f"{who} does not know the offload "
                   f"target {arch}{said}: the ROCm/LLVM release is older than the target, or "
                   "the name "
                   "(or its :xnack/:sramecc feature) is wrong",
                   fix=f"drop {arch} from --arch or use a newer ROCm/LLVM that supports it; "
                   "`invoke "
                   f"doctor --arch {first}` compiles a kernel for it and says which "
                   "targets this toolchain accepts")


def _option_needs_feature(match: re.Match[str], view: LineView) -> Reading | None:
    option, arch = match.group("opt"), match.group("arch")
    feature = match.group("feat") or ("xnack+" if option == "-fsanitize=address" else "")
    if not feature:
        return None  # the feature is named on a line this one does not show
    first = arch.split(":")[0]
    return Reading(
        subject=first,
        cause=f"clang ignores {option} for the offload target {arch}, which lacks the "
              f"feature {feature} it needs on the device, and -Werror (-Woption-ignored) "
              "turned that warning into this error",
        fix=f"build for the target ID {first}:{feature} (--offload-arch / GPU_TARGETS, with a "
            f"GPU and driver that run {feature} code), or keep {option} for host code only "
            "(not on the HIP compile), or drop -Werror for this warning "
            "(-Wno-error=option-ignored)")


def _flash_attention_arch(match: re.Match[str], view: LineView) -> Reading | None:
    archs = re.findall(r"gfx[0-9a-f]{3,4}", match.group("archs"))
    first = archs[0] if archs else "PYTORCH_ROCM_ARCH"
    return Reading(subject=first, cause=f"flash-attention's setup.py refused the target "
                   f"{', '.join(archs) or '(none named)'}: its ROCm (Composable Kernel) backend "
                   "builds only for the targets it lists (gfx90a, gfx942, gfx950 in recent "
                   "releases)", fix=f"build flash-attention only for a target it supports "
                   f"(GPU_ARCHS), or on {first} use its Triton backend "
                   "(FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE) or PyTorch's own SDPA")


def _unknown_gfx_key(match: re.Match[str], view: LineView) -> Reading | None:
    arch = match.group("arch")
    return Reading(
        subject=arch,
        cause=f"the package looked {arch} up in its own table of GPU targets and did not find "
              f"it: it has no support (no kernels, no configuration) for {arch}",
        fix=f"use it on a target it supports, or a release that adds {arch}; for a build, "
            f"leave {arch} out of the target list (GPU_ARCHS / PYTORCH_ROCM_ARCH)")


def _llvm_unknown_target(match: re.Match[str], view: LineView) -> Reading | None:
    arch = match.group("arch") or match.group("arch2")
    return Reading(
        subject=arch.split(":")[0],
        cause=f"the compiler's LLVM does not know the target {arch}: the ROCm/LLVM release (or "
              "a bundled LLVM, e.g. Triton's) is older than the target, or the name is wrong",
        fix=f"use a ROCm/LLVM release that supports {arch} (a newer ROCm), or build for a "
            "target it knows (`invoke build --arch <gfx…>`); `invoke doctor --arch "
            f"{arch.split(':')[0]}` compiles a kernel for it and says which targets the "
            "toolchain accepts")


_MATH_OR_CK = ("hipsparselt", "hipblaslt", "rocblas", "miopen", "rocsparse", "rocfft",
               "composable_kernel", "composable kernel", "ck_tile", "tensile", "aotriton",
               "rocwmma")


def _target_not_supported(match: re.Match[str], view: LineView) -> Reading | None:
    lower = view.text.lower()
    if "warning" in lower or "skipping" in lower or "ignoring" in lower:
        return None  # the target is left out and the build goes on
    if "Unsupported GPU target:" in view.text:
        return None  # a math library's configure check (math_library.py) when one is named
    context = " ".join((*view.previous[-4:], view.text)).lower()
    if any(name in context for name in _MATH_OR_CK):
        return None  # a math library's or CK's own target list (math_library.py)
    groups = match.groupdict()
    arch = next(groups[k] for k in ("arch", "arch2", "arch3", "arch4") if groups.get(k))
    return Reading(
        subject=arch.split(":")[0],
        cause=f"the package (or the toolchain) does not support the target {arch}: its own "
              "list of targets leaves it out, or this release predates it",
        fix=f"build for a target the package supports (its GPU target list: GPU_TARGETS / "
            f"GPU_ARCHS / PYTORCH_ROCM_ARCH), use a release that adds {arch}, or leave the "
            "package out; HSA_OVERRIDE_GFX_VERSION presents the GPU as a supported target of "
            "the same family (e.g. 11.0.0 for RDNA3), at your own risk")


_REFUSAL_SOURCE = ("the target checks packages run on their own target tables "
                   "(flash-attention's setup.py, xformers, CMake GPU_TARGETS checks)")
_GFX = re.compile(r"\b(gfx[0-9a-f]{3,4}[\w:+-]*)")


def _hip_architectures_rejected(match: re.Match[str], view: LineView) -> Reading | None:
    if view.cmake_block != "error":
        return None
    named = [m.group(1) for line in view.previous for m in _GFX.finditer(line)]
    arch = named[0].split(":")[0] if len(set(named)) == 1 else "PYTORCH_ROCM_ARCH"
    return Reading(
        subject=arch,
        cause="CMake's HIP compiler rejected the target list (CMAKE_HIP_ARCHITECTURES): the "
              "ROCm/LLVM release does not know one of the targets, or its name is wrong",
        fix="build only for targets this ROCm's compiler supports (`invoke build --arch "
            "<gfx…>`; `invoke doctor --arch <gfx…>` compiles a kernel for one), or use a newer "
            "ROCm that supports the target")


def _therock_no_targets(match: re.Match[str], view: LineView) -> Reading | None:
    named = [m.group(1) for line in view.previous for m in _GFX.finditer(line)]
    dist = match.group("dist")
    return Reading(
        subject=named[0].split(":")[0] if named else "{device}",
        cause=f"TheRock's subproject {match.group('sub')} needs the "
              f"{'dist ' if dist else ''}AMDGPU target list and it is empty: "
              + ("THEROCK_DIST_AMDGPU_FAMILIES and THEROCK_DIST_AMDGPU_TARGETS are unset and "
                 "the dist list defaults to THEROCK_AMDGPU_FAMILIES only, not to "
                 "THEROCK_AMDGPU_TARGETS" if dist else
                 "neither THEROCK_AMDGPU_FAMILIES nor THEROCK_AMDGPU_TARGETS selects a target "
                 "it supports"),
        fix="configure with the GPU's family or target in THEROCK_AMDGPU_FAMILIES (e.g. "
            "-DTHEROCK_AMDGPU_FAMILIES=gfx1100, which the dist list defaults to), or set "
            "THEROCK_DIST_AMDGPU_FAMILIES as well as THEROCK_AMDGPU_TARGETS")


def _therock_target_choice(match: re.Match[str], view: LineView) -> Reading | None:
    value = match.group("value") or match.group("target") or ""
    gfx = _GFX.search(value)
    what = (f"the {match.group('var')} value '{value}' is not a family TheRock knows"
            if match.group("var") else
            f"TheRock does not know the target '{value}'" if value else
            "no AMDGPU target was selected")
    return Reading(
        subject=gfx.group(1).split(":")[0] if gfx else "{device}",
        cause=f"TheRock's configure stopped: {what} (families are named like gfx110X-all, "
              "targets like gfx1100; the message lists the ones this checkout has)",
        fix="configure with a family from the list (-DTHEROCK_AMDGPU_FAMILIES=gfx110X-all) or "
            "a single target via -DTHEROCK_AMDGPU_TARGETS=gfx1100 (with "
            "THEROCK_DIST_AMDGPU_FAMILIES for dist projects); a target the list lacks needs a "
            "newer TheRock")



_CK_PATH = re.compile(r"composable_kernel|/ck/|/ck_tile/")


def _builtin_needs_feature(match: re.Match[str], view: LineView) -> Reading | None:
    path, builtin, feature = match.group("file"), match.group("builtin"), match.group("feat")
    if _CK_PATH.search(path):
        return None  # Composable Kernel's own sources: parsers/composable_kernel.py reads them
    project = re.search(r"[/\\]projects[/\\](?P<name>[\w.+-]+)[/\\]", path)
    owner = project.group("name") if project else path.replace("\\", "/").rsplit("/", 1)[-1]
    archs = [m.group(1) for line in view.previous
             for m in re.finditer(r"--offload-arch=(gfx[0-9a-f]{3,4})", line)]
    subject = archs[-1] if len(set(archs)) == 1 else "PYTORCH_ROCM_ARCH"
    target = archs[-1] if len(set(archs)) == 1 else "a GPU target of the build"
    return Reading(
        subject=subject,
        cause=f"{owner} calls {builtin}, which needs target feature {feature}: it is compiled "
              f"for {target} that lacks those instructions"
              + (" (MFMA matrix cores: CDNA targets only, gfx908 and later Instinct GPUs)"
                 if feature == "mai-insts" else "")
              + f", so {owner} does not support that target",
        fix=f"leave {owner} out of the build for this target (TheRock: its excluded-projects "
            f"list for the target or family), or build {owner} only for targets that have "
            f"{feature}")


def _generic_needs_cov6(match: re.Match[str], view: LineView) -> Reading | None:
    arch, version = match.group("arch"), match.group("ver")
    known = load_arch_table().get(arch)
    instead = ", ".join(known.generic_members) if known is not None else ""
    return Reading(
        subject=arch,
        cause=f"{arch} is a generic target, and the AMDGPU backend makes generic targets only "
              f"for code object version {version} or later: the build passed an older "
              "-mcode-object-version (or its toolchain defaults to one) together with "
              f"--offload-arch={arch}",
        fix=f"build {arch} with code object version {version} (-mcode-object-version="
            f"{version}; the HIP runtime must be one that loads it), or name the concrete "
            f"targets instead of the generic one"
            + (f" ({instead})" if instead else "")
            + " and keep the older code object version")


RULES: tuple[Rule, ...] = (
    Rule(id="unsupported-offload-arch", klass="gpu-target",
         triggers=("gpu architecture", "invalid target ID"),
         pattern=rx(r"(?:unsupported (?:HIP|CUDA|AMDGPU|\w+) gpu architecture: "
                     r"(?P<arch>gfx[\w:+-]+(?:[;, ]gfx[\w:+-]+)*)|invalid target ID "
                     r"'(?P<id>gfx[\w:+-]+(?:[;, ]gfx[\w:+-]+)*)')"),
         read=lambda m, v: _unsupported_arch(Alias(m, arch="id"), v),
         source="clang DiagnosticDriverKinds.td; clang-22 here: a ';'- or space-joined list "
         "and target IDs with features the processor lacks (make/offload_flags.sh)"),
    Rule(id="offload-option-needs-feature", klass="gpu-target",
         triggers=("option for offload arch",),
         pattern=rx(r"error: ignoring '(?P<opt>-[^']+)' option for offload arch "
                     r"'(?P<arch>gfx[\w:+-]+)'(?:.*?containing '(?P<feat>[\w+-]+)')?"),
         read=_option_needs_feature,
         source="clang's driver warning -Woption-ignored ('ignoring '<option>' option for "
         "offload arch '<arch>' as it is not currently supported there. Use it with an "
         "offload arch containing '<feature>' instead'), an error under -Werror; reproduced "
         "with clang++-22 -x hip --offload-arch=gfx942 -fsanitize=address (make/devbt7.sh); "
         "ROCm/TheRock#6244"),
    Rule(id="flash-attention-arch", klass="gpu-target",
         triggers=("not supported by Flash-Attention",),
         pattern=rx(r"GPU archs of (?P<archs>\[[^\]]*\]) is invalid or not supported by "
                     r"Flash-Attention"),
         read=_flash_attention_arch,
         source="Dao-AILab/flash-attention setup.py; ROCm/flash-attention#37"),
    Rule(id="unknown-gfx-key", klass="gpu-target",
         triggers=("KeyError",),
         pattern=rx(r"KeyError: ['\"](?P<arch>gfx[0-9a-f]{3,4})['\"]"),
         read=_unknown_gfx_key, source="a package's own target table (aiter chip_info); "
         "ROCm/aiter#1552"),
    Rule(id="llvm-unknown-target", klass="gpu-target", tier=2,
         triggers=("is not a recognized processor for this target", "unknown target CPU"),
         pattern=rx(r"'(?P<arch>gfx[0-9a-f]{3,4}[\w:+-]*)' is not a recognized processor for "
                     r"this target|unknown target CPU '(?P<arch2>gfx[0-9a-f]{3,4}[\w:+-]*)'"),
         read=_llvm_unknown_target, source="LLVM MCSubtargetInfo (\"is not a recognized "
         "processor for this target\"), clang's err_target_unknown_cpu"),
    Rule(id="gpu-target-not-supported", klass="gpu-target",
         triggers=("gfx",),
         pattern=rx(r"(?i)(?:unsupported|unknown) (?:gpu |amdgpu |hip )?(?:architecture|arch|"
                     r"target|device)s?:?\s*['\"]?(?P<arch>gfx[0-9a-f]{3,4}[\w:+-]*)"
                     r"|(?:architecture|arch|target) '?(?P<arch2>gfx[0-9a-f]{3,4}[\w:+-]*)'? "
                     r"is not supported"
                     r"|^\W*(?:\w+Error: )?(?P<arch3>gfx[0-9a-f]{3,4}[\w:+-]*)'? is not supported"),
         read=_target_not_supported, source=_REFUSAL_SOURCE),
    # The same refusal worded around a list, weaker than a package's own rule for its list.
    Rule(id="gpu-target-list-refused", klass="gpu-target", tier=2,
         triggers=("gfx",),
         pattern=rx(r"(?i)"
                     # a list of targets one of which a package refuses ("One of GPU archs of
                     # ['gfx1151'] is invalid or not supported", "… are not in the supported …")
                     r"(?:archs?|architectures?|targets?)\b[^.;]{0,30}?['\"\[ ]"
                     r"(?P<arch4>gfx[0-9a-f]{3,4}[\w:+-]*)['\"\]]?[^.;]{0,30}? (?:is|are) "
                     r"(?:invalid or |either invalid or )?(?:not supported|unsupported"
                     r"|not in the (?:list of )?supported)"),
         read=_target_not_supported, source=_REFUSAL_SOURCE + "; ROCm/aiter#3919"),
    Rule(id="hip-architectures-rejected", klass="gpu-target",
         triggers=("do not all work with this compiler",),
         pattern=rx(r"do not all work with this compiler"),
         read=_hip_architectures_rejected, source="Kitware/CMake Modules/"
         "CMakeTestHIPCompiler / CMAKE_<LANG>_ARCHITECTURES check"),
    Rule(id="therock-no-targets", klass="gpu-target",
         triggers=("AMDGPU targets but none were",),
         pattern=rx(r"Subproject (?P<sub>\S+) requires (?P<dist>dist )?AMDGPU targets but none "
                     r"were (?:set|selected)"),
         read=_therock_no_targets, source="ROCm/TheRock@89553ce3746eda74ade42557470d25e37c91b6f0:"
         "cmake/therock_subproject.cmake (FATAL_ERROR), CMakeLists.txt (dist families default "
         "to THEROCK_AMDGPU_FAMILIES); ROCm/TheRock#3519"),
    Rule(id="therock-target-choice", klass="gpu-target",
         triggers=("AMDGPU_FAMILIES value", "Unknown AMDGPU target", "No AMDGPU target selected"),
         pattern=rx(r"(?P<var>THEROCK_(?:DIST_|TEST_)?AMDGPU_FAMILIES) value '(?P<value>[^']*)' "
                     r"unknown|Unknown AMDGPU target '(?P<target>[^']*)'"
                     r"|No AMDGPU target selected: make a selection via THEROCK_AMDGPU_FAMILIES"),
         read=_therock_target_choice, source="ROCm/TheRock@89553ce3746eda74ade42557470d25e37c91b6f0"
         ":cmake/therock_amdgpu_targets.cmake (FATAL_ERROR messages)"),
    Rule(id="builtin-needs-target-feature", klass="gpu-target",
         triggers=("needs target feature",),
         pattern=rx(r"^(?P<file>\S+?):\d+(?::\d+)?: error: '(?P<builtin>__builtin_amdgcn_\w+)' "
                    r"needs target feature (?P<feat>[\w.,|+-]+)"),
         read=_builtin_needs_feature, source="clang's err_builtin_needs_feature (\"%0 needs "
         "target feature %1\", clang/include/clang/Basic Diagnostic*Kinds.td; stored "
         "file, commit not read); ROCm/TheRock#3671"),
    Rule(id="generic-target-code-object", klass="gpu-target",
         triggers=("only available on code object version",),
         pattern=rx(r"(?P<arch>gfx[0-9a-z-]*-generic) is only available on code object "
                     r"version (?P<ver>\d+) or better"),
         read=_generic_needs_cov6, source="the AMDGPU backend's refusal of a generic target "
         "below code object v6 (LLVM's source not read: search budget used up, unverified); "
         "clang-22 here prints 'fatal error: error in backend: gfx12-generic is only "
         "available on code object version 6 or better' for --offload-arch=gfx12-generic "
         "-mcode-object-version=5, and the same for gfx11-generic and gfx9-4-generic "
         "(make/devrt4.sh); ROCm/hip-tests#474"),

)
