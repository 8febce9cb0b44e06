"""The kit's steps, by name: the one list every other layer checks its step names against.

Owns: every step name `invoke build` can plan (preflight ... install, the add-on steps), the
step families an add-on's steps are named by (`<add-on>-build` for torchvision, flash-attention
or any `--with` extension), and `verify` (an import or first op after the install, which triage
is told about but no plan holds). Each entry says its pipeline stage, the in-process action
that runs it (a "python" step's argv[0]; none for a command), what it reads and writes as
places of the work dir (as far as the code knows: the plan's `Effects` say it per build, with
paths), and the step it counts as for triage (`companions-install` as `install`). Also the
check a config loader runs on a step name it reads (`check_step`, `check_step_kind`: a
ConfigError, exit 2, when the file loads) and the one a planner runs on its plan
(`check_planned`). And the type of a step name in the kit's own code, `StepName`: `STEP.<name>`
for a step, `FAMILY.<suffix>.name_for(add-on)` for an add-on's, so a mistyped name fails at import
or in mypy, never as a step that silently matches nothing (tests/unit/test_step_names.py finds
any plain string left where the code names a step); `ActionName`, every in-process action.
Must not: plan, run or read anything. The order here is a plan's without `--rocm-sdk` (one
with it moves venv, checkout and tree-facts before rocm-sdk); plan.build_plan decides.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, NewType

from rocmforge.errors import ConfigError

Stage = Literal["prepare", "sources", "venv", "rocm-sdk", "triton", "configure", "build",
                "outputs", "add-ons", "verify"]
"""The pipeline's stages (DESIGN.md "The pipeline behind `invoke build`"), in order."""

STAGE_ORDER: tuple[Stage, ...] = ("prepare", "sources", "venv", "rocm-sdk", "triton",
                                  "configure", "build", "outputs", "add-ons", "verify")

StepName = NewType("StepName", str)
"""A step's name as the kit's code writes it: a field of STEP, or an add-on's step from its
family (`FAMILY.build.name_for("torchvision")`). What a user or a file names is a plain str
until `check_step` accepts it."""

ActionName = Literal[
    "preflight", "compilers", "checkout", "tree-facts", "patches", "rocm-init", "rocm-sdk",
    "build-requirements", "triton", "triton-targets", "environment", "hipify", "stale-check",
    "log-check", "collect", "install", "companions-collect", "companions-install",
    "companions-clear", "companion-checkout", "extension-copy", "companion-pairing",
    "extension-pairing", "companion-patches"]
"""An in-process action (a "python" step's argv[0]): the entries below name the steps each
runs, and steps.STAGES maps each to its function."""

Place = Literal["machine", "remote", "kit", "tree", "build-dir", "lock", "venv", "downloads",
                "triton-tree", "state", "logs", "dist", "manifest", "add-on-tree",
                "user-folder"]
"""Where a step reads or writes: the machine (ROCm, compilers), a remote (git, an index), the
kit's own files (patches/), the PyTorch tree and its CMake build dir, the work dir's lock file,
build venv, downloads, Triton tree, state/, logs/, dist/ and dist/manifest.json, an add-on's
tree under src/, and a folder of the user's (an extension given as a folder)."""


@dataclass(frozen=True, kw_only=True)
class StepSpec:
    """One step the kit can plan, or that triage is told about (`planned=False`)."""

    name: StepName
    stage: Stage
    summary: str
    """One line for people (the README's step table)."""
    actions: tuple[ActionName, ...] = ()
    """The in-process actions that run it (a "python" step's argv[0]); () = a command."""
    reads: tuple[Place, ...] = ()
    writes: tuple[Place, ...] = ()
    like: StepName | None = None
    """For triage: the step a rule's `steps` names to cover this one (None = itself)."""
    planned: bool = True

    @property
    def kind(self) -> StepName:
        """The step name a triage rule names to cover this step."""
        return self.like or self.name

    @property
    def label(self) -> str:
        """How it reads for people: its name."""
        return self.name


