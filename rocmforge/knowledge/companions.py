"""Companion libraries (torchvision, torchaudio): config/companions.toml as frozen records.

Owns: `Companion` (repo, wheel name, tag pattern, the ROCm build variables, its release lines
and the torch each one needs), the loader, the `--with` / `companions` parsing
(`parse_requests`: "torchvision,torchaudio@v2.11.0"), the choice of what to build for a torch
version (`choose`: the release that pairs with it, a ref the user gave, or a skip with the
reason) and the pairing rule (`pairing`: which torch a companion version needs, and whether the
torch being built is one). Must not: run git, read a checkout (callers pass version.txt's text)
or probe the machine.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from rocmforge.errors import ConfigError, UsageError
from rocmforge.knowledge.addons import AddOnChoice, read_addons
from rocmforge.knowledge.toml_files import (
    check_keys,
    config_dir,
    expect_type,
    suggest,
)

COMPANIONS_FILE = "companions.toml"
# A ref that names a release: v0.23.0, 0.23.0, v2.11.0-rc2, refs/tags/v0.24.1, release/0.24.
_REF_VERSION = re.compile(r"^(?:refs/tags/)?v?(\d+)\.(\d+)(?:\.(\d+))?(?:-rc\d+)?$")
_REF_BRANCH = re.compile(r"^(?:refs/heads/)?release/(\d+)\.(\d+)$")
_LINE = re.compile(r"^\d+\.\d+$")


@dataclass(frozen=True, kw_only=True)
class CompanionRelease:
    """One release line of a companion: the torch minor it came out with and what it needs."""

    line: str  # the companion's major.minor, e.g. "0.23"
    torch: str  # the torch major.minor released with it, e.g. "2.8"
    requires: SpecifierSet  # the torch versions it builds against
    from_rule: bool = False  # made by the torch_offset rule, not a table row


@dataclass(frozen=True, kw_only=True)
class Companion:
    """One companion library as config/companions.toml describes it."""

    name: str
    repo: str
    package: str
    tag: str  # "v{version}"
    main_ref: str
    build_env: Mapping[str, str]
    releases: tuple[CompanionRelease, ...]
    torch_offset: int = 0  # 0 = no rule beyond the rows
    last_torch: str = ""  # "" = no end of releases known
    no_release: str = ""

    def release_of_line(self, line: str) -> CompanionRelease | None:
        """The row of a companion line ("0.23"), or the torch_offset rule's, None if neither."""
        for release in self.releases:
            if release.line == line:
                return release
        major, minor = _split(line)
        if self.torch_offset and major == 0 and minor - self.torch_offset > 0:
            torch = f"2.{minor - self.torch_offset}"
            if _split(torch) > _split(self.releases[-1].torch):
                return CompanionRelease(line=line, torch=torch,
                                        requires=SpecifierSet(f"=={torch}.*"), from_rule=True)
        return None

    def release_for_torch(self, torch_line: str) -> CompanionRelease | None:
        """The release that came out with torch `torch_line` ("2.8"); the rule's beyond the
        rows; None when there is none (older than the table, or after `last_torch`)."""
        for release in self.releases:
            if release.torch == torch_line:
                return release
        if self.last_torch and _split(torch_line) > _split(self.last_torch):
            return None
        major, minor = _split(torch_line)
        if self.torch_offset and major == 2 and _split(torch_line) > _split(
                self.releases[-1].torch):
            return self.release_of_line(f"0.{minor + self.torch_offset}")
        return None

    def tag_for(self, version: str) -> str:
        return self.tag.replace("{version}", version)


@dataclass(frozen=True, kw_only=True)
class CompanionTable:
    path: Path
    companions: Mapping[str, Companion]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.companions)

    def get(self, name: str) -> Companion:
        return self.companions[name]


@dataclass(frozen=True, kw_only=True)
class CompanionRequest:
    """What the user asked for: a companion, and a ref of their own ("" = the table's)."""

    name: str
    ref: str = ""


