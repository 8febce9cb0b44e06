"""GPU target strings from users -> canonical LLVM target IDs.

Owns: `TargetId` (processor plus the sramecc/xnack settings, written the way LLVM writes it),
`parse_targets()` (separators, case, aliases, de-duplication, validation against the arch table
and optionally the toolchain's LLVM major) and `targets_for_cmake()`. Pure: no environment, no
subprocess, no files beyond what the caller's ArchTable already holds. Every refusal is a
TargetError paragraph (what, why, fix), with a did-you-mean where a typo is likely.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rocmforge.errors import TargetError
from rocmforge.knowledge.arches import ArchTable, GpuArch

# The two features a target ID may carry, in canonical (alphabetical) order.
FEATURES = ("sramecc", "xnack")
_SEPARATORS = re.compile(r"[;,\s]+")
_BASE_RE = re.compile(r"^[a-z0-9][a-z0-9_.\-]*$")
_NVIDIA_RE = re.compile(r"^(?:sm|compute|lto)_?\d+[a-z]?$|^(?:cuda|nvptx|nvidia|ptx)\b")
# rocminfo ISA names and bundle entry IDs carry the triple in front of the target ID.
_TRIPLE_PREFIX = re.compile(r"^(?:hipv4-|hip-)?amdgcn-amd-amdhsa-+")
_EXAMPLES = "gfx90a, gfx942:sramecc+:xnack-, gfx1100, or an alias such as mi300, rdna3, strix-halo"


@dataclass(frozen=True, order=True)
class TargetId:
    """A processor name plus its feature settings: "+" on, "-" off, "" any (both work)."""

    base: str
    sramecc: str = ""
    xnack: str = ""

    def __str__(self) -> str:
        parts = [self.base]
        if self.sramecc:
            parts.append(f"sramecc{self.sramecc}")
        if self.xnack:
            parts.append(f"xnack{self.xnack}")
        return ":".join(parts)

    @property
    def has_features(self) -> bool:
        return bool(self.sramecc or self.xnack)

    @classmethod
    def parse(cls, text: str) -> TargetId:
        """Parse one target ID's syntax (not whether the processor exists): `gfx90a:xnack-`."""
        raw = text.strip()
        lowered = raw.lower()
        base, *features = lowered.split(":")
        if not base or not _BASE_RE.match(base):
            raise _syntax_error(raw, f"{base!r} is not a processor name")
        settings: dict[str, str] = {}
        for feature in features:
            name, sign = feature[:-1], feature[-1:]
            if sign not in ("+", "-"):
                hint = (f"write {feature}+ or {feature}-" if feature in FEATURES
                        else f"{feature!r} has no trailing + or -")
                raise _syntax_error(raw, hint)
            if name not in FEATURES:
                import difflib  # here: only a typo needs it

                close = difflib.get_close_matches(name, FEATURES, n=1, cutoff=0.6)
                hint = f"{name!r} is not a target-ID feature"
                if close:
                    hint += f' (did you mean "{close[0]}{sign}"?)'
                raise _syntax_error(raw, hint)
            if name in settings:
                raise _syntax_error(raw, f"{name} is given twice")
            settings[name] = sign
        return cls(base=base, sramecc=settings.get("sramecc", ""), xnack=settings.get("xnack", ""))


def parse_targets(
    text: str | Iterable[str],
    table: ArchTable,
    *,
    llvm_major: int = 0,
) -> tuple[TargetId, ...]:
    """Split, expand aliases, validate and canonicalize targets; order kept, duplicates dropped.

    `llvm_major` (0 = unknown) also refuses targets that LLVM major does not accept (too new, or
    removed like gfx940/gfx941 from LLVM 21).
    """
    chunks = [text] if isinstance(text, str) else list(text)
    tokens = [token for chunk in chunks for token in _SEPARATORS.split(chunk) if token]
    if not tokens:
        raise TargetError(
            "No GPU target was given",
            "the kit compiles GPU kernels only for the targets named; PyTorch's configure "
            "stops with 'No GPU arch specified for ROCm build' on a machine without a GPU",
            f"pass one or more targets, e.g. --arch gfx90a or --arch \"gfx1100;gfx942\" "
            f"({_EXAMPLES}); `invoke doctor` shows the GPUs it finds",
        )
    result: list[TargetId] = []
    for token in tokens:
        for target, via in _expand(token, table):
            arch = _known_arch(target, token, table)
            _check_features(target, arch, token)
            _check_llvm(arch, llvm_major, token if via else "")
            if target not in result:
                result.append(target)
    _check_combinations(result)
    return tuple(result)


def targets_for_cmake(ids: Iterable[TargetId]) -> str:
    """The PYTORCH_ROCM_ARCH / CMAKE_HIP_ARCHITECTURES form: ';'-joined target IDs."""
    return ";".join(str(target) for target in ids)


# ------------------------------------------------------------------------------------ helpers


def _expand(token: str, table: ArchTable) -> list[tuple[TargetId, bool]]:
    """The target IDs a token stands for; the flag says whether an alias produced them."""
    cleaned = _TRIPLE_PREFIX.sub("", token.strip().lower())
    if ":" not in cleaned and table.get(cleaned) is None:
        expansion = table.alias(cleaned)
        if expansion is not None:
            return [(TargetId.parse(item), True) for item in expansion]
    return [(TargetId.parse(cleaned), False)]