@dataclass(frozen=True, kw_only=True)
class StepFamily:
    """The steps each add-on (companion or extension) gets, named `<add-on>-<suffix>`; a
    numbered family (`prepare`) is `<add-on>-prepare-<n>`, n from 1."""

    suffix: str
    stage: Stage
    summary: str
    actions: tuple[ActionName, ...] = ()
    reads: tuple[Place, ...] = ()
    writes: tuple[Place, ...] = ()
    like: StepName | None = None
    numbered: bool = False

    @property
    def pattern(self) -> str:
        """How the family reads for people: `<add-on>-build`, `<add-on>-prepare-<n>`."""
        return f"<add-on>-{self.suffix}" + ("-<n>" if self.numbered else "")

    @property
    def label(self) -> str:
        return self.pattern

    def name_for(self, addon: str, number: int = 0) -> StepName:
        """The step of this family for `addon` (and, numbered, its `number`th one)."""
        if not ADDON_NAME.fullmatch(addon):
            raise ValueError(f"{addon!r} is no add-on name ({ADDON_NAME.pattern})")
        if self.numbered != (number > 0):
            raise ValueError(f"the {self.pattern} family {'needs' if self.numbered else 'takes no'}"
                             " number")
        return StepName(f"{addon}-{self.suffix}" + (f"-{number}" if self.numbered else ""))

    def addon_of(self, name: str) -> str | None:
        """The add-on a step of this family belongs to, or None when `name` is no member."""
        tail = rf"-{re.escape(self.suffix)}" + (r"-[1-9][0-9]*" if self.numbered else "")
        match = re.fullmatch(rf"({ADDON_NAME.pattern}){tail}", name)
        return match.group(1) if match else None


# What an add-on's name may be: a recipe's or companion's table name, or the name a `--with`
# git URL or folder gets (knowledge.extensions: lower case, digits, `_`, `-`, `.`).
ADDON_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]*")


@dataclass(frozen=True)
class StepNames:
    """Every step's name, one attribute each (`-` as `_`): the only spelling of a step name in
    the kit's code. STEPS below gives each one its entry."""

    preflight: StepName = StepName("preflight")
    compilers: StepName = StepName("compilers")
    checkout: StepName = StepName("checkout")
    tree_facts: StepName = StepName("tree-facts")
    patches: StepName = StepName("patches")
    rocm_init: StepName = StepName("rocm-init")
    venv: StepName = StepName("venv")
    rocm_sdk: StepName = StepName("rocm-sdk")
    build_requirements: StepName = StepName("build-requirements")
    triton: StepName = StepName("triton")
    triton_targets: StepName = StepName("triton-targets")
    environment: StepName = StepName("environment")
    hipify: StepName = StepName("hipify")
    stale_check: StepName = StepName("stale-check")
    configure: StepName = StepName("configure")
    configure_check: StepName = StepName("configure-check")
    build: StepName = StepName("build")
    build_check: StepName = StepName("build-check")
    collect: StepName = StepName("collect")
    install: StepName = StepName("install")
    companions_collect: StepName = StepName("companions-collect")
    companions_install: StepName = StepName("companions-install")
    companions_clear: StepName = StepName("companions-clear")
    verify: StepName = StepName("verify")


STEP = StepNames()