@dataclass(frozen=True, kw_only=True)
class Pairing:
    """A companion version against a torch version: what it needs, and whether that holds."""

    companion: str
    version: str  # the companion version checked ("0.23.0a0")
    torch_version: str  # the torch being built ("2.8.0a0")
    requires: str  # "==2.8.*", "" when the table cannot say
    source: str  # "config/companions.toml row 0.23", "... rule", ""

    @property
    def known(self) -> bool:
        return bool(self.requires)

    @property
    def matches(self) -> bool:
        if not self.requires:
            return False
        return SpecifierSet(self.requires).contains(_base(self.torch_version), prereleases=True)

    def refusal(self, where: str) -> UsageError:
        """The one-paragraph refusal of a pairing that does not hold (or cannot be checked)."""
        if not self.known:
            return UsageError(
                f"{self.companion} {self.version} ({where}) is no release line that "
                f"config/companions.toml knows, so the torch it needs cannot be checked against "
                f"the torch being built ({self.torch_version})",
                "a companion built against another torch fails at import (undefined symbols) "
                "or registers no GPU operators; the kit builds only pairs it can check",
                f"give a release ref of {self.companion} (--with {self.companion}@<tag>) or "
                f"leave the ref out to get the release that pairs with torch "
                f"{self.torch_version}",
            )
        return UsageError(
            f"{self.companion} {self.version} ({where}) needs torch {self.requires}, but this "
            f"build makes torch {self.torch_version}",
            f"each {self.companion} release is built against one torch release line "
            f"({self.source}); another pairing fails at import with undefined symbols or "
            "'operator does not exist'",
            f"leave the ref out (`--with {self.companion}`) to get the release that pairs with "
            f"torch {self.torch_version}, or pass a {self.companion} ref whose version needs it",
        )


# What a build does about one companion: the add-on choice every kind shares.
CompanionChoice = AddOnChoice


def _split(line: str) -> tuple[int, int]:
    major, _, minor = line.partition(".")
    return int(major), int(minor.split(".")[0])


def _base(version: str) -> Version:
    try:
        return Version(Version(version.split("+")[0]).base_version)
    except InvalidVersion:
        raise UsageError(
            f"{version!r} is not a version",
            "companion pairing compares release versions",
            "check version.txt of the checkout",
        ) from None


def line_of(version: str) -> str:
    """"0.23" of "0.23.0a0+abc"; "" when it is no version."""
    match = re.match(r"^v?(\d+)\.(\d+)", version.strip())
    return f"{match.group(1)}.{match.group(2)}" if match else ""


def version_of_ref(ref: str) -> str:
    """The companion version a ref names ("v0.28.0" -> "0.28.0", "release/0.24" -> "0.24"),
    "" for a branch or commit (only the checkout can tell)."""
    text = ref.strip()
    match = _REF_VERSION.match(text)
    if match:
        return ".".join(g for g in match.groups() if g is not None)
    branch = _REF_BRANCH.match(text)
    return f"{branch.group(1)}.{branch.group(2)}" if branch else ""


def pairing(companion: Companion, version: str, torch_version: str) -> Pairing:
    """Which torch `version` of `companion` needs (its row, else the rule) against the torch
    being built."""
    line = line_of(version)
    release = companion.release_of_line(line) if line else None
    if release is None:
        return Pairing(companion=companion.name, version=version, torch_version=torch_version,
                       requires="", source="")
    source = (f"config/companions.toml: the {companion.name} rule for lines newer than the "
              "table" if release.from_rule
              else f"config/companions.toml: {companion.name} {release.line} is built for "
                   f"torch {release.torch}")
    return Pairing(companion=companion.name, version=version, torch_version=torch_version,
                   requires=str(release.requires), source=source)


def choose(request: CompanionRequest, companion: Companion, torch_version: str, *,
           repo: str = "") -> CompanionChoice:
    """What to build for `request` with torch `torch_version` ("" = not known before the
    checkout: the torch main branch). Pure. A ref whose version the tag states is checked
    here, before any step (UsageError naming both versions); a branch or commit is checked by
    the pairing step once its version.txt exists."""
    def made(*, ref: str, origin: str, version: str = "", requires: str = "",
             skipped: str = "") -> CompanionChoice:
        return CompanionChoice(name=companion.name, package=companion.package,
                               repo=repo or companion.repo, build_env=dict(companion.build_env),
                               ref=ref, origin=origin, version=version, requires=requires,
                               skipped=skipped)

    if request.ref:
        stated = version_of_ref(request.ref)
        requires = ""
        if stated and torch_version:
            found = pairing(companion, stated, torch_version)
            if not found.matches:
                raise found.refusal(f"the ref {request.ref}")
            requires = found.requires
        return made(ref=request.ref, version=stated, origin="ref", requires=requires)
    if not torch_version:
        return made(ref=companion.main_ref, origin="main")
    torch = _base(torch_version)
    release = companion.release_for_torch(f"{torch.major}.{torch.minor}")
    if release is None:
        if companion.last_torch and (torch.major, torch.minor) > _split(companion.last_torch):
            why = (f"no {companion.name} release for torch {torch.major}.{torch.minor}: "
                   f"{companion.no_release}; to build it anyway pass --with "
                   f"{companion.name}@{companion.tag_for(companion.last_torch + '.0')}")
        else:
            why = (f"config/companions.toml has no {companion.name} release for torch "
                   f"{torch.major}.{torch.minor}; pass --with {companion.name}@<tag> to build "
                   "a ref of your choice (its version is checked against this torch)")
        return made(ref="", origin="table", skipped=why)
    version = f"{release.line}.{torch.micro}"
    return made(ref=companion.tag_for(version), version=version,
                origin="rule" if release.from_rule else "table", requires=str(release.requires))


