"""Probe: which AMD GPU targets this machine has.

Owns: the detection order of reference rocm-arch-toolchain.md §7.3 — KFD sysfs
`gfx_target_version` first (never affected by HSA_OVERRIDE_GFX_VERSION), then `offload-arch` /
`amdgpu-arch` (empty output means none), then `rocm_agent_enumerator` (drop `gfx000`, tolerate a
traceback), then `rocminfo` (`Device Type: GPU` blocks) — and pure parsers for each output, plus
a warning when `HSA_OVERRIDE_GFX_VERSION*` is set. Must not: choose build targets (the user's
--arch wins; that is the task's decision) or write anything.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rocmforge.probes import Runner, run_command

KFD_NODES = Path("sys/class/kfd/kfd/topology/nodes")
_GFX_NAME = re.compile(r"\bgfx[0-9a-f]+\b")


@dataclass(frozen=True, kw_only=True)
class GpuAgent:
    """One GPU (or one KFD node of a partitioned GPU) as a tool reported it."""

    target: str  # processor name, "gfx942"
    source: str  # "kfd sysfs", "offload-arch", "rocm_agent_enumerator", "rocminfo"
    product: str = ""  # "AMD Instinct MI300X" when the tool says it
    node: int | None = None  # KFD topology node


@dataclass(frozen=True, kw_only=True)
class GpuScan:
    """The GPUs found, by the first source that found any, and what distorts detection."""

    agents: tuple[GpuAgent, ...]
    source: str  # the source the agents came from; "" when none found
    tried: tuple[str, ...]  # every source consulted, in order, with a short outcome
    overrides: tuple[tuple[str, str], ...]  # ("HSA_OVERRIDE_GFX_VERSION", "11.0.0")

    @property
    def targets(self) -> tuple[str, ...]:
        """Distinct processor names, in the order found."""
        return tuple(dict.fromkeys(a.target for a in self.agents))


# --- pure parsers ---------------------------------------------------------------------------


def decode_gfx_target_version(value: int) -> str:
    """KFD `gfx_target_version` (major*10000 + minor*100 + stepping) to "gfxNNN": the major in
    decimal, minor and stepping as one hex digit each (90010 -> gfx90a, 110501 -> gfx1151).
    0 (a CPU node) gives ""."""
    if value <= 0:
        return ""
    major, rest = divmod(value, 10000)
    minor, stepping = divmod(rest, 100)
    return f"gfx{major}{minor:x}{stepping:x}"


def parse_kfd_properties(text: str) -> dict[str, str]:
    """`key value` lines; the value is the second space-separated field (as
    rocm_agent_enumerator reads it)."""
    props: dict[str, str] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 2:
            props[fields[0]] = fields[1]
    return props


def parse_offload_arch(text: str) -> tuple[str, ...]:
    """One processor name per line and per GPU; empty output means none found."""
    return tuple(m.group(0) for line in text.splitlines() if (m := _GFX_NAME.match(line.strip())))


def parse_agent_enumerator(text: str) -> tuple[str, ...]:
    """One target per line, `gfx000` (the CPU placeholder of older versions) dropped; lines that
    are not targets (a Python traceback) are ignored."""
    found = []
    for line in text.splitlines():
        match = re.match(r"^(gfx[0-9a-f]+)(:[a-z+\-:]+)?\s*$", line.strip())
        if match and match.group(1) != "gfx000":
            found.append(match.group(1))
    return tuple(found)


def parse_rocminfo(text: str) -> tuple[GpuAgent, ...]:
    """GPU agents from `rocminfo` output: split on `Agent N` blocks, keep `Device Type: GPU`,
    take the first `Name:` matching gfx…, the `Marketing Name:` and the `Node:`."""
    agents = []
    blocks = re.split(r"^\s*Agent \d+\s*$", text, flags=re.MULTILINE)[1:]
    for block in blocks:
        fields: dict[str, str] = {}
        names: list[str] = []
        for line in block.splitlines():
            key, sep, value = line.strip().partition(":")
            if not sep:
                continue
            value = value.strip()
            if key == "Name":
                names.append(value)
            fields.setdefault(key, value)
        if fields.get("Device Type") != "GPU":
            continue
        target = next((n for n in names if re.fullmatch(r"gfx[0-9a-f]+", n)), "")
        if not target:
            continue
        node = fields.get("Node", "")
        agents.append(
            GpuAgent(
                target=target,
                source="rocminfo",
                product=fields.get("Marketing Name", ""),
                node=int(node) if node.isdigit() else None,
            )
        )
    return tuple(agents)


def hsa_overrides(environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """HSA_OVERRIDE_GFX_VERSION and its per-device `_<n>` forms (ROCm >= 6.2), sorted."""
    return tuple(
        sorted(
            (k, v)
            for k, v in environ.items()
            if k == "HSA_OVERRIDE_GFX_VERSION" or k.startswith("HSA_OVERRIDE_GFX_VERSION_")
        )
    )


# --- probes ---------------------------------------------------------------------------------


def read_kfd_nodes(root: Path = Path("/")) -> tuple[GpuAgent, ...]:
    """GPU nodes of the KFD topology under `root` (CPU nodes have gfx_target_version 0)."""
    nodes_dir = root / KFD_NODES
    if not nodes_dir.is_dir():
        return ()
    agents = []
    entries = sorted(
        (p for p in nodes_dir.iterdir() if p.name.isdigit()), key=lambda p: int(p.name)
    )
    for entry in entries:
        try:
            props = parse_kfd_properties((entry / "properties").read_text(errors="replace"))
        except OSError:
            continue
        raw = props.get("gfx_target_version", "0")
        target = decode_gfx_target_version(int(raw)) if raw.isdigit() else ""
        if target:
            agents.append(GpuAgent(target=target, source="kfd sysfs", node=int(entry.name)))
    return tuple(agents)


def find_gpus(
    *,
    root: Path = Path("/"),
    environ: Mapping[str, str] = os.environ,
    tool_dirs: Sequence[Path] = (),
    run: Runner = run_command,
) -> GpuScan:
    """Ask each source in order and stop at the first that names a GPU. `tool_dirs` are searched
    before PATH for the tools (the selected ROCm's `bin` and LLVM `bin`)."""
    tried: list[str] = []
    overrides = hsa_overrides(environ)

    agents = read_kfd_nodes(root)
    tried.append(
        f"kfd sysfs: {len(agents)} GPU node(s)"
        if (root / KFD_NODES).is_dir()
        else "kfd sysfs: absent (no amdgpu kernel driver visible)"
    )
    if agents:
        return GpuScan(agents=agents, source="kfd sysfs", tried=tuple(tried), overrides=overrides)

    if not (root / KFD_NODES).is_dir() and not (root / "dev/kfd").exists():
        # offload-arch, rocm_agent_enumerator and rocminfo all ask the KFD driver; without it
        # they find nothing (reference §4.1-4.3), so do not spend a second running them.
        tried.append("tools: skipped (no /dev/kfd and no KFD sysfs)")
        return GpuScan(agents=(), source="", tried=tuple(tried), overrides=overrides)
    search = os.pathsep.join([*(str(d) for d in tool_dirs), environ.get("PATH", "")])
    tool_env = dict(environ)
    steps = (
        (("offload-arch", "amdgpu-arch"), (), parse_offload_arch),
        (("rocm_agent_enumerator",), (), parse_agent_enumerator),
        (("rocminfo",), (), lambda text: tuple(a.target for a in parse_rocminfo(text))),
    )
    for names, args, parser in steps:
        tool = next((found for n in names if (found := shutil.which(n, path=search))), None)
        label = names[0]
        if tool is None:
            tried.append(f"{label}: not installed")
            continue
        result = run([tool, *args], env=tool_env)
        found_targets = parser(result.stdout)
        tried.append(f"{label}: {len(found_targets)} GPU(s) (exit {result.returncode})")
        if found_targets:
            if label == "rocminfo":
                found_agents = parse_rocminfo(result.stdout)
            else:
                found_agents = tuple(GpuAgent(target=t, source=label) for t in found_targets)
            return GpuScan(
                agents=found_agents, source=label, tried=tuple(tried), overrides=overrides
            )
    return GpuScan(agents=(), source="", tried=tuple(tried), overrides=overrides)