STEPS: tuple[StepSpec, ...] = (
    StepSpec(name=STEP.preflight, stage="prepare", actions=("preflight",), reads=("machine",),
             summary="doctor's rows for this build; a FAIL stops it"),
    StepSpec(name=STEP.compilers, stage="prepare", actions=("compilers",), reads=("machine",),
             summary="record the C, C++ and HIP compilers' versions"),
    StepSpec(name=STEP.checkout, stage="sources", actions=("checkout",), reads=("remote",),
             writes=("tree", "lock"), summary="PyTorch at the ref, with submodules"),
    StepSpec(name=STEP.tree_facts, stage="sources", actions=("tree-facts",),
             reads=("tree", "state"), summary="the checkout's own facts against the plan's"),
    StepSpec(name=STEP.patches, stage="sources", actions=("patches",),
             reads=("kit", "remote", "tree"), writes=("tree",),
             summary="the kit's patch series and the upstream fixes"),
    StepSpec(name=STEP.rocm_init, stage="rocm-sdk", actions=("rocm-init",), writes=("tree",),
             summary="torch/_rocm_init.py, which loads the SDK (--rocm-sdk)"),
    StepSpec(name=STEP.venv, stage="venv", writes=("venv",), summary="the build virtualenv"),
    StepSpec(name=STEP.rocm_sdk, stage="rocm-sdk", actions=("rocm-sdk",), reads=("remote",),
             writes=("venv",), summary="the pip ROCm SDK into the build venv (--rocm-sdk)"),
    StepSpec(name=STEP.build_requirements, stage="venv", actions=("build-requirements",),
             reads=("tree", "remote"), writes=("venv",),
             summary="PyTorch's build requirements into the venv"),
    StepSpec(name=STEP.triton, stage="triton", actions=("triton",), reads=("tree", "remote"),
             writes=("downloads", "triton-tree", "venv"),
             summary="the pinned Triton: a checked wheel, else a source build"),
    StepSpec(name=STEP.triton_targets, stage="triton", actions=("triton-targets",),
             reads=("venv",), summary="one Triton kernel per target"),
    StepSpec(name=STEP.environment, stage="configure", actions=("environment",),
             writes=("state",), summary="state/build-env.sh, the build's exports"),
    StepSpec(name=STEP.hipify, stage="configure", actions=("hipify",), reads=("tree",),
             writes=("tree", "state"), summary="the CUDA sources translated to HIP"),
    StepSpec(name=STEP.stale_check, stage="configure", actions=("stale-check",),
             reads=("build-dir",), writes=("build-dir",),
             summary="a build dir made for other targets is cleaned"),
    StepSpec(name=STEP.configure, stage="configure", reads=("tree",), writes=("build-dir",),
             summary="CMake only (setuptools releases)"),
    StepSpec(name=STEP.configure_check, stage="configure", actions=("log-check",),
             reads=("logs",), summary="configure's summary says USE_ROCM : ON"),
    StepSpec(name=STEP.build, stage="build", reads=("tree", "build-dir", "venv"),
             writes=("build-dir", "tree"), summary="compile and package the torch wheel"),
    StepSpec(name=STEP.build_check, stage="build", actions=("log-check",), reads=("logs",),
             summary="the build's summary says USE_ROCM : ON (scikit-build-core)"),
    StepSpec(name=STEP.collect, stage="outputs", actions=("collect",), reads=("tree", "venv"),
             writes=("dist", "manifest"), summary="the wheels to dist/, and the manifest"),
    StepSpec(name=STEP.install, stage="outputs", actions=("install",), reads=("dist",),
             writes=("venv",), summary="the wheels into the build venv, pinned"),
    StepSpec(name=STEP.companions_collect, stage="add-ons", actions=("companions-collect",),
             reads=("add-on-tree",), writes=("dist", "manifest", "lock"), like=STEP.collect,
             summary="the add-ons' wheels to dist/ and the manifest"),
    StepSpec(name=STEP.companions_install, stage="add-ons", actions=("companions-install",),
             reads=("dist",), writes=("venv",), like=STEP.install,
             summary="the add-ons' wheels into the build venv, pinned"),
    StepSpec(name=STEP.companions_clear, stage="add-ons", actions=("companions-clear",),
             writes=("dist", "manifest", "lock"),
             summary="an earlier build's add-on wheels out of dist/"),
    StepSpec(name=STEP.verify, stage="verify", reads=("dist", "manifest"), planned=False,
             summary="no build step: an import or first op after the install"),
)

@dataclass(frozen=True)
class StepFamilies:
    """Every add-on family, one attribute each: `FAMILY.build.name_for("torchvision")`."""

    checkout: StepFamily = StepFamily(
        suffix="checkout", stage="add-ons",
        actions=("companion-checkout", "extension-copy"),
        reads=("remote", "user-folder"), writes=("add-on-tree",), like=STEP.checkout,
        summary="the add-on at its ref (a folder: a copy of it)")
    pairing: StepFamily = StepFamily(
        suffix="pairing", stage="add-ons",
        actions=("companion-pairing", "extension-pairing"),
        reads=("add-on-tree", "venv"),
        summary="the add-on's version and torch pin against the torch built")
    patches: StepFamily = StepFamily(
        suffix="patches", stage="add-ons", actions=("companion-patches",),
        reads=("kit",), writes=("add-on-tree", "lock"), like=STEP.patches,
        summary="patches/<add-on>/ selected by its version")
    prepare: StepFamily = StepFamily(
        suffix="prepare", stage="add-ons", numbered=True, reads=("add-on-tree",),
        writes=("add-on-tree",), summary="a recipe's own commands before its wheel")
    build: StepFamily = StepFamily(
        suffix="build", stage="add-ons", reads=("add-on-tree", "venv"),
        writes=("add-on-tree",), like=STEP.build,
        summary="the add-on's wheel against the installed torch")


FAMILY = StepFamilies()
FAMILIES: tuple[StepFamily, ...] = (FAMILY.checkout, FAMILY.pairing, FAMILY.patches,
                                    FAMILY.prepare, FAMILY.build)

ENTRIES: tuple[StepSpec | StepFamily, ...] = (*STEPS, *FAMILIES)
"""Every step, then every family: the README's step table, row by row."""
_BY_NAME: dict[str, StepSpec] = {spec.name: spec for spec in STEPS}
ACTIONS: frozenset[ActionName] = frozenset(a for entry in ENTRIES for a in entry.actions)
"""Every in-process action a plan may name: steps.STAGES has exactly these."""


