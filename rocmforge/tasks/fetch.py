"""Invoke task: fetch, the artifacts PyTorch's configure would download, ahead of the build.

Thin adapter: settings and flags to `rocmforge.sources.aotriton.fetch_from_tree`, then one line
per file and the prefix the build will use (AOTRITON_INSTALLED_PREFIX; `invoke plan` shows it).
Imports only invoke and _common at module level. Must not: download or unpack itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from invoke import Context

from rocmforge.settings import settings_of_flags
from rocmforge.tasks._common import is_dry, reported, settings_for
from rocmforge.tasks._flags import flagged

if TYPE_CHECKING:
    from rocmforge.settings import Settings
    from rocmforge.workdir import WorkDir


@flagged(("arch", "work_dir"))
@reported
def fetch(c: Context, rocm: str = "", hip: str = "", base_url: str = "",
          **flags: object) -> None:
    """Download what configure would fetch (AOTriton).

    Download and unpack what configure would download (AOTriton) so the build runs offline.
    --rocm/--hip: the release to fetch for instead of the install's (HIP's is what newer
    aotriton.cmake files look the runtime up by; without --hip, --rocm's table row says it)."""
    import os
    import platform

    from rocmforge.errors import UsageError
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.knowledge.targets import parse_targets, requested_targets
    from rocmforge.plan.pytorch import checkout_matches
    from rocmforge.probes.facts import gather_facts
    from rocmforge.render import say
    from rocmforge.sources.aotriton import fetch_from_tree
    from rocmforge.workdir import workdir_for

    settings = settings_for(c, **settings_of_flags(flags))
    workdir = workdir_for(settings.work_dir)
    if not checkout_matches(settings, workdir):
        built = _checkout_in(workdir)
        if built is None:
            raise UsageError(
                f"No checkout of {settings.pytorch_repo} at {settings.pytorch_ref} in "
                f"{workdir.src}",
                "what configure downloads (AOTriton's version, files and sha256) is read from "
                "the tree", "run `invoke checkout` first")
        if _named(settings, "pytorch_ref") or _named(settings, "pytorch_repo"):
            raise UsageError(
                f"The checkout in {workdir.src} is of {built[0]} at {built[1]}, not of "
                f"{settings.pytorch_repo} at {settings.pytorch_ref} as the settings name",
                "fetch reads what to download from the checkout the build will use",
                "run `invoke checkout` for that ref first, or drop the ref/repo setting to fetch "
                "for the checkout that is there")
        # A build with --repo/--ref left its checkout here: fetch for that tree (fetch has no
        # such flags, and the build after it reads the same tree).
    from rocmforge.plan.rocm_facts import hip_version_of
    from rocmforge.probes.rocm import RocmInstall

    facts = gather_facts(settings)
    version = rocm or (facts.rocm.version if facts.rocm is not None else "")
    hip_version = hip or hip_version_of(
        RocmInstall(root=Path(), version=rocm, source="--rocm") if rocm else facts.rocm)
    if not version:
        raise UsageError("No ROCm release to fetch AOTriton for",
                         "no ROCm install was found and --rocm was not given",
                         "pass --rocm 7.0 (the ROCm the build will use)")
    targets = requested_targets(settings.arch, facts.gpus.targets, load_arch_table()) or \
        parse_targets("", load_arch_table())
    names = [str(t) for t in targets]
    if is_dry(c):
        hip_said = f" (HIP {hip_version})" if hip_version else ""
        say(f"dry run: would fetch AOTriton for ROCm {version}{hip_said} and {', '.join(names)}")
        return
    from rocmforge.execute.leftovers import remove_leftovers
    from rocmforge.execute.lock import work_lock

    # The work dir's lock, as a build takes it: a build started meanwhile would sweep this
    # fetch's .part file as a leftover, and `clean --all` would delete the folder under it.
    with work_lock(workdir, task="fetch", say=say):
        for path in remove_leftovers(workdir):
            say(f"removed {path}: left by a run that was killed")
        fetched, prefix = fetch_from_tree(
            workdir.pytorch, version, names, workdir.aotriton, workdir.downloads,
            base_url=base_url or os.environ.get("PYTORCH_AOTRITON_BASE_URL", ""),
            machine=platform.machine() or "x86_64", hip_version=hip_version)
    for artifact in fetched.artifacts:
        say(f"fetched {artifact.filename} (sha256 {artifact.sha256[:12]}...)")
    looked_up = fetched.key.split(" ", 1)[-1]
    if fetched.rocm != "rocm" + ".".join(looked_up.split(".")[:2]):
        say(f"{fetched.key} is not in AOTriton {fetched.release.version}'s list "
            f"({', '.join(fetched.release.rocm)}); like aotriton.cmake, the kit took the nearest "
            f"end, {fetched.rocm}")
    elif looked_up != version:
        say(f"the runtime was chosen by {fetched.key}, not ROCm {version}: "
            f"{fetched.release.source} looks it up by HIP's major.minor")
    say(f"AOTriton {fetched.release.version} for {fetched.rocm} unpacked in {prefix}; the build "
        "sets AOTRITON_INSTALLED_PREFIX to it")


def _checkout_in(workdir: WorkDir) -> tuple[str, str] | None:
    """(repository, ref) of the checkout in the work dir, from the lock file its checkout
    wrote; None when there is none or it cannot be read."""
    from rocmforge.errors import RocmforgeError
    from rocmforge.sources.lockfile import read_lock

    if not (workdir.pytorch / "version.txt").exists() or not workdir.lock_file.is_file():
        return None
    try:
        lock = read_lock(workdir.lock_file)
    except RocmforgeError:
        return None
    return lock.pytorch_repo, lock.pytorch_ref


def _named(settings: Settings, name: str) -> bool:
    """Whether a layer above config/defaults.toml (invoke.yaml, ROCMFORGE_*) set `name`."""
    from rocmforge.settings import BUILT_IN, DEFAULTS_SOURCE

    return settings.origins.get(name) not in (DEFAULTS_SOURCE, BUILT_IN)


TASKS: tuple = (fetch,)
COLLECTIONS: tuple = ()
