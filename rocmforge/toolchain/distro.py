"""The exact package-manager command that installs a missing compiler, per distribution.

Owns: parsing /etc/os-release text (the caller reads the file) and mapping (distro family,
compiler kind, major) to an argv. Must not: read files, run package managers or guess beyond the
families listed here (an unknown distro gets None, and the caller names the packages in words).

Package names: Debian/Ubuntu ship `gcc-N`, `g++-N`, `libstdc++-N-dev`, `clang-N`; RHEL-likes ship
versioned GCC as `gcc-toolset-N` (installed under /opt/rh/gcc-toolset-N); Fedora itself ships
only its current GCC as `gcc-c++` and clang as `clang`; SUSE ships `gccN`, `gccN-c++`, `clangN`.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class OsRelease:
    """The fields of os-release that decide the package manager."""

    id: str
    id_like: tuple[str, ...]
    version_id: str = ""
    pretty_name: str = ""

    @property
    def family(self) -> str:
        """ "debian", "rhel", "fedora", "suse", "arch", or "" when unknown."""
        names = (self.id, *self.id_like)
        for name in names:
            if name in ("debian", "ubuntu"):
                return "debian"
            if name in ("rhel", "centos", "rocky", "almalinux", "ol"):
                return "rhel"
            if name == "fedora":
                # RHEL clones say ID_LIKE="rhel centos fedora": rhel wins because it comes first.
                return "rhel" if any(n in ("rhel", "centos") for n in names) else "fedora"
            if name in ("suse", "opensuse", "sles") or name.startswith("opensuse"):
                return "suse"
            if name == "arch":
                return "arch"
        return ""


def parse_os_release(text: str) -> OsRelease:
    """Parse os-release(5) text: KEY=value lines, values optionally shell-quoted."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, raw = line.partition("=")
        try:
            parts = shlex.split(raw)
        except ValueError:
            parts = [raw.strip("\"'")]
        values[key.strip()] = " ".join(parts)
    return OsRelease(
        id=values.get("ID", "").lower(),
        id_like=tuple(values.get("ID_LIKE", "").lower().split()),
        version_id=values.get("VERSION_ID", ""),
        pretty_name=values.get("PRETTY_NAME", ""),
    )


def install_command(
    release: OsRelease, *, kind: str, major: int, libstdcxx_only: bool = False
) -> tuple[str, ...] | None:
    """The argv that installs compiler `kind` version `major` (or only its libstdc++ dev files).

    None when the family is unknown or the family packages no such versioned compiler.
    """
    family = release.family
    if family == "debian":
        if libstdcxx_only:
            return ("apt-get", "install", "-y", f"libstdc++-{major}-dev")
        if kind == "gcc":
            return (
                "apt-get",
                "install",
                "-y",
                f"gcc-{major}",
                f"g++-{major}",
                f"libstdc++-{major}-dev",
            )
        return ("apt-get", "install", "-y", f"clang-{major}")
    if family == "rhel":
        if kind == "gcc":
            return ("dnf", "install", "-y", f"gcc-toolset-{major}")
        return ("dnf", "install", "-y", "clang")
    if family == "fedora":
        if kind == "gcc":
            return ("dnf", "install", "-y", "gcc", "gcc-c++", "libstdc++-devel")
        return ("dnf", "install", "-y", f"clang{major}" if major else "clang")
    if family == "suse":
        if kind == "gcc":
            return ("zypper", "install", "-y", f"gcc{major}", f"gcc{major}-c++")
        return ("zypper", "install", "-y", f"clang{major}")
    return None
