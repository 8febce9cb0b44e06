"""The ROCm components a PyTorch ROCm build needs: config/rocm_components.toml as records.

Owns: the component table (name, required by LoadHIP.cmake, the packages that provide it in
each install layout: AMD's legacy repositories, ROCm >= 7.14's native amdrocm-* packages,
Debian, the pip SDK's extras) and `components_for(tree_components)`: the list to check, the
tree's own when a checkout exists (names and REQUIRED from its LoadHIP.cmake), else the table's.
`install_hint(layout)` is the one place a fix names a ROCm package, `install_command(components,
layout)` the one command that installs several (each package once) and `install_fix` the fix
text with both. Must not: look at the machine (probes.rocm_components does).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rocmforge.knowledge.toml_files import check_keys, config_dir, expect_type, read_toml

TABLE_FILE = "config/rocm_components.toml"

# The kinds of install a package name is for (from probes.rocm.install_layout's words).
LEGACY, AMDROCM, DISTRO, SDK = "legacy", "amdrocm", "distro", "sdk"


def layout_kind(layout: str) -> str:
    """"legacy /opt/rocm-6.4.1" -> legacy, "TheRock /opt/rocm/core-10.0" -> amdrocm,
    "distro /usr" -> distro, "pip SDK" -> sdk; anything else (other, unknown) -> ""."""
    for prefix, kind in (("legacy", LEGACY), ("TheRock", AMDROCM), ("distro", DISTRO),
                         ("pip SDK", SDK)):
        if layout.startswith(prefix):
            return kind
    return ""


@dataclass(frozen=True, kw_only=True)
class SdkExtras:
    """The pip SDK's extras a fix names: the components', and a target's kernels."""

    components: str = "rocm[libraries,devel]"
    device: str = "rocm[device-{target}]"
    amdrocm_device: str = "amdrocm-{target}"
    """ROCm >= 7.14's per-target native package (config [device] amdrocm)."""

    def for_target(self, target: str) -> str:
        return self.device.replace("{target}", target)


def device_code_hint(layout: str, targets: Sequence[str]) -> str:
    """The packages that bring `targets`' kernels to an install of this layout ("" for a
    layout whose packages are not per target: legacy and Debian ship every target a release
    supports, so a newer release is the fix there)."""
    kind = layout_kind(layout)
    extras = load_sdk_extras()
    if kind == SDK:
        return "pip install " + " ".join(f'"{extras.for_target(t)}"' for t in targets)
    if kind == AMDROCM:
        names = " ".join(extras.amdrocm_device.replace("{target}", t) for t in targets)
        return f"`sudo apt install {names}` (or dnf)"
    return ""


@dataclass(frozen=True, kw_only=True)
class Component:
    """One package PyTorch's CMake asks find_package for."""

    name: str
    required: bool
    rocm_package: str = ""
    """AMD's legacy apt/dnf repositories (/opt/rocm-X.Y): "rocblas-dev"."""
    debian_package: str = ""
    amdrocm_package: str = ""
    """ROCm >= 7.14's native package (/opt/rocm/core-X.Y): "amdrocm-blas-devel"."""
    source: str = TABLE_FILE
    """Where the name and `required` came from: the table, or the tree's LoadHIP.cmake line."""
    libraries: tuple[str, ...] = ()
    """Shared-library stems it installs (`libMIOpen`), for naming the owner of a link error."""
    symbols: tuple[str, ...] = ()
    """Prefixes of the C symbols it exports (`miopen`), for naming the owner of a symbol."""
    rocm_min: str = ""
    """LoadHIP asks for it only from this ROCm on (`if(ROCM_VERSION_DEV VERSION_GREATER_EQUAL
    ...)`); "" = always. Used before a checkout; the tree's own condition decides after."""
    headers: tuple[str, ...] = ()
    """Include folders of its headers (`miopen/`), for naming the owner of a missing header."""

    def install_hint(self, layout: str = "") -> str:
        """The package that provides it for an install of this layout (RocmInstall.layout);
        every layout's name when the layout is not known (a log from elsewhere)."""
        kind = layout_kind(layout)
        sdk = load_sdk_extras()
        legacy = f"{self.rocm_package} (ROCm repositories)" if self.rocm_package else ""
        native = f"{self.amdrocm_package} (ROCm >= 7.14 packages)" if self.amdrocm_package \
            else ""
        debian = f"{self.debian_package} (Debian)" if self.debian_package else ""
        pip = f'"{sdk.components}" (pip ROCm SDK)'
        if kind == LEGACY:
            return legacy or (f"no package in the legacy ROCm repositories: {self.name} ships "
                              f"with ROCm >= 7.14 as {self.amdrocm_package or 'a native package'}")
        if kind == AMDROCM and native:
            return native
        if kind == DISTRO:
            amd = self.rocm_package or self.amdrocm_package
            return debian or (f"not packaged by Debian: AMD's {amd or 'ROCm'} installs it under "
                              "/opt/rocm, a separate install (pass --rocm-path)")
        if kind == SDK:
            return pip
        hints = [h for h in (legacy, native, debian) if h]
        if not hints:
            return f"the ROCm package that installs {self.name}'s CMake config"
        return " or ".join([*hints, pip])


