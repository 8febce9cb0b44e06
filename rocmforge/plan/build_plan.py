"""The build pipeline as data: `plan_build()` turns resolved inputs into an ordered Plan.

Owns: which steps `invoke build` runs, in which order, with which argv, working directory,
environment and digest inputs. Pure: no os.environ, no subprocess, no file access. Everything the
machine told us arrives as arguments (Facts, the chosen compilers, the computed environment, the
doctor rows); `rocmforge.execute.runner` executes the result.

Order (reference pytorch-rocm-build.md §1.1-§1.2): preflight -> compilers -> checkout -> patches
-> build venv -> build requirements -> triton -> environment -> hipify (before any configure,
§1.2/§1.3) -> stale check (§5.2) -> configure + log check (setuptools releases, §2) ->
build -> log check (scikit-build-core releases) -> collect (wheels + manifest) -> install.
Build requirements come before Triton so that a CUDA `triton` pulled in by them is replaced by
the ROCm one, leaving exactly one provider.

The environment step sits just before hipify, the first step that uses the build environment:
a rerun redoes the first changed step and everything after it, so a new target list or
build_env redoes hipify, configure and the build but keeps the checkout, the venv and Triton.
Digest rules: preflight's digest holds only its FAIL rows (a stamp exists only when there were
none, so a new WARN, e.g. less free disk, does not redo a finished build, while a new FAIL does);
the patches step's digest holds the sha256 of every patch in the kit's series (`patch_inputs`).
Triton mode, preflight skip and the venv's site-packages access come from Settings
(`triton_mode`, `skip_preflight`, `venv_system_site_packages`).

The checkout step is `volatile` unless the ref is a full commit: its digest holds the ref's
NAME, and `main`, `release/2.9` or a moved tag can name another commit tomorrow. The planner
cannot ask git (it is pure), so the runner re-checks that step on every build and compares the
commits it resolved (its fingerprint) with the stamp's; a change redoes every later step,
Triton included (the pin is read from the new tree). `invoke plan` shows it as "checks".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rocmforge.errors import ConfigError, UsageError
from rocmforge.execute.action_args import (
    HipifyArgs,
    InVenv,
    LogCheckArgs,
    StaleCheckArgs,
    TritonArgs,
)
from rocmforge.execute.model import Effects, Plan, Step
from rocmforge.execute.step_inputs import PreflightInputs
from rocmforge.knowledge.setuptools_pin import PKG_RESOURCES_PIN
from rocmforge.knowledge.steps import STEP, StepName, check_planned
from rocmforge.knowledge.triton import TRITON_MODES
from rocmforge.sources.upstream_fixes import as_rows as fix_rows
from rocmforge.sources.upstream_fixes import digest_inputs as fix_digest_inputs
from rocmforge.workdir import WorkDir

if TYPE_CHECKING:
    from rocmforge.knowledge.addon_table import AddOnTables
    from rocmforge.knowledge.companions import CompanionChoice
    from rocmforge.knowledge.extensions import ExtensionSource
    from rocmforge.plan.pytorch import PytorchSide
    from rocmforge.plan.rocm_facts import RocmFacts
    from rocmforge.plan.rocm_sdk import SdkPlan
    from rocmforge.probes.facts import Facts
    from rocmforge.settings import Settings
    from rocmforge.sources.upstream_fixes import FixDecision

# What the triton-targets step runs inside the build venv (rocmforge.probes.triton_codegen).
TRITON_CODEGEN_SCRIPT = "rocmforge/probes/triton_codegen.py"

BUILD_STYLES = ("setup.py", "build")

# Environment variables that belong to the build (digest inputs of hipify/configure/build).
# Steps that only manage the venv get the pip subset, so that e.g. a new MAX_JOBS does not look
# like a change to `pip install`.
_PIP_ENV_KEYS = ("PIP_DISABLE_PIP_VERSION_CHECK", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL",
                 "PIP_FIND_LINKS", "PIP_NO_INDEX", "HIP_PLATFORM")
# What a Triton source build compiles with: the kit's C/C++ compiler choice, the HIP compiler
# and ROCm/LLVM locations, the job count and the compiler-cache launchers.
_TRITON_ENV_KEYS = ("CC", "CXX", "MAX_JOBS", "HIP_PATH", "HIP_PLATFORM", "HIP_CLANG_PATH",
                    "HIP_DEVICE_LIB_PATH", "HIPCC_COMPILE_FLAGS_APPEND",
                    "HIPCC_LINK_FLAGS_APPEND", "CMAKE_C_COMPILER_LAUNCHER",
                    "CMAKE_CXX_COMPILER_LAUNCHER", "CMAKE_HIP_COMPILER_LAUNCHER")
_TRITON_ENV_PREFIXES = ("ROCM", "LLVM_")
_FULL_SHA = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True, kw_only=True)
class BuildOptions:
    """Choices of one `invoke build` that come from the version table, not from Settings.

    `build_style`: "setup.py" runs `python setup.py bdist_wheel` (releases up to 2.8); "build"
    runs `python -m build --wheel --no-isolation` (2.9 on, and the only way once scikit-build-core
    is the backend, 2.14 on): reference §1.5, from the version table.
    """

    build_style: str = "build"
    scikit_build_core: bool = False
    pytorch_version: str = ""
    python: str = "python3"
    # The ref is no release the version table knows (main, a commit, another branch): the
    # newest row's facts apply, and only the checkout step can tell whether the remote has it.
    tracks_main: bool = False
    configure_env: Mapping[str, str] = field(default_factory=lambda: {"CMAKE_ONLY": "1"})


@dataclass(frozen=True, kw_only=True)
class PreflightRow:
    """One doctor row as the plan needs it (status OK/WARN/FAIL, what, fix)."""

    status: str
    check: str
    detail: str = ""
    fix: str = ""


# What `git check-ref-format` refuses (git-check-ref-format(1)): a ref that fails these can
# never name a tag or branch, so it is bad input before any step runs.
_BAD_REF = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//|/\.|\.lock(/|$)")


def check_ref_name(ref: str) -> None:
    """UsageError (exit 2) for a `pytorch_ref` that git would refuse as a tag or branch name."""
    text = ref.strip()
    if not text or _BAD_REF.search(text) or text.startswith(("-", "/", ".")) \
            or text.endswith(("/", ".")) or text == "@":
        raise UsageError(
            f"{ref!r} (setting pytorch_ref) cannot be a git tag, branch or commit",
            "git refuses names that are empty, contain spaces, '..', '~', '^', ':', '?', '*', "
            "'[', a backslash or '@{', or begin with '-' or '.'",
            "pass a tag such as v2.9.1, a branch such as main, or a 40-hex commit with --ref",
        )


def check_max_jobs(env: Mapping[str, str]) -> None:
    """ConfigError (exit 2, before any step runs) for a MAX_JOBS that is not a whole number:
    PyTorch's setup.py hands it to ninja -j and Triton's build parses it as an int."""
    value = env.get("MAX_JOBS")
    if value is not None and not value.strip().isdigit():
        raise ConfigError(
            f"MAX_JOBS={value!r} is not a whole number of parallel compile jobs",
            "PyTorch's and Triton's builds pass it to ninja -j and would stop on it",
            "set max_jobs (invoke.yaml rocm.max_jobs) or MAX_JOBS in build_env to a "
            "number such as 8, or leave it out to let the kit choose from cores and memory",
        )


def plan_build(
    settings: Settings,
    facts: Facts,
    targets: Sequence[str],
    *,
    workdir: WorkDir,
    env: Mapping[str, str],
    compilers: Mapping[str, str],
    options: BuildOptions = BuildOptions(),
    preflight: Sequence[PreflightRow] = (),
    patch_inputs: Mapping[str, str] | None = None,
    sources: Mapping[str, object] | None = None,
    pytorch: PytorchSide | None = None,
    stale_companions: Sequence[str] = (),
    rocm_facts: RocmFacts | None = None,
    sdk: SdkPlan | None = None,
    extension_sources: Sequence[ExtensionSource] | None = None,
    upstream_fixes: Sequence[FixDecision] = (),
    addon_tables: AddOnTables | None = None,
    hip_version: str | None = None,
) -> Plan:
    """The steps of a build of `settings.pytorch_ref` for `targets`.

    `env` is the complete build environment delta (config/build.toml < computed < build_env);
    `compilers` maps "cc"/"cxx" (and optionally "hip") to the executables the kit chose;
    `pytorch` is the PyTorch being built as plan.pytorch read it (from the tree once the
    checkout exists; before, an estimate that the tree-facts step checks right after the
    checkout); `patch_inputs` maps each patch of the kit's series to its sha256; `sources` is
    what the work dir holds now (rocmforge.sources.describe_sources(...).as_dict()), shown by
    `invoke plan`. `upstream_fixes` is config/upstream_fixes.toml decided for this build
    (rocmforge.sources.upstream_fixes.decide): the entries it needs, or may need once the tree's
    version is read, enter the patches step's digest. `addon_tables` are
    config/companions.toml and extensions.toml as gathered (plan.gather.addon_tables_of);
    loaded here only when the settings name add-ons and a caller (a test) gives none;
    `hip_version` is the install's HIP version (plan.rocm_facts.hip_version_in; None: looked
    up here, likewise).
    """
    check_ref_name(str(settings.pytorch_ref))
    companions = planned_companions(settings, options, addon_tables, targets=tuple(targets),
                                    facts=facts, env=env, extension_sources=extension_sources,
                                    hip_version=hip_version)
    check_max_jobs(env)
    if options.build_style not in BUILD_STYLES:
        raise ValueError(f"build_style must be one of {BUILD_STYLES}, not {options.build_style!r}")
    triton_mode = str(getattr(settings, "triton_mode", "auto"))
    skip_preflight = bool(getattr(settings, "skip_preflight", False))
    system_site = bool(getattr(settings, "venv_system_site_packages", False))
    if triton_mode not in TRITON_MODES:
        raise ValueError(f"triton_mode must be one of {TRITON_MODES}, not {triton_mode!r}")
    target_list = tuple(targets)
    src = str(workdir.pytorch)
    venv_python = str(workdir.venv / "bin" / "python")
    build_env = dict(sorted(env.items()))
    pip_env = {k: v for k, v in build_env.items() if k in _PIP_ENV_KEYS}
    rocm = getattr(facts, "rocm", None)
    rocm_root = str(getattr(rocm, "root", "") or "")
    rocm_version = str(getattr(rocm, "version", "") or "")
    source_inputs = {"repo": str(settings.pytorch_repo), "ref": str(settings.pytorch_ref)}
    from rocmforge.sources.constraints import CONSTRAINTS_NAME, pin_effects

    pin_writes, pin_note = pin_effects(workdir.venv)  # the install steps pin the build venv

    steps: list[Step] = [
        Step(
            name=STEP.preflight,
            kind="python",
            argv=("preflight",),
            why="doctor's checks for this build; a FAIL stops here, before hours of compiling",
            # Only FAIL rows: a new WARN (less free disk) must not redo a finished build.
            effects=Effects(notes=tuple(f"stops on FAIL {r.check}: {r.detail}"
                                        for r in preflight if r.status == "FAIL")),
            given=PreflightInputs(
                skip=skip_preflight,
                fail_rows=tuple(r.check for r in preflight if r.status == "FAIL"),
            ),
        ),
        Step(
            name=STEP.compilers,
            kind="python",
            argv=("compilers",),
            why="record the C, C++ and HIP compilers the build uses (versions go to the manifest)",
            effects=Effects(commands=tuple((exe, "--version")
                                           for _, exe in sorted(compilers.items())),
                            notes=("also `cmake --version` and `ninja --version` when on PATH",)),
            inputs={k: str(v) for k, v in sorted(compilers.items())},
        ),
        Step(
            name=STEP.checkout,
            kind="python",
            argv=("checkout",),
            why=f"PyTorch at {settings.pytorch_ref} with submodules, never over local changes",
            effects=Effects(fetches=(f"{settings.pytorch_repo} {settings.pytorch_ref}",),
                            writes=(src, str(workdir.lock_file)),
                            notes=("git fetch (depth 1 where the server allows), checkout, "
                                   "submodule update --recursive; the kit's own earlier edits "
                                   "are set aside as named git stashes",)),
            inputs={**source_inputs, "dest": src,
                    "mirrors": tuple(f"{k}={v}" for k, v in sorted(settings.mirrors.items()))},
            # A branch or tag can name another commit tomorrow; a full commit cannot.
            volatile=not _FULL_SHA.fullmatch(str(settings.pytorch_ref).strip()),
            outputs=(f"{src}/.git", str(workdir.lock_file)),
        ),
        Step(
            name=STEP.tree_facts,
            kind="python",
            argv=("tree-facts",),
            why="read the checkout's own facts (version, build backend, CMake, compiler and "
            "Python floors); stop here when they differ from what this plan assumed",
            cwd=src,
            inputs={**source_inputs, **_assumed(options, pytorch)},
            effects=Effects(reads=tuple(f"{src}/{name}" for name in TREE_FILES),
                            notes=("also compares the tree with what the kit's patches and "
                                   "hipify left (state/kit-edits.json): a reset or an edit "
                                   "redoes them",)),
            # Re-checked on every run: a `git reset --hard` of the tree undoes the kit's edits
            # without changing any digest.
            volatile=True,
        ),
        Step(
            name=STEP.patches,
            kind="python",
            argv=("patches",),
            why="apply the kit's patch series for this PyTorch version and the upstream fixes "
            "this build needs (none selected = nothing to do)",
            effects=Effects(reads=tuple(sorted(k.split(":", 1)[1] for k in (patch_inputs or {}))),
                            writes=(src,),
                            # the digest's entries (fix_digest_inputs): the same before and
                            # after the checkout reads version.txt
                            fetches=tuple(f"{settings.pytorch_repo} {d.fix.sha} ({d.fix.id}, "
                                          f"for PyTorch {d.fix.pytorch})"
                                          for d in upstream_fixes
                                          if d.conditions_hold and d.fix.verified),
                            notes=("`git apply` of each patch whose Applies-To matches the "
                                   "tree's version.txt, with the diff of each upstream fix "
                                   "this build needs (config/upstream_fixes.toml), all or "
                                   "nothing",)),
            cwd=src,
            inputs={**source_inputs, **dict(sorted((patch_inputs or {}).items())),
                    **fix_digest_inputs(upstream_fixes)},
        ),
        Step(
            name=STEP.venv,
            argv=(options.python or "python3", "-m", "venv",
                  *(("--system-site-packages",) if system_site else ()),
                  str(workdir.venv)),
            why="the build virtualenv; the build runs --no-isolation, so its tools live here",
            outputs=(venv_python,),
            env=pip_env,
        ),
        Step(
            name=STEP.build_requirements,
            kind="python",
            args=InVenv(action="build-requirements", python=venv_python),
            why="pip install -r requirements.txt and requirements-build.txt (when present) into "
            "the build venv: --no-isolation needs the backend preinstalled",
            effects=Effects(
                reads=(f"{src}/requirements.txt", f"{src}/requirements-build.txt"),
                commands=((venv_python, "-m", "pip", "install", "-r", "requirements.txt", "-r",
                           "requirements-build.txt"),
                          *(((venv_python, "-m", "pip", "install", "build"),)
                            if options.build_style == "build" else ())),
                notes=("only the requirement files the checkout has; `build` only when "
                       "`import build` fails",
                       f"'{PKG_RESOURCES_PIN}' added when the checkout's setup.py (or a module "
                       "it loads) imports pkg_resources")),
            cwd=src,
            env=pip_env,
            inputs=source_inputs,
        ),
        Step(
            name=STEP.triton,
            kind="python",
            args=TritonArgs(mode=triton_mode, python=venv_python),
            why="Triton matching the pin in the checkout: a prebuilt wheel checked against the "
            "index's sha256, else a source build; exactly one triton provider in the venv",
            effects=_triton_effects(triton_mode, settings, workdir, venv_python, rocm_version),
            cwd=src,
            env={**pip_env, **{k: v for k, v in build_env.items()
                               if k.startswith(_TRITON_ENV_PREFIXES) or k in _TRITON_ENV_KEYS}},
            inputs={**source_inputs, "index": str(settings.triton_index),
                    "repo_override": str(settings.triton_repo), "rocm_version": rocm_version},
        ),
        *(() if triton_mode == "skip" else (Step(
            name=STEP.triton_targets,
            kind="python",
            args=InVenv(action="triton-targets", python=venv_python),
            why="compile one Triton kernel per target with the installed pinned Triton and "
            "check each code object's machine: a Triton that cannot target a GPU stops here, "
            "not at run time",
            inputs={**source_inputs, "targets": target_list,
                    "allow_triton_gap": str(bool(getattr(settings, "allow_triton_gap", False)))},
            effects=Effects(commands=((venv_python, str(TRITON_CODEGEN_SCRIPT), "<targets>"),),
                            notes=("a temporary Triton cache (never ~/.triton); a FAIL stops "
                                   "the build unless allow_triton_gap",)),
        ),)),
        Step(
            name=STEP.environment,
            kind="python",
            argv=("environment",),
            why="write the build environment to state/build-env.sh (sourceable, quoted exports)",
            effects=Effects(writes=(str(workdir.state / "build-env.sh"),)),
            env=build_env,
            inputs={"targets": target_list, "rocm": rocm_root, "rocm_version": rocm_version},
        ),
        Step(
            name=STEP.hipify,
            kind="python",
            args=HipifyArgs(python=venv_python, script="tools/amd_build/build_amd.py"),
            why="translate the CUDA sources to HIP in place; must run before any configure",
            cwd=src,
            env=build_env,
            inputs=source_inputs,
            effects=Effects(commands=((venv_python, "tools/amd_build/build_amd.py"),),
                            writes=(src, str(workdir.state / "kit-edits.json")),
                            notes=("records the tree state the kit's edits leave",)),
        ),
        Step(
            name=STEP.stale_check,
            kind="python",
            args=StaleCheckArgs(build_dir="build"),
            why="a build dir configured for other targets ignores the new PYTORCH_ROCM_ARCH; "
            "clean it before configure",
            effects=Effects(reads=(f"{src}/build/CMakeCache.txt",), writes=(f"{src}/build",),
                            notes=(f"removes {src}/build when its PYTORCH_ROCM_ARCH is not "
                                   f"{';'.join(targets)}",)),
            cwd=src,
            inputs={"targets": target_list, "rocm": rocm_root},
        ),
    ]
    build_argv: tuple[str, ...]
    if options.build_style == "setup.py":
        build_argv = (venv_python, "setup.py", "bdist_wheel")
    else:
        build_argv = (venv_python, "-m", "build", "--wheel", "--no-isolation")
    if not options.scikit_build_core:
        steps += [
            Step(
                name=STEP.configure,
                argv=(venv_python, "setup.py", "build"),
                why="run CMake only (CMAKE_ONLY=1), so a CPU fallback is caught in minutes",
                cwd=src,
                env={**build_env, **options.configure_env},
                inputs=source_inputs,
            ),
            _log_check_step(STEP.configure_check, STEP.configure, workdir, target_list),
        ]
    steps.append(
        Step(
            name=STEP.build,
            argv=build_argv,
            why=f"compile and package the torch wheel ({' '.join(build_argv[1:])})",
            cwd=src,
            env=build_env,
            inputs=source_inputs,
        )
    )
    if options.scikit_build_core:
        steps.append(_log_check_step(STEP.build_check, STEP.build, workdir, target_list))
    if sdk is not None:
        steps = _with_sdk_steps(steps, sdk, workdir, pip_env)
    steps += [
        Step(
            name=STEP.collect,
            kind="python",
            argv=("collect",),
            why="copy the torch and triton wheels to dist/ and write dist/manifest.json",
            effects=Effects(reads=(f"{src}/dist/torch-*.whl",),
                            writes=(str(workdir.dist), str(workdir.dist / "manifest.json")),
                            notes=("the Triton wheel the triton step installed is copied too; "
                                   "an earlier build's wheel the new manifest does not list is "
                                   "removed",)),
            cwd=src,
            inputs={"targets": target_list, "dist": str(workdir.dist)},
            outputs=(str(workdir.dist / "manifest.json"),),
        ),
        Step(
            name=STEP.install,
            kind="python",
            args=InVenv(action="install", python=venv_python),
            why="install the dist/ wheels into the build venv (verify uses its own venvs), "
            f"then pin it to them ({workdir.venv / 'pip.conf'} [install] constraint: "
            f"{workdir.venv / CONSTRAINTS_NAME})",
            effects=Effects(commands=((venv_python, "-m", "pip", "install", "--no-deps",
                                       "--force-reinstall", f"{workdir.dist}/<triton wheel>",
                                       f"{workdir.dist}/<torch wheel>"),),
                            writes=pin_writes,
                            notes=("the wheel names are the ones collect recorded", pin_note)),
            env=pip_env,
            inputs={"dist": str(workdir.dist)},
        ),
    ]
    if companions:  # after torch's install: see plan.companion_steps
        from rocmforge.plan.companion_steps import companion_steps

        steps += companion_steps(companions, workdir=workdir, build_env=build_env,
                                 pip_env=pip_env, mirrors=settings.mirrors)
    elif stale_companions:
        from rocmforge.plan.companion_steps import clear_step

        steps.append(clear_step(tuple(stale_companions), workdir))

    notes: list[str] = []
    # Before the SDK is installed, preflight's rows are not the SDK's: no forecast from them.
    sdk_to_come = sdk is not None and not sdk.installed_root
    failing = [] if sdk_to_come else [r.check for r in preflight if r.status == "FAIL"]
    compiled = any(r.check.startswith("compile ") and not r.detail.startswith("not probed")
                   for r in preflight)
    unchecked = ("" if compiled or not preflight else
                 "; the per-target compile checks are not run by plan (the build's preflight "
                 "and `invoke doctor` run them), so it may find more")
    if failing and not skip_preflight:
        notes.append(f"preflight would stop this build: {len(failing)} FAIL "
                     f"({', '.join(failing)}); the verdict line's doctor command shows each fix"
                     f"{unchecked}")
    elif preflight and unchecked and not skip_preflight and not sdk_to_come:
        notes.append("preflight found no FAIL here" + unchecked)
    if skip_preflight:
        notes.append("preflight is skipped (skip_preflight): doctor's FAIL rows will not stop "
                     "the build")
    if triton_mode == "skip":
        notes.append("Triton is skipped (triton_mode = skip): torch.compile will not work")
    elif getattr(settings, "allow_triton_gap", False):
        notes.append("allow_triton_gap: a target the pinned Triton cannot compile for does not "
                     "stop the build (recorded in the manifest)")
    if options.tracks_main and not re.fullmatch(r"main|nightly|[0-9a-f]{40}",
                                                 str(settings.pytorch_ref)):
        notes.append(f"{settings.pytorch_ref!r} is not a release the kit's version table knows: "
                     "it is built with the newest row's facts, and the checkout step stops "
                     "(exit 2) if the repository has no such tag or branch")
    elif options.tracks_main and not options.pytorch_version:
        notes.append(f"pytorch_version is not known before the checkout: "
                     f"{settings.pytorch_ref!r} names no release, so its version.txt decides; "
                     "until then the newest table row's facts are an estimate")
    if options.scikit_build_core:
        notes.append("scikit-build-core release: no configure-only step; the ROCm check runs on "
                     "the build log")
    if pytorch is not None:
        notes += pytorch.notes()
    if companions:
        from rocmforge.plan.companion_steps import companion_notes

        notes += companion_notes(companions)
        notes += [note for source in extension_sources or () for note in source.notes]
    resolved = {
        "pytorch_repo": settings.pytorch_repo,
        "pytorch_ref": settings.pytorch_ref,
        "pytorch_version": options.pytorch_version,
        "build_style": options.build_style,
        "scikit_build_core": options.scikit_build_core,
        "rocm_path": rocm_root,
        "rocm_version": rocm_version,
        "work_dir": str(workdir.root),
        "triton_mode": triton_mode,
        "triton_index": str(settings.triton_index),
        "skip_preflight": skip_preflight,
        "venv_system_site_packages": system_site,
        "compilers": dict(compilers),
        "origins": dict(getattr(settings, "origins", {}) or {}),
    }
    if upstream_fixes:
        resolved["upstream_fixes"] = fix_rows(upstream_fixes)
    if companions:
        resolved["companions"] = [c.as_dict() for c in companions]
    if sources:
        resolved["sources"] = dict(sources)
    if sdk is not None:
        resolved["rocm_sdk"] = sdk.as_dict()
        if sdk.route_note:
            notes.append(sdk.route_note)
        if not sdk.installed_root:
            import shlex

            pip_line = shlex.join([str(workdir.venv / "bin" / "python"), "-m", "pip",
                                   *sdk.pip_args])
            notes.append(f"the build venv gets the pip ROCm SDK from the {sdk.route} index "
                         f"first: `{pip_line}`; the build stops once after that step, and the "
                         "same command again plans from the SDK's own facts (preflight judges "
                         "it)")
    if pytorch is not None:
        resolved["pytorch_facts"] = pytorch.facts.as_dict()
    if rocm_facts is not None:
        resolved["rocm_facts"] = rocm_facts.as_dict()
        notes += rocm_facts.notes
    # Every step named as knowledge.steps lists it (a typo here is a bug, not a user's).
    check_planned((s.name, s.kind, s.action) for s in steps)
    return Plan(settings=resolved, targets=tuple(targets), steps=tuple(steps), notes=tuple(notes))


def _with_sdk_steps(steps: list[Step], sdk: SdkPlan, workdir: WorkDir,
                    pip_env: Mapping[str, str]) -> list[Step]:
    """An SDK build: the venv, the checkout and the SDK in the venv come first (preflight judges
    the SDK), and the torch tree gets the SDK's _rocm_init.py after the kit's patches, before
    hipify records the tree state."""
    import hashlib

    from rocmforge.plan.rocm_sdk import INIT_MODULE, init_module_text

    venv_python = str(workdir.venv / "bin" / "python")
    src = str(workdir.pytorch)
    install = Step(
        name=STEP.rocm_sdk,
        kind="python",
        args=InVenv(action="rocm-sdk", python=venv_python),
        why=f"install the pip ROCm SDK ({sdk.requirement}) into the build venv and check it "
        "names the build's targets",
        effects=Effects(commands=((venv_python, "-m", "pip", *sdk.pip_args),
                                  (str(workdir.venv / "bin" / "rocm-sdk"), "init")),
                        fetches=(sdk.index,),
                        notes=("then `rocm-sdk path --root`, `version` and `targets`, and "
                               "`pip show` of the targets' device packages: each must be there "
                               "at the version (pip only warns about a missing extra); "
                               "stops once when the plan was made without the SDK",)),
        env=dict(pip_env),
        inputs={"index": sdk.index, "requirement": sdk.requirement,
                "device_packages": ",".join(sdk.device_packages)},
    )
    text = init_module_text(sdk)
    init = Step(
        name=STEP.rocm_init,
        kind="python",
        argv=("rocm-init",),
        why="write torch/_rocm_init.py: the wheel loads the SDK's libraries at import",
        effects=Effects(writes=(f"{src}/{INIT_MODULE}",)),
        cwd=src,
        inputs={"sha256": hashlib.sha256(text.encode()).hexdigest()},
    )
    # The checkout comes before the SDK's first-run stop too, so that the next run's plan has
    # both the SDK's facts and the tree's (the wheel's version is the tree's, +rocm<version>).
    first_steps = (STEP.venv, STEP.checkout, STEP.tree_facts)
    by_name = {step.name: step for step in steps}
    ordered = [by_name[name] for name in first_steps if name in by_name] + [install]
    for step in steps:
        if step.name in first_steps:
            continue
        ordered.append(step)
        if step.name == STEP.patches:
            ordered.append(init)
    return ordered


def planned_companions(settings: Settings, options: BuildOptions,
                       tables: AddOnTables | None, *,
                       targets: Sequence[str] = (), facts: Facts | None = None,
                       env: Mapping[str, str] | None = None,
                       extension_sources: Sequence[ExtensionSource] | None = None,
                       hip_version: str | None = None,
                       ) -> tuple[CompanionChoice, ...]:
    """The companions of this build for the torch version the plan knows ("" for a branch:
    main of each companion, checked once checked out), then the extensions `--with` names (as
    sources.extension_sources resolved them, in their build order; parsed without any lookup
    when not given); a bad name, a ref that cannot pair with this torch or a target no
    backend of an extension supports is a UsageError here, before any step. `tables`: the
    add-on tables as gathered (None: read here, for callers without gathered facts)."""
    if not tuple(getattr(settings, "companions", ()) or ()):
        return ()
    from rocmforge.knowledge.extensions import parse_source, split_with
    from rocmforge.plan.companion_steps import companion_choices
    from rocmforge.plan.extensions import extension_choices

    if tables is None:
        from rocmforge.knowledge.addon_table import load_addon_tables

        tables = load_addon_tables()
    table_ext = tables.extensions
    _, words = split_with(settings.companions, table_ext)
    companions = companion_choices(settings, tables, options.pytorch_version)
    if not words:
        return companions
    sources = extension_sources if extension_sources is not None else tuple(
        parse_source(w, table_ext, settings.companion_repos, options.pytorch_version)
        for w in words)
    system = getattr(facts, "system", None)
    given = str((env or {}).get("MAX_JOBS", "") or "")
    jobs = int(given) if given.isdigit() and int(given) > 0 else int(
        getattr(system, "cores", 1) or 1)  # a bad MAX_JOBS is check_max_jobs' to refuse
    from rocmforge.plan.extensions import library_version_short

    rocm = getattr(facts, "rocm", None)
    if hip_version is None:
        from rocmforge.plan.rocm_facts import hip_version_of

        hip_version = hip_version_of(rocm)
    return companions + extension_choices(
        sources, table_ext, targets, jobs=jobs,
        cores=int(getattr(system, "cores", 1) or 1),
        mem_total_gib=float(getattr(system, "mem_total_gib", 0.0) or 0.0),
        rocm_short=library_version_short(str(getattr(rocm, "version", "") or ""), hip_version))


def _triton_effects(mode: str, settings: Settings, workdir: WorkDir, python: str,
                    rocm_version: str) -> Effects:
    """What the triton step does in `mode`, before the pin is known (it is read from the
    checkout when the step runs)."""
    from rocmforge.knowledge.triton import index_url

    if mode == "skip":
        return Effects(notes=("Triton is skipped: torch.compile will not work",))
    fetches: list[str] = []
    notes = [f"the pin is read from {workdir.pytorch}/.ci/docker/ci_commit_pins/ when the step "
             "runs"]
    if mode in ("auto", "wheel"):
        fetches.append(index_url(str(settings.triton_index), rocm_version))
        notes.append("the wheel for the pinned version and commit, its sha256 checked against "
                     "the index")
    if mode in ("auto", "source"):
        fetches.append(str(settings.triton_repo) or "the repository the pin names")
        notes.append("source build at the pinned commit" + (
            " when the index has no matching wheel" if mode == "auto" else ""))
    return Effects(
        fetches=tuple(fetches),
        writes=(str(workdir.downloads), str(workdir.triton)),
        commands=((python, "-m", "pip", "install", "--no-deps", "--force-reinstall",
                   "<the triton wheel>"),),
        notes=(*notes, "other `triton` providers in the venv are uninstalled first"),
    )


def _log_check_step(name: StepName, log: StepName, workdir: WorkDir,
                    targets: tuple[str, ...]) -> Step:
    """The check that a step's log (configure's, or build's for scikit-build-core releases)
    has the CMake summary `USE_ROCM : ON` for the requested targets."""
    return Step(
        name=name,
        kind="python",
        args=LogCheckArgs(log=log),
        why=f"the CMake summary in the {log} log must say USE_ROCM : ON and name the GPU "
        "targets",
        effects=Effects(reads=(str(workdir.logs / f"{log}.log"),)),
        inputs={"targets": targets},
    )


# The files of a PyTorch checkout that probes.tree reads.
TREE_FILES = ("version.txt", "CMakeLists.txt", "pyproject.toml", "setup.py",
              "requirements-build.txt", ".ci/docker/ci_commit_pins/", "cmake/public/LoadHIP.cmake")


def _assumed(options: BuildOptions, pytorch: PytorchSide | None) -> dict[str, str]:
    """The PyTorch facts this plan was made with: the tree-facts step compares the checkout's
    against them. Where they came from (table or tree) is not an input: a build planned from
    the table that passed this step had the tree's values, and its rerun is a no-op."""
    assumed = {"assumed:build_style": options.build_style,
               "assumed:scikit_build_core": str(options.scikit_build_core)}
    if pytorch is not None:
        release = pytorch.release
        assumed.update({"assumed:cmake_min": release.cmake_min,
                        "assumed:gcc_min": release.gcc_min,
                        "assumed:clang_min": str(release.clang_min),
                        "assumed:python": release.python})
    return assumed
