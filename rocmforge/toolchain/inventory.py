"""Gathering the toolchain facts (probe) and turning them into report rows (pure).

Owns: `take_inventory` (compilers on PATH, the ROCm clang, GCC installations, what the plain
names resolve to, the update-alternatives groups, /etc/os-release), the bridge to the shared
compiler policy, and the rows of `invoke toolchain`'s tables. Must not: change anything.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rocmforge.probes.compilers import (
    PLAIN_DRIVER_NAMES,
    find_gcc_installs,
    find_host_compilers,
    resolve_name,
)
from rocmforge.toolchain.distro import parse_os_release
from rocmforge.toolchain.select import Judge, ToolchainInventory, Verdict

# Groups shown by the inventory: Debian registers cc/c++ (and cpp on some releases); the kit
# registers gcc and clang.
GROUP_NAMES = ("cc", "c++", "gcc", "clang", "cpp")


def take_inventory(
    *,
    path_env: str | None = None,
    rocm_root: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] = "/",
    altdir: str = "",
    admindir: str = "",
) -> ToolchainInventory:
    """Everything `invoke toolchain` shows, read-only; paths are parameters for tests."""
    from rocmforge.toolchain.system import query_group

    os_release_file = Path(root) / "etc" / "os-release"
    try:
        os_release = parse_os_release(os_release_file.read_text(encoding="utf-8"))
    except OSError:
        os_release = None
    return ToolchainInventory(
        compilers=find_host_compilers(path_env, rocm_root=rocm_root),
        gcc_installs=find_gcc_installs(root),
        resolved=tuple(resolve_name(name, path_env) for name in PLAIN_DRIVER_NAMES),
        groups=tuple(query_group(n, altdir=altdir, admindir=admindir) for n in GROUP_NAMES),
        os_release=os_release,
    )


@dataclass(frozen=True, kw_only=True)
class PolicyContext:
    """The ROCm/PyTorch pair the policy judges against; `judge` is None when unknown."""

    rocm_label: str
    torch_ref: str
    judge: Judge | None
    recommended: tuple[tuple[str, int], ...]
    rocm_llvm_major: int = 0
    rocm_root: Path | None = None
    note: str = ""
    # The judge again, given the (kind, major) pairs installed here: its fix then names only a
    # compiler this machine has (compiler_policy.accepted_command). None with `judge`.
    judge_here: Callable[[str, str, Collection[tuple[str, int]]], Verdict] | None = None


def policy_context(
    *, rocm_path: str, pytorch_ref: str, environ: Mapping[str, str]
) -> PolicyContext:
    """Find the ROCm install and build the judge from rocmforge.knowledge.compiler_policy.

    No ROCm found, or a ROCm/PyTorch version the tables do not know, gives a context without a
    judge and a note saying why: the inventory is still useful without them. A `rocm_path` that
    was asked for but is not a ROCm install stays an error (exit 2), as in doctor and env: a
    typo must not silently fall back to another install.
    """
    from rocmforge.errors import RocmforgeError
    from rocmforge.knowledge import compiler_policy, releases
    from rocmforge.probes.rocm import find_rocm_installs, select_rocm

    try:
        install = select_rocm(find_rocm_installs(requested=rocm_path), rocm_path, environ)
    except RocmforgeError as exc:
        if rocm_path:
            raise
        return PolicyContext(
            rocm_label="no ROCm found",
            torch_ref=pytorch_ref,
            judge=None,
            recommended=(),
            note=f"no recommendation: {exc.what}",
        )
    try:
        rocm_release = releases.rocm_release_for(install.version)
        torch_release = releases.pytorch_release_for(pytorch_ref)
    except RocmforgeError as exc:  # a version the tables do not know: facts without a verdict
        return PolicyContext(
            rocm_label=install.label,
            torch_ref=pytorch_ref,
            judge=None,
            recommended=(),
            rocm_llvm_major=install.llvm_major,
            rocm_root=install.root,
            note=f"no recommendation: {exc.what}",
        )

    def judge(kind: str, version: str) -> Verdict:
        verdict = compiler_policy.judge_compiler(kind, version, rocm_release, torch_release)
        return Verdict(status=verdict.status, reason=verdict.reason, fix=verdict.fix)

    def judge_here(kind: str, version: str, installed: Collection[tuple[str, int]]) -> Verdict:
        verdict = compiler_policy.judge_compiler(kind, version, rocm_release, torch_release,
                                                 installed=installed)
        return Verdict(status=verdict.status, reason=verdict.reason, fix=verdict.fix)

    recommended = tuple(_pairs(compiler_policy.recommended_compilers(rocm_release, torch_release)))
    return PolicyContext(
        judge_here=judge_here,
        rocm_label=install.label,
        torch_ref=pytorch_ref,
        judge=judge,
        recommended=recommended,
        rocm_llvm_major=install.llvm_major,
        rocm_root=install.root,
    )


def _pairs(items: object) -> list[tuple[str, int]]:
    """(kind, major) pairs from whatever shape recommended_compilers returns (records or tuples)."""
    out: list[tuple[str, int]] = []
    for item in items if isinstance(items, Sequence) else ():
        kind = getattr(item, "kind", None)
        major = getattr(item, "major", None)
        if kind is None and isinstance(item, tuple) and len(item) >= 2:
            kind, major = item[0], item[1]
        if kind is not None and major is not None:
            out.append((str(kind), int(major)))
    return out


# --- report rows (pure) ---------------------------------------------------------------------


def compiler_rows(
    inventory: ToolchainInventory, judge: Judge | None, *, allow_compiler: bool = False
) -> list[tuple[str, str, str, str, str]]:
    """A row per compiler with the build's own verdict (compiler_policy.build_verdict), the same
    one doctor shows for the compiler the build would choose."""
    from rocmforge.knowledge.compiler_policy import build_verdict

    rows = []
    for c in inventory.compilers:
        status, reason = "INFO", ""
        if judge is not None and c.origin != "rocm":
            verdict = judge(c.kind, c.version)
            status, reason = build_verdict(verdict.status, verdict.reason,
                                           allow_compiler=allow_compiler)
        cxx = str(c.cxx) if c.cxx else "(no C++ driver)"
        rows.append((status, f"{c.kind} {c.version}", f"{c.cc}  {cxx}", c.origin, reason))
    return rows


def resolved_rows(inventory: ToolchainInventory) -> list[tuple[str, str, str]]:
    rows = []
    for r in inventory.resolved:
        chain = " -> ".join(str(p) for p in r.chain) if r.chain else "(not on PATH)"
        rows.append((r.name, r.compiler.label if r.compiler else "-", chain))
    return rows


def group_rows(inventory: ToolchainInventory) -> list[tuple[str, str, str, str]]:
    rows = []
    for g in inventory.groups:
        if not g.exists:
            rows.append((g.name, "absent", "-", "-"))
            continue
        rows.append((g.name, g.status, g.value, ", ".join(g.paths)))
    return rows


def gcc_install_rows(inventory: ToolchainInventory) -> list[tuple[str, str, str, str]]:
    rows = []
    for g in inventory.gcc_installs:
        status = "OK" if g.complete else "WARN"
        missing = "" if g.complete else f"libstdc++-{g.major}-dev missing"
        rows.append((status, str(g.major), str(g.lib_dir), missing))
    return rows
