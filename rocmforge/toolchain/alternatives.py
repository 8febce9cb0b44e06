"""update-alternatives: parse its `--query` output and plan switch/restore command lists.

Owns: the `AlternativesGroup` record parsed from `update-alternatives --query NAME`, the saved
state document (`state/alternatives.json`), and the pure planners that turn (compilers, current
groups) into the argv lists of a system-wide switch, and (saved state, current groups) into the
argv lists that put everything back. Must not: run anything, read the environment or write files
(`rocmforge.toolchain.system` executes what these functions return).

Facts used (observed with Debian's update-alternatives 1.21 in temp --altdir/--admindir):
`--install` replaces an existing symlink at the link path but refuses to replace a regular file
("not replacing ... with a link"); `--remove-all` deletes the master and slave links, so a link
that a package owned before (Debian's /usr/bin/gcc -> gcc-12) must be re-created on restore;
re-running `--install` for an already registered path rewrites its priority and slaves, so the
switch only installs paths that are not registered yet.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rocmforge.probes.compilers import HostCompiler

if TYPE_CHECKING:
    from rocmforge.fsutil import JSONDoc

STATE_SCHEMA = 1
STATE_FILE_NAME = "alternatives.json"
# GCC tools that become slaves of the `gcc` group when the versioned file exists beside gcc-N.
# Not cpp: Debian already has a `cpp` master group (/lib/cpp), and a name cannot be both.
GCC_SLAVE_TOOLS = ("g++", "gcov", "gcov-dump", "gcov-tool", "gcc-ar", "gcc-nm", "gcc-ranlib")
CLANG_SLAVE_TOOLS = ("clang++",)
# Absent link marker in saved state.
ABSENT = None


@dataclass(frozen=True, kw_only=True)
class Alternative:
    """One registered choice of a group: its path, priority and slave name -> path."""

    path: str
    priority: int
    slaves: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class AlternativesGroup:
    """A group as `update-alternatives --query NAME` shows it; `exists` False when it has none."""

    name: str
    exists: bool
    link: str = ""
    status: str = ""  # "auto" or "manual"
    best: str = ""
    value: str = ""  # "none" when the link points nowhere
    slave_links: Mapping[str, str] = field(default_factory=dict)
    alternatives: tuple[Alternative, ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(a.path for a in self.alternatives)


def absent_group(name: str) -> AlternativesGroup:
    return AlternativesGroup(name=name, exists=False)


def parse_query(name: str, text: str) -> AlternativesGroup:
    """Parse `update-alternatives --query NAME` stdout (RFC 822-like stanzas).

    The first stanza describes the group (Name, Link, Slaves, Status, Best, Value); each further
    stanza one alternative (Alternative, Priority, Slaves). Empty text means "no such group".
    """
    stanzas = _stanzas(text)
    if not stanzas:
        return absent_group(name)
    head = stanzas[0]
    alternatives = tuple(
        Alternative(
            path=_one(stanza, "Alternative"),
            priority=int(_one(stanza, "Priority") or "0"),
            slaves=_slave_map(stanza.get("Slaves", [])),
        )
        for stanza in stanzas[1:]
        if "Alternative" in stanza
    )
    return AlternativesGroup(
        name=_one(head, "Name") or name,
        exists=True,
        link=_one(head, "Link"),
        status=_one(head, "Status"),
        best=_one(head, "Best"),
        value=_one(head, "Value"),
        slave_links=_slave_map(head.get("Slaves", [])),
        alternatives=alternatives,
    )


def _stanzas(text: str) -> list[dict[str, list[str]]]:
    stanzas: list[dict[str, list[str]]] = []
    current: dict[str, list[str]] = {}
    key = ""
    for line in text.splitlines():
        if not line.strip():
            if current:
                stanzas.append(current)
            current, key = {}, ""
            continue
        if line.startswith(" ") and key:
            current[key].append(line.strip())
            continue
        key, _, value = line.partition(":")
        key = key.strip()
        current[key] = [value.strip()] if value.strip() else []
    if current:
        stanzas.append(current)
    return stanzas


def _one(stanza: Mapping[str, list[str]], key: str) -> str:
    values = stanza.get(key, [])
    return values[0] if values else ""


def _slave_map(lines: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in lines:
        slave, _, path = line.partition(" ")
        if slave:
            out[slave] = path.strip()
    return out


# --- argv building ------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class AlternativesTool:
    """How to call update-alternatives: optional sandbox dirs, and sudo when not root."""

    altdir: str = ""
    admindir: str = ""
    sudo: bool = False

    def argv(self, *args: str) -> tuple[str, ...]:
        base: list[str] = ["sudo"] if self.sudo else []
        base.append("update-alternatives")
        if self.altdir:
            base += ["--altdir", self.altdir]
        if self.admindir:
            base += ["--admindir", self.admindir]
        return (*base, *args)

    def plain(self, *args: str) -> tuple[str, ...]:
        """Another command (ln, rm) under the same privilege as update-alternatives."""
        return (("sudo",) if self.sudo else ()) + args


@dataclass(frozen=True, kw_only=True)
class SystemCommand:
    """One command of a switch or restore, with the reason printed next to it."""

    argv: tuple[str, ...]
    why: str


@dataclass(frozen=True, kw_only=True)
class LinkTarget:
    """What a link path was before the kit touched it: a symlink target, a file, or nothing."""

    path: str
    kind: str  # "symlink" | "file" | "absent"
    target: str = ""


@dataclass(frozen=True, kw_only=True)
class SavedGroup:
    """The state of one group before the first switch: restore brings exactly this back."""

    name: str
    existed: bool
    status: str = ""
    value: str = ""
    paths: tuple[str, ...] = ()
    links: tuple[LinkTarget, ...] = ()

    def to_json(self) -> JSONDoc:
        return {
            "name": self.name,
            "existed": self.existed,
            "status": self.status,
            "value": self.value,
            "paths": list(self.paths),
            "links": [
                {"path": link.path, "kind": link.kind, "target": link.target} for link in self.links
            ],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> SavedGroup:
        return cls(
            name=str(data["name"]),
            existed=bool(data["existed"]),
            status=str(data.get("status", "")),
            value=str(data.get("value", "")),
            paths=tuple(str(p) for p in _json_list(data, "paths")),
            links=tuple(
                LinkTarget(
                    path=str(link["path"]), kind=str(link["kind"]), target=str(link["target"])
                )
                for link in map(_json_object, _json_list(data, "links"))
            ),
        )


@dataclass(frozen=True, kw_only=True)
class SavedState:
    """`state/alternatives.json`: the groups as they were before the kit changed them."""

    altdir: str = ""
    admindir: str = ""
    groups: tuple[SavedGroup, ...] = ()

    def group(self, name: str) -> SavedGroup | None:
        return next((g for g in self.groups if g.name == name), None)

    def to_json(self) -> JSONDoc:
        return {
            "schema": STATE_SCHEMA,
            "altdir": self.altdir,
            "admindir": self.admindir,
            "groups": [g.to_json() for g in self.groups],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> SavedState:
        if data.get("schema") != STATE_SCHEMA:
            raise ValueError(f"unknown schema {data.get('schema')!r}")
        return cls(
            altdir=str(data.get("altdir", "")),
            admindir=str(data.get("admindir", "")),
            groups=tuple(
                SavedGroup.from_json(_json_object(g)) for g in _json_list(data, "groups")
            ),
        )

    def merged_with(self, newer: SavedState) -> SavedState:
        """Keep the oldest record of each group: a second switch must not forget the first state."""
        names = {g.name for g in self.groups}
        return SavedState(
            altdir=self.altdir,
            admindir=self.admindir,
            groups=self.groups + tuple(g for g in newer.groups if g.name not in names),
        )


@dataclass(frozen=True, kw_only=True)
class GroupMember:
    """A compiler to register: master path, priority and slave name -> (link path, file path)."""

    path: str
    priority: int
    slaves: tuple[tuple[str, str, str], ...]  # (slave name, link path, alternative path)


@dataclass(frozen=True, kw_only=True)
class SwitchPlan:
    """Everything `--system` does for one group, computed before anything runs."""

    group: str
    link: str
    chosen: str
    saved: SavedGroup
    commands: tuple[SystemCommand, ...]
    skipped_slaves: tuple[str, ...] = ()  # link paths that are regular files: left alone


def group_name(kind: str) -> str:
    return "gcc" if kind == "gcc" else "clang"


def members_for(
    compilers: Sequence[HostCompiler],
    *,
    kind: str,
    link_dir: str,
    existing_files: frozenset[str],
) -> tuple[GroupMember, ...]:
    """One member per versioned compiler of `kind` (with its C++ driver), slaves whose files exist.

    `existing_files` is the set of tool paths that exist (the probe's answer), so this stays pure.
    Priority is major * 10, so `--auto` picks the newest, as distributions do.
    """
    tools = GCC_SLAVE_TOOLS if kind == "gcc" else CLANG_SLAVE_TOOLS
    members: list[GroupMember] = []
    for compiler in compilers:
        if compiler.kind != kind or compiler.origin != "path" or compiler.cxx is None:
            continue
        suffix = compiler.cc.name.split("-", 1)[1] if "-" in compiler.cc.name else ""
        slaves: list[tuple[str, str, str]] = []
        for tool in tools:
            if tool in ("g++", "clang++"):
                file = str(compiler.cxx)
            else:
                file = str(compiler.cc.parent / f"{tool}-{suffix}")
                if file not in existing_files:
                    continue
            slaves.append((tool, os.path.join(link_dir, tool), file))
        members.append(
            GroupMember(path=str(compiler.cc), priority=compiler.major * 10, slaves=tuple(slaves))
        )
    return tuple(sorted(members, key=lambda m: m.priority))


def plan_switch(
    *,
    kind: str,
    chosen: HostCompiler,
    members: Sequence[GroupMember],
    current: AlternativesGroup,
    links_now: Mapping[str, LinkTarget],
    link_dir: str,
    tool: AlternativesTool,
) -> SwitchPlan:
    """The argv lists that register `members` (those not registered yet) and select `chosen`.

    `links_now` maps each master/slave link path to what is there now (from the probe); regular
    files are never replaced (update-alternatives refuses) and are reported in `skipped_slaves`.
    The returned `saved` record is what restore needs to undo exactly this.
    """
    name = group_name(kind)
    link = os.path.join(link_dir, name)
    link_paths = [link] + sorted({s[1] for m in members for s in m.slaves})
    skipped = tuple(p for p in link_paths[1:] if links_now.get(p, _absent(p)).kind == "file")
    saved = SavedGroup(
        name=name,
        existed=current.exists,
        status=current.status,
        value=current.value,
        paths=current.paths,
        links=tuple(links_now.get(p, _absent(p)) for p in link_paths),
    )
    commands: list[SystemCommand] = []
    registered = set(current.paths)
    for member in members:
        if member.path in registered:
            continue
        args = ["--install", link, name, member.path, str(member.priority)]
        for slave, slave_link, slave_path in member.slaves:
            if slave_link in skipped:
                continue
            args += ["--slave", slave_link, slave, slave_path]
        commands.append(
            SystemCommand(argv=tool.argv(*args), why=f"register {member.path} in group {name}")
        )
    commands.append(
        SystemCommand(
            argv=tool.argv("--set", name, str(chosen.cc)),
            why=f"select {chosen.cc} (manual mode) for {link}",
        )
    )
    return SwitchPlan(
        group=name,
        link=link,
        chosen=str(chosen.cc),
        saved=saved,
        commands=tuple(commands),
        skipped_slaves=skipped,
    )


def plan_restore(
    saved: SavedGroup, current: AlternativesGroup, *, tool: AlternativesTool
) -> tuple[SystemCommand, ...]:
    """The argv lists that return a group from `current` to the `saved` state exactly.

    A group the kit created is removed with `--remove-all`, then the symlinks that were at its
    link paths before are re-created. For a group that existed: each alternative the kit added is
    `--remove`d, then auto mode comes back with `--auto`, a manual choice with `--set`.
    Also the rollback of a half-done switch: it compares with what is there now.
    """
    name = saved.name
    commands: list[SystemCommand] = []
    if not saved.existed:
        if current.exists:
            commands.append(
                SystemCommand(
                    argv=tool.argv("--remove-all", name),
                    why=f"group {name} did not exist before the kit created it",
                )
            )
        for link in saved.links:
            if link.kind == "symlink":
                commands.append(
                    SystemCommand(
                        argv=tool.plain("ln", "-sfn", link.target, link.path),
                        why=f"{link.path} was a link to {link.target} before",
                    )
                )
        return tuple(commands)
    if not current.exists:
        # Someone removed the whole group since; nothing the kit can put back faithfully.
        return ()
    for path in current.paths:
        if path not in saved.paths:
            commands.append(
                SystemCommand(
                    argv=tool.argv("--remove", name, path),
                    why=f"{path} was registered by the kit",
                )
            )
    if saved.status == "auto":
        commands.append(
            SystemCommand(argv=tool.argv("--auto", name), why=f"group {name} was in auto mode")
        )
    elif saved.value and saved.value != "none":
        commands.append(
            SystemCommand(
                argv=tool.argv("--set", name, saved.value),
                why=f"group {name} was set by hand to {saved.value}",
            )
        )
    return tuple(commands)


def _absent(path: str) -> LinkTarget:
    return LinkTarget(path=path, kind="absent")


def _json_list(data: Mapping[str, object], key: str) -> list[object]:
    """`data[key]` as a list ([] when absent); TypeError (a damaged state file) otherwise."""
    value = data.get(key, [])
    if not isinstance(value, list):
        raise TypeError(f"{key!r} is {type(value).__name__}, not a list")
    return value


def _json_object(value: object) -> Mapping[str, object]:
    """One JSON object of a state file; TypeError (a damaged state file) otherwise."""
    if not isinstance(value, dict):
        raise TypeError(f"expected an object, not {type(value).__name__}")
    return value
