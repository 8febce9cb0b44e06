"""The build matrix: PyTorch refs x target groups -> the cells a CI runner farm builds.

Owns: `MatrixCell` (one ref, one named group of targets parsed by the kit's own target parser,
the runner labels it needs, its artifact name), `BuildMatrix` and its JSON form for GitHub
Actions' `strategy.matrix` (`{"include": [...]}`: no other top-level key, since each one would
become a matrix dimension), and the checks on refs and group names. A cell's `arch` is what
`invoke plan` exports as PYTORCH_ROCM_ARCH for the same targets. Pure.
Must not: render the workflow (plan.workflow) or read settings (the task hands the lists in).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rocmforge.errors import UsageError

if TYPE_CHECKING:
    from rocmforge.knowledge.arches import ArchTable
    from rocmforge.knowledge.targets import TargetId

# Runner labels every cell asks for: a self-hosted Linux runner (GitHub gives these two labels
# to every self-hosted Linux runner); the target labels are added per cell.
BASE_LABELS = ("self-hosted", "linux")
_GROUP_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, kw_only=True)
class MatrixCell:
    """One build: a PyTorch ref for one group of targets, on a runner carrying their labels."""

    ref: str
    group: str
    targets: tuple[TargetId, ...]

    @property
    def arch(self) -> str:
        from rocmforge.knowledge.targets import targets_for_cmake

        return targets_for_cmake(self.targets)

    @property
    def runner(self) -> tuple[str, ...]:
        """The runner labels: self-hosted, linux, and each processor of the group once (a
        runner that verifies the build needs those GPUs)."""
        return (*BASE_LABELS, *dict.fromkeys(t.base for t in self.targets))

    @property
    def artifact(self) -> str:
        return f"torch-{_UNSAFE.sub('-', self.ref)}-{self.group}"

    def to_json(self) -> dict[str, object]:
        return {"ref": self.ref, "group": self.group, "arch": self.arch,
                "targets": [str(t) for t in self.targets], "runner": list(self.runner),
                "artifact": self.artifact}


@dataclass(frozen=True, kw_only=True)
class BuildMatrix:
    cells: tuple[MatrixCell, ...]

    def to_json(self) -> dict[str, list[dict[str, object]]]:
        """The value of `strategy.matrix`: `include` only."""
        return {"include": [cell.to_json() for cell in self.cells]}


def split_refs(text: str) -> tuple[str, ...]:
    """Refs from a setting: ';', ',' or whitespace separated, order kept, duplicates dropped."""
    return tuple(dict.fromkeys(part for part in re.split(r"[;,\s]+", text) if part))


def parse_group_flags(items: Sequence[str]) -> dict[str, str]:
    """`--group NAME=TARGETS` flags -> {name: targets}, in the order given."""
    groups: dict[str, str] = {}
    for item in items:
        name, sep, targets = item.partition("=")
        if not sep or not name.strip() or not targets.strip():
            raise UsageError(
                f"--group {item!r} is not NAME=TARGETS",
                "each target group needs a name (for the runner label and the artifact) and "
                "its targets",
                'write it like --group mi300=gfx942 or --group "rdna3=gfx1100,gfx1101"',
            )
        if name.strip() in groups:
            raise UsageError(
                f"--group names {name.strip()!r} twice",
                "a group name is the artifact name of its cells, so it must be unique",
                "give each group its own name, or merge their targets into one group",
            )
        groups[name.strip()] = targets.strip()
    return groups


def plan_matrix(refs: Sequence[str], groups: Mapping[str, str],
                table: ArchTable) -> BuildMatrix:
    """Every (ref, group) cell, refs outermost. Targets are parsed as `invoke plan` parses them
    (aliases expanded, canonical spelling, no LLVM-major check before the toolchain is known)."""
    from rocmforge.knowledge.targets import parse_targets
    from rocmforge.plan.build_plan import check_ref_name

    if not refs:
        raise UsageError(
            "The matrix has no PyTorch ref",
            "each cell builds one ref",
            "pass --ref v2.9.1 (repeatable), or set matrix_refs or pytorch_ref",
        )
    if not groups:
        raise UsageError(
            "The matrix has no target group",
            "a runner farm needs to know which targets each cell builds; the GPUs of this "
            "machine say nothing about the runners",
            'pass --group mi300=gfx942 --group "rdna3=gfx1100,gfx1101", set matrix_groups, '
            "or pass --arch for a single group",
        )
    for ref in refs:
        check_ref_name(ref)
    parsed: dict[str, tuple[TargetId, ...]] = {}
    for name, text in groups.items():
        if not _GROUP_NAME.match(name):
            raise UsageError(
                f"The target group name {name!r} cannot name an artifact and a matrix cell",
                "group names may hold letters, digits, '.', '_' and '-' (at most 64), starting "
                "with a letter or digit",
                "rename the group, e.g. mi300 or rdna3",
            )
        targets = parse_targets(text, table, llvm_major=0)
        same = [other for other, known in parsed.items() if set(known) == set(targets)]
        if same:
            raise UsageError(
                f"The target groups {same[0]} and {name} build the same targets "
                f"({';'.join(str(t) for t in targets)})",
                "two cells would build the same wheels for every ref",
                f"drop one of them, or change the targets of {name}",
            )
        parsed[name] = targets
    return BuildMatrix(cells=tuple(MatrixCell(ref=ref, group=name, targets=targets)
                                   for ref in dict.fromkeys(refs)
                                   for name, targets in parsed.items()))
