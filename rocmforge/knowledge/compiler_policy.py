"""Which host compilers (and CMake) a ROCm + PyTorch pair may be built with. Pure.

Owns: the one verdict that doctor, toolchain and build share: `judge_compiler()` (OK / WARN /
FAIL with reason and a fix command), `recommended_compilers()` and `cmake_minimum()`. The rule:
the kit's guidance for the ROCm release (config/rocm.toml: GCC 11 or Clang 15, GCC >= 12 flagged)
intersected with the PyTorch release's own floor (config/pytorch.toml: GCC >= 9.3 through 2.12;
GCC >= 11.3 and Clang >= 16 from 2.13, which is C++20). Below PyTorch's floor is FAIL (its
configure stops); outside the kit's table is WARN. Must not: run compilers, read files or the
environment; callers pass the versions they probed.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from rocmforge.errors import UsageError
from rocmforge.knowledge.releases import PytorchRelease, RocmRelease
from rocmforge.versions import version_key

OK = "OK"
WARN = "WARN"
FAIL = "FAIL"

# The kit's own floor for CMake, whatever PyTorch asks for (issue 2).
KIT_CMAKE_MIN = "3.20"

_KINDS = {
    "gcc": "gcc",
    "g++": "gcc",
    "clang": "clang",
    "clang++": "clang",
    "amdclang": "rocm-clang",
    "amdclang++": "rocm-clang",
    "rocm-clang": "rocm-clang",
}


@dataclass(frozen=True, kw_only=True)
class CompilerVerdict:
    """The kit's judgement of one host compiler for one ROCm + PyTorch pair."""

    kind: str
    """"gcc", "clang" or "rocm-clang" (ROCm's bundled amdclang)."""
    version: str
    status: str
    """"OK", "WARN" or "FAIL"."""
    reason: str
    fix: str
    """A command that fixes it ("" when status is OK)."""

    @property
    def ok(self) -> bool:
        return self.status == OK


def toolchain_command(kind: str, major: int) -> str:
    """The kit command that selects a compiler for the build."""
    return f"invoke toolchain --{'gcc' if kind == 'gcc' else 'clang'} {major}"


def accepted_command(picks: Collection[tuple[str, int]],
                     installed: Collection[tuple[str, int]] | None,
                     *, prefer: str, rocm_name: str) -> str:
    """The command a fix names: `invoke toolchain --<kind> N` for a compiler the build accepts
    for this ROCm (`picks`, recommended_compilers' order, `prefer`'s kind first). With
    `installed` ((kind, major) pairs of this machine) only an installed one, so the command is
    one the kit then accepts (issue 41 item 7); when none of them is installed, says so and
    names what to install first. `installed` None: the first pick, installed or not."""
    order = sorted(picks, key=lambda p: p[0] != prefer)
    if not order:
        return "`invoke toolchain` lists what is installed"
    if installed is None:
        return toolchain_command(*order[0])
    have = set(installed)
    for kind, major in order:
        if (kind, major) in have:
            return toolchain_command(kind, major)
    kind, major = order[0]
    return (f"install {_NAMES[kind]} {major} (no compiler installed here is one the build accepts "
            f"for {rocm_name}), then {toolchain_command(kind, major)}")


def recommended_compilers(rocm: RocmRelease, torch: PytorchRelease) -> tuple[tuple[str, int], ...]:
    """(kind, major) pairs in preference order: ROCm guidance that PyTorch's floor allows.

    When PyTorch's floor rules out every recommended major of a kind (Clang 15 vs PyTorch 2.13),
    the oldest major PyTorch accepts takes its place, so there is always a choice of each kind.
    """
    gcc_floor = _floor(torch.gcc_min)[0]
    gccs = [major for major in rocm.gcc_recommended if major >= gcc_floor]
    if not gccs:
        gccs = [gcc_floor]
    clangs = [major for major in rocm.clang_recommended if major >= torch.clang_min]
    if not clangs:
        clangs = [torch.clang_min]
    return tuple([("gcc", major) for major in gccs] + [("clang", major) for major in clangs])


def cmake_minimum(torch: PytorchRelease) -> str:
    """The CMake the build needs: 3.20 (the kit's floor) or PyTorch's own, whichever is higher."""
    if _floor(torch.cmake_min) > _floor(KIT_CMAKE_MIN):
        return torch.cmake_min
    return KIT_CMAKE_MIN


