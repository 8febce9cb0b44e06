"""config/rocm_sdk.toml: TheRock's pip ROCm SDK as a build's ROCm.

Owns: `SdkTable` (the requirement pip installs, what the torch wheel then requires, the GPU
families each index serves, the libraries a torch built against the SDK preloads) and the
loader, plus `family_for` (the one family that holds every requested target). Must not: run pip
or read the venv (rocmforge.steps.rocm_sdk does).
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
class SdkTable:
    requirement: str
    """pip's requirement for the build venv; "{version}" is the rocm_sdk_version setting."""
    wheel_requires: str
    families: Mapping[str, tuple[str, ...]]
    preload: tuple[str, ...]

    def requirement_for(self, version: str) -> str:
        return self.requirement.replace("{version}", version)

    def wheel_requirement_for(self, version: str) -> str:
        return self.wheel_requires.replace("{version}", version)


@cache
def load_sdk_table(directory: str | None = None) -> SdkTable:
    path = config_dir(directory) / SDK_FILE
    doc = read_toml(path)
    check_keys(doc, where=str(path), required=("sdk", "families", "preload"))
    sdk = expect_type(doc["sdk"], dict, where=f"{path}: sdk")
    check_keys(sdk, where=f"{path}: sdk", required=("requirement", "wheel_requires"))
    families: dict[str, tuple[str, ...]] = {}
    for name, entry in expect_type(doc["families"], dict, where=f"{path}: families").items():
        where = f"{path}: families.{name}"
        check_keys(expect_type(entry, dict, where=where), where=where, required=("targets",))
        families[str(name)] = tuple(expect_type(t, str, where=where)
                                    for t in expect_type(entry["targets"], list, where=where))
    preload = expect_type(doc["preload"], dict, where=f"{path}: preload")
    check_keys(preload, where=f"{path}: preload", required=("linux",))
    return SdkTable(
        requirement=expect_type(sdk["requirement"], str, where=f"{path}: sdk.requirement"),
        wheel_requires=expect_type(sdk["wheel_requires"], str, where=f"{path}: sdk.wheel_requires"),
        families=families,
        preload=tuple(expect_type(n, str, where=f"{path}: preload.linux")
                      for n in expect_type(preload["linux"], list, where=f"{path}: preload")))


def family_for(targets: Sequence[str], table: SdkTable) -> str:
    """The one family whose index carries every target (processor names, features dropped);
    UsageError when the targets span families or none has them."""
    processors = {t.split(":", 1)[0] for t in targets}
    for name, members in table.families.items():
        if processors <= set(members):
            return name
    known = "; ".join(f"{name}: {', '.join(m)}" for name, m in table.families.items())
    raise UsageError(
        f"No one ROCm SDK family holds all of {', '.join(sorted(processors))}",
        "each pip ROCm SDK index serves one GPU family, and the build venv holds one SDK "
        f"(families: {known})",
        "build the targets of one family at a time (--arch), or give rocm_sdk an index URL "
        "without {family} that serves them all",
    )


def sdk_index_for(url: str, targets: Sequence[str], table: SdkTable) -> tuple[str, str]:
    """(the index URL with {family} filled in, the family; "" when the URL names none)."""
    if FAMILY_FIELD not in url:
        return url, ""
    family = family_for(targets, table)
    return url.replace(FAMILY_FIELD, family), family