def _known_arch(target: TargetId, token: str, table: ArchTable) -> GpuArch:
    arch = table.get(target.base)
    if arch is not None:
        return arch
    if _NVIDIA_RE.match(target.base):
        raise TargetError(
            f'"{token}" is an NVIDIA CUDA target, not an AMD GPU target',
            "rocmforge builds PyTorch for ROCm, and the AMD compiler only knows gfx processors; "
            "CUDA compute capabilities (sm_XX, compute_XX) mean nothing to it",
            "pass the gfx target of your AMD GPU instead (e.g. gfx942 for an MI300X, gfx1100 for "
            "an RX 7900 XTX); for an NVIDIA GPU, build PyTorch with CUDA and TORCH_CUDA_ARCH_LIST",
        )
    raise TargetError(
        f'"{token}" is not a GPU target the kit knows.{_did_you_mean(target.base, table)}',
        f"targets are LLVM AMDGPU processor names ({_name_range(table)} and the gfxN-generic "
        "targets) or aliases of them, listed in config/arches.toml and config/aliases.toml",
        f"use a known target or alias, e.g. {_EXAMPLES}",
    )


def _name_range(table: ArchTable) -> str:
    """`gfx900 .. gfx1310`: the lowest and highest processor in the table (generic targets
    left out), so the message follows config/arches.toml."""
    processors = [n for n in table.names() if re.fullmatch(r"gfx\d+[0-9a-z]{2}", n)]
    if not processors:
        return "none"
    ordered = sorted(processors, key=lambda n: (int(n[3:-2]), n[-2:]))
    return f"{ordered[0]} .. {ordered[-1]}"


def _did_you_mean(word: str, table: ArchTable) -> str:
    names = table.names()
    # A name the token starts with ("gfx1100x") or that starts with the token ("gfx110").
    prefixes = [name for name in names if word.startswith(name) and len(name) >= 5]
    if prefixes:
        return f' Did you mean "{max(prefixes, key=len)}"?'
    extensions = [name for name in names if name.startswith(word) and len(word) >= 5]
    if extensions:
        return f' Did you mean "{extensions[0]}"?'
    import difflib  # here: only a typo needs it

    choices = list(names) + list(table.alias_names())
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f' Did you mean "{close[0]}"?' if close else ""


def _check_features(target: TargetId, arch: GpuArch, token: str) -> None:
    for feature, supported in (("sramecc", arch.sramecc), ("xnack", arch.xnack)):
        setting = getattr(target, feature)
        if setting and not supported:
            plain = TargetId(
                base=target.base,
                sramecc=target.sramecc if feature != "sramecc" else "",
                xnack=target.xnack if feature != "xnack" else "",
            )
            raise TargetError(
                f'"{token}" asks for {feature}{setting}, but {arch.name} has no {feature} feature',
                f"only some GFX9/CDNA and GFX10.1 targets accept {feature} in a target "
                f"ID; clang rejects {target} as an invalid target ID",
                f"drop ':{feature}{setting}' and use {plain}",
            )


def _check_llvm(arch: GpuArch, llvm_major: int, alias: str) -> None:
    if llvm_major <= 0:
        return
    origin = f" (from alias {alias!r})" if alias else ""
    if arch.removed_in_llvm and llvm_major >= arch.removed_in_llvm:
        raise TargetError(
            f"{arch.name}{origin} was removed in LLVM {arch.removed_in_llvm}, and this toolchain "
            f"is LLVM {llvm_major}",
            f"{arch.name} was a pre-production MI300 target; shipping MI300X/MI300A/MI325X parts "
            "are gfx942, and ROCm 7.0 libraries dropped gfx940/gfx941 too",
            "build for gfx942 (alias mi300) instead",
        )
    if llvm_major < arch.llvm_min:
        raise TargetError(
            f"{arch.name}{origin} needs LLVM {arch.llvm_min} or newer, but this toolchain is "
            f"LLVM {llvm_major}",
            f"clang of LLVM {llvm_major} does not know the processor name and rejects it as an "
            "invalid target ID",
            f"use a ROCm (or clang) whose LLVM is {arch.llvm_min} or newer; `invoke doctor` "
            f"shows the ROCm installs found; or leave {arch.name} out",
        )


def _check_combinations(targets: list[TargetId]) -> None:
    """clang's bundle rule: per processor, a feature is set in all entries or in none."""
    by_base: dict[str, list[TargetId]] = {}
    for target in targets:
        by_base.setdefault(target.base, []).append(target)
    for base, group in by_base.items():
        for feature in FEATURES:
            given = {bool(getattr(target, feature)) for target in group}
            if len(given) > 1:
                shown = " and ".join(f'"{target}"' for target in group)
                raise TargetError(
                    f"{shown} cannot be built together",
                    f"for one processor, {feature} must be set (+ or -) in every entry or in "
                    "none; clang refuses the mix as an invalid offload arch combination",
                    f"use only {base} (runs with either setting), or list each setting "
                    f"explicitly, e.g. {base}:{feature}+;{base}:{feature}-",
                )


def _syntax_error(text: str, detail: str) -> TargetError:
    return TargetError(
        f'"{text}" is not a valid target ID: {detail}',
        "a target ID is a processor name optionally followed by :sramecc+/- and :xnack+/- "
        "(e.g. gfx90a:xnack- or gfx942:sramecc+:xnack-); a feature left out means either setting",
        "fix the spelling, or drop the feature to build code that runs with both settings",
    )


def requested_targets(arch_text: str, gpu_targets: Sequence[str],
                      table: ArchTable) -> tuple[TargetId, ...]:
    """The targets of this invocation, parsed once: --arch / settings first, else the GPUs
    found. Parsed without the toolchain's LLVM major so that an unsupported target becomes a
    doctor row with its reason (the compile probe), not a refusal before anything was checked
    (HIP_CLANG_PATH may also name a newer compiler than the ROCm's)."""
    text = arch_text.strip() or ";".join(gpu_targets)
    if not text:
        return ()
    return parse_targets(text, table)