def judge_compiler(
    kind: str, version: str, rocm: RocmRelease, torch: PytorchRelease,
    installed: Collection[tuple[str, int]] | None = None,
) -> CompilerVerdict:
    """Judge `kind` ("gcc", "g++", "clang", "clang++", "amdclang") at `version` ("11.4.0").
    `installed`: the (kind, major) pairs of this machine, so a fix names only a compiler that
    is there (`accepted_command`)."""
    family = _KINDS.get(kind.strip().lower())
    if family is None:
        raise UsageError(
            f'"{kind}" is not a compiler kind the kit knows',
            "host compilers are judged as GCC or Clang",
            f"use one of: {', '.join(sorted(_KINDS))}",
        )
    shown = _NAMES[family]
    if not version_key(version):
        return CompilerVerdict(
            kind=family,
            version=version,
            status=FAIL,
            reason=f"could not read a version number from {version!r}",
            fix=f"check what `{'gcc' if family == 'gcc' else 'clang'} --version` prints",
        )
    have = version_key(version, width=3)
    major = have[0]
    rocm_name = _rocm_label(rocm)
    torch_name = f"PyTorch {torch.version}"
    picks = recommended_compilers(rocm, torch)
    best_clang = next(m for k, m in picks if k == "clang")

    def command(prefer: str) -> str:
        return accepted_command(picks, installed, prefer=prefer, rocm_name=rocm_name)

    table_text = f"GCC {_or(rocm.gcc_recommended)} or Clang {_or(rocm.clang_recommended)}"

    def verdict(status: str, reason: str, fix: str = "") -> CompilerVerdict:
        return CompilerVerdict(kind=family, version=version, status=status, reason=reason,
                               fix=fix)

    if family == "gcc":
        floor = _floor(torch.gcc_min)
        if have < floor:
            why = (f"{torch_name} is C++20 and its configure requires GCC >= {torch.gcc_min}"
                   if torch.cxx_std >= 20 else
                   f"its CMake stops with 'GCC-{torch.gcc_min} or newer is required'")
            fix = command("gcc")
            if major == floor[0]:  # the installed GCC of that major is the one too old
                best_gcc = next(m for k, m in picks if k == "gcc")
                fix = (f"install GCC {torch.gcc_min} or newer, then "
                       f"{toolchain_command('gcc', best_gcc)}")
            return verdict(FAIL, f"GCC {version} is older than {torch_name} accepts: {why}", fix)
        if major in {m for k, m in picks if k == "gcc"}:
            return verdict(OK, f"GCC {major} is the kit's choice for {rocm_name} and meets "
                               f"{torch_name}'s floor (GCC >= {torch.gcc_min})")
        if major >= rocm.gcc_warn_from:
            return verdict(
                WARN,
                f"GCC {version} is newer than the kit's choice for {rocm_name} ({table_text}): "
                f"amdclang then compiles HIP files against GCC {major}'s libstdc++, and newer "
                "libstdc++ headers often break HIP device code or the link",
                f"{command('gcc')} (or --allow-compiler to keep GCC {major})",
            )
        return verdict(
            WARN,
            f"GCC {version} meets {torch_name}'s floor (GCC >= {torch.gcc_min}) but is not "
            f"the kit's choice for {rocm_name} ({table_text})",
            f"{command('gcc')} (or --allow-compiler to keep GCC {major})",
        )

    # Clang, either a distro clang or ROCm's own amdclang.
    if torch.clang_min and major < torch.clang_min:
        return verdict(
            FAIL,
            f"{shown} {major} is refused by {torch_name}: it is C++{torch.cxx_std} and its "
            f"configure requires Clang >= {torch.clang_min} (clang 14/15 fail on C++20 ranges "
            "with libstdc++)",
            command("clang"),
        )
    if family == "rocm-clang":
        return verdict(OK, f"{shown} {major} is the compiler that ships with {rocm_name} and "
                           f"meets {torch_name}'s needs")
    if major in rocm.clang_recommended:
        return verdict(OK, f"Clang {major} is the kit's choice for {rocm_name} and meets "
                           f"{torch_name}'s needs")
    if major == best_clang:
        return verdict(
            OK,
            f"Clang {major} is the oldest Clang {torch_name} accepts (C++{torch.cxx_std}); the "
            f"kit's choice for {rocm_name}, Clang {_or(rocm.clang_recommended)}, is too old for it",
        )
    return verdict(
        WARN,
        f"Clang {version} is not the kit's choice for {rocm_name} ({table_text}"
        + (f"; {torch_name} needs Clang >= {torch.clang_min}" if torch.clang_min else "")
        + ")",
        f"{command('clang')} (or --allow-compiler to keep Clang {major})",
    )


_NAMES = {"gcc": "GCC", "clang": "Clang", "rocm-clang": "ROCm's clang"}


def _rocm_label(rocm: RocmRelease) -> str:
    if rocm.approximate and rocm.requested:
        return f"ROCm {rocm.requested} (treated as {rocm.version})"
    return f"ROCm {rocm.version}"


def _or(majors: tuple[int, ...]) -> str:
    return " or ".join(str(major) for major in majors)


def _floor(text: str) -> tuple[int, ...]:
    """A config version ("9.3", "3.18") as a 3-part key, comparable with a probed version's."""
    return version_key(text, width=3)


def build_verdict(status: str, reason: str, *, allow_compiler: bool) -> tuple[str, str]:
    """The one verdict doctor, `invoke toolchain` and the build give a host compiler: the build
    refuses a compiler the table warns about (WARN) as it refuses a FAIL, unless
    allow_compiler, and then both are WARN. Returns (status, reason)."""
    if status == "OK":
        return "OK", reason
    if allow_compiler:
        return "WARN", f"{reason} (allowed by --allow-compiler)"
    if status == "WARN":
        return "FAIL", (f"{reason}; the build refuses a compiler the table warns about unless "
                        "--allow-compiler is given")
    return "FAIL", reason
