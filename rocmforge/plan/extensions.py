"""The extension part of the build plan: which extensions `--with` names, and how each is built.

Owns: `extension_choices` (pure: each extension word as an ExtensionChoice with its repository,
ref, the backend that covers the targets, and the variables of its build, MAX_JOBS lowered to
what its compile jobs need) and `extension_notes` (what plan and preflight say per extension).
The steps themselves are the companions' (plan.companion_steps), with the extension's pairing
and its pre-build commands. Must not: run git or pip (the build task peeks a ref's pin before
the first step; the pairing step reads the checkout).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from rocmforge.errors import UsageError
from rocmforge.knowledge.companions import version_of_ref
from rocmforge.knowledge.extensions import (
    TARGETS_FIELD,
    ExtensionChoice,
    ExtensionTable,
    backend_for,
    parse_extension,
)
from rocmforge.plan.environment import max_jobs


def extension_choices(words: Sequence[str], table: ExtensionTable, targets: Sequence[str], *,
                      repos: Mapping[str, str], jobs: int, cores: int,
                      mem_total_gib: float) -> tuple[ExtensionChoice, ...]:
    """What to build for each extension word (pure): the repository and ref, the backend that
    covers the targets (a UsageError when none does, before any step), and the variables of its
    build: the targets in its own variable, its ROCm switches, the backend's, and MAX_JOBS
    lowered to what its compile jobs need (`jobs` is the torch build's MAX_JOBS)."""
    chosen: dict[str, ExtensionChoice] = {}
    for word in words:
        recipe, ref = parse_extension(word, table)
        if recipe.name in chosen:
            raise UsageError(f"{recipe.name} is named twice in --with",
                             "each extension is built once, at one ref", f"name {recipe.name} once")
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
                env["MAX_JOBS"] = str(fit)
        given = ref or recipe.ref or "HEAD"
        chosen[recipe.name] = ExtensionChoice(
            name=recipe.name, package=recipe.package,
            repo=repos.get(recipe.name, "") or recipe.repo, ref=given,
            version=version_of_ref(given), origin="ref" if ref else "recipe",
            build_env=MappingProxyType(dict(sorted(env.items()))),
            backend=backend.name if backend else "", backend_note=backend.note if backend else "",
            module=recipe.module,
            pre_build=tuple(tuple(a.replace(TARGETS_FIELD, joined) for a in argv)
                            for argv in recipe.pre_build),
            torch_pin_file=recipe.torch_pin_file, torch_pin_pattern=recipe.torch_pin_pattern,
            version_file=recipe.version_file, version_pattern=recipe.version_pattern,
            verify=recipe.verify)
    return tuple(chosen.values())




def extension_notes(choices: Sequence[ExtensionChoice]) -> list[str]:
    """One note per extension: ref, backend, the variables that carry targets and backend."""
    notes = []
    for choice in choices:
        backend = f"backend {choice.backend} ({choice.backend_note}); " if choice.backend else ""
        variables = " ".join(f"{k}={v}" for k, v in choice.build_env.items())
        pin = (f"; the torch it needs is read from {choice.torch_pin_file}"
               if choice.torch_pin_file else "")
        notes.append(f"extension {choice.name}: {choice.ref} from {choice.repo}; {backend}"
                     f"built with {variables}{pin}")
    return notes