@dataclass(frozen=True, kw_only=True)
class KnownStep:
    """A step name as the registry reads it: its entry, and the add-on of a family member."""

    name: StepName
    entry: StepSpec | StepFamily
    addon: str = ""

    @property
    def kind(self) -> StepName:
        """The step a triage rule names to cover this one (itself, unless `like` says)."""
        return self.entry.like or self.name


def lookup(name: str) -> KnownStep | None:
    """What `name` is: a step, a member of a family (`torchvision-build`), or None."""
    spec = _BY_NAME.get(name)
    if spec is not None:
        return KnownStep(name=StepName(name), entry=spec)
    for family in FAMILIES:
        addon = family.addon_of(name)
        if addon is not None:
            return KnownStep(name=StepName(name), entry=family, addon=addon)
    return None


def is_known(name: str) -> bool:
    return lookup(name) is not None


def step(name: str) -> StepSpec:
    """The entry of a step named in the kit's own code (a KeyError is a typo in the kit)."""
    return _BY_NAME[name]


def family(suffix: str) -> StepFamily:
    """The family of `<add-on>-<suffix>` (a KeyError is a typo in the kit)."""
    for entry in FAMILIES:
        if entry.suffix == suffix:
            return entry
    raise KeyError(suffix)


def triage_kind(name: str) -> str:
    """The step a triage rule names to cover `name`: `torchvision-build` counts as `build`,
    `companions-install` as `install`; an unknown name as itself."""
    known = lookup(name)
    return known.kind if known is not None else name


def kinds() -> tuple[StepName, ...]:
    """What a triage rule's `steps` may name: every step that is its own kind."""
    return tuple(spec.name for spec in STEPS if not spec.like)


def names_for_people() -> str:
    """Every step and family, for a message: `preflight, ..., verify, <add-on>-build ...`."""
    return ", ".join(entry.label for entry in ENTRIES)


def check_step(name: object, *, where: str) -> StepName:
    """`name` when it is a step or a family member; else a ConfigError (exit 2) naming
    `where` (the file and entry) and the names there are."""
    if isinstance(name, str) and is_known(name):
        return StepName(name)
    raise ConfigError(
        f"{where} names the step {name!r}, which the kit does not have",
        "a step name that matches no step would silently never apply",
        f"use one of: {names_for_people()}" + _did_you_mean(name, _every_name()),
    )


def check_step_kind(name: object, *, where: str) -> StepName:
    """`name` when a triage rule may name it (a step that is its own kind: `build` covers
    every add-on's build); else a ConfigError (exit 2) naming `where`."""
    if isinstance(name, str) and name in kinds():
        return StepName(name)
    known = lookup(name) if isinstance(name, str) else None
    if known is not None:
        raise ConfigError(
            f"{where} names the step {name!r}, which triage reads as {known.kind!r}",
            f"a rule's steps name what a step counts as, so {name!r} would never match",
            f"write {known.kind!r}",
        )
    raise ConfigError(
        f"{where} names the step {name!r}, which the kit does not have",
        "a rule whose steps match no step would silently never apply",
        f"use one of: {', '.join(kinds())}" + _did_you_mean(name, kinds()),
    )


def check_planned(steps: Iterable[tuple[str, str, str]]) -> None:
    """For a planner: each (name, kind, argv[0]) it made is a planned step of the registry,
    and a "python" step runs one of that step's actions. A ValueError is a bug in the kit."""
    for name, kind, first in steps:
        known = lookup(name)
        if known is None or (isinstance(known.entry, StepSpec) and not known.entry.planned):
            raise ValueError(f"the plan has a step {name!r} that knowledge.steps does not list")
        actions = known.entry.actions
        if kind == "python" and first not in actions:
            raise ValueError(f"step {name!r} runs the action {first!r}; knowledge.steps lists "
                             f"{', '.join(actions) or 'none (a command)'}")
        if kind != "python" and actions:
            raise ValueError(f"step {name!r} is a command; knowledge.steps lists its actions "
                             f"{', '.join(actions)}")


def _every_name() -> tuple[str, ...]:
    return tuple(entry.label for entry in ENTRIES)


def _did_you_mean(name: object, choices: Iterable[str]) -> str:
    import difflib

    if not isinstance(name, str):
        return ""
    close = difflib.get_close_matches(name, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
