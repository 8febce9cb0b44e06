"""The build pipeline's in-process steps, one module per stage, and the table the runner gets.

Owns: `build_actions(prepared)`, the ActionTable behind the plan's "python" steps, each action
bound to this invocation's typed PreparedBuild (so no action reads an untyped settings bag or
re-parses a flag). The stages: prepare (preflight, compilers, environment), checkout (checkout,
patches), venv (build requirements, install), triton, configure (stale check, log check),
outputs (collect), companions (after torch's install). Must not: decide which steps run or in
which order (plan.build_plan does) or run anything but through the ActionContext, apart from
the library calls of rocmforge.sources (git and HTTP), which report what they did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rocmforge.execute.actions import Action, ActionContext, ActionTable, Details
from rocmforge.knowledge.steps import ActionName
from rocmforge.steps import (
    checkout,
    companions,
    configure,
    extensions,
    outputs,
    prepare,
    rocm_sdk,
    tree,
    triton,
    venv,
)

if TYPE_CHECKING:
    from rocmforge.plan.prepare import PreparedBuild

BoundAction = Callable[["PreparedBuild", ActionContext], "Details | None"]

# Action name (a "python" step's argv[0]) -> (action, one line for `--dry` and `invoke plan`).
# The names are knowledge.steps.ACTIONS, exactly (tests/integration/test_step_registry.py).
STAGES: dict[ActionName, tuple[BoundAction, str]] = {
    "preflight": (prepare.preflight, "doctor's rows for this build; any FAIL stops the build"),
    "compilers": (prepare.compilers, "print and record `<compiler> --version` of CC, CXX, HIP"),
    "environment": (prepare.environment, "write state/build-env.sh with the build's exports"),
    "checkout": (checkout.checkout, "git: PyTorch at the ref with submodules (no clobbering); "
                 "writes rocmforge.lock"),
    "tree-facts": (tree.tree_facts, "read the checkout's version, build backend and floors; stop "
                   "when they change what the plan assumed"),
    "patches": (checkout.patches, "apply the kit's patch series for this PyTorch version "
                "(rocmforge.sources.patch_sources)"),
    "hipify": (checkout.hipify, "run PyTorch's hipify in the tree, then record the tree state "
               "the kit's edits leave"),
    "rocm-sdk": (rocm_sdk.install_sdk, "pip install the pinned pip ROCm SDK into the build venv; "
                 "check its version and targets"),
    "rocm-init": (rocm_sdk.write_init, "write torch/_rocm_init.py (the SDK's libraries load at "
                  "import)"),
    "build-requirements": (venv.build_requirements, "pip install -r requirements.txt -r "
                           "requirements-build.txt (those present)"),
    "triton": (triton.triton, "Triton for the pin: prebuilt wheel (sha256-checked) or source "
               "build; exactly one triton provider in the venv"),
    "triton-targets": (triton.triton_targets, "compile one Triton kernel per target with the "
                       "venv's Triton; check each code object's machine"),
    "stale-check": (configure.stale_check,
                    "PYTORCH_ROCM_ARCH in build/CMakeCache.txt vs. the targets"),
    "log-check": (configure.log_check, "the configure summary must say USE_ROCM : ON for the "
                  "targets (triage.cmake_summary.configure_reports_rocm)"),
    "collect": (lambda build, ctx: outputs.collect(ctx, targets=build.inputs.target_names,
                                                   plan_settings=build.plan.settings,
                                                   features=manifest_features(build)),
                "copy the wheels to dist/ (atomically) and write dist/manifest.json"),
    "install": (venv.install, "pip install the dist/ wheels into the build venv"),
    # Companions (torchvision, torchaudio), after torch's install: steps.companions.
    "companion-checkout": (companions.checkout, "git: the companion at its ref (no clobbering)"),
    "companion-pairing": (companions.pairing, "the companion's version.txt against the torch "
                          "the build venv imports (config/companions.toml)"),
    "extension-copy": (extensions.copy, "a folder's files into the work dir (its digest "
                       "checked)"),
    "extension-pairing": (extensions.pairing, "an extension's own torch pin and version "
                          "against the torch the build venv imports"),
    "companion-patches": (companions.patches, "apply patches/<companion>/ selected by its "
                          "version"),
    "companions-collect": (companions.collect, "copy the companion wheels to dist/ and add them "
                           "to dist/manifest.json"),
    "companions-clear": (companions.clear, "a build without companions: take an earlier "
                         "build's companion wheels out of dist/, the manifest and the lock"),
    "companions-install": (companions.install, "pip install the companion wheels into the "
                           "build venv"),
}


def build_actions(prepared: PreparedBuild) -> ActionTable:
    """The action table for one invocation: every stage bound to `prepared`."""

    def bind(fn: BoundAction) -> Action:
        def action(ctx: ActionContext) -> Details | None:
            return fn(prepared, ctx)

        return action

    return {name: (bind(fn), summary) for name, (fn, summary) in STAGES.items()}


def action_summaries() -> dict[str, str]:
    """One line per action, for printing a plan without binding it."""
    return {name: summary for name, (_, summary) in STAGES.items()}


def manifest_features(build: PreparedBuild) -> dict[str, dict[str, object]] | None:
    """The manifest's "features": each optional part, whether it was built and why."""
    plan = build.inputs.features
    if plan is None:
        return None
    return {f.name: {"built": f.on, "why": f.why} for f in plan.features}