def install_command(components: Sequence[Component], layout: str, *,
                    found: Sequence[Component] = ()) -> str:
    """The shell commands (quoted argvs in backticks, each within COMMAND_WIDTH) that install
    every package `components` need in an install of this layout, each package once, in the
    order first named; "" when the layout is not known (no one package manager to name) or no
    package is named. Debian's /usr: Debian's packages when Debian packages every one; else
    AMD's packages for a separate /opt/rocm install (as install_hint says), which then needs
    the components already `found` in /usr as well, or the build moved there misses them."""
    kind = layout_kind(layout)

    def shown(tool: tuple[str, ...], packages: Sequence[str]) -> str:
        return " and ".join(f"`{command}`" for command in _whole_commands(tool, packages))

    apt = ("sudo", "apt", "install")
    if kind == SDK:
        return shown(("pip", "install"), [load_sdk_extras().components] if components else [])
    if kind == LEGACY:
        return shown(apt, [c.rocm_package for c in components if c.rocm_package])
    if kind == AMDROCM:
        command = shown(apt, [c.amdrocm_package for c in components if c.amdrocm_package])
        return f"{command} (or dnf)" if command else ""
    if kind == DISTRO:
        lacking = [c.name for c in components if not c.debian_package]
        if not lacking:
            return shown(apt, [c.debian_package for c in components])
        amd = shown(apt, [c.rocm_package for c in (*components, *found) if c.rocm_package])
        too = ", with the components found in /usr too" if found else ""
        return (f"Debian packages no {', '.join(lacking)}: a separate ROCm from AMD's "
                f"repositories under /opt/rocm{too} (then pass --rocm-path): {amd}"
                ) if amd else ""
    return ""


# The widest command a fix shows: a command is never split on a terminal, and a fix line is
# indented, so a longer package list becomes several whole commands of this width or less.
COMMAND_WIDTH = 70


def _whole_commands(tool: tuple[str, ...], packages: Sequence[str]) -> list[str]:
    """`tool` with `packages` (each once, in order), as few commands as keep each one within
    COMMAND_WIDTH characters (a single package longer than that is a command of its own)."""
    commands: list[list[str]] = []
    for package in dict.fromkeys(packages):
        if commands and len(shlex.join([*commands[-1], package])) <= COMMAND_WIDTH:
            commands[-1].append(package)
        else:
            commands.append([*tool, package])
    return [shlex.join(command) for command in commands]


def install_fix(components: Sequence[Component], layout: str, *,
                found: Sequence[Component] = ()) -> str:
    """A fix for missing components: "install <name>: <package>; ..." (one entry each, as
    install_hint says it) and then the commands for all of them (install_command; `found`:
    the components the install already has, for a move to another install)."""
    each = "install " + "; ".join(f"{c.name}: {c.install_hint(layout)}" for c in components)
    command = install_command(components, layout, found=found)
    if not command:
        return each
    return f"{each}; all of them: {command}" if len(components) > 1 else f"{each}; {command}"


@lru_cache(maxsize=1)
def load_sdk_extras() -> SdkExtras:
    """config/rocm_components.toml [sdk]: the pip SDK's extras fixes name."""
    doc = read_toml(config_dir() / "rocm_components.toml")
    row = expect_type(doc.get("sdk", {}), dict, where=f"{TABLE_FILE} [sdk]")
    check_keys(row, where=f"{TABLE_FILE} [sdk]", required=("components", "device"))
    device = expect_type(doc.get("device", {}), dict, where=f"{TABLE_FILE} [device]")
    check_keys(device, where=f"{TABLE_FILE} [device]", required=("amdrocm",))
    return SdkExtras(components=str(row["components"]), device=str(row["device"]),
                     amdrocm_device=str(device["amdrocm"]))


@lru_cache(maxsize=1)
def load_components() -> tuple[Component, ...]:
    doc = read_toml(config_dir() / "rocm_components.toml")
    check_keys(doc, where=TABLE_FILE, optional=("components", "sdk", "device"))
    found = []
    components = expect_type(doc.get("components", {}), dict, where=f"{TABLE_FILE} [components]")
    for name, row in components.items():
        expect_type(row, dict, where=f"{TABLE_FILE} [components.{name}]")
        check_keys(row, where=f"{TABLE_FILE} [components.{name}]",
                   required=("required",),
                   optional=("rocm_package", "debian_package", "amdrocm_package", "libraries",
                             "symbols", "headers", "rocm_min"))
        lists = {key: tuple(str(v) for v in expect_type(row.get(key, []), list,
                                                          where=f"{TABLE_FILE} {name}.{key}"))
                 for key in ("libraries", "symbols", "headers")}
        found.append(Component(name=str(name), required=bool(row["required"]),
                               rocm_package=str(row.get("rocm_package", "")),
                               debian_package=str(row.get("debian_package", "")),
                               amdrocm_package=str(row.get("amdrocm_package", "")),
                               rocm_min=str(row.get("rocm_min", "")),
                               libraries=lists["libraries"], symbols=lists["symbols"],
                               headers=lists["headers"]))
    return tuple(found)


def components_for(tree: Sequence[tuple[str, bool, str]] | None,
                   rocm_version: str = "") -> tuple[Component, ...]:
    """What to check: `tree` is the checkout's LoadHIP.cmake list as (name, required, source)
    (None before a checkout: the table's list, without the components LoadHIP asks for only
    from a newer ROCm than `rocm_version`). Package names come from the table either way; a
    component the table does not know keeps empty package names."""
    table = {c.name: c for c in load_components()}
    if tree is None:
        from rocmforge.versions import version_key

        return tuple(c for c in table.values() if not (
            c.rocm_min and rocm_version
            and version_key(rocm_version, width=3) < version_key(c.rocm_min, width=3)))
    picked: dict[str, Component] = {}
    for name, required, source in tree:
        known = table.get(name)
        previous = picked.get(name)
        picked[name] = Component(
            name=name, required=required or bool(previous and previous.required),
            rocm_package=known.rocm_package if known else "",
            debian_package=known.debian_package if known else "",
            amdrocm_package=known.amdrocm_package if known else "", source=source)
    return tuple(picked.values())
