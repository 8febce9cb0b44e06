"""Which optional parts a build gets: the `features` setting + targets + ROCm components + AOTriton.

Owns: one decision per optional part (config/features.toml): on or off, why, and the build variables
that make PyTorch's CMake do the same; the preflight rows for a part the user asked for ("on") that
cannot be built (a FAIL with the reason, never a silent drop) and for the components each chosen
part needs; the target check against upstream's lists (AOTriton's images, or the table's per-ROCm
lists for CK and hipBLASLt). Variables are set only where the decision differs from PyTorch's (or
the kit's) default or the user chose explicitly, so a default build's environment is unchanged;
BUILD_TEST=0 stays in config/build.toml. Must not: probe, read files or download (the caller passes
what the tree, the install and the work dir say).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rocmforge.errors import UsageError
from rocmforge.plan.doctor_row import DoctorRow

if TYPE_CHECKING:
    from rocmforge.knowledge.components import Component
    from rocmforge.knowledge.features import AotritonTable, FeatureSpec
    from rocmforge.probes.rocm_components import ComponentFound
    from rocmforge.sources.aotriton import AotritonFetch, AotritonRelease

CHOICES = ("on", "off", "auto")
PREFIX_VARIABLE = "AOTRITON_INSTALLED_PREFIX"


@dataclass(frozen=True, kw_only=True)
class Feature:
    """One optional part as this build will have it."""

    name: str
    label: str
    requested: str  # on / off / auto
    on: bool
    why: str
    variables: tuple[tuple[str, str], ...]
    source: str

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "label": self.label, "requested": self.requested,
                "on": self.on, "why": self.why, "variables": dict(self.variables),
                "source": self.source}


@dataclass(frozen=True, kw_only=True)
class FeaturePlan:
    """Every feature's decision, the preflight rows they raise, and the variables they set."""

    features: tuple[Feature, ...]
    rows: tuple[DoctorRow, ...]

    @property
    def env(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for feature in self.features:
            out.update(feature.variables)
        return out

    @property
    def built(self) -> dict[str, bool]:
        return {f.name: f.on for f in self.features}

    def table_rows(self) -> list[tuple[str, str, str, str]]:
        return [(f.name, "on" if f.on else "off", f.why,
                 " ".join(f"{k}={v}" for k, v in f.variables) or "(PyTorch's default)")
                for f in self.features]

    def to_json(self) -> list[dict[str, object]]:
        return [f.to_json() for f in self.features]


@dataclass(frozen=True, kw_only=True)
class AotritonState:
    """What the caller found out about AOTriton: the release (the tree's, else None), the table
    (before a checkout), the files configure would fetch, and the prefix when fetched."""

    release: AotritonRelease | None
    table: AotritonTable
    fetch: AotritonFetch | None
    prefix: Path | None


def check_choices(requested: Mapping[str, str], names: Sequence[str]) -> dict[str, str]:
    """The `features` setting checked: known names, values on/off/auto (UsageError, exit 2)."""
    from rocmforge.knowledge.toml_files import suggest

    out: dict[str, str] = {}
    for name, value in requested.items():
        if name not in names:
            raise UsageError(
                f'The features setting names "{name}", which is not an optional part the kit '
                f"knows.{suggest(name, names)}",
                "a misspelled feature would otherwise be built with its default silently",
                f"use one of: {', '.join(names)}")
        choice = str(value).strip().lower()
        if choice not in CHOICES:
            raise UsageError(
                f"The features setting gives {name} the value {value!r}",
                "each feature is on (build it or stop), off, or auto (on where supported)",
                f"write {name}=on, {name}=off or {name}=auto")
        out[name] = choice
    return out


def plan_features(
    specs: Sequence[FeatureSpec],
    requested: Mapping[str, str],
    targets: Sequence[str],
    components: Sequence[tuple[Component, ComponentFound]] | None,
    aotriton: AotritonState,
    *,
    rocm_version: str = "",
    layout: str = "",
    sdk_to_come: str = "",
) -> FeaturePlan:
    """One Feature per spec, in the table's order, and the rows preflight shows (`rocm_version`:
    the install's, "" when unknown; it picks the per-ROCm target lists; `layout`: the
    install's, it picks the package names a fix gives). `sdk_to_come`: the pip SDK's extras
    the rocm-sdk step will install ("rocm[libraries,devel]") when that step has not run yet:
    a component missing now comes with it (its libraries carry every component), so it is
    no reason to leave a part out; the next plan, from the installed SDK, checks it."""
    choices = check_choices(requested, [s.name for s in specs])
    for spec in specs:
        if choices.get(spec.name) == "off" and spec.fallback and not spec.variables:
            raise UsageError(
                f"The features setting turns {spec.name} off, which a PyTorch build cannot do",
                f"{spec.label} has no build switch: {_short(spec.source)} links it on every ROCm "
                "build",
                f"drop {spec.name} from the features setting (auto)")
    found = {c.name: (c, f) for c, f in components} if components is not None else None
    features: list[Feature] = []
    rows: list[DoctorRow] = []
    for spec in specs:
        choice = choices.get(spec.name, "auto")
        feature, row = _decide(spec, choice, targets, found, aotriton, rocm_version, layout,
                               sdk_to_come)
        features.append(feature)
        if row is not None:
            rows.append(row)
    return FeaturePlan(features=tuple(features), rows=tuple(rows))


def listed_targets(spec: FeatureSpec, rocm_version: str) -> tuple[str, ...]:
    """The targets the table lists for `spec` at this ROCm release (every entry when unknown)."""
    from rocmforge.versions import version_key

    have = version_key(rocm_version, width=3) if rocm_version else None
    out: list[str] = []
    for entry in spec.supported:
        if not entry.rocm or have is None or have >= version_key(entry.rocm, width=3):
            out.extend(t for t in entry.targets if t not in out)
    return tuple(out)


def _listed_check(spec: FeatureSpec, targets: Sequence[str],
                  rocm_version: str) -> tuple[list[str], list[str]]:
    """(blockers, notes) of the table's target lists for these targets."""
    listed = listed_targets(spec, rocm_version)
    missing = [t for t in targets if t not in listed]
    later = [f"{t} (from ROCm {e.rocm})" for t in missing for e in spec.supported
             if t in e.targets]
    where = _cite(spec.source.split("targets: ", 1)[-1])
    per_rocm = any(entry.rocm for entry in spec.supported)
    notes: list[str] = []
    if not rocm_version and per_rocm:
        notes.append("ROCm version unknown: every listed target counted")
    if not missing:
        return [], [f"listed for {', '.join(targets)} ({where})", *notes]
    known = ", ".join(listed) + (f" at ROCm {rocm_version}" if rocm_version and per_rocm else "")
    unsupported = ", ".join(later) if later else ", ".join(missing)
    if spec.fallback:
        fall = (f"{spec.label} is not used on {unsupported}: PyTorch falls back to another "
                f"library there (supported: {known}; {where})")
        if len(missing) == len(targets):
            return [f"no target of this build is in {spec.label}'s list ({known}; {where})"], notes
        return [], notes + [fall]
    if len(missing) == len(targets):
        return [f"{spec.label} supports none of {', '.join(targets)} (only {known}; {where})"], \
            notes
    return [], notes + [f"{spec.label} unused on {unsupported} (supported: {known}; {where})"]


def _excluded_check(spec: FeatureSpec, targets: Sequence[str]) -> tuple[list[str], list[str]]:
    """(blockers, notes) of the table's excluded targets: every target excluded leaves the part
    out; some excluded is a note (the library has no code for those GPUs)."""
    out = [t for t in targets if t in spec.excluded]
    if not out:
        return [], []
    where = _cite(spec.source.split("targets: ", 1)[-1])
    name = spec.label.split(" (")[0]
    if len(out) == len(targets):
        return [f"upstream builds no {name} for {', '.join(out)} (its excluded targets: "
                f"{', '.join(spec.excluded)}; {where})"], []
    return [], [f"{name} has no code for {', '.join(out)}: upstream builds none for it "
                f"({where})"]


def _decide(spec: FeatureSpec, choice: str, targets: Sequence[str],
            found: Mapping[str, tuple[Component, ComponentFound]] | None,
            aotriton: AotritonState, rocm_version: str,
            layout: str = "", sdk_to_come: str = "") -> tuple[Feature, DoctorRow | None]:
    def make(on: bool, why: str, variables: Sequence[tuple[str, str]] = ()) -> Feature:
        return Feature(name=spec.name, label=spec.label, requested=choice, on=on, why=why,
                       variables=tuple(variables), source=spec.source)

    value = {True: "1", False: "0"}
    if choice == "off":
        variables = [(v, "0") for v in spec.variables]
        if spec.name == "tests":
            variables = []  # config/build.toml's BUILD_TEST=0 is the one place it is set
        return make(False, "off: the features setting", variables), None
    if choice == "auto" and not spec.default:
        why = f"off by default ({_short(spec.source)}); features {spec.name}=on builds it"
        if spec.targets == "listed" and targets:
            cannot, _ = _listed_check(spec, targets, rocm_version)
            if cannot:
                why = f"off by default ({_short(spec.source)}); {cannot[0]}"
        return make(False, why), None

    blockers: list[str] = []
    notes: list[str] = []
    have: list[str] = []  # "rccl 2.22.3 (/opt/rocm/lib/cmake/rccl/rccl-config.cmake)"
    lacking: list[Component] = []  # the missing components the table knows
    unknown: list[str] = []  # and those it does not (no package to name)
    needed_by_configure = False  # a missing component PyTorch's configure REQUIREs
    for name in spec.components:
        if found is None:
            notes.append(f"{name} not checked (no ROCm install found)")
            continue
        component, hit = found.get(name, (None, None))
        if (hit is None or not hit.found) and sdk_to_come:
            notes.append(f"{name} comes with the rocm-sdk step ({sdk_to_come})")
            continue
        if hit is None or not hit.found:
            blockers.append(f"the ROCm component {name} is not installed")
            if component is not None:
                lacking.append(component)
            else:
                unknown.append(name)
            needed_by_configure |= bool(component and component.required)
        else:
            have.append(f"{name} {hit.version or '(version unknown)'} ({hit.config})")
    if spec.targets == "aotriton" and targets:
        images, where = _aotriton_images(aotriton)
        if images is None:
            notes.append(f"AOTriton's target list is not in {where}; targets not checked")
        else:
            from rocmforge.knowledge.features import image_covers, supported_targets

            covered = supported_targets(images, targets)
            missing = [t for t in targets if t not in covered]
            if not covered:
                blockers.append(f"AOTriton has no kernels for {', '.join(targets)} "
                                f"(images {', '.join(images)}; {where})")
            elif missing:
                notes.append(f"no AOTriton kernels for {', '.join(missing)}: SDPA uses the math "
                             "path there")
            if covered:
                used = [i for i in images if any(image_covers(i, t) for t in covered)]
                notes.insert(0, f"AOTriton kernels for {', '.join(covered)} "
                                f"({', '.join(used)}; {where})")
    if spec.targets == "listed" and targets:
        cannot, said = _listed_check(spec, targets, rocm_version)
        notes.extend(said)
        if spec.fallback and cannot and choice != "on":
            notes.extend(cannot)  # linked anyway; nothing to leave out
        else:
            blockers.extend(cannot)
    if spec.targets == "excluded" and targets:
        cannot, said = _excluded_check(spec, targets)
        blockers.extend(cannot)
        notes.extend(said)
    extra: list[tuple[str, str]] = []
    if spec.artifact == "aotriton" and not blockers:
        fetch = aotriton.fetch
        if aotriton.prefix is not None:
            extra.append((PREFIX_VARIABLE, str(aotriton.prefix)))
            notes.append(f"AOTriton fetched ({aotriton.prefix})")
        elif fetch is not None and fetch.runtime is None:
            lacking_runtime = (
                f"the {fetch.key.split()[0]} version its runtime is chosen by is unknown"
                if fetch.key.endswith("unknown") else
                f"no runtime published for {fetch.key or 'this ROCm'}")
            notes.append(f"configure builds AOTriton {fetch.release.version} from source "
                         f"({lacking_runtime}; needs the network)")
        elif fetch is not None:
            notes.append(f"configure downloads AOTriton {fetch.release.version}; `invoke fetch` "
                         "for an offline build")
    if blockers:
        from rocmforge.knowledge.components import install_fix

        reason = "; ".join(blockers)
        off_vars = [(v, "0") for v in spec.variables]
        install = "; ".join([*([install_fix(lacking, layout)] if lacking else []),
                             *([f"install {', '.join(unknown)}"] if unknown else [])])
        check = f"feature {spec.name}"
        if choice == "on":
            row = DoctorRow(check=check, status="FAIL",
                            detail=f"{spec.label} was asked for (features {spec.name}=on) but "
                                   f"cannot be built: {reason}",
                            fix=f"{install or 'build for a supported target'}, or set features "
                                f"{spec.name}=auto (left out where unsupported)")
            return make(False, f"cannot be built: {reason}", off_vars), row
        if not spec.variables:
            # No build switch: nothing is left out, the build needs what is missing. A component
            # configure requires is already the "ROCm components" row's FAIL (one problem, one
            # row); otherwise a WARN.
            warn = None if needed_by_configure else DoctorRow(
                check=check, status="WARN",
                detail=f"{spec.label} is part of every ROCm build, but {reason}",
                fix=install or "build for a listed target")
            return make(False, f"missing: {reason}", off_vars), warn
        row = DoctorRow(check=check, status="WARN",
                        detail=f"{spec.label} is left out of this build: {reason}",
                        fix=(f"{install} to build it" if install else
                             "build for a supported target to have it") +
                            f", or set features {spec.name}=off to leave it out on purpose")
        return make(False, f"off: {reason}", off_vars), row
    explicit = choice == "on" or not spec.default
    variables = [(v, value[True]) for v in spec.variables] if explicit else []
    why = ("on: the features setting" if choice == "on" else "on by default")
    if notes:
        why += "; " + "; ".join(notes)
    ok_row: DoctorRow | None = None
    if have:
        ok_row = DoctorRow(check=f"feature {spec.name}", status="OK",
                           detail=f"{spec.label} needs {', '.join(have)}: found")
    return make(True, why, variables + extra), ok_row


def _aotriton_images(state: AotritonState) -> tuple[tuple[str, ...] | None, str]:
    """The AOTriton kernel images and where they were read (the tree, else the table)."""
    if state.release is not None:
        if state.release.images:
            return tuple(i for i, _ in state.release.images), state.release.source
        return None, state.release.source
    return state.table.images, "config/features.toml [aotriton]"


def _short(source: str) -> str:
    return source.split(" ", 1)[0]


def _cite(source: str) -> str:
    """"owner/repo:path@<40 hex> ..." -> "owner/repo:path@<8 hex>" for a table cell."""
    first = _short(source)
    path, at, ref = first.partition("@")
    return f"{path}@{ref[:8]}" if at else first
