"""The optional parts of a ROCm build: config/features.toml as records.

Owns: one `FeatureSpec` per optional part (the PyTorch build variables that switch it, its default,
the ROCm components it needs, where its target list comes from and, for "listed", the targets
upstream names per ROCm release, whether an unsupported target leaves it out or falls back at run
time, the artifact configure downloads for it) and `AotritonTable`, AOTriton's facts before a
checkout exists, with aotriton.cmake's rule for which targets an image covers (`image_covers`;
here rather than in sources.aotriton, which re-exports it, so a planner need not load the
sources package). Must not: look at the machine or a checkout (sources.aotriton reads the tree), or
decide what a build gets (plan.features does).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rocmforge.errors import ConfigError
from rocmforge.knowledge.toml_files import check_keys, config_dir, expect_type, read_toml

TABLE_FILE = "config/features.toml"
TARGET_RULES = ("", "aotriton", "listed", "excluded")
ARTIFACTS = ("", "aotriton")


@dataclass(frozen=True, kw_only=True)
class SupportedTargets:
    """Targets upstream supports for a feature from a ROCm release on ("" = any release)."""

    rocm: str
    targets: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class FeatureSpec:
    """One optional part of a PyTorch ROCm build, as upstream defines it."""

    name: str
    label: str
    variables: tuple[str, ...]
    default: bool
    components: tuple[str, ...]
    targets: str  # "" (upstream gives no list the kit checks), "aotriton", "listed", "excluded"
    artifact: str  # "" or "aotriton": what configure downloads for it
    source: str
    supported: tuple[SupportedTargets, ...] = ()  # targets = "listed": the lists, oldest first
    # True: linked whatever the targets (no build switch); an unlisted target falls back at run
    # time (hipBLASLt -> hipBLAS). False: built only for listed targets, left out otherwise.
    fallback: bool = False
    # targets = "excluded": the targets upstream builds it for no more (RCCL on TheRock's iGPUs)
    excluded: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class AotritonTable:
    """AOTriton's release facts from the table (used before a checkout exists)."""

    version: str
    rocm: tuple[str, ...]
    images: tuple[str, ...]
    base_url: str
    source: str


@lru_cache(maxsize=1)
def load_features() -> tuple[FeatureSpec, ...]:
    doc = read_toml(config_dir() / "features.toml")
    check_keys(doc, where=TABLE_FILE, required=("features", "aotriton"))
    from rocmforge.knowledge.components import load_components

    known_components = {c.name for c in load_components()}
    out = []
    features = expect_type(doc["features"], dict, where=f"{TABLE_FILE} [features]")
    for name, raw in features.items():
        where = f"{TABLE_FILE} [features.{name}]"
        row = expect_type(raw, dict, where=where)
        check_keys(row, where=where, required=("label", "variables", "default", "components",
                                               "targets", "artifact", "source"),
                   optional=("supported", "fallback", "excluded"))
        spec = FeatureSpec(
            name=str(name), label=str(expect_type(row["label"], str, where=f"{where} label")),
            variables=tuple(str(v) for v in expect_type(row["variables"], list,
                                                        where=f"{where} variables")),
            default=bool(expect_type(row["default"], bool, where=f"{where} default")),
            components=tuple(str(c) for c in expect_type(row["components"], list,
                                                         where=f"{where} components")),
            targets=str(row["targets"]), artifact=str(row["artifact"]),
            source=str(expect_type(row["source"], str, where=f"{where} source")),
            supported=_supported(row.get("supported", []), where=f"{where} supported"),
            fallback=bool(expect_type(row.get("fallback", False), bool,
                                      where=f"{where} fallback")),
            excluded=tuple(str(t) for t in expect_type(row.get("excluded", []), list,
                                                       where=f"{where} excluded")))
        _check_choice(spec.targets, TARGET_RULES, where=f"{where} targets")
        if (spec.targets == "listed") != bool(spec.supported):
            raise ConfigError(f"{where}: targets = \"listed\" and a supported list go together",
                              "the list is what the kit checks the build's targets against",
                              f"give {where} both, or neither")
        if (spec.targets == "excluded") != bool(spec.excluded):
            raise ConfigError(f"{where}: targets = \"excluded\" and an excluded list go "
                              "together",
                              "the list is what the kit checks the build's targets against",
                              f"give {where} both, or neither")
        _check_choice(spec.artifact, ARTIFACTS, where=f"{where} artifact")
        for component in spec.components:
            _check_choice(component, tuple(sorted(known_components)),
                          where=f"{where} components (config/rocm_components.toml names)")
        if not spec.source.strip():
            raise ConfigError(f"{where} has an empty source",
                              "every fact in config/ names the upstream file it comes from",
                              f"write the upstream file into {where} source")
        out.append(spec)
    return tuple(out)


@lru_cache(maxsize=1)
def load_aotriton_table() -> AotritonTable:
    doc = read_toml(config_dir() / "features.toml")
    where = f"{TABLE_FILE} [aotriton]"
    row = expect_type(doc.get("aotriton", {}), dict, where=where)
    check_keys(row, where=where, required=("source", "version", "rocm", "images", "base_url"))
    return AotritonTable(version=str(row["version"]),
                         rocm=tuple(map(str, expect_type(row["rocm"], list, where=where))),
                         images=tuple(map(str, expect_type(row["images"], list, where=where))),
                         base_url=str(row["base_url"]),
                         source=str(row["source"]))


def _supported(raw: object, *, where: str) -> tuple[SupportedTargets, ...]:
    out = []
    for index, item in enumerate(expect_type(raw, list, where=where)):
        entry = expect_type(item, dict, where=f"{where}[{index}]")
        check_keys(entry, where=f"{where}[{index}]", required=("rocm", "targets"))
        out.append(SupportedTargets(
            rocm=str(entry["rocm"]),
            targets=tuple(str(t) for t in expect_type(entry["targets"], list,
                                                      where=f"{where}[{index}] targets"))))
    return tuple(out)


def feature_names() -> tuple[str, ...]:
    return tuple(spec.name for spec in load_features())


def _check_choice(value: str, choices: tuple[str, ...], *, where: str) -> None:
    if value not in choices:
        raise ConfigError(f"{where} is {value!r}, which the kit does not know",
                          "a typo here would silently change what the plan checks",
                          f"use one of: {', '.join(repr(c) for c in choices)}")


def image_covers(image: str, target: str) -> bool:
    """aotriton.cmake's rule: "amd-gfx110x" -> regex "110." searched in the target name."""
    pattern = image[len("amd-gfx"):].replace("x", ".")
    return bool(pattern) and re.search(pattern, target) is not None


def supported_targets(release_images: Sequence[str], targets: Sequence[str]) -> tuple[str, ...]:
    return tuple(t for t in targets if any(image_covers(i, t) for i in release_images))
