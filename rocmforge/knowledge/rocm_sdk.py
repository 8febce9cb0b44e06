"""config/rocm_sdk.toml: TheRock's pip ROCm SDK as a build's ROCm.

Owns: `SdkTable` (the two routes: today's multi-arch index with its device-<target> extras and
the per-family indexes of older releases; the requirement pip installs and the one the torch
wheel gets on each; the GPU families of the per-family indexes; the libraries a torch built
against the SDK preloads, with their files and folders) and the loader, plus `family_for` (the
one family that holds every requested target). Must not: fetch an index, run pip or read the
venv (rocmforge.sources.rocm_sdk_index and rocmforge.steps.rocm_sdk do).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from rocmforge.errors import UsageError
from rocmforge.knowledge.toml_files import check_keys, config_dir, expect_type, read_toml

SDK_FILE = "rocm_sdk.toml"
FAMILY_FIELD = "{family}"


@dataclass(frozen=True, kw_only=True)
class SdkRoute:
    """How one kind of index is used: its default URL and the two requirements."""

    index: str
    requirement: str
    """pip's requirement for the build venv; {version}, and {devices} on the multi-arch route."""
    wheel_requires: str


@dataclass(frozen=True, kw_only=True)
class PreloadLibrary:
    """One SDK library torch/_rocm_init.py loads: `file` (a glob) in `folder` of a package."""

    name: str
    file: str
    folder: str


@dataclass(frozen=True, kw_only=True)
class SdkTable:
    multi_arch: SdkRoute
    per_family: SdkRoute
    device_extra: str
    """The multi-arch extra of one target: "device-{target}"."""
    device_package: str
    """The package that extra installs: "rocm-sdk-device-{target}"."""
    first_multi_arch: str
    """The first release on the multi-arch index (an older one takes the per-family route)."""
    families: Mapping[str, tuple[str, ...]]
    preload: tuple[PreloadLibrary, ...]

    def extra_of(self, target: str) -> str:
        return self.device_extra.replace("{target}", processor_of(target))

    def package_of(self, target: str) -> str:
        return self.device_package.replace("{target}", processor_of(target))


def processor_of(target: str) -> str:
    """The processor name a device package is named after ("gfx942:xnack+" -> "gfx942")."""
    return target.split(":", 1)[0]


def _text(table: Mapping[str, object], key: str, where: str) -> str:
    return expect_type(table[key], str, where=f"{where}.{key}")


def _route(doc: Mapping[str, object], name: str, path: object, extra: tuple[str, ...] = ()
           ) -> dict[str, object]:
    where = f"{path}: {name}"
    table = expect_type(doc[name], dict, where=where)
    check_keys(table, where=where, required=("index", "requirement", "wheel_requires", *extra))
    return table


@cache
def load_sdk_table(directory: str | None = None) -> SdkTable:
    path = config_dir(directory) / SDK_FILE
    doc = read_toml(path)
    check_keys(doc, where=str(path), required=("multi_arch", "per_family", "families", "preload"))
    multi = _route(doc, "multi_arch", path, ("device_extra", "device_package", "first_version"))
    per_family = _route(doc, "per_family", path)
    routes = {name: SdkRoute(index=_text(table, "index", f"{path}: {name}"),
                             requirement=_text(table, "requirement", f"{path}: {name}"),
                             wheel_requires=_text(table, "wheel_requires", f"{path}: {name}"))
              for name, table in (("multi_arch", multi), ("per_family", per_family))}
    families: dict[str, tuple[str, ...]] = {}
    for name, entry in expect_type(doc["families"], dict, where=f"{path}: families").items():
        where = f"{path}: families.{name}"
        check_keys(expect_type(entry, dict, where=where), where=where, required=("targets",))
        families[str(name)] = tuple(expect_type(t, str, where=where)
                                    for t in expect_type(entry["targets"], list, where=where))
    preload: list[PreloadLibrary] = []
    for number, entry in enumerate(expect_type(doc["preload"], list, where=f"{path}: preload")):
        where = f"{path}: preload[{number}]"
        check_keys(expect_type(entry, dict, where=where), where=where,
                   required=("name", "file", "dir"))
        preload.append(PreloadLibrary(name=_text(entry, "name", where),
                                      file=_text(entry, "file", where),
                                      folder=_text(entry, "dir", where)))
    return SdkTable(
        multi_arch=routes["multi_arch"], per_family=routes["per_family"],
        device_extra=_text(multi, "device_extra", f"{path}: multi_arch"),
        device_package=_text(multi, "device_package", f"{path}: multi_arch"),
        first_multi_arch=_text(multi, "first_version", f"{path}: multi_arch"),
        families=families, preload=tuple(preload))


def family_in(index: str, table: SdkTable) -> str:
    """The family a per-family index URL names (a folder of its path that is a family of the
    table: TheRock's .../v2/gfx94X-dcgpu/ or a mirror's); "" when it names none."""
    from urllib.parse import urlsplit

    return next((part for part in urlsplit(index).path.split("/") if part in table.families), "")


def family_for(targets: Sequence[str], table: SdkTable) -> str:
    """The one family whose per-family index carries every target (processor names, features
    dropped); UsageError when the targets span families or none has them."""
    processors = {processor_of(t) for t in targets}
    for name, members in table.families.items():
        if processors <= set(members):
            return name
    known = "; ".join(f"{name}: {', '.join(m)}" for name, m in table.families.items())
    raise UsageError(
        f"No one ROCm SDK family holds all of {', '.join(sorted(processors))}",
        "each per-family pip ROCm SDK index (an index URL with {family}) serves one GPU "
        f"family, and the build venv holds one SDK (families: {known})",
        "build the targets of one family at a time (--arch), or use the multi-arch index (give "
        f"--rocm-sdk-version a release from {table.first_multi_arch} on, and no --rocm-sdk URL "
        "with {family})",
    )