def parse_requests(items: Sequence[str], table: CompanionTable) -> tuple[CompanionRequest, ...]:
    """The `companions` setting / `--with` values ("torchvision", "torchaudio@v2.11.0", also
    comma-separated) as requests; an unknown name or a repeated one is a UsageError (exit 2)."""
    found: dict[str, CompanionRequest] = {}
    for item in items:
        for word in str(item).split(","):
            word = word.strip()
            if not word:
                continue
            name, _, ref = word.partition("@")
            name = name.strip().lower()
            if name not in table.companions:
                raise UsageError(
                    f"{name!r} (--with / setting companions) is no companion or extension the "
                    f"kit builds.{suggest(name, table.names)}",
                    "--with takes the companions of config/companions.toml, the extensions of "
                    "config/extensions.toml, git+URL@ref or the folder of an extension",
                    f"use {', '.join(table.names)} or an extension (flash-attention, "
                    "bitsandbytes, ...), optionally with a ref: --with "
                    "torchvision,flash-attention@v2.8.3",
                )
            if "@" in word and not ref.strip():
                raise UsageError(
                    f"{word!r} (--with) has an '@' but no ref after it",
                    "name@ref builds that tag, branch or commit of the companion",
                    f"write {name}@<tag> (e.g. {table.get(name).tag_for('1.2.0')}) or just "
                    f"{name}",
                )
            if name in found:
                raise UsageError(
                    f"{name} is named twice in --with / setting companions",
                    "each companion is built once, at one ref",
                    f"name {name} once",
                )
            found[name] = CompanionRequest(name=name, ref=ref.strip())
    return tuple(found.values())


def load_companions(directory: str | Path | None = None) -> CompanionTable:
    return _load(str(config_dir(directory) / COMPANIONS_FILE))


@functools.cache
def _load(path_text: str) -> CompanionTable:
    path = Path(path_text)
    companions: dict[str, Companion] = {}
    for read in read_addons(
            path, "companion",
            required=("repo", "package", "tag", "main_ref", "build_env", "release"),
            optional=("torch_offset", "last_torch", "no_release")):
        name, where, entry = read.name, read.where, read.entry
        env = expect_type(entry["build_env"], dict, where=f"{where} build_env")
        rows: list[CompanionRelease] = []
        for index, row in enumerate(expect_type(entry["release"], list, where=f"{where} release")):
            row_where = f"{where} release[{index}]"
            row = expect_type(row, dict, where=row_where)
            check_keys(row, where=row_where, required=("line", "torch", "requires"))
            line = expect_type(row["line"], str, where=f"{row_where} line")
            torch = expect_type(row["torch"], str, where=f"{row_where} torch")
            if not (_LINE.match(line) and _LINE.match(torch)):
                raise ConfigError(f"{row_where}: line and torch must be major.minor "
                                  f"(got {line!r}, {torch!r})", "", "fix the row")
            try:
                requires = SpecifierSet(expect_type(row["requires"], str,
                                                    where=f"{row_where} requires"))
            except InvalidSpecifier:
                raise ConfigError(f"{row_where}: requires {row['requires']!r} is not a PEP 440 "
                                  "specifier", "", "write it like ==2.8.* or >=2.11") from None
            rows.append(CompanionRelease(line=line, torch=torch, requires=requires))
        if not rows:
            raise ConfigError(f"{where} has no release rows", "", "add [[release]] rows")
        last = str(entry.get("last_torch", ""))
        if last and not _LINE.match(last):
            raise ConfigError(f"{where}: last_torch {last!r} is not major.minor", "",
                              "fix it")
        companions[name] = Companion(
            name=name,
            repo=expect_type(entry["repo"], str, where=f"{where} repo"),
            package=expect_type(entry["package"], str, where=f"{where} package"),
            tag=expect_type(entry["tag"], str, where=f"{where} tag"),
            main_ref=expect_type(entry["main_ref"], str, where=f"{where} main_ref"),
            build_env=MappingProxyType({str(k): str(v) for k, v in env.items()}),
            releases=tuple(rows),
            torch_offset=expect_type(entry.get("torch_offset", 0), int,
                                     where=f"{where} torch_offset"),
            last_torch=last,
            no_release=str(entry.get("no_release", "")),
        )
    return CompanionTable(path=path, companions=MappingProxyType(companions))
