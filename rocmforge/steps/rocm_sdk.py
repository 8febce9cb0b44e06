"""Pipeline stages of a build against TheRock's pip ROCm SDK (the rocm_sdk setting).

Owns: the rocm-sdk action (pip installs the pinned SDK into the build venv, `rocm-sdk init`
expands its development files, and what `rocm-sdk path --root`, `version` and `targets` say is
checked against the plan: the version pinned, every requested target present) and the
rocm-init action (writes the plan's torch/_rocm_init.py into the checkout). Must not: decide the
requirement, the index or the module text (rocmforge.plan.rocm_sdk does).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rocmforge.errors import StepFailed
from rocmforge.execute.actions import ActionContext, Details

if TYPE_CHECKING:
    from rocmforge.plan.prepare import PreparedBuild
    from rocmforge.plan.rocm_sdk import SdkPlan


def _sdk(build: PreparedBuild) -> SdkPlan:
    sdk = build.inputs.sdk
    if sdk is None:  # the plan adds these steps only with an SdkPlan
        raise StepFailed("This build has no pip ROCm SDK", "the rocm_sdk setting is not set",
                         "run the build again")
    return sdk


def install_sdk(build: PreparedBuild, ctx: ActionContext) -> Details:
    from rocmforge.plan.rocm_sdk import same_release
    from rocmforge.probes.rocm import SDK_CLI, parse_sdk_targets, sdk_version
    from rocmforge.sources.constraints import release_venv

    sdk = _sdk(build)
    python = ctx.step.argv[1]
    release_venv(ctx.workdir.venv)
    ctx.run([python, "-m", "pip", "install", "--index-url", sdk.index, sdk.requirement])
    cli = str(Path(python).parent / SDK_CLI)
    ctx.run([cli, "init"])
    root = ctx.capture([cli, "path", "--root"])[1].strip().splitlines()
    version = sdk_version(ctx.capture([cli, "version"])[1])
    targets = parse_sdk_targets(ctx.capture([cli, "targets"])[1])
    if not same_release(version, sdk.version):
        raise StepFailed(
            f"The pip ROCm SDK in the build venv is {version or 'of no version'}, not the "
            f"{sdk.version} this build pins",
            f"pip installed {sdk.requirement} from {sdk.index}, and `{SDK_CLI} version` says "
            "otherwise",
            "check the index serves that release (its page lists the rocm wheels), or pass "
            "--rocm-sdk-version with one it has",
        )
    wanted = [t.split(":", 1)[0] for t in build.inputs.target_names]
    missing = [t for t in wanted if t not in targets]
    if missing:
        raise StepFailed(
            f"The pip ROCm SDK {version} from {sdk.index} has no libraries for "
            f"{', '.join(missing)} (`{SDK_CLI} targets`: {';'.join(targets) or 'none'})",
            "a torch built for a target its ROCm libraries lack fails at the first GEMM",
            "use the index of the targets' family (rocm_sdk with {family}), or drop those "
            "targets from --arch",
        )
    details: dict[str, object] = {"root": root[-1] if root else "", "version": version,
                                  "targets": list(targets), "index": sdk.index,
                                  "family": sdk.family}
    if not sdk.installed_root:
        raise StepFailed(
            f"The pip ROCm SDK {version} is now in the build venv "
            f"({details['root']})",
            "this plan was made before the SDK existed, so its ROCm facts, environment and "
            "preflight are not the SDK's",
            "run the same command again: the plan is then made from the SDK's own facts "
            "(finished steps are kept)",
        )
    return details


def write_init(build: PreparedBuild, ctx: ActionContext) -> Details:
    from rocmforge.fsutil import write_atomic
    from rocmforge.plan.rocm_sdk import INIT_MODULE, init_module_text

    sdk = _sdk(build)
    target = ctx.workdir.pytorch / INIT_MODULE
    if not target.parent.is_dir():
        raise StepFailed(f"The checkout has no {target.parent}",
                         "torch/_rocm_init.py goes into the torch package of the checkout",
                         "run the build again (the checkout step restores the tree)")
    write_atomic(target, init_module_text(sdk))
    ctx.say(f"wrote {target} (preloads {len(sdk.preload)} SDK libraries, SDK {sdk.version})")
    return {"path": str(target), "sdk_version": sdk.version}
