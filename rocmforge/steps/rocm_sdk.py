"""Pipeline stages of a build against TheRock's pip ROCm SDK (the rocm_sdk setting).

Owns: the rocm-sdk action (pip installs the pinned SDK into the build venv with the plan's pip
line, `rocm-sdk init` expands its development files, and what `rocm-sdk path --root`, `version`
and `targets` say is checked against the plan: the version pinned, every requested target in the
release; then `pip show` must find every device package of the targets,
since pip only warns about a missing extra) and the
rocm-init action (writes the plan's torch/_rocm_init.py into the checkout). Must not: decide the
requirement, the index or the module text (rocmforge.plan.rocm_sdk does).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rocmforge.errors import StepFailed
from rocmforge.execute.action_args import InVenv
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


def shown_distributions(pip_show: str) -> dict[str, str]:
    """`pip show A B ...` as {canonical name: version}: its Name/Version lines, one block per
    package found (a package not installed has no block; pip warns on stderr)."""
    from packaging.utils import canonicalize_name

    found: dict[str, str] = {}
    name = ""
    for line in pip_show.splitlines():
        key, _, value = line.partition(":")
        if key == "Name":
            name = canonicalize_name(value.strip())
        elif key == "Version" and name:
            found[name] = value.strip()
    return found


def missing_devices(sdk: SdkPlan, installed: dict[str, str]) -> list[str]:
    """The plan's device packages pip did not install at the pinned version."""
    from packaging.utils import canonicalize_name

    from rocmforge.plan.rocm_sdk import same_release

    return [package for package in sdk.device_packages
            if not same_release(installed.get(canonicalize_name(package), ""), sdk.version)]


def install_sdk(build: PreparedBuild, ctx: ActionContext) -> Details:
    from rocmforge.plan.rocm_sdk import same_release
    from rocmforge.probes.rocm import SDK_CLI, parse_sdk_targets, sdk_version
    from rocmforge.sources.constraints import release_venv

    sdk = _sdk(build)
    python = ctx.args(InVenv).python
    release_venv(ctx.workdir.venv)
    ctx.run([python, "-m", "pip", *sdk.pip_args])
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
            "check the index serves that release (its page lists the rocm files), or pass "
            "--rocm-sdk-version with one it has",
        )
    wanted = [t.split(":", 1)[0] for t in build.inputs.target_names]
    missing = [t for t in wanted if t not in targets]
    if missing:
        raise StepFailed(
            f"The pip ROCm SDK {version} from {sdk.index} was not built for "
            f"{', '.join(missing)} (`{SDK_CLI} targets`: {';'.join(targets) or 'none'})",
            "a torch built for a target its ROCm libraries lack fails at the first GEMM",
            "drop those targets from --arch, or use a release built for them"
            + (" (the multi-arch index: drop the --rocm-sdk URL with {family})"
               if sdk.family else ""),
        )
    # `rocm-sdk targets` names the targets the release was built for, not the device packages
    # installed (config/rocm_sdk.toml), and pip only warns about an extra the `rocm` package
    # does not declare: `pip show` says which device packages are really there.
    installed = shown_distributions(ctx.capture(
        [python, "-m", "pip", "show", *sdk.device_packages], check=False)[1]) \
        if sdk.device_packages else {}
    absent = missing_devices(sdk, installed)
    if absent:
        pins = " ".join(f"{package}=={sdk.version}" for package in absent)
        raise StepFailed(
            f"pip installed {sdk.requirement} from {sdk.index} without "
            f"{', '.join(absent)}: the build venv has no device code for "
            f"{', '.join(p.rsplit('-', 1)[-1] for p in absent)}",
            "the index's rocm package does not declare that device extra, and pip only warned "
            "(as in ROCm/TheRock#5347); a torch built now would have no kernels of the ROCm "
            "libraries for those targets",
            f"install them by name into the build venv (`{python} -m pip install --index-url "
            f"{sdk.index} {pins}`) and run the same command again, or report the index's rocm "
            "package to ROCm/TheRock",
        )
    details: dict[str, object] = {"root": root[-1] if root else "", "version": version,
                                  "targets": list(targets), "index": sdk.index,
                                  "route": sdk.route, "family": sdk.family,
                                  "device_packages": {p: installed.get(p, "")
                                                      for p in sdk.device_packages}}
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
