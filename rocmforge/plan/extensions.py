"""The extension part of the build plan: which extensions `--with` names, and how each is built.

Owns: `extension_choices` (pure: each resolved ExtensionSource as an ExtensionChoice with its
repository, ref, the backend that covers the targets, and the variables of its build, MAX_JOBS
and the variable its project reads lowered to what its compile jobs need), `build_order`
(extensions the last build made from the same source first, in its order, then the new or
changed ones: a step with no stamp redoes every later step, so adding or bumping one reruns
only its own steps) and `extension_notes` (what plan and preflight say per extension). The
steps themselves are the companions' (plan.companion_steps), with the extension's pairing and
its pre-build commands. Must not: run git or pip (sources.extension_sources resolves each
word before the plan; the pairing step reads the checkout).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType

from rocmforge.knowledge.companions import version_of_ref
from rocmforge.knowledge.extensions import (
    FORM_FOLDER,
    FORM_RECIPE,
    TARGETS_FIELD,
    ExtensionChoice,
    ExtensionSource,
    ExtensionTable,
    backend_for,
    recipe_for_source,
)
from rocmforge.plan.environment import max_jobs


def extension_choices(sources: Sequence[ExtensionSource], table: ExtensionTable,
                      targets: Sequence[str], *, jobs: int, cores: int,
                      mem_total_gib: float) -> tuple[ExtensionChoice, ...]:
    """What to build for each resolved extension (pure): the repository and ref, the backend
    that covers the targets (a UsageError when none does, before any step), and the variables
    of its build: the targets in its own variable, its ROCm switches, the backend's, and the
    job count lowered to what its compile jobs need (`jobs` is the torch build's MAX_JOBS), in
    every variable its project reads for it."""
    chosen: list[ExtensionChoice] = []
    for source in sources:
        recipe = recipe_for_source(source, table)
        backend = backend_for(recipe, targets)
        # A recipe's own variable takes processor names (flash-attention's CK check refuses
        # gfx942:sramecc+); a generic build gets PYTORCH_ROCM_ARCH as torch's own build has it.
        names = targets if recipe.generic else list(dict.fromkeys(
            t.split(":", 1)[0] for t in targets))
        joined = recipe.targets_sep.join(names)
        env = {recipe.targets_var: joined, **recipe.env, **(backend.env if backend else {})}
        if recipe.mem_per_job_gib:
            fit = max_jobs(cores, mem_total_gib, recipe.mem_per_job_gib)
            if fit < jobs:
                for variable in recipe.jobs_vars:
                    env[variable] = str(fit)
        chosen.append(ExtensionChoice(
            name=source.name, package=recipe.package, repo=source.repo, ref=source.ref,
            version=version_of_ref(source.ref) if source.form != FORM_FOLDER else "",
            origin="recipe" if source.form == FORM_RECIPE and not source.given_ref else "ref",
            build_env=MappingProxyType(dict(sorted(env.items()))),
            backend=backend.name if backend else "", backend_note=backend.note if backend else "",
            module=recipe.module,
            pre_build=tuple(tuple(a.replace(TARGETS_FIELD, joined) for a in argv)
                            for argv in recipe.pre_build),
            torch_pin_file=recipe.torch_pin_file, torch_pin_pattern=recipe.torch_pin_pattern,
            version_file=recipe.version_file, version_pattern=recipe.version_pattern,
            verify=recipe.verify, form=source.form, commit=source.commit,
            digest=source.digest))
    return tuple(chosen)


def build_order(sources: Sequence[ExtensionSource],
                earlier: Sequence[tuple[str, str, str]]) -> tuple[ExtensionSource, ...]:
    """The extensions in the order their steps run: first those the last build made from the
    same repository at the same commit (or folder digest), in that build's order (`earlier`:
    its (name, repo, commit or sha256:digest) records), then every other one in the order
    given. A source whose commit is not known yet counts as changed."""
    same = {name: index for index, (name, repo, version) in enumerate(earlier)
            if any(s.name == name and s.repo == repo and s.version and s.version == version
                   for s in sources)}
    kept = sorted((s for s in sources if s.name in same), key=lambda s: same[s.name])
    return (*kept, *(s for s in sources if s.name not in same))


def extension_notes(choices: Sequence[ExtensionChoice]) -> list[str]:
    """One note per extension: source, ref, backend, the variables that carry targets and
    backend."""
    notes = []
    for choice in choices:
        backend = f"backend {choice.backend} ({choice.backend_note}); " if choice.backend else ""
        variables = " ".join(f"{k}={v}" for k, v in choice.build_env.items())
        pin = (f"; the torch it needs is read from {choice.torch_pin_file}"
               if choice.torch_pin_file else "")
        if choice.form == FORM_FOLDER:
            where = f"the folder {choice.repo} (content sha256:{choice.digest[:12]})"
        else:
            commit = f" = {choice.commit[:12]}" if choice.commit and choice.commit != choice.ref \
                else ""
            where = f"{choice.ref}{commit} from {choice.repo}"
        notes.append(f"extension {choice.name}: {where}; {backend}built with {variables}{pin}")
    return notes
